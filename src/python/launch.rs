//! The launch bindings: policy and keyword arguments in, a launch recorded
//! (lazy mode) or run now by the eager pipeline; `generate_source` shows the
//! C++ a launch would compile.
use super::args::classify;
use super::bridge::{py_err, total_to_py};
use super::buffer::HeldBuffer;
use super::kw::Kw;
use super::launch_params::{accumulator_given, check_leading_params};
use super::lazy::record_result;
use super::origin::{call_site, CallOrigin, PyOrigin, Site};
use super::policy::policy_of;
use super::resolve;
use super::wire;
use super::workunit::Workunit;
use crate::codegen::KernelSpec;
use crate::errors::PkResult;
use crate::exec::args::ArgVal;
use crate::exec::kernel::KernelKey;
use crate::exec::launch::{Launch, Origin};
use crate::lazy::graph::Demand;
use crate::pipeline::{self, Submitted};
use crate::types::{ArgTy, Pattern, Reducer};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::cell::Cell;
use std::sync::Arc;

/// The launch kind of a wire code (`wire`): for, reduce (sum), scan, or a
/// reduce through one of `Reducer::ALL`.
fn pattern_of(code: u8) -> PyResult<Pattern> {
    match code {
        wire::PATTERN_FOR => Ok(Pattern::For),
        wire::PATTERN_REDUCE => Ok(Pattern::Reduce),
        wire::PATTERN_SCAN => Ok(Pattern::Scan),
        c => Reducer::ALL
            .get((c as usize).wrapping_sub(wire::REDUCER_BASE as usize))
            .map(|&r| Pattern::Reducer(r))
            .ok_or_else(|| PyTypeError::new_err(format!("unknown launch kind {c}"))),
    }
}

struct Gathered {
    names: Arc<[String]>,
    tys: Vec<ArgTy>,
    vals: Vec<ArgVal>,
    held: Vec<HeldBuffer>,
}

fn gather(
    py: Python<'_>,
    wu: &Workunit,
    pattern: Pattern,
    rank: usize,
    is_method: bool,
    kwargs: &Kw<'_, '_>,
) -> PyResult<Gathered> {
    let mut g = Gathered {
        names: Arc::from(Vec::new()),
        tys: vec![],
        vals: vec![],
        held: vec![],
    };
    if is_method {
        // Functor members, in the order __init__ set them.
        let mut names = Vec::new();
        if let Some(kw) = kwargs.dict(py)? {
            for (k, v) in kw.iter() {
                let (t, a) = classify(&v, &mut g.held)?;
                names.push(k.extract()?);
                g.tys.push(t);
                g.vals.push(a);
            }
        }
        g.names = names.into();
        return Ok(g);
    }
    let params = wu.launch_params(py, pattern, rank.max(1))?;
    let given = kwargs.len();
    g.tys.reserve_exact(params.names.len());
    g.vals.reserve_exact(params.names.len());
    for (name, key) in params.names.iter().zip(&params.keys) {
        let v = match kwargs.get(key.bind(py))? {
            Some(v) => v,
            None => {
                if let Some(kw) = kwargs.dict(py)? {
                    check_leading_params(wu, pattern, rank, &kw)?;
                }
                return Err(PyTypeError::new_err(format!(
                    "workunit '{}' needs the keyword argument '{name}' (it takes: {})",
                    wu.core.name,
                    params.names.join(", ")
                )));
            }
        };
        let (t, a) = classify(&v, &mut g.held).map_err(|e| {
            PyTypeError::new_err(format!(
                "argument '{name}' of workunit '{}': {e}",
                wu.core.name
            ))
        })?;
        g.tys.push(t);
        g.vals.push(a);
    }
    if given > params.names.len() {
        let kw = kwargs.dict(py)?.unwrap_or_else(|| PyDict::new(py));
        if given == params.names.len() + 1 && accumulator_given(wu, pattern, rank, &kw)? {
            g.names = params.names.clone();
            return Ok(g);
        }
        check_leading_params(wu, pattern, rank, &kw)?;
        let extra: Vec<String> = kw
            .keys()
            .iter()
            .filter_map(|k| k.extract::<String>().ok())
            .filter(|k| !params.names.contains(k))
            .collect();
        return Err(PyTypeError::new_err(format!(
            "workunit '{}' got unexpected keyword argument(s): {} (it takes: {})",
            wu.core.name,
            extra.join(", "),
            params.names.join(", ")
        )));
    }
    g.names = params.names.clone();
    Ok(g)
}

/// Launches a workunit. `pattern`: 0 for, 1 reduce, 2 scan. Returns the
/// reduction/scan total (plus `initial`), a lazy handle in lazy mode, or None.
#[pyfunction]
#[pyo3(signature = (pattern, policy, wu, kwargs=None, label=None, is_method=false, methods=None, initial=None, site_code=None, site_offset=0))]
#[allow(clippy::too_many_arguments)]
pub fn launch<'py>(
    py: Python<'py>,
    pattern: u8,
    policy: &Bound<'py, PyAny>,
    wu: &Bound<'py, Workunit>,
    kwargs: Option<&Bound<'py, PyDict>>,
    label: Option<&str>,
    is_method: bool,
    methods: Option<&Bound<'py, PyDict>>,
    initial: Option<&Bound<'py, PyAny>>,
    site_code: Option<Bound<'py, PyAny>>,
    site_offset: i64,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let site = Some((site_code, site_offset));
    launch_with(
        py,
        pattern,
        policy,
        wu,
        &Kw::Dict(kwargs),
        label,
        is_method,
        methods,
        initial,
        site,
    )
}

/// `launch` with its keyword arguments as a `Kw` (the launch entries pass a
/// call's own) and its call site.
#[allow(clippy::too_many_arguments)]
pub fn launch_with<'py>(
    py: Python<'py>,
    pattern: u8,
    policy: &Bound<'py, PyAny>,
    wu: &Bound<'py, Workunit>,
    kwargs: &Kw<'_, 'py>,
    label: Option<&str>,
    is_method: bool,
    methods: Option<&Bound<'py, PyDict>>,
    initial: Option<&Bound<'py, PyAny>>,
    site: Site<'py>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let wu_ref = wu;
    let wu = wu.get();
    let pattern = pattern_of(pattern)?;
    let (lo, hi, space, rank) = policy_of(policy)?;
    if rank == 0 && pattern == Pattern::Scan {
        return Err(PyTypeError::new_err(format!(
            "workunit '{}': pk.parallel_scan needs a range policy (Kokkos has no scan over a TeamPolicy)",
            wu.core.name
        )));
    }
    let g = gather(py, wu, pattern, rank, is_method, kwargs)?;
    let checked = rank == 1;
    let l = Launch {
        wu: wu.core.clone(),
        key: KernelKey::new(
            wu.core.id,
            (pattern, space, rank as u8),
            g.tys,
            wu.constants(py, methods)?,
        ),
        names: g.names,
        vals: g.vals,
        lo,
        hi,
        is_method,
        label: label.map_or_else(|| wu.core.label.clone(), Arc::from),
    };
    if checked {
        super::extents::check(&wu.core, &wu.reach, &l)?;
    }
    // A trace records what the launch was given, and how it went on.
    let traced = crate::trace::on().then(|| {
        let reload = super::traces::prepare(py, &l, &g.held);
        let d = crate::exec::describe::describe(&l, &reload);
        (d, std::time::Instant::now())
    });
    let caller = Call {
        py,
        wu: wu_ref,
        methods,
        site: Cell::new(site),
        borrowed: CallOrigin {
            wu: wu_ref.as_unbound(),
            methods: methods.map(|m| m.as_unbound()),
        },
        is_traced: traced.is_some(),
        traced: Cell::new(traced),
    };
    let submitted = pipeline::submit(l, &caller).map_err(py_err);
    // Dropped after the launch ran, with the GIL (NumPy buffers are released).
    drop(g.held);
    match submitted? {
        Submitted::Ran(total) => total_of(py, total, initial),
        Submitted::Recorded { seq, slot, effects } => {
            if effects {
                // Output beyond its views (printf) comes when the program
                // launched it, as eagerly, not at a later read.
                super::lazy::flush(py, Demand::Result(seq))?;
            }
            record_result(seq, slot, py).map(|p| Some(p.into_bound(py)))
        }
        Submitted::Held => Ok(None),
    }
}

/// The binding's side of `pipeline::submit`: the launch's origins, the GIL,
/// and its trace event.
struct Call<'a, 'py> {
    py: Python<'py>,
    wu: &'a Bound<'py, Workunit>,
    methods: Option<&'a Bound<'py, PyDict>>,
    /// Taken by the one `origin` call.
    site: Cell<Site<'py>>,
    borrowed: CallOrigin<'a>,
    /// A traced launch's description and when its submission began, taken
    /// by `routed`.
    traced: Cell<Option<(String, std::time::Instant)>>,
    /// Asked first: most launches are not traced.
    is_traced: bool,
}

impl pipeline::Caller for Call<'_, '_> {
    /// A recorded launch owns its origin (shared by the launches of one call
    /// site: a loop records one origin).
    fn origin(&self) -> Arc<dyn Origin> {
        // No frame to name (the launch came from C): no call site.
        let (site_code, site_offset) = self
            .site
            .take()
            .unwrap_or_else(|| call_site(self.py).unwrap_or((None, 0)));
        let key = (
            self.methods.map_or(0, |m| m.as_ptr() as usize),
            site_code.as_ref().map_or(0, |c| c.as_ptr() as usize),
            site_offset,
        );
        self.wu.get().origin_for(key, || {
            Arc::new(PyOrigin {
                wu: self.wu.clone().unbind(),
                methods: self.methods.map(|m| m.clone().unbind()),
                site: site_code.map(|f| (f.unbind(), site_offset)),
            })
        })
    }

    fn borrowed(&self) -> &(dyn Origin + Sync) {
        &self.borrowed
    }

    fn detached<T: Send>(&self, f: impl FnOnce() -> PkResult<T> + Send) -> PkResult<T> {
        self.py.detach(f)
    }

    #[inline]
    fn routed(&self, seq: Option<u64>) {
        if self.is_traced {
            trace_launch(self.traced.take(), seq);
        }
    }

    #[inline]
    fn ran(&self, l: &Launch) {
        if self.is_traced {
            super::traces::store_results(l);
        }
    }
}

/// What a launch that ran returns: its total (plus `initial`), or None.
fn total_of<'py>(
    py: Python<'py>,
    total: Option<crate::exec::kernel::Total>,
    initial: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(total) = total else {
        return Ok(None);
    };
    let total = total_to_py(py, total)?;
    match initial {
        Some(init) if !init.is_none() => Ok(Some(init.add(total)?)),
        _ => Ok(Some(total)),
    }
}

/// A traced launch's event: what it was given (`traced`: its description and
/// when submission began), its sequence number if recorded, and how long
/// submitting (and recording) it took.
fn trace_launch(traced: Option<(String, std::time::Instant)>, seq: Option<u64>) {
    if let Some((d, t0)) = traced {
        let seq = seq.map_or("null".to_string(), |s| s.to_string());
        let us = (t0.elapsed().as_secs_f64() * 1e7).round() / 10.0;
        crate::trace::event_text("launch", &format!(r#"{d},"seq":{seq},"record_us":{us}"#));
    }
}

/// The C++ a launch would compile, without compiling it (for tests and users).
/// `nvrtc=True`: the NVRTC form of a CUDA kernel (codegen/device.rs), or
/// None when the kernel has none and goes through nvcc.
#[pyfunction]
#[pyo3(signature = (pattern, policy, wu, kwargs=None, is_method=false, methods=None, nvrtc=false))]
#[allow(clippy::too_many_arguments)]
pub fn generate_source(
    py: Python<'_>,
    pattern: u8,
    policy: &Bound<'_, PyAny>,
    wu: &Bound<'_, Workunit>,
    kwargs: Option<&Bound<'_, PyDict>>,
    is_method: bool,
    methods: Option<&Bound<'_, PyDict>>,
    nvrtc: bool,
) -> PyResult<Option<String>> {
    let wu = wu.get();
    let pattern = pattern_of(pattern)?;
    let (_, _, space, rank) = policy_of(policy)?;
    let g = gather(py, wu, pattern, rank, is_method, &Kw::Dict(kwargs))?;
    let consts = wu.constants(py, methods)?;
    let over = wu.overrides(consts.as_deref().unwrap_or(&[]));
    let globals = resolve::globals_of(py, wu, methods, &over)?;
    let def = wu.core.def().map_err(py_err)?;
    let spec = KernelSpec {
        def: &def,
        src: wu.core.src.clone(),
        globals: &globals,
        pattern,
        space,
        rank,
        args: g.names.iter().cloned().zip(g.tys).collect(),
        is_method,
        label: wu.core.name.clone(),
        repeat: false,
    };
    let g = crate::codegen::translate(&wu.core, &spec).map_err(py_err)?;
    Ok(match nvrtc {
        false => Some(g.source),
        true => g.device.as_ref().and_then(crate::codegen::device::source),
    })
}
