//! The device arguments of one CUDA launch: device pointers for its views,
//! borrowed memory in temporary device buffers (or a pykokkos.numba call's
//! copy), and what comes back after the kernel.
use super::alloc::Alloc;
use super::device::{cuda_err, cuda_oom, d2h, h2d, USED};
pub use super::fills::Fills;
use super::view::{PkViewArg, ViewVal};
use crate::errors::PkResult;
use crate::kokkos::{self as runtime, settle, CudaFns};
use crate::types::Space;
use std::os::raw::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

struct Temp {
    alloc: Arc<Alloc>,
    lo: isize,
    hi: isize,
    dev: *mut u8,
    written: bool,
    /// The launch stores all of it (`Fills`): not copied in.
    filled: bool,
}

/// The view arguments of one kernel launch in `space`, in slot order.
/// `writes[i]` says whether view i may be written (all may, when empty);
/// `fills` which ones a CUDA launch stores whole (memory/fills.rs).
/// CUDA launches get device pointers (and a `Launch` to finish after the
/// kernel); host launches first take back what a GPU kernel left newer, and
/// views they only read keep their device copy current.
/// They go into `args` (cleared first): the caller reuses one buffer, so a
/// launch of a cached kernel allocates nothing for them.
pub fn kernel_views<'v, 'f>(
    space: Space,
    vals: impl Iterator<Item = &'v ViewVal>,
    writes: &[bool],
    fills: impl FnOnce() -> Fills<'f>,
    args: &mut Vec<PkViewArg>,
) -> PkResult<Option<Launch>> {
    args.clear();
    if space == Space::Cuda {
        let vals: Vec<&ViewVal> = vals.collect();
        let (l, device) = Launch::prepare(&vals, writes, fills())?;
        *args = device;
        return Ok(Some(l));
    }
    let mirrors = USED.load(Ordering::Relaxed);
    for (i, v) in vals.enumerate() {
        if mirrors {
            if writes.get(i).copied().unwrap_or(true) {
                v.alloc.host_sync()?;
            } else {
                v.alloc.host_read()?;
            }
        }
        args.push(v.materialize()?);
    }
    Ok(None)
}

/// Device arguments of one CUDA launch: borrowed memory lives in temporary
/// device buffers that `finish` copies back and Drop frees.
pub struct Launch {
    c: Option<&'static CudaFns>,
    temps: Vec<Temp>,
    exported: Vec<Arc<Alloc>>,
    /// Memory owned by another CUDA library (CuPy, DLPack producers), which
    /// may use its own stream: such launches complete before returning.
    foreign: bool,
    /// Call copies this launch fills without copying them over first.
    unfilled: Vec<Arc<Alloc>>,
}

impl Launch {
    /// Device-pointer arguments for the given view values; `writes[i]` says
    /// whether view i may be written (all of them when `writes` is empty).
    pub fn prepare(
        vals: &[&ViewVal],
        writes: &[bool],
        fills: Fills<'_>,
    ) -> PkResult<(Launch, Vec<PkViewArg>)> {
        let written = |i: usize| writes.get(i).copied().unwrap_or(true);
        let filled = |i: usize| !fills.slots.is_empty() && fills.whole(i, vals);
        let mut l = Launch {
            c: None,
            temps: vec![],
            exported: vec![],
            foreign: false,
            unfilled: vec![],
        };
        // Borrowed memory: one buffer per allocation over the union of ranges
        // (or the call's device copy, for arrays a pykokkos.numba call holds).
        let mut mirrored: Vec<(usize, *mut u8)> = Vec::new();
        for (i, v) in vals.iter().enumerate() {
            l.foreign |= v.alloc.is_device_only();
            if !v.alloc.is_borrowed() || v.alloc.is_device_only() || v.range.0 == v.range.1 {
                continue;
            }
            // (A call copy spans the whole array: filled only when this view does.)
            let whole = filled(i) && v.range == (0, v.alloc.span() as isize);
            if let Some((d, unfilled)) = v.alloc.call_mirror(written(i), whole)? {
                if unfilled {
                    l.unfilled.push(v.alloc.clone());
                }
                mirrored.push((i, d));
                continue;
            }
            match l.temps.iter_mut().find(|t| Arc::ptr_eq(&t.alloc, &v.alloc)) {
                Some(t) => {
                    t.lo = t.lo.min(v.range.0);
                    t.hi = t.hi.max(v.range.1);
                    t.written |= written(i);
                }
                None => l.temps.push(Temp {
                    alloc: v.alloc.clone(),
                    lo: v.range.0,
                    hi: v.range.1,
                    dev: std::ptr::null_mut(),
                    written: written(i),
                    filled: filled(i),
                }),
            }
        }
        if !l.temps.is_empty() {
            let c = runtime::cuda()?;
            l.c = Some(c);
            USED.store(true, Ordering::Relaxed);
            for t in l.temps.iter_mut() {
                let n = (t.hi - t.lo) as usize;
                // `n = hi - lo > 0` (empty ranges got no temporary); null is handled below.
                let d = super::pool::alloc(c, n);
                if d.is_null() {
                    return Err(cuda_oom(n));
                }
                t.dev = d;
                let src = t.alloc.ptr()?.wrapping_offset(t.lo);
                if !t.filled && h2d(c, d, src, n) != 0 {
                    return Err(cuda_err("copying an array to the GPU"));
                }
            }
        }
        let mut args = Vec::with_capacity(vals.len());
        for (i, v) in vals.iter().enumerate() {
            let mut a = v.raw;
            let p = if let Some((_, d)) = mirrored.iter().find(|(k, _)| *k == i) {
                d.wrapping_offset(v.offset)
            } else if v.alloc.is_borrowed() && !v.alloc.is_device_only() {
                match l.temps.iter().find(|t| Arc::ptr_eq(&t.alloc, &v.alloc)) {
                    Some(t) => t.dev.wrapping_offset(v.offset - t.lo),
                    None => std::ptr::NonNull::<u64>::dangling().as_ptr() as *mut u8,
                }
            } else {
                if v.alloc.exports.load(Ordering::Acquire) > 0
                    && !l.exported.iter().any(|e| Arc::ptr_eq(e, &v.alloc))
                {
                    l.exported.push(v.alloc.clone());
                }
                v.alloc.device_ptr(written(i))?.wrapping_offset(v.offset)
            };
            a.data = p as *mut c_void;
            args.push(a);
        }
        Ok((l, args))
    }

    /// Nothing to do after the kernel (no borrowed, foreign or exported
    /// memory): its kernel may be launched later, as part of a CUDA graph.
    pub fn plain(&self) -> bool {
        self.temps.is_empty()
            && self.exported.is_empty()
            && !self.foreign
            && self.unfilled.is_empty()
    }

    /// After the kernel: borrowed and exported memory get the results back now
    /// (exported memory only when written: `host_sync` copies only a newer copy).
    /// `ran`: every work item ran; if not, memory the launch was to fill
    /// without copying it in keeps the caller's values (its copy is garbage).
    pub fn finish(mut self, ran: bool) -> PkResult<()> {
        runtime::IN_FLIGHT.store(true, Ordering::Release);
        if self.foreign {
            settle();
        }
        if !ran {
            self.unfilled.iter().for_each(|a| a.forget_call_copy());
        }
        if let Some(c) = self.c {
            for t in self
                .temps
                .iter()
                .filter(|t| t.written && (ran || !t.filled))
            {
                let n = (t.hi - t.lo) as usize;
                let dst = t.alloc.ptr()?.wrapping_offset(t.lo);
                if d2h(c, dst, t.dev, n) != 0 {
                    return Err(cuda_err("copying an array back from the GPU"));
                }
            }
        }
        for a in std::mem::take(&mut self.exported) {
            a.host_sync()?;
        }
        Ok(())
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        if let Some(c) = self.c {
            for t in &self.temps {
                if !t.dev.is_null() {
                    // SAFETY: `t.dev` is the temporary `prepare` got from `pool::alloc` for
                    // this launch only, and `Drop` runs once; the kernel that may still use
                    // it runs before any later use of the block (pool.rs).
                    unsafe { super::pool::release(c, t.dev) };
                }
            }
        }
    }
}
