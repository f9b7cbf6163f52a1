//! Numbers a kernel compiles in by name (module constants, closure values,
//! those of its helpers): where they live, their values at each launch (part
//! of the kernel key, so rebinding one takes effect at the next launch), and
//! the values a translation must use (a lazy launch compiles later).
use crate::lower::Global;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One place a compiled-in number lives: a globals dict and a key, or a
/// closure cell; the name, and the workunit whose translation reads it.
pub struct ConstSource {
    src: Py<PyAny>,
    key: Option<Py<PyAny>>,
    name: String,
    owner: usize,
}

/// Values a translation must use instead of what it finds now: those of the
/// launch (a lazy launch compiles at the flush, after its program may have
/// rebound a constant), by (workunit id, name).
pub type Overrides = HashMap<(usize, String), Global>;

/// The numbers a launch was made with, as a translation reads them.
pub fn overrides(sources: &[ConstSource], consts: &[u64]) -> Overrides {
    let mut out = Overrides::new();
    for (s, v) in sources.iter().zip(consts.chunks(2)) {
        let g = match v {
            [1, b] => Global::Bool(*b != 0),
            [2, b] => Global::Float(f64::from_bits(*b)),
            [3, b] => Global::Int(*b as i64),
            _ => continue,
        };
        out.insert((s.owner, s.name.clone()), g);
    }
    out
}

static SOURCES: OnceLock<Py<PyAny>> = OnceLock::new();

/// The Python function that lists where a kernel's numbers live.
pub fn set_sources(f: Py<PyAny>) {
    let _ = SOURCES.set(f);
}

/// Where the numbers of the workunit `func` (with a functor's `methods`) live.
pub fn sources(
    py: Python<'_>,
    func: &Py<PyAny>,
    methods: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<ConstSource>> {
    let Some(f) = SOURCES.get() else {
        return Ok(Vec::new());
    };
    let list = f.bind(py).call1((func.bind(py), methods))?;
    list.try_iter()?
        .map(|item| {
            let (src, key, name, owner): (
                Bound<'_, PyAny>,
                Option<Bound<'_, PyAny>>,
                String,
                usize,
            ) = item?.extract()?;
            Ok(ConstSource {
                src: src.unbind(),
                key: key.map(Bound::unbind),
                name,
                owner,
            })
        })
        .collect()
}

/// The tag of a functor method's id in key material (after the numbers,
/// whose tags are 1 to 5).
pub const METHOD_TAG: u64 = 6;

/// The current values of `sources`, as key material: a number's type and
/// bits (anything else, or a name deleted since, gets a marker of its own:
/// the next compile then reports it).
pub fn values(py: Python<'_>, sources: &[ConstSource]) -> PyResult<Vec<u64>> {
    let mut out = Vec::with_capacity(2 * sources.len());
    for s in sources {
        let src = s.src.bind(py);
        let value = match &s.key {
            Some(k) => src.cast::<PyDict>()?.get_item(k.bind(py))?,
            None => src.getattr(pyo3::intern!(py, "cell_contents")).ok(),
        };
        let (tag, bits) = match value {
            Some(v) if v.is_instance_of::<pyo3::types::PyBool>() => (1, v.is_truthy()? as u64),
            Some(v) if v.is_instance_of::<pyo3::types::PyFloat>() => {
                (2, v.extract::<f64>()?.to_bits())
            }
            Some(v) => match v.extract::<i64>() {
                Ok(i) => (3, i as u64),
                Err(_) => (4, v.as_ptr() as u64),
            },
            None => (5, 0),
        };
        out.extend([tag, bits]);
    }
    Ok(out)
}
