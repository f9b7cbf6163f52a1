//! What an NVRTC kernel's records say after a launch: an index outside a
//! view (PK_BOUNDS_CHECK=1, device_bounds.hpp) or an integer division by
//! zero (device_checked.hpp), read back and cleared for the next launch.
use super::device_entry::DeviceEntry;
use crate::compile::cudadrv;
use std::ffi::c_void;

/// Bytes of device_bounds.hpp's `pk_oob_record`: set, dim, index, extent,
/// view[64], where[256].
const OOB_BYTES: usize = 344;

/// Bytes of device_checked.hpp's `pk_zdiv_record`: set, where[252].
const ZDIV_BYTES: usize = 256;

impl DeviceEntry {
    /// After a launch: what its records say went wrong, as the Kokkos path's
    /// entry would fail (2: an index outside a view, 3: a division by zero).
    /// Both records are read (and cleared) whichever is set.
    pub fn failure(&self) -> Result<Option<(i32, String)>, String> {
        let oob = self.out_of_bounds()?;
        let zdiv = self.zero_division()?;
        Ok(oob.map(|m| (2, m)).or(zdiv.map(|m| (3, m))))
    }

    /// After a launch of a kernel with checked divisions: the first division
    /// by zero, in the Kokkos path's words (checked.hpp), record cleared.
    fn zero_division(&self) -> Result<Option<String>, String> {
        let Some(rec) = take::<ZDIV_BYTES>(self.func.2, "division")? else {
            return Ok(None);
        };
        Ok(Some(format!(
            "integer division or modulo by zero ({})",
            text(&rec[4..])
        )))
    }

    /// After a launch of a bounds-checked kernel: the first index it found
    /// outside a view, in the words of the Kokkos path's report (prelude.hpp
    /// `oob_report`), and the record cleared for the next launch.
    fn out_of_bounds(&self) -> Result<Option<String>, String> {
        let Some(rec) = take::<OOB_BYTES>(self.func.1, "bounds")? else {
            return Ok(None);
        };
        let int = |k: usize| i32::from_ne_bytes(rec[k..k + 4].try_into().unwrap());
        let long = |k: usize| i64::from_ne_bytes(rec[k..k + 8].try_into().unwrap());
        Ok(Some(format!(
            "index {} is out of bounds for dimension {} of view '{}' with size {} ({})",
            long(8),
            int(4),
            text(&rec[24..88]),
            long(16),
            text(&rec[88..])
        )))
    }
}

/// A record of `N` bytes at `at` whose first int says it is set: its bytes,
/// and the record cleared for the next launch; None when not set (or absent).
fn take<const N: usize>(at: Option<cudadrv::CuPtr>, what: &str) -> Result<Option<[u8; N]>, String> {
    let Some(at) = at else {
        return Ok(None);
    };
    let drv = cudadrv::driver().map_err(|e| e.to_string())?;
    let mut rec = [0u8; N];
    // Synchronous: waits for the kernel on the legacy stream.
    // SAFETY: cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t): `rec` is a live
    // local of exactly N bytes; `at` is the address cuModuleGetGlobal gave for
    // the module's `pk_oob` / `pk_zdiv` global, whose C size (device_bounds.hpp
    // 4+4+8+8+64+256, device_checked.hpp 4+252) is the N each caller passes
    // (the size the driver reported is not checked against it). The module is
    // never unloaded. Callers (run.rs) hold the dispatch turn, so no other
    // launch of this kernel races with the read-and-clear. The context is
    // current if `call` launched; after its early return for an empty range
    // it may not be, and the driver then fails the call without copying.
    let rc = unsafe { (drv.memcpy_dtoh)(rec.as_mut_ptr() as *mut c_void, at, N) };
    drv.check(rc, &format!("the copy of the {what} record (cuMemcpyDtoH)"))?;
    if i32::from_ne_bytes(rec[..4].try_into().unwrap()) == 0 {
        return Ok(None);
    }
    // SAFETY: cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t) over the same
    // N-byte device global just read; device memory only, ordered on the
    // legacy stream before the next launch.
    drv.check(unsafe { (drv.memset_d8)(at, 0, N) }, "cuMemsetD8")?;
    Ok(Some(rec))
}

/// A NUL-terminated string in a record.
fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}
