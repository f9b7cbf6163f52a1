//! Pending launches nothing can observe: dropped unrun when the last View
//! of what they write dies, or when a flush finds their output rewritten,
//! and, in turn, the launches that only fed them.
use super::graph::Node;
use super::graph::{remove, Graph, GRAPH};
use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Takes launches a flush found overwritten out of the DAG unrun, and with
/// them, in turn, the launches that only fed them (see `alloc_died`).
pub fn take_overwritten(seqs: &[u64]) -> Vec<Arc<Node>> {
    let mut g = GRAPH.lock();
    let mut out = Vec::new();
    let mut work: Vec<NodeIndex> = Vec::new();
    for s in seqs {
        let Some(&n) = g.by_seq.get(s) else { continue };
        work.extend(g.dag.neighbors_directed(n, Direction::Incoming));
        take(&mut g, n, &mut out);
    }
    sweep(&mut g, work, &mut out);
    out.sort_by_key(|n| n.seq);
    out
}

/// From `work` on, takes out launches nothing can observe, and in turn
/// the launches that only fed them.
fn sweep(g: &mut Graph, mut work: Vec<NodeIndex>, out: &mut Vec<Arc<Node>>) {
    while let Some(n) = work.pop() {
        if unobservable(g, n) {
            work.extend(g.dag.neighbors_directed(n, Direction::Incoming));
            take(g, n, out);
        }
    }
}

/// Takes a launch out unrun: if it was deferred, that deferral paid.
fn take(g: &mut Graph, n: NodeIndex, out: &mut Vec<Arc<Node>>) {
    if let Some(node) = remove(g, n) {
        if node.deferred.load(Ordering::Acquire) {
            super::deferral::paid(&node.launch.key);
        }
        out.push(node);
    }
}

/// The last Python view of an allocation died. Never blocks: a View can be
/// dropped while this thread (or another) holds the graph.
///
/// Pending launches whose every write lands in dead allocations, that no
/// later launch depends on and that have no other effects (no result, no
/// printf) can never be observed: they are dropped now, and so, in turn,
/// are launches that only fed them. Only kernels that built before are
/// dropped, so a kernel's errors are always reported once.
pub fn alloc_died(alloc: usize) {
    // Nothing pending (eager mode, or every launch run): no lock to take.
    if super::graph::pending_count() == 0 {
        return;
    }
    let mut dropped = Vec::new();
    if let Some(mut g) = GRAPH.try_lock() {
        if !g.by_alloc.contains_key(&alloc) {
            return;
        }
        g.dead.insert(alloc);
        let work = g.by_alloc[&alloc].launches().collect();
        sweep(&mut g, work, &mut dropped);
    }
    if !dropped.is_empty() && crate::trace::on() {
        trace_dropped(&dropped);
    }
    // Outside the lock: dropping a launch releases Python objects.
    drop(dropped);
}

/// The trace's `dropped` event: launches that never ran and the buffers they
/// would have written. What such a buffer holds at the end was never
/// observable, so a replay (which runs them) does not compare it.
fn trace_dropped(dropped: &[Arc<Node>]) {
    let seqs: Vec<u64> = dropped.iter().map(|n| n.seq).collect();
    let mut buffers: Vec<usize> = dropped
        .iter()
        .flat_map(|n| n.accesses.iter().filter(|a| a.write).map(|a| a.alloc))
        .collect();
    buffers.sort_unstable();
    buffers.dedup();
    crate::trace::event(
        "dropped",
        serde_json::json!({"seqs": seqs, "buffers": buffers}),
    );
}

/// Nothing could ever see what pending launch `n` does (see `alloc_died`).
fn unobservable(g: &Graph, n: NodeIndex) -> bool {
    let Some(node) = g.dag.node_weight(n) else {
        return false;
    };
    // A kernel never built yet still runs once: its errors must be reported.
    node.result.is_none()
        && node.built()
        && g.dag
            .neighbors_directed(n, Direction::Outgoing)
            .next()
            .is_none()
        && node
            .accesses
            .iter()
            .all(|a| !a.write || g.dead.contains(&a.alloc))
        && !node.effects
}
