//! View geometry: contiguous strides, the layout kernels see, and the byte
//! range a view can touch (what hazards and device copies are computed on).
use crate::types::Layout;

pub fn contiguous_strides(ext: &[i64], left: bool) -> [i64; 8] {
    let mut s = [0i64; 8];
    let r = ext.len();
    let mut acc = 1i64;
    if left {
        for d in 0..r {
            s[d] = acc;
            acc *= ext[d].max(1);
        }
    } else {
        for d in (0..r).rev() {
            s[d] = acc;
            acc *= ext[d].max(1);
        }
    }
    s
}

pub fn classify(ext: &[i64], strides: &[i64; 8], declared: Layout) -> Layout {
    let r = ext.len();
    let right = contiguous_strides(ext, false);
    let left = contiguous_strides(ext, true);
    let same = |a: &[i64; 8]| (0..r).all(|d| ext[d] <= 1 || a[d] == strides[d]);
    if declared != Layout::Left && same(&right) {
        Layout::Right
    } else if same(&left) {
        Layout::Left
    } else if same(&right) {
        Layout::Right
    } else {
        Layout::Stride
    }
}

/// First byte and one past the last byte a view of this geometry touches,
/// relative to its allocation (empty when an extent is 0).
pub fn byte_range(offset: isize, item: isize, extents: &[i64], strides: &[i64]) -> (isize, isize) {
    if extents.contains(&0) {
        return (offset, offset);
    }
    let (mut lo, mut hi) = (offset, offset + item);
    for (e, s) in extents.iter().zip(strides) {
        let span = (e - 1) as isize * *s as isize * item;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    (lo, hi)
}
