//! Launch arguments: Python objects -> (type for the signature, raw value for
//! the C ABI). This is the hot path of every launch; it allocates only the
//! small vectors the call needs.
use crate::codegen::ArgTy;
use crate::types::{DType, ViewTy};
use crate::view::{Alloc, View};
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};
use std::sync::Arc;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PkViewArg {
    pub data: *mut std::os::raw::c_void,
    pub extent: [i64; 8],
    pub stride: [i64; 8],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union PkScalarArg {
    pub i: i64,
    pub d: f64,
}

#[derive(Clone)]
pub enum ArgVal {
    View(ViewVal),
    Int(i64),
    Float(f64),
}

/// A view argument. Runtime-owned memory is referenced by allocation and
/// offset so a recorded launch neither allocates nor dangles; the pointer is
/// produced when the kernel actually runs.
#[derive(Clone)]
pub struct ViewVal {
    pub raw: PkViewArg,
    pub alloc: Arc<Alloc>,
    pub offset: isize,
    /// Byte range touched, relative to the allocation.
    pub range: (isize, isize),
}

unsafe impl Send for ViewVal {}

impl ViewVal {
    pub fn materialize(&self) -> PkViewArg {
        let mut a = self.raw;
        a.data = unsafe { self.alloc.ptr().offset(self.offset) } as *mut std::os::raw::c_void;
        a
    }
    pub fn foreign(&self) -> bool {
        self.alloc.is_foreign()
    }
}

impl ArgVal {
    /// The C ABI scalar for a number argument, converted to the kernel's dtype.
    pub fn scalar(&self, dt: DType) -> PkScalarArg {
        match (self, dt.is_float()) {
            (ArgVal::Int(i), false) => PkScalarArg { i: *i },
            (ArgVal::Int(i), true) => PkScalarArg { d: *i as f64 },
            (ArgVal::Float(f), true) => PkScalarArg { d: *f },
            (ArgVal::Float(f), false) => PkScalarArg { i: *f as i64 },
            (ArgVal::View(_), _) => unreachable!("a scalar slot holds a number"),
        }
    }
}

/// A buffer borrowed from a Python object for the duration of one launch.
pub struct HeldBuffer(pub Box<ffi::Py_buffer>, pub DType);

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

fn view_arg(v: &View) -> (ArgTy, ArgVal) {
    let mut a = PkViewArg {
        data: std::ptr::null_mut(),
        extent: [0; 8],
        stride: [0; 8],
    };
    a.extent[..v.rank].copy_from_slice(&v.extents[..v.rank]);
    a.stride[..v.rank].copy_from_slice(&v.strides[..v.rank]);
    (
        ArgTy::View(ViewTy {
            dtype: v.dtype,
            rank: v.rank as u8,
            layout: v.kernel_layout,
            atomic: v.atomic.load(std::sync::atomic::Ordering::Relaxed),
        }),
        ArgVal::View(ViewVal {
            raw: a,
            alloc: v.alloc.clone(),
            offset: v.offset,
            range: v.byte_range(),
        }),
    )
}

/// Classifies one argument. NumPy arrays are borrowed into `held`.
pub fn classify(obj: &Bound<'_, PyAny>, held: &mut Vec<HeldBuffer>) -> PyResult<(ArgTy, ArgVal)> {
    if let Ok(v) = obj.cast::<View>() {
        return Ok(view_arg(&v.borrow()));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok((
            ArgTy::Scalar {
                dtype: DType::Bool,
                weak: false,
            },
            ArgVal::Int(b.is_true() as i64),
        ));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        let v: i64 = i
            .extract()
            .map_err(|_| PyTypeError::new_err("integer argument does not fit in 64 bits"))?;
        return Ok((
            ArgTy::Scalar {
                dtype: DType::I64,
                weak: true,
            },
            ArgVal::Int(v),
        ));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok((
            ArgTy::Scalar {
                dtype: DType::F64,
                weak: true,
            },
            ArgVal::Float(f.value()),
        ));
    }
    // NumPy scalars (np.float32(1), np.int16(3)) keep their dtype.
    if let Ok(dt) = obj.getattr(pyo3::intern!(obj.py(), "dtype")) {
        if obj.hasattr(pyo3::intern!(obj.py(), "item"))?
            && obj
                .getattr(pyo3::intern!(obj.py(), "ndim"))?
                .extract::<i64>()?
                == 0
        {
            let ch: String = dt.getattr("char")?.extract()?;
            let d = DType::from_format(&ch).ok_or_else(|| {
                PyTypeError::new_err(format!("unsupported NumPy scalar type '{ch}'"))
            })?;
            let item = obj.call_method0("item")?;
            let val = if d.is_float() {
                ArgVal::Float(item.extract()?)
            } else {
                ArgVal::Int(
                    item.extract::<i64>()
                        .or_else(|_| item.extract::<u64>().map(|u| u as i64))?,
                )
            };
            return Ok((
                ArgTy::Scalar {
                    dtype: d,
                    weak: false,
                },
                val,
            ));
        }
    }
    let (buf, dtype) = match get_buffer(obj) {
        Ok(b) => b,
        // Device arrays (CuPy, anything with the CUDA array interface) have no
        // host buffer; kernels in the Cuda space use them in place. Checked
        // last: a failed attribute lookup costs more than a buffer request.
        Err(e) => match obj.getattr(pyo3::intern!(obj.py(), "__cuda_array_interface__")) {
            Ok(cai) => return cuda_array(obj, &cai),
            Err(_)
                if obj
                    .hasattr(pyo3::intern!(obj.py(), "__dlpack__"))
                    .unwrap_or(false) =>
            {
                return crate::dlpack::import(obj)
            }
            Err(_) => return Err(e),
        },
    };
    let rank = buf.ndim as usize;
    if rank == 0 || rank > 8 {
        return Err(PyTypeError::new_err(format!(
            "arrays passed to kernels have 1 to 8 dimensions, not {rank}"
        )));
    }
    let wrapped = View::wrap_raw(&buf, dtype)?;
    let r = view_arg(&wrapped);
    held.push(HeldBuffer(buf, dtype));
    Ok(r)
}

/// A view over device memory described by `__cuda_array_interface__` (v3).
fn cuda_array(obj: &Bound<'_, PyAny>, cai: &Bound<'_, PyAny>) -> PyResult<(ArgTy, ArgVal)> {
    let get = |k: &str| cai.get_item(k);
    let shape: Vec<i64> = get("shape")?.extract()?;
    let typestr: String = get("typestr")?.extract()?;
    let (addr, _readonly): (usize, bool) = get("data")?.extract()?;
    let strides: Option<Vec<i64>> = get("strides")
        .ok()
        .filter(|s| !s.is_none())
        .map(|s| s.extract())
        .transpose()?;
    let kind = typestr.chars().nth(1).unwrap_or('?');
    let size: usize = typestr.get(2..).and_then(|s| s.parse().ok()).unwrap_or(0);
    let dtype = match (kind, size) {
        ('b', 1) => DType::Bool,
        ('i', 1) => DType::I8,
        ('i', 2) => DType::I16,
        ('i', 4) => DType::I32,
        ('i', 8) => DType::I64,
        ('u', 1) => DType::U8,
        ('u', 2) => DType::U16,
        ('u', 4) => DType::U32,
        ('u', 8) => DType::U64,
        ('f', 4) => DType::F32,
        ('f', 8) => DType::F64,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "unsupported CUDA array element type '{typestr}'"
            )))
        }
    };
    let rank = shape.len();
    if rank == 0 || rank > 8 {
        return Err(PyTypeError::new_err(format!(
            "arrays passed to kernels have 1 to 8 dimensions, not {rank}"
        )));
    }
    let item = dtype.size() as i64;
    let mut stride = match &strides {
        None => crate::view::contiguous_strides(&shape, false),
        Some(s) => {
            let mut out = [0i64; 8];
            for (d, b) in s.iter().enumerate() {
                if b % item != 0 {
                    return Err(PyTypeError::new_err(
                        "CUDA array strides are not a multiple of the item size",
                    ));
                }
                out[d] = b / item;
            }
            out
        }
    };
    stride[rank..].fill(0);
    let mut extent = [0i64; 8];
    extent[..rank].copy_from_slice(&shape);
    Ok(device_view(
        obj,
        addr as *mut u8,
        dtype,
        rank,
        extent,
        stride,
    ))
}

/// A kernel argument over borrowed device memory (CUDA array interface or
/// DLPack); `owner` is kept alive with it, which keeps the memory valid.
pub fn device_view(
    owner: &Bound<'_, PyAny>,
    data: *mut u8,
    dtype: DType,
    rank: usize,
    extent: [i64; 8],
    stride: [i64; 8],
) -> (ArgTy, ArgVal) {
    let item = dtype.size() as isize;
    let (mut lo, mut hi) = (0isize, item);
    for d in 0..rank {
        let span = (extent[d] - 1).max(0) as isize * stride[d] as isize * item;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    if extent[..rank].contains(&0) {
        hi = lo;
    }
    let layout = crate::view::classify(&extent[..rank], &stride, crate::types::Layout::Right);
    let alloc = Alloc::device_borrowed(data, owner.clone().unbind());
    let raw = PkViewArg {
        data: std::ptr::null_mut(),
        extent,
        stride,
    };
    (
        ArgTy::View(ViewTy {
            dtype,
            rank: rank as u8,
            layout,
            atomic: false,
        }),
        ArgVal::View(ViewVal {
            raw,
            alloc,
            offset: 0,
            range: (lo, hi),
        }),
    )
}
