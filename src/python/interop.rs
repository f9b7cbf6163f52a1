//! Views handed to other libraries in place: the CUDA array interface and
//! DLPack exports (pending launches on the memory run first).
use super::bridge::py_err;
use super::buffer;
use super::lazy::flush_host;
use crate::memory::alloc::Alloc;
use crate::memory::dlpack;
use crate::types::DType;
use pyo3::prelude::*;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The parts of a view an export describes.
pub struct Window<'a> {
    pub alloc: &'a Arc<Alloc>,
    pub offset: isize,
    pub dtype: DType,
    pub shape: &'a [i64],
    pub strides: &'a [i64],
}

/// CUDA Array Interface (v3) of a view with device memory; that copy is made
/// current and counts as newer afterwards (the consumer may write it).
pub fn cuda_array_interface<'py>(
    py: Python<'py>,
    v: Window<'_>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    // Pending launches first: a recorded CUDA launch is what gives a view
    // its device memory.
    flush_host(py, v.alloc)?;
    let has = v.alloc.uvm || !v.alloc.dev.load(Ordering::Acquire).is_null();
    if !has {
        return Err(pyo3::exceptions::PyAttributeError::new_err(
            "this View has no device memory (no CUDA kernel used it yet)",
        ));
    }
    let base = v.alloc.device_ptr(true).map_err(py_err)?;
    // The interface has no stream: the data must be ready when handed over.
    crate::kokkos::settle();
    let data = base.wrapping_offset(v.offset) as usize;
    buffer::cuda_array_interface(py, data, v.dtype, v.shape, v.strides)
}

/// A DLPack capsule over the device copy when a CUDA kernel used the view
/// (it becomes current and counts as newer), else over host memory.
pub fn dlpack(py: Python<'_>, v: Window<'_>, versioned: bool) -> PyResult<Py<PyAny>> {
    flush_host(py, v.alloc)?;
    let (base, device) = dlpack::current_copy(v.alloc).map_err(py_err)?;
    let data = base.wrapping_offset(v.offset);
    let (alloc, shape, strides) = (v.alloc.clone(), v.shape, v.strides);
    dlpack::export(py, alloc, data, device, v.dtype, shape, strides, versioned)
}
