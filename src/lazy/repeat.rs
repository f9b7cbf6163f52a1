//! Folding exact repeats of a launch into one pending node: when a run of
//! them may execute as one kernel whose work items loop.
use crate::analysis::access;
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use crate::types::Pattern;
use std::collections::BTreeMap;

/// Whether running `l` several times in a row may be one kernel whose work
/// items loop: a 1-D for that touches what it writes only at the work index.
/// Every view argument that shares bytes with one it writes (itself
/// included) must be read and written as `v[i]` only, through the same
/// geometry, as the fusion engine's `work_index_access` asks of a pair.
pub fn loopable(l: &Launch, map: &BTreeMap<String, access::Access>) -> bool {
    if l.key.pattern != Pattern::For || l.lo.len() != 1 || l.key.rank != 1 {
        return false;
    }
    let views: Vec<(&crate::exec::args::ViewVal, &access::Access)> = l
        .names
        .iter()
        .zip(&l.vals)
        .filter_map(|(name, v)| match (v, map.get(name)) {
            (ArgVal::View(x), Some(a)) => Some((x, a)),
            _ => None,
        })
        .collect();
    views.iter().filter(|(_, a)| a.write).all(|(u, ua)| {
        views.iter().all(|(w, wa)| {
            let shared =
                u.alloc.id() == w.alloc.id() && u.range.0 < w.range.1 && w.range.0 < u.range.1;
            !shared
                || (ua.at_work_index
                    && wa.at_work_index
                    && u.offset == w.offset
                    && u.raw.extent == w.raw.extent
                    && u.raw.stride == w.raw.stride)
        })
    })
}

/// Whether running `l` twice in a row leaves what running it once does: a
/// for without effects that reads nothing it writes (no accumulation, no
/// atomics, no in-place update, through any alias).
pub fn idempotent(l: &Launch, accesses: &[super::hazards::BufAccess], effects: bool) -> bool {
    l.key.pattern == Pattern::For
        && !effects
        && accesses.iter().filter(|a| a.write).all(|w| {
            !w.read
                && accesses
                    .iter()
                    .all(|r| !r.read || r.alloc != w.alloc || r.end <= w.start || w.end <= r.start)
        })
}
