//! Memory exchanged with Python libraries: buffers imported (NumPy arrays,
//! requested writable, strided and typed; held for one launch or owned by a
//! wrapping View) and exported (the buffer protocol, the CUDA array interface).
use crate::types::DType;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::os::raw::{c_char, c_int, c_void};

/// A buffer borrowed from a Python object for the duration of one launch.
pub struct HeldBuffer(pub Box<ffi::Py_buffer>);

impl Drop for HeldBuffer {
    fn drop(&mut self) {
        // SAFETY: a `HeldBuffer` is only made from a buffer that `get_buffer` obtained
        // (`classify`), boxed so it never moved, and released once, here (a second release
        // would see `obj` NULL and do nothing). The GIL: it is dropped in `launch_with`
        // outside `detached`, and being !Send (raw pointers) it cannot enter a detached
        // closure. Open question: the type itself proves neither (public field, no token).
        unsafe { ffi::PyBuffer_Release(&mut *self.0) };
    }
}

/// Requests a writable, strided, typed buffer (what NumPy arrays provide).
pub fn get_buffer(obj: &Bound<'_, PyAny>) -> PyResult<(Box<ffi::Py_buffer>, DType)> {
    // SAFETY: `Py_buffer` is a C struct of pointers and integers, for which all-zero bytes
    // are a valid value (null pointers, zero sizes).
    let mut buf: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
    let flags = ffi::PyBUF_WRITABLE | ffi::PyBUF_FORMAT | ffi::PyBUF_STRIDES;
    // SAFETY: the GIL is held (`obj` is a `Bound`) and `obj` is live; `buf` is a writable
    // `Py_buffer` on the heap, so it keeps its address until released. On failure an
    // exception is set and there is nothing to release.
    if unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *buf, flags) } != 0 {
        let err = PyErr::take(obj.py());
        let why = err.map(|e| e.to_string()).unwrap_or_default();
        return Err(PyTypeError::new_err(format!(
            "expected a View, a writable NumPy array or a number, got {} ({why})",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )));
    }
    let fmt = if buf.format.is_null() {
        "B".to_string()
    } else {
        // SAFETY: PyBUF_FORMAT was asked for and the request succeeded, so a non-null
        // `format` is a NUL-terminated string the exporter keeps until the buffer is
        // released (not before this copy).
        unsafe { std::ffi::CStr::from_ptr(buf.format) }
            .to_string_lossy()
            .into_owned()
    };
    match DType::from_format(&fmt) {
        Some(d) if d.size() as isize == buf.itemsize => Ok((buf, d)),
        _ => {
            // SAFETY: `buf` was filled by the successful request above and is released once,
            // here (it is dropped, not returned); the GIL is held (`obj`).
            unsafe { ffi::PyBuffer_Release(&mut *buf) };
            Err(PyBufferError::new_err(format!("unsupported array element format '{fmt}': use bool, int8..uint64, float32 or float64")))
        }
    }
}

/// Rank, extents and element strides of an imported buffer.
pub fn geometry(b: &ffi::Py_buffer, dtype: DType) -> PyResult<(usize, [i64; 8], [i64; 8])> {
    let rank = b.ndim as usize;
    if rank == 0 || rank > 8 {
        return Err(PyValueError::new_err(format!(
            "can wrap arrays of 1 to 8 dimensions, not {rank}"
        )));
    }
    let mut extents = [0i64; 8];
    let mut strides = [0i64; 8];
    let item = dtype.size() as isize;
    for d in 0..rank {
        // SAFETY: `d < ndim`, and `b` comes from `get_buffer` (its callers: `View::wrap`,
        // and `classify` through `View::wrap_raw`), whose PyBUF_STRIDES request makes the
        // exporter fill non-null `shape` and `strides` arrays of `ndim` Py_ssize_t, valid
        // until the buffer is released. Open question: `geometry` is a safe fn and cannot
        // tell such a buffer from any other `Py_buffer`.
        let (e, s) = unsafe { (*b.shape.add(d), *b.strides.add(d)) };
        if s % item != 0 {
            return Err(PyValueError::new_err(
                "array strides are not a multiple of the item size",
            ));
        }
        extents[d] = e as i64;
        strides[d] = (s / item) as i64;
    }
    Ok((rank, extents, strides))
}

/// Whether `strides` (in elements) lay `shape` out as one run in C order, or
/// with `fortran` in Fortran order (extents of 0 or 1 take any stride).
pub(super) fn one_run(shape: &[i64], strides: &[i64], fortran: bool) -> bool {
    if shape.contains(&0) {
        return true; // no elements: contiguous in any order (CPython's rule)
    }
    let mut want = 1;
    let mut next = |(e, s): (&i64, &i64)| {
        let ok = *e <= 1 || *s == want;
        want *= *e;
        ok
    };
    if fortran {
        shape.iter().zip(strides).all(&mut next)
    } else {
        shape.iter().zip(strides).rev().all(&mut next)
    }
}

/// Refuses a request for contiguous memory (C, Fortran, either, or no strides
/// at all) that a strided View cannot meet: answered, it would hand over the
/// wrong elements (mpi4py asks for either order).
pub(super) fn check_request(shape: &[i64], strides: &[i64], flags: c_int) -> PyResult<()> {
    let asks = |bits: c_int| flags & bits == bits;
    let (c, f) = (
        one_run(shape, strides, false),
        one_run(shape, strides, true),
    );
    let c_order = asks(ffi::PyBUF_C_CONTIGUOUS) || !asks(ffi::PyBUF_STRIDES);
    let met = if c_order {
        c // (without strides the consumer assumes C order)
    } else if asks(ffi::PyBUF_F_CONTIGUOUS) {
        f
    } else if asks(ffi::PyBUF_ANY_CONTIGUOUS) {
        c || f
    } else {
        true
    };
    if !met {
        let (what, kind) = if c_order {
            (
                "not C-contiguous (column-major, or a strided subview)",
                "C-ordered",
            )
        } else {
            ("not contiguous (a strided subview)", "contiguous")
        };
        return Err(PyBufferError::new_err(format!(
            "this View is {what}: the consumer asked for {kind} memory; \
             pass a copy (np.ascontiguousarray) or a contiguous View"
        )));
    }
    Ok(())
}

/// Fills a buffer-protocol export of `data` (element `strides`) for
/// `owner` (a new reference the export keeps), honouring the consumer's flags
/// (`check_request`).
///
/// # Safety
/// `v` is the Py_buffer the interpreter passed to `__getbuffer__`; `release`
/// must see it again. `owner` is a strong reference that `v` takes over (PyBuffer_Release
/// drops it), and it keeps `data` valid for every element of `shape`/`strides` until then;
/// `shape.len() <= 8` and `strides` has an entry per extent. On success `v.shape` and
/// `v.strides` point into a block that only `release` frees.
pub unsafe fn export(
    v: &mut ffi::Py_buffer,
    owner: *mut ffi::PyObject,
    data: *mut c_void,
    dtype: DType,
    shape: &[i64],
    strides: &[i64],
    flags: c_int,
) -> PyResult<()> {
    check_request(shape, strides, flags)?;
    let item = dtype.size() as isize;
    // shape and strides live until `release` frees them.
    let mut meta: Box<[isize; 16]> = Box::new([0; 16]);
    for (d, (e, s)) in shape.iter().zip(strides).enumerate() {
        meta[d] = *e as isize;
        meta[8 + d] = *s as isize * item;
    }
    let raw = Box::into_raw(meta) as *mut isize;
    v.obj = owner;
    v.buf = data;
    v.len = shape.iter().product::<i64>() as isize * item;
    v.readonly = 0;
    v.itemsize = item;
    v.format = if (flags & ffi::PyBUF_FORMAT) == ffi::PyBUF_FORMAT {
        format_ptr(dtype)
    } else {
        std::ptr::null_mut()
    };
    v.ndim = shape.len() as c_int;
    v.shape = if (flags & ffi::PyBUF_ND) == ffi::PyBUF_ND {
        raw
    } else {
        std::ptr::null_mut()
    };
    v.strides = if (flags & ffi::PyBUF_STRIDES) == ffi::PyBUF_STRIDES {
        raw.add(8)
    } else {
        std::ptr::null_mut()
    };
    v.suboffsets = std::ptr::null_mut();
    v.internal = raw as *mut c_void;
    Ok(())
}

/// Frees what `export` allocated.
///
/// # Safety
/// `v` was filled by `export` (its `internal` is the `[isize; 16]` block leaked there, or
/// null), and the consumer is done with it (CPython calls `__releasebuffer__` once, from
/// PyBuffer_Release); `internal` is nulled, so a repeated call frees nothing.
pub unsafe fn release(v: &mut ffi::Py_buffer) {
    if !v.internal.is_null() {
        drop(Box::from_raw(v.internal as *mut [isize; 16]));
        v.internal = std::ptr::null_mut();
    }
}

fn format_ptr(d: DType) -> *mut c_char {
    const F: [&[u8]; 13] = [
        b"?\0", b"b\0", b"h\0", b"i\0", b"q\0", b"B\0", b"H\0", b"I\0", b"Q\0", b"f\0", b"d\0",
        b"Zf\0", b"Zd\0",
    ];
    F[d as usize].as_ptr() as *mut c_char
}

/// The CUDA Array Interface (version 3) of device memory at `data`.
pub fn cuda_array_interface<'py>(
    py: Python<'py>,
    data: usize,
    dtype: DType,
    shape: &[i64],
    strides: &[i64],
) -> PyResult<Bound<'py, PyDict>> {
    const T: [&str; 13] = [
        "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8", "<c8", "<c16",
    ];
    let item = dtype.size() as i64;
    let bytes: Vec<i64> = strides[..shape.len()].iter().map(|s| s * item).collect();
    let d = PyDict::new(py);
    d.set_item("shape", PyTuple::new(py, shape)?)?;
    d.set_item("strides", PyTuple::new(py, bytes)?)?;
    d.set_item("typestr", T[dtype as usize])?;
    d.set_item("data", (data, false))?;
    d.set_item("version", 3)?;
    Ok(d)
}
