//! Bindings of the lazy runtime: lazy results (`Pending`), flushes asked for by
//! host access, and the reports (`explain`, the pending DAG as JSON).
use super::bridge::{detached, py_err, total_to_py};
use crate::exec::args::ArgVal;
use crate::exec::kernel::FUSED;
use crate::exec::run::{dispatch_busy, dispatch_turn};
use crate::fusion::explain;
use crate::lazy::graph::{self, Demand};
use crate::lazy::slot::Slot;
use crate::lazy::turn;
use crate::memory::alloc::Alloc;
use crate::pipeline;
use parking_lot::Mutex;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock};

/// A pending reduction/scan total; `value()` forces exactly what it needs.
#[pyclass(frozen, module = "pykokkos._native", name = "Pending")]
pub struct Pending {
    pub seq: u64,
    pub slot: Arc<Slot>,
}

fn slot_value<'py>(py: Python<'py>, slot: &Slot) -> PyResult<Option<Bound<'py, PyAny>>> {
    match slot.get() {
        Some(Ok(t)) => total_to_py(py, t).map(Some),
        Some(Err(why)) => Err(PyRuntimeError::new_err(why)),
        None => Ok(None),
    }
}

#[pymethods]
impl Pending {
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(v) = slot_value(py, &self.slot)? {
            return Ok(v);
        }
        flush(py, Demand::Result(self.seq))?;
        slot_value(py, &self.slot)?.ok_or_else(|| {
            PyRuntimeError::new_err(
                "this lazy result's launch was dropped after an earlier failure",
            )
        })
    }
    #[getter]
    fn ready(&self) -> bool {
        self.slot.is_set()
    }
}

/// Runs the flush pipeline with the GIL released (nothing pending and no
/// flush under way in another thread: nothing to wait for).
pub fn flush(py: Python<'_>, demand: Demand<'_>) -> PyResult<()> {
    // Launches the memo holds are recorded first (with the GIL, as spilling
    // needs: the flush itself runs without it).
    pipeline::memo::hold::spill().map_err(py_err)?;
    if graph::quiet() {
        return Ok(());
    }
    if crate::trace::on() {
        crate::trace::set_site(user_site(py));
    }
    let ran = detached(py, || pipeline::flush(demand))?;
    drop(ran);
    Ok(())
}

/// "file:line" of the innermost Python frame outside this package: where
/// the program asked for what made this flush happen (for traces).
fn user_site(py: Python<'_>) -> String {
    let Ok(sys) = py.import("sys") else {
        return String::new();
    };
    // The package's own folder (its frames are not where the program asked).
    let pkg: String = py
        .import("pykokkos")
        .and_then(|m| m.getattr("__file__"))
        .and_then(|f| f.extract::<String>())
        .map(|f| {
            f.rsplit_once('/')
                .map_or(f.clone(), |(d, _)| format!("{d}/"))
        })
        .unwrap_or_default();
    let mut frame = sys.call_method1("_getframe", (0,)).ok();
    while let Some(f) = frame {
        let file: String = f
            .getattr("f_code")
            .and_then(|c| c.getattr("co_filename"))
            .and_then(|n| n.extract())
            .unwrap_or_default();
        let ours = !pkg.is_empty() && file.starts_with(&pkg);
        if !ours && !file.is_empty() && !file.starts_with('<') {
            let line: i64 = f.getattr("f_lineno").and_then(|l| l.extract()).unwrap_or(0);
            return format!("{file}:{line}");
        }
        frame = f.getattr("f_back").ok().filter(|b| !b.is_none());
    }
    String::new()
}

/// Host access to an allocation is about to happen: its pending work runs,
/// and a kernel another thread is running finishes first (it may write it).
pub fn flush_host(py: Python<'_>, alloc: &Arc<Alloc>) -> PyResult<()> {
    // Nothing pending touches it (the common case of element access while
    // other work waits): no flush, no GIL release.
    // (Launches the memo holds count for every view: a host access spills them.)
    if alloc.pending.load(Ordering::Acquire) > 0 || turn::flushing() || graph::held() {
        flush(py, Demand::Allocs(&[alloc.id()]))?;
    }
    if dispatch_busy() {
        detached(py, || {
            drop(dispatch_turn());
            Ok(())
        })?;
    }
    Ok(())
}

/// Errors of flushes started inside the buffer protocol, which NumPy swallows
/// before falling back to `__array__`: kept so that fallback raises them.
static SWALLOWED: LazyLock<Mutex<HashMap<usize, Py<pyo3::exceptions::PyBaseException>>>> =
    LazyLock::new(Default::default);

/// The flush of `__getbuffer__`: remembers its error for `take_swallowed`.
pub fn flush_for_buffer(py: Python<'_>, alloc: &Arc<Alloc>) -> PyResult<()> {
    flush_host(py, alloc).inspect_err(|err| {
        let mut kept = SWALLOWED.lock();
        kept.insert(alloc.id(), err.value(py).clone().unbind());
        ANY_SWALLOWED.store(true, std::sync::atomic::Ordering::Release);
    })
}

/// Whether SWALLOWED may hold anything (host access checks this first).
static ANY_SWALLOWED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An error a swallowed buffer-protocol flush left for this allocation.
pub fn take_swallowed(py: Python<'_>, alloc: usize) -> PyResult<()> {
    if !ANY_SWALLOWED.load(std::sync::atomic::Ordering::Acquire) {
        return Ok(());
    }
    let mut kept = SWALLOWED.lock();
    let found = kept.remove(&alloc);
    ANY_SWALLOWED.store(!kept.is_empty(), std::sync::atomic::Ordering::Release);
    drop(kept);
    match found {
        Some(e) => Err(PyErr::from_value(e.into_bound(py).into_any())),
        None => Ok(()),
    }
}

/// Switches lazy mode (read from PK_FUSE / PK_FUSION at import; tests toggle it).
/// Turning it off flushes what is pending first.
#[pyfunction]
pub fn set_lazy(py: Python<'_>, on: bool) -> PyResult<()> {
    if !on {
        flush(py, Demand::All)?;
    }
    graph::set_enabled(on);
    pipeline::lazy_switched().map_err(py_err)?;
    Ok(())
}

/// Fusion on or off in lazy mode (`PK_FUSE_NOFUSE=1` at import is off);
/// what is pending runs first, under the old setting.
#[pyfunction]
pub fn set_fusing(py: Python<'_>, on: bool) -> PyResult<()> {
    flush(py, Demand::All)?;
    pipeline::set_fusing(on);
    Ok(())
}

#[pyfunction]
pub fn lazy_enabled() -> bool {
    graph::enabled()
}

/// Runs everything pending.
#[pyfunction]
#[pyo3(name = "flush")]
pub fn flush_all(py: Python<'_>) -> PyResult<()> {
    flush(py, Demand::All)
}

/// Number of launches waiting.
#[pyfunction]
pub fn pending_count() -> usize {
    graph::pending_count()
}

/// The cost signal's measured costs per small host launch in ns,
/// (recorded, run at once) (0: not measured); `set` replaces them, for
/// tests of the decision that must not depend on this machine's timing.
#[pyfunction]
#[pyo3(signature = (set=None))]
pub fn adaptive_costs(set: Option<(f64, f64)>) -> (f64, f64) {
    crate::pipeline::costs(set)
}

/// How many flushes so far replayed a cached plan of their shape instead of
/// planning (tests see that the plan cache is exercised).
#[pyfunction]
pub fn plan_replays() -> u64 {
    crate::pipeline::plan_replays()
}

/// The last flush's fusion report (every launch listed when `verbose`) and
/// its DOT graph.
#[pyfunction]
#[pyo3(signature = (verbose=false))]
pub fn explain_last(verbose: bool) -> Option<(String, String)> {
    explain::last(verbose)
}

/// Every fusion report since the previous call (oldest first); with
/// `plans=True`, (report, plan as JSON) pairs: the plan lists regions, the
/// rule that joined each launch and dead temporaries (snapshot tests, tools).
#[pyfunction]
#[pyo3(signature = (plans=false))]
pub fn explain_history(py: Python<'_>, plans: bool) -> PyResult<Vec<Bound<'_, PyAny>>> {
    explain::take_history()
        .into_iter()
        .map(|(text, plan)| {
            if plans {
                Ok((text, plan).into_pyobject(py)?.into_any())
            } else {
                Ok(text.into_pyobject(py)?.into_any())
            }
        })
        .collect()
}

/// Number of fused kernels built in this process (structurally identical
/// regions share one).
#[pyfunction]
pub fn fused_kernel_count() -> usize {
    FUSED.len()
}

/// How many learned flushes ran whole as their launches came (pipeline/memo/hold.rs).
#[pyfunction]
pub fn tape_runs() -> u64 {
    pipeline::memo::hold::runs()
}

/// Learned flushes on or off (tests that count flushes or plans switch
/// them off); returns whether they were on.
#[pyfunction]
pub fn set_tape(on: bool) -> PyResult<bool> {
    pipeline::memo::hold::set_on(on).map_err(py_err)
}

/// The pending DAG as JSON: nodes (workunit identity, policy, scalars, buffer
/// accesses), edges, and dead allocations. Deterministic: ordered by sequence.
#[pyfunction]
pub fn graph_json() -> PyResult<String> {
    // Launches the memo holds are pending too: shown in the DAG.
    pipeline::memo::hold::spill().map_err(py_err)?;
    let (nodes, dead) = graph::snapshot();
    let edges = graph::edges(&nodes);
    // Allocation addresses differ run to run: number them by first appearance.
    let mut ids: BTreeMap<usize, usize> = BTreeMap::new();
    for n in &nodes {
        for a in &n.accesses {
            let k = ids.len();
            ids.entry(a.alloc).or_insert(k);
        }
    }
    let mut out = Vec::new();
    for n in &nodes {
        let l = &n.launch;
        let wu = l.workunit();
        let scalars: Vec<serde_json::Value> = l
            .names
            .iter()
            .zip(&l.vals)
            .filter_map(|(name, v)| match v {
                ArgVal::Int(i) => Some(serde_json::json!({"name": name, "int": i})),
                ArgVal::Float(f) => Some(serde_json::json!({"name": name, "float": f})),
                ArgVal::Complex(r, i) => Some(serde_json::json!({"name": name, "complex": [r, i]})),
                ArgVal::View(_) => None,
            })
            .collect();
        out.push(serde_json::json!({
            "seq": n.seq,
            "workunit": {"name": wu.name, "file": wu.src.filename, "line": wu.src.first_line},
            "pattern": format!("{:?}", l.key.pattern),
            "space": format!("{:?}", l.key.space),
            "begin": l.lo, "end": l.hi,
            "args": l.names.iter().zip(&l.key.args).map(|(n, t)| serde_json::json!({"name": n, "type": t})).collect::<Vec<_>>(),
            "scalars": scalars,
            "buffers": n.accesses.iter().map(|a| serde_json::json!({
                "buffer": ids[&a.alloc], "start": a.start, "end": a.end, "read": a.read, "write": a.write,
            })).collect::<Vec<_>>(),
            "site": n.origin.site(),
        }));
    }
    let edges: Vec<(u64, u64)> = edges
        .iter()
        .map(|&(a, b)| (nodes[a].seq, nodes[b].seq))
        .collect();
    let dead: Vec<usize> = dead.iter().filter_map(|a| ids.get(a).copied()).collect();
    Ok(serde_json::json!({"nodes": out, "edges": edges, "dead_buffers": dead}).to_string())
}

/// The Python value of a recorded launch: a `Pending` for reductions, else None.
pub fn record_result(seq: u64, slot: Option<Arc<Slot>>, py: Python<'_>) -> PyResult<Py<PyAny>> {
    match slot {
        Some(slot) => Ok(Py::new(py, Pending { seq, slot })?.into_any()),
        None => Ok(py.None()),
    }
}
