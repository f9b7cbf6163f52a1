//! DLPack (the `__dlpack__` protocol): views export themselves as DLPack
//! capsules (host memory, or their device mirror), and CUDA DLPack tensors
//! (JAX, PyTorch, CuPy) are accepted as kernel arguments in place.
use super::alloc::Alloc;
use super::geometry::contiguous_strides;
use super::view::{device_view, ViewVal};
use crate::types::{DType, ViewTy};
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::{c_char, c_void};
use std::sync::Arc;

pub const CPU: i32 = 1;
pub const CUDA: i32 = 2;
pub const CUDA_MANAGED: i32 = 13;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

const NAME: &[u8] = b"dltensor\0";
const USED: &[u8] = b"used_dltensor\0";

fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::Bool => (6, 8),
        DType::I8 => (0, 8),
        DType::I16 => (0, 16),
        DType::I32 => (0, 32),
        DType::I64 => (0, 64),
        DType::U8 => (1, 8),
        DType::U16 => (1, 16),
        DType::U32 => (1, 32),
        DType::U64 => (1, 64),
        DType::F32 => (2, 32),
        DType::F64 => (2, 64),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

fn from_dl_dtype(t: DLDataType) -> Option<DType> {
    Some(match (t.code, t.bits, t.lanes) {
        (6, 8, 1) | (1, 1, 1) => DType::Bool,
        (0, 8, 1) => DType::I8,
        (0, 16, 1) => DType::I16,
        (0, 32, 1) => DType::I32,
        (0, 64, 1) => DType::I64,
        (1, 8, 1) => DType::U8,
        (1, 16, 1) => DType::U16,
        (1, 32, 1) => DType::U32,
        (1, 64, 1) => DType::U64,
        (2, 32, 1) => DType::F32,
        (2, 64, 1) => DType::F64,
        _ => return None,
    })
}

/// What an exported tensor keeps alive: the allocation and its shape arrays.
struct Ctx {
    alloc: Arc<Alloc>,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

unsafe extern "C" fn delete_managed(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    let m = Box::from_raw(m);
    let ctx = Box::from_raw(m.manager_ctx as *mut Ctx);
    ctx.alloc
        .exports
        .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
}

/// Capsule destructor: frees the tensor unless a consumer took it (and renamed it).
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    let name = NAME.as_ptr() as *const c_char;
    if ffi::PyCapsule_IsValid(capsule, name) == 1 {
        let m = ffi::PyCapsule_GetPointer(capsule, name) as *mut DLManagedTensor;
        delete_managed(m);
    }
}

/// The device a DLPack export of `alloc` lives on: its device copy once a
/// CUDA kernel used it (managed memory counts as host memory here).
pub fn device_type(alloc: &Alloc) -> i32 {
    let on_device = !alloc.uvm
        && !alloc
            .dev
            .load(std::sync::atomic::Ordering::Acquire)
            .is_null();
    if on_device {
        CUDA
    } else {
        CPU
    }
}

/// The start of the copy an export hands out, made current: the device copy
/// (counted newer: the consumer may write it) or host memory.
pub fn current_copy(alloc: &Alloc) -> crate::errors::PkResult<(*mut u8, i32)> {
    let device = device_type(alloc);
    if device == CUDA {
        // The capsule is consumed on the consumer's stream: finish ours.
        crate::kokkos::settle();
        Ok((alloc.device_ptr(true)?, CUDA))
    } else {
        alloc.host_sync()?;
        Ok((alloc.ptr()?, CPU))
    }
}

/// A DLPack capsule for `data` (already current on `device`).
#[allow(clippy::too_many_arguments)]
pub fn export(
    py: Python<'_>,
    alloc: Arc<Alloc>,
    data: *mut u8,
    device: i32,
    dtype: DType,
    shape: &[i64],
    strides: &[i64],
) -> PyResult<Py<PyAny>> {
    // Like a buffer export: while a consumer holds the tensor, Python can reach
    // the memory behind the runtime's back, so launches on it run at once.
    alloc
        .exports
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut ctx = Box::new(Ctx {
        alloc,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
    });
    let tensor = DLTensor {
        data: data as *mut c_void,
        device: DLDevice {
            device_type: device,
            device_id: 0,
        },
        ndim: shape.len() as i32,
        dtype: dl_dtype(dtype),
        shape: ctx.shape.as_mut_ptr(),
        strides: ctx.strides.as_mut_ptr(),
        byte_offset: 0,
    };
    let managed = Box::new(DLManagedTensor {
        dl_tensor: tensor,
        manager_ctx: Box::into_raw(ctx) as *mut c_void,
        deleter: Some(delete_managed),
    });
    let raw = Box::into_raw(managed);
    let cap = unsafe {
        ffi::PyCapsule_New(
            raw as *mut c_void,
            NAME.as_ptr() as *const c_char,
            Some(capsule_destructor),
        )
    };
    if cap.is_null() {
        unsafe { delete_managed(raw) };
        return Err(PyErr::fetch(py));
    }
    Ok(unsafe { Py::from_owned_ptr(py, cap) })
}

/// A CUDA DLPack tensor as a kernel argument, used in place. The producer
/// object stays alive as long as the argument does, which keeps the memory.
pub fn import(obj: &Bound<'_, PyAny>) -> PyResult<(ViewTy, ViewVal)> {
    let py = obj.py();
    let (dev_type, _): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
    if dev_type != CUDA && dev_type != CUDA_MANAGED {
        return Err(PyTypeError::new_err(
            "DLPack tensors are accepted from CUDA devices; pass host arrays as NumPy arrays",
        ));
    }
    let cap = obj.call_method0("__dlpack__")?;
    let name = NAME.as_ptr() as *const c_char;
    let m = unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), name) } as *mut DLManagedTensor;
    if m.is_null() {
        return Err(PyBufferError::new_err(
            "__dlpack__ did not return a valid 'dltensor' capsule",
        ));
    }
    let t = unsafe { &(*m).dl_tensor };
    let rank = t.ndim as usize;
    let dtype = from_dl_dtype(t.dtype)
        .ok_or_else(|| PyTypeError::new_err("unsupported DLPack element type"));
    let result = (|| {
        let dtype = dtype?;
        if rank == 0 || rank > 8 {
            return Err(PyTypeError::new_err(format!(
                "arrays passed to kernels have 1 to 8 dimensions, not {rank}"
            )));
        }
        let mut extent = [0i64; 8];
        let mut stride = [0i64; 8];
        // SAFETY: a DLPack producer gives `ndim` shape (and stride) entries.
        extent[..rank].copy_from_slice(unsafe { std::slice::from_raw_parts(t.shape, rank) });
        if t.strides.is_null() {
            stride = contiguous_strides(&extent[..rank], false);
            stride[rank..].fill(0);
        } else {
            stride[..rank].copy_from_slice(unsafe { std::slice::from_raw_parts(t.strides, rank) });
        }
        let data = unsafe { (t.data as *mut u8).add(t.byte_offset as usize) };
        Ok(device_view(obj, data, dtype, rank, extent, stride))
    })();
    // We keep `obj` (the producer) alive instead of the managed tensor: mark the
    // capsule consumed and release the tensor now.
    unsafe {
        ffi::PyCapsule_SetName(cap.as_ptr(), USED.as_ptr() as *const c_char);
        if let Some(del) = (*m).deleter {
            del(m);
        }
    }
    let _ = py;
    result
}
