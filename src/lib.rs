//! pykokkos-fuse native core. The bindings here are thin: they convert Python
//! objects and delegate to the pipeline (`pipeline.rs`) and runtime.
pub mod args;
pub mod build;
pub mod codegen;
pub mod device;
pub mod dlpack;
pub mod errors;
pub mod frontend;
pub mod fusion;
pub mod launch;
pub mod lazy;
pub mod lower;
pub mod pipeline;
pub mod resolve;
pub mod runtime;
pub mod types;
pub mod view;
pub mod workunit;

use errors::{KernelErrorKind, PkError};
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

/// Waits for all work: pending lazy launches run, then Kokkos fences.
#[pyfunction]
fn fence(py: Python<'_>) -> PyResult<()> {
    lazy::flush_all(py).map_err(py_err)?;
    runtime::fence();
    Ok(())
}

/// (host-to-device, device-to-host) bytes the View mirrors copied so far.
#[pyfunction]
fn device_copies() -> (u64, u64) {
    device::copied_bytes()
}

#[pyfunction]
fn finalize() {
    runtime::finalize();
}

#[pyfunction]
fn initialize() -> PyResult<i32> {
    runtime::concurrency().map_err(py_err)
}

#[pyfunction]
fn set_default_space(code: u8) -> PyResult<()> {
    let s = match code {
        0 => codegen::Space::Serial,
        2 => codegen::Space::Cuda,
        _ => codegen::Space::OpenMP,
    };
    runtime::set_default_space(s).map_err(py_err)
}

#[pyfunction]
fn default_space() -> u8 {
    match runtime::default_space() {
        codegen::Space::Serial => 0,
        codegen::Space::OpenMP => 1,
        codegen::Space::Cuda => 2,
    }
}

/// Cache folder and toolchain facts, for `pk.config()` and the tests.
#[pyfunction]
fn toolchain_info() -> PyResult<Vec<(String, String)>> {
    let tc = build::toolchain::get().map_err(py_err)?;
    Ok(vec![
        ("compiler".into(), tc.compiler.display().to_string()),
        ("kokkos".into(), tc.kokkos.prefix.display().to_string()),
        ("kokkos_config".into(), tc.kokkos.config.clone()),
        ("cache".into(), tc.cache.display().to_string()),
        ("identity".into(), tc.identity.clone()),
    ])
}

fn init_logging() {
    if let Ok(level) = std::env::var("PK_LOG") {
        use tracing_subscriber::fmt::format::FmtSpan;
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(level))
            .with_writer(std::io::stderr)
            .with_span_events(FmtSpan::CLOSE)
            .with_target(false)
            .try_init();
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    init_logging();
    let fuse = std::env::var("PK_FUSE").is_ok_and(|v| v == "1")
        || std::env::var("PK_FUSION").is_ok_and(|v| v == "naive");
    lazy::set_lazy(m.py(), fuse)?;
    let py = m.py();
    m.add_class::<view::View>()?;
    m.add_class::<workunit::Workunit>()?;
    m.add_class::<launch::Policy>()?;
    m.add_function(wrap_pyfunction!(launch::launch, m)?)?;
    m.add_function(wrap_pyfunction!(launch::generate_source, m)?)?;
    m.add_function(wrap_pyfunction!(resolve::set_resolver, m)?)?;
    m.add_class::<lazy::Pending>()?;
    m.add_function(wrap_pyfunction!(lazy::set_lazy, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::lazy_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::py_flush, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::pending_count, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::graph_json, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::explain_last, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::explain_history, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::fused_kernel_count, m)?)?;
    m.add_function(wrap_pyfunction!(fence, m)?)?;
    m.add_function(wrap_pyfunction!(finalize, m)?)?;
    m.add_function(wrap_pyfunction!(device_copies, m)?)?;
    m.add_function(wrap_pyfunction!(initialize, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_space, m)?)?;
    m.add_function(wrap_pyfunction!(default_space, m)?)?;
    m.add_function(wrap_pyfunction!(toolchain_info, m)?)?;
    m.add("KernelSyntaxError", py.get_type::<KernelSyntaxError>())?;
    m.add("KernelTypeError", py.get_type::<KernelTypeError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("KokkosError", py.get_type::<KokkosError>())?;
    Ok(())
}
