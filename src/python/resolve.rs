//! Free names of a kernel, resolved through Python at compile time: the Python
//! side (`pykokkos._resolve`) classifies each value; we build `Globals`.
use super::bridge::py_err;
use super::constants::{self, Overrides};
use super::workunit::Workunit;
use crate::lower::names::{ClassInfo, FuncInfo};
use crate::lower::{Global, Globals};
use crate::types::DType;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

static RESOLVER: OnceLock<Py<PyAny>> = OnceLock::new();

/// The Python side's name resolver, and the function that lists where the
/// numbers a kernel compiles in live (read again at every launch).
#[pyfunction]
#[pyo3(signature = (f, sources=None))]
pub fn set_resolver(f: Py<PyAny>, sources: Option<Py<PyAny>>) {
    let _ = RESOLVER.set(f);
    if let Some(s) = sources {
        constants::set_sources(s);
    }
}

/// Globals of a workunit (or function), with `extra` entries (functor methods).
pub fn globals_of(
    py: Python<'_>,
    wu: &Workunit,
    extra: Option<&Bound<'_, PyDict>>,
    over: &Overrides,
) -> PyResult<Globals> {
    let mut cx = Cx {
        seen: BTreeSet::new(),
        over,
    };
    resolve(py, wu, extra, &mut cx)
}

/// What a resolution carries down to helpers: the functions on the way (a
/// recursive helper is resolved once) and the launch's numbers.
struct Cx<'a> {
    seen: BTreeSet<usize>,
    over: &'a Overrides,
}

fn resolve(
    py: Python<'_>,
    wu: &Workunit,
    extra: Option<&Bound<'_, PyDict>>,
    cx: &mut Cx<'_>,
) -> PyResult<Globals> {
    cx.seen.insert(wu.core.id);
    let resolver = RESOLVER
        .get()
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("pykokkos resolver not set"))?;
    // The names local annotations read, from the kernel's own parse of the
    // source captured at decoration (none when it does not parse: the
    // translation then fails on that, located).
    let mut annotated = BTreeSet::new();
    if let Ok(d) = wu.core.def() {
        crate::frontend::ast::annotation_names(&d.body, &mut annotated);
    }
    let annotated: Vec<String> = annotated.into_iter().collect();
    let d = resolver.bind(py).call1((wu.func.bind(py), annotated))?;
    let d = d.cast::<PyDict>()?;
    let mut g = Globals::new();
    let mut items: Vec<(String, Bound<'_, PyAny>)> = d
        .iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, v)))
        .collect::<PyResult<_>>()?;
    if let Some(x) = extra {
        for (k, v) in x.iter() {
            items.push((k.extract()?, v));
        }
    }
    for (name, v) in items {
        let t = v.cast::<PyTuple>()?;
        let kind: String = t.get_item(0)?.extract()?;
        let entry = match kind.as_str() {
            "int" => Global::Int(t.get_item(1)?.extract()?),
            "float" => Global::Float(t.get_item(1)?.extract()?),
            "bool" => Global::Bool(t.get_item(1)?.extract()?),
            "math" => Global::MathModule,
            "pk" => Global::PkModule,
            "np" => Global::NumpyModule,
            "dtype" => match DType::from_code(t.get_item(1)?.extract()?) {
                Some(dt) => Global::DTypeConst(dt),
                None => continue,
            },
            "function" => {
                let f = t.get_item(1)?;
                let f = f.cast::<Workunit>()?.get();
                match function_info(py, f, cx)? {
                    Some(fi) => Global::Function(fi),
                    None => continue,
                }
            }
            "classtype" => {
                let cname: String = t.get_item(1)?.extract()?;
                let init = t.get_item(2)?;
                let init = if init.is_none() {
                    None
                } else {
                    function_info(py, init.cast::<Workunit>()?.get(), cx)?
                };
                let mut methods = std::collections::BTreeMap::new();
                if t.len() > 3 {
                    for (k, m) in t.get_item(3)?.cast::<PyDict>()?.iter() {
                        if let Some(fi) = function_info(py, m.cast::<Workunit>()?.get(), cx)? {
                            methods.insert(k.extract::<String>()?, fi);
                        }
                    }
                }
                Global::ClassType(Arc::new(ClassInfo {
                    name: cname,
                    init,
                    methods,
                }))
            }
            _ => continue,
        };
        g.insert(name, entry);
    }
    for ((owner, name), v) in cx.over {
        if *owner == wu.core.id {
            g.insert(name.clone(), v.clone());
        }
    }
    Ok(g)
}

fn function_info(py: Python<'_>, f: &Workunit, cx: &mut Cx<'_>) -> PyResult<Option<Arc<FuncInfo>>> {
    if cx.seen.contains(&f.core.id) {
        return Ok(None);
    }
    let def = f.core.def().map_err(py_err)?;
    let globals = resolve(py, f, None, cx)?;
    cx.seen.remove(&f.core.id);
    Ok(Some(Arc::new(FuncInfo {
        id: f.core.id,
        def: (*def).clone(),
        src: f.core.src.clone(),
        globals,
    })))
}
