//! What a flush teaches the tape: its launches' facts, kept as a `Program`
//! with the fused kernel its region ran (see the tape's comment for which
//! flushes qualify).
use crate::exec::facts::{Life, ViewFact};
use crate::exec::kernel::{Kernel, KernelKey};
use crate::exec::launch::{Bounds, Origin};
use crate::lazy::graph::{self, Node};
use crate::pipeline::planning::Planned;
use crate::types::Pattern;
use std::sync::Arc;

/// Most launches a program has, and allocations it binds.
pub const MAX_STEPS: usize = 8;
pub const MAX_ALLOCS: usize = 16;

/// A view argument of a step: its facts, and its allocation's number in
/// the program (the allocation itself is the launch's).
pub(super) struct StepView {
    pub(super) num: usize,
    pub(super) fact: ViewFact,
}

/// One launch of a program (facts only: a program keeps no memory alive).
pub(super) struct Step {
    pub(super) key: KernelKey,
    pub(super) label: Arc<str>,
    pub(super) lo: Bounds,
    pub(super) hi: Bounds,
    /// Per argument: a view's facts, None for a number.
    pub(super) views: Vec<Option<StepView>>,
    /// What a spilled launch is recorded with.
    pub(super) origin: Arc<dyn Origin>,
}

/// A learned flush: its launches, and the fused kernel its region ran.
pub(super) struct Program {
    pub(super) steps: Vec<Step>,
    /// Per allocation number: its liveness facts when the flush was planned.
    /// Dead ones may be kept in registers, never written.
    pub(super) life: Vec<Life>,
    pub(super) kernel: Arc<Kernel>,
    pub(super) label: String,
}

/// A program in the making: its kernel is the region's, once it ran.
pub struct Lesson {
    steps: Vec<Step>,
    life: Vec<Life>,
    memo: crate::pipeline::plan_cache::Memo,
}

/// What a flush about to run would teach (see the module's comment): None
/// unless it is one plain fused region of every pending launch.
pub fn of(nodes: &[Arc<Node>], planned: &Planned) -> Option<Lesson> {
    let [region] = &planned.regions[..] else {
        return None;
    };
    let n = nodes.len();
    let plain_region = (2..=MAX_STEPS).contains(&n)
        && region.seqs.len() == n
        && region.deferred.is_empty()
        && planned.overwritten.is_empty()
        && n == graph::pending_count();
    let memo = region.memo.clone().filter(|_| plain_region)?;
    let plain = |k: usize, node: &Arc<Node>| {
        let l = &node.launch;
        node.count() == 1
            && !node.effects
            && !l.is_method
            // Small host launches (cost.rs' size): recording one costs
            // more than running it, so a learned pair beats recording a long
            // chain between rare reads; larger kernels gain more from the
            // longer fusion recording finds.
            && crate::pipeline::cost::small(l)
            && match l.key.pattern {
                Pattern::For => true,
                Pattern::Reduce | Pattern::Reducer(_) => k + 1 == n,
                _ => false,
            }
            && (k == 0 || !l.repeats(&nodes[k - 1].launch))
    };
    if !nodes.iter().enumerate().all(|(k, node)| plain(k, node)) {
        return None;
    }
    let mut ids: Vec<usize> = Vec::new();
    let mut life = Vec::new();
    let mut steps = Vec::with_capacity(n);
    for node in nodes {
        let l = &node.launch;
        let mut views: Vec<Option<StepView>> = l.vals.iter().map(|_| None).collect();
        for (fact, alloc) in l.view_facts() {
            if alloc.is_foreign() {
                return None;
            }
            let num = ids
                .iter()
                .position(|&b| b == fact.alloc)
                .unwrap_or_else(|| {
                    ids.push(fact.alloc);
                    life.push(Life::of(alloc));
                    ids.len() - 1
                });
            views[fact.arg] = Some(StepView { num, fact });
        }
        steps.push(Step {
            key: l.key.clone(),
            label: l.label.clone(),
            lo: l.lo.clone(),
            hi: l.hi.clone(),
            views,
            origin: node.origin.clone(),
        });
    }
    // An allocation the last launch takes is alive when it comes (the call
    // holds its view): one learned dead could never match.
    let last = steps.last()?;
    let dead_in_last = last.views.iter().flatten().any(|v| !life[v.num].referenced);
    (ids.len() <= MAX_ALLOCS && !dead_in_last).then_some(Lesson { steps, life, memo })
}

impl Lesson {
    /// The program, once the flush ran (if its region ran fused: the memo's
    /// kernel, when made for these labels).
    pub(super) fn program(self) -> Option<Program> {
        let labels = self.steps.iter().map(|s| s.label.clone());
        let fused = self.memo.get().filter(|f| f.fits(labels))?;
        Some(Program {
            steps: self.steps,
            life: self.life,
            kernel: fused.kernel.clone(),
            label: fused.label.clone(),
        })
    }
}
