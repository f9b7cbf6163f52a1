//! Dead temporaries (a pass of its own, switched off with
//! `PK_FUSION_DISABLE=dead_temporaries`): allocations a region may keep in
//! registers instead of memory. No Python view of them is left, nothing outside
//! the region touches them, every access is `v[i]` at the work index through
//! one geometry, and each work item writes it, unconditionally, before it
//! reads it (or the memory was never allocated, so its zeros are the local's).
use super::cand::Cand;
use std::collections::BTreeSet;

pub const PASS: &str = "dead_temporaries";

/// The dead temporaries of one region (its candidates in program order).
/// `touched_elsewhere(alloc)`: some pending launch outside the region uses it.
pub fn dead_temporaries(
    region: &[&Cand<'_>],
    touched_elsewhere: &dyn Fn(usize) -> bool,
) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    if region.len() < 2 {
        return out;
    }
    let mut seen = BTreeSet::new();
    for c in region {
        for u in &c.views {
            if !seen.insert(u.alloc)
                || u.life.referenced
                || u.life.foreign
                || touched_elsewhere(u.alloc)
            {
                continue;
            }
            let mut uses = region
                .iter()
                .flat_map(|c| c.views.iter().filter(|w| w.alloc == u.alloc));
            let first = uses.clone().next().expect("u is one of its uses").access;
            let uniform = uses.all(|w| w.access.at_work_index && w.geometry == u.geometry);
            // The first kernel only writes it, in every work item (a write
            // under a condition leaves the other elements' old values).
            let writes_first = first.write && !first.read && first.always_written;
            if uniform && (writes_first || !u.life.allocated) {
                out.insert(u.alloc);
            }
        }
    }
    out
}
