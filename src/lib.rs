//! pykokkos-fuse native core. Layers only look down (`scripts/check_layers.py`
//! enforces it):
//!
//! python -> pipeline -> {lazy, fusion} -> exec -> memory -> kokkos -> build
//! -> codegen -> {lower, analysis} -> frontend -> {errors, types, config}
//!
//! `pipeline/mod.rs` holds both pipelines (eager and flush) whole; `pipeline/kernels.rs`
//! finds or builds the kernels they run.
pub mod analysis;
pub mod codegen;
pub mod compile;
pub mod config;
pub mod errors;
pub mod exec;
pub mod frontend;
pub mod fusion;
pub mod interrupt;
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    python::register(m)
}
