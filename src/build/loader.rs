//! Loading compiled kernels. Libraries are never unloaded: their code may be
//! referenced by Kokkos (kernel labels, profiling) until the process ends.
use crate::errors::{PkError, PkResult};
use std::os::raw::{c_char, c_int, c_void};
use std::path::Path;

pub type EntryFn = unsafe extern "C" fn(
    *const c_void,
    *const c_void,
    *const i64,
    *const i64,
    *mut c_void,
) -> c_int;
pub type ErrorFn = unsafe extern "C" fn() -> *const c_char;

/// Opens a shared library for the rest of the process's life.
pub fn open(path: &Path) -> PkResult<&'static libloading::Library> {
    let _span = tracing::info_span!("load", path = %path.display()).entered();
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| PkError::Environment(format!("could not load {}: {e}", path.display())))?;
    Ok(Box::leak(Box::new(lib)))
}

pub fn symbol<T: Copy>(lib: &'static libloading::Library, name: &str) -> PkResult<T> {
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| {
            PkError::Environment(format!("symbol {name} missing from a kernel library: {e}"))
        })
}

pub fn error_text(f: ErrorFn) -> String {
    unsafe { std::ffi::CStr::from_ptr(f()) }
        .to_string_lossy()
        .into_owned()
}
