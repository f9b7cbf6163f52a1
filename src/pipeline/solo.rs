//! Launches that always flush alone. A launch that its last flushes ran by
//! itself (nothing fused with it, kept in registers, deferred or dropped)
//! gained nothing from being recorded, and paid recording and planning on
//! top of its kernel: 1-3 us, a fifth of a host kernel over 2^15 doubles,
//! about a kernel launch on the GPU. A program that reads a result or an
//! element after every launch pays this on every launch. (Small host
//! launches have the adaptive bypass, adaptive.rs, with signals of its own.)
//!
//! Such a launch, submitted while nothing is pending (so nothing recorded
//! before it could fuse with it), runs at once as in eager mode. Every
//! `PROBE`th is recorded again (the period doubles, up to `MAX_PERIOD`,
//! while probes find it still alone): a program whose launches start to
//! fuse (a consumer now follows before the read) gets fusion back at the
//! next probe. `PK_FUSION_DISABLE=adaptive` switches this off too.
use super::planning::Planned;
use crate::exec::kernel::{ByDigest, KernelKey};
use crate::exec::launch::Launch;
use crate::lazy::graph::Node;
use dashmap::DashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};

/// Flushes alone in a row before a kernel's launches run at once.
const ALONE: u32 = 3;
/// While they do, every this many is recorded again, at first.
const PROBE: u32 = 64;
const MAX_PERIOD: u32 = 16 * PROBE;

struct Streak {
    /// Flushes in a row that ran a launch of this kernel by itself.
    alone: u32,
    /// Launches run at once since the last recorded one (counted under the
    /// map's shared lock: every launch asks, only flushes change the rest).
    skipped: AtomicU32,
    /// Launches run at once between probes.
    period: u32,
}

impl Default for Streak {
    fn default() -> Self {
        Streak {
            alone: 0,
            skipped: AtomicU32::new(0),
            period: PROBE,
        }
    }
}

/// Keyed by the kernel key's digest, not the key: every launch asks, and
/// comparing whole keys doubled the cost of asking. Two kernels whose
/// digests collide would share a streak, which only moves when a launch runs
/// at once or is recorded (either gives the same results).
static STREAKS: LazyLock<DashMap<u64, Streak, ByDigest>> = LazyLock::new(DashMap::default);

/// Whether this module decides about `l`: a launch the adaptive bypass
/// does not (it has its own signals for small host ones).
fn tracked(l: &Launch) -> bool {
    super::adaptive::on() && !super::adaptive::small(l)
}

/// Whether `l`, submitted while nothing is pending, should run at once.
pub fn run_at_once(l: &Launch) -> bool {
    if !tracked(l) {
        return false;
    }
    let Some(s) = STREAKS.get(&l.key.digest()) else {
        return false;
    };
    if s.alone < ALONE {
        return false;
    }
    // A plain load and store: a count lost to a race only moves a probe.
    let skipped = s.skipped.load(Ordering::Relaxed) + 1;
    if skipped >= s.period {
        s.skipped.store(0, Ordering::Relaxed);
        return false; // a probe: recorded, and its flush says what it is now
    }
    s.skipped.store(skipped, Ordering::Relaxed);
    true
}

/// After a flush ran `planned` over `nodes`: which kernels ran alone.
pub fn flushed(nodes: &[Arc<Node>], planned: &Planned) {
    // The flush's launches come in program order (sequence numbers rise).
    let node = |seq: u64| {
        nodes
            .binary_search_by_key(&seq, |n| n.seq)
            .ok()
            .map(|k| &nodes[k])
    };
    for r in &planned.regions {
        let alone = r.seqs.len() == 1 && r.registers.is_empty() && r.deferred.is_empty();
        for n in r.seqs.iter().filter_map(|&s| node(s)) {
            if tracked(&n.launch) {
                note(&n.launch.key, alone && n.count() == 1);
            }
        }
    }
    for n in planned.overwritten.iter().filter(|n| tracked(&n.launch)) {
        note(&n.launch.key, false);
    }
}

fn note(key: &KernelKey, alone: bool) {
    let mut s = STREAKS.entry(key.digest()).or_default();
    // A probe that found it alone again: probe half as often.
    s.period = match (alone, s.alone >= ALONE) {
        (true, true) => (2 * s.period).min(MAX_PERIOD),
        (true, false) => s.period,
        (false, _) => PROBE,
    };
    s.alone = if alone { s.alone.saturating_add(1) } else { 0 };
    s.skipped.store(0, Ordering::Relaxed);
}

/// Starts over (lazy mode switched).
pub fn forget() {
    STREAKS.clear();
}
