//! The two pipelines, each a list of named stages, one call per line.
//!
//! - `eager(launch)`: kernel for the launch (the in-process table, else
//!   resolve names -> translate -> build and load) -> run.
//! - `flush(demand)`: dependency closure -> plan (overwritten launches
//!   dropped -> candidates -> partition -> verify -> dead temporaries ->
//!   deferral -> explain) -> per region: take it out of the DAG (deferred
//!   launches stay in it) -> kernel (fused: layout -> generate -> build and
//!   load) -> run -> note the kernels that ran alone (solo.rs).
//!
//! Both share `load` (compile::load into an exec::Kernel) and `exec::run`.
//! The bindings call in with the GIL released.
pub mod adaptive;
mod kernels;
mod plan_cache;
mod planning;
mod settle;
mod solo;
mod switches;
mod trace_flush;
use trace_flush::trace_flush;
pub mod tape;

use crate::errors::{PkError, PkResult};
use crate::exec::args::ArgVal;
use crate::exec::kernel::{Kernel, Total};
use crate::exec::launch::{Launch, Origin};
use crate::exec::run::{run, Who};
use crate::fusion::layout;
use crate::lazy::graph::{self, Demand, Node};
use crate::lazy::{deferral, failure, turn};
pub use kernels::translate;
use kernels::{fused_kernel, repeat_kernel, run_fused_kernel, single_kernel};
pub use plan_cache::replays as plan_replays;
use plan_cache::Fused;
use planning::{no_fuse, plan, Region};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
pub use switches::check_disabled;

/// Where a launch the program submitted goes. Decided on a borrowed launch:
/// the launch stays where the binding built it, and moves only to be recorded
/// (it is 200 bytes; every launch that runs at once used to be copied into
/// the answer and out again).
pub enum Route {
    /// To run now (`run_now`): eager mode, or it touches memory Python can
    /// change behind our back (NumPy arrays, exported views).
    Now,
    /// A host launch lazy mode runs at once with nothing pending (`at_once`):
    /// a small one (adaptive.rs), timed for the adaptive cost signal when the
    /// flag says so, or one that flushed alone lately (solo.rs).
    AtOnce(bool),
    /// To be recorded (`record`).
    Record,
    /// To the tape (`tape::offer`): it may continue a learned flush.
    Tape,
}

/// Where `l` goes (`tape`: whether the tape may take it; not once it gave
/// the launch back). Cheap, GIL-free work: the binding calls it without
/// releasing the GIL.
pub fn route(l: &Launch, tape: bool) -> PkResult<Route> {
    l.check_space()?;
    if !graph::enabled() {
        return Ok(Route::Now);
    }
    // The tape holds launches (this one continues or spills them), or a
    // learned flush may start here: one kernel for several launches beats
    // running them at once.
    if tape && tape::wants(l) {
        return Ok(Route::Tape);
    }
    // Asked once: every small launch asks, and the answers below need it.
    let quiet = graph::quiet();
    // The bypass's fast path (adaptive.rs). With nothing pending, running
    // now and running at once give the same results: `runs_now` need not be
    // asked (a small launch on NumPy memory then counts towards the bypass's
    // probe period, as a bypassed launch).
    if quiet && adaptive::fast(l) {
        return Ok(Route::AtOnce(false));
    }
    if l.runs_now() {
        return Ok(Route::Now);
    }
    if adaptive::run_at_once(l, quiet, || !quiet && graph::folds_into_newest(l)) {
        // Nothing pending (the common case): nothing to flush first, so it
        // goes straight to its kernel; whether to time it is decided here.
        if !quiet {
            return Ok(Route::Now);
        }
        let timed = adaptive::time_at_once();
        // (A timed launch's measurement refreshes the choice, which would
        // disarm the countdown at once.)
        if !timed {
            adaptive::arm_fast();
        }
        return Ok(Route::AtOnce(timed));
    }
    // A launch that flushed alone lately, with nothing pending (solo.rs).
    if quiet && solo::run_at_once(l) {
        return Ok(Route::AtOnce(false));
    }
    Ok(Route::Record)
}

/// Records a launch `route` sent here (with the origin `origin()` makes): its
/// sequence number, its result slot (reductions and scans), and whether it
/// has effects beyond its views (printf: the binding then flushes at once, so
/// its output comes when it was launched).
pub fn record(
    l: Launch,
    origin: impl FnOnce() -> Arc<dyn Origin>,
) -> PkResult<(u64, Option<Arc<crate::lazy::slot::Slot>>, bool)> {
    // Launches the tape held come first, in program order (the binding
    // calls this with the GIL held, as spilling needs).
    tape::spill()?;
    // Folding exact repeats into one node is a fusion decision: not when unfused.
    let fold = !no_fuse().load(Ordering::Relaxed);
    let weight = adaptive::recording_weight(&l);
    let t0 = weight.is_some_and(|w| w > 0).then(Instant::now);
    let recorded = graph::record(l, origin, fold)?;
    if let Some(w) = weight {
        adaptive::recorded(t0.map_or(0, |t| t.elapsed().as_nanos() as u64), w);
    }
    Ok(recorded)
}

/// Runs a launch now, after the pending work it depends on.
pub fn run_now(l: &Launch, origin: &dyn Origin) -> PkResult<Option<Total>> {
    if !graph::enabled() {
        return eager(l, origin);
    }
    // Nothing pending (the common case once launches run at once): no flush.
    if !graph::quiet() {
        let _ran = flush(Demand::Allocs(&l.allocs()))?;
    }
    // Only small launches count towards the sampling (as `route`'s do).
    at_once(l, origin, adaptive::small(l) && adaptive::time_at_once())
}

/// Runs a launch's kernel, nothing else (`route` sent it here as `AtOnce`,
/// or `run_now` flushed what it needs); `timed`: for the adaptive cost signal.
pub fn at_once(l: &Launch, origin: &dyn Origin, timed: bool) -> PkResult<Option<Total>> {
    if !timed {
        return eager(l, origin);
    }
    let t0 = Instant::now();
    let total = eager(l, origin)?;
    adaptive::ran_at_once(t0.elapsed().as_nanos() as u64);
    Ok(total)
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
    // A learned flush running its kernel was launched before this one.
    tape::wait_run();
    let nodes = crate::lazy::closure::closure(&demand);
    if nodes.is_empty() {
        return Ok(Ran(nodes));
    }
    let _span = tracing::info_span!("flush", launches = nodes.len()).entered();
    let launches = nodes.iter().map(|n| n.count()).sum();
    adaptive::observe(launches);
    let small = nodes.iter().all(|n| adaptive::small(&n.launch));
    let t0 = (small || crate::trace::on()).then(Instant::now);
    let planned = plan(&nodes, &demand)?;
    if let (Some(t0), true) = (t0, crate::trace::on()) {
        let us = t0.elapsed().as_secs_f64() * 1e6;
        trace_flush(&demand, &nodes, &planned, us);
    }
    let lesson = tape::lesson(&nodes, &planned);
    for (k, region) in planned.regions.iter().enumerate() {
        // Ctrl-C between kernels: what ran is done, the rest stays pending.
        // (Our SIGINT watch is put back, if replaced, only for flushes of
        // several kernels: a one-kernel flush, the common small one, pays no
        // sigaction call; large host kernels and compiles chain it anyway.)
        if k == 1 {
            crate::interrupt::chain();
        }
        if k > 0 && crate::interrupt::requested() {
            let left: usize = planned.regions[k..].iter().map(|r| r.seqs.len()).sum();
            return Err(PkError::Interrupted(format!(
                "interrupted between the kernels of a flush: {left} launch(es) did not run and are still pending"
            )));
        }
        run_region(region)?;
    }
    if let Some(lesson) = lesson {
        tape::learn(lesson);
    }
    if let (Some(t0), true) = (t0, small) {
        adaptive::flushed_small(launches, t0.elapsed().as_nanos() as u64);
    }
    solo::flushed(&nodes, &planned);
    Ok(Ran(nodes))
}

/// Lazy mode was switched on or off: recording starts over (see
/// adaptive.rs), and so does what deferral learned (lazy/deferral.rs).
pub fn lazy_switched() -> PkResult<()> {
    adaptive::reset();
    solo::forget();
    deferral::forget();
    tape::forget();
    // Launches another thread held meanwhile are recorded, not lost (the
    // binding calls this with the GIL held, as spilling needs).
    tape::spill()
}

/// Fusion on or off for later flushes (lazy mode stays as it is).
pub fn set_fusing(on: bool) {
    no_fuse().store(!on, Ordering::Relaxed);
    tape::forget();
}

/// Ctrl-C while a region's kernel was built: nothing of it ran, and it is
/// still in the DAG (with what follows it).
fn still_pending() -> PkError {
    let left = graph::pending_count();
    PkError::Interrupted(format!(
        "interrupted while a kernel of the flush was compiled: {left} launch(es) did not run and are still pending"
    ))
}

/// Runs one region: one fused kernel, or one kernel per launch (alone, or
/// after a fused kernel failed to build: its launches then report their own
/// errors, if they have any).
fn run_region(r: &Region) -> PkResult<()> {
    let now: Vec<u64> = r
        .seqs
        .iter()
        .filter(|s| !r.deferred.contains(s))
        .copied()
        .collect();
    // Looked at, not yet taken: a kernel build Ctrl-C stops leaves the
    // region pending (taken out only once its kernel is ready to run).
    let mut nodes = graph::peek(&now);
    // Deferred launches (their outputs only in registers) stay pending,
    // and, but for the fused kernel, run now after all.
    let kept = graph::peek(&r.deferred);
    for n in nodes.iter().chain(&kept) {
        // Deferred before, and computed now once more: that deferral did not pay.
        if n.deferred.load(Ordering::Acquire) {
            deferral::wasted(&n.launch.key);
        }
    }
    nodes.extend(kept.iter().cloned());
    nodes.sort_by_key(|n| n.seq);
    let untake = |nodes: &[Arc<Node>]| {
        if !kept.is_empty() {
            // Not fused after all: the deferred ones run too.
            drop(graph::take(&r.deferred));
            for n in nodes {
                n.deferred.store(false, Ordering::Release);
            }
        }
    };
    // Launches in a row that repeat one launch exactly (nodes, and the
    // repeats folded into them when recorded): one kernel that loops.
    let count: usize = nodes.iter().map(|n| n.count()).sum();
    let repeated = nodes[0].launch.key.pattern == crate::types::Pattern::For
        && nodes.windows(2).all(|w| w[1].launch.repeats(&w[0].launch));
    if count > 1 && repeated {
        match repeat_kernel(&nodes[0].launch, &*nodes[0].origin) {
            Ok(kernel) => {
                drop(graph::take(&now));
                untake(&nodes);
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
            // Ctrl-C during its build: nothing ran, all of it stays pending.
            Err(PkError::Interrupted(_)) => return Err(still_pending()),
            Err(e) => {
                tracing::warn!(error = %e, "repeat kernel did not build; running its launches one by one")
            }
        }
    }
    if nodes.len() > 1 {
        let region: Vec<&Launch> = nodes.iter().map(|n| &n.launch).collect();
        match region_kernel(r, &nodes, &region) {
            // A fused kernel that ran (or began to) is never rerun launch by
            // launch: its updates may have landed already.
            Ok((kernel, label)) => {
                drop(graph::take(&now));
                let ran = run_fused(&nodes, &region, &kernel, &label);
                for n in &kept {
                    n.deferred.store(true, Ordering::Release);
                }
                return ran.map_err(|e| failure::fail(&nodes, e));
            }
            Err(PkError::Interrupted(_)) => return Err(still_pending()),
            Err(e) => {
                tracing::warn!(error = %e, "fused kernel did not build; running its launches one by one")
            }
        }
    }
    drop(graph::take(&now));
    untake(&nodes);
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

/// A region's fused kernel and label: the one its cached plan keeps, else
/// laid out, found by its structure or built (and then kept).
fn region_kernel(
    r: &Region,
    nodes: &[Arc<Node>],
    region: &[&Launch],
) -> PkResult<(Arc<Kernel>, String)> {
    let labels = || region.iter().map(|l| l.label.clone());
    if let Some(f) = r
        .memo
        .as_ref()
        .and_then(|m| m.get())
        .filter(|f| f.fits(labels()))
    {
        return Ok((f.kernel.clone(), f.label.clone()));
    }
    let accesses: Vec<&std::collections::BTreeMap<_, _>> =
        nodes.iter().map(|n| &*n.access_map).collect();
    let cache = !crate::codegen::emit::bounds_checked(region[0].key.space);
    let lay = layout::layout(region, &accesses, &r.registers, cache);
    let label = layout::region_label(region);
    let kernel = fused_kernel(nodes, region, &lay, &label)?;
    if let Some(m) = &r.memo {
        let _ = m.set(Fused {
            labels: labels().collect(),
            label: label.clone(),
            kernel: kernel.clone(),
        });
    }
    Ok((kernel, label))
}

fn run_fused(
    nodes: &[Arc<Node>],
    region: &[&Launch],
    kernel: &Kernel,
    label: &str,
) -> PkResult<()> {
    let bodies: Vec<&[ArgVal]> = region.iter().map(|l| &l.vals[..]).collect();
    let mut totals = vec![None; region.len()];
    let range = (&region[0].lo[..], &region[0].hi[..]);
    run_fused_kernel(kernel, &bodies, range, label, &mut totals)?;
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
