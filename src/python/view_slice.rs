//! `v[a:b]`, `v[i, :]`, `v[:, j:k:s]`: subviews made natively, as
//! `View._getitem` makes them (the same `subview`), without Python-level key
//! normalization and construction (3.5 us a slice, which ExaMiniMD's halo
//! exchange pays every step). Keys of other kinds (NumPy integers, Ellipsis,
//! None, masks, out-of-range integers) go to the Python path and its errors.
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt, PySlice, PyTuple, PyType};

/// Per-dimension start, length, step and whether the dimension is kept.
pub(super) struct Slicing {
    pub start: Vec<i64>,
    pub length: Vec<i64>,
    pub step: Vec<i64>,
    pub keep: Vec<bool>,
}

/// The subview a key of Python ints and slices (at least one slice) names.
pub(super) fn slicing(key: &Bound<'_, PyAny>, shape: &[i64]) -> PyResult<Option<Slicing>> {
    let keys: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let n = shape.len();
    if keys.len() > n {
        return Ok(None);
    }
    let mut s = Slicing {
        start: vec![0; n],
        length: shape.to_vec(),
        step: vec![1; n],
        keep: vec![true; n],
    };
    let mut sliced = false;
    for (d, k) in keys.iter().enumerate() {
        if let Ok(sl) = k.cast::<PySlice>() {
            let ix = sl.indices(shape[d] as isize)?;
            (s.start[d], s.length[d], s.step[d]) =
                (ix.start as i64, ix.slicelength as i64, ix.step as i64);
            sliced = true;
        } else if k.is_instance_of::<PyInt>() && !k.is_instance_of::<PyBool>() {
            let Ok(i) = k.extract::<i64>() else {
                return Ok(None);
            };
            let j = if i < 0 { i + shape[d] } else { i };
            if j < 0 || j >= shape[d] {
                return Ok(None);
            }
            (s.start[d], s.length[d], s.keep[d]) = (j, 1, false);
        } else {
            return Ok(None);
        }
    }
    Ok(sliced.then_some(s))
}

/// Whether `obj` is a `numpy.ndarray` itself (not a subclass, which may add
/// device memory, as Numba's mapped arrays do); the type is found once.
pub(super) fn is_plain_ndarray(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    static NDARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let py = obj.py();
    let nd = NDARRAY.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        Ok(py
            .import("numpy")?
            .getattr("ndarray")?
            .cast_into::<PyType>()?
            .unbind())
    })?;
    Ok(obj.get_type().is(nd.bind(py)))
}

/// The package's own `pk.View` (what `_getitem` constructs), not a subclass.
/// Its type object is found once and then compared by identity: reading the
/// name and module of the type on every slice cost a tenth of the slice.
pub(super) fn is_package_view(ty: &Bound<'_, PyType>) -> PyResult<bool> {
    static VIEW: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let py = ty.py();
    let view = VIEW.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let v = py.import("pykokkos.runtime._views")?.getattr("View")?;
        Ok(v.cast_into::<PyType>()?.unbind())
    })?;
    Ok(ty.is(view.bind(py)))
}
