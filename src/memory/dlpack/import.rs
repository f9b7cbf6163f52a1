//! Importing DLPack tensors as kernel arguments: the tensor is taken from
//! the producer's capsule into an owner of ours that runs its deleter once,
//! when the last view over it is gone.
use super::{
    contiguous_strides, from_dl_dtype, DLManagedTensor, DLManagedTensorVersioned, DLTensor, CPU,
    CUDA, CUDA_MANAGED, FLAG_READ_ONLY, NAME, OWNER, USED, USED_VERSIONED, VERSIONED,
};
use crate::memory::view::{borrowed_view, ViewVal};
use crate::types::ViewTy;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::{c_char, c_void};

/// An imported tensor, taken from its capsule: its deleter runs once, when
/// the last view over it is gone (the owner capsule's destructor).
enum Taken {
    Legacy(*mut DLManagedTensor),
    Versioned(*mut DLManagedTensorVersioned),
}

impl Taken {
    fn tensor(&self) -> &DLTensor {
        // SAFETY: a `Taken` lives only in the `Box` its owner capsule holds (`take`), and
        // its deleter runs only when that `Box` is freed with it (`owner_destructor`, or
        // `take`'s failure path); so while `&self` lives the deleter has not run, and the
        // producer keeps the managed tensor valid and unmoved until it does (DLPack).
        unsafe {
            match self {
                Taken::Legacy(m) => &(**m).dl_tensor,
                Taken::Versioned(m) => &(**m).dl_tensor,
            }
        }
    }
}

/// # Safety
/// Only CPython calls it, with the GIL held, once, as the destructor of a live owner
/// capsule that `take` made: named OWNER (never renamed) over a `Box<Taken>` leaked there,
/// which nothing else frees.
unsafe extern "C" fn owner_destructor(capsule: *mut ffi::PyObject) {
    let p = ffi::PyCapsule_GetPointer(capsule, OWNER.as_ptr() as *const c_char) as *mut Taken;
    if !p.is_null() {
        release(*Box::from_raw(p));
    }
}

/// Hands a taken tensor back to its producer: its deleter, once.
///
/// # Safety
/// `t` points at a live managed tensor taken from a producer's capsule (renamed
/// "used_..."), whose deleter has not run; called once per tensor (the `Taken` is moved
/// in, and its `Box` freed by the caller), and nothing may use the tensor afterwards.
unsafe fn release(t: Taken) {
    match t {
        Taken::Legacy(m) => {
            if let Some(del) = (*m).deleter {
                del(m)
            }
        }
        Taken::Versioned(m) => {
            if let Some(del) = (*m).deleter {
                del(m)
            }
        }
    }
}

/// Asks for a 1.0 capsule; producers that predate it get the plain call.
fn request<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let kw = pyo3::types::PyDict::new(py);
    kw.set_item("max_version", (1, 0))?;
    match obj.call_method("__dlpack__", (), Some(&kw)) {
        Ok(c) => Ok(c),
        Err(e) if e.is_instance_of::<PyTypeError>(py) => obj.call_method0("__dlpack__"),
        Err(e) => Err(e),
    }
}

/// Takes the tensor out of a producer's capsule (renaming it "used_...", as
/// the protocol says) into an owner capsule of ours.
fn take(py: Python<'_>, cap: &Bound<'_, PyAny>) -> PyResult<(Py<PyAny>, *const Taken)> {
    let p = cap.as_ptr();
    // SAFETY: the GIL is held (`py`) and `p` is live (`cap` borrows it). `IsValid` checks
    // that `p` is a capsule with that name and a non-null pointer before `GetPointer` reads
    // it; the names are static NUL-terminated strings (SetName keeps the pointer, so they
    // must outlive the capsule). The rename is DLPack's handover: the producer's destructor
    // now leaves the tensor alone, and its deleter is ours to call (through `Taken`).
    let taken = unsafe {
        if ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr() as *const c_char) == 1 {
            let m = ffi::PyCapsule_GetPointer(p, VERSIONED.as_ptr() as *const c_char)
                as *mut DLManagedTensorVersioned;
            ffi::PyCapsule_SetName(p, USED_VERSIONED.as_ptr() as *const c_char);
            Taken::Versioned(m)
        } else if ffi::PyCapsule_IsValid(p, NAME.as_ptr() as *const c_char) == 1 {
            let m = ffi::PyCapsule_GetPointer(p, NAME.as_ptr() as *const c_char)
                as *mut DLManagedTensor;
            ffi::PyCapsule_SetName(p, USED.as_ptr() as *const c_char);
            Taken::Legacy(m)
        } else {
            ffi::PyErr_Clear();
            return Err(PyBufferError::new_err(
                "__dlpack__ did not return an unused 'dltensor' or 'dltensor_versioned' capsule",
            ));
        }
    };
    let raw = Box::into_raw(Box::new(taken));
    // SAFETY: the GIL is held; `raw` is a just-leaked `Box<Taken>` that only the
    // destructor registered with it frees, and OWNER is a static NUL-terminated name.
    let owner = unsafe {
        ffi::PyCapsule_New(
            raw as *mut c_void,
            OWNER.as_ptr() as *const c_char,
            Some(owner_destructor),
        )
    };
    if owner.is_null() {
        // Still ours to release: run the deleter now.
        // SAFETY: PyCapsule_New failed, so no capsule owns `raw`: it is the `Box` leaked
        // above, taken back once here, and the tensor's deleter has not run yet.
        unsafe { release(*Box::from_raw(raw)) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `owner` is a non-null new reference from PyCapsule_New, now ours; GIL held.
    Ok((unsafe { Py::from_owned_ptr(py, owner) }, raw))
}

/// A DLPack tensor (host or CUDA) as a kernel argument, used in place.
pub fn import(obj: &Bound<'_, PyAny>) -> PyResult<(ViewTy, ViewVal)> {
    let py = obj.py();
    let (dev_type, dev_id): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
    if ![CPU, CUDA, CUDA_MANAGED].contains(&dev_type) {
        return Err(PyTypeError::new_err(format!(
            "DLPack tensors are accepted from the host and CUDA devices, not device type {dev_type}"
        )));
    }
    if dev_type == CUDA {
        // Another GPU's memory is not this process's to launch on (ranks of
        // one node each run on their own GPU): refuse it before a kernel faults.
        let ours = crate::kokkos::device_id()
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        if ours >= 0 && dev_id != ours {
            return Err(PyValueError::new_err(format!(
                "a CUDA tensor on GPU {dev_id} passed to a kernel that runs on GPU {ours} \
                 (pk._native.device_id()): copy it to GPU {ours} first"
            )));
        }
    }
    let cap = request(obj)?;
    // From here on the tensor is ours: dropping `owner` runs its deleter once.
    let (owner, taken) = take(py, &cap)?;
    // SAFETY: `taken` points into the `Box` that `owner` holds; `owner` lives to the end of
    // this function (every early return drops it only after the last use), the `Box` is
    // freed only by its destructor, and nothing writes to it.
    let taken = unsafe { &*taken };
    if let Taken::Versioned(m) = taken {
        // SAFETY: `m` is the producer's live versioned tensor (see `Taken::tensor`); its
        // version is read first, as DLPack asks, and the rest only for a 1.x tensor.
        let version = unsafe { (**m).version };
        if version.major != 1 {
            return Err(PyTypeError::new_err(format!(
                "DLPack {}.{} tensors are not supported (1.x is)",
                version.major, version.minor
            )));
        }
        // SAFETY: as above; a 1.x tensor has `flags` where this struct reads it.
        let flags = unsafe { (**m).flags };
        if flags & FLAG_READ_ONLY != 0 {
            return Err(PyTypeError::new_err(
                "a read-only DLPack tensor cannot be a kernel argument (kernels may write their \
                 arguments): pass a writable copy",
            ));
        }
    }
    let t = taken.tensor();
    let rank = t.ndim as usize;
    let dtype = from_dl_dtype(t.dtype)
        .ok_or_else(|| PyTypeError::new_err("unsupported DLPack element type"))?;
    if rank == 0 || rank > 8 {
        return Err(PyTypeError::new_err(format!(
            "arrays passed to kernels have 1 to 8 dimensions, not {rank}"
        )));
    }
    let mut extent = [0i64; 8];
    let mut stride = [0i64; 8];
    // SAFETY: `t` is live (`owner`); DLPack makes `shape` an array of `ndim` int64 that
    // lives as long as the tensor, and `rank == ndim` (1..=8, checked above); the values
    // are copied out. Not checked: a faulty producer's null `shape` would be UB here.
    extent[..rank].copy_from_slice(unsafe { std::slice::from_raw_parts(t.shape, rank) });
    if t.strides.is_null() {
        stride = contiguous_strides(&extent[..rank], false);
        stride[rank..].fill(0);
    } else {
        // SAFETY: as for `shape`: a non-null `strides` holds `ndim` int64 for the tensor's
        // lifetime, and `rank == ndim`.
        stride[..rank].copy_from_slice(unsafe { std::slice::from_raw_parts(t.strides, rank) });
    }
    // The first element sits at `data + byte_offset` (a device address for a CUDA tensor,
    // never dereferenced on the host): wrapping arithmetic, which needs no bounds proof.
    let data = (t.data as *mut u8).wrapping_add(t.byte_offset as usize);
    Ok(borrowed_view(
        owner.bind(py),
        data,
        dev_type != CPU,
        dtype,
        rank,
        extent,
        stride,
    ))
}
