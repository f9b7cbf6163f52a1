//! Device mirrors of view memory for kernels in the CUDA space.
//!
//! Every allocation keeps its host memory; a CUDA launch gives it a device
//! buffer of the same size on first use. `Alloc::dev_state` says which copy is
//! current: `STALE` (the host copy is newer or may have changed), `SYNC` (both
//! agree), `NEWER` (a kernel may have written the device copy). Host access
//! (`_sync`, the buffer protocol, host kernels) copies a newer device copy back
//! first and leaves the state `STALE` (the host may write). Borrowed memory
//! (NumPy arrays) gets a device buffer for the one launch: copied in, run,
//! copied back, freed. None of this is reached unless a CUDA kernel ran.
use super::alloc::{Alloc, NEWER, STALE, SYNC};
pub use super::fills::Fills;
use super::view::{PkViewArg, ViewVal};
use crate::errors::{PkError, PkResult};
use crate::kokkos::{self as runtime, settle, CudaFns};
use crate::types::Space;
use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Set once any device mirror exists: host launches check mirrors only then.
pub static USED: AtomicBool = AtomicBool::new(false);

/// Bytes copied host to device and back since the process started (what
/// `pk.device_copies()` reports: copies are the cost the mirrors try to avoid).
static H2D_BYTES: AtomicU64 = AtomicU64::new(0);
static D2H_BYTES: AtomicU64 = AtomicU64::new(0);

pub fn copied_bytes() -> (u64, u64) {
    (
        H2D_BYTES.load(Ordering::Relaxed),
        D2H_BYTES.load(Ordering::Relaxed),
    )
}

pub(super) fn h2d(c: &CudaFns, dst: *mut u8, src: *const u8, n: usize) -> i32 {
    H2D_BYTES.fetch_add(n as u64, Ordering::Relaxed);
    // SAFETY: `pk_cuda_h2d` is `cudaMemcpy(dst, src, n, HostToDevice)` in the support
    // library, never unloaded, with this signature; from pageable memory it returns once
    // `src` was read. The ranges are the callers' to vouch for (this fn is safe, so the
    // module keeps the contract): `src` readable host memory of `n` bytes, `dst` device
    // memory of `n` bytes that the caller owns (a mirror or a launch's temporary).
    // For borrowed NumPy memory `call_mirror` (and `host_access`'s `d2h` back) copy
    // `span()` bytes from `buf`, `Py_buffer.len`: the memory's extent because only an
    // array whose elements fill exactly [0, len) is ever trusted with a call mirror
    // (python/view.rs `_set_trusted`); strided arrays copy their byte range per launch.
    unsafe { (c.h2d)(dst as *mut c_void, src as *const c_void, n) }
}

pub(super) fn d2h(c: &CudaFns, dst: *mut u8, src: *const u8, n: usize) -> i32 {
    D2H_BYTES.fetch_add(n as u64, Ordering::Relaxed);
    // SAFETY: `pk_cuda_d2h` is `cudaMemcpy(dst, src, n, DeviceToHost)`, which returns only
    // when the copy is done. As for `h2d`, the callers vouch for the ranges: `dst` writable
    // host memory of `n` bytes that no one else touches meanwhile, `src` device memory of
    // `n` bytes.
    unsafe { (c.d2h)(dst as *mut c_void, src as *const c_void, n) }
}

/// `n` bytes of device memory at `src`, copied to the host (for a trace).
pub fn device_bytes(src: usize, n: usize) -> PkResult<Vec<u8>> {
    let c = runtime::cuda()?;
    settle(); // kernels that write it are done
    let mut out = vec![0u8; n];
    if n > 0 && d2h(c, out.as_mut_ptr(), src as *const u8, n) != 0 {
        return Err(cuda_err("copying device memory to the host for a trace"));
    }
    Ok(out)
}

pub(super) fn cuda_err(what: &str) -> PkError {
    PkError::Runtime(format!("{what}: {}", runtime::support_error()))
}

/// A device allocation that failed: a MemoryError, as on the host.
pub(super) fn cuda_oom(bytes: usize) -> PkError {
    PkError::Memory(format!(
        "cannot allocate {bytes} bytes of GPU memory: {}",
        runtime::support_error()
    ))
}

/// A CudaUVMSpace view of `bytes`: CUDA must be there and the card big enough.
pub fn check_managed(bytes: usize) -> PkResult<()> {
    let c = runtime::cuda()?;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: `pk_cuda_mem_info(size_t*, size_t*)` (`cudaMemGetInfo`) writes one `usize`
    // through each pointer, and both point at live locals of that type.
    if unsafe { (c.mem_info)(&mut free, &mut total) } != 0 {
        return Err(cuda_err("cudaMemGetInfo"));
    }
    if bytes > total {
        return Err(PkError::Runtime(format!(
            "a CudaUVMSpace view of {bytes} bytes exceeds the GPU's {total} bytes"
        )));
    }
    USED.store(true, Ordering::Relaxed);
    Ok(())
}

impl Alloc {
    /// Host access that may write is about to happen: a newer device copy
    /// comes back first; afterwards the host copy counts as newer.
    pub fn host_sync(&self) -> PkResult<()> {
        self.host_access(true)
    }

    /// Host access that only reads: a newer device copy comes back, and both
    /// copies then agree, so the next CUDA launch copies nothing over.
    pub fn host_read(&self) -> PkResult<()> {
        self.host_access(false)
    }

    fn host_access(&self, write: bool) -> PkResult<()> {
        if write {
            // A count that only has to change (traces compare it): a plain
            // load and store, no locked increment on every element write.
            let n = self.host_writes.load(Ordering::Relaxed);
            self.host_writes.store(n.wrapping_add(1), Ordering::Relaxed);
        }
        if self.uvm {
            // The host reads managed memory directly: kernels must be done.
            settle();
            return Ok(());
        }
        let d = self.dev.load(Ordering::Acquire);
        if d.is_null() {
            return Ok(());
        }
        self.push_exports()?;
        if self.is_device_only() {
            return Err(PkError::Value(
                "a CUDA array (passed through __cuda_array_interface__) can only be used by kernels in the Cuda space".into(),
            ));
        }
        match self.dev_state.load(Ordering::Acquire) {
            NEWER => {
                let c = runtime::cuda_loaded().expect("a device mirror implies CUDA");
                let rc = d2h(c, self.ptr()?, d, self.span());
                if rc != 0 {
                    return Err(cuda_err("copying a view back from the GPU"));
                }
                let after = if write { STALE } else { SYNC };
                self.dev_state.store(after, Ordering::Release);
            }
            SYNC if write => self.dev_state.store(STALE, Ordering::Release),
            _ => {}
        }
        Ok(())
    }

    /// The device address of the allocation's start, current for a kernel;
    /// `write` marks the device copy newer. Not for borrowed memory.
    pub fn device_ptr(&self, write: bool) -> PkResult<*mut u8> {
        if self.is_device_only() {
            return Ok(self.dev.load(Ordering::Acquire));
        }
        if self.uvm || self.bytes() == 0 {
            return self.ptr();
        }
        let c = runtime::cuda()?;
        let mut d = self.dev.load(Ordering::Acquire);
        if d.is_null() {
            // SAFETY: `pk_cuda_malloc(size_t)` (`cudaMalloc`) takes no pointer; the size is
            // this allocation's, non-zero here, and a null result is handled below.
            let fresh = unsafe { (c.malloc)(self.bytes()) } as *mut u8;
            if fresh.is_null() {
                return Err(cuda_oom(self.bytes()));
            }
            USED.store(true, Ordering::Relaxed);
            if self.is_allocated() {
                self.dev_state.store(STALE, Ordering::Release);
            } else {
                // Never touched on the host: zero on the device, no host memory.
                // SAFETY: `fresh` is the device block of `self.bytes()` bytes just allocated
                // and not yet published; `pk_cuda_zero` is `cudaMemset` over that size.
                if unsafe { (c.zero)(fresh as *mut c_void, self.bytes()) } != 0 {
                    // SAFETY: `fresh` was never published (`dev` is still null): freed once.
                    unsafe { (c.free)(fresh as *mut c_void) };
                    return Err(cuda_err("zeroing GPU memory"));
                }
                self.dev_state.store(SYNC, Ordering::Release);
            }
            self.dev.store(fresh, Ordering::Release);
            d = fresh;
        }
        self.push_exports()?;
        if self.dev_state.load(Ordering::Acquire) == STALE {
            let rc = h2d(c, d, self.ptr()?, self.bytes());
            if rc != 0 {
                return Err(cuda_err("copying a view to the GPU"));
            }
            self.dev_state.store(SYNC, Ordering::Release);
        }
        if write {
            self.dev_state.store(NEWER, Ordering::Release);
        }
        Ok(d)
    }
}

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
/// `writes[i]` says whether view i may be written (all may, when empty).
/// CUDA launches get device pointers (and a `Launch` to finish after the
/// kernel); host launches first take back what a GPU kernel left newer, and
/// views they only read keep their device copy current.
/// They go into `args` (cleared first): the caller reuses one buffer, so a
/// launch of a cached kernel allocates nothing for them.
pub fn kernel_views<'v>(
    space: Space,
    vals: impl Iterator<Item = &'v ViewVal>,
    writes: &[bool],
    fills: Fills<'_>,
    args: &mut Vec<PkViewArg>,
) -> PkResult<Option<Launch>> {
    args.clear();
    if space == Space::Cuda {
        let vals: Vec<&ViewVal> = vals.collect();
        let (l, device) = Launch::prepare(&vals, writes, fills)?;
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
                // SAFETY: `pk_cuda_malloc` takes no pointer; `n = hi - lo > 0` (empty
                // ranges got no temporary), and a null result is handled below.
                let d = unsafe { (c.malloc)(n) } as *mut u8;
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
                    // SAFETY: `t.dev` is the temporary `prepare` got from `c.malloc` for this
                    // launch only, and `Drop` runs once; `cudaFree` waits for the kernel
                    // that may still use it (CUDA launches are asynchronous).
                    unsafe { (c.free)(t.dev as *mut c_void) };
                }
            }
        }
    }
}
