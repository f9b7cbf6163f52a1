//! `View.resize` on the GPU. When kernels wrote a view on the device, resizing
//! it through the host brought the whole old view back (a copy that first waits
//! for every queued kernel), wrote the new one there, and the next kernel copied
//! it out again; ExaMiniMD resizes its sort's permutation at every rebuild (360
//! us a resize at 256,000 atoms on an H200). Kokkos::resize copies on the
//! device; so does this: the new allocation's mirror starts zeroed on the
//! device and takes the kept elements by device-to-device copies, queued on the
//! stream every launch uses, so nothing waits.
use super::alloc::{Alloc, NEWER, SYNC};
use crate::compile::cudadrv;
use crate::errors::{PkError, PkResult};
use crate::kokkos as runtime;
use std::sync::atomic::Ordering;

/// The most separate copies one resize may take (rows of a row-major view
/// whose columns change): past it the host's one pass is cheaper.
const MAX_RUNS: usize = 64;

/// Element runs to copy, (source offset, destination offset, length), all in
/// elements, for the elements `old` and `new` extents share; row-major order
/// (a column-major caller passes its extents reversed). None past `MAX_RUNS`.
pub fn runs(old: &[i64], new: &[i64]) -> Option<Vec<(i64, i64, i64)>> {
    let r = old.len();
    let keep: Vec<i64> = old.iter().zip(new).map(|(a, b)| (*a).min(*b)).collect();
    if keep.contains(&0) {
        return Some(Vec::new());
    }
    // The innermost dims that are whole in both shapes join into one run.
    let mut j = r - 1;
    while j > 0 && old[j] == new[j] && keep[j] == old[j] {
        j -= 1;
    }
    let inner: i64 = old[j + 1..].iter().product();
    let len = keep[j] * inner;
    let count: i64 = keep[..j].iter().product();
    if count as usize > MAX_RUNS {
        return None;
    }
    let strides = |e: &[i64]| {
        let mut s = vec![1i64; r];
        for d in (0..r - 1).rev() {
            s[d] = s[d + 1] * e[d + 1];
        }
        s
    };
    let (so, sn) = (strides(old), strides(new));
    let mut out = Vec::with_capacity(count as usize);
    let mut idx = vec![0i64; j];
    for _ in 0..count {
        let at = |s: &[i64]| idx.iter().zip(s).map(|(i, s)| i * s).sum::<i64>();
        out.push((at(&so), at(&sn), len));
        for d in (0..j).rev() {
            idx[d] += 1;
            if idx[d] < keep[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Some(out)
}

/// Gives `new` (fresh, never touched on the host) `old`'s shared elements on
/// the device; false, with nothing done, when `old`'s current copy is not a
/// device mirror (the host way costs no copy back then) or the shapes need
/// too many copies. `left`: both are column-major; `elem`: bytes an element.
pub fn on_device(
    old: &Alloc,
    new: &Alloc,
    elem: usize,
    old_ext: &[i64],
    new_ext: &[i64],
    left: bool,
) -> PkResult<bool> {
    let src = old.dev.load(Ordering::Acquire);
    let state = old.dev_state.load(Ordering::Acquire);
    if src.is_null()
        || old.uvm
        || old.is_borrowed()
        || old.is_device_only()
        || !(state == NEWER || state == SYNC)
        || !old.ranges.lock().is_empty()
        || old_ext.is_empty()
    {
        return Ok(false);
    }
    let (mut o, mut n) = (old_ext.to_vec(), new_ext.to_vec());
    if left {
        o.reverse();
        n.reverse();
    }
    let Some(runs) = runs(&o, &n) else {
        return Ok(false);
    };
    let drv = cudadrv::driver()?;
    drv.ensure_context(runtime::device_id()?)
        .map_err(PkError::Runtime)?;
    let dst = new.device_ptr(true)?;
    for (from, to, len) in runs {
        // SAFETY: cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t, CUstream):
        // both ranges lie inside their mirrors (offsets and lengths come from the shared
        // extents, which no shape exceeds), the mirrors are live while `old` and `new` are
        // borrowed here, and stream 0 orders the copy after the kernels that wrote `old`.
        let rc = unsafe {
            (drv.memcpy_dtod_async)(
                dst as u64 + (to as u64) * elem as u64,
                src as u64 + (from as u64) * elem as u64,
                len as usize * elem,
                std::ptr::null_mut(),
            )
        };
        drv.check(rc, "cuMemcpyDtoDAsync")
            .map_err(PkError::Runtime)?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::runs;

    /// The runs, applied to row-major buffers, against an element-by-element copy.
    fn check(old: &[i64], new: &[i64]) {
        let n_old: i64 = old.iter().product();
        let n_new: i64 = new.iter().product();
        let src: Vec<i64> = (1..=n_old).collect();
        let mut got = vec![0i64; n_new as usize];
        for (from, to, len) in runs(old, new).unwrap() {
            let (f, t, l) = (from as usize, to as usize, len as usize);
            got[t..t + l].copy_from_slice(&src[f..f + l]);
        }
        let mut want = vec![0i64; n_new as usize];
        for k in 0..n_new {
            let mut rest = k;
            let mut idx = vec![0i64; new.len()];
            for d in (0..new.len()).rev() {
                idx[d] = rest % new[d];
                rest /= new[d];
            }
            if idx.iter().zip(old).all(|(i, e)| i < e) {
                let at = idx.iter().zip(old).fold(0, |acc, (i, e)| acc * e + i);
                want[k as usize] = src[at as usize];
            }
        }
        assert_eq!(got, want, "{old:?} -> {new:?}");
    }

    #[test]
    fn runs_copy_exactly_the_shared_elements() {
        for (old, new) in [
            (vec![10], vec![4]),
            (vec![4], vec![10]),
            (vec![5, 3], vec![8, 3]),
            (vec![5, 3], vec![2, 3]),
            (vec![5, 3], vec![5, 6]),
            (vec![3, 4, 2], vec![5, 4, 2]),
            (vec![3, 4, 2], vec![3, 2, 2]),
            (vec![3, 4, 2], vec![2, 5, 1]),
            (vec![0, 3], vec![4, 3]),
        ] {
            check(&old, &new);
        }
    }

    #[test]
    fn one_run_when_only_the_outer_dimension_changes_and_none_past_the_limit() {
        assert_eq!(runs(&[1000, 3], &[1200, 3]).unwrap(), vec![(0, 0, 3000)]);
        assert_eq!(runs(&[7], &[3]).unwrap(), vec![(0, 0, 3)]);
        assert_eq!(runs(&[2, 3, 4], &[2, 3, 2]).unwrap().len(), 6);
        assert!(runs(&[100, 3], &[100, 4]).is_none());
        assert!(runs(&[0, 3], &[5, 3]).unwrap().is_empty());
    }
}
