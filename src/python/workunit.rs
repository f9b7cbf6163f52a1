//! The Python Workunit: a decorated function, its core workunit (captured
//! source, parsed once), and the keyword names each launch kind passes.
use super::bridge::py_err;
use crate::frontend::source::SourceInfo;
use crate::frontend::workunit;
use crate::types::Pattern;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::sync::{Arc, Mutex};

#[pyclass(frozen, module = "pykokkos._native", name = "Workunit")]
pub struct Workunit {
    /// Shared with every launch of it.
    pub core: Arc<workunit::Workunit>,
    /// The Python function: its globals and closure are read at compile time.
    pub func: Py<PyAny>,
    /// Keyword parameters per (pattern, index count): computed once, so a
    /// launch looks arguments up with ready-made Python strings.
    launch_params: Mutex<Vec<LaunchParamsEntry>>,
}

type LaunchParamsEntry = ((Pattern, usize), Arc<LaunchParams>);

/// The keyword arguments a launch of one kind must pass.
pub struct LaunchParams {
    pub names: Arc<[String]>,
    pub keys: Vec<Py<PyString>>,
}

#[pymethods]
impl Workunit {
    #[new]
    fn new(
        func: Py<PyAny>,
        name: String,
        source: String,
        filename: String,
        first_line: u32,
        indent: u32,
    ) -> Self {
        let src = SourceInfo {
            text: source,
            filename,
            first_line,
            indent,
        };
        Workunit {
            core: Arc::new(workunit::Workunit::new(name, src)),
            func,
            launch_params: Mutex::new(Vec::new()),
        }
    }
    #[getter]
    fn id(&self) -> usize {
        self.core.id
    }
    #[getter]
    fn name(&self) -> &str {
        &self.core.name
    }
    #[getter]
    fn func(&self, py: Python<'_>) -> Py<PyAny> {
        self.func.clone_ref(py)
    }
    /// Parameter names, parsing the source if needed (raises located errors).
    fn params(&self) -> PyResult<Vec<String>> {
        let def = self.core.def().map_err(py_err)?;
        Ok(def.params.iter().map(|p| p.name.clone()).collect())
    }
}

impl Workunit {
    /// Parameters after the work indices and accumulator(s) of this launch kind.
    pub fn launch_params(
        &self,
        py: Python<'_>,
        pattern: Pattern,
        rank: usize,
    ) -> PyResult<Arc<LaunchParams>> {
        let mut cache = self.launch_params.lock().unwrap();
        if let Some((_, p)) = cache.iter().find(|(k, _)| *k == (pattern, rank)) {
            return Ok(p.clone());
        }
        let skip = rank
            + match pattern {
                Pattern::For => 0,
                Pattern::Reduce => 1,
                Pattern::Scan => 2,
            };
        let def = self.core.def().map_err(py_err)?;
        let names: Vec<String> = def
            .params
            .iter()
            .skip(skip)
            .map(|p| p.name.clone())
            .collect();
        let keys = names
            .iter()
            .map(|n| PyString::intern(py, n).unbind())
            .collect();
        let p = Arc::new(LaunchParams {
            names: names.into(),
            keys,
        });
        cache.push(((pattern, rank), p.clone()));
        Ok(p)
    }
}
