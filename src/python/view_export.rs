//! The buffer protocol of a View: what an export makes current on the host
//! and what its end sends back to the device.
use super::bridge::py_err;
use super::buffer;
use super::lazy::flush_for_buffer;
use super::view::View;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::c_int;
use std::sync::atomic::Ordering;

impl View {
    /// `__getbuffer__`. Host access: pending kernels touching this memory
    /// run first, and while the export lives, launches on it run at once (it
    /// is foreign). A GPU View whose device copy is newer sends over only the
    /// bytes this view spans (a halo row of a large View, for MPI).
    ///
    /// # Safety
    /// `view` is the Py_buffer the interpreter passed to `__getbuffer__`.
    pub(super) unsafe fn export_buffer(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("null Py_buffer"));
        }
        let me = slf.borrow();
        // A refused request does nothing first (no flush, no copy from the device).
        buffer::check_request(me.shape(), &me.strides[..me.rank], flags)?;
        flush_for_buffer(slf.py(), &me.alloc)?;
        let data = me.data_ptr()?;
        let (lo, hi) = me.byte_range();
        let ranged = if !me.read_once.swap(false, Ordering::AcqRel) {
            let ranged = me.alloc.host_export(lo, hi).map_err(py_err)?;
            me.ranged_exports
                .fetch_add(ranged as usize, Ordering::AcqRel);
            ranged
        } else {
            false
        };
        let owner = slf.clone().into_any().into_ptr();
        let (shape, strides) = (me.shape(), &me.strides[..me.rank]);
        let exported = buffer::export(&mut *view, owner, data, me.dtype, shape, strides, flags);
        if let Err(e) = exported {
            // A refused export holds nothing: the reference taken for it and the
            // ranged export go back (the consumer never calls release).
            ffi::Py_DECREF(owner);
            if ranged {
                me.ranged_exports.fetch_sub(1, Ordering::AcqRel);
                me.alloc.export_ended(lo, hi).map_err(py_err)?;
            }
            return Err(e);
        }
        me.alloc.exports.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// `__releasebuffer__`: a ranged export's bytes go back to the device.
    ///
    /// # Safety
    /// `view` is a Py_buffer `export_buffer` filled.
    pub(super) unsafe fn end_export(&self, view: *mut ffi::Py_buffer) {
        buffer::release(&mut *view);
        let ranged = self.ranged_exports.load(Ordering::Acquire);
        if ranged > 0 {
            self.ranged_exports.fetch_sub(1, Ordering::AcqRel);
            let (lo, hi) = self.byte_range();
            if let Err(e) = self.alloc.export_ended(lo, hi) {
                tracing::error!(error = %e, "a View's exported bytes did not go back to the GPU");
            }
        }
        self.alloc.exports.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A device export held by another library past the call that made it (a
/// CUDA-aware MPI's nonblocking message): while held, the memory counts as
/// foreign, as a live buffer-protocol export makes it, so launches on it
/// run in program order instead of waiting; the mirrors are left as they are.
#[pyfunction]
pub fn hold_device_export(v: PyRef<'_, View>, on: bool) {
    if on {
        v.alloc.exports.fetch_add(1, Ordering::AcqRel);
    } else {
        v.alloc.exports.fetch_sub(1, Ordering::AcqRel);
    }
}
