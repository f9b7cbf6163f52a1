//! Launches that run at once. A launch that its last flushes ran by itself
//! (nothing fused with it, kept in registers, deferred or dropped) gained
//! nothing from being recorded, and paid recording and planning on top of
//! its kernel: about a tiny host kernel, a fifth of a host kernel over 2^15
//! doubles, about a kernel launch on the GPU. A program that reads a result
//! or an element after every launch pays this on every launch. So does one
//! whose small host launches fuse, when the cost signal (cost.rs) finds that
//! recording them costs more than running them at once.
//!
//! Such a launch, submitted while nothing is pending (so nothing recorded
//! before it could fuse with it), runs at once as in eager mode. Every
//! `PROBE`th is recorded again (the period doubles, up to `MAX_PERIOD`,
//! while probes find it still alone, or still cheaper at once): a program
//! whose launches start to fuse (a consumer now follows before the read)
//! gets fusion back at the next probe, and the launches after a probe are
//! recorded until the next flush (something is pending), so a probe records
//! whole iterations of a loop, which the tape can learn.
//! `PK_FUSION_DISABLE=adaptive` switches this off.
use super::cost;
use super::planning::Planned;
use crate::exec::launch::Launch;
use crate::lazy::graph::Node;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Flushes alone in a row before a kernel's launches run at once.
const ALONE: u32 = 3;
/// While they do, every this many is recorded again, at first.
const PROBE: u32 = 64;
const MAX_PERIOD: u32 = 16 * PROBE;
/// Most launches a due probe of a cheap kernel waits for a reduction.
const ALIGN: u32 = 64;

/// What the flushes said of a kernel: packed in one word with a tag of its
/// digest, so that a reader never pairs one kernel's digest with another's
/// streak.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Streak {
    /// Flushes in a row that ran a launch of this kernel by itself.
    alone: u32,
    /// Launches run at once between probes.
    period: u32,
}

// `period` has 16 bits of the word.
const _: () = assert!(MAX_PERIOD <= 0xffff);

impl Streak {
    const NEW: Streak = Streak {
        alone: 0,
        period: PROBE,
    };

    /// The word for the kernel with `digest` (never 0: the period is not).
    fn pack(self, digest: u64) -> u64 {
        (tag(digest) << 32) | (u64::from(self.alone.min(0xffff)) << 16) | u64::from(self.period)
    }

    /// The streak in `w` if it is the kernel with `digest`'s.
    fn unpack(w: u64, digest: u64) -> Option<Streak> {
        (w != 0 && w >> 32 == tag(digest)).then_some(Streak {
            alone: ((w >> 16) & 0xffff) as u32,
            period: (w & 0xffff) as u32,
        })
    }
}

/// The digest's high half (the slot index takes its low bits).
fn tag(digest: u64) -> u64 {
    digest >> 32
}

/// Streaks in a direct-mapped table indexed by the kernel key's digest:
/// every launch past the bypass's size asks, and a shared map's lock cost
/// two locked instructions and a fifth of the lazy path of such a launch.
/// Asking is a load of the streak, and a load and a store of the slot's
/// counter; only flushes write the streak. What can go wrong is bounded:
/// two kernels in one slot evict each other's streak (both are recorded,
/// and kernels whose digests agree in the index bits and the tag share one),
/// and a launch racing a flush in another thread can lose a count or write
/// one back over the flush's reset (a probe moves by a launch). Either way a
/// launch runs at once or is recorded, which give the same results.
struct Slot {
    streak: AtomicU64,
    /// Launches run at once since the last recorded one.
    skipped: AtomicU32,
}

const SLOTS: usize = 1024;

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        streak: AtomicU64::new(0),
        skipped: AtomicU32::new(0),
    }
}; SLOTS];

fn slot(digest: u64) -> &'static Slot {
    &TABLE[(digest % SLOTS as u64) as usize]
}

/// Whether a small host launch is cheaper run at once (cost.rs).
fn cheap(l: &Launch) -> bool {
    cost::bypassing() && cost::small(l)
}

/// Whether `l`, submitted while nothing is pending, should run at once.
#[inline]
pub fn run_at_once(l: &Launch) -> bool {
    if !cost::switches().0 {
        return false;
    }
    let d = l.key.digest();
    let s = slot(d);
    let st = Streak::unpack(s.streak.load(Ordering::Relaxed), d);
    let alone = matches!(st, Some(st) if st.alone >= ALONE);
    let period = match st {
        Some(st) if alone => st.period,
        // (A kernel the table lost, or never saw, probes at the first period.)
        _ if cheap(l) => st.map_or(PROBE, |st| st.period),
        _ => return false,
    };
    // A plain load and store: a count lost to a race only moves a probe.
    let skipped = s.skipped.load(Ordering::Relaxed) + 1;
    // A probe of a launch that runs at once because recording costs more
    // starts a trial of recording (cost.rs), best right after a reduction:
    // it then records whole iterations of a loop, which the tape can learn.
    // A due probe waits for one (for at most `ALIGN` launches).
    let due = skipped >= period && (alone || cost::after_reduction() || skipped >= period + ALIGN);
    if due {
        if !alone {
            cost::start_trial();
        }
        s.skipped.store(0, Ordering::Relaxed);
        return false; // a probe: recorded, and its flush says what it is now
    }
    s.skipped.store(skipped, Ordering::Relaxed);
    cost::runs_at_once(l);
    true
}

/// After a flush ran `planned` over `nodes`: which kernels ran alone.
pub fn flushed(nodes: &[Arc<Node>], planned: &Planned) {
    if !cost::switches().0 {
        return;
    }
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
            note(&n.launch, alone && n.count() == 1);
        }
    }
    for n in &planned.overwritten {
        note(&n.launch, false);
    }
}

fn note(l: &Launch, alone: bool) {
    let d = l.key.digest();
    let s = slot(d);
    let old = Streak::unpack(s.streak.load(Ordering::Relaxed), d).unwrap_or(Streak::NEW);
    // A probe that found it still better run at once: probe half as often.
    let cheap = cheap(l);
    let period = match (alone || cheap, old.alone >= ALONE || cheap) {
        (true, true) => (2 * old.period).min(MAX_PERIOD),
        (true, false) => old.period,
        (false, _) => PROBE,
    };
    let alone = if alone {
        old.alone.saturating_add(1)
    } else {
        0
    };
    s.streak
        .store(Streak { alone, period }.pack(d), Ordering::Relaxed);
    s.skipped.store(0, Ordering::Relaxed);
}

/// Starts over (lazy mode switched).
pub fn forget() {
    for s in &TABLE {
        s.streak.store(0, Ordering::Relaxed);
        s.skipped.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streak_survives_packing_and_answers_only_its_kernel() {
        let (d, other_tag, same_tag) = (
            0x1234_5678_9abc_def0_u64,
            0x1234_5679_9abc_def0,
            0x1234_5678_0000_0001,
        );
        for st in [
            Streak::NEW,
            Streak {
                alone: 7,
                period: MAX_PERIOD,
            },
        ] {
            let w = st.pack(d);
            assert_ne!(w, 0, "an empty slot reads as 0");
            assert_eq!(Streak::unpack(w, d), Some(st));
            assert_eq!(Streak::unpack(w, other_tag), None);
            assert_eq!(
                Streak::unpack(w, same_tag),
                Some(st),
                "the tag is the high half"
            );
        }
        assert_eq!(Streak::unpack(0, 0), None);
        let long = Streak {
            alone: 1 << 20,
            period: PROBE,
        };
        assert_eq!(
            Streak::unpack(long.pack(d), d).map(|s| s.alone),
            Some(0xffff),
            "alone saturates"
        );
    }
}
