//! Borrowed memory (a NumPy array) that a pykokkos.numba call holds
//! (`Alloc::trusted`): one device copy for the whole call, so its kernels copy
//! each array over once, not at every launch, and only what they wrote comes
//! back when the call ends.
use super::alloc::{Alloc, NEWER, STALE, SYNC};
use super::device::{cuda_err, cuda_oom, h2d, USED};
use crate::errors::PkResult;
use crate::kokkos::{self as runtime, settle};
use std::sync::atomic::Ordering;

impl Alloc {
    /// Borrowed memory a pykokkos.numba call holds (`trusted`): a device copy
    /// that lasts the call, so the call's kernels copy each array over once
    /// (not at every launch) and only a written one back (`drop_mirror`).
    /// None where the memory's length is unknown (the per-launch path then).
    /// `fills`: the launch stores every byte of it and reads none, so a stale
    /// copy is not copied over; the second value says it was left unfilled
    /// (the launch's `Launch::finish` forgets it should the kernel fail).
    pub fn call_mirror(&self, write: bool, fills: bool) -> PkResult<Option<(*mut u8, bool)>> {
        let n = self.span();
        if !self.is_borrowed() || n == 0 || !self.trusted.load(Ordering::Acquire) {
            return Ok(None);
        }
        let c = runtime::cuda()?;
        let mut d = self.dev.load(Ordering::Acquire);
        if d.is_null() {
            // `n > 0` (checked above); null is handled below.
            d = super::pool::alloc(c, n);
            if d.is_null() {
                return Err(cuda_oom(n));
            }
            USED.store(true, Ordering::Relaxed);
            self.dev_state.store(STALE, Ordering::Release);
            self.dev.store(d, Ordering::Release);
        }
        let unfilled = fills && self.dev_state.load(Ordering::Acquire) == STALE;
        if self.dev_state.load(Ordering::Acquire) == STALE {
            if !unfilled && h2d(c, d, self.ptr()?, n) != 0 {
                return Err(cuda_err("copying an array to the GPU"));
            }
            self.dev_state.store(SYNC, Ordering::Release);
        }
        if write {
            self.peeked.store(false, Ordering::Relaxed); // (as `device_ptr`: a new device write)
            self.dev_state.store(NEWER, Ordering::Release);
        }
        Ok(Some((d, unfilled)))
    }

    /// A launch that was to fill this call copy failed: the copy holds what
    /// no kernel wrote, so the caller's array stays as it was.
    pub(super) fn forget_call_copy(&self) {
        self.dev_state.store(STALE, Ordering::Release);
    }

    /// The call that held borrowed memory ended: what its kernels wrote comes
    /// back to the caller's array and the device copy is freed.
    pub fn drop_mirror(&self) -> PkResult<()> {
        if !self.is_borrowed()
            || self.is_device_only()
            || self.dev.load(Ordering::Acquire).is_null()
        {
            return Ok(());
        }
        settle();
        self.host_read()?;
        let d = self.dev.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if let (false, Some(c)) = (d.is_null(), runtime::cuda_loaded()) {
            // SAFETY: the swap took `d` out of `dev`, so this thread alone gives it back
            // (and `Alloc::drop` will not); for borrowed memory `dev` is only ever set by
            // `call_mirror`'s `pool::alloc`. `settle` waited for kernels using it.
            unsafe { super::pool::release(c, d) };
        }
        self.dev_state.store(0, Ordering::Release);
        Ok(())
    }
}
