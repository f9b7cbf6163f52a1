//! Every `#[pyclass]` and `#[pyfunction]`: each converts its arguments, calls
//! one core function and converts the result. Long work (flush, compile,
//! launch) releases the GIL through `detached`; `py_err` is the one place core
//! errors become Python exceptions.
mod args;
mod buffer;
mod launch;
mod lazy;
mod origin;
mod resolve;
mod runtime;
mod view;
mod workunit;

use crate::errors::{KernelErrorKind, PkError, PkResult};
use crate::exec::kernel::Total;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PySyntaxError, PyTypeError, PyValueError};
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
    })
}

fn init_logging() {
    if let Some(level) = &crate::config::get().log {
        use tracing_subscriber::fmt::format::FmtSpan;
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(level))
            .with_writer(std::io::stderr)
            .with_span_events(FmtSpan::CLOSE)
            .with_target(false)
            .try_init();
    }
}

/// Fills the `_native` module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    init_logging();
    crate::lazy::graph::set_enabled(crate::config::get().lazy);
    let py = m.py();
    m.add_class::<view::View>()?;
    m.add_class::<workunit::Workunit>()?;
    m.add_class::<launch::Policy>()?;
    m.add_class::<lazy::Pending>()?;
    m.add_function(wrap_pyfunction!(launch::launch, m)?)?;
    m.add_function(wrap_pyfunction!(launch::generate_source, m)?)?;
    m.add_function(wrap_pyfunction!(resolve::set_resolver, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::set_lazy, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::lazy_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::flush_all, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::pending_count, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::graph_json, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::explain_last, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::explain_history, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::fused_kernel_count, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::fence, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::finalize, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::device_copies, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::initialize, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::set_default_space, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::default_space, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::toolchain_info, m)?)?;
    m.add("KernelSyntaxError", py.get_type::<KernelSyntaxError>())?;
    m.add("KernelTypeError", py.get_type::<KernelTypeError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("KokkosError", py.get_type::<KokkosError>())?;
    Ok(())
}
