//! View geometry: contiguous strides, the layout kernels see, and the byte
//! range a view can touch (what hazards and device copies are computed on).
use crate::errors::{PkError, PkResult};
use crate::types::{DType, Layout};

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

/// Per dimension of a subview: start, length, step, and whether it is kept
/// (False for an integer index).
pub type Slicing<'a> = (&'a [i64], &'a [i64], &'a [i64], &'a [bool]);

/// The (offset, rank, extents, strides) of a subview of a view at `offset`
/// with these extents and element strides. Every element it can reach must
/// lie in the parent (IndexError otherwise); at least one dimension is kept.
pub fn subview(
    offset: isize,
    item: isize,
    extents: &[i64],
    strides: &[i64; 8],
    (start, length, step, keep): Slicing<'_>,
) -> PkResult<(isize, usize, [i64; 8], [i64; 8])> {
    let r = extents.len();
    if [start.len(), length.len(), step.len(), keep.len()] != [r; 4] {
        return Err(PkError::Value(format!(
            "a subview of a {r}-dimensional View needs {r} starts, lengths, steps and keeps"
        )));
    }
    for d in 0..r {
        let (s, n, e) = (start[d], if keep[d] { length[d] } else { 1 }, extents[d]);
        let last = s + (n - 1).max(0) * step[d];
        let inside = |x: i64| (0..e).contains(&x);
        // An empty dimension reaches nothing, wherever it starts.
        if n < 0 || step[d] == 0 || (n > 0 && !(inside(s) && inside(last))) {
            return Err(PkError::Index(format!(
                "subview dimension {d}: start {s}, length {n}, step {} reaches outside extent {e}",
                step[d]
            )));
        }
    }
    let mut offset = offset;
    let mut ext = [0i64; 8];
    let mut str = [0i64; 8];
    let mut r = 0;
    for d in 0..extents.len() {
        offset += (start[d] * strides[d]) as isize * item;
        if keep[d] {
            ext[r] = length[d];
            str[r] = strides[d] * step[d];
            r += 1;
        }
    }
    if r == 0 {
        return Err(PkError::Value(
            "a subview keeps at least one dimension".into(),
        ));
    }
    Ok((offset, r, ext, str))
}

/// Bytes of a new allocation of this shape and dtype (1 to 8 extents >= 0).
pub fn allocation_bytes(shape: &[i64], dtype: DType) -> PkResult<usize> {
    if shape.is_empty() || shape.len() > 8 {
        return Err(PkError::Value(format!(
            "a View has 1 to 8 dimensions, not {}",
            shape.len()
        )));
    }
    if let Some(n) = shape.iter().find(|n| **n < 0) {
        return Err(PkError::Value(format!(
            "View extents must be >= 0, got {n}"
        )));
    }
    let n: i64 = shape.iter().product();
    (n as usize)
        .checked_mul(dtype.size())
        .filter(|b| *b < isize::MAX as usize / 2)
        .ok_or_else(|| PkError::Value("View too large".into()))
}
