//! The codes the Python package passes across the binding: dtypes, execution
//! and memory spaces, layouts, launch patterns, reducers, and the names of
//! the special functions. The package
//! builds its enums and tables from `_native.wire_codes()`, so the two sides
//! cannot drift apart; the decoding sites here use the same constants.
use crate::exec::space;
use crate::types::{Reducer, Space, ALL_DTYPES};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

pub const PATTERN_FOR: u8 = 0;
pub const PATTERN_REDUCE: u8 = 1;
pub const PATTERN_SCAN: u8 = 2;
/// A reduce through `Reducer::ALL[code - REDUCER_BASE]`.
pub const REDUCER_BASE: u8 = 3;

pub const MEMORY_HOST: u8 = 0;
/// Host memory mirrored on the device when a CUDA kernel needs it.
pub const MEMORY_CUDA: u8 = 1;
/// Managed memory.
pub const MEMORY_UVM: u8 = 2;

pub const LAYOUT_RIGHT: u8 = 0;
pub const LAYOUT_LEFT: u8 = 1;

const SPACES: [Space; 4] = [Space::Serial, Space::OpenMP, Space::Cuda, Space::Debug];

/// `{"dtypes": [names in code order], "exec_spaces": {name: code}, ...}`.
#[pyfunction]
pub fn wire_codes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    let dtypes: Vec<&str> = ALL_DTYPES.iter().map(|t| t.name()).collect();
    d.set_item("dtypes", PyList::new(py, dtypes)?)?;
    let spaces = PyDict::new(py);
    for s in SPACES {
        spaces.set_item(format!("{s:?}"), space::code(s))?;
    }
    d.set_item("exec_spaces", spaces)?;
    let table = |pairs: &[(&str, u8)]| -> PyResult<Bound<'_, PyDict>> {
        let t = PyDict::new(py);
        for (k, v) in pairs {
            t.set_item(k, v)?;
        }
        Ok(t)
    };
    d.set_item(
        "memory_spaces",
        table(&[
            ("HostSpace", MEMORY_HOST),
            ("CudaSpace", MEMORY_CUDA),
            ("CudaUVMSpace", MEMORY_UVM),
        ])?,
    )?;
    d.set_item(
        "layouts",
        table(&[("LayoutRight", LAYOUT_RIGHT), ("LayoutLeft", LAYOUT_LEFT)])?,
    )?;
    d.set_item(
        "patterns",
        table(&[
            ("parallel_for", PATTERN_FOR),
            ("parallel_reduce", PATTERN_REDUCE),
            ("parallel_scan", PATTERN_SCAN),
        ])?,
    )?;
    let reducers: Vec<(&str, u8)> = Reducer::ALL
        .iter()
        .enumerate()
        .map(|(k, r)| (r.name(), REDUCER_BASE + k as u8))
        .collect();
    d.set_item("reducers", table(&reducers)?)?;
    let special: Vec<&str> = crate::lower::math::special_names().collect();
    d.set_item("special_functions", PyList::new(py, special)?)?;
    Ok(d)
}
