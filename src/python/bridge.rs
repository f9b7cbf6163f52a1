//! Where core and Python meet: the one mapping of core errors to Python
//! exceptions, the one helper that releases the GIL around core work, and
//! reduction totals as Python numbers.
use crate::errors::{KernelErrorKind, PkError, PkResult};
use crate::exec::kernel::Total;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyIndexError, PyMemoryError, PyRuntimeError, PySyntaxError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;

create_exception!(
    pykokkos,
    KernelSyntaxError,
    PySyntaxError,
    "A workunit uses Python outside the kernel subset."
);
create_exception!(
    pykokkos,
    KernelTypeError,
    PyTypeError,
    "A workunit's types do not fit (located at the user's line)."
);
create_exception!(
    pykokkos,
    CompileError,
    PyRuntimeError,
    "The C++ compiler rejected generated code."
);
create_exception!(
    pykokkos,
    KokkosError,
    PyRuntimeError,
    "Kokkos or the toolchain is missing or failed."
);

/// Every `PkError` becomes the Python exception a user expects.
pub fn py_err(e: PkError) -> PyErr {
    match e {
        PkError::Kernel(le) => {
            let text = le.to_string();
            match le.kind {
                KernelErrorKind::Unsupported => {
                    // SyntaxError's own fields make tracebacks show the line and caret.
                    let detail = (
                        le.loc.filename.clone(),
                        le.loc.line,
                        le.loc.column,
                        le.loc.source_line.clone(),
                    );
                    KernelSyntaxError::new_err((text, detail))
                }
                KernelErrorKind::Type => KernelTypeError::new_err(text),
            }
        }
        PkError::Compile { .. } => CompileError::new_err(e.to_string()),
        PkError::Argument(m) => PyTypeError::new_err(m),
        PkError::Value(m) => PyValueError::new_err(m),
        PkError::Memory(m) => PyMemoryError::new_err(m),
        PkError::Index(m) => PyIndexError::new_err(m),
        PkError::ZeroDivision(m) => pyo3::exceptions::PyZeroDivisionError::new_err(m),
        PkError::Interrupted(m) => super::signals::interrupted(m),
        PkError::Environment(m) => KokkosError::new_err(m),
        PkError::Runtime(m) => PyRuntimeError::new_err(m),
        PkError::Python(e) => e,
    }
}

/// Runs core work with the GIL released, so other Python threads run while
/// kernels compile or execute; core code that needs Python attaches itself.
pub fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> PkResult<T> + Send) -> PyResult<T> {
    py.detach(f).map_err(py_err)
}

/// A reduction or scan total as a Python number.
pub fn total_to_py(py: Python<'_>, t: Total) -> PyResult<Bound<'_, PyAny>> {
    Ok(match t {
        Total::F(x) => x.into_pyobject(py)?.into_any(),
        Total::I(x) => x.into_pyobject(py)?.into_any(),
        Total::U(x) => x.into_pyobject(py)?.into_any(),
        Total::B(x) => pyo3::types::PyBool::new(py, x).to_owned().into_any(),
        Total::C(re, im) => pyo3::types::PyComplex::from_doubles(py, re, im).into_any(),
        // A struct reducer's record: its fields in Kokkos' order.
        Total::Rec { .. } => {
            let items = t
                .fields()
                .into_iter()
                .map(|(_, f)| total_to_py(py, f))
                .collect::<PyResult<Vec<_>>>()?;
            pyo3::types::PyTuple::new(py, items)?.into_any()
        }
    })
}
