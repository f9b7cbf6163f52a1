//! pykokkos-fuse native core. Layers only look down (`scripts/check_layers.py`
//! enforces it):
//!
//! python -> pipeline -> {lazy, fusion} -> exec -> memory -> kokkos -> build
//! -> codegen -> {lower, analysis} -> frontend -> {errors, types, config}
//!
//! `pipeline/mod.rs` holds both pipelines (eager and flush) whole; `pipeline/kernels.rs`
//! finds or builds the kernels they run.
pub mod analysis;
pub mod build;
pub mod codegen;
pub mod config;
pub mod errors;
pub mod exec;
pub mod frontend;
pub mod fusion;
pub mod kokkos;
pub mod lazy;
pub mod lower;
pub mod memory;
pub mod pipeline;
pub mod python;
pub mod trace;
pub mod types;

use pyo3::prelude::*;

/// The core's own small allocations (launch records, DAG nodes, plans) come
/// from mimalloc: glibc's malloc, fragmented by a flush freeing thousands of
/// nodes, made each recorded launch pay for free-list walks. View memory
/// stays on the system allocator (memory/alloc.rs), whose calloc hands big
/// views fresh zero pages.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// mimalloc's `mi_option_purge_delay` (the same index in its v2 and v3).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A flush frees its launches' records; by default mimalloc hands those
    // pages back to the OS 10 ms later, and the next batch of launches faults
    // fresh zeroed pages in again (a twentieth of recording a launch). Keep
    // them for a second: a program that launches in a loop reuses them.
    // SAFETY: sets a plain option; mimalloc reads it when it next purges.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    python::register(m)
}
