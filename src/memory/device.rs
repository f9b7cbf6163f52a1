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
use crate::errors::{PkError, PkResult};
use crate::kokkos::{self as runtime, settle, CudaFns};
use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
            // The size is this allocation's, non-zero here; null is handled below.
            let fresh = super::pool::alloc(c, self.bytes());
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
                    // SAFETY: `fresh` came from `pool::alloc` and was never published (`dev`
                    // is still null): given back once.
                    unsafe { super::pool::release(c, fresh) };
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
            self.peeked.store(false, Ordering::Relaxed);
            self.dev_state.store(NEWER, Ordering::Release);
        }
        Ok(d)
    }

    /// `out.len()` bytes at byte `at` of a newer device copy, copied straight
    /// into `out`, both copies left as they are: the first `v[i]` read after
    /// kernels wrote `v` on the GPU moves one element, not the allocation
    /// (11 us for 16 KB on an H200 against a few for 8 bytes; milliseconds
    /// for a large view). A second such read before the next device write
    /// returns false, and the caller's host access brings the whole copy
    /// back: reading many elements one by one costs one copy, as before.
    /// False too when the host copy is current (read it there).
    pub fn device_element(&self, at: usize, out: &mut [u8]) -> PkResult<bool> {
        let d = self.dev.load(Ordering::Acquire);
        if self.uvm
            || d.is_null()
            || self.is_device_only()
            || self.dev_state.load(Ordering::Acquire) != NEWER
            || at
                .checked_add(out.len())
                .is_none_or(|end| end > self.span())
            || self.peeked.swap(true, Ordering::AcqRel)
        {
            return Ok(false);
        }
        self.push_exports()?;
        let c = runtime::cuda_loaded().expect("a device mirror implies CUDA");
        if d2h(c, out.as_mut_ptr(), d.wrapping_add(at), out.len()) != 0 {
            return Err(cuda_err("copying an element back from the GPU"));
        }
        Ok(true)
    }
}
