//! The core's view of the launching Python program (`exec::launch::Origin`):
//! the Workunit's free names (and a functor's methods), and the call site.
//! A recorded launch owns a `PyOrigin`; a launch that runs at once borrows a
//! `CallOrigin` from the binding's arguments (no allocation, no reference
//! counting on the hot path).
use super::resolve;
use super::workunit::Workunit;
use crate::errors::{PkError, PkResult};
use crate::exec::launch::Origin;
use crate::lower::Globals;
use parking_lot::Mutex;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::LazyLock;

pub struct PyOrigin {
    pub wu: Py<Workunit>,
    pub methods: Option<Py<PyDict>>,
    /// The caller's code object and instruction offset: turned into
    /// "file:line" only when a report or an error needs it.
    pub site: Option<(Py<PyAny>, i64)>,
}

type SiteCache = Mutex<HashMap<(usize, i64), (Py<PyAny>, String)>>;
/// Located sites (the entry holds the code object, so its address cannot be reused).
static SITES: LazyLock<SiteCache> = LazyLock::new(Default::default);

/// The origin of a launch that runs while its binding call is on the stack.
pub struct CallOrigin<'a> {
    pub wu: &'a Py<Workunit>,
    pub methods: Option<&'a Py<PyDict>>,
}

fn globals(wu: &Py<Workunit>, methods: Option<&Py<PyDict>>, consts: &[u64]) -> PkResult<Globals> {
    Python::attach(|py| {
        let methods = methods.map(|m| m.bind(py).clone());
        let wu = wu.get();
        let over = wu.overrides(consts);
        resolve::globals_of(py, wu, methods.as_ref(), &over).map_err(PkError::Python)
    })
}

impl Origin for CallOrigin<'_> {
    fn globals(&self, consts: &[u64]) -> PkResult<Globals> {
        globals(self.wu, self.methods, consts)
    }

    /// Errors of launches that run at once are raised at their call: Python's
    /// traceback already shows the site.
    fn site(&self) -> String {
        "<the current call>".into()
    }
}

impl Origin for PyOrigin {
    fn globals(&self, consts: &[u64]) -> PkResult<Globals> {
        globals(&self.wu, self.methods.as_ref(), consts)
    }

    fn site(&self) -> String {
        let Some((code, lasti)) = &self.site else {
            return "<unknown>".into();
        };
        let key = (code.as_ptr() as usize, *lasti);
        if let Some((_, s)) = SITES.lock().get(&key) {
            return s.clone();
        }
        Python::attach(|py| {
            let s = locate(code.bind(py), *lasti);
            SITES.lock().insert(key, (code.clone_ref(py), s.clone()));
            s
        })
    }
}

fn locate(code: &Bound<'_, PyAny>, lasti: i64) -> String {
    let file: String = code
        .getattr("co_filename")
        .and_then(|f| f.extract())
        .unwrap_or_else(|_| "<unknown>".into());
    let mut line: i64 = 0;
    if let Ok(lines) = code.call_method0("co_lines").and_then(|l| l.try_iter()) {
        for item in lines.flatten() {
            if let Ok((start, end, ln)) = item.extract::<(i64, i64, Option<i64>)>() {
                if start <= lasti && lasti < end {
                    line = ln.unwrap_or(0);
                    break;
                }
            }
        }
    }
    format!("{file}:{line}")
}

/// A launch's call site: (code object, instruction offset), or None for
/// the calling Python frame's, looked up only when the launch is recorded
/// (a frame object costs an allocation on every call of the function that
/// launches).
pub type Site<'py> = Option<(Option<Bound<'py, PyAny>>, i64)>;

/// The caller's code object and instruction offset: the launch's call site.
pub fn call_site(py: Python<'_>) -> PyResult<(Option<Bound<'_, PyAny>>, i64)> {
    // SAFETY: the GIL is held; PyEval_GetFrame returns a borrowed reference
    // (or null outside any Python frame) and PyFrame_GetCode a new one.
    unsafe {
        let frame = ffi::PyEval_GetFrame();
        if frame.is_null() {
            return Ok((None, 0));
        }
        let frame = Bound::from_borrowed_ptr(py, frame.cast());
        let code = Bound::from_owned_ptr(py, ffi::PyFrame_GetCode(frame.as_ptr().cast()).cast());
        let lasti: i64 = frame.getattr(pyo3::intern!(py, "f_lasti"))?.extract()?;
        Ok((Some(code), lasti))
    }
}
