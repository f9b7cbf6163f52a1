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
use crate::exec::kernel::KernelKey;
use crate::exec::launch::Launch;
use crate::lazy::graph::Node;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Flushes alone in a row before a kernel's launches run at once.
const ALONE: u32 = 3;
/// While they do, every this many is recorded again, at first.
const PROBE: u32 = 64;
const MAX_PERIOD: u32 = 16 * PROBE;

/// A kernel's streak, packed in one word of its slot.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Streak {
    /// Flushes in a row that ran a launch of this kernel by itself.
    alone: u32,
    /// Launches run at once since the last recorded one.
    skipped: u32,
    /// Launches run at once between probes.
    period: u32,
}

impl Streak {
    const NEW: Streak = Streak {
        alone: 0,
        skipped: 0,
        period: PROBE,
    };

    fn pack(self) -> u64 {
        (u64::from(self.alone.min(u16::MAX.into())) << 48)
            | (u64::from(self.period) << 32)
            | u64::from(self.skipped)
    }

    fn unpack(w: u64) -> Streak {
        Streak {
            alone: (w >> 48) as u32,
            period: ((w >> 32) & 0xffff) as u32,
            skipped: w as u32,
        }
    }
}

/// Streaks in a direct-mapped table indexed by the kernel key's digest:
/// every launch past the bypass's size asks, and a shared map's lock cost
/// two locked instructions and a fifth of the lazy path of such a launch.
/// Asking is two loads; only flushes write. What can go wrong is bounded:
/// two kernels in one slot evict each other's streak (both are recorded),
/// and a race between a flush and a launch in another thread can pair one
/// kernel's digest with another's streak or lose a count (a launch then runs
/// at once or is recorded, which give the same results; a probe moves).
struct Slot {
    digest: AtomicU64,
    streak: AtomicU64,
}

const SLOTS: usize = 1024;

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        digest: AtomicU64::new(0),
        streak: AtomicU64::new(0),
    }
}; SLOTS];

fn slot(digest: u64) -> &'static Slot {
    &TABLE[(digest % SLOTS as u64) as usize]
}

/// The streak of the kernel with `digest`, if its slot holds it.
fn streak(s: &Slot, digest: u64) -> Option<Streak> {
    let w = s.streak.load(Ordering::Relaxed);
    (w != 0 && s.digest.load(Ordering::Relaxed) == digest).then(|| Streak::unpack(w))
}

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
    let (d, s) = (l.key.digest(), slot(l.key.digest()));
    let Some(mut st) = streak(s, d) else {
        return false;
    };
    if st.alone < ALONE {
        return false;
    }
    st.skipped += 1;
    let probe = st.skipped >= st.period;
    if probe {
        st.skipped = 0; // recorded, and its flush says what it is now
    }
    s.streak.store(st.pack(), Ordering::Relaxed);
    !probe
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
    let (d, s) = (key.digest(), slot(key.digest()));
    let old = streak(s, d).unwrap_or(Streak::NEW);
    // A probe that found it alone again: probe half as often.
    let period = match (alone, old.alone >= ALONE) {
        (true, true) => (2 * old.period).min(MAX_PERIOD),
        (true, false) => old.period,
        (false, _) => PROBE,
    };
    let new = Streak {
        alone: if alone {
            old.alone.saturating_add(1)
        } else {
            0
        },
        skipped: 0,
        period,
    };
    // The streak first: a reader that sees the new digest with the old
    // slot's streak only misjudges one launch (see Slot).
    s.streak.store(new.pack(), Ordering::Relaxed);
    s.digest.store(d, Ordering::Relaxed);
}

/// Starts over (lazy mode switched).
pub fn forget() {
    for s in &TABLE {
        s.streak.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streak_survives_packing() {
        for st in [
            Streak::NEW,
            Streak {
                alone: 7,
                skipped: 1023,
                period: MAX_PERIOD,
            },
        ] {
            assert_eq!(Streak::unpack(st.pack()), st);
            assert_ne!(st.pack(), 0, "an empty slot reads as 0");
        }
    }
}
