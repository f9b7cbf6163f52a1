//! The cost model's memory for deferral: per kernel, a score of how deferred
//! launches fared lately. It rises when one paid (dropped unrun, overwritten,
//! absorbed by an exact repeat) and falls twice as fast when one did not (it
//! ran later after all, or a later flush computed it again): such a launch
//! reads its inputs twice. A kernel whose score fell too low is no longer
//! deferred, but every `RETRY`th refusal lets one deferral try again, so a
//! program that stops reading the output gets the benefit back.
use crate::exec::kernel::{KernelKey, KeyMap};
use std::sync::atomic::{AtomicUsize, Ordering};
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
    refused: u32,
}

static FATES: LazyLock<KeyMap<Fate>> = LazyLock::new(KeyMap::default);

/// Kernels whose score is at or below `FLOOR` (their `worth` may refuse):
/// while there are none, every verdict is `Defer` without a lookup.
static LOW: AtomicUsize = AtomicUsize::new(0);

/// Sets a score, keeping `LOW` in step.
fn rescore(f: &mut Fate, score: i32) {
    match (f.score <= FLOOR, score <= FLOOR) {
        (false, true) => drop(LOW.fetch_add(1, Ordering::AcqRel)),
        (true, false) => drop(LOW.fetch_sub(1, Ordering::AcqRel)),
        _ => {}
    }
    f.score = score;
}

/// What `worth` would answer for `key` now, without asking it (asking
/// counts a refusal): the plan cache keeps the verdicts a plan was made
/// under, and replays it only under the same ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Defer,
    Refuse,
    /// Refused so often that the next question grants one more try.
    Retry,
    /// Not asked: a small host launch while such launches run at once
    /// (pipeline/settle.rs says why).
    Bypassed,
}

pub fn verdict(key: &KernelKey) -> Verdict {
    if LOW.load(Ordering::Acquire) == 0 {
        return Verdict::Defer;
    }
    match FATES.get(key) {
        Some(f) if f.score <= FLOOR && (f.refused + 1) % RETRY == 0 => Verdict::Retry,
        Some(f) if f.score <= FLOOR => Verdict::Refuse,
        _ => Verdict::Defer,
    }
}

/// The reason `worth` gives when it refuses.
pub const REFUSED: &str =
    "not deferred: its recent deferrals ran later (the cost model tries again every 32nd time)";

/// A deferred launch of `key` never had to run.
pub fn paid(key: &KernelKey) {
    let mut f = FATES.entry(key.clone()).or_default();
    let score = (f.score + 1).min(HIGHEST);
    rescore(&mut f, score);
}

/// A deferred launch of `key` ran (or was computed again) after all.
pub fn wasted(key: &KernelKey) {
    let mut f = FATES.entry(key.clone()).or_default();
    let score = (f.score - 2).max(LOWEST);
    rescore(&mut f, score);
}

/// Whether deferring launches of `key` is worth it now.
pub fn worth(key: &KernelKey) -> Result<(), String> {
    if LOW.load(Ordering::Acquire) == 0 {
        return Ok(()); // no kernel's score is low: nothing to refuse or count
    }
    let Some(mut f) = FATES.get_mut(key) else {
        return Ok(());
    };
    if f.score > FLOOR {
        return Ok(());
    }
    f.refused += 1;
    if f.refused % RETRY == 0 {
        rescore(&mut f, FLOOR + 1); // one more try
        return Ok(());
    }
    Err(REFUSED.to_string())
}

/// Starts over (lazy mode switched): a new phase of the program.
pub fn forget() {
    FATES.clear();
    LOW.store(0, Ordering::Release);
}
