//! What the memo knows when a launch arrives with nothing pending, by its
//! kernel: what the flushes that began with that kernel did. One word per
//! slot of a direct-mapped table keyed by the kernel key's digest:
//! - the flush was one fused region of small host launches (hold.rs keeps
//!   it as a program): the launch is held, and the flush replays as it comes;
//! - its last `ALONE` flushes ran it by itself (nothing fused with it, kept
//!   in registers, deferred or dropped), or it is a small host launch and
//!   the cost signal (cost.rs) says recording costs more: it runs at once,
//!   as in eager mode. Recording gained it nothing and cost about a tiny
//!   host kernel (a fifth of one over 2^15 doubles, a kernel launch on the
//!   GPU), paid on every launch by a program that reads after each.
//!
//! One probe policy: every `PROBE`th launch that would run at once is
//! recorded instead (the period doubles, up to `MAX_PERIOD`, while probes
//! confirm), so a program whose launches start to fuse gets fusion back at
//! the next probe. A cheap kernel's probe waits for a reduction (at most
//! `ALIGN` launches) and starts a trial of recording (cost.rs): the launches
//! after it are recorded until the next flush, so the probe sees whole
//! iterations of a loop, which become a program. A program needs no probe:
//! a launch that does not continue it gives it back (recorded, and the
//! program forgotten); a slot whose programs were given back `STRIKES` times
//! learns none until the memo forgets.
//!
//! Asking is a load of the word, and a load and a store of the slot's
//! counter (a shared map's lock cost a fifth of such a launch's lazy path);
//! flushes write the streaks, hold.rs the program bit. What can go wrong is
//! bounded: two kernels in one slot evict each other, and a launch racing a
//! flush in another thread can lose a count or a bit. Either way a launch
//! runs at once, is held or is recorded, which give the same results.
use super::super::cost;
use super::super::planning::Planned;
use crate::exec::launch::Launch;
use crate::lazy::graph::Node;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Flushes alone in a row before a kernel's launches run at once.
const ALONE: u64 = 3;
/// While they do, every this many is recorded again, at first.
const PROBE: u64 = 64;
const MAX_PERIOD: u64 = 16 * PROBE;
/// Most launches a due probe of a cheap kernel waits for a reduction.
const ALIGN: u32 = 64;
/// Programs given back before a slot learns no more.
pub(super) const STRIKES: u64 = 2;

// The word: the digest's high half as a tag | a program | strikes (2 bits)
// | flushes alone in a row (13 bits, saturating) | the probe period (16).
const PERIOD: u64 = 0xffff;
const ALONE_SHIFT: u32 = 16;
const ALONE_MAX: u64 = 0x1fff;
const STRIKE_SHIFT: u32 = 29;
pub(super) const PROGRAM: u64 = 1 << 31;
const _: () = assert!(MAX_PERIOD <= PERIOD);

struct Slot {
    word: AtomicU64,
    /// Launches run at once since the last recorded one.
    skipped: AtomicU32,
}

pub(super) const SLOTS: usize = 1024;

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        word: AtomicU64::new(0),
        skipped: AtomicU32::new(0),
    }
}; SLOTS];

pub(super) fn index(digest: u64) -> usize {
    (digest % SLOTS as u64) as usize
}

/// The slot's word if it is the kernel with `digest`'s (else a new one's).
#[inline]
fn word(digest: u64) -> u64 {
    let w = TABLE[index(digest)].word.load(Ordering::Relaxed);
    match w != 0 && w >> 32 == digest >> 32 {
        true => w,
        false => (digest >> 32) << 32 | PROBE,
    }
}

fn store(digest: u64, w: u64) {
    TABLE[index(digest)].word.store(w, Ordering::Relaxed);
}

/// Whether a small host launch is cheaper run at once (cost.rs).
fn cheap(l: &Launch) -> bool {
    cost::bypassing() && cost::small(l)
}

/// Whether a learned flush starts with `l`'s kernel (hold.rs holds it).
#[inline]
pub fn starts_flush(l: &Launch) -> bool {
    word(l.key.digest()) & PROGRAM != 0
}

/// Whether `l`, submitted while nothing is pending, runs at once; counts
/// it towards the next probe.
#[inline]
pub fn at_once(l: &Launch) -> bool {
    let d = l.key.digest();
    let w = word(d);
    if !super::super::switches::on().adaptive {
        return false;
    }
    let alone = (w >> ALONE_SHIFT) & ALONE_MAX >= ALONE;
    if !alone && !cheap(l) {
        return false;
    }
    let period = (w & PERIOD) as u32;
    // A plain load and store: a count lost to a race only moves a probe.
    let s = &TABLE[index(d)];
    let skipped = s.skipped.load(Ordering::Relaxed) + 1;
    // A cheap kernel's probe starts a trial of recording, best right after
    // a reduction (see the module's comment).
    let due = skipped >= period && (alone || cost::after_reduction() || skipped >= period + ALIGN);
    if due {
        if !alone {
            cost::start_trial();
        }
        s.skipped.store(0, Ordering::Relaxed);
        return false; // a probe: its flush says what it is now
    }
    s.skipped.store(skipped, Ordering::Relaxed);
    cost::runs_at_once(l);
    true
}

/// After a flush ran `planned` over `nodes`: which kernels ran alone.
pub fn flushed(nodes: &[Arc<Node>], planned: &Planned) {
    if !super::super::switches::on().adaptive {
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
    let w = word(d);
    let (streak, period) = ((w >> ALONE_SHIFT) & ALONE_MAX, w & PERIOD);
    // A probe that found it still better run at once: probe half as often.
    let cheap = cheap(l);
    let period = match (alone || cheap, streak >= ALONE || cheap) {
        (true, true) => (2 * period).min(MAX_PERIOD),
        (true, false) => period,
        (false, _) => PROBE,
    };
    let streak = if alone {
        (streak + 1).min(ALONE_MAX)
    } else {
        0
    };
    let kept = w & !(ALONE_MAX << ALONE_SHIFT | PERIOD);
    store(d, kept | streak << ALONE_SHIFT | period);
    TABLE[index(d)].skipped.store(0, Ordering::Relaxed);
}

/// What became of a slot's program (hold.rs, with its lock held).
pub(super) enum Event {
    /// A flush taught one: whether the slot may keep it is returned.
    Learned,
    /// It ran whole: its strikes are cleared.
    Ran,
    /// A launch did not continue it: a strike.
    GivenBack,
    /// Its held launches were recorded (a flush came first), or the programs
    /// were forgotten.
    Dropped,
}

/// Sets the program bit and strikes of `digest`'s slot after `e`; false
/// when a program learned may not be kept (`STRIKES` reached).
pub(super) fn program(digest: u64, e: Event) -> bool {
    let w = word(digest);
    let strikes = (w >> STRIKE_SHIFT) & 3;
    let (on, strikes) = match e {
        Event::Learned if strikes >= STRIKES => return false,
        Event::Learned => (true, strikes),
        Event::Ran => (w & PROGRAM != 0, 0),
        Event::GivenBack => (false, (strikes + 1).min(3)),
        Event::Dropped => (false, strikes),
    };
    let w = w & !(PROGRAM | 3 << STRIKE_SHIFT) | strikes << STRIKE_SHIFT;
    store(digest, if on { w | PROGRAM } else { w });
    true
}

/// Starts over (lazy mode switched); with `programs_only`, forgets only
/// the programs and their strikes (fusion or holding switched).
pub fn forget(programs_only: bool) {
    for s in &TABLE {
        match programs_only {
            true => s
                .word
                .fetch_and(!(PROGRAM | 3 << STRIKE_SHIFT), Ordering::Relaxed),
            false => s.word.swap(0, Ordering::Relaxed),
        };
        if !programs_only {
            s.skipped.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A digest no other test's kernel has (the table is the process's).
    const D: u64 = 0x5151_5151_0000_0007;

    #[test]
    fn a_slot_refuses_programs_after_its_strikes_and_a_whole_run_clears_them() {
        assert!(program(D, Event::Learned));
        assert_ne!(word(D) & PROGRAM, 0);
        for _ in 0..STRIKES {
            assert!(program(D, Event::GivenBack));
            assert_eq!(word(D) & PROGRAM, 0, "given back: no program");
        }
        assert!(!program(D, Event::Learned), "struck out");
        assert_eq!(word(D) & PROGRAM, 0);
        // Another kernel's tag in the slot: a fresh word for this one.
        let other = D ^ (1 << 40);
        assert_eq!(index(other), index(D));
        assert!(program(other, Event::Learned));
        assert_eq!(word(D) & PROGRAM, 0, "the tag is not D's");
        assert!(program(D, Event::Learned), "a fresh word has no strikes");
        assert!(program(D, Event::GivenBack) && program(D, Event::Learned));
        assert!(program(D, Event::Ran));
        assert!(
            program(D, Event::GivenBack) && program(D, Event::Learned),
            "strikes cleared"
        );
    }

    #[test]
    fn streaks_keep_the_program_bit_and_saturate() {
        let d = D ^ 0x100;
        assert!(program(d, Event::Learned));
        let w = word(d);
        store(d, w | ALONE_MAX << ALONE_SHIFT);
        assert_ne!(word(d) & PROGRAM, 0);
        assert_eq!((word(d) >> ALONE_SHIFT) & ALONE_MAX, ALONE_MAX);
        assert_eq!(word(d) >> 32, d >> 32, "tagged with the digest's high half");
    }
}
