//! Settling a flush's launches (those the overwritten pass left) into
//! regions: candidates -> partition -> verify -> dead temporaries ->
//! deferral -> the report's summary, all in positions.
use crate::errors::{PkError, PkResult};
use crate::exec::args::ArgVal;
use crate::fusion::defer::{self, Deferred};
use crate::fusion::{cand, dead, explain, plan, rules, verify};
use crate::lazy::deferral::{self, Verdict};
use crate::lazy::graph::{self, Demand, Node};
use crate::memory::alloc::Alloc;
use crate::types::Pattern;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Whether each launch repeats the one before it.
pub(super) fn repeats(nodes: &[Arc<Node>]) -> Vec<bool> {
    (0..nodes.len())
        .map(|k| k > 0 && nodes[k].launch.repeats(&nodes[k - 1].launch))
        .collect()
}

/// The cost model's verdict on deferring each launch (`bypass`: whether
/// small host launches run at once, read once per plan).
pub(super) fn verdicts(nodes: &[Arc<Node>], bypass: bool) -> Vec<Verdict> {
    nodes.iter().map(|n| verdict(n, bypass)).collect()
}

/// The cost model's verdict on deferring `n`. While small host launches run
/// at once (cost.rs, memo/slots.rs), a small `for` is never deferred: left pending, it
/// would take every later launch off that path (each would then flush
/// first), which costs more than its write; and a flush then is a trial,
/// which should see the program's launches as they are (the memo learns
/// from it).
fn verdict(n: &Node, bypass: bool) -> Verdict {
    if bypassed(n, bypass) {
        return Verdict::Bypassed;
    }
    deferral::verdict(&n.launch.key)
}

fn bypassed(n: &Node, bypass: bool) -> bool {
    bypass && n.launch.key.pattern == Pattern::For && super::cost::small(&n.launch)
}

/// Why a small host launch is not deferred (`verdict`).
const BYPASSED: &str =
    "not deferred: small host launches run at once here (recording them does not pay), \
     and one left pending would take the launches after it off that path";

/// A flush's launches settled into regions, in positions.
pub(super) struct Settled {
    pub(super) repeats: Vec<bool>,
    pub(super) verdicts: Vec<Verdict>,
    pub(super) asked: Vec<usize>,
    pub(super) regions: Vec<Vec<usize>>,
    /// Per region, the allocations its kernel keeps in registers.
    pub(super) registers: Vec<BTreeSet<usize>>,
    pub(super) deferred: Vec<Vec<usize>>,
    pub(super) summary: Arc<explain::Summary>,
}

/// candidates -> partition -> verify -> dead temporaries -> deferral ->
/// the report's summary. `pure`: the cost model is only looked at, not
/// asked (a replay's check asks nothing twice).
pub(super) fn settle(
    mut cands: Vec<cand::Cand<'_>>,
    nodes: &[Arc<Node>],
    demand: &Demand<'_>,
    pure: bool,
    bypass: bool,
) -> PkResult<Settled> {
    let repeats = repeats(nodes);
    let verdicts = verdicts(nodes, bypass);
    for (k, c) in cands.iter_mut().enumerate() {
        c.repeats_prev = repeats[k];
        c.folded = nodes[k].count() > 1;
    }
    let edges = graph::edges(nodes);
    let plan = plan::partition(rules::active()?, &cands);
    check(&plan, &edges)?;
    let dead = dead_temporaries(&cands, &plan, nodes);
    let facts = Facts {
        nodes,
        demand,
        pure,
        bypass,
        asked: RefCell::new(Vec::new()),
    };
    let deferred = deferred(&cands, &plan, &dead, &facts);
    let regions = plan.regions.clone();
    let registers = dead
        .iter()
        .zip(&deferred)
        .map(|(d, f)| d.iter().chain(&f.registers).copied().collect())
        .collect();
    let deferred_at = deferred.iter().map(|f| f.launches.clone()).collect();
    let summary = explain::summarize(&cands, plan, &dead, &deferred, &edges);
    Ok(Settled {
        repeats,
        verdicts,
        asked: facts.asked.into_inner(),
        regions,
        registers,
        deferred: deferred_at,
        summary,
    })
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
fn dead_temporaries(cands: &[cand::Cand], p: &plan::Plan, nodes: &[Arc<Node>]) -> Vec<Vec<usize>> {
    if crate::config::get().is_disabled(dead::PASS) {
        return vec![Vec::new(); p.regions.len()];
    }
    // The flush's allocations by id, found once, and only if some buffer gets this far.
    let allocs = std::cell::OnceCell::new();
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
                let allocs = allocs.get_or_init(|| allocs_of(nodes));
                let uses = allocs
                    .get(&alloc)
                    .map_or(0, |a| a.uses.load(Ordering::Acquire));
                uses > inside(alloc)
            };
            dead::dead_temporaries(&rc, &elsewhere)
                .into_iter()
                .collect()
        })
        .collect()
}

/// The allocations of a flush's view arguments, by id.
fn allocs_of(nodes: &[Arc<Node>]) -> HashMap<usize, &Alloc> {
    let mut out = HashMap::new();
    for n in nodes {
        for v in &n.launch.vals {
            if let ArgVal::View(vv) = v {
                out.entry(vv.alloc.id()).or_insert(&*vv.alloc);
            }
        }
    }
    out
}

/// What the deferral pass learns of the flush.
struct Facts<'a> {
    nodes: &'a [Arc<Node>],
    demand: &'a Demand<'a>,
    /// Look at the cost model's verdicts instead of asking it.
    pure: bool,
    /// Small host launches run at once (`verdict`).
    bypass: bool,
    /// The launches whose deferral the cost model was asked about.
    asked: RefCell<Vec<usize>>,
}

impl defer::Facts for Facts<'_> {
    fn may_defer(&self, k: usize) -> bool {
        let n = &self.nodes[k];
        let plain = n.launch.key.pattern == Pattern::For && n.result.is_none() && !n.effects;
        // Folded repeats and team launches always run as they are.
        plain && n.count() == 1 && n.launch.key.rank != 0
    }

    fn worth(&self, k: usize) -> Result<(), String> {
        self.asked.borrow_mut().push(k);
        let node = &self.nodes[k];
        if bypassed(node, self.bypass) {
            return Err(BYPASSED.to_string());
        }
        let key = &node.launch.key;
        if !self.pure {
            return deferral::worth(key);
        }
        match deferral::verdict(key) {
            Verdict::Refuse => Err(deferral::REFUSED.to_string()),
            Verdict::Defer | Verdict::Retry | Verdict::Bypassed => Ok(()),
        }
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
    facts: &Facts<'_>,
) -> Vec<Deferred> {
    if matches!(facts.demand, Demand::All) || crate::config::get().is_disabled(defer::PASS) {
        return vec![Deferred::default(); p.regions.len()];
    }
    defer::defer(cands, &p.regions, dead, facts)
}
