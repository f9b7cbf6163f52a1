//! A view of an allocation as kernels take it: the C ABI descriptor (data,
//! extents, strides) and the value a launch records, which references its
//! allocation instead of a pointer, so a recorded launch neither allocates nor
//! dangles.
use super::alloc::Alloc;
use super::geometry;
use crate::types::{DType, Layout, ViewTy};
use pyo3::prelude::*;
use std::sync::Arc;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PkViewArg {
    pub data: *mut std::os::raw::c_void,
    pub extent: [i64; 8],
    pub stride: [i64; 8],
}

/// A view argument. Runtime-owned memory is referenced by allocation and
/// offset so a recorded launch neither allocates nor dangles; the pointer is
/// produced when the kernel actually runs.
#[derive(Clone)]
pub struct ViewVal {
    pub raw: PkViewArg,
    pub alloc: Arc<Alloc>,
    pub offset: isize,
    /// Byte range touched, relative to the allocation.
    pub range: (isize, isize),
}

// SAFETY: the only field that is not Send is `raw.data`, a raw pointer that both places
// making a `ViewVal` (`view_arg`, `device_view`) leave null; the pointer is produced by
// `materialize` into a copy, never stored back. The rest is an `Arc<Alloc>` (Alloc is
// Send + Sync) and integers.
unsafe impl Send for ViewVal {}
// SAFETY: `&ViewVal` gives only reads of plain data and of the `Arc<Alloc>`; as for Send,
// `raw.data` is null in every stored value.
unsafe impl Sync for ViewVal {}

impl ViewVal {
    pub fn materialize(&self) -> crate::errors::PkResult<PkViewArg> {
        let mut a = self.raw;
        // The first element's address (kernels index from it); for an empty view
        // (any offset, maybe a dangling 0-byte base) one nobody reads: wrapping.
        a.data = self.alloc.ptr()?.wrapping_offset(self.offset) as *mut std::os::raw::c_void;
        Ok(a)
    }
    pub fn foreign(&self) -> bool {
        self.alloc.is_foreign()
    }
}

/// A view over borrowed memory: device memory (CUDA array interface or
/// DLPack) when `on_device`, else host memory (DLPack); `owner` is kept alive
/// with it, which keeps the memory valid.
pub fn borrowed_view(
    owner: &Bound<'_, PyAny>,
    data: *mut u8,
    on_device: bool,
    dtype: DType,
    rank: usize,
    extent: [i64; 8],
    stride: [i64; 8],
) -> (ViewTy, ViewVal) {
    if on_device {
        return device_view(owner, data, dtype, rank, extent, stride);
    }
    let (ty, mut v) = device_view(owner, std::ptr::null_mut(), dtype, rank, extent, stride);
    v.alloc = Alloc::host_borrowed(data, owner.clone().unbind());
    (ty, v)
}

/// A view over borrowed device memory (CUDA array interface or DLPack);
/// `owner` is kept alive with it, which keeps the memory valid.
pub fn device_view(
    owner: &Bound<'_, PyAny>,
    data: *mut u8,
    dtype: DType,
    rank: usize,
    extent: [i64; 8],
    stride: [i64; 8],
) -> (ViewTy, ViewVal) {
    let range = geometry::byte_range(0, dtype.size() as isize, &extent[..rank], &stride[..rank]);
    let layout = geometry::classify(&extent[..rank], &stride, Layout::Right);
    let alloc = Alloc::device_borrowed(data, owner.clone().unbind());
    let raw = PkViewArg {
        data: std::ptr::null_mut(),
        extent,
        stride,
    };
    let ty = ViewTy {
        dtype,
        rank: rank as u8,
        layout,
        atomic: false,
    };
    (
        ty,
        ViewVal {
            raw,
            alloc,
            offset: 0,
            range,
        },
    )
}
