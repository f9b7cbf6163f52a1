//! Memory: allocations, their geometry, views of them as kernels take them,
//! device mirrors for CUDA kernels, and DLPack export. Nothing here knows
//! about kernels, launches or the lazy DAG: a flush that host access needs
//! is asked for by the binding (python/view.rs).
pub mod alloc;
mod call_mirror;
pub mod device;
pub mod device_launch;
pub mod dlpack;
mod exports;
mod fills;
mod free;
pub mod geometry;
pub mod pool;
pub mod resize;
pub mod view;
