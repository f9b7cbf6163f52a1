//! Whether launches are those a program learned (see the tape's comment).
use super::lesson::{Program, Step, MAX_ALLOCS};
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use smallvec::SmallVec;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Whether `l` is `step`, binding allocations met for the first time (one
/// number stands for one allocation, different numbers for different ones).
pub(super) fn matches(step: &Step, l: &Launch, ids: &mut SmallVec<[usize; MAX_ALLOCS]>) -> bool {
    let same = l.key.digest() == step.key.digest()
        && same_words(&l.lo, &step.lo)
        && same_words(&l.hi, &step.hi)
        && !l.is_method
        && l.vals.len() == step.views.len()
        && (Arc::ptr_eq(&l.label, &step.label) || l.label == step.label)
        && l.key == step.key;
    if !same {
        return false;
    }
    l.vals
        .iter()
        .zip(&step.views)
        .all(|(v, fact)| match (v, fact) {
            (ArgVal::View(v), Some(f)) => {
                let id = v.alloc.id();
                let bound = match ids.get(f.num) {
                    Some(&b) => b == id,
                    None if f.num == ids.len() && !ids.contains(&id) => {
                        ids.push(id);
                        true
                    }
                    None => false,
                };
                // (The key fixes the rank: the extents and strides past it are
                // not the kernel's.)
                let g = &f.fact.geometry;
                let r = usize::from(g.rank);
                bound
                    && !v.alloc.is_foreign()
                    && v.offset == g.offset
                    && v.range == f.fact.range
                    && same_words(&v.raw.extent[..r], &g.extent[..r])
                    && same_words(&v.raw.stride[..r], &g.stride[..r])
            }
            (ArgVal::View(_), None) | (_, Some(_)) => false,
            _ => true,
        })
}

/// Whether every allocation of the held launches and `last` is as alive as
/// when the program was learned.
pub(super) fn alive_as_learned(program: &Program, held: &[Launch], last: &Launch) -> bool {
    let launches = held.iter().chain(std::iter::once(last));
    launches.zip(&program.steps).all(|(l, step)| {
        l.vals.iter().zip(&step.views).all(|(v, f)| match (v, f) {
            // (Foreign memory never matches: the other two facts.)
            (ArgVal::View(v), Some(f)) => {
                let was = program.life[f.num];
                (v.alloc.live.load(Ordering::Acquire) != 0) == was.referenced
                    && v.alloc.holds_data() == was.allocated
            }
            _ => true,
        })
    })
}

/// Equal slices of a few words, compared in line (`==` on them calls
/// memcmp, which costs more than the comparison of one to three words).
#[inline]
fn same_words(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}
