//! Overwritten launches (a pass of its own, switched off with
//! `PK_FUSION_DISABLE=overwritten`): a pending for whose every output is
//! written again, element for element, by a later launch of the same flush
//! before anything reads it can never be observed, so it never runs. The
//! common case: a launch deferred by the previous flush (see `defer.rs`)
//! whose output the program's next iteration computes again.
use super::cand::{users, Cand};
use std::collections::BTreeSet;

pub const PASS: &str = "overwritten";

/// The positions of launches nothing can observe. `may_drop(k)`: a plain
/// for with no result and no effects whose code built before (so its
/// errors, if any, were reported).
pub fn overwritten(cands: &[Cand<'_>], may_drop: &dyn Fn(usize) -> bool) -> BTreeSet<usize> {
    // Who touches each allocation, in program order (one pass: a flush may
    // hold thousands of launches).
    let users = users(cands);
    let mut out = BTreeSet::new();
    for (k, c) in cands.iter().enumerate() {
        let mut wrote = false;
        let covered = c.views.iter().filter(|u| u.access.write).all(|u| {
            wrote = true;
            // What `k` writes: `v[i]` over its range through this geometry.
            if !u.access.at_work_index {
                return false;
            }
            let all = &users[&u.alloc];
            let after = all.partition_point(|(j, _)| *j <= k);
            let Some(&(j, w)) = all.get(after) else {
                return false;
            };
            let d = &cands[j];
            let a = w.access;
            // The next use writes the same elements first, and every one of them.
            let rewrites = a.write && !a.read && a.always_written && a.at_work_index;
            let same = w.geometry == u.geometry
                && d.lo.len() == c.lo.len()
                && d.lo.iter().zip(c.lo).all(|(x, y)| x <= y)
                && d.hi.iter().zip(c.hi).all(|(x, y)| x >= y);
            // Two arguments of the later launch on this allocation: unknown order.
            let once = all.get(after + 1).is_none_or(|(m, _)| *m != j);
            rewrites && same && once
        });
        if wrote && covered && may_drop(k) {
            out.insert(k);
        }
    }
    out
}
