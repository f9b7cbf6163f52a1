//! Ctrl-C for the runtime (see interrupt.rs): the hook that asks the
//! program's SIGINT handler, and the exception an interrupted flush or
//! compile raises.
use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::Mutex;

/// The exception the program's handler raised, until the binding re-raises it.
static RAISED: Mutex<Option<PyErr>> = Mutex::new(None);

pub fn install() {
    crate::interrupt::install(ask);
}

/// Runs the program's handler for the signal that came (Python runs it only
/// in the main thread; elsewhere nothing happens and the work goes on).
fn ask() -> bool {
    Python::attach(|py| {
        crate::interrupt::clear();
        // SAFETY: called with the GIL held.
        if unsafe { ffi::PyErr_CheckSignals() } == 0 {
            return false;
        }
        let err = PyErr::fetch(py);
        *RAISED.lock().unwrap_or_else(|e| e.into_inner()) = Some(err);
        true
    })
}

/// The exception for work Ctrl-C stopped: the handler's (KeyboardInterrupt),
/// with a note on what was left undone.
pub fn interrupted(what: String) -> PyErr {
    let raised = RAISED.lock().unwrap_or_else(|e| e.into_inner()).take();
    let err =
        raised.unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(what.clone()));
    Python::attach(|py| {
        let _ = err.value(py).call_method1("add_note", (what,));
    });
    err
}
