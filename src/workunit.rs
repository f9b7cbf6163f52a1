//! A decorated Python function as the runtime knows it: captured source,
//! parsed once (lazily, at first launch), and its launch parameter names.
use crate::codegen::Pattern;
use crate::errors::{LocatedError, PkError};
use crate::frontend::ast::FunctionDef;
use crate::frontend::parse::parse_function;
use crate::frontend::source::SourceInfo;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

#[pyclass(frozen, module = "pykokkos._native", name = "Workunit")]
pub struct Workunit {
    pub id: usize,
    pub name: String,
    pub src: Arc<SourceInfo>,
    /// The Python function: its globals and closure are read at compile time.
    pub func: Py<PyAny>,
    parsed: OnceLock<Result<Arc<FunctionDef>, LocatedError>>,
    /// Keyword parameters per (pattern, index count): computed once, so a
    /// launch looks arguments up with ready-made Python strings.
    launch_params: Mutex<Vec<LaunchParamsEntry>>,
    statements: OnceLock<usize>,
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
            launch_params: Mutex::new(Vec::new()),
            statements: OnceLock::new(),
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
    /// Size of the body in statements (unparsable bodies count as huge).
    pub fn statement_count(&self) -> usize {
        *self.statements.get_or_init(|| {
            self.def()
                .map(|d| crate::frontend::ast::count_statements(&d.body))
                .unwrap_or(usize::MAX / 64)
        })
    }

    /// Parameters after the work indices and accumulator(s) of this launch kind.
    pub fn launch_params(
        &self,
        py: Python<'_>,
        pattern: Pattern,
        rank: usize,
    ) -> Result<Arc<LaunchParams>, PkError> {
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
        let names: Vec<String> = self
            .def()?
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
