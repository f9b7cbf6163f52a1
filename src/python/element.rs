//! Host element access (`v[i]`, `v[i, j]`, `v[i] = x`) at NumPy's speed: a
//! full integer index is served here, without building an array; anything
//! else (slices, partial indices, arrays of indices) goes to the package's
//! general path. Reads give NumPy scalars as NumPy's indexing does, made by
//! NumPy's own `PyArray_Scalar`.
use super::bridge::py_err;
use super::interop::Window;
use super::lazy::{flush_host, take_swallowed};
use super::numpy_api::numpy_api;
use crate::types::DType;
use pyo3::exceptions::{PyIndexError, PyOverflowError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyTuple};
use std::os::raw::c_void;

/// Byte offset (from the view's first element) of `key` when it is a full
/// integer index; None for every other key.
pub fn offset_of(key: &Bound<'_, PyAny>, w: &Window<'_>) -> PyResult<Option<isize>> {
    let item = w.dtype.size() as isize;
    // Asked first: for the common integer key, `cast` would build an error.
    let tuple = key
        .is_instance_of::<PyTuple>()
        .then(|| key.cast::<PyTuple>().ok());
    if let Some(Some(t)) = tuple {
        if t.len() != w.shape.len() {
            return Ok(None);
        }
        let mut off = 0isize;
        for (d, k) in t.iter().enumerate() {
            match index(&k, w.shape[d], d)? {
                Some(i) => off += i * w.strides[d] as isize * item,
                None => return Ok(None),
            }
        }
        return Ok(Some(off));
    }
    if w.shape.len() != 1 {
        return Ok(None);
    }
    Ok(index(key, w.shape[0], 0)?.map(|i| i * w.strides[0] as isize * item))
}

/// The leading integer indices of `key` when it is an int or a tuple of ints
/// shorter than the rank (`m[i]` of a matrix: a row); None otherwise.
pub fn leading_ints(key: &Bound<'_, PyAny>, w: &Window<'_>) -> PyResult<Option<Vec<i64>>> {
    let keys: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    if keys.is_empty() || keys.len() >= w.shape.len() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(keys.len());
    for (d, k) in keys.iter().enumerate() {
        match index(k, w.shape[d], d)? {
            Some(i) => out.push(i as i64),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// An integer index along a dimension of size `n` (negative counts from the
/// end), bounds-checked as NumPy does; None when `k` is not an integer.
fn index(k: &Bound<'_, PyAny>, n: i64, axis: usize) -> PyResult<Option<isize>> {
    // The type's `nb_index` slot, as `PyIndex_Check` reads it (pyo3-ffi 0.27
    // links that one under PyPy's name in abi3 builds): `hasattr(k,
    // "__index__")` built and dropped an AttributeError for every slice key,
    // a fifth of the time of `v[i, :]`.
    // SAFETY: `k` is a live object (a Bound) and the GIL is held; the type
    // object outlives the call, and `PyType_GetSlot` only reads its slots.
    let has_index = k.is_instance_of::<PyInt>()
        || unsafe {
            !pyo3::ffi::PyType_GetSlot(k.get_type().as_type_ptr(), pyo3::ffi::Py_nb_index).is_null()
        };
    if k.is_instance_of::<PyBool>() || !has_index {
        return Ok(None);
    }
    let i: i64 = match k.extract() {
        Ok(i) => i,
        Err(_) => return Ok(None),
    };
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return Err(PyIndexError::new_err(format!(
            "index {i} is out of bounds for axis {axis} with size {n}"
        )));
    }
    Ok(Some(j as isize))
}

/// The element at `off`, pending work on the view's memory run first.
pub fn read(py: Python<'_>, w: &Window<'_>, off: isize) -> PyResult<Py<PyAny>> {
    take_swallowed(py, w.alloc.id())?;
    flush_host(py, w.alloc)?;
    // `offset_of` bounds-checked every index against the extents (so none is 0),
    // making `w.offset + off` the byte offset of one element of this view, inside the
    // allocation.
    let at = w.offset + off;
    let mut copied = [0u8; 16]; // (the largest element: complex128)
    let p = if w
        .alloc
        .device_element(at as usize, &mut copied[..w.dtype.size()])
        .map_err(py_err)?
    {
        copied.as_ptr() as *mut u8
    } else {
        w.alloc.host_read().map_err(py_err)?;
        // SAFETY: `at` is inside the allocation (above); `w` borrows the View, whose
        // `Arc<Alloc>` keeps the memory alive. `host_read` refused device-only memory,
        // so `ptr()` is real host memory.
        unsafe { w.alloc.ptr().map_err(py_err)?.offset(at) }
    };
    if let Some(api) = numpy_api(py) {
        // SAFETY: `p` points at one element of `w.dtype`, in `copied` (a local that
        // outlives this call) or in live host memory (above), and `flush_host` waited
        // for pending launches and a running dispatch. PyArray_Scalar
        // (entry 60, checked in `load_api`) copies `elsize` bytes from `p` (memcpy: no
        // alignment needed) into a new scalar; the descriptor is `w.dtype`'s, kept alive by
        // the table; a NULL base is allowed for these non-object types; the GIL is held.
        let s = unsafe {
            (api.scalar)(
                p as *mut c_void,
                api.descr[w.dtype as usize],
                std::ptr::null_mut(),
            )
        };
        if !s.is_null() {
            // SAFETY: `s` is a non-null new reference from PyArray_Scalar; GIL held.
            return Ok(unsafe { Py::from_owned_ptr(py, s) });
        }
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `p` is one initialized element of `w.dtype`, in `copied` or in live host
    // memory (above);
    // `plain` reads it unaligned (a wrapped NumPy array need not be aligned).
    unsafe { plain(py, p, w.dtype) }
}

/// Stores `value` at `off` when it is a plain number; false otherwise (the
/// general path converts it).
pub fn write(
    py: Python<'_>,
    w: &Window<'_>,
    off: isize,
    value: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let number = value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyInt>();
    if !number || w.dtype.is_complex() {
        return Ok(false);
    }
    let d = w.dtype;
    // Convert first: a value the dtype cannot take raises before anything runs.
    let bits: u64 = if d.is_float() {
        let x: f64 = value.extract()?;
        if d == DType::F32 {
            (x as f32).to_bits() as u64
        } else {
            x.to_bits()
        }
    } else if d == DType::Bool {
        value.is_truthy()? as u64
    } else {
        let i: i128 = match value.cast::<PyFloat>() {
            Ok(f) => f.value().trunc() as i128, // NumPy's float-to-int cast truncates
            Err(_) => value.extract()?,
        };
        let (lo, hi) = int_range(d);
        if i < lo || i > hi {
            return Err(PyOverflowError::new_err(format!(
                "Python integer {i} out of bounds for {}",
                d.name()
            )));
        }
        i as u64
    };
    take_swallowed(py, w.alloc.id())?;
    flush_host(py, w.alloc)?;
    w.alloc.host_sync().map_err(py_err)?;
    // SAFETY: as in `read`: the indices were bounds-checked, so this is one element of the
    // view inside its live allocation, host memory (`host_sync` refused device-only memory).
    let p = unsafe { w.alloc.ptr().map_err(py_err)?.offset(w.offset + off) };
    // SAFETY: `p` is one element of `d` in live host memory, written with `d`'s own size.
    // The GIL is held throughout, so no other element access runs, and `flush_host` waited
    // for pending launches and a running dispatch; a kernel another thread starts after that
    // (or NumPy code on an export without the GIL) would race, as in NumPy. The stores are
    // unaligned ones: a wrapped NumPy array need not be aligned.
    unsafe {
        match d.size() {
            1 => *p = bits as u8,
            2 => (p as *mut u16).write_unaligned(bits as u16),
            4 => (p as *mut u32).write_unaligned(bits as u32),
            _ => (p as *mut u64).write_unaligned(bits),
        }
    }
    Ok(true)
}

fn int_range(d: DType) -> (i128, i128) {
    let bits = 8 * d.size() as u32;
    if d.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// Python numbers, when NumPy's scalar constructor cannot be reached.
///
/// # Safety
/// `p` points at one initialized element of `d` (`d.size()` bytes, any alignment), in
/// memory that stays alive and unwritten during the call.
unsafe fn plain(py: Python<'_>, p: *const u8, d: DType) -> PyResult<Py<PyAny>> {
    Ok(match d {
        DType::F64 => (p as *const f64)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::F32 => ((p as *const f32).read_unaligned() as f64)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::Bool => (*p != 0).into_pyobject(py)?.to_owned().into_any().unbind(),
        DType::I8 => (p as *const i8)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::I16 => (p as *const i16)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::I32 => (p as *const i32)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::I64 => (p as *const i64)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::U8 => (*p).into_pyobject(py)?.into_any().unbind(),
        DType::U16 => (p as *const u16)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::U32 => (p as *const u32)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::U64 => (p as *const u64)
            .read_unaligned()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        DType::C64 => {
            let c = p as *const f32;
            pyo3::types::PyComplex::from_doubles(
                py,
                c.read_unaligned() as f64,
                c.add(1).read_unaligned() as f64,
            )
            .into_any()
            .unbind()
        }
        DType::C128 => {
            let c = p as *const f64;
            pyo3::types::PyComplex::from_doubles(py, c.read_unaligned(), c.add(1).read_unaligned())
                .into_any()
                .unbind()
        }
    })
}
