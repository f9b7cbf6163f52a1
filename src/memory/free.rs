//! How an allocation's memory goes back: its device mirror, managed memory,
//! a borrowed buffer's release, or runtime-owned host memory.
use super::alloc::{Alloc, ForeignBuf, ALIGN};
use pyo3::ffi;
use pyo3::prelude::*;
use std::alloc::{self, GlobalAlloc};
use std::os::raw::c_void;
use std::sync::atomic::Ordering;

impl Drop for Alloc {
    fn drop(&mut self) {
        let d = self.dev.load(Ordering::Acquire);
        if !d.is_null() && self.device_owner.is_none() {
            if let Some(c) = crate::kokkos::cuda_loaded() {
                // SAFETY: without a `device_owner`, `dev` is a mirror this allocation made
                // with `pool::alloc` (`device_ptr`, `call_mirror`); the only other release
                // is `drop_mirror`, which swaps it to null first. `&mut self`: no launch
                // holds the allocation any more; kernels already queued that use it run
                // before any later use of the block (pool.rs).
                unsafe { super::pool::release(c, d) };
            }
        }
        if self.uvm {
            let p = self.ptr.load(Ordering::Acquire);
            if let (false, Some(c)) = (p.is_null(), crate::kokkos::cuda_loaded()) {
                // SAFETY: a `uvm` allocation only ever publishes a block from
                // `malloc_managed` (`ptr_managed`); `&mut self` is the last reference, and
                // `cudaFree` waits for kernels that may still use it.
                unsafe { (c.free)(p as *mut c_void) };
            }
            return;
        }
        if let Some(ForeignBuf(buf)) = self.foreign.take() {
            let mut buf = buf;
            // SAFETY: a `ForeignBuf` is only made from a buffer that `get_buffer` obtained
            // with `PyObject_GetBuffer` (`View::wrap`), boxed so it never moved; `take()`
            // makes this its one release, and `attach` holds the GIL during the call.
            Python::attach(|_| unsafe { ffi::PyBuffer_Release(&mut *buf) });
        } else if self.bytes > 0 {
            let p = self.ptr.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: with `bytes > 0` and no `foreign` this is runtime-owned host memory
                // (borrowed allocations have `bytes == 0`, uvm returned above): `ptr` only
                // publishes `base + color` for a `base` from `System.alloc_zeroed` with the
                // layout (`bytes + color`, ALIGN) that `from_size_align` accepted in `ptr`.
                // `&mut self` is the last reference.
                unsafe {
                    alloc::System.dealloc(
                        p.sub(self.color),
                        alloc::Layout::from_size_align_unchecked(self.bytes + self.color, ALIGN),
                    )
                };
            }
        }
    }
}
