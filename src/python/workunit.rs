//! The Python Workunit: a decorated function, its core workunit (captured
//! source, parsed once), and the keyword names each launch kind passes.
use super::bridge::py_err;
use super::constants::{self, ConstSource, Overrides};
use crate::exec::launch::Origin;
use crate::frontend::source::SourceInfo;
use crate::frontend::workunit;
use crate::types::Pattern;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::types::PyString;
use std::sync::{Arc, OnceLock};

/// The constant sources found with one set of functor methods (their ids).
type SourcesFor = (Box<[usize]>, Arc<[ConstSource]>);

#[pyclass(frozen, module = "pykokkos._native", name = "Workunit")]
pub struct Workunit {
    /// Shared with every launch of it.
    pub core: Arc<workunit::Workunit>,
    /// The Python function: its globals and closure are read at compile time.
    pub func: Py<PyAny>,
    /// Keyword parameters per (pattern, index count): computed once, so a
    /// launch looks arguments up with ready-made Python strings.
    launch_params: Mutex<Vec<LaunchParamsEntry>>,
    /// Where the numbers it compiles in live, found at its first launch with
    /// each set of functor methods (their native ids; none for a function):
    /// a subclass's override may read numbers its base's method does not.
    constants: Mutex<Vec<SourcesFor>>,
    /// The origin of its last recorded launch, by (methods, call site): the
    /// next launch from the same place shares it. It holds those objects, so
    /// their addresses cannot be reused while it is here.
    last_origin: Mutex<Option<(OriginKey, Arc<dyn Origin>)>>,
    /// Views every work item of a range launch indexes at `i + c`, found at
    /// its first such launch (python/extents.rs).
    pub reach: OnceLock<super::extents::Reaches>,
}

/// (functor methods, caller's code object, instruction offset) by address.
pub type OriginKey = (usize, usize, i64);

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
            constants: Mutex::new(Vec::new()),
            last_origin: Mutex::new(None),
            reach: OnceLock::new(),
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
    /// The current values of the numbers this workunit compiles in (module
    /// constants, closure values, those of its helpers): part of its kernel
    /// key, so rebinding one takes effect at the next launch.
    pub fn constants(
        &self,
        py: Python<'_>,
        methods: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Option<Box<[u64]>>> {
        // A functor's methods by native workunit id (ids are never reused):
        // part of the key too, so a kernel translated with one class's
        // methods is not run for a subclass that overrides one, or after a
        // method is replaced on its class.
        let ids: Box<[usize]> = methods
            .into_iter()
            .flat_map(|m| m.iter())
            .map(|(_, v)| {
                v.cast::<pyo3::types::PyTuple>()
                    .ok()
                    .and_then(|t| t.get_item(1).ok())
                    .and_then(|w| w.cast::<Workunit>().ok().map(|w| w.get().core.id))
                    .unwrap_or(0)
            })
            .collect();
        let sources = match self.sources_for(&ids) {
            Some(s) => s,
            None => {
                let s: Arc<[ConstSource]> = constants::sources(py, &self.func, methods)?.into();
                self.constants.lock().push((ids.clone(), s.clone()));
                s
            }
        };
        let mut out = constants::values(py, &sources)?;
        for id in ids.iter() {
            out.extend([constants::METHOD_TAG, *id as u64]);
        }
        Ok((!out.is_empty()).then(|| out.into_boxed_slice()))
    }

    fn sources_for(&self, ids: &[usize]) -> Option<Arc<[ConstSource]>> {
        let known = self.constants.lock();
        known
            .iter()
            .find(|(k, _)| **k == *ids)
            .map(|(_, s)| s.clone())
    }

    /// The origin of a recorded launch from `key`: the last one's when the
    /// place is the same, else a new one from `make`.
    pub fn origin_for(
        &self,
        key: OriginKey,
        make: impl FnOnce() -> Arc<dyn Origin>,
    ) -> Arc<dyn Origin> {
        let mut last = self.last_origin.lock();
        if let Some((k, o)) = last.as_ref() {
            if *k == key {
                return o.clone();
            }
        }
        let o = make();
        *last = Some((key, o.clone()));
        o
    }

    /// What the numbers of a launch with key constants `consts` were.
    pub fn overrides(&self, consts: &[u64]) -> Overrides {
        let ids: Vec<usize> = consts
            .chunks(2)
            .filter(|p| p[0] == constants::METHOD_TAG)
            .map(|p| p[1] as usize)
            .collect();
        match self.sources_for(&ids) {
            Some(s) if !consts.is_empty() => constants::overrides(&s, consts),
            _ => Overrides::new(),
        }
    }

    /// Parameters after the work indices and accumulator(s) of this launch kind.
    pub fn launch_params(
        &self,
        py: Python<'_>,
        pattern: Pattern,
        rank: usize,
    ) -> PyResult<Arc<LaunchParams>> {
        let mut cache = self.launch_params.lock();
        if let Some((_, p)) = cache.iter().find(|(k, _)| *k == (pattern, rank)) {
            return Ok(p.clone());
        }
        let skip = rank
            + match pattern {
                Pattern::For => 0,
                Pattern::Reduce | Pattern::Reducer(_) => 1,
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
