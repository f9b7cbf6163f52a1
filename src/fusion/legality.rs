//! Legality predicates between an earlier launch `a` and a later launch `b`.
//! Each returns Ok(()) or the reason it fails, naming the buffer and workunit
//! involved. `invariants.rs` says which ones the engine always enforces.
use super::cand::Cand;
use crate::types::{Pattern, Space};

/// A buffer one launch writes and the other touches (overlapping bytes).
pub struct Conflict {
    pub first_arg: usize,
    pub second_arg: usize,
    pub buffer: usize,
}

/// The conflicts between `a` and `b`, into `out` (cleared first).
pub fn conflicts(a: &Cand<'_>, b: &Cand<'_>, out: &mut Vec<Conflict>) {
    out.clear();
    for (i, u) in a.views.iter().enumerate() {
        for (j, w) in b.views.iter().enumerate() {
            let overlap = u.alloc == w.alloc && u.range.0 < w.range.1 && w.range.0 < u.range.1;
            if overlap && (u.access.write || w.access.write) {
                out.push(Conflict {
                    first_arg: i,
                    second_arg: j,
                    buffer: u.alloc,
                });
            }
        }
    }
}

pub type Check = fn(&Cand<'_>, &Cand<'_>, &[Conflict]) -> Result<(), String>;

/// A team kernel has no work index to merge on.
pub fn no_team(a: &Cand<'_>, b: &Cand<'_>, _: &[Conflict]) -> Result<(), String> {
    if a.team || b.team {
        return Err("TeamPolicy launches are never fused".into());
    }
    Ok(())
}

pub fn same_space(a: &Cand<'_>, b: &Cand<'_>, _: &[Conflict]) -> Result<(), String> {
    if a.space != b.space {
        return Err(format!(
            "execution spaces differ ({:?} vs {:?})",
            a.space, b.space
        ));
    }
    Ok(())
}

pub fn one_dimensional(a: &Cand<'_>, b: &Cand<'_>, _: &[Conflict]) -> Result<(), String> {
    if a.lo.len() != 1 || b.lo.len() != 1 {
        return Err("multi-dimensional policies are not fused".into());
    }
    Ok(())
}

pub fn same_range(a: &Cand<'_>, b: &Cand<'_>, _: &[Conflict]) -> Result<(), String> {
    if a.lo != b.lo || a.hi != b.hi {
        return Err(format!(
            "iteration spaces differ ({:?}..{:?} vs {:?}..{:?})",
            a.lo, a.hi, b.lo, b.hi
        ));
    }
    Ok(())
}

pub fn no_scan(a: &Cand<'_>, b: &Cand<'_>, _: &[Conflict]) -> Result<(), String> {
    if a.pattern == Pattern::Scan || b.pattern == Pattern::Scan {
        return Err("scans are never fused".into());
    }
    Ok(())
}

/// A policy predicate for rules that must stay off the GPU.
pub fn host_space(a: &Cand<'_>, b: &Cand<'_>, _: &[Conflict]) -> Result<(), String> {
    if a.space == Space::Cuda || b.space == Space::Cuda {
        return Err("this rule fuses on host spaces only".into());
    }
    Ok(())
}

/// Every buffer one launch writes and the other touches is accessed by both
/// only as `v[i]` at the work index, through views of identical geometry:
/// then work item i of the fused kernel sees exactly what it saw unfused.
pub fn work_index_access(a: &Cand<'_>, b: &Cand<'_>, cs: &[Conflict]) -> Result<(), String> {
    for c in cs {
        let (u, w) = (&a.views[c.first_arg], &b.views[c.second_arg]);
        for (v, who) in [(u, a), (w, b)] {
            if !v.access.at_work_index {
                let quote = v.access.off_index.map(|sp| {
                    let loc = who.src.locate(sp);
                    let text = who
                        .src
                        .text
                        .get(sp.start as usize..sp.end as usize)
                        .unwrap_or("")
                        .lines()
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    format!(" (`{text}` at {}:{})", loc.filename, loc.line)
                });
                return Err(format!(
                    "'{}' touches shared buffer #{} ('{}') other than as {}[i] at the work index{}",
                    who.label,
                    c.buffer,
                    v.name,
                    v.name,
                    quote.unwrap_or_default()
                ));
            }
        }
        if u.geometry != w.geometry {
            return Err(format!(
                "shared buffer #{} is seen through views of different offset, extent or stride",
                c.buffer
            ));
        }
    }
    Ok(())
}
