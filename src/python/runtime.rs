//! Bindings of the process-wide runtime: Kokkos' lifetime, the default
//! execution space, toolchain facts, device copy counters.
use super::bridge::{detached, py_err};
use super::lazy::flush;
use crate::compile::toolchain;
use crate::exec::run::dispatch_turn;
use crate::exec::space;
use crate::lazy::graph::Demand;
use crate::memory::device;
use pyo3::prelude::*;

/// Waits for all work: pending lazy launches run (but those a flush
/// deferred: nothing asked for their outputs yet), then Kokkos fences.
/// `wait=False` only submits them: on the GPU they are then queued, as eager
/// launches would have been by now, and the host goes on (pk.Timer).
#[pyfunction]
#[pyo3(signature = (wait=true))]
pub fn fence(py: Python<'_>, wait: bool) -> PyResult<()> {
    flush(py, Demand::Fence)?;
    if !wait {
        return Ok(());
    }
    detached(py, || {
        let _turn = dispatch_turn();
        crate::kokkos::thread_enter();
        crate::kokkos::fence();
        Ok(())
    })
}

/// (host-to-device, device-to-host) bytes the View mirrors copied so far.
#[pyfunction]
pub fn device_copies() -> (u64, u64) {
    device::copied_bytes()
}

#[pyfunction]
pub fn finalize() {
    crate::kokkos::finalize();
}

#[pyfunction]
pub fn initialize() -> PyResult<i32> {
    crate::kokkos::concurrency().map_err(py_err)
}

/// The GPU this process's Cuda kernels run on (-1 without CUDA); starts Kokkos.
#[pyfunction]
pub fn device_id() -> PyResult<i32> {
    crate::kokkos::device_id().map_err(py_err)
}

#[pyfunction]
pub fn set_default_space(code: u8) -> PyResult<()> {
    space::set_default_space(space::from_code(code)).map_err(py_err)
}

#[pyfunction]
pub fn default_space() -> u8 {
    space::code(space::default_space())
}

/// Cache folder and toolchain facts, for `pk.config()` and the tests.
#[pyfunction]
pub fn toolchain_info() -> PyResult<Vec<(String, String)>> {
    let tc = toolchain::get().map_err(py_err)?;
    Ok(vec![
        ("compiler".into(), tc.compiler.display().to_string()),
        ("kokkos".into(), tc.kokkos.prefix.display().to_string()),
        ("kokkos_config".into(), tc.kokkos.config.clone()),
        ("cache".into(), tc.cache.display().to_string()),
        ("identity".into(), tc.identity.clone()),
        // What host kernels are built for (PK_MARCH) and how they round.
        ("host_target".into(), toolchain::host_target_flags()),
        // The GPU architecture kernels are built for ("sm_90"), empty without CUDA.
        (
            "cuda_arch".into(),
            tc.cuda
                .as_ref()
                .map_or_else(String::new, |c| c.arch.clone()),
        ),
    ])
}

/// The function that builds the project's own Kokkos the first time a kernel
/// needs it and none is installed (pykokkos/__init__.py), with the GIL taken
/// for the call.
#[pyfunction]
pub fn set_kokkos_installer(f: Py<PyAny>) {
    toolchain::set_installer(Box::new(move |cuda| {
        Python::attach(|py| f.call1(py, (cuda,)).map(|_| ()).map_err(|e| e.to_string()))
    }));
}
