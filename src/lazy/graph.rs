//! The pending-launch DAG (petgraph). Edges are data hazards on buffers
//! (read-after-write, write-after-read, write-after-write, by allocation and
//! byte range) and always run from older to newer launches, so sequence order
//! is a topological order. Nodes are shared (`Arc`) so a flush plans over them
//! without holding the graph's lock.
use super::frontier::Frontier;
use super::hazards::{accesses_of, AccessMap, Accesses, BufAccess};
use super::slot::Slot;
use crate::errors::PkResult;
use crate::exec::args::ArgVal;
use crate::exec::launch::{Launch, Origin};
use crate::types::Pattern;
use parking_lot::Mutex;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::Direction;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

static ENABLED: AtomicBool = AtomicBool::new(false);

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Lazy mode on or off; the caller flushes what is pending before turning it off.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// One recorded launch.
pub struct Node {
    /// Program order: unique, increasing.
    pub seq: u64,
    pub launch: Launch,
    /// Where it came from: names for its translation, its call site.
    pub origin: Arc<dyn Origin>,
    pub accesses: Accesses,
    pub access_map: AccessMap,
    /// Where a reduction's total lands.
    pub result: Option<Arc<Slot>>,
    /// Exact repeats of this launch recorded right after it, folded into
    /// it (see `record`): it stands for `1 + repeats` launches in a row.
    pub repeats: AtomicUsize,
    /// Effects beyond the views it writes (printf): it always runs.
    pub effects: bool,
    /// A flush computed its outputs in registers and left it pending
    /// (fusion's deferral): whether that paid is learned from its fate.
    pub deferred: AtomicBool,
    /// Its kernel's code built once (`BUILT`, which only grows), as last
    /// found: planning asks several times a flush, the table costs a lookup.
    built: AtomicBool,
}

impl Node {
    /// How many launches in a row this node stands for.
    pub fn count(&self) -> usize {
        1 + self.repeats.load(Ordering::Acquire)
    }

    /// Whether its kernel's code built before (its errors, if any, were
    /// reported): `exec::kernel::BUILT`, remembered once true.
    pub fn built(&self) -> bool {
        if self.built.load(Ordering::Relaxed) {
            return true;
        }
        let b = crate::exec::kernel::BUILT.contains(&self.launch.key);
        if b {
            self.built.store(true, Ordering::Relaxed);
        }
        b
    }
}

/// Hashes an allocation id (its address) with splitmix64's finalizer: every
/// launch looks its allocations up, and SipHash cost more than the lookup.
#[derive(Default)]
pub(super) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_usize(&mut self, x: usize) {
        self.0 ^= x as u64;
    }
}

pub(super) type ByAddress = std::hash::BuildHasherDefault<AddressHasher>;

#[derive(Default)]
pub(super) struct Graph {
    pub(super) dag: StableDiGraph<Arc<Node>, ()>,
    /// Per allocation, the pending accesses later launches may depend on.
    pub(super) by_alloc: HashMap<usize, Frontier, ByAddress>,
    pub(super) by_seq: BTreeMap<u64, NodeIndex>,
    pub(super) next_seq: u64,
    /// Allocations whose Python views are all gone (reported by `graph_json`).
    pub(super) dead: BTreeSet<usize>,
}

pub(super) static GRAPH: LazyLock<Mutex<Graph>> = LazyLock::new(|| Mutex::new(Graph::default()));

/// Whether `l` repeats the newest pending launch (it may fold into it).
pub fn folds_into_newest(l: &Launch) -> bool {
    if pending_count() == 0 {
        return false;
    }
    let g = GRAPH.lock();
    g.by_seq
        .last_key_value()
        .is_some_and(|(_, &n)| l.repeats(&g.dag[n].launch))
}

/// Adds a launch with an edge from every pending launch it conflicts with.
/// With `fold`, a launch that exactly repeats the newest pending one (see
/// `Launch::repeats`, `loopable`) is folded into it instead: a program that
/// launches one small kernel many times records one node, not a long chain.
/// Gives the sequence number, the result slot, and whether the launch has
/// effects beyond its views (printf).
pub fn record(
    launch: Launch,
    origin: impl FnOnce() -> Arc<dyn Origin>,
    fold: bool,
) -> PkResult<(u64, Option<Arc<Slot>>, bool)> {
    let _span = tracing::debug_span!("record", workunit = %launch.label).entered();
    // The origin is made only when needed (a new node, or a kernel whose
    // accesses are not known yet): a launch that folds into the newest
    // pending one, the common case of a loop of tiny launches, needs none.
    let mut origin = Some(origin);
    let mut made: Option<Arc<dyn Origin>> = None;
    let (accesses, access_map, effects) = accesses_of(&launch, || {
        let o = origin.take().map(|f| f())?;
        let globals = o.globals(launch.key.consts()).ok();
        made = Some(o);
        globals
    })?;
    let slot = (launch.key.pattern != Pattern::For).then(|| Arc::new(Slot::default()));
    let mut g = GRAPH.lock();
    if fold && slot.is_none() {
        if let Some((&seq, &n)) = g.by_seq.last_key_value() {
            let last = &g.dag[n];
            let repeats = launch.repeats(&last.launch);
            // Nothing ran since: its inputs are as they were, so it would
            // write what the pending one will write.
            if repeats && super::hazards::idempotent(&launch, &accesses, effects) {
                // A deferred one absorbs it: computing it again is this launch's work.
                if last.deferred.swap(false, Ordering::AcqRel) {
                    super::deferral::paid(&launch.key);
                }
                return Ok((seq, None, effects));
            }
            if repeats && super::hazards::loopable(&launch, &access_map) {
                last.repeats.fetch_add(1, Ordering::AcqRel);
                return Ok((seq, None, effects));
            }
        }
    }
    let origin = match (made, origin) {
        (Some(o), _) => o,
        (None, Some(make)) => make(),
        (None, None) => unreachable!("an origin taken is made"),
    };
    let seq = g.next_seq;
    g.next_seq += 1;
    count(&launch, &accesses, true);
    let node = Arc::new(Node {
        seq,
        launch,
        origin,
        accesses,
        access_map,
        result: slot.clone(),
        repeats: AtomicUsize::new(0),
        effects,
        deferred: AtomicBool::new(false),
        built: AtomicBool::new(false),
    });
    let n = g.dag.add_node(node.clone());
    let accesses = &node.accesses;
    let mut preds = BTreeSet::new();
    for a in accesses {
        if let Some(f) = g.by_alloc.get(&a.alloc) {
            preds.extend(f.conflicts(a));
        }
    }
    for m in preds {
        g.dag.add_edge(m, n, ());
    }
    for a in accesses {
        g.by_alloc.entry(a.alloc).or_default().push(n, *a, seq);
    }
    g.by_seq.insert(seq, n);
    PENDING.store(g.by_seq.len(), Ordering::Release);
    Ok((seq, slot, effects))
}

/// What a flush must make available.
pub enum Demand<'a> {
    /// Everything pending (flush, exit, switching lazy mode off).
    All,
    /// Everything pending but launches a flush deferred (their outputs are
    /// computed when read): `pk.fence()`, which waits for work submitted,
    /// not for work nobody asked for.
    Fence,
    /// Every pending launch that touches one of these allocations (host access,
    /// or a launch that runs at once on them).
    Allocs(&'a [usize]),
    /// One lazy result.
    Result(u64),
}

/// Dependency edges among `nodes` (given in program order), as positions.
pub fn edges(nodes: &[Arc<Node>]) -> Vec<(usize, usize)> {
    let g = GRAPH.lock();
    // Program order is sequence order: a position is a binary search away.
    let pos = |seq: u64| nodes.binary_search_by_key(&seq, |n| n.seq).ok();
    let mut out = Vec::new();
    for (k, n) in nodes.iter().enumerate() {
        let Some(&i) = g.by_seq.get(&n.seq) else {
            continue;
        };
        for m in g.dag.neighbors_directed(i, Direction::Incoming) {
            if let Some(a) = pos(g.dag[m].seq) {
                out.push((a, k));
            }
        }
    }
    out.sort_unstable();
    out
}

/// A launch counts while it waits: on each allocation it touches, once per
/// view (`Alloc::pending`), and once on each it accesses (`Alloc::uses`).
fn count(l: &Launch, accesses: &[BufAccess], add: bool) {
    let bump = |c: &std::sync::atomic::AtomicUsize| match add {
        true => c.fetch_add(1, Ordering::AcqRel),
        false => c.fetch_sub(1, Ordering::AcqRel),
    };
    let views = || {
        l.vals.iter().filter_map(|v| match v {
            ArgVal::View(x) => Some(x),
            _ => None,
        })
    };
    for (k, vv) in views().enumerate() {
        bump(&vv.alloc.pending);
        let id = vv.alloc.id();
        let first = !views().take(k).any(|x| x.alloc.id() == id);
        if first && accesses.iter().any(|a| a.alloc == id) {
            bump(&vv.alloc.uses);
        }
    }
}

pub(super) fn remove(g: &mut Graph, n: NodeIndex) -> Option<Arc<Node>> {
    let node = g.dag.remove_node(n)?;
    count(&node.launch, &node.accesses, false);
    for a in &node.accesses {
        if let Some(f) = g.by_alloc.get_mut(&a.alloc) {
            if f.remove(n, node.seq) {
                // Nothing pending touches it any more: forget it, so an address
                // reused by a later allocation is not taken for this dead one.
                g.by_alloc.remove(&a.alloc);
                g.dead.remove(&a.alloc);
            }
        }
    }
    g.by_seq.remove(&node.seq);
    PENDING.store(g.by_seq.len(), Ordering::Release);
    if g.by_seq.is_empty() {
        // Vacant slots of removed nodes would otherwise be walked by every
        // scan of the DAG until the process ends.
        g.dag.clear();
    }
    Some(node)
}

/// Takes launches out of the DAG to run them (those still pending).
pub fn take(seqs: &[u64]) -> Vec<Arc<Node>> {
    let mut g = GRAPH.lock();
    seqs.iter()
        .filter_map(|s| g.by_seq.get(s).copied())
        .collect::<Vec<_>>()
        .into_iter()
        .filter_map(|n| remove(&mut g, n))
        .collect()
}

/// Launches a flush runs without taking them out of the DAG (deferred ones:
/// their outputs are computed in registers, and they stay pending).
pub fn peek(seqs: &[u64]) -> Vec<Arc<Node>> {
    let g = GRAPH.lock();
    seqs.iter()
        .filter_map(|s| g.by_seq.get(s).map(|&n| g.dag[n].clone()))
        .collect()
}

/// Drops every pending launch that depends on `failed` (launches already
/// taken out of the DAG that did not run): those whose accesses conflict with
/// theirs, and everything after those. Returned in program order.
pub fn drop_dependents(failed: &[Arc<Node>]) -> Vec<Arc<Node>> {
    let mut g = GRAPH.lock();
    // A full scan (failures are rare): `by_alloc` keeps only the frontier.
    let mut stack: Vec<NodeIndex> = g
        .dag
        .node_indices()
        .filter(|&n| {
            let accs = &g.dag[n].accesses;
            failed.iter().any(|f| {
                f.accesses
                    .iter()
                    .any(|a| accs.iter().any(|b| b.conflicts(a)))
            })
        })
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(x) = stack.pop() {
        if seen.insert(x) {
            stack.extend(g.dag.neighbors_directed(x, Direction::Outgoing));
        }
    }
    let dead = g.dead.clone();
    let mut out: Vec<Arc<Node>> = seen.into_iter().filter_map(|n| remove(&mut g, n)).collect();
    out.sort_by_key(|n| n.seq);
    // A dropped write may have stood for older accesses that stay pending
    // (the frontier left them out): the frontiers it touched are made again
    // (and what was dead stays so).
    let touched: BTreeSet<usize> = out
        .iter()
        .flat_map(|n| n.accesses.iter().map(|a| a.alloc))
        .collect();
    let order: Vec<NodeIndex> = g.by_seq.values().copied().collect();
    for alloc in touched {
        g.by_alloc.remove(&alloc);
        for &n in &order {
            let node = g.dag[n].clone();
            for a in node.accesses.iter().filter(|a| a.alloc == alloc) {
                g.by_alloc.entry(alloc).or_default().push(n, *a, node.seq);
            }
        }
        if dead.contains(&alloc) && g.by_alloc.contains_key(&alloc) {
            g.dead.insert(alloc);
        }
    }
    out
}

/// Launches waiting, kept beside the graph so that host access to a view
/// with nothing pending (the common case) does not take the graph's lock.
static PENDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Launches the memo holds outside the DAG (pipeline/memo/hold.rs),
/// or is running: pending too, for `quiet` and for host access (which
/// then flushes). Only the memo writes it, one holder at a time.
static HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The memo holds (or runs) `n` launches.
pub fn set_held(n: usize) {
    HELD.store(n, Ordering::Release);
}

/// Whether the memo holds or runs launches.
pub fn held() -> bool {
    HELD.load(Ordering::Acquire) > 0
}

/// Nothing pending (in the DAG or held), and no flush under way in another
/// thread: a region a flush took out of the DAG may be what a launch run at
/// once would read, or what a host access would see (its turn makes either
/// wait until the region has run).
pub fn quiet() -> bool {
    pending_count() == 0 && !super::turn::flushing()
}

/// Number of launches waiting (in the DAG or held).
pub fn pending_count() -> usize {
    PENDING.load(Ordering::Acquire) + HELD.load(Ordering::Acquire)
}

/// Every pending launch in program order, and the pending allocations whose
/// Python views are all gone.
pub fn snapshot() -> (Vec<Arc<Node>>, BTreeSet<usize>) {
    let g = GRAPH.lock();
    let nodes = g.by_seq.values().map(|n| g.dag[*n].clone()).collect();
    (nodes, g.dead.clone())
}
