//! Deferral (a pass of its own, switched off with `PK_FUSION_DISABLE=defer`):
//! a flush computes only what was demanded. A launch in a fused region whose
//! outputs are still referenced but not demanded, and whose readers all sit
//! in that region at the work index, need not store them now: the region
//! computes its values in registers, and the launch itself stays pending. If
//! its outputs die unread it never runs; if they are read later it runs then
//! (its inputs are kept as they are by the DAG's write-after-read edges).
use super::cand::{users, Cand, Users};
use std::collections::{BTreeMap, BTreeSet};

pub const PASS: &str = "defer";

/// Most launches one region leaves pending: if their outputs are read later
/// they run then (as one region again, usually), and a long chain costs more
/// to plan and to hold than it saves.
pub const MAX_CHAIN: usize = 16;

/// Regions longer than this defer nothing.
pub const MAX_REGION: usize = 64;

/// What the pass asks of the flush about launch `k` (a position in it).
pub trait Facts {
    /// A plain for that may stay pending: no result, no effects (printf),
    /// a single launch (not folded repeats).
    fn may_defer(&self, k: usize) -> bool;
    /// Whether the cost model lets it stay pending (else why not).
    fn worth(&self, k: usize) -> Result<(), String>;
    /// The flush must make this allocation available (host access).
    fn demanded(&self, alloc: usize) -> bool;
}

/// The deferred launches of one region and what its kernel keeps in registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deferred {
    /// Positions in the flush, program order.
    pub launches: Vec<usize>,
    /// Their outputs: locals of the fused kernel, not stored.
    pub registers: BTreeSet<usize>,
    /// Why (one line per deferred launch, or why the cost model refused):
    /// kept as facts, written out only when a report is read.
    pub why: Vec<(usize, Why)>,
}

/// What the report says of one launch the pass looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// Left pending; its outputs (allocations, or report numbers) in registers.
    Deferred(Vec<usize>),
    /// The cost model's reason not to.
    Refused(String),
    /// Left to run: the region would have left this many pending.
    TooLong(usize),
}

impl Why {
    /// The report's line; `number` names an allocation as the report does.
    pub fn text(&self, number: &dyn Fn(usize) -> usize) -> String {
        match self {
            Why::Deferred(outputs) => {
                let names: Vec<String> = outputs.iter().map(|&a| format!("#{}", number(a))).collect();
                let which = if names.len() > 1 { "one of them" } else { "it" };
                format!(
                    "deferred: writes {} (not demanded); this region takes its values in registers, and it runs only if {which} is read later",
                    names.join(", ")
                )
            }
            Why::Refused(why) => why.clone(),
            Why::TooLong(n) => format!(
                "not deferred: {n} launches would stay pending, more than the {MAX_CHAIN} worth recomputing if read later"
            ),
        }
    }

    /// The same facts with allocations renamed (`number`).
    pub fn renamed(&self, number: &dyn Fn(usize) -> usize) -> Why {
        match self {
            Why::Deferred(o) => Why::Deferred(o.iter().map(|&a| number(a)).collect()),
            other => other.clone(),
        }
    }
}

/// Deferral per region. `dead`: the region's dead temporaries (kept in
/// registers already: a deferred launch may not read one unless its writer
/// is deferred too, since the memory behind it is never written).
pub fn defer(
    cands: &[Cand<'_>],
    regions: &[Vec<usize>],
    dead: &[Vec<usize>],
    facts: &dyn Facts,
) -> Vec<Deferred> {
    let eligible = |r: &Vec<usize>| (2..=MAX_REGION).contains(&r.len());
    if !regions.iter().any(eligible) {
        return vec![Deferred::default(); regions.len()];
    }
    // Who touches each allocation anywhere in the flush, in program order.
    let users = users(cands);
    regions
        .iter()
        .zip(dead)
        .map(|(region, dead)| {
            // Deferral is for the short chains a demanded value ends; a region
            // of hundreds of launches is not one, and checking it would cost.
            if !eligible(region) {
                return Deferred::default();
            }
            in_region(cands, region, dead, &users, facts)
        })
        .collect()
}

fn in_region(
    cands: &[Cand<'_>],
    region: &[usize],
    dead: &[usize],
    users: &Users<'_, '_>,
    facts: &dyn Facts,
) -> Deferred {
    let inside: BTreeSet<usize> = region.iter().copied().collect();
    // Candidate -> the writers (in the region) of dead temporaries it reads.
    let mut needs: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut refused = Vec::new();
    for &k in region {
        if !facts.may_defer(k) {
            continue;
        }
        let Some(needed) = local_check(cands, k, &inside, dead, users, facts) else {
            continue;
        };
        match facts.worth(k) {
            Ok(()) => {
                needs.insert(k, needed);
            }
            Err(why) => refused.push((k, Why::Refused(why))),
        }
    }
    // A launch reading a dead temporary stays pending only with its writer.
    loop {
        let drop: Vec<usize> = needs
            .iter()
            .filter(|(_, need)| need.iter().any(|w| !needs.contains_key(w)))
            .map(|(&k, _)| k)
            .collect();
        if drop.is_empty() {
            break;
        }
        for k in drop {
            needs.remove(&k);
        }
    }
    // Only a launch whose output someone still holds is worth leaving
    // pending, with the writers it needs; a launch whose outputs all died
    // already would wait for nothing (no View is left to die and drop it).
    let mut keep: BTreeSet<usize> = BTreeSet::new();
    let mut work: Vec<usize> = needs
        .keys()
        .copied()
        .filter(|&k| {
            cands[k]
                .views
                .iter()
                .any(|u| u.access.write && u.life.referenced)
        })
        .collect();
    while let Some(k) = work.pop() {
        if keep.insert(k) {
            work.extend(needs[&k].iter().copied());
        }
    }
    needs.retain(|k, _| keep.contains(k));
    let mut out = Deferred {
        why: refused,
        ..Deferred::default()
    };
    if needs.is_empty() || needs.len() == region.len() {
        return out;
    }
    if needs.len() > MAX_CHAIN {
        let first = *needs.keys().next().expect("not empty");
        out.why.push((first, Why::TooLong(needs.len())));
        return out;
    }
    for &k in needs.keys() {
        let outputs: Vec<usize> = writes(&cands[k]).collect();
        out.why.push((k, Why::Deferred(outputs.clone())));
        out.registers.extend(outputs);
        out.launches.push(k);
    }
    out
}

/// The allocations a candidate writes.
fn writes<'c>(c: &'c Cand<'_>) -> impl Iterator<Item = usize> + 'c {
    let set: BTreeSet<usize> = c
        .views
        .iter()
        .filter(|u| u.access.write)
        .map(|u| u.alloc)
        .collect();
    set.into_iter()
}

/// Whether launch `k` alone could stay pending; if so, the writers of the
/// dead temporaries it reads (they must stay pending with it).
fn local_check(
    cands: &[Cand<'_>],
    k: usize,
    inside: &BTreeSet<usize>,
    dead: &[usize],
    users: &Users<'_, '_>,
    facts: &dyn Facts,
) -> Option<BTreeSet<usize>> {
    let c = &cands[k];
    let mut needed = BTreeSet::new();
    let mut wrote = false;
    for u in &c.views {
        if facts.demanded(u.alloc) || u.life.foreign {
            return None;
        }
        let all = &users[&u.alloc];
        if u.access.write {
            wrote = true;
            // Its region's first use, write-only, in every work item, at the
            // work index (uses in earlier regions run before it anyway).
            let a = u.access;
            let earlier_here = all.iter().any(|(j, _)| *j < k && inside.contains(j));
            if a.read || !a.always_written || !a.at_work_index || earlier_here {
                return None;
            }
            // Every other use: a read in this region at the same element.
            let later = all.iter().filter(|(j, _)| *j != k);
            let mut read_here = false;
            for (j, w) in later {
                if !inside.contains(j)
                    || w.access.write
                    || !w.access.at_work_index
                    || w.geometry != u.geometry
                {
                    return None;
                }
                read_here = true;
            }
            // Two arguments of `k` on one allocation: both writes, same geometry.
            if !read_here
                || c.views
                    .iter()
                    .any(|v| v.alloc == u.alloc && (v.access.read || v.geometry != u.geometry))
            {
                return None;
            }
        } else {
            // Nothing after it may change what it reads: it reads later.
            if all.iter().any(|(j, w)| *j > k && w.access.write) {
                return None;
            }
            if dead.contains(&u.alloc) {
                let writer = all.iter().find(|(_, w)| w.access.write)?.0;
                needed.insert(writer);
            }
        }
    }
    wrote.then_some(needed)
}
