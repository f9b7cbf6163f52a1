//! The cost model's memory for deferral: per kernel, a score of how deferred
//! launches fared lately. It rises when one paid (dropped unrun, overwritten,
//! absorbed by an exact repeat) and falls twice as fast when one did not (it
//! ran later after all, or a later flush computed it again): such a launch
//! reads its inputs twice. A kernel whose score fell too low is no longer
//! deferred, but every `RETRY`th refusal lets one deferral try again, so a
//! program that stops reading the output gets the benefit back.
use crate::exec::kernel::KernelKey;
use dashmap::DashMap;
use std::sync::LazyLock;

const HIGHEST: i32 = 3;
const LOWEST: i32 = -4;
/// Deferred while the score is above this: two failures in a row from a
/// fresh start, three after a run of successes.
const FLOOR: i32 = -3;
const RETRY: u32 = 32;

#[derive(Clone, Copy, Default)]
struct Fate {
    score: i32,
    paid: u32,
    wasted: u32,
    refused: u32,
}

static FATES: LazyLock<DashMap<KernelKey, Fate>> = LazyLock::new(DashMap::new);

/// A deferred launch of `key` never had to run.
pub fn paid(key: &KernelKey) {
    let mut f = FATES.entry(key.clone()).or_default();
    f.paid += 1;
    f.score = (f.score + 1).min(HIGHEST);
}

/// A deferred launch of `key` ran (or was computed again) after all.
pub fn wasted(key: &KernelKey) {
    let mut f = FATES.entry(key.clone()).or_default();
    f.wasted += 1;
    f.score = (f.score - 2).max(LOWEST);
}

/// Whether deferring launches of `key` is worth it now.
pub fn worth(key: &KernelKey) -> Result<(), String> {
    let Some(mut f) = FATES.get_mut(key) else {
        return Ok(());
    };
    if f.score > FLOOR {
        return Ok(());
    }
    f.refused += 1;
    if f.refused % RETRY == 0 {
        f.score = FLOOR + 1; // one more try
        return Ok(());
    }
    Err(format!(
        "not deferred: its recent deferrals ran later (in all, {} ran later and {} paid)",
        f.wasted, f.paid
    ))
}

/// Starts over (lazy mode switched): a new phase of the program.
pub fn forget() {
    FATES.clear();
}
