//! When recording cannot pay: a program that reads a result after every
//! launch or two of tiny host kernels gains nothing from fusion (there is
//! nothing to fuse) and pays for recording and planning on top of each
//! kernel. Such launches run at once instead, as in eager mode (their
//! pending inputs are flushed first, so results are the same).
//!
//! Two signals, both over small host launches only:
//! - the number of launches per flush, averaged over recent flushes (below
//!   `FEW`, nothing is fused);
//! - measured cost: what a launch costs recorded (recording, planning and
//!   its share of the fused kernel) against what it costs run at once. Tiny
//!   kernels fused still run about as long as apart, so on the host the
//!   bookkeeping can cost more than fusion saves.
//!
//! While launches run at once no flush sees them, so every `PERIOD`-th small
//! launch starts a trial: launches are recorded again until the next flush
//! (or for `TRIAL_LAUNCHES`, which count as a flush that size), which updates
//! both averages (the period doubles while trials keep finding
//! that recording does not pay). While they are recorded, every `PROBE`-th
//! flush runs the next `EAGER_TRIAL` launches at once to measure that side.
//! Between trials and timed launches, a launch run at once with nothing
//! pending takes a countdown (`fast`) that `arm_fast` set, counting those
//! launches in advance: a read-every-iteration loop then pays about half of
//! what it paid for lazy mode (`make bench-instructions`).
//! `PK_FUSION_DISABLE=adaptive` switches both off, `=adaptive_cost` the
//! second (the test suite does: its fusion checks must not depend on
//! timing). GPU launches are always recorded: a kernel launch there costs
//! several recordings.
use crate::exec::launch::Launch;
use crate::types::{Pattern, Space};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Launches (work items) this small run at once when flushes are small.
const SMALL: i64 = 1 << 14;
/// Average launches per flush below which recording does not pay.
const FEW: f64 = 2.5;
/// A trial of recording every this many launches run at once (and of
/// running at once every this many flushes).
const PROBE: u64 = 256;
/// Launches a trial of running at once takes.
const EAGER_TRIAL: u64 = 16;
/// Recording must cost this much more than running at once to be given up
/// (a margin, so that noise does not flip the choice back and forth).
const MARGIN: f64 = 1.25;

/// Average launches per flush (f64 bits); starts high: record by default.
static AVERAGE: AtomicU64 = AtomicU64::new(0x4020_0000_0000_0000); // 8.0
static BYPASSED: AtomicU64 = AtomicU64::new(0);
/// Launches run at once between trials: `PROBE`, doubled (up to
/// `MAX_PERIOD`) by each trial that finds recording still does not pay,
/// back to `PROBE` when it does.
static PERIOD: AtomicU64 = AtomicU64::new(PROBE);
/// A trial costs a read-every-iteration loop about ten launches (recording
/// and a flush): 16 384 launches apart that is under 0.1%, and a program
/// whose phase changes waits a few milliseconds for fusion to come back.
const MAX_PERIOD: u64 = 64 * PROBE;
static TRIAL: AtomicBool = AtomicBool::new(false);
/// Most launches a due trial waits for a reduction to start after.
const ALIGN: u64 = 64;
/// Most launches a trial of recording records before it counts as a flush.
const TRIAL_LAUNCHES: u64 = 64;
static TRIAL_LEFT: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds per small host launch, recorded and run at once (f64 bits,
/// moving averages; 0: not measured yet).
static LAZY_NS: AtomicU64 = AtomicU64::new(0);
static EAGER_NS: AtomicU64 = AtomicU64::new(0);
/// Recording time of the small host launches since the last flush (ns).
static RECORDING_NS: AtomicU64 = AtomicU64::new(0);
/// Launches left in a trial of running at once; flushes seen.
static EAGER_LEFT: AtomicU64 = AtomicU64::new(0);
static FLUSHES: AtomicU64 = AtomicU64::new(0);

#[inline(always)]
fn work(l: &Launch) -> i64 {
    match (l.key.rank, l.lo.as_slice(), l.hi.as_slice()) {
        // A team launch: league size times team size (AUTO counts as one).
        (0, _, hi) => hi.first().copied().unwrap_or(0) * hi.get(1).copied().unwrap_or(1).max(1),
        // The common case, asked on every small launch: one range.
        (_, [a], [b]) => (b - a).max(0),
        (_, lo, hi) => lo.iter().zip(hi).map(|(a, b)| (b - a).max(0)).product(),
    }
}

/// Whether `l` is a launch this module decides about: a small host launch.
#[inline(always)]
pub fn small(l: &Launch) -> bool {
    l.key.space != Space::Cuda && work(l) <= SMALL && switches().0
}

/// Whether the adaptive choices are on (`PK_FUSION_DISABLE=adaptive`: off).
pub fn on() -> bool {
    switches().0
}

/// (adaptive, adaptive_cost): whether each is on. The configuration is the
/// process's, read once; these are asked on every small launch.
#[inline]
fn switches() -> (bool, bool) {
    static SWITCHES: OnceLock<(bool, bool)> = OnceLock::new();
    *SWITCHES.get_or_init(|| {
        let c = crate::config::get();
        (!c.is_disabled("adaptive"), !c.is_disabled("adaptive_cost"))
    })
}

/// How recording `l` is measured: None when it is not (not a small host
/// launch, or the cost signal is off); else the weight its time counts with,
/// 0 for a launch not timed. Each launch of a trial is timed, one in eight
/// otherwise, counted eight times (reading the clock twice is a fair part of
/// recording a tiny launch).
pub fn recording_weight(l: &Launch) -> Option<u64> {
    static RECORDS: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);
    if !(small(l) && cost_aware()) {
        return None;
    }
    if TRIAL.load(Ordering::Relaxed) {
        return Some(1);
    }
    // Picked at random, not every eighth: a loop of eight launches per flush
    // would otherwise always time the same one of them.
    let mut x = RECORDS.load(Ordering::Relaxed) | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    RECORDS.store(x, Ordering::Relaxed);
    Some(if x % 8 == 0 { 8 } else { 0 })
}

fn cost_aware() -> bool {
    switches().1
}

fn load(a: &AtomicU64) -> f64 {
    f64::from_bits(a.load(Ordering::Relaxed))
}

/// Per-launch samples above this (ns) are no launch's cost but a compile's
/// (a kernel's first use) or a pause of the machine: not averaged in.
const OUTLIER_NS: f64 = 1e6;

/// A moving average that starts at its first sample; whether it took it.
fn mix(a: &AtomicU64, sample: f64) -> bool {
    if sample > OUTLIER_NS {
        return false;
    }
    let old = load(a);
    let next = if old == 0.0 {
        sample
    } else {
        0.75 * old + 0.25 * sample
    };
    a.store(next.to_bits(), Ordering::Relaxed);
    true
}

/// Whether `l` should run at once rather than be recorded; `quiet`: nothing
/// is pending; `folds` says whether it would fold into the newest pending
/// launch (that pays: kept).
pub fn run_at_once(l: &Launch, quiet: bool, folds: impl FnOnce() -> bool) -> bool {
    // The globals first (a load each): while recording pays, most launches
    // stop at the first two, and the size of the launch is asked last.
    let trial = EAGER_LEFT.load(Ordering::Relaxed) > 0;
    if (!trial && !BYPASS.load(Ordering::Relaxed))
        || TRIAL.load(Ordering::Relaxed)
        || !small(l)
        || folds()
    {
        return false;
    }
    if trial {
        EAGER_LEFT.fetch_sub(1, Ordering::Relaxed);
        return true;
    }
    // Counted in advance for the fast path (a launch with something pending
    // came this way instead): back to the launches that came.
    disarm();
    // Counters of a heuristic: a plain load and store (no locked
    // read-modify-write on every launch); a count lost to a race only
    // shifts when the next trial starts (or, against `disarm` in a thread
    // without the GIL, lets a few launches more take the fast path).
    let bypassed = BYPASSED.load(Ordering::Relaxed) + 1;
    BYPASSED.store(bypassed, Ordering::Relaxed);
    let period = PERIOD.load(Ordering::Relaxed);
    // A reduction's total is usually read at once: a trial is best started
    // right after one, so that it records whole flushes of the program (the
    // tape learns from them), not the tail of one. A due trial waits for a
    // reduction (for at most `ALIGN` launches), which runs at once, and
    // records from the next launch on.
    // (With something pending the reduction's own flush would end the
    // trial at once: it waits for one with nothing pending.)
    let after = l.key.pattern != Pattern::For && quiet;
    if bypassed >= period && (after || bypassed >= period + ALIGN) {
        BYPASSED.store(0, Ordering::Relaxed);
        TRIAL_LEFT.store(TRIAL_LAUNCHES, Ordering::Relaxed);
        TRIAL.store(true, Ordering::Relaxed);
        return after;
    }
    true
}

/// After `run_at_once` said yes to a launch with nothing pending and
/// `time_at_once` counted it, untimed: until the next trial is due, or the next
/// launch to time, the small launches run at once with nothing pending take
/// `fast`. They are counted now, as if each had come this way.
pub fn arm_fast() {
    if EAGER_LEFT.load(Ordering::Relaxed) > 0
        || TRIAL.load(Ordering::Relaxed)
        || !BYPASS.load(Ordering::Relaxed)
    {
        return;
    }
    let bypassed = BYPASSED.load(Ordering::Relaxed);
    let until_trial = PERIOD.load(Ordering::Relaxed).saturating_sub(bypassed + 1);
    let runs = RUNS.load(Ordering::Relaxed);
    let timing = cost_aware();
    let until_timed = match timing {
        true => (TIME_EVERY - runs % TIME_EVERY) % TIME_EVERY,
        false => u64::MAX,
    };
    let left = until_trial.min(until_timed);
    if left > 0 {
        BYPASSED.store(bypassed + left, Ordering::Relaxed);
        if timing {
            RUNS.store(runs + left, Ordering::Relaxed);
        }
        FAST.store(left, Ordering::Relaxed);
    }
}

/// Small host launches that may run at once, with nothing pending, without
/// asking `run_at_once` (counted down by `fast`; set by `arm_fast`, and
/// back to 0 when anything the choice depends on changes (`refresh`), and
/// when a launch with something pending comes to `run_at_once`).
static FAST: AtomicU64 = AtomicU64::new(0);

/// The bypass's fast path, asked before anything else of a launch in lazy
/// mode with nothing pending: whether it runs at once (untimed). A loop that
/// reads its result every launch or two pays a load, a store and the size
/// test per launch instead of the whole choice.
#[inline]
pub fn fast(l: &Launch) -> bool {
    let left = FAST.load(Ordering::Relaxed);
    if left == 0 || !small(l) {
        return false;
    }
    FAST.store(left - 1, Ordering::Relaxed);
    true
}

/// `does_not_pay` of the current averages, kept up to date by whatever
/// changes them (read on every small launch; they change far less often).
static BYPASS: AtomicBool = AtomicBool::new(false);

/// Whether small host launches run at once (recording them does not pay).
pub fn bypassing() -> bool {
    switches().0 && BYPASS.load(Ordering::Relaxed)
}

fn refresh() {
    BYPASS.store(does_not_pay(load(&AVERAGE)), Ordering::Relaxed);
    disarm();
}

/// Ends the fast path: the launches it counted in advance but did not
/// take are taken off the counts again. Unarmed (the common case on the
/// paths that ask) it costs a load, not a locked swap.
fn disarm() {
    if FAST.load(Ordering::Relaxed) == 0 {
        return;
    }
    let left = FAST.swap(0, Ordering::Relaxed);
    let bypassed = BYPASSED.load(Ordering::Relaxed);
    BYPASSED.store(bypassed.saturating_sub(left), Ordering::Relaxed);
    if cost_aware() {
        let runs = RUNS.load(Ordering::Relaxed);
        RUNS.store(runs.saturating_sub(left), Ordering::Relaxed);
    }
}

/// Whether recording small host launches does not pay: flushes of `average`
/// launches fuse nothing, or recording measurably costs more.
fn does_not_pay(average: f64) -> bool {
    let (lazy, eager) = (load(&LAZY_NS), load(&EAGER_NS));
    average <= FEW || (cost_aware() && eager > 0.0 && lazy > MARGIN * eager)
}

/// A small host launch was recorded, in `ns` counted `weight` times (see
/// `recording_weight`; 0: not timed).
pub fn recorded(ns: u64, weight: u64) {
    RECORDING_NS.fetch_add(ns * weight, Ordering::Relaxed);
    // A trial of a program that reads nothing for long ends before its flush:
    // that many launches between reads is a flush of that size.
    if TRIAL.load(Ordering::Relaxed) && TRIAL_LEFT.fetch_sub(1, Ordering::Relaxed) == 1 {
        observe(TRIAL_LAUNCHES as usize);
    }
}

/// Whether to time this launch run at once (if small): each one of a trial,
/// and one in 128 otherwise (reading the clock twice is a fair part of a tiny
/// launch; a moving average needs no more).
pub fn time_at_once() -> bool {
    // A launch that did not come through `run_at_once` (one on NumPy memory
    // with something pending) ends the fast path's advance here: the next
    // launch to time is counted from the launches that came.
    disarm();
    cost_aware()
        && (EAGER_LEFT.load(Ordering::Relaxed) > 0 || {
            let runs = RUNS.load(Ordering::Relaxed);
            RUNS.store(runs + 1, Ordering::Relaxed);
            runs % TIME_EVERY == 0
        })
}

/// One launch run at once in this many is timed (`time_at_once`).
const TIME_EVERY: u64 = 128;
/// Small host launches run at once or now so far, untimed ones included
/// (a trial of running at once times its launches whatever this says).
static RUNS: AtomicU64 = AtomicU64::new(0);

/// A small host launch ran at once in `ns`.
pub fn ran_at_once(ns: u64) {
    mix(&EAGER_NS, ns as f64);
    refresh();
}

/// A flush of `launches` small host launches took `ns` (planning and
/// kernels): with their recording, the cost of a recorded launch.
pub fn flushed_small(launches: usize, ns: u64) {
    let recording = RECORDING_NS.swap(0, Ordering::Relaxed);
    if launches == 0 || !cost_aware() {
        return;
    }
    if !mix(&LAZY_NS, (ns + recording) as f64 / launches as f64) {
        return;
    }
    refresh();
    let n = FLUSHES.fetch_add(1, Ordering::Relaxed);
    // Measure the other side now and then (first: once recording was measured).
    if n % PROBE == 0 {
        EAGER_LEFT.store(EAGER_TRIAL, Ordering::Relaxed);
    }
}

/// (`BYPASSED`, `RUNS`, `FAST`): the first two count the fast path's
/// launches in advance, so less `FAST` they count the launches that came,
/// whichever way they came (tests check them).
pub fn counts() -> (u64, u64, u64) {
    (
        BYPASSED.load(Ordering::Relaxed),
        RUNS.load(Ordering::Relaxed),
        FAST.load(Ordering::Relaxed),
    )
}

/// The measured costs (recorded, run at once; ns per launch), after
/// replacing them with `set` when given (which also ends a trial of running
/// at once: tests start from a known state).
pub fn costs(set: Option<(f64, f64)>) -> (f64, f64) {
    if let Some((lazy, eager)) = set {
        LAZY_NS.store(lazy.to_bits(), Ordering::Relaxed);
        EAGER_NS.store(eager.to_bits(), Ordering::Relaxed);
        EAGER_LEFT.store(0, Ordering::Relaxed);
        refresh();
    }
    (load(&LAZY_NS), load(&EAGER_NS))
}

/// Lazy mode was switched: record until flushes say otherwise.
pub fn reset() {
    AVERAGE.store(8.0f64.to_bits(), Ordering::Relaxed);
    TRIAL.store(false, Ordering::Relaxed);
    // The probe period counts from here too (not from earlier phases). The
    // measured costs stay: what a launch costs recorded or run at once is
    // the machine's, not the phase's (the next flush measures again).
    BYPASSED.store(0, Ordering::Relaxed);
    PERIOD.store(PROBE, Ordering::Relaxed);
    RECORDING_NS.store(0, Ordering::Relaxed);
    FLUSHES.store(0, Ordering::Relaxed);
    refresh();
}

/// A flush ran `launches` launches: the average moves towards it.
pub fn observe(launches: usize) {
    let avg = f64::from_bits(AVERAGE.load(Ordering::Relaxed));
    let next = 0.75 * avg + 0.25 * launches as f64;
    AVERAGE.store(next.to_bits(), Ordering::Relaxed);
    refresh();
    if TRIAL.swap(false, Ordering::Relaxed) {
        // A trial ended: probe less often while trials find nothing to gain.
        let p = PERIOD.load(Ordering::Relaxed);
        let p = if does_not_pay(next) {
            (2 * p).min(MAX_PERIOD)
        } else {
            PROBE
        };
        PERIOD.store(p, Ordering::Relaxed);
    }
}
