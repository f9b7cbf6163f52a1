//! A serial block of a translated Numba function (`rt.serial`): the loop
//! nest runs as one work item that leaves its scalars in one-element
//! Views. Written as Python, a block made its outputs, chose its policy,
//! launched and read the outputs back in five calls of `rt` helpers; right
//! after a large NumPy step each cost 10-30 us (sum2d's whole call lost 5%
//! to Numba that way). Here it is one call.
use super::kw::Kw;
use super::launch::launch_with;
use super::numba_call::{on_device, setup};
use super::view::View;
use super::wire;
use super::workunit::Workunit;
use crate::exec::space;
use crate::types::{DType, Space};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString, PyTuple};
use smallvec::SmallVec;

/// `rt.serial(kernel, outs, **kwargs)`: launches `kernel` over one work item
/// with `kwargs` and, per `(name, dtype)` of `outs`, a new one-element View
/// under `name`; hands back each output's value, in order (a `bool` output
/// as a Python bool).
#[pyfunction]
// Positional-only: a block's free variables come as keywords under the
// program's own names, which may be `kernel` or `outs`.
#[pyo3(signature = (kernel, outs, /, **kwargs))]
pub fn numba_serial<'py>(
    py: Python<'py>,
    kernel: &Bound<'py, PyAny>,
    outs: &Bound<'py, PyTuple>,
    kwargs: Option<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let s = setup(py)?;
    let wu = kernel
        .getattr(pyo3::intern!(py, "__pk_workunit__"))?
        .cast_into::<Workunit>()?;
    let kwargs = kwargs.unwrap_or_else(|| PyDict::new(py));
    let mut made: SmallVec<[(Bound<'py, PyAny>, bool); 4]> = SmallVec::new();
    for out in outs.iter() {
        let (name, dtype): (Bound<'py, PyString>, Bound<'py, PyString>) = out.extract()?;
        let dtype = dtype.to_str()?;
        let is_bool = dtype == "bool";
        // A bool is kept in a byte, read back as a bool.
        let stored = if is_bool { "uint8" } else { dtype };
        // (A DType's discriminant is its code: ALL_DTYPES is in that order.)
        let code = DType::from_name(stored)
            .ok_or_else(|| PyValueError::new_err(format!("rt.serial: no dtype '{dtype}'")))?
            as u8;
        // What rt.zeros makes: C order, host memory that CUDA launches mirror.
        let v = View::allocate(vec![1], code, wire::LAYOUT_RIGHT, wire::MEMORY_HOST)?;
        let v = super::handoff::new_of_type(s.view.bind(py), v)?.into_bound(py);
        kwargs.set_item(name, &v)?;
        made.push((v, is_bool));
    }
    // One work item on the host (as Numba runs serial code), or where
    // `rt.serial_policy` says when the default space is a GPU.
    let policy = match space::default_space() {
        Space::Cuda => s.serial_policy.bind(py).call0()?,
        _ => PyInt::new(py, 1).into_any(),
    };
    launch_with(
        py,
        wire::PATTERN_FOR,
        &policy,
        &wu,
        &Kw::Dict(Some(&kwargs)),
        None,
        false,
        None,
        None,
        None,
    )?;
    let values = made
        .iter()
        .map(|(v, is_bool)| {
            let x = v.get_item(0)?;
            Ok(match is_bool {
                true => PyBool::new(py, x.is_truthy()?).to_owned().into_any(),
                false => x,
            })
        })
        .collect::<PyResult<SmallVec<[Bound<'py, PyAny>; 4]>>>()?;
    PyTuple::new(py, values)
}

/// `rt.serial_on_gpu()`: whether serial code runs on the GPU (kernels run
/// there and the call was given device arrays).
#[pyfunction]
pub fn numba_serial_on_gpu(py: Python<'_>) -> PyResult<bool> {
    Ok(space::default_space() == Space::Cuda && on_device(py, setup(py)?)?)
}
