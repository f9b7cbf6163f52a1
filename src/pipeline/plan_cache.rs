//! The plan cache. A program's loop flushes work of one shape again and
//! again: the same kernels over the same views, the same demand. Planning
//! that shape once and replaying its plan makes such a flush cost a lookup
//! (planning took most of a small flush's time; on a GPU it kept a fused
//! chain behind cupy.fuse).
//!
//! The key is every fact planning reads, written out as words and compared
//! exactly (a hash only finds the bucket):
//! - per launch: its kernel (key and, for functor methods, argument names),
//!   range, folded repeats, result, effects, whether its code built before,
//!   whether it repeats the launch before it;
//! - per view argument: its allocation (numbered by first use in the flush),
//!   byte range, offset, extents, strides, and whether Python still holds a
//!   view of it, can reach it behind the runtime's back, or allocated it;
//! - per allocation: whether a pending launch outside the flush uses it, and
//!   whether the demand names it; and the kind of demand.
//!
//! Scalar values are no planning fact, so a loop passing a new time step each
//! iteration still hits. The overwritten pass can take launches outside what
//! the key covers (feeders of dropped launches): a replay checks that it took
//! the same ones, that the launches left repeat each other as before and that
//! the deferral cost model's verdicts on them are those the plan was made
//! under, and plans afresh otherwise. Under `PK_VERIFY=1` (the test suite)
//! every replay is planned afresh too and must agree.
use crate::exec::facts::Life;
use crate::exec::kernel::{Kernel, KernelKey};
use crate::fusion::explain::Summary;
use crate::lazy::deferral::Verdict;
use crate::lazy::graph::{Demand, Node};
use crate::memory::alloc::Alloc;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

/// Flushes longer than this are planned each time (their planning is
/// dwarfed by their kernels, and their keys would be long).
const MAX_LAUNCHES: usize = 64;
/// Allocations numbered by a linear search: more than this, no caching.
const MAX_ALLOCS: usize = 32;
/// Shapes kept; the table starts over when full (a program whose flushes
/// never repeat stops filling it after that).
const CAPACITY: usize = 512;

/// A flush's key, and its allocations by number.
pub struct Shape<'n> {
    words: Words,
    allocs: Vec<&'n Arc<Alloc>>,
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

/// A plan in positions and allocation numbers (see planning.rs).
pub struct Cached {
    /// Positions the overwritten pass dropped, and all it took with them.
    pub gone: Vec<usize>,
    pub taken: Vec<usize>,
    /// Of the launches left: whether each repeats the one before it, and
    /// the deferral cost model's verdict on each (see lazy/deferral.rs).
    pub repeats: Vec<bool>,
    pub verdicts: Vec<Verdict>,
    /// The launches left whose deferral the plan asked the cost model about
    /// (asking counts its refusals: a replay asks the same).
    pub asked: Vec<usize>,
    /// Per region: positions among the launches left, allocations kept in
    /// registers (numbers), deferred positions.
    pub regions: Vec<Vec<usize>>,
    pub registers: Vec<Vec<usize>>,
    pub deferred: Vec<Vec<usize>>,
    pub summary: Arc<Summary>,
    /// Per region, its fused kernel once one ran (see `Memo`).
    pub memos: Vec<Memo>,
}

/// A region's fused kernel and label, kept with the plan: a replayed region
/// skips the layout and the structural key, which its shape fixes already.
/// The label is not part of the shape, so a launch named otherwise misses.
pub type Memo = Arc<std::sync::OnceLock<Fused>>;

pub struct Fused {
    pub labels: Vec<Arc<str>>,
    pub label: String,
    pub kernel: Arc<Kernel>,
}

impl Fused {
    /// Whether it was made for launches of these labels.
    pub fn fits(&self, labels: impl ExactSizeIterator<Item = Arc<str>>) -> bool {
        labels.len() == self.labels.len()
            && labels
                .zip(&self.labels)
                .all(|(a, b)| Arc::ptr_eq(&a, b) || a == *b)
    }
}

/// A cached plan with the kernel identities its key stands for.
struct Entry {
    keys: Vec<KernelKey>,
    names: Vec<Option<Arc<[String]>>>,
    plan: Arc<Cached>,
}

/// Flushes planned by a replay so far (tests see that replays happen).
static REPLAYS: AtomicU64 = AtomicU64::new(0);

/// How many flushes a cached plan planned so far.
pub fn replays() -> u64 {
    REPLAYS.load(Ordering::Relaxed)
}

/// A cached plan was replayed whole.
pub fn replayed() {
    REPLAYS.fetch_add(1, Ordering::Relaxed);
}

/// Hashes a key's words (FxHash's mix, a word at a step): a key is a few
/// hundred words, compared exactly after the lookup anyway.
#[derive(Default)]
struct WordHasher(u64);

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

/// A key's words, hashed one word at a time.
#[derive(PartialEq, Eq)]
struct Words(Vec<u64>);

impl std::hash::Hash for Words {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for &w in &self.0 {
            state.write_u64(w);
        }
    }
}

type Table = HashMap<Words, Entry, std::hash::BuildHasherDefault<WordHasher>>;
static TABLE: LazyLock<Mutex<Table>> = LazyLock::new(|| Mutex::new(Table::default()));

/// The key of a flush, or None when it is not one to cache.
pub fn shape<'n>(nodes: &'n [Arc<Node>], demand: &Demand<'_>) -> Option<Shape<'n>> {
    if nodes.is_empty() || nodes.len() > MAX_LAUNCHES || !super::switches::on().plan_cache {
        return None;
    }
    let mut s = Shape {
        words: Words(Vec::with_capacity(16 * nodes.len())),
        allocs: Vec::new(),
    };
    let demand_code = match demand {
        Demand::All => 0,
        Demand::Fence => 1,
        Demand::Allocs(_) => 2,
        Demand::Result(_) => 3,
    };
    s.words.0.extend([nodes.len() as u64, demand_code]);
    // Launches of the flush that access each allocation (by number).
    let mut inside: Vec<usize> = Vec::new();
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
        s.words.0.extend([l.key.digest(), bits, l.lo.len() as u64]);
        s.words
            .0
            .extend(l.lo.iter().chain(&l.hi).map(|&x| x as u64));
        s.words.0.push(l.vals.len() as u64);
        for (f, alloc) in l.view_facts() {
            let num = match s.allocs.iter().position(|a| a.id() == f.alloc) {
                Some(m) => m,
                None if s.allocs.len() < MAX_ALLOCS => {
                    s.allocs.push(alloc);
                    inside.push(0);
                    s.allocs.len() - 1
                }
                None => return None,
            };
            let g = &f.geometry;
            let life = u64::from(Life::of(alloc).bits());
            s.words.0.extend([f.arg as u64, num as u64, life]);
            s.words
                .0
                .extend([f.range.0 as u64, f.range.1 as u64, g.offset as u64]);
            s.words.0.extend(g.extents().iter().map(|&x| x as u64));
            s.words.0.extend(g.strides().iter().map(|&x| x as u64));
        }
        // Each allocation it accesses, once (as `Alloc::uses` counts).
        for (i, a) in n.accesses.iter().enumerate() {
            if n.accesses[..i].iter().all(|b| b.alloc != a.alloc) {
                if let Some(m) = s.allocs.iter().position(|x| x.id() == a.alloc) {
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
        s.words
            .0
            .push(u64::from(outside) << 1 | u64::from(demanded));
    }
    Some(s)
}

/// The cached plan of this shape, if the launches are the kernels it was made for.
pub fn get(shape: &Shape<'_>, nodes: &[Arc<Node>]) -> Option<Arc<Cached>> {
    let table = TABLE.lock();
    let e = table.get(&shape.words)?;
    let same = nodes
        .iter()
        .zip(&e.keys)
        .zip(&e.names)
        .all(|((n, k), names)| {
            n.launch.key == *k
                && names
                    .as_ref()
                    .is_none_or(|m| Arc::ptr_eq(m, &n.launch.names) || **m == *n.launch.names)
        });
    same.then(|| e.plan.clone())
}

/// Keeps the plan of a shape.
pub fn put(shape: Shape<'_>, nodes: &[Arc<Node>], plan: Cached) {
    let entry = Entry {
        keys: nodes.iter().map(|n| n.launch.key.clone()).collect(),
        names: nodes
            .iter()
            .map(|n| n.launch.is_method.then(|| n.launch.names.clone()))
            .collect(),
        plan: Arc::new(plan),
    };
    let mut table = TABLE.lock();
    if table.len() >= CAPACITY {
        table.clear();
    }
    table.insert(shape.words, entry);
}
