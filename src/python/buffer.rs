//! Python buffers (NumPy arrays) read by the runtime: requested writable,
//! strided and typed, held for one launch or owned by a wrapping View.
use crate::types::DType;
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;

/// A buffer borrowed from a Python object for the duration of one launch.
pub struct HeldBuffer(pub Box<ffi::Py_buffer>);

impl Drop for HeldBuffer {
    fn drop(&mut self) {
        unsafe { ffi::PyBuffer_Release(&mut *self.0) };
    }
}

/// Requests a writable, strided, typed buffer (what NumPy arrays provide).
pub fn get_buffer(obj: &Bound<'_, PyAny>) -> PyResult<(Box<ffi::Py_buffer>, DType)> {
    let mut buf: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
    let flags = ffi::PyBUF_WRITABLE | ffi::PyBUF_FORMAT | ffi::PyBUF_STRIDES;
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
        unsafe { std::ffi::CStr::from_ptr(buf.format) }
            .to_string_lossy()
            .into_owned()
    };
    match DType::from_format(&fmt) {
        Some(d) if d.size() as isize == buf.itemsize => Ok((buf, d)),
        _ => {
            unsafe { ffi::PyBuffer_Release(&mut *buf) };
            Err(PyBufferError::new_err(format!("unsupported array element format '{fmt}': use bool, int8..uint64, float32 or float64")))
        }
    }
}
