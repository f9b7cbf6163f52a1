//! Plans by shape (shape.rs). A program's loop flushes work of one shape
//! again and again: planning it once and replaying its plan makes such a
//! flush cost a lookup (planning took most of a small flush's time; on a
//! GPU it kept a fused chain behind cupy.fuse). The overwritten pass can take
//! launches outside what the shape covers (feeders of dropped launches): a
//! replay checks that it took the same ones, that the launches left repeat
//! each other as before and that the deferral cost model's verdicts on them
//! are those the plan was made under, and plans afresh otherwise
//! (planning.rs). Under `PK_VERIFY=1` (the test suite) every replay is
//! planned afresh too and must agree.
use super::shape::{Shape, WordHasher, Words};
use crate::exec::kernel::{Kernel, KernelKey};
use crate::fusion::explain::Summary;
use crate::lazy::deferral::Verdict;
use crate::lazy::graph::Node;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

/// Shapes kept; the table starts over when full (a program whose flushes
/// never repeat stops filling it after that).
const CAPACITY: usize = 512;

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

/// A cached plan with the kernel identities its shape stands for.
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

type Table = HashMap<Words, Entry, std::hash::BuildHasherDefault<WordHasher>>;
static TABLE: LazyLock<Mutex<Table>> = LazyLock::new(|| Mutex::new(Table::default()));

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
