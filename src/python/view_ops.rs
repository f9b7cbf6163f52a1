//! View operations the native methods share: wrapping a NumPy array,
//! subviews, and the window an export or element access describes.
use super::bridge::py_err;
use super::buffer;
use super::view::born;
use super::view::View;
use super::wire;
use crate::memory::alloc::{Alloc, ForeignBuf};
use crate::memory::device;
use crate::memory::geometry::{allocation_bytes, classify, contiguous_strides, subview};
use crate::memory::view::device_view;
use crate::types::{DType, Layout};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::atomic::Ordering;

impl View {
    pub(super) fn window(&self) -> super::interop::Window<'_> {
        super::interop::Window {
            alloc: &self.alloc,
            offset: self.offset,
            dtype: self.dtype,
            shape: self.shape(),
            strides: &self.strides[..self.rank],
        }
    }

    /// A new zero-filled view (counted as born).
    pub(super) fn allocate(
        shape: Vec<i64>,
        dtype_code: u8,
        layout_code: u8,
        space_code: u8,
    ) -> PyResult<View> {
        let dtype = DType::from_code(dtype_code)
            .ok_or_else(|| PyValueError::new_err("unknown dtype code"))?;
        let declared = if layout_code == wire::LAYOUT_LEFT {
            Layout::Left
        } else {
            Layout::Right
        };
        let bytes = allocation_bytes(&shape, dtype).map_err(py_err)?;
        let uvm = space_code == wire::MEMORY_UVM;
        if uvm {
            device::check_managed(bytes).map_err(py_err)?;
        }
        let alloc = Alloc::owned(bytes, uvm);
        let mut extents = [0i64; 8];
        extents[..shape.len()].copy_from_slice(&shape);
        let strides = contiguous_strides(&shape, declared == Layout::Left);
        let kernel_layout = classify(&shape, &strides, declared);
        let rank = shape.len();
        Ok(born(View::whole(
            alloc,
            dtype,
            rank,
            extents,
            strides,
            declared,
            kernel_layout,
        )))
    }

    /// `v[i]` (or `v[i, j]`) of a view of higher rank: the remaining dimensions.
    pub(super) fn row(&self, ix: &[i64]) -> PyResult<View> {
        let n = self.rank;
        let mut start = vec![0; n];
        let mut length = self.shape().to_vec();
        let mut keep = vec![true; n];
        for (d, i) in ix.iter().enumerate() {
            (start[d], length[d], keep[d]) = (*i, 1, false);
        }
        self.subview(start, length, vec![1; n], keep)
    }

    /// Wraps any writable buffer (a NumPy array) without copying, or device
    /// memory (a CuPy array, through `__cuda_array_interface__`) in place:
    /// Cuda kernels use it where it is; the host cannot read it.
    pub(super) fn wrap(obj: &Bound<'_, PyAny>) -> PyResult<View> {
        // A plain ndarray has no device memory: asking it for the attribute
        // would build an AttributeError, a third of the wrap's time.
        let plain = super::view_slice::is_plain_ndarray(obj)?;
        if let Some(cai) = (!plain)
            .then(|| {
                obj.getattr(pyo3::intern!(obj.py(), "__cuda_array_interface__"))
                    .ok()
            })
            .flatten()
        {
            let g = super::args::cuda_array_geometry(&cai)?;
            let (ty, val) =
                device_view(obj, g.addr as *mut u8, g.dtype, g.rank, g.extent, g.stride);
            let mut v = View::wrap_geometry(g.dtype, g.rank, g.extent, g.stride);
            v.alloc = val.alloc;
            v.kernel_layout = ty.layout;
            return Ok(v);
        }
        let (buf, dtype) = buffer::get_buffer(obj)?;
        let mut v = View::wrap_raw(&buf, dtype)?;
        // The view now owns the borrowed buffer; releasing it frees the array's export.
        v.alloc = Alloc::borrowed(buf.buf as *mut u8, Some(ForeignBuf(buf)));
        Ok(v)
    }

    /// A subview sharing memory: per-dimension start, length, step, and whether
    /// the dimension is kept (False for an integer index).
    pub(super) fn subview(
        &self,
        start: Vec<i64>,
        length: Vec<i64>,
        step: Vec<i64>,
        keep: Vec<bool>,
    ) -> PyResult<View> {
        let item = self.dtype.size() as isize;
        let (offset, r, extents, strides) = subview(
            self.offset,
            item,
            self.shape(),
            &self.strides,
            (&start, &length, &step, &keep),
        )
        .map_err(py_err)?;
        let kernel_layout = classify(&extents[..r], &strides, self.declared);
        Ok(View {
            alloc: self.alloc.clone(),
            offset,
            dtype: self.dtype,
            rank: r,
            extents,
            strides,
            declared: self.declared,
            kernel_layout,
            read_once: Default::default(),
            ranged_exports: Default::default(),
            atomic: self.atomic.load(Ordering::Relaxed).into(),
            last_row: Default::default(),
        })
    }
}
