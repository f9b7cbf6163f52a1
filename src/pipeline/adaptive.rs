//! When recording cannot pay: a program that reads a result after every
//! launch or two of tiny host kernels gains nothing from fusion (there is
//! nothing to fuse) and pays for recording and planning on top of each
//! kernel. Such launches run at once instead, as in eager mode (their
//! pending inputs are flushed first, so results are the same).
//!
//! The signal is the number of launches per flush, averaged over recent
//! flushes. While launches run at once no flush sees them, so every
//! `PROBE`-th small launch starts a trial: launches are recorded again until
//! the next flush, whose size updates the average. `PK_FUSION_DISABLE=adaptive`
//! switches it off. GPU launches are always recorded: a kernel launch there
//! costs several recordings.
use crate::exec::launch::Launch;
use crate::types::Space;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Launches (work items) this small run at once when flushes are small.
const SMALL: i64 = 1 << 14;
/// Average launches per flush below which recording does not pay.
const FEW: f64 = 2.5;
/// A trial of recording every this many launches run at once.
const PROBE: u64 = 256;

/// Average launches per flush (f64 bits); starts high: record by default.
static AVERAGE: AtomicU64 = AtomicU64::new(0x4020_0000_0000_0000); // 8.0
static BYPASSED: AtomicU64 = AtomicU64::new(0);
static TRIAL: AtomicBool = AtomicBool::new(false);

fn work(l: &Launch) -> i64 {
    if l.key.rank == 0 {
        // A team launch: league size times team size (AUTO counts as one).
        return l.hi.first().copied().unwrap_or(0) * l.hi.get(1).copied().unwrap_or(1).max(1);
    }
    l.lo.iter()
        .zip(&l.hi)
        .map(|(a, b)| (b - a).max(0))
        .product()
}

/// Whether `l` should run at once rather than be recorded; `folds` says
/// whether it would fold into the newest pending launch (that pays: kept).
pub fn run_at_once(l: &Launch, folds: impl FnOnce() -> bool) -> bool {
    if l.key.space == Space::Cuda
        || work(l) > SMALL
        || TRIAL.load(Ordering::Relaxed)
        || f64::from_bits(AVERAGE.load(Ordering::Relaxed)) > FEW
        || crate::config::get().is_disabled("adaptive")
        || folds()
    {
        return false;
    }
    if BYPASSED.fetch_add(1, Ordering::Relaxed) % PROBE == PROBE - 1 {
        TRIAL.store(true, Ordering::Relaxed);
        return false;
    }
    true
}

/// Lazy mode was switched: record until flushes say otherwise.
pub fn reset() {
    AVERAGE.store(8.0f64.to_bits(), Ordering::Relaxed);
    TRIAL.store(false, Ordering::Relaxed);
    // The probe period counts from here too (not from earlier phases).
    BYPASSED.store(0, Ordering::Relaxed);
}

/// A flush ran `launches` launches: the average moves towards it.
pub fn observe(launches: usize) {
    let avg = f64::from_bits(AVERAGE.load(Ordering::Relaxed));
    let next = 0.75 * avg + 0.25 * launches as f64;
    AVERAGE.store(next.to_bits(), Ordering::Relaxed);
    TRIAL.store(false, Ordering::Relaxed);
}
