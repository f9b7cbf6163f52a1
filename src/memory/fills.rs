//! Views a CUDA launch overwrites whole: their stale device copies are not
//! copied over first (a NumPy output a kernel only stores into crosses to the
//! GPU not at all, and back once).
use super::view::ViewVal;
use std::sync::Arc;

/// Which view slots a CUDA launch over the work items `lo..hi` of a 1-D
/// range stores every element of (`v[i]`, in every work item) and reads none
/// of (`Kernel::view_fills`; empty: none): such a view's stale device copy
/// need not be copied over first.
#[derive(Clone, Copy, Default)]
pub struct Fills<'a> {
    pub slots: &'a [bool],
    pub lo: i64,
    pub hi: i64,
}

impl<'a> Fills<'a> {
    /// The fills of a kernel's view slots (`Kernel::view_fills`) over the
    /// range `lo..hi` (only its first dimension counts: fills are 1-D).
    pub fn of(slots: &'a [bool], lo: &[i64], hi: &[i64]) -> Fills<'a> {
        match (slots, lo, hi) {
            ([], ..) | (_, [], _) | (_, _, []) => Fills::default(),
            (slots, [lo, ..], [hi, ..]) => Fills {
                slots,
                lo: *lo,
                hi: *hi,
            },
        }
    }

    /// Whether the launch stores every byte of view i's range: contiguous,
    /// inside the work items, and no other view of the launch on its memory.
    pub(super) fn whole(&self, i: usize, vals: &[&ViewVal]) -> bool {
        let v = vals[i];
        self.slots.get(i) == Some(&true)
            && self.lo <= 0
            && self.hi >= v.raw.extent[0]
            && v.raw.stride[0] == 1
            && vals
                .iter()
                .enumerate()
                .all(|(j, w)| j == i || !Arc::ptr_eq(&w.alloc, &v.alloc))
    }
}
