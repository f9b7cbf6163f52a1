//! NumPy scalars for element reads, made by NumPy's own `PyArray_Scalar` with
//! each dtype's descriptor, so `v[i]` gives what NumPy's indexing gives
//! without building an array. NumPy's C API table is rust-numpy's
//! (`PY_ARRAY_API`: it finds the capsule for NumPy 1 and 2 and knows the
//! entries); this file keeps the descriptors and one check against NumPy.
use crate::types::{DType, ALL_DTYPES};
use numpy::npyffi::{NPY_TYPES, PY_ARRAY_API};
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

pub(super) struct NumpyApi {
    /// A descriptor per `DType` (by discriminant), owned for the process.
    descr: Vec<Py<PyAny>>,
}

impl NumpyApi {
    /// The element at `p` as NumPy's scalar of `dtype`.
    ///
    /// # Safety
    /// `p` points at `dtype.size()` readable bytes holding one element of
    /// `dtype` (any alignment: NumPy copies them with memcpy).
    pub(super) unsafe fn scalar(
        &self,
        py: Python<'_>,
        p: *const u8,
        dtype: DType,
    ) -> PyResult<Py<PyAny>> {
        let descr = self.descr[dtype as usize].as_ptr().cast();
        // SAFETY: the caller vouches for `p` (above); the descriptor is `dtype`'s own, alive
        // as long as `self`; a NULL base is allowed for these non-object types; the GIL is
        // held (`py`). PyArray_Scalar copies `elsize` bytes into a new scalar, or returns
        // NULL with an exception set.
        let s = unsafe {
            PY_ARRAY_API.PyArray_Scalar(py, p as *mut c_void, descr, std::ptr::null_mut())
        };
        if s.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: `s` is a non-null new reference from PyArray_Scalar; GIL held.
        Ok(unsafe { Py::from_owned_ptr(py, s) })
    }
}

/// The descriptors, checked once against NumPy's own indexing; None (plain
/// Python numbers) if NumPy cannot be imported or anything differs.
pub(super) fn numpy_api(py: Python<'_>) -> Option<&'static NumpyApi> {
    static API: OnceLock<Option<NumpyApi>> = OnceLock::new();
    API.get_or_init(|| load_api(py).ok().flatten()).as_ref()
}

fn load_api(py: Python<'_>) -> PyResult<Option<NumpyApi>> {
    // First: rust-numpy's table panics where NumPy cannot be imported.
    let np = py.import("numpy")?;
    let mut descr = Vec::new();
    for d in ALL_DTYPES {
        // SAFETY: GIL held; `npy_type` gives a built-in type number, for which
        // PyArray_DescrFromType returns a new reference, or NULL with an error.
        let p = unsafe { PY_ARRAY_API.PyArray_DescrFromType(py, npy_type(d) as c_int) };
        if p.is_null() {
            PyErr::fetch(py);
            return Ok(None);
        }
        // SAFETY: `p` is a non-null new reference (a descriptor is a Python object).
        descr.push(unsafe { Py::from_owned_ptr(py, p as *mut ffi::PyObject) });
    }
    let api = NumpyApi { descr };
    // One check against NumPy itself: the same value, the same scalar type.
    for d in ALL_DTYPES {
        // 16 bytes: a whole element of the largest type (complex128).
        let mut one = [0u8; 16];
        one[0] = 1;
        // SAFETY: `one` holds 16 bytes, at least one element of any dtype.
        let s = unsafe { api.scalar(py, one.as_ptr(), d) }?;
        let want = np.getattr(match d {
            DType::Bool => "bool_",
            DType::I64 => "longlong",
            DType::U64 => "ulonglong",
            _ => d.name(),
        })?;
        if !s.bind(py).get_type().is(&want) {
            return Ok(None);
        }
    }
    Ok(Some(api))
}

/// NumPy's type numbers. 64-bit integers are `long long` (NPY_LONGLONG), as
/// the buffer format of the View says ('q'): NumPy's own indexing of a View's
/// array gives np.longlong, and so does this.
fn npy_type(d: DType) -> NPY_TYPES {
    match d {
        DType::Bool => NPY_TYPES::NPY_BOOL,
        DType::I8 => NPY_TYPES::NPY_BYTE,
        DType::U8 => NPY_TYPES::NPY_UBYTE,
        DType::I16 => NPY_TYPES::NPY_SHORT,
        DType::U16 => NPY_TYPES::NPY_USHORT,
        DType::I32 => NPY_TYPES::NPY_INT,
        DType::U32 => NPY_TYPES::NPY_UINT,
        DType::I64 => NPY_TYPES::NPY_LONGLONG,
        DType::U64 => NPY_TYPES::NPY_ULONGLONG,
        DType::F32 => NPY_TYPES::NPY_FLOAT,
        DType::F64 => NPY_TYPES::NPY_DOUBLE,
        DType::C64 => NPY_TYPES::NPY_CFLOAT,
        DType::C128 => NPY_TYPES::NPY_CDOUBLE,
    }
}
