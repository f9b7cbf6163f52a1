//! What a flush runs: the closure of what was demanded, and for a result,
//! the pending reductions that can join it in one multi-value reduction at no
//! cost of their own (see `take_along`).
use super::graph::{Demand, Graph, Node, GRAPH};
use crate::types::Pattern;
use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How far apart in program order (launches recorded) a reduction taken
/// along may be from the demanded one.
const NEAR: u64 = 256;

/// Pending reductions that a result's flush takes along: over the same
/// range and space as the demanded one, whose kernels built before, and
/// needing nothing pending beyond what the flush runs anyway. Each holds a result, so it runs sooner or
/// later whatever happens; run now, it joins the demanded one in one
/// multi-value reduction (one pass over the data instead of one each) and
/// pulls in no work of its own.
fn take_along(g: &Graph, seq: u64, seen: &mut BTreeSet<NodeIndex>) {
    let Some(&d) = g.by_seq.get(&seq) else { return };
    let demanded = &g.dag[d].launch;
    let reduction = |p: Pattern| matches!(p, Pattern::Reduce | Pattern::Reducer(_));
    if !reduction(demanded.key.pattern) {
        return;
    }
    // Near it in program order only: a read per iteration of a program with
    // thousands of launches pending must not scan them all each time.
    let near = seq.saturating_sub(NEAR)..=seq.saturating_add(NEAR);
    let joins: Vec<NodeIndex> = g
        .by_seq
        .range(near)
        .map(|(_, &n)| n)
        .filter(|n| !seen.contains(n))
        .filter(|&n| {
            let node = &g.dag[n];
            let l = &node.launch;
            // Built before: a sibling's compile error is reported when its
            // own result is read, not at this one's.
            node.result.is_some()
                && reduction(l.key.pattern)
                && node.built()
                && !node.deferred.load(Ordering::Acquire)
                && l.key.space == demanded.key.space
                && l.lo == demanded.lo
                && l.hi == demanded.hi
                && g.dag
                    .neighbors_directed(n, Direction::Incoming)
                    .all(|m| seen.contains(&m))
        })
        .collect();
    seen.extend(joins);
}

/// The pending launches `demand` depends on, themselves included, in program order.
pub fn closure(demand: &Demand<'_>) -> Vec<Arc<Node>> {
    let g = GRAPH.lock();
    if g.by_seq.is_empty() {
        return Vec::new();
    }
    let mut stack: Vec<NodeIndex> = match demand {
        Demand::All => g.by_seq.values().copied().collect(),
        Demand::Fence => g
            .by_seq
            .values()
            .copied()
            .filter(|&n| !g.dag[n].deferred.load(Ordering::Acquire))
            .collect(),
        Demand::Allocs(allocs) => allocs
            .iter()
            .flat_map(|a| g.by_alloc.get(a).into_iter().flat_map(|f| f.launches()))
            .collect(),
        Demand::Result(seq) => g.by_seq.get(seq).copied().into_iter().collect(),
    };
    let mut seen = BTreeSet::new();
    while let Some(n) = stack.pop() {
        if seen.insert(n) {
            stack.extend(g.dag.neighbors_directed(n, Direction::Incoming));
        }
    }
    if let Demand::Result(seq) = demand {
        take_along(&g, *seq, &mut seen);
    }
    let mut v: Vec<Arc<Node>> = seen.into_iter().map(|n| g.dag[n].clone()).collect();
    v.sort_by_key(|n| n.seq);
    v
}
