//! Launch arguments from Python objects: (type for the signature, value for
//! the C ABI). Views, NumPy arrays (borrowed for the launch), numbers, NumPy
//! scalars, CUDA arrays (`__cuda_array_interface__`) and DLPack tensors. This
//! is the hot path of every launch; it allocates only what the call needs.
use super::buffer::{get_buffer, HeldBuffer};
use super::view::View;
use crate::exec::args::{ArgVal, PkViewArg, ViewVal};
use crate::memory::{dlpack, geometry, view::device_view};
use crate::types::{ArgTy, DType, ViewTy};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};

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

/// The package's own argument classes, registered at import
/// (`register_arg_types`): a reduction's lazy total (its value is passed) and
/// the random pools (this launch's stream). Known by their class: found by
/// probing attributes, each cost four failed lookups (four exceptions raised
/// and cleared) a launch.
struct ArgTypes {
    number: Py<PyAny>,
    streams: Py<PyAny>,
}

static ARG_TYPES: std::sync::OnceLock<ArgTypes> = std::sync::OnceLock::new();

/// `_native.register_arg_types(number_class, (random pool classes...))`.
#[pyfunction]
pub fn register_arg_types(number: Py<PyAny>, streams: Py<PyAny>) {
    let _ = ARG_TYPES.set(ArgTypes { number, streams });
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
    if let Ok(c) = obj.cast::<PyComplex>() {
        return Ok((
            ArgTy::Scalar {
                dtype: DType::C128,
                weak: true,
            },
            ArgVal::Complex(c.real(), c.imag()),
        ));
    }
    if let Some(t) = ARG_TYPES.get() {
        let py = obj.py();
        if obj.is_instance(t.number.bind(py))? {
            let n = obj.call_method0(pyo3::intern!(py, "__pk_number__"))?;
            return classify(&n, held);
        }
        if obj.is_instance(t.streams.bind(py))? {
            let seed: u64 = obj
                .call_method0(pyo3::intern!(py, "__pk_random_stream__"))?
                .extract()?;
            return Ok((ArgTy::Rng, ArgVal::Int(seed as i64)));
        }
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
            let val = if d.is_complex() {
                ArgVal::Complex(
                    item.getattr("real")?.extract()?,
                    item.getattr("imag")?.extract()?,
                )
            } else if d.is_float() {
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
                let (t, v) = dlpack::import::import(obj)?;
                return Ok((ArgTy::View(t), ArgVal::View(v)));
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
    held.push(HeldBuffer(buf));
    Ok(r)
}

/// A view over device memory described by `__cuda_array_interface__` (v3).
fn cuda_array(obj: &Bound<'_, PyAny>, cai: &Bound<'_, PyAny>) -> PyResult<(ArgTy, ArgVal)> {
    let g = cuda_array_geometry(cai)?;
    let (t, v) = device_view(obj, g.addr as *mut u8, g.dtype, g.rank, g.extent, g.stride);
    Ok((ArgTy::View(t), ArgVal::View(v)))
}

/// What `__cuda_array_interface__` (v3) says of device memory; strides in elements.
pub(super) struct CudaArray {
    pub addr: usize,
    pub dtype: DType,
    pub rank: usize,
    pub extent: [i64; 8],
    pub stride: [i64; 8],
}

pub(super) fn cuda_array_geometry(cai: &Bound<'_, PyAny>) -> PyResult<CudaArray> {
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
        ('c', 8) => DType::C64,
        ('c', 16) => DType::C128,
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
        None => geometry::contiguous_strides(&shape, false),
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
    Ok(CudaArray {
        addr,
        dtype,
        rank,
        extent,
        stride,
    })
}
