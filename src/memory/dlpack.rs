//! DLPack (the `__dlpack__` protocol, legacy and 1.0 versioned capsules):
//! views export themselves as capsules (host memory, or their device mirror),
//! and DLPack tensors (JAX, PyTorch, CuPy; host ones without the buffer
//! protocol) are accepted as kernel arguments in place. An imported tensor is
//! kept alive (its producer may free the memory in its deleter) until the
//! view over it is done, then its deleter runs once.
//!
//! Why not dlpark (0.10, judged): its Python capsules need PyO3 0.30 (the
//! core is on 0.27); without them it offers the structs below, which are
//! DLPack's fixed ABI, and the capsule code would stay. Worth taking with
//! the next PyO3 upgrade.
use super::alloc::Alloc;
use super::geometry::contiguous_strides;
use crate::types::DType;
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

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// DLPack 1.0's managed tensor: versioned, with flags.
#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

const NAME: &[u8] = b"dltensor\0";
const USED: &[u8] = b"used_dltensor\0";
const VERSIONED: &[u8] = b"dltensor_versioned\0";
const USED_VERSIONED: &[u8] = b"used_dltensor_versioned\0";
const OWNER: &[u8] = b"pykokkos.dlpack_tensor\0";
const FLAG_READ_ONLY: u64 = 1;

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
        DType::C64 => (5, 64),
        DType::C128 => (5, 128),
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
        (5, 64, 1) => DType::C64,
        (5, 128, 1) => DType::C128,
        _ => return None,
    })
}

/// What an exported tensor keeps alive: the allocation and its shape arrays.
struct Ctx {
    alloc: Arc<Alloc>,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

/// The deleter of a legacy tensor `export` made.
///
/// # Safety
/// `m` is null or a `DLManagedTensor` that `export` leaked from a `Box` (its `manager_ctx`
/// a leaked `Ctx`), not deleted before: DLPack lets the consumer call it once, and our
/// capsule destructor calls it only while no consumer took the tensor. The tensor and its
/// shape arrays must not be used afterwards. Any thread may call it: it frees Rust boxes
/// and drops an `Arc<Alloc>`, whose own drop takes the GIL where it needs it.
unsafe extern "C" fn delete_managed(m: *mut DLManagedTensor) {
    if !m.is_null() {
        let m = Box::from_raw(m);
        release_ctx(m.manager_ctx);
    }
}

/// The deleter of a versioned tensor `export` made.
///
/// # Safety
/// As `delete_managed`, for a `DLManagedTensorVersioned` that `export` leaked.
unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        let m = Box::from_raw(m);
        release_ctx(m.manager_ctx);
    }
}

/// Frees an export's `Ctx` and ends the export's count on its allocation.
///
/// # Safety
/// `ctx` is the `manager_ctx` that `export` leaked from a `Box<Ctx>`, released only this
/// once (by the tensor's deleter), after which the tensor's shape and strides dangle.
unsafe fn release_ctx(ctx: *mut c_void) {
    let ctx = Box::from_raw(ctx as *mut Ctx);
    ctx.alloc
        .exports
        .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
}

/// Capsule destructors: free the tensor unless a consumer took it (and renamed it).
///
/// # Safety
/// Only CPython calls it, with the GIL held, once, as the destructor of a live capsule
/// that `export` made named "dltensor" over a `DLManagedTensor`. A consumer that took the
/// tensor renamed the capsule "used_dltensor" and owns the deleter call: `IsValid` then
/// fails and nothing is freed here.
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    let name = NAME.as_ptr() as *const c_char;
    if ffi::PyCapsule_IsValid(capsule, name) == 1 {
        delete_managed(ffi::PyCapsule_GetPointer(capsule, name) as *mut DLManagedTensor);
    }
}

/// # Safety
/// As `capsule_destructor`, for a "dltensor_versioned" capsule over a
/// `DLManagedTensorVersioned`.
unsafe extern "C" fn versioned_destructor(capsule: *mut ffi::PyObject) {
    let name = VERSIONED.as_ptr() as *const c_char;
    if ffi::PyCapsule_IsValid(capsule, name) == 1 {
        delete_versioned(ffi::PyCapsule_GetPointer(capsule, name) as *mut DLManagedTensorVersioned);
    }
}

/// The device a DLPack export of `alloc` lives on: its device copy once a
/// CUDA kernel used it (managed memory counts as host memory here).
fn device_type(alloc: &Alloc) -> i32 {
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

/// `__dlpack_device__`: the device type and, for device memory, the GPU
/// this process's kernels run on (ranks of one node each have their own).
pub fn device(alloc: &Alloc) -> (i32, i32) {
    match device_type(alloc) {
        CUDA => (CUDA, crate::kokkos::device_id().unwrap_or(0).max(0)),
        other => (other, 0),
    }
}

/// The start of the copy an export hands out, made current: the device copy
/// (counted newer: the consumer may write it) or host memory; and its device.
pub fn current_copy(alloc: &Alloc) -> crate::errors::PkResult<(*mut u8, (i32, i32))> {
    let device = device(alloc);
    if device.0 == CUDA {
        // The capsule is consumed on the consumer's stream: finish ours.
        crate::kokkos::settle();
        Ok((alloc.device_ptr(true)?, device))
    } else {
        alloc.host_sync()?;
        Ok((alloc.ptr()?, device))
    }
}

/// A DLPack capsule for `data` (already current on `device`): a 1.0
/// versioned one when the consumer asked for it (`max_version` >= 1.0).
#[allow(clippy::too_many_arguments)]
pub fn export(
    py: Python<'_>,
    alloc: Arc<Alloc>,
    data: *mut u8,
    device: (i32, i32),
    dtype: DType,
    shape: &[i64],
    strides: &[i64],
    versioned: bool,
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
            device_type: device.0,
            device_id: device.1,
        },
        ndim: shape.len() as i32,
        dtype: dl_dtype(dtype),
        shape: ctx.shape.as_mut_ptr(),
        strides: ctx.strides.as_mut_ptr(),
        byte_offset: 0,
    };
    let ctx = Box::into_raw(ctx) as *mut c_void;
    // SAFETY: the GIL is held (`py`). Each capsule gets a pointer just leaked from a `Box`
    // of the type its destructor frees, and a static NUL-terminated name that outlives it.
    // `shape`/`strides` point into `ctx`'s Vec buffers, which stay put until the deleter
    // frees `ctx`; `data` stays valid while `ctx` holds the `Arc<Alloc>` (memory is freed
    // only in `Alloc::drop`). If PyCapsule_New fails no one else has `raw`, so its deleter
    // runs here, once, and also gives back `ctx` and the export count.
    let cap = unsafe {
        if versioned {
            let raw = Box::into_raw(Box::new(DLManagedTensorVersioned {
                version: DLPackVersion { major: 1, minor: 0 },
                manager_ctx: ctx,
                deleter: Some(delete_versioned),
                flags: 0,
                dl_tensor: tensor,
            }));
            let cap = ffi::PyCapsule_New(
                raw as *mut c_void,
                VERSIONED.as_ptr() as *const c_char,
                Some(versioned_destructor),
            );
            if cap.is_null() {
                delete_versioned(raw);
            }
            cap
        } else {
            let raw = Box::into_raw(Box::new(DLManagedTensor {
                dl_tensor: tensor,
                manager_ctx: ctx,
                deleter: Some(delete_managed),
            }));
            let cap = ffi::PyCapsule_New(
                raw as *mut c_void,
                NAME.as_ptr() as *const c_char,
                Some(capsule_destructor),
            );
            if cap.is_null() {
                delete_managed(raw);
            }
            cap
        }
    };
    if cap.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `cap` is a non-null new reference from PyCapsule_New, which we now own; the
    // GIL is held.
    Ok(unsafe { Py::from_owned_ptr(py, cap) })
}

pub mod import;
