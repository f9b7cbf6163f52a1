//! A flush's shape: every fact planning reads, written out as words that
//! are compared exactly (a hash only finds the bucket). Its first part is
//! each launch's own words (`launch_words`: what the launch fixes as it
//! arrives), so a launch can be matched against a learned flush's launch
//! as it comes (hold.rs); the rest is what only the flush knows.
//! - per launch: its kernel's digest (the entry keeps the whole key), its
//!   range, and per view argument its position, its allocation (numbered by
//!   first use in the flush), byte range, offset, extents and strides;
//! - per launch, at the flush: whether it is a method, has folded repeats, a
//!   result or effects, whether its code built before, whether it repeats
//!   the launch before it;
//! - per allocation: whether Python still holds a view of it, can reach it
//!   behind the runtime's back, or allocated it (`Life`); whether a pending
//!   launch outside the flush uses it and whether the demand names it; and
//!   the kind of demand.
//!
//! Scalar values are no planning fact, so a loop passing a new time step
//! each iteration still hits.
use crate::exec::facts::Life;
use crate::exec::launch::Launch;
use crate::lazy::graph::{Demand, Node};
use crate::memory::alloc::Alloc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Flushes longer than this are planned each time (their planning is
/// dwarfed by their kernels, and their keys would be long).
const MAX_LAUNCHES: usize = 64;
/// Allocations numbered by a linear search: more than this, no shape.
const MAX_ALLOCS: usize = 32;

/// A flush's words, and its allocations by number.
pub struct Shape<'n> {
    pub(super) words: Words,
    /// Where each launch's own words end.
    pub(super) ends: Vec<usize>,
    pub(super) allocs: Vec<&'n Arc<Alloc>>,
    /// Per allocation: its life when the flush was planned (`Life::bits`).
    pub(super) lives: Vec<u8>,
}

impl Shape<'_> {
    /// The number of an allocation of the flush.
    pub fn number(&self, id: usize) -> Option<usize> {
        self.allocs.iter().position(|a| a.id() == id)
    }

    /// The allocation numbered `n`.
    pub fn alloc_id(&self, n: usize) -> usize {
        self.allocs[n].id()
    }
}

/// Where a launch's words go: a shape's words, or a comparison with a
/// learned launch's (hold.rs). Runs of words come as slices: compared in
/// line, a word at a time, they cost less than one call per word.
pub(super) trait Sink {
    fn word(&mut self, w: u64);
    fn words(&mut self, ws: &[i64]);
}

impl Sink for Vec<u64> {
    fn word(&mut self, w: u64) {
        self.push(w);
    }
    fn words(&mut self, ws: &[i64]) {
        self.extend(ws.iter().map(|&x| x as u64));
    }
}

/// The words a launch fixes as it arrives, given to `out`, with each view's
/// allocation numbered by `number` (given the argument's position; false
/// where it gives none: no shape).
#[inline]
pub(super) fn launch_words<'l>(
    l: &'l Launch,
    mut number: impl FnMut(usize, &'l Arc<Alloc>) -> Option<usize>,
    out: &mut impl Sink,
) -> bool {
    out.word(l.key.digest());
    out.word(l.lo.len() as u64);
    out.words(&l.lo);
    out.words(&l.hi);
    out.word(l.vals.len() as u64);
    for (arg, v, rank, _) in l.views() {
        let Some(num) = number(arg, &v.alloc) else {
            return false;
        };
        out.words(&[
            arg as i64,
            num as i64,
            v.range.0 as i64,
            v.range.1 as i64,
            v.offset as i64,
        ]);
        // (The kernel key fixes the rank: extents and strides past it are not its.)
        let r = usize::from(rank).min(8);
        out.words(&v.raw.extent[..r]);
        out.words(&v.raw.stride[..r]);
    }
    true
}

/// The shape of a flush, or None when it is not one to keep.
pub fn shape<'n>(nodes: &'n [Arc<Node>], demand: &Demand<'_>) -> Option<Shape<'n>> {
    if nodes.is_empty() || nodes.len() > MAX_LAUNCHES {
        return None;
    }
    let mut s = Shape {
        words: Words(Vec::with_capacity(16 * nodes.len())),
        ends: Vec::with_capacity(nodes.len()),
        allocs: Vec::new(),
        lives: Vec::new(),
    };
    for n in nodes {
        let number = |_, a: &'n Arc<Alloc>| match s.allocs.iter().position(|b| b.id() == a.id()) {
            Some(m) => Some(m),
            None if s.allocs.len() < MAX_ALLOCS => {
                s.allocs.push(a);
                s.lives.push(Life::of(a).bits());
                Some(s.allocs.len() - 1)
            }
            None => None,
        };
        if !launch_words(&n.launch, number, &mut s.words.0) {
            return None;
        }
        s.ends.push(s.words.0.len());
    }
    let demand_code = match demand {
        Demand::All => 0,
        Demand::Fence => 1,
        Demand::Allocs(_) => 2,
        Demand::Result(_) => 3,
    };
    s.words.0.extend([nodes.len() as u64, demand_code]);
    // Launches of the flush that access each allocation (by number).
    let mut inside = vec![0; s.allocs.len()];
    for (k, n) in nodes.iter().enumerate() {
        let l = &n.launch;
        let flags = [
            l.is_method,
            n.count() > 1,
            n.result.is_some(),
            n.effects,
            n.built(),
            k > 0 && l.repeats(&nodes[k - 1].launch),
        ];
        let bits = flags.iter().fold(0u64, |b, &f| (b << 1) | u64::from(f));
        s.words.0.push(bits);
        // Each allocation it accesses, once (as `Alloc::uses` counts).
        for (i, a) in n.accesses.iter().enumerate() {
            if n.accesses[..i].iter().all(|b| b.alloc != a.alloc) {
                if let Some(m) = s.number(a.alloc) {
                    inside[m] += 1;
                }
            }
        }
    }
    for (m, a) in s.allocs.iter().enumerate() {
        let outside = a.uses.load(Ordering::Acquire) > inside[m];
        let demanded = match demand {
            Demand::Allocs(ids) => ids.contains(&a.id()),
            _ => false,
        };
        let bits = u64::from(s.lives[m]) << 2 | u64::from(outside) << 1 | u64::from(demanded);
        s.words.0.push(bits);
    }
    Some(s)
}

/// Hashes a key's words (FxHash's mix, a word at a step): a key is a few
/// hundred words, compared exactly after the lookup anyway.
#[derive(Default)]
pub(super) struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A shape's words, hashed one word at a time.
#[derive(PartialEq, Eq)]
pub(super) struct Words(pub(super) Vec<u64>);

impl std::hash::Hash for Words {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for &w in &self.0 {
            state.write_u64(w);
        }
    }
}
