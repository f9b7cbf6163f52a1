//! The flush's planning stage: overwritten launches dropped -> candidates ->
//! partition -> verify -> dead temporaries -> deferral -> explain.
use crate::errors::{PkError, PkResult};
use crate::fusion::defer::{self, Deferred};
use crate::fusion::{cand, dead, explain, overwritten, plan, rules, verify};
use crate::lazy::deferral;
use crate::lazy::graph::{self, Demand, Node};
use crate::lazy::unobserved;
use crate::types::Pattern;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Lazy mode fuses regions unless `PK_FUSE_NOFUSE=1` (or a test switched it off).
static NO_FUSE: std::sync::OnceLock<std::sync::atomic::AtomicBool> = std::sync::OnceLock::new();

pub(super) fn no_fuse() -> &'static std::sync::atomic::AtomicBool {
    NO_FUSE.get_or_init(|| crate::config::get().no_fuse.into())
}

/// One region of a flush, in program order.
pub struct Region {
    pub seqs: Vec<u64>,
    /// Allocations its fused kernel keeps in registers: dead temporaries and
    /// the outputs of its deferred launches.
    pub registers: BTreeSet<usize>,
    /// Launches it computes but leaves pending (a subset of `seqs`).
    pub deferred: Vec<u64>,
}

/// What a flush runs: its regions, and the launches it dropped unrun.
pub struct Planned {
    pub regions: Vec<Region>,
    pub overwritten: Vec<Arc<Node>>,
}

/// Partitions a flush into regions (one per launch when fusion is off).
pub fn plan(nodes: &[Arc<Node>], demand: &Demand<'_>) -> PkResult<Planned> {
    if no_fuse().load(Ordering::Relaxed) {
        let regions = nodes.iter().map(|n| single(n.seq)).collect();
        return Ok(Planned {
            regions,
            overwritten: Vec::new(),
        });
    }
    let _span = tracing::info_span!("plan", launches = nodes.len()).entered();
    let cfg = crate::config::get();
    let mut cands: Vec<cand::Cand> = nodes
        .iter()
        .map(|n| cand::of_launch(&n.launch, &n.access_map))
        .collect();
    // Launches whose every output a later one writes again, unread: they
    // leave the DAG now, before anything counts their uses.
    let gone = if cfg.is_disabled(overwritten::PASS) {
        BTreeSet::new()
    } else {
        overwritten::overwritten(&cands, &|k| may_drop(&nodes[k]))
    };
    let (nodes, overwritten) = if gone.is_empty() {
        (nodes.to_vec(), Vec::new())
    } else {
        let seqs: Vec<u64> = gone.iter().map(|&k| nodes[k].seq).collect();
        let taken = unobserved::take_overwritten(&seqs);
        for n in taken.iter().filter(|n| n.deferred.load(Ordering::Acquire)) {
            deferral::paid(&n.launch.key);
        }
        // Those launches, and the ones that only fed them, are gone.
        let gone: BTreeSet<u64> = taken.iter().map(|n| n.seq).collect();
        let mut k = 0;
        cands.retain(|_| {
            k += 1;
            !gone.contains(&nodes[k - 1].seq)
        });
        let kept = nodes.iter().filter(|n| !gone.contains(&n.seq));
        (kept.cloned().collect(), taken)
    };
    for k in 1..nodes.len() {
        cands[k].repeats_prev = nodes[k].launch.repeats(&nodes[k - 1].launch);
    }
    for (c, n) in cands.iter_mut().zip(&nodes) {
        c.folded = n.count() > 1;
    }
    let edges = graph::edges(&nodes);
    let plan = plan::partition(rules::active()?, &cands);
    check(&plan, &edges)?;
    let dead = dead_temporaries(&cands, &plan);
    let deferred = deferred(&cands, &plan, &dead, &nodes, demand);
    let regions = plan
        .regions
        .iter()
        .zip(&dead)
        .zip(&deferred)
        .map(|((r, d), f)| Region {
            seqs: r.iter().map(|&k| nodes[k].seq).collect(),
            registers: d.iter().chain(&f.registers).copied().collect(),
            deferred: f.launches.iter().map(|&k| nodes[k].seq).collect(),
        })
        .collect();
    let info = |k: usize| (nodes[k].launch.label.clone(), nodes[k].origin.clone());
    let dropped: Vec<_> = overwritten
        .iter()
        .map(|n| (n.launch.label.clone(), n.origin.clone()))
        .collect();
    explain::record(&cands, plan, &dead, &deferred, &dropped, &edges, &info);
    Ok(Planned {
        regions,
        overwritten,
    })
}

fn single(seq: u64) -> Region {
    Region {
        seqs: vec![seq],
        registers: BTreeSet::new(),
        deferred: Vec::new(),
    }
}

/// A pending launch nothing observes but its outputs: a for with no result,
/// no effects, whose code built before (its errors were reported).
fn may_drop(n: &Node) -> bool {
    n.launch.key.pattern == Pattern::For
        && n.result.is_none()
        && !n.effects
        && crate::exec::kernel::BUILT.contains(&n.launch.key)
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

/// What the deferral pass learns of the flush.
struct Facts<'a> {
    nodes: &'a [Arc<Node>],
    demand: &'a Demand<'a>,
}

impl defer::Facts for Facts<'_> {
    fn may_defer(&self, k: usize) -> bool {
        let n = &self.nodes[k];
        let plain = n.launch.key.pattern == Pattern::For && n.result.is_none() && !n.effects;
        // Folded repeats and team launches always run as they are.
        plain && n.count() == 1 && n.launch.key.rank != 0
    }

    fn worth(&self, k: usize) -> Result<(), String> {
        deferral::worth(&self.nodes[k].launch.key)
    }

    fn demanded(&self, alloc: usize) -> bool {
        match self.demand {
            Demand::All => true,
            Demand::Allocs(a) => a.contains(&alloc),
            Demand::Result(_) | Demand::Fence => false,
        }
    }
}

/// The deferral pass per region (nothing when switched off, or when the
/// flush must run everything).
fn deferred(
    cands: &[cand::Cand],
    p: &plan::Plan,
    dead: &[Vec<usize>],
    nodes: &[Arc<Node>],
    demand: &Demand<'_>,
) -> Vec<Deferred> {
    if matches!(demand, Demand::All) || crate::config::get().is_disabled(defer::PASS) {
        return vec![Deferred::default(); p.regions.len()];
    }
    defer::defer(cands, &p.regions, dead, &Facts { nodes, demand })
}
