//! NumPy's C API, the two entries element reads use: NumPy scalars made by
//! NumPy's own `PyArray_Scalar`, with each dtype's descriptor, so `v[i]`
//! gives what NumPy's indexing gives without building an array.
//!
//! Why not rust-numpy (0.27.1, which fits PyO3 0.27 and abi3 builds; judged
//! by adopting it and measuring): its `PY_ARRAY_API` reads the table through
//! a call across crates and a once-lock check on every use, and a host `v[i]`
//! read became 5 to 10 ns slower (about 8%, `benches/bench_host_access.py`,
//! builds alternated). Here the entry is read once, at load.
use crate::types::{DType, ALL_DTYPES};
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

pub(super) type ScalarFn =
    unsafe extern "C" fn(*mut c_void, *mut ffi::PyObject, *mut ffi::PyObject) -> *mut ffi::PyObject;
type DescrFn = unsafe extern "C" fn(c_int) -> *mut ffi::PyObject;

pub(super) struct NumpyApi {
    pub(super) scalar: ScalarFn,
    /// A descriptor per `DType` (by discriminant), owned for the process.
    pub(super) descr: Vec<*mut ffi::PyObject>,
}

// SAFETY: `scalar` is a plain fn pointer; the only non-Send part is `descr`, NumPy
// descriptors of built-in types, each a strong reference taken once in `load_api` and never
// released, so they live for the process. They are only handed to NumPy by code holding the
// GIL (`read` has a `Python` token), never dereferenced here.
unsafe impl Send for NumpyApi {}
// SAFETY: the `NumpyApi` is built once (OnceLock) and never mutated; a shared reference
// only reads `scalar` and the `descr` pointers, which are used with the GIL held.
unsafe impl Sync for NumpyApi {}

/// NumPy's C API table: PyArray_DescrFromType is entry 45 and PyArray_Scalar
/// entry 60 (fixed by NumPy's ABI). Checked once against NumPy's own indexing;
/// None (plain Python numbers) if anything differs.
pub(super) fn numpy_api(py: Python<'_>) -> Option<&'static NumpyApi> {
    static API: OnceLock<Option<NumpyApi>> = OnceLock::new();
    API.get_or_init(|| load_api(py).ok().flatten()).as_ref()
}

fn load_api(py: Python<'_>) -> PyResult<Option<NumpyApi>> {
    let np = py.import("numpy")?;
    let cap = py
        .import("numpy._core._multiarray_umath")
        .or_else(|_| py.import("numpy.core._multiarray_umath"))?
        .getattr("_ARRAY_API")?;
    // SAFETY: the GIL is held (`py`) and `cap` is live. NumPy makes `_ARRAY_API` with a NULL
    // name, which a NULL name matches; another object or name gives NULL with an exception,
    // handled below.
    let table = unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), std::ptr::null()) }
        as *const *const c_void;
    if table.is_null() {
        ffi_clear();
        return Ok(None);
    }
    // SAFETY: `table` is NumPy's static `PyArray_API` array (in the extension module, never
    // unloaded), far longer than 61 entries, read as pointers.
    let (from_ptr, scalar_ptr) = unsafe { (*table.add(45), *table.add(60)) };
    if from_ptr.is_null() || scalar_ptr.is_null() {
        return Ok(None); // slots a NumPy ABI removed: the general path serves every access
    }
    // SAFETY: both are non-null; entries 45 and 60 are PyArray_DescrFromType(int) and
    // PyArray_Scalar(void*, PyArray_Descr*, PyObject*) in every NumPy ABI, the types of
    // DescrFn and ScalarFn.
    let (descr_from, scalar): (DescrFn, ScalarFn) = unsafe {
        (
            std::mem::transmute::<*const c_void, DescrFn>(from_ptr),
            std::mem::transmute::<*const c_void, ScalarFn>(scalar_ptr),
        )
    };
    let mut descr = Vec::new();
    for d in ALL_DTYPES {
        // SAFETY: GIL held; `npy_type` gives a built-in type number, for which
        // PyArray_DescrFromType returns a new reference, or NULL with an error (handled).
        let p = unsafe { descr_from(npy_type(d)) };
        if p.is_null() {
            ffi_clear();
            return Ok(None);
        }
        descr.push(p);
    }
    let api = NumpyApi { scalar, descr };
    // One check against NumPy itself: the same value, the same scalar type.
    for d in ALL_DTYPES {
        // 16 bytes: PyArray_Scalar copies a whole element (complex128's 16).
        let mut one = [0u8; 16];
        one[0] = 1;
        // SAFETY: GIL held; the descriptor is a live one from above, and a NULL base is
        // allowed for these non-object types; PyArray_Scalar copies `elsize` bytes (at
        // most 16, complex128) from `one`, which has 16.
        let s = unsafe {
            (api.scalar)(
                one.as_mut_ptr() as *mut c_void,
                api.descr[d as usize],
                std::ptr::null_mut(),
            )
        };
        if s.is_null() {
            ffi_clear();
            return Ok(None);
        }
        // SAFETY: `s` is a non-null new reference from PyArray_Scalar; GIL held.
        let s = unsafe { Bound::from_owned_ptr(py, s) };
        let want = np.getattr(match d {
            DType::Bool => "bool_",
            DType::I64 => "longlong",
            DType::U64 => "ulonglong",
            _ => d.name(),
        })?;
        if !s.get_type().is(&want) {
            return Ok(None);
        }
    }
    Ok(Some(api))
}

fn ffi_clear() {
    // SAFETY: PyErr_Clear needs the GIL; the only caller, `load_api`, holds it (`py`).
    // Open question: this safe fn takes no `Python` token to prove it.
    unsafe { ffi::PyErr_Clear() };
}

/// NumPy's type numbers (NPY_BOOL ... NPY_DOUBLE). 64-bit integers are
/// `long long` (NPY_LONGLONG), as the buffer format of the View says ('q'):
/// NumPy's own indexing of a View's array gives np.longlong, and so does this.
fn npy_type(d: DType) -> c_int {
    match d {
        DType::Bool => 0,
        DType::I8 => 1,
        DType::U8 => 2,
        DType::I16 => 3,
        DType::U16 => 4,
        DType::I32 => 5,
        DType::U32 => 6,
        DType::I64 => 9,
        DType::U64 => 10,
        DType::F32 => 11,
        DType::F64 => 12,
        DType::C64 => 14,
        DType::C128 => 15,
    }
}
