//! The trace's record of a flush (pipeline::flush writes one when tracing).
use super::planning::Planned;
use crate::lazy::graph::{Demand, Node};
use std::sync::Arc;

/// The trace's `flush` event: what was demanded, the launches it ran (with
/// folded repeats), the regions with what they kept in registers and left
/// pending, the launches dropped as overwritten, planning time.
pub(super) fn trace_flush(
    demand: &Demand<'_>,
    nodes: &[Arc<Node>],
    planned: &Planned,
    plan_us: f64,
) {
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
