//! The flush pipeline (and `eager`, the one-launch pipeline it falls back
//! on): plan what a demand depends on, then run each region as planned.
use super::cost;
use super::kernels::{fused_kernel, run_fused_kernel, single_kernel};
use super::memo::{self, hold, plans::Fused};
use super::planning::{plan, Planned, Region, Strategy};
use crate::errors::{PkError, PkResult};
use crate::exec::kernel::{Kernel, Total};
use crate::exec::launch::{Launch, Origin};
use crate::exec::run::{run, Who};
use crate::fusion::layout;
use crate::lazy::graph::{self, Demand, Node};
use crate::lazy::{deferral, failure, turn};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Runs one launch now.
pub fn eager(l: &Launch, origin: &dyn Origin) -> PkResult<Option<Total>> {
    let kernel = single_kernel(l, origin, false)?;
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
    hold::wait_run();
    let nodes = crate::lazy::closure::closure(&demand);
    if nodes.is_empty() {
        return Ok(Ran(nodes));
    }
    let _span = tracing::info_span!("flush", launches = nodes.len()).entered();
    let launches = nodes.iter().map(|n| n.count()).sum();
    let small = nodes.iter().all(|n| cost::small(&n.launch));
    let t0 = (small || crate::trace::on()).then(Instant::now);
    let planned = plan(&nodes, &demand)?;
    if let (Some(t0), true) = (t0, crate::trace::on()) {
        let us = t0.elapsed().as_secs_f64() * 1e6;
        trace_flush(&demand, &nodes, &planned, us);
    }
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
    let ns = t0.filter(|_| small).map(|t| t.elapsed().as_nanos() as u64);
    cost::flushed(launches, ns);
    memo::flushed(&nodes, planned);
    Ok(Ran(nodes))
}

/// Ctrl-C while a region's kernel was built: nothing of it ran, and it is
/// still in the DAG (with what follows it).
fn still_pending() -> PkError {
    let left = graph::pending_count();
    PkError::Interrupted(format!(
        "interrupted while a kernel of the flush was compiled: {left} launch(es) did not run and are still pending"
    ))
}

/// Runs one region as planned: a kernel that loops over its repeats, one
/// fused kernel, or its launch's own. A region whose kernel did not build
/// runs its launches one by one (they report their own errors, if they have
/// any).
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
    let built = match r.strategy {
        Strategy::Repeat => {
            single_kernel(&nodes[0].launch, &*nodes[0].origin, true).map(|k| Some((k, None)))
        }
        Strategy::Fused => region_kernel(r, &nodes).map(|(k, label)| Some((k, Some(label)))),
        Strategy::Single => Ok(None),
    };
    let kernel = match built {
        Ok(kernel) => kernel,
        // Ctrl-C during its build: nothing ran, all of it stays pending.
        Err(PkError::Interrupted(_)) => return Err(still_pending()),
        Err(e) => {
            let strategy = r.strategy;
            tracing::warn!(error = %e, ?strategy, "a region's kernel did not build; running its launches one by one");
            None
        }
    };
    drop(graph::take(&now));
    // Not fused after all: the deferred ones run too.
    let undefer = || {
        if !kept.is_empty() {
            drop(graph::take(&r.deferred));
            for n in &nodes {
                n.deferred.store(false, Ordering::Release);
            }
        }
    };
    let ran = match kernel {
        Some((kernel, None)) => {
            undefer();
            run_repeat(&nodes, &kernel)
        }
        // A fused kernel that ran (or began to) is never rerun launch by
        // launch: its updates may have landed already.
        Some((kernel, Some(label))) => {
            let ran = run_fused(&nodes, &kernel, &label);
            for n in &kept {
                n.deferred.store(true, Ordering::Release);
            }
            ran
        }
        None => {
            undefer();
            return run_singles(&nodes);
        }
    };
    ran.map_err(|e| failure::fail(&nodes, e))
}

/// Runs a region's launches one by one, each as often as it was folded.
fn run_singles(nodes: &[Arc<Node>]) -> PkResult<()> {
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

/// Runs a repeat kernel: the first launch's range, once per repeat.
fn run_repeat(nodes: &[Arc<Node>], kernel: &Kernel) -> PkResult<()> {
    let count: usize = nodes.iter().map(|n| n.count()).sum();
    let l = &nodes[0].launch;
    let (lo, hi) = ([l.lo[0], 0], [l.hi[0], count as i64]);
    let who = Who::Workunit(&l.workunit().name);
    run(kernel, &[&l.vals], &lo, &hi, who, &mut [None])?;
    match crate::config::get().failpoint.as_deref() {
        Some("fused_run") => Err(PkError::Runtime(format!(
            "{} x{count} failed after it ran (failpoint)",
            l.label
        ))),
        _ => Ok(()),
    }
}

/// A region's fused kernel and label: the one its cached plan keeps, else
/// laid out, found by its structure or built (and then kept).
fn region_kernel(r: &Region, nodes: &[Arc<Node>]) -> PkResult<(Arc<Kernel>, String)> {
    let region: Vec<&Launch> = nodes.iter().map(|n| &n.launch).collect();
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
    let lay = layout::layout(&region, &accesses, &r.registers, cache);
    let label = layout::region_label(&region);
    let kernel = fused_kernel(nodes, &region, &lay, &label)?;
    if let Some(m) = &r.memo {
        let _ = m.set(Fused {
            labels: labels().collect(),
            label: label.clone(),
            kernel: kernel.clone(),
        });
    }
    Ok((kernel, label))
}

fn run_fused(nodes: &[Arc<Node>], kernel: &Kernel, label: &str) -> PkResult<()> {
    let launches: Vec<&Launch> = nodes.iter().map(|n| &n.launch).collect();
    let totals = run_fused_kernel(kernel, &launches, label)?;
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

/// The trace's `flush` event: what was demanded, the launches it ran (with
/// folded repeats), the regions with what they kept in registers and left
/// pending, the launches dropped as overwritten, planning time.
fn trace_flush(demand: &Demand<'_>, nodes: &[Arc<Node>], planned: &Planned, plan_us: f64) {
    let demand = match demand {
        Demand::All => serde_json::json!({"kind": "all"}),
        Demand::Fence => serde_json::json!({"kind": "fence"}),
        Demand::Allocs(a) => serde_json::json!({"kind": "buffers", "buffers": a}),
        Demand::Result(seq) => serde_json::json!({"kind": "result", "seq": seq}),
    };
    let launches: Vec<_> = nodes
        .iter()
        .map(|n| serde_json::json!([n.seq, n.count()]))
        .collect();
    let regions: Vec<_> = planned
        .regions
        .iter()
        .map(|r| serde_json::json!({"seqs": r.seqs, "dead_temporaries": r.registers, "deferred": r.deferred}))
        .collect();
    let overwritten: Vec<u64> = planned.overwritten.iter().map(|n| n.seq).collect();
    crate::trace::event(
        "flush",
        serde_json::json!({"demand": demand, "site": crate::trace::take_site(), "launches": launches, "regions": regions, "overwritten": overwritten, "replayed": planned.replayed, "plan_us": plan_us.round()}),
    );
}
