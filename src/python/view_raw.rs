//! A View's geometry and memory outside Python's view: its first element's
//! address, shape, byte range, and the constructors over borrowed memory.
use super::bridge::py_err;
use super::buffer;
use super::view::View;
use crate::memory::alloc::Alloc;
use crate::memory::geometry::{byte_range, classify};
use crate::types::{DType, Layout};
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::c_void;
use std::sync::Arc;

impl View {
    pub fn data_ptr(&self) -> PyResult<*mut c_void> {
        let base = self.alloc.ptr().map_err(py_err)?;
        // The first element's address; for an empty view (any offset, maybe a
        // dangling 0-byte base) an address nobody reads, hence wrapping arithmetic.
        Ok(base.wrapping_offset(self.offset) as *mut c_void)
    }
    pub fn shape(&self) -> &[i64] {
        &self.extents[..self.rank]
    }
    pub fn element_count(&self) -> i64 {
        self.shape().iter().product()
    }

    /// A view over a borrowed buffer; the caller keeps the buffer alive.
    pub fn wrap_raw(b: &ffi::Py_buffer, dtype: DType) -> PyResult<View> {
        let (rank, extents, strides) = buffer::geometry(b, dtype)?;
        let mut v = View::wrap_geometry(dtype, rank, extents, strides);
        v.alloc = Alloc::borrowed(b.buf as *mut u8, None);
        Ok(v)
    }

    /// A view of this geometry (strides in elements) over memory the caller
    /// sets as its `alloc`.
    pub fn wrap_geometry(dtype: DType, rank: usize, extents: [i64; 8], strides: [i64; 8]) -> View {
        let kernel_layout = classify(&extents[..rank], &strides, Layout::Right);
        let declared = if kernel_layout == Layout::Left && rank > 1 {
            Layout::Left
        } else {
            Layout::Right
        };
        let alloc = Alloc::borrowed(std::ptr::null_mut(), None);
        View::whole(
            alloc,
            dtype,
            rank,
            extents,
            strides,
            declared,
            kernel_layout,
        )
    }

    /// A view of all of `alloc`, from its first byte.
    pub(super) fn whole(
        alloc: Arc<Alloc>,
        dtype: DType,
        rank: usize,
        extents: [i64; 8],
        strides: [i64; 8],
        declared: Layout,
        kernel_layout: Layout,
    ) -> View {
        View {
            alloc,
            offset: 0,
            dtype,
            rank,
            extents,
            strides,
            declared,
            kernel_layout,
            read_once: Default::default(),
            ranged_exports: Default::default(),
            atomic: Default::default(),
            last_row: Default::default(),
        }
    }

    /// First byte and one past the last byte this view can touch, relative to
    /// its allocation (empty when any extent is 0).
    pub fn byte_range(&self) -> (isize, isize) {
        let r = self.rank;
        byte_range(
            self.offset,
            self.dtype.size() as isize,
            &self.extents[..r],
            &self.strides[..r],
        )
    }
}
