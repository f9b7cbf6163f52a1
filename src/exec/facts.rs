//! What planning and the memo know of a launch's view arguments, taken in
//! one place: the fusion candidates (fusion/cand.rs) and the memo's words
//! (pipeline/memo/shape.rs: plans by shape, and matching launches against a
//! learned flush as they arrive) read a launch through `Launch::view_facts`
//! and an allocation through `Life::of`.
use super::args::ArgVal;
use super::launch::Launch;
use crate::memory::alloc::Alloc;
use crate::memory::view::ViewVal;
use crate::types::ArgTy;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Offset, extents, strides and dtype of a view: equal geometry on one
/// allocation means `v[i]` is the same element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub offset: isize,
    pub rank: u8,
    pub extent: [i64; 8],
    pub stride: [i64; 8],
    pub dtype: u8,
}

impl Geometry {
    /// The extents and strides of its rank (the rest are not the kernel's).
    pub fn extents(&self) -> &[i64] {
        &self.extent[..usize::from(self.rank).min(8)]
    }

    pub fn strides(&self) -> &[i64] {
        &self.stride[..usize::from(self.rank).min(8)]
    }
}

/// What planning must know of an allocation's life when it plans (it changes
/// between the launch and the flush: a temporary dies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Life {
    /// Some Python View of it is still alive (the program may read it later).
    pub referenced: bool,
    /// Python can reach it behind the runtime's back (NumPy memory, exports).
    pub foreign: bool,
    /// Memory exists already, on the host or the device (else its zeros are a
    /// fresh local's).
    pub allocated: bool,
}

impl Life {
    pub fn of(a: &Alloc) -> Life {
        Life {
            referenced: a.live.load(Ordering::Acquire) != 0,
            foreign: a.is_foreign(),
            allocated: a.holds_data(),
        }
    }

    /// The three facts as bits (referenced, foreign, allocated; high to low).
    pub fn bits(self) -> u8 {
        u8::from(self.referenced) << 2 | u8::from(self.foreign) << 1 | u8::from(self.allocated)
    }
}

/// One view argument of a launch: its position, its allocation, the byte
/// range of it the view spans, and its geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewFact {
    pub arg: usize,
    pub alloc: usize,
    pub range: (isize, isize),
    pub geometry: Geometry,
}

impl Launch {
    /// Its view arguments, in argument order: position, value, and the rank
    /// and dtype its type gives (a view's type is a View type; were it not,
    /// rank 8 keeps every extent in the facts).
    #[inline]
    pub fn views(&self) -> impl Iterator<Item = (usize, &ViewVal, u8, u8)> + '_ {
        let args = self.vals.iter().zip(&self.key.args).enumerate();
        args.filter_map(|(arg, (v, ty))| match (v, ty) {
            (ArgVal::View(v), ArgTy::View(t)) => Some((arg, v, t.rank, t.dtype as u8)),
            (ArgVal::View(v), _) => Some((arg, v, 8, u8::MAX)),
            _ => None,
        })
    }

    /// Its view arguments' facts, in argument order, with their allocations.
    pub fn view_facts(&self) -> impl Iterator<Item = (ViewFact, &Arc<Alloc>)> + '_ {
        self.views().map(|(arg, v, rank, dtype)| {
            let geometry = Geometry {
                offset: v.offset,
                rank,
                extent: v.raw.extent,
                stride: v.raw.stride,
                dtype,
            };
            let fact = ViewFact {
                arg,
                alloc: v.alloc.id(),
                range: v.range,
                geometry,
            };
            (fact, &v.alloc)
        })
    }
}
