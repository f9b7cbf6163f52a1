//! Legality predicates between an earlier and a later launch. Each returns
//! Ok(()) or the reason it fails, naming the buffer and workunit involved.
use super::plan::Cand;
use super::rules::Pred;
use crate::codegen::{Pattern, Space};

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

pub fn check(pred: Pred, a: &Cand<'_>, b: &Cand<'_>, conflicts: &[Conflict]) -> Result<(), String> {
    match pred {
        Pred::SameSpace if a.space != b.space => Err(format!(
            "execution spaces differ ({:?} vs {:?})",
            a.space, b.space
        )),
        Pred::HostSpace if a.space == Space::Cuda || b.space == Space::Cuda => {
            Err("fused kernels run on host spaces only for now".into())
        }
        Pred::OneDimensional if a.lo.len() != 1 || b.lo.len() != 1 => {
            Err("multi-dimensional policies are not fused".into())
        }
        Pred::SameRange if a.lo != b.lo || a.hi != b.hi => Err(format!(
            "iteration spaces differ ({:?}..{:?} vs {:?}..{:?})",
            a.lo, a.hi, b.lo, b.hi
        )),
        Pred::NoScan if a.pattern == Pattern::Scan || b.pattern == Pattern::Scan => {
            Err("scans are never fused".into())
        }
        Pred::WorkIndexAccess => {
            for c in conflicts {
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
                    return Err(format!("shared buffer #{} is seen through views of different offset, extent or stride", c.buffer));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
