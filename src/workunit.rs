//! A decorated Python function as the runtime knows it: captured source,
//! parsed once (lazily, at first launch), and its launch parameter names.
use crate::errors::{LocatedError, PkError};
use crate::frontend::ast::FunctionDef;
use crate::frontend::parse::parse_function;
use crate::frontend::source::SourceInfo;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

#[pyclass(frozen, module = "pykokkos._native", name = "Workunit")]
pub struct Workunit {
    pub id: usize,
    pub name: String,
    pub src: Arc<SourceInfo>,
    /// The Python function: its globals and closure are read at compile time.
    pub func: Py<PyAny>,
    parsed: OnceLock<Result<Arc<FunctionDef>, LocatedError>>,
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
        Workunit {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name,
            src: Arc::new(SourceInfo {
                text: source,
                filename,
                first_line,
                indent,
            }),
            func,
            parsed: OnceLock::new(),
        }
    }
    #[getter]
    fn id(&self) -> usize {
        self.id
    }
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }
    #[getter]
    fn func(&self, py: Python<'_>) -> Py<PyAny> {
        self.func.clone_ref(py)
    }
    /// Parameter names, parsing the source if needed (raises located errors).
    fn params(&self) -> PyResult<Vec<String>> {
        Ok(self
            .def()
            .map_err(crate::py_err)?
            .params
            .iter()
            .map(|p| p.name.clone())
            .collect())
    }
}

impl Workunit {
    pub fn def(&self) -> Result<Arc<FunctionDef>, PkError> {
        self.parsed
            .get_or_init(|| {
                let _span = tracing::info_span!("parse", workunit = %self.name).entered();
                parse_function(&self.src.text)
                    .map(Arc::new)
                    .map_err(|e| LocatedError::new(e, &self.src, &self.name))
            })
            .clone()
            .map_err(|e| PkError::Kernel(Box::new(e)))
    }
}
