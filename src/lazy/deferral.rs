//! The cost model's memory for deferral: per kernel, how often a deferred
//! launch paid (dropped unrun, or overwritten) and how often it did not (it
//! ran later after all, or a later flush recomputed it again). A kernel
//! whose deferrals mostly failed is no longer deferred: it would read its
//! inputs twice each time.
use crate::exec::kernel::KernelKey;
use dashmap::DashMap;
use std::sync::LazyLock;

#[derive(Clone, Copy, Default)]
struct Fate {
    paid: u32,
    wasted: u32,
}

static FATES: LazyLock<DashMap<KernelKey, Fate>> = LazyLock::new(DashMap::new);

/// A deferred launch of `key` never had to run.
pub fn paid(key: &KernelKey) {
    FATES.entry(key.clone()).or_default().paid += 1;
}

/// A deferred launch of `key` ran (or was computed again) after all.
pub fn wasted(key: &KernelKey) {
    FATES.entry(key.clone()).or_default().wasted += 1;
}

/// Whether deferring launches of `key` is still worth it: one waste is
/// forgiven, then deferral must have paid at least as often as it failed.
pub fn worth(key: &KernelKey) -> Result<(), String> {
    let f = FATES.get(key).map(|f| *f).unwrap_or_default();
    if f.wasted > f.paid + 1 {
        return Err(format!(
            "not deferred: its deferrals ran later {} time(s) and paid {} time(s)",
            f.wasted, f.paid
        ));
    }
    Ok(())
}

/// Starts over (lazy mode switched): a new phase of the program.
pub fn forget() {
    FATES.clear();
}
