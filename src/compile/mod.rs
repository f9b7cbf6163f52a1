//! From C++ text to callable code: toolchain probe, blake3-keyed disk cache,
//! loader. `load` is the one way a generated translation unit becomes a kernel.
pub mod cache;
pub mod cuda;
pub mod cudadrv;
pub mod loader;
pub mod nvrtc;
pub mod toolchain;
pub mod trust;

use crate::errors::PkResult;

/// A compiled translation unit's entry points and its cache key.
pub struct Loaded {
    pub run: loader::EntryFn,
    pub error: loader::ErrorFn,
    pub source_key: String,
}

/// Cache key -> compile on a miss -> dlopen -> entry points. A cached
/// library that does not load (truncated, damaged, not ours) is rebuilt once
/// instead of failing every later run.
pub fn load(source: &str, label: &str) -> PkResult<Loaded> {
    let tc = toolchain::get()?;
    let key = cache::key(tc, source);
    let so = cache::compile(tc, &key, source, label)?;
    let entry = |lib| -> PkResult<(loader::EntryFn, loader::ErrorFn)> {
        let run = loader::symbol(lib, "pk_run")?;
        let error = loader::symbol(lib, "pk_error")?;
        loader::hand_stop_hooks(lib);
        Ok((run, error))
    };
    let whole = |so: &std::path::Path| match loader::looks_complete(so) {
        true => loader::open(so),
        false => Err(crate::errors::PkError::Environment(format!(
            "{} is not a whole shared library",
            so.display()
        ))),
    };
    let (run, error) = match whole(&so).and_then(entry) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(path = %so.display(), error = %e, "cached kernel does not load; rebuilding it");
            std::fs::remove_file(&so)?;
            let so = cache::compile(tc, &key, source, label)?;
            entry(loader::open_fresh(&so)?)?
        }
    };
    Ok(Loaded {
        run,
        error,
        source_key: key,
    })
}
