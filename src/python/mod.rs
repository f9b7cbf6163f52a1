//! Every `#[pyclass]` and `#[pyfunction]`: each converts its arguments, calls
//! one core function and converts the result. Long work (flush, compile,
//! launch) releases the GIL through `bridge::detached`; `bridge::py_err` is
//! the one place core errors become Python exceptions.
mod args;
mod bridge;
mod buffer;
mod constants;
mod element;
mod entry;
mod extents;
mod handoff;
mod interop;
mod kw;
mod launch;
mod launch_params;
mod lazy;
mod numba_call;
mod numba_serial;
mod numpy_api;
mod origin;
mod policy;
mod resolve;
mod runtime;
mod signals;
mod traces;
mod view;
mod view_export;
mod view_ops;
mod view_raw;
mod view_slice;
mod wire;
mod workunit;

use pyo3::prelude::*;

use bridge::{CompileError, KernelSyntaxError, KernelTypeError, KokkosError};

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
    signals::install(m.py());
    init_logging();
    crate::lazy::graph::set_enabled(crate::config::get().lazy);
    crate::pipeline::check_disabled().map_err(bridge::py_err)?;
    let py = m.py();
    m.add_class::<view::View>()?;
    m.add_class::<workunit::Workunit>()?;
    m.add_class::<policy::Policy>()?;
    m.add_class::<lazy::Pending>()?;
    m.add_function(wrap_pyfunction!(launch::launch, m)?)?;
    m.add_function(wrap_pyfunction!(numba_call::numba_call, m)?)?;
    m.add_function(wrap_pyfunction!(numba_call::numba_call_setup, m)?)?;
    m.add_function(wrap_pyfunction!(numba_serial::numba_serial, m)?)?;
    m.add_function(wrap_pyfunction!(numba_serial::numba_serial_on_gpu, m)?)?;
    m.add_class::<numba_call::FastDispatch>()?;
    entry::register(m)?;
    m.add_function(wrap_pyfunction!(entry::set_launch_forms, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::device_id, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::set_kokkos_installer, m)?)?;
    m.add_function(wrap_pyfunction!(args::register_arg_types, m)?)?;
    m.add_function(wrap_pyfunction!(traces::trace_start, m)?)?;
    m.add_function(wrap_pyfunction!(traces::trace_stop, m)?)?;
    m.add_function(wrap_pyfunction!(traces::trace_on, m)?)?;
    m.add_function(wrap_pyfunction!(traces::trace_event, m)?)?;
    m.add_function(wrap_pyfunction!(traces::trace_data, m)?)?;
    m.add_function(wrap_pyfunction!(traces::hash_text, m)?)?;
    m.add_function(wrap_pyfunction!(traces::set_build_only, m)?)?;
    m.add_function(wrap_pyfunction!(traces::default_rule_files, m)?)?;
    m.add_function(wrap_pyfunction!(launch::generate_source, m)?)?;
    m.add_function(wrap_pyfunction!(resolve::set_resolver, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::set_lazy, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::lazy_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::set_fusing, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::flush_all, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::pending_count, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::adaptive_costs, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::graph_json, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::tape_runs, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::set_tape, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::explain_last, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::plan_replays, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::explain_history, m)?)?;
    m.add_function(wrap_pyfunction!(lazy::fused_kernel_count, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::fence, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::finalize, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::device_copies, m)?)?;
    m.add_function(wrap_pyfunction!(view_export::hold_device_export, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::initialize, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::set_default_space, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::default_space, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::toolchain_info, m)?)?;
    m.add_function(wrap_pyfunction!(wire::wire_codes, m)?)?;
    m.add("KernelSyntaxError", py.get_type::<KernelSyntaxError>())?;
    m.add("KernelTypeError", py.get_type::<KernelTypeError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("KokkosError", py.get_type::<KokkosError>())?;
    Ok(())
}
