//! The bytes a device launch hands over and reads back: a view argument as
//! the C ABI's bytes, and a reduction's totals copied back from the GPU.
use crate::compile::cudadrv::{self, CuPtr};
use crate::memory::view::PkViewArg;
use std::ffi::c_void;

/// A reduction's or scan's totals (`bytes` at `out`) into `result`.
pub(super) fn total_back(
    drv: &cudadrv::Driver,
    out: CuPtr,
    bytes: usize,
    result: &mut [u64],
) -> Result<(), String> {
    let bytes = bytes.min(8 * result.len());
    // Synchronous: waits for the kernel on the legacy stream.
    // SAFETY: cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t): `bytes` was capped
    // to `result`'s 8 * len bytes, all writable through the &mut slice; `out`
    // is the totals part of the entry's scratch (total_bytes, or 16 for a
    // scan), at least `bytes` long; the caller holds the scratch lock, and the
    // context is current (`call`).
    let rc = unsafe { (drv.memcpy_dtoh)(result.as_mut_ptr() as *mut c_void, out, bytes) };
    drv.check(rc, "the copy of a total (cuMemcpyDtoH)")
}

/// A view argument's bytes, as `pk_args` holds them (codegen/device.rs).
pub(super) fn view_bytes(v: &PkViewArg) -> &[u8] {
    // SAFETY: `v` is a valid reference, so its size_of::<PkViewArg>() bytes
    // are readable and stay borrowed for the slice's lifetime; PkViewArg is
    // #[repr(C)], a pointer followed by 16 i64, so it has no padding and
    // every byte is initialized.
    unsafe {
        std::slice::from_raw_parts(
            v as *const PkViewArg as *const u8,
            std::mem::size_of::<PkViewArg>(),
        )
    }
}
