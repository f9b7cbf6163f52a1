//! From C++ text to callable code: toolchain probe, blake3-keyed disk cache,
//! loader. `load` is the one way a generated translation unit becomes a kernel.
pub mod cache;
pub mod cuda;
pub mod loader;
pub mod toolchain;

use crate::errors::PkResult;

/// A compiled translation unit's entry points and its cache key.
pub struct Loaded {
    pub run: loader::EntryFn,
    pub error: loader::ErrorFn,
    pub source_key: String,
}

/// Cache key -> compile on a miss -> dlopen -> entry points.
pub fn load(source: &str, label: &str) -> PkResult<Loaded> {
    let tc = toolchain::get()?;
    let key = cache::key(tc, source);
    let so = cache::compile(tc, &key, source, label)?;
    let lib = loader::open(&so)?;
    Ok(Loaded {
        run: loader::symbol(lib, "pk_run")?,
        error: loader::symbol(lib, "pk_error")?,
        source_key: key,
    })
}
