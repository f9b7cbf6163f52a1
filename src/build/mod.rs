//! Turning generated C++ into loaded code: the toolchain, the on-disk cache and
//! the dynamic loader.
pub mod cache;
pub mod loader;
pub mod toolchain;
