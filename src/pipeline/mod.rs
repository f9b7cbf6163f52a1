//! The two pipelines, each a list of named stages, one call per line.
//!
//! - `eager(launch)`: kernel for the launch (the in-process table, else
//!   resolve names -> translate -> build and load) -> run.
//! - `flush(demand)`: dependency closure -> plan (candidates -> partition ->
//!   verify -> dead temporaries -> explain) -> per region: take it out of the
//!   DAG -> kernel (fused: layout -> generate -> build and load) -> run.
//!
//! Both share `load` (build::load into an exec::Kernel) and `exec::run`.
//! The bindings call in with the GIL released.
mod adaptive;
mod kernels;

use crate::errors::{PkError, PkResult};
use crate::exec::args::ArgVal;
use crate::exec::kernel::{Kernel, Total};
use crate::exec::launch::{Launch, Origin};
use crate::exec::run::{run, Who};
use crate::fusion::{cand, dead, explain, layout, plan, rules, verify};
use crate::lazy::graph::{self, Demand, Node};
use crate::lazy::{failure, turn};
pub use kernels::translate;
use kernels::{fused_kernel, repeat_kernel, single_kernel};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A launch the program submitted: recorded (lazy mode), or to run now.
pub enum Submitted {
    /// Recorded as this sequence number (with a result slot for reductions
    /// and scans).
    Recorded(u64, Option<Arc<crate::lazy::slot::Slot>>),
    /// To run now (`run_now`): eager mode, or it touches memory Python can
    /// change behind our back (NumPy arrays, exported views).
    Now(Launch),
}

/// Records a launch in lazy mode (with the origin `origin()` makes); gives it
/// back when it must run now. Cheap, GIL-free work: the binding calls it
/// without releasing the GIL.
pub fn submit(l: Launch, origin: impl FnOnce() -> Arc<dyn Origin>) -> PkResult<Submitted> {
    l.check_space()?;
    let foreign = l
        .vals
        .iter()
        .any(|v| matches!(v, ArgVal::View(x) if x.alloc.runs_now()));
    if graph::enabled() && !foreign && adaptive::run_at_once(&l, || graph::folds_into_newest(&l)) {
        return Ok(Submitted::Now(l));
    }
    if graph::enabled() && !foreign {
        // Folding exact repeats into one node is a fusion decision: not when unfused.
        let fold = !no_fuse().load(Ordering::Relaxed);
        let (seq, slot) = graph::record(l, origin(), fold)?;
        return Ok(Submitted::Recorded(seq, slot));
    }
    Ok(Submitted::Now(l))
}

/// Runs a launch now, after the pending work it depends on.
pub fn run_now(l: &Launch, origin: &dyn Origin) -> PkResult<Option<Total>> {
    if graph::enabled() {
        let _ran = flush(Demand::Allocs(&l.allocs()))?;
    }
    eager(l, origin)
}

/// Runs one launch now.
pub fn eager(l: &Launch, origin: &dyn Origin) -> PkResult<Option<Total>> {
    let kernel = single_kernel(l, origin)?;
    let mut total = [None];
    let who = Who::Workunit(&l.workunit().name);
    run(&kernel, &[&l.vals], &l.lo, &l.hi, who, &mut total)?;
    Ok(total[0])
}

/// The launches a flush ran. Their origins hold Python references: the
/// binding drops them once it holds the GIL again, so the references go at
/// once instead of through pyo3's deferred pool.
#[must_use]
pub struct Ran(#[allow(dead_code)] Vec<Arc<Node>>);

/// Runs what `demand` depends on, fused by the rules into one kernel per region.
/// On a failure the failed launch and everything that depends on it are
/// dropped (and named in the error); unrelated pending work stays pending.
pub fn flush(demand: Demand<'_>) -> PkResult<Ran> {
    // One flush at a time: a region taken out of the DAG is invisible to
    // another thread's closure, so that thread must wait until it has run
    // (its host read, or the launch that depends on it, comes after).
    let _turn = turn::flush_turn();
    let nodes = graph::closure(&demand);
    if nodes.is_empty() {
        return Ok(Ran(nodes));
    }
    let _span = tracing::info_span!("flush", launches = nodes.len()).entered();
    adaptive::observe(nodes.iter().map(|n| n.count()).sum());
    let t0 = crate::trace::on().then(std::time::Instant::now);
    let regions = plan(&nodes)?;
    if let Some(t0) = t0 {
        trace_flush(&demand, &nodes, &regions, t0.elapsed().as_secs_f64() * 1e6);
    }
    for (region, dead) in regions {
        run_region(&region, &dead)?;
    }
    Ok(Ran(nodes))
}

/// The trace's `flush` event: what was demanded, the launches it ran (with
/// folded repeats), the regions and their dead temporaries, planning time.
fn trace_flush(demand: &Demand<'_>, nodes: &[Arc<Node>], regions: &[Region], plan_us: f64) {
    let demand = match demand {
        Demand::All => serde_json::json!({"kind": "all"}),
        Demand::Allocs(a) => serde_json::json!({"kind": "buffers", "buffers": a}),
        Demand::Result(seq) => serde_json::json!({"kind": "result", "seq": seq}),
    };
    let launches: Vec<_> = nodes
        .iter()
        .map(|n| serde_json::json!([n.seq, n.count()]))
        .collect();
    let regions: Vec<_> = regions
        .iter()
        .map(|(seqs, dead)| serde_json::json!({"seqs": seqs, "dead_temporaries": dead}))
        .collect();
    crate::trace::event(
        "flush",
        serde_json::json!({"demand": demand, "site": crate::trace::take_site(), "launches": launches, "regions": regions, "plan_us": plan_us.round()}),
    );
}

/// A region (sequence numbers, program order) and its dead temporaries.
type Region = (Vec<u64>, BTreeSet<usize>);

/// Lazy mode fuses regions unless `PK_FUSE_NOFUSE=1` (or a test switched it off).
static NO_FUSE: std::sync::OnceLock<std::sync::atomic::AtomicBool> = std::sync::OnceLock::new();

fn no_fuse() -> &'static std::sync::atomic::AtomicBool {
    NO_FUSE.get_or_init(|| crate::config::get().no_fuse.into())
}

/// Lazy mode was switched on or off: recording starts over (see adaptive.rs).
pub fn lazy_switched() {
    adaptive::reset();
}

/// Fusion on or off for later flushes (lazy mode stays as it is).
pub fn set_fusing(on: bool) {
    no_fuse().store(!on, Ordering::Relaxed);
}

/// Partitions a flush into regions (one per launch when fusion is off).
fn plan(nodes: &[Arc<Node>]) -> PkResult<Vec<Region>> {
    if no_fuse().load(Ordering::Relaxed) {
        return Ok(nodes
            .iter()
            .map(|n| (vec![n.seq], BTreeSet::new()))
            .collect());
    }
    let _span = tracing::info_span!("plan", launches = nodes.len()).entered();
    let mut cands: Vec<cand::Cand> = nodes
        .iter()
        .map(|n| cand::of_launch(&n.launch, &n.access_map))
        .collect();
    for k in 1..nodes.len() {
        cands[k].repeats_prev = nodes[k].launch.repeats(&nodes[k - 1].launch);
    }
    for (c, n) in cands.iter_mut().zip(nodes) {
        c.folded = n.count() > 1;
    }
    let edges = graph::edges(nodes);
    let plan = plan::partition(rules::active()?, &cands);
    check(&plan, &edges)?;
    let dead = dead_temporaries(&cands, &plan);
    let regions = plan
        .regions
        .iter()
        .zip(&dead)
        .map(|(r, d)| {
            (
                r.iter().map(|&k| nodes[k].seq).collect(),
                d.iter().copied().collect(),
            )
        })
        .collect();
    let info = |k: usize| (nodes[k].launch.label.clone(), nodes[k].origin.clone());
    explain::record(&cands, plan, &dead, &edges, &info);
    Ok(regions)
}

/// The verify stage: on in debug builds and under `PK_VERIFY=1` (tests).
fn check(p: &plan::Plan, edges: &[(usize, usize)]) -> PkResult<()> {
    if !crate::config::get().verify {
        return Ok(());
    }
    verify::verify(p, p.joined_by.len(), edges)
        .map_err(|e| PkError::Runtime(format!("internal error: the fusion plan is invalid: {e}")))
}

/// The dead-temporary pass per region (empty when switched off). A buffer
/// is touched elsewhere when more pending launches use it than the region has.
fn dead_temporaries(cands: &[cand::Cand], p: &plan::Plan) -> Vec<Vec<usize>> {
    if crate::config::get().is_disabled(dead::PASS) {
        return vec![Vec::new(); p.regions.len()];
    }
    // Counted once per flush, and only if some buffer gets this far.
    let total = std::cell::OnceCell::new();
    p.regions
        .iter()
        .map(|region| {
            if region.len() < 2 {
                return Vec::new();
            }
            let rc: Vec<&cand::Cand> = region.iter().map(|&k| &cands[k]).collect();
            let inside = |alloc: usize| {
                rc.iter()
                    .filter(|c| c.views.iter().any(|v| v.alloc == alloc))
                    .count()
            };
            let elsewhere = |alloc: usize| {
                let total = total.get_or_init(graph::use_counts);
                total.get(&alloc).copied().unwrap_or(0) > inside(alloc)
            };
            dead::dead_temporaries(&rc, &elsewhere)
                .into_iter()
                .collect()
        })
        .collect()
}

/// Runs one region: one fused kernel, or one kernel per launch (alone, or
/// after a fused kernel failed to build: its launches then report their own
/// errors, if they have any).
fn run_region(seqs: &[u64], dead: &BTreeSet<usize>) -> PkResult<()> {
    let nodes = graph::take(seqs);
    // Launches in a row that repeat one launch exactly (nodes, and the
    // repeats folded into them when recorded): one kernel that loops.
    let count: usize = nodes.iter().map(|n| n.count()).sum();
    let repeated = nodes[0].launch.key.pattern == crate::types::Pattern::For
        && nodes.windows(2).all(|w| w[1].launch.repeats(&w[0].launch));
    if count > 1 && repeated {
        match repeat_kernel(&nodes[0].launch, &*nodes[0].origin) {
            Ok(kernel) => {
                let l = &nodes[0].launch;
                let (lo, hi) = ([l.lo[0], 0], [l.hi[0], count as i64]);
                let who = Who::Workunit(&l.workunit().name);
                let ran = run(&kernel, &[&l.vals], &lo, &hi, who, &mut [None]).and_then(|()| {
                    match crate::config::get().failpoint.as_deref() {
                        Some("fused_run") => Err(PkError::Runtime(format!(
                            "{} x{count} failed after it ran (failpoint)",
                            l.label
                        ))),
                        _ => Ok(()),
                    }
                });
                return ran.map_err(|e| failure::fail(&nodes, e));
            }
            Err(e) => {
                tracing::warn!(error = %e, "repeat kernel did not build; running its launches one by one")
            }
        }
    }
    if nodes.len() > 1 {
        let region: Vec<&Launch> = nodes.iter().map(|n| &n.launch).collect();
        let lay = layout::layout(&region, dead);
        let label = layout::region_label(&region);
        match fused_kernel(&nodes, &region, &lay, &label) {
            // A fused kernel that ran (or began to) is never rerun launch by
            // launch: its updates may have landed already.
            Ok(kernel) => {
                let ran = run_fused(&nodes, &region, &kernel, &label);
                return ran.map_err(|e| failure::fail(&nodes, e));
            }
            Err(e) => {
                tracing::warn!(error = %e, "fused kernel did not build; running its launches one by one")
            }
        }
    }
    for (j, node) in nodes.iter().enumerate() {
        for _ in 0..node.count() {
            match eager(&node.launch, &*node.origin) {
                Ok(total) => deliver(node, total),
                Err(e) => return Err(failure::fail(&nodes[j..], e)),
            }
        }
    }
    Ok(())
}

fn run_fused(
    nodes: &[Arc<Node>],
    region: &[&Launch],
    kernel: &Kernel,
    label: &str,
) -> PkResult<()> {
    let bodies: Vec<&[ArgVal]> = region.iter().map(|l| &l.vals[..]).collect();
    let mut totals = vec![None; region.len()];
    let who = Who::Region(label);
    run(
        kernel,
        &bodies,
        &region[0].lo,
        &region[0].hi,
        who,
        &mut totals,
    )?;
    if crate::config::get().failpoint.as_deref() == Some("fused_run") {
        return Err(PkError::Runtime(format!(
            "{label} failed after it ran (failpoint)"
        )));
    }
    for (node, t) in nodes.iter().zip(totals) {
        deliver(node, t);
    }
    Ok(())
}

fn deliver(node: &Node, total: Option<Total>) {
    if let (Some(slot), Some(t)) = (&node.result, total) {
        slot.set(t);
    }
}
