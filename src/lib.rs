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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    python::register(m)
}
