//! The cost signal: whether recording small host launches costs more than
//! running them at once. Tiny kernels fused still run about as long as
//! apart, so on the host the bookkeeping (recording, planning) can cost more
//! than fusion saves; then such launches run at once, as in eager mode
//! (memo/slots.rs asks `bypassing`, with its probes), and their pending inputs
//! are flushed first, so results are the same.
//!
//! Measured over small host launches only, as moving averages: what a launch
//! costs recorded (its share of the recording, planning and kernels of a
//! flush of them; one recording in eight timed, counted eight times) and
//! what it costs run at once (one in 128 timed). While launches are
//! recorded, every `PROBE`-th such flush runs the next `EAGER_TRIAL`
//! launches at once to measure that side; while they run at once, the memo's
//! probes record one now and then, and the launches after it until the next
//! flush (a trial of recording), whose flush measures this side. Between
//! trials, a small launch submitted while something is pending runs now,
//! after what it depends on, rather than being recorded.
//! `PK_FUSION_DISABLE=adaptive_cost` switches it off (the test suite does:
//! its fusion checks must not depend on timing), and `=adaptive` with the
//! rest of the memo's running at once. GPU launches are never small: a kernel launch there
//! costs several recordings.
use crate::exec::launch::Launch;
use crate::types::{Pattern, Space};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Work items a launch this small is measured and may run at once.
const SMALL: i64 = 1 << 14;
/// A trial of running at once every this many measured flushes.
const PROBE: u64 = 256;
/// Launches a trial of running at once takes.
const EAGER_TRIAL: u64 = 16;
/// Recording must cost this much more than running at once to be given up
/// (a margin, so that noise does not flip the choice back and forth).
const MARGIN: f64 = 1.25;
/// One launch run at once in this many is timed.
const TIME_EVERY: u64 = 128;
/// Per-launch samples above this (ns) are no launch's cost but a compile's
/// (a kernel's first use) or a pause of the machine: not averaged in.
const OUTLIER_NS: f64 = 1e6;

/// The signal's state: counters of a heuristic, read on every small launch,
/// so plain loads and stores (a count lost to a race only moves a sample).
struct Signal {
    /// Nanoseconds per small host launch, recorded and run at once (f64
    /// bits, moving averages; 0: not measured yet).
    lazy_ns: AtomicU64,
    eager_ns: AtomicU64,
    /// Recording time of the small host launches since the last flush (ns).
    recording_ns: AtomicU64,
    /// Launches left in a trial of running at once; measured flushes.
    eager_left: AtomicU64,
    flushes: AtomicU64,
    /// Small launches run at once so far (one in `TIME_EVERY` is timed).
    runs: AtomicU64,
    /// The generator that picks which recordings are timed.
    records: AtomicU64,
    /// `does_not_pay` of the averages, kept up to date by what changes them.
    bypass: AtomicBool,
    /// Small launches a trial of recording still records (memo/slots.rs' probe
    /// of a cheap kernel starts one): until the next flush, or this many.
    trial_left: AtomicU64,
    /// The last launch the memo ran at once was a reduction (or scan).
    after_reduction: AtomicBool,
}

static SIGNAL: Signal = Signal {
    lazy_ns: AtomicU64::new(0),
    eager_ns: AtomicU64::new(0),
    recording_ns: AtomicU64::new(0),
    eager_left: AtomicU64::new(0),
    flushes: AtomicU64::new(0),
    runs: AtomicU64::new(0),
    records: AtomicU64::new(0x9e37_79b9_7f4a_7c15),
    bypass: AtomicBool::new(false),
    trial_left: AtomicU64::new(0),
    after_reduction: AtomicBool::new(false),
};

/// Whether the signal is on (switches.rs: `adaptive_cost`).
#[inline]
fn measuring() -> bool {
    super::switches::on().adaptive_cost
}

/// Whether `l` is a small host launch (with the adaptive choices on): one
/// the signal measures, and the memo learns flushes of.
#[inline(always)]
pub fn small(l: &Launch) -> bool {
    l.key.space != Space::Cuda && work(l) <= SMALL && super::switches::on().adaptive
}

#[inline(always)]
fn work(l: &Launch) -> i64 {
    match (l.key.rank, l.lo.as_slice(), l.hi.as_slice()) {
        // A team launch: league size times team size (AUTO counts as one).
        (0, _, hi) => hi.first().copied().unwrap_or(0) * hi.get(1).copied().unwrap_or(1).max(1),
        // The common case: one range.
        (_, [a], [b]) => (b - a).max(0),
        (_, lo, hi) => lo.iter().zip(hi).map(|(a, b)| (b - a).max(0)).product(),
    }
}

fn load(a: &AtomicU64) -> f64 {
    f64::from_bits(a.load(Ordering::Relaxed))
}

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

fn refresh() {
    let (lazy, eager) = (load(&SIGNAL.lazy_ns), load(&SIGNAL.eager_ns));
    let bypass = eager > 0.0 && lazy > MARGIN * eager;
    SIGNAL.bypass.store(bypass, Ordering::Relaxed);
}

/// Whether recording small host launches measurably costs more than running
/// them at once.
#[inline]
pub fn bypassing() -> bool {
    measuring() && SIGNAL.bypass.load(Ordering::Relaxed)
}

/// Most launches a trial of recording records: a program that reads
/// nothing for long has flushes of that many launches (the trial then ends,
/// measured when their flush comes).
const TRIAL_LAUNCHES: u64 = 64;

/// A probe of a kernel that runs at once because recording costs more: the
/// launches after it are recorded (until the next flush, or
/// `TRIAL_LAUNCHES`), so that the flush measures whole iterations of a loop.
pub fn start_trial() {
    SIGNAL.trial_left.store(TRIAL_LAUNCHES, Ordering::Relaxed);
}

/// `l` runs at once (memo/slots.rs): whether it is a reduction is kept.
#[inline]
pub fn runs_at_once(l: &Launch) {
    let reduction = l.key.pattern != Pattern::For;
    if SIGNAL.after_reduction.load(Ordering::Relaxed) != reduction {
        SIGNAL.after_reduction.store(reduction, Ordering::Relaxed);
    }
}

/// Whether the last launch run at once was a reduction: a loop's iteration
/// likely starts with the next launch.
#[inline]
pub fn after_reduction() -> bool {
    SIGNAL.after_reduction.load(Ordering::Relaxed)
}

/// Whether a small host launch submitted while something is pending runs
/// now (after what it depends on) rather than being recorded: recording
/// costs more, and no trial of recording is on.
#[inline]
pub fn runs_now(l: &Launch) -> bool {
    bypassing() && SIGNAL.trial_left.load(Ordering::Relaxed) == 0 && small(l)
}

/// Whether `l` is a launch of a trial of running at once (it then runs at
/// once, timed).
#[inline]
pub fn eager_trial(l: &Launch) -> bool {
    let left = SIGNAL.eager_left.load(Ordering::Relaxed);
    if left == 0 || !small(l) {
        return false;
    }
    SIGNAL.eager_left.store(left - 1, Ordering::Relaxed);
    true
}

/// How recording `l` is measured: None when it is not (not a small host
/// launch); else the weight its time counts with, 0 for a launch not timed.
pub fn recording_weight(l: &Launch) -> Option<u64> {
    if !(small(l) && measuring()) {
        return None;
    }
    // Picked at random, not every eighth: a loop of eight launches per flush
    // would otherwise always time the same one of them.
    let mut x = SIGNAL.records.load(Ordering::Relaxed) | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    SIGNAL.records.store(x, Ordering::Relaxed);
    Some(if x.is_multiple_of(8) { 8 } else { 0 })
}

/// A small host launch was recorded, in `ns` counted `weight` times.
pub fn recorded(ns: u64, weight: u64) {
    SIGNAL
        .recording_ns
        .fetch_add(ns * weight, Ordering::Relaxed);
    let left = SIGNAL.trial_left.load(Ordering::Relaxed);
    if left > 0 {
        SIGNAL.trial_left.store(left - 1, Ordering::Relaxed);
    }
}

/// Whether to time `l`, run at once: a small launch, one in `TIME_EVERY`.
#[inline]
pub fn time_at_once(l: &Launch) -> bool {
    if !small(l) {
        return false;
    }
    let runs = SIGNAL.runs.load(Ordering::Relaxed);
    SIGNAL.runs.store(runs + 1, Ordering::Relaxed);
    measuring() && runs.is_multiple_of(TIME_EVERY)
}

/// A small host launch ran at once in `ns`.
pub fn ran_at_once(ns: u64) {
    mix(&SIGNAL.eager_ns, ns as f64);
    refresh();
}

/// A flush ran (a trial of recording is over): of `launches` small host
/// launches when `ns` is given, in `ns` (planning and kernels), which with
/// their recording is the cost of a recorded launch.
pub fn flushed(launches: usize, ns: Option<u64>) {
    if SIGNAL.trial_left.load(Ordering::Relaxed) > 0 {
        SIGNAL.trial_left.store(0, Ordering::Relaxed);
    }
    let Some(ns) = ns else { return };
    let recording = SIGNAL.recording_ns.swap(0, Ordering::Relaxed);
    if launches == 0 || !measuring() {
        return;
    }
    if !mix(&SIGNAL.lazy_ns, (ns + recording) as f64 / launches as f64) {
        return;
    }
    refresh();
    let n = SIGNAL.flushes.fetch_add(1, Ordering::Relaxed);
    // Measure the other side now and then (first: once recording was measured).
    if n.is_multiple_of(PROBE) {
        SIGNAL.eager_left.store(EAGER_TRIAL, Ordering::Relaxed);
    }
}

/// The measured costs (recorded, run at once; ns per launch), after
/// replacing them with `set` when given (which also ends a trial of running
/// at once: tests start from a known state).
pub fn costs(set: Option<(f64, f64)>) -> (f64, f64) {
    if let Some((lazy, eager)) = set {
        SIGNAL.lazy_ns.store(lazy.to_bits(), Ordering::Relaxed);
        SIGNAL.eager_ns.store(eager.to_bits(), Ordering::Relaxed);
        SIGNAL.eager_left.store(0, Ordering::Relaxed);
        refresh();
    }
    (load(&SIGNAL.lazy_ns), load(&SIGNAL.eager_ns))
}

/// Lazy mode was switched: the next measured flush starts a trial of
/// running at once. The measured costs stay: what a launch costs recorded
/// or run at once is the machine's, not the phase's.
pub fn reset() {
    SIGNAL.recording_ns.store(0, Ordering::Relaxed);
    SIGNAL.trial_left.store(0, Ordering::Relaxed);
    SIGNAL.flushes.store(0, Ordering::Relaxed);
}
