//! The launch path: policy and arguments in, kernel found (or built) and run.
//! A repeated launch touches only the in-process table: no parsing, hashing of
//! source text or file-system access.
use crate::args::{classify, ArgVal, HeldBuffer, PkScalarArg, PkViewArg};
use crate::codegen::{ArgTy, Pattern, Space};
use crate::errors::PkError;
use crate::pipeline::{self, Kernel, Request};
use crate::runtime::{self, KernelKey, KERNELS};
use crate::types::DType;
use crate::workunit::Workunit;
use crate::{py_err, resolve};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt};
use std::sync::Arc;

/// A range (1 index) or multi-dimensional range policy.
#[pyclass(frozen, module = "pykokkos._native", name = "Policy")]
pub struct Policy {
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
    /// None: the default space at launch time.
    pub space: Option<u8>,
    /// A TeamPolicy: `hi` is [league size, team size (<= 0: AUTO), vector length].
    pub team: bool,
    /// Scratch bytes of a TeamPolicy: per team and per thread, levels 0 and 1.
    /// `set_scratch_size` changes them in place, as Kokkos' does.
    pub scratch: [std::sync::atomic::AtomicI64; 4],
}

#[pymethods]
impl Policy {
    #[new]
    #[pyo3(signature = (lo, hi, space=None, team=false))]
    fn new(lo: Vec<i64>, hi: Vec<i64>, space: Option<u8>, team: bool) -> PyResult<Self> {
        if team {
            if hi.len() != 3 || hi[0] < 0 || hi[2] < 1 {
                return Err(PyValueError::new_err(
                    "a team policy needs a league size >= 0, a team size (or pk.AUTO) and a vector length >= 1",
                ));
            }
            return Ok(Policy {
                lo: vec![0; 3],
                hi,
                space,
                team,
                scratch: Default::default(),
            });
        }
        if lo.len() != hi.len() || lo.is_empty() || lo.len() > 6 {
            return Err(PyValueError::new_err(
                "a policy needs matching begin and end lists of 1 to 6 entries",
            ));
        }
        Ok(Policy {
            lo,
            hi,
            space,
            team,
            scratch: Default::default(),
        })
    }
    /// `policy.set_scratch_size(level, pk.PerTeam(bytes)[, pk.PerThread(bytes)])`.
    #[pyo3(signature = (level, first, second=None))]
    fn set_scratch_size<'py>(
        slf: Bound<'py, Self>,
        level: i64,
        first: &Bound<'py, PyAny>,
        second: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let me = slf.get();
        if !me.team {
            return Err(PyTypeError::new_err(
                "set_scratch_size applies to a pk.TeamPolicy",
            ));
        }
        if !(0..=1).contains(&level) {
            return Err(PyValueError::new_err(format!(
                "scratch level {level}: Kokkos has levels 0 and 1"
            )));
        }
        for req in std::iter::once(first).chain(second) {
            let (kind, bytes): (String, i64) = match (req.getattr("kind"), req.getattr("bytes")) {
                (Ok(k), Ok(b)) => (k.extract()?, b.extract()?),
                _ => {
                    return Err(PyTypeError::new_err(
                        "set_scratch_size takes pk.PerTeam(bytes) and/or pk.PerThread(bytes)",
                    ))
                }
            };
            if bytes < 0 {
                return Err(PyValueError::new_err("a scratch size cannot be negative"));
            }
            let slot = 2 * level as usize + usize::from(kind == "thread");
            me.scratch[slot].store(bytes, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(slf)
    }
    #[getter]
    fn begin(&self) -> Vec<i64> {
        self.lo.clone()
    }
    #[getter]
    fn end(&self) -> Vec<i64> {
        self.hi.clone()
    }
    #[getter]
    fn space(&self) -> Option<u8> {
        self.space
    }
}

fn space_of(code: Option<u8>) -> Space {
    match code {
        Some(0) => Space::Serial,
        Some(2) => Space::Cuda,
        Some(_) => Space::OpenMP,
        None => runtime::default_space(),
    }
}

/// (begin, end, space, rank) of a launch's policy; rank 0 is a TeamPolicy.
fn policy_of(p: &Bound<'_, PyAny>) -> PyResult<(Vec<i64>, Vec<i64>, Space, usize)> {
    if let Ok(n) = p.cast::<PyInt>() {
        let n: i64 = n.extract()?;
        return Ok((vec![0], vec![n.max(0)], runtime::default_space(), 1));
    }
    if let Ok(pol) = p.cast::<Policy>() {
        let pol = pol.get();
        if pol.team {
            // The entry point reads [league, team, vector, scratch x 4] from `hi`.
            let mut hi = pol.hi.clone();
            hi.extend(
                pol.scratch
                    .iter()
                    .map(|a| a.load(std::sync::atomic::Ordering::Relaxed)),
            );
            return Ok((vec![0; hi.len()], hi, space_of(pol.space), 0));
        }
        return Ok((
            pol.lo.clone(),
            pol.hi.clone(),
            space_of(pol.space),
            pol.lo.len(),
        ));
    }
    Err(PyTypeError::new_err(format!(
        "the policy must be an int or pk.RangePolicy/pk.MDRangePolicy, got {}",
        p.get_type().name()?
    )))
}

fn pattern_of(code: u8) -> Pattern {
    match code {
        0 => Pattern::For,
        1 => Pattern::Reduce,
        _ => Pattern::Scan,
    }
}

/// A keyword argument that names an index or accumulator position means the
/// workunit lacks a parameter the launch kind needs: say which one.
fn check_leading_params(
    wu: &Workunit,
    pattern: Pattern,
    rank: usize,
    kw: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let def = wu.def().map_err(py_err)?;
    let mut roles: Vec<&str> = if rank == 0 {
        vec!["team member"]
    } else {
        vec!["work index"; rank]
    };
    match pattern {
        Pattern::For => {}
        Pattern::Reduce => roles.push("accumulator"),
        Pattern::Scan => roles.extend(["accumulator", "last_pass flag"]),
    }
    for (p, role) in def.params.iter().zip(&roles) {
        if kw.contains(&p.name)? {
            let launch = match pattern {
                Pattern::For => "parallel_for",
                Pattern::Reduce => "parallel_reduce",
                Pattern::Scan => "parallel_scan",
            };
            return Err(PyTypeError::new_err(format!(
                "workunit '{}' is launched with pk.{launch} over {rank} index dimension(s), so its parameters must start with \
                 {}; but '{}' (passed as a keyword argument) sits in the {role} position: add the missing {role} parameter",
                wu.name,
                roles.join(", "),
                p.name
            )));
        }
    }
    Ok(())
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
    kwargs: Option<&Bound<'_, PyDict>>,
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
        if let Some(kw) = kwargs {
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
    let params = wu.launch_params(py, pattern, rank.max(1)).map_err(py_err)?;
    let given = kwargs.map_or(0, |k| k.len());
    for (name, key) in params.names.iter().zip(&params.keys) {
        let v = match kwargs
            .map(|k| k.get_item(key.bind(py)))
            .transpose()?
            .flatten()
        {
            Some(v) => v,
            None => {
                if let Some(kw) = kwargs {
                    check_leading_params(wu, pattern, rank, kw)?;
                }
                return Err(PyTypeError::new_err(format!(
                    "workunit '{}' needs the keyword argument '{name}' (it takes: {})",
                    wu.name,
                    params.names.join(", ")
                )));
            }
        };
        let (t, a) = classify(&v, &mut g.held).map_err(|e| {
            PyTypeError::new_err(format!("argument '{name}' of workunit '{}': {e}", wu.name))
        })?;
        g.tys.push(t);
        g.vals.push(a);
    }
    if given > params.names.len() {
        let kw = kwargs.unwrap();
        check_leading_params(wu, pattern, rank, kw)?;
        let extra: Vec<String> = kw
            .keys()
            .iter()
            .filter_map(|k| k.extract::<String>().ok())
            .filter(|k| !params.names.contains(k))
            .collect();
        return Err(PyTypeError::new_err(format!(
            "workunit '{}' got unexpected keyword argument(s): {} (it takes: {})",
            wu.name,
            extra.join(", "),
            params.names.join(", ")
        )));
    }
    g.names = params.names.clone();
    Ok(g)
}

/// The compiled kernel for a launch: the in-process table, else the pipeline.
#[allow(clippy::too_many_arguments)]
pub fn kernel_for(
    py: Python<'_>,
    wu: &Workunit,
    key: &KernelKey,
    names: &[String],
    is_method: bool,
    methods: Option<&Bound<'_, PyDict>>,
    label: &str,
) -> Result<Arc<Kernel>, PkError> {
    if let Some(k) = KERNELS.get(key) {
        return Ok(k.clone());
    }
    let globals = resolve::globals_of(py, wu, methods).map_err(PkError::Python)?;
    let req = Request {
        wu,
        globals: &globals,
        pattern: key.pattern,
        space: key.space,
        rank: key.rank as usize,
        args: names
            .iter()
            .cloned()
            .zip(key.args.iter().cloned())
            .collect(),
        is_method,
        label: label.to_string(),
    };
    // Compiling takes seconds: let other Python threads run meanwhile.
    let kernel = Arc::new(py.detach(|| pipeline::build(&req))?);
    KERNELS.insert(key.clone(), kernel.clone());
    Ok(kernel)
}

/// A reduction or scan total, typed as the accumulator was.
#[derive(Clone, Copy, Debug)]
pub enum Total {
    F(f64),
    I(i64),
    U(u64),
    B(bool),
}

impl Total {
    pub fn to_py<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Total::F(x) => x.into_pyobject(py)?.into_any(),
            Total::I(x) => x.into_pyobject(py)?.into_any(),
            Total::U(x) => x.into_pyobject(py)?.into_any(),
            Total::B(x) => pyo3::types::PyBool::new(py, x).to_owned().into_any(),
        })
    }
}

/// Calls a kernel entry point with the GIL released (kernels may run long).
/// `result` receives one 8-byte slot per reduction.
pub fn call_entry(
    py: Python<'_>,
    run: crate::build::loader::EntryFn,
    views: &[PkViewArg],
    scalars: &[PkScalarArg],
    lo: &[i64],
    hi: &[i64],
    result: &mut [u64],
) -> i32 {
    struct Args(
        crate::build::loader::EntryFn,
        usize,
        usize,
        usize,
        usize,
        usize,
    );
    // SAFETY: the pointers stay valid for the call: the caller owns the slices.
    unsafe impl Send for Args {}
    let a = Args(
        run,
        views.as_ptr() as usize,
        scalars.as_ptr() as usize,
        lo.as_ptr() as usize,
        hi.as_ptr() as usize,
        result.as_mut_ptr() as usize,
    );
    py.detach(move || {
        let a = a;
        let _span = tracing::debug_span!("launch").entered();
        unsafe {
            (a.0)(
                a.1 as *const _,
                a.2 as *const _,
                a.3 as *const i64,
                a.4 as *const i64,
                a.5 as *mut _,
            )
        }
    })
}

/// Runs one kernel now on the given arguments (eager launches and flushes).
pub fn execute(
    py: Python<'_>,
    kernel: &Arc<Kernel>,
    vals: &[ArgVal],
    lo: &[i64],
    hi: &[i64],
    name: &str,
) -> Result<Option<Total>, PkError> {
    runtime::kokkos()?;
    let vs: Vec<&crate::args::ViewVal> = kernel
        .abi
        .view_slots
        .iter()
        .map(|&k| match &vals[k] {
            ArgVal::View(v) => v,
            _ => unreachable!("view slot holds a view"),
        })
        .collect();
    let (device_launch, views) =
        crate::device::kernel_views(kernel.space, &vs, &kernel.view_writes)?;
    let scalars: Vec<PkScalarArg> = kernel
        .abi
        .scalar_slots
        .iter()
        .map(|&(k, dt)| vals[k].scalar(dt))
        .collect();
    let hi: Vec<i64> = hi.iter().zip(lo).map(|(h, l)| (*h).max(*l)).collect();
    let mut result = [0u64; 1];
    let rc = call_entry(py, kernel.run, &views, &scalars, lo, &hi, &mut result);
    if rc != 0 {
        let msg = crate::build::loader::error_text(kernel.error);
        return Err(PkError::Runtime(format!(
            "workunit '{name}' failed in Kokkos: {msg}"
        )));
    }
    if let Some(l) = device_launch {
        l.finish()?;
    }
    Ok(kernel.abi.acc.map(|d| read_result(&result, d)))
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
    let wu_ref = wu;
    let wu = wu.get();
    let pattern = pattern_of(pattern);
    let (lo, hi, space, rank) = policy_of(policy)?;
    if rank == 0 && pattern == Pattern::Scan {
        return Err(PyTypeError::new_err(format!(
            "workunit '{}': pk.parallel_scan needs a range policy (Kokkos has no scan over a TeamPolicy)",
            wu.name
        )));
    }
    let mut g = gather(py, wu, pattern, rank, is_method, kwargs)?;
    if space != Space::Cuda
        && g.vals
            .iter()
            .any(|v| matches!(v, ArgVal::View(x) if x.alloc.is_device_only()))
    {
        return Err(PyTypeError::new_err(format!(
            "workunit '{}': a CUDA array (it has __cuda_array_interface__) was passed to a kernel on the host; \
             launch it in the Cuda space (pk.set_default_space(pk.Cuda) or pk.RangePolicy(pk.Cuda, ...))",
            wu.name
        )));
    }
    let key = KernelKey {
        workunit: wu.id,
        pattern,
        space,
        rank: rank as u8,
        args: std::mem::take(&mut g.tys),
    };
    let label = label.unwrap_or(&wu.name);
    if crate::lazy::enabled() {
        // Foreign memory (NumPy arrays, exported views) can change behind our
        // back: such a launch runs now, after the pending work it depends on.
        let foreign = !g.held.is_empty()
            || g.vals
                .iter()
                .any(|v| matches!(v, ArgVal::View(x) if x.foreign()));
        if !foreign {
            let rec = crate::lazy::Launch {
                key,
                wu: wu_ref.clone().unbind(),
                names: g.names,
                vals: g.vals,
                lo,
                hi,
                is_method,
                methods: methods.map(|m| m.clone().unbind()),
                label: label.to_string(),
                site: site_code.map(|f| (f.unbind(), site_offset)),
            };
            return crate::lazy::record(py, rec).map(Some);
        }
        crate::lazy::flush_for(py, &g.vals).map_err(py_err)?;
    }
    let kernel = kernel_for(py, wu, &key, &g.names, is_method, methods, label).map_err(py_err)?;
    let total = execute(py, &kernel, &g.vals, &lo, &hi, &wu.name).map_err(py_err)?;
    drop(g);
    let value = match total {
        None => return Ok(None),
        Some(t) => t.to_py(py)?,
    };
    match initial {
        Some(init) if !init.is_none() => Ok(Some(init.add(value)?)),
        _ => Ok(Some(value)),
    }
}

fn read_result(r: &[u64; 1], d: DType) -> Total {
    read_total(&r[0], d)
}

/// The total in one 8-byte result slot, typed as the accumulator.
pub fn read_total(r: &u64, d: DType) -> Total {
    let p = r as *const u64 as *const u8;
    unsafe {
        match d {
            DType::F64 => Total::F(*(p as *const f64)),
            DType::F32 => Total::F(*(p as *const f32) as f64),
            DType::Bool => Total::B(*p != 0),
            DType::I8 => Total::I(*(p as *const i8) as i64),
            DType::I16 => Total::I(*(p as *const i16) as i64),
            DType::I32 => Total::I(*(p as *const i32) as i64),
            DType::I64 => Total::I(*(p as *const i64)),
            DType::U8 => Total::I(*p as i64),
            DType::U16 => Total::I(*(p as *const u16) as i64),
            DType::U32 => Total::I(*(p as *const u32) as i64),
            DType::U64 => Total::U(*(p as *const u64)),
        }
    }
}

/// The C++ a launch would compile, without compiling it (for tests and users).
#[pyfunction]
#[pyo3(signature = (pattern, policy, wu, kwargs=None, is_method=false, methods=None))]
pub fn generate_source(
    py: Python<'_>,
    pattern: u8,
    policy: &Bound<'_, PyAny>,
    wu: &Bound<'_, Workunit>,
    kwargs: Option<&Bound<'_, PyDict>>,
    is_method: bool,
    methods: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let wu = wu.get();
    let pattern = pattern_of(pattern);
    let (_, _, space, rank) = policy_of(policy)?;
    let g = gather(py, wu, pattern, rank, is_method, kwargs)?;
    let globals = resolve::globals_of(py, wu, methods)?;
    let req = Request {
        wu,
        globals: &globals,
        pattern,
        space,
        rank,
        args: g.names.iter().cloned().zip(g.tys.iter().cloned()).collect(),
        is_method,
        label: wu.name.clone(),
    };
    pipeline::translate(&req).map(|g| g.source).map_err(py_err)
}
