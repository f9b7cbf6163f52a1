//! Ctrl-C for the runtime (see interrupt.rs): the hook that tells whether the
//! work under way should stop, and the exception it then raises.
//!
//! The hook runs inside a flush or a compile, with the runtime's locks held,
//! so it runs no Python bytecode (the interpreter would run the pending
//! handler there, and a program's handler could re-enter the runtime): it
//! stops only the main thread's work, and only while SIGINT has Python's own
//! handler, which raises KeyboardInterrupt. That handler runs once the work
//! has unwound and the binding holds the interpreter again (`interrupted`);
//! a program's own handler runs when Python gets to it, as always.
use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::OnceLock;

/// `_signal.getsignal`, `SIGINT`, `default_int_handler`, and
/// the main thread's identity, taken at import.
struct Probe {
    getsignal: Py<PyAny>,
    sigint: Py<PyAny>,
    default: Py<PyAny>,
    main: std::os::raw::c_ulong,
}

static PROBE: OnceLock<Probe> = OnceLock::new();

pub fn install(py: Python<'_>) {
    let probe = || -> PyResult<Probe> {
        // The C module: `signal.getsignal` is a Python wrapper around it.
        let signal = py.import("_signal")?;
        let main: std::os::raw::c_ulong = py
            .import("threading")?
            .call_method0("main_thread")?
            .getattr("ident")?
            .extract()?;
        Ok(Probe {
            getsignal: signal.getattr("getsignal")?.unbind(),
            sigint: signal.getattr("SIGINT")?.unbind(),
            default: signal.getattr("default_int_handler")?.unbind(),
            main,
        })
    };
    if let Ok(p) = probe() {
        let _ = PROBE.set(p);
        crate::interrupt::install(ask);
    }
}

fn ask() -> bool {
    crate::interrupt::clear();
    let Some(p) = PROBE.get() else {
        return false;
    };
    // Python's thread identity is pthread_self() (threading.get_ident on POSIX).
    // SAFETY: pthread_self has no preconditions.
    if unsafe { libc::pthread_self() } as std::os::raw::c_ulong != p.main {
        return false;
    }
    // `_signal.getsignal` is a builtin: calling it runs no bytecode.
    Python::attach(|py| {
        p.getsignal
            .call1(py, (p.sigint.clone_ref(py),))
            .is_ok_and(|h| h.is(&p.default))
    })
}

/// The exception for work Ctrl-C stopped: what Python's handler raises
/// (KeyboardInterrupt), with a note on what was left undone.
pub fn interrupted(what: String) -> PyErr {
    Python::attach(|py| {
        // SAFETY: called with the GIL held.
        let err = if unsafe { ffi::PyErr_CheckSignals() } != 0 {
            PyErr::fetch(py)
        } else {
            pyo3::exceptions::PyKeyboardInterrupt::new_err(())
        };
        let _ = err.value(py).call_method1("add_note", (what,));
        err
    })
}
