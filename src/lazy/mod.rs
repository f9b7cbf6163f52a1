//! The lazy runtime (PK_FUSE=1): launches become nodes of a petgraph DAG whose
//! edges are data hazards on buffers (read-after-write, write-after-read,
//! write-after-write, by allocation and byte range). Work runs when a result is
//! needed: a flush executes exactly the dependency closure of what is read.
//!
//! Each node still runs as its own kernel here; fusing regions is the next
//! stage and plugs in between "take the closure" and "execute".
pub mod access;

use crate::args::ArgVal;
use crate::errors::{PkError, PkResult};
use crate::launch::{execute, kernel_for, Total};
use crate::runtime::KernelKey;
use crate::workunit::Workunit;
use access::Access;
use dashmap::DashMap;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::Direction;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

static ENABLED: AtomicBool = AtomicBool::new(false);

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Switches lazy mode (read from PK_FUSE / PK_FUSION at import; tests toggle it).
/// Turning it off flushes what is pending first.
#[pyfunction]
pub fn set_lazy(py: Python<'_>, on: bool) -> PyResult<()> {
    if !on {
        flush_all(py).map_err(crate::py_err)?;
    }
    ENABLED.store(on, Ordering::Relaxed);
    Ok(())
}

#[pyfunction]
pub fn lazy_enabled() -> bool {
    enabled()
}

/// One recorded launch, with everything needed to run it later.
pub struct Launch {
    pub key: KernelKey,
    pub wu: Py<Workunit>,
    pub names: Arc<[String]>,
    pub vals: Vec<ArgVal>,
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
    pub is_method: bool,
    pub methods: Option<Py<PyDict>>,
    pub label: String,
    /// File and line of the launch call, for errors raised at flush time.
    /// The caller's code object and instruction offset: turned into
    /// "file:line" only when a report or an error needs it.
    pub site: Option<(Py<PyAny>, i64)>,
}

type SiteCache = Mutex<std::collections::HashMap<(usize, i64), (Py<PyAny>, String)>>;
static SITES: LazyLock<SiteCache> = LazyLock::new(Default::default);

impl Launch {
    /// "file:line" of the launch call.
    pub fn site(&self, py: Python<'_>) -> String {
        let Some((code, lasti)) = &self.site else {
            return "<unknown>".into();
        };
        // Every flush's report names its launches' sites: remember each one
        // (the entry holds the code object, so its address cannot be reused).
        let key = (code.as_ptr() as usize, *lasti);
        if let Some((_, s)) = SITES.lock().unwrap().get(&key) {
            return s.clone();
        }
        let s = Self::locate(code.bind(py), *lasti);
        SITES
            .lock()
            .unwrap()
            .insert(key, (code.clone_ref(py), s.clone()));
        s
    }

    fn locate(code: &Bound<'_, PyAny>, lasti: i64) -> String {
        let file: String = code
            .getattr("co_filename")
            .and_then(|f| f.extract())
            .unwrap_or_else(|_| "<unknown>".into());
        let mut line: i64 = 0;
        if let Ok(lines) = code.call_method0("co_lines").and_then(|l| l.try_iter()) {
            for item in lines.flatten() {
                if let Ok((start, end, ln)) = item.extract::<(i64, i64, Option<i64>)>() {
                    if start <= lasti && lasti < end {
                        line = ln.unwrap_or(0);
                        break;
                    }
                }
            }
        }
        format!("{file}:{line}")
    }
}

#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BufAccess {
    pub alloc: usize,
    pub start: isize,
    pub end: isize,
    pub read: bool,
    pub write: bool,
}

impl BufAccess {
    fn conflicts(&self, o: &BufAccess) -> bool {
        self.alloc == o.alloc && self.start < o.end && o.start < self.end && (self.write || o.write)
    }
}

struct Node {
    seq: u64,
    launch: Launch,
    accesses: Vec<BufAccess>,
    /// Read/write/work-index facts per view argument name (for fusion).
    access_map: AccessMap,
    result: Option<Arc<Slot>>,
}

/// Where a lazy reduction's total lands.
#[derive(Default)]
pub struct Slot {
    value: Mutex<Option<Result<Total, String>>>,
}

#[derive(Default)]
struct Graph {
    dag: StableDiGraph<Node, ()>,
    /// Per allocation, the pending accesses later launches may depend on.
    by_alloc: HashMap<usize, Vec<(NodeIndex, BufAccess)>>,
    by_seq: BTreeMap<u64, NodeIndex>,
    next_seq: u64,
    /// Allocations whose Python views are all gone (dead-temporary candidates).
    dead: BTreeSet<usize>,
}

static GRAPH: LazyLock<Mutex<Graph>> = LazyLock::new(|| Mutex::new(Graph::default()));

/// Per-signature read/write sets, so recording does no AST work after the first.
type AccessMap = Arc<BTreeMap<String, Access>>;
type AccessTable = DashMap<KernelKey, (Arc<[String]>, AccessMap)>;
static ACCESS: LazyLock<AccessTable> = LazyLock::new(DashMap::new);

fn accesses_of(py: Python<'_>, l: &Launch) -> PyResult<(Vec<BufAccess>, AccessMap)> {
    let cached = ACCESS
        .get(&l.key)
        .filter(|e| Arc::ptr_eq(&e.0, &l.names) || e.0 == l.names)
        .map(|e| e.1.clone());
    let map = match cached {
        Some(m) => m,
        None => {
            let def = l.wu.bind(py).get().def().map_err(crate::py_err)?;
            let args: Vec<_> = l
                .names
                .iter()
                .cloned()
                .zip(l.key.args.iter().cloned())
                .collect();
            let index = access::work_index(&def, l.is_method, l.key.rank as usize);
            let m = Arc::new(access::view_access(&def, &args, index));
            ACCESS.insert(l.key.clone(), (l.names.clone(), m.clone()));
            m
        }
    };
    let mut out = Vec::new();
    for (name, v) in l.names.iter().zip(&l.vals) {
        if let (ArgVal::View(vv), Some(a)) = (v, map.get(name)) {
            if vv.range.0 < vv.range.1 {
                out.push(BufAccess {
                    alloc: vv.alloc.id(),
                    start: vv.range.0,
                    end: vv.range.1,
                    read: a.read,
                    write: a.write,
                });
            }
        }
    }
    Ok((out, map))
}

/// A pending reduction/scan total; `value()` forces exactly what it needs.
#[pyclass(frozen, module = "pykokkos._native", name = "Pending")]
pub struct Pending {
    seq: u64,
    slot: Arc<Slot>,
}

#[pymethods]
impl Pending {
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(v) = self.slot.value.lock().unwrap().clone() {
            return v
                .map_err(pyo3::exceptions::PyRuntimeError::new_err)?
                .to_py(py);
        }
        let node = GRAPH.lock().unwrap().by_seq.get(&self.seq).copied();
        if let Some(n) = node {
            flush_nodes(py, vec![n]).map_err(crate::py_err)?;
        }
        match self.slot.value.lock().unwrap().clone() {
            Some(v) => v
                .map_err(pyo3::exceptions::PyRuntimeError::new_err)?
                .to_py(py),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "this lazy result's launch was dropped after an earlier failure",
            )),
        }
    }
    #[getter]
    fn ready(&self) -> bool {
        self.slot.value.lock().unwrap().is_some()
    }
}

/// Adds a launch to the DAG with an edge from every pending launch it conflicts with.
pub fn record<'py>(py: Python<'py>, launch: Launch) -> PyResult<Bound<'py, PyAny>> {
    let _span = tracing::debug_span!("record", workunit = %launch.label).entered();
    let (accesses, access_map) = accesses_of(py, &launch)?;
    let wants_result = launch.key.pattern != crate::codegen::Pattern::For;
    let slot = wants_result.then(|| Arc::new(Slot::default()));
    let mut g = GRAPH.lock().unwrap();
    let seq = g.next_seq;
    g.next_seq += 1;
    let n = g.dag.add_node(Node {
        seq,
        launch,
        accesses: accesses.clone(),
        access_map,
        result: slot.clone(),
    });
    let mut preds = BTreeSet::new();
    for a in &accesses {
        for (m, b) in g
            .by_alloc
            .get(&a.alloc)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
        {
            if b.conflicts(a) {
                preds.insert(*m);
            }
        }
    }
    for m in preds {
        g.dag.add_edge(m, n, ());
    }
    // Keep only the frontier per allocation: an access inside the range of a
    // newer write is reachable through that write, so later launches need no
    // edge to it (this keeps long chains linear instead of quadratic).
    for a in &accesses {
        let list = g.by_alloc.entry(a.alloc).or_default();
        if a.write {
            list.retain(|(_, b)| !(a.start <= b.start && b.end <= a.end));
        }
        list.push((n, *a));
    }
    g.by_seq.insert(seq, n);
    drop(g);
    match slot {
        Some(slot) => Ok(Bound::new(py, Pending { seq, slot })?.into_any()),
        None => Ok(py.None().into_bound(py)),
    }
}

/// Nodes `targets` depend on, themselves included, in program order.
fn closure(g: &Graph, targets: &[NodeIndex]) -> Vec<NodeIndex> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<NodeIndex> = targets
        .iter()
        .copied()
        .filter(|n| g.dag.contains_node(*n))
        .collect();
    while let Some(n) = stack.pop() {
        if seen.insert(n) {
            stack.extend(g.dag.neighbors_directed(n, Direction::Incoming));
        }
    }
    // Edges always run from older to newer launches: sequence order is topological.
    let mut v: Vec<NodeIndex> = seen.into_iter().collect();
    v.sort_by_key(|n| g.dag[*n].seq);
    v
}

fn descendants(g: &Graph, n: NodeIndex) -> Vec<NodeIndex> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        for y in g.dag.neighbors_directed(x, Direction::Outgoing) {
            if seen.insert(y) {
                stack.push(y);
            }
        }
    }
    seen.into_iter().collect()
}

fn remove(g: &mut Graph, n: NodeIndex) -> Option<Node> {
    let node = g.dag.remove_node(n)?;
    for a in &node.accesses {
        if let Some(list) = g.by_alloc.get_mut(&a.alloc) {
            list.retain(|(x, _)| *x != n);
            if list.is_empty() {
                // Nothing pending touches it any more: forget it, so an address
                // reused by a later allocation is not taken for this dead one.
                g.by_alloc.remove(&a.alloc);
                g.dead.remove(&a.alloc);
            }
        }
    }
    g.by_seq.remove(&node.seq);
    Some(node)
}

/// Runs the dependency closure of `targets`, oldest first. On a failure the
/// failed launch and everything that depends on it are dropped (and named in
/// the error); unrelated pending work stays pending.
pub fn flush_nodes(py: Python<'_>, targets: Vec<NodeIndex>) -> PkResult<()> {
    let order = closure(&GRAPH.lock().unwrap(), &targets);
    if order.is_empty() {
        return Ok(());
    }
    let _span = tracing::info_span!("flush", launches = order.len()).entered();
    // Partition by the fusion rules (one kernel per region), or one per launch.
    let regions = if crate::fusion::enabled() {
        plan_regions(py, &order)?
    } else {
        order.iter().map(|n| (vec![*n], BTreeSet::new())).collect()
    };
    for (region, dead) in regions {
        let nodes: Vec<Node> = {
            let mut g = GRAPH.lock().unwrap();
            region.iter().filter_map(|n| remove(&mut g, *n)).collect()
        };
        if nodes.is_empty() {
            continue;
        }
        let fused = nodes.len() > 1 && run_fused(py, &nodes, &dead).is_ok();
        if fused {
            continue;
        }
        // One kernel per launch: alone, or after a fused kernel failed to build
        // (its launches then report their own errors, if they have any).
        for (j, node) in nodes.iter().enumerate() {
            if let Err(e) = run_node(py, node) {
                return Err(fail(py, &region, &nodes[j..], e));
            }
        }
    }
    Ok(())
}

/// Regions (and their dead temporaries) of a flush, in dependency order.
fn plan_regions(
    py: Python<'_>,
    order: &[NodeIndex],
) -> PkResult<Vec<(Vec<NodeIndex>, BTreeSet<usize>)>> {
    let _span = tracing::info_span!("plan", launches = order.len()).entered();
    let g = GRAPH.lock().unwrap();
    let cands: Vec<crate::fusion::plan::Cand> = order
        .iter()
        .map(|n| crate::fusion::candidate(py, &g.dag[*n].launch, &g.dag[*n].access_map))
        .collect();
    let rules = crate::fusion::rules::active()?;
    let plan = crate::fusion::plan::partition(rules, &cands);
    let pos: BTreeMap<NodeIndex, usize> = order.iter().enumerate().map(|(k, n)| (*n, k)).collect();
    let mut out = Vec::new();
    let mut dead_report = Vec::new();
    for region in &plan.regions {
        let nodes: Vec<NodeIndex> = region.iter().map(|k| order[*k]).collect();
        let dead = if nodes.len() > 1 {
            let inside: BTreeSet<NodeIndex> = nodes.iter().copied().collect();
            let touched_elsewhere = |alloc: usize| {
                g.dag.node_indices().any(|m| {
                    !inside.contains(&m) && g.dag[m].accesses.iter().any(|a| a.alloc == alloc)
                })
            };
            let launches: Vec<&Launch> = nodes.iter().map(|n| &g.dag[*n].launch).collect();
            let rc: Vec<&crate::fusion::plan::Cand> = region.iter().map(|k| &cands[*k]).collect();
            crate::fusion::dead_temporaries(&launches, &rc, &touched_elsewhere)
        } else {
            BTreeSet::new()
        };
        dead_report.push(dead.iter().copied().collect::<Vec<_>>());
        out.push((nodes, dead));
    }
    let mut edges = Vec::new();
    for n in order {
        for m in g.dag.neighbors_directed(*n, Direction::Incoming) {
            if let (Some(a), Some(b)) = (pos.get(&m), pos.get(n)) {
                edges.push((*a, *b));
            }
        }
    }
    edges.sort();
    crate::fusion::explain::record(py, &cands, &plan, &dead_report, &edges);
    Ok(out)
}

fn run_fused(py: Python<'_>, nodes: &[Node], dead: &BTreeSet<usize>) -> PkResult<()> {
    let launches: Vec<&Launch> = nodes.iter().map(|n| &n.launch).collect();
    match crate::fusion::run_region(py, &launches, dead) {
        Ok(totals) => {
            for (node, t) in nodes.iter().zip(totals) {
                if let (Some(slot), Some(t)) = (&node.result, t) {
                    *slot.value.lock().unwrap() = Some(Ok(t));
                }
            }
            Ok(())
        }
        Err(e) => {
            // Running the launches one by one is always correct (dead temporaries
            // then simply get memory), and attributes any error to its launch.
            tracing::warn!(region = %crate::fusion::region_label(&launches), error = %e, "fused kernel failed; running its launches one by one");
            Err(e)
        }
    }
}

/// Error of a failed launch: drops what depended on it and names the launch site.
fn fail(py: Python<'_>, region: &[NodeIndex], rest: &[Node], e: PkError) -> PkError {
    let node = &rest[0];
    let mut g = GRAPH.lock().unwrap();
    let mut dropped: Vec<String> = Vec::new();
    for n in region {
        for d in descendants(&g, *n) {
            if let Some(d) = remove(&mut g, d) {
                fail_slot(&d, "an earlier launch it depends on failed");
                dropped.push(format!("'{}' at {}", d.launch.label, d.launch.site(py)));
            }
        }
    }
    drop(g);
    for d in &rest[1..] {
        fail_slot(d, "an earlier launch of its fused region failed");
        dropped.push(format!("'{}' at {}", d.launch.label, d.launch.site(py)));
    }
    fail_slot(node, &e.to_string());
    let site = node.launch.site(py);
    let mut msg = format!(
        "pending launch of workunit '{}' at {site} failed: {e}",
        node.launch.label
    );
    if !dropped.is_empty() {
        msg.push_str(&format!(
            "\nlaunches that depended on it were dropped: {}",
            dropped.join(", ")
        ));
    }
    match e {
        PkError::Kernel(mut le) => {
            le.message = format!("{} (launched at {site})", le.message);
            PkError::Kernel(le)
        }
        PkError::Compile {
            kernel,
            cpp_path,
            excerpt,
        } => PkError::Compile {
            kernel: format!("{kernel}' launched at '{site}"),
            cpp_path,
            excerpt,
        },
        _ => PkError::Runtime(msg),
    }
}

fn fail_slot(node: &Node, why: &str) {
    if let Some(s) = &node.result {
        *s.value.lock().unwrap() = Some(Err(why.to_string()));
    }
}

fn run_node(py: Python<'_>, node: &Node) -> PkResult<()> {
    let l = &node.launch;
    let wu = l.wu.bind(py).get();
    let methods = l.methods.as_ref().map(|m| m.bind(py).clone());
    let kernel = kernel_for(
        py,
        wu,
        &l.key,
        &l.names,
        l.is_method,
        methods.as_ref(),
        &l.label,
    )?;
    let total = execute(py, &kernel, &l.vals, &l.lo, &l.hi, &l.label)?;
    if let (Some(slot), Some(t)) = (&node.result, total) {
        *slot.value.lock().unwrap() = Some(Ok(t));
    }
    Ok(())
}

/// Errors of flushes started inside the buffer protocol, which NumPy swallows
/// before falling back to `__array__`: kept so that fallback raises them.
static SWALLOWED: LazyLock<Mutex<HashMap<usize, Py<pyo3::exceptions::PyBaseException>>>> =
    LazyLock::new(Default::default);

/// The flush of `__getbuffer__`: remembers its error for `take_swallowed`.
pub fn flush_alloc_for_buffer(py: Python<'_>, alloc: usize) -> PyResult<()> {
    flush_alloc(py, alloc).map_err(|e| {
        let err = crate::py_err(e);
        SWALLOWED
            .lock()
            .unwrap()
            .insert(alloc, err.value(py).clone().unbind());
        err
    })
}

/// An error a swallowed buffer-protocol flush left for this allocation.
pub fn take_swallowed(py: Python<'_>, alloc: usize) -> PyResult<()> {
    match SWALLOWED.lock().unwrap().remove(&alloc) {
        Some(e) => Err(PyErr::from_value(e.into_bound(py).into_any())),
        None => Ok(()),
    }
}

/// Flushes everything pending that touches the allocation (host access).
pub fn flush_alloc(py: Python<'_>, alloc: usize) -> PkResult<()> {
    if !enabled() && GRAPH.lock().unwrap().by_seq.is_empty() {
        return Ok(());
    }
    let targets = nodes_touching(&GRAPH.lock().unwrap(), alloc);
    flush_nodes(py, targets)
}

/// Pending launches whose closures cover all pending work on an allocation.
fn nodes_touching(g: &Graph, alloc: usize) -> Vec<NodeIndex> {
    g.by_alloc
        .get(&alloc)
        .map(|l| l.iter().map(|(n, _)| *n).collect())
        .unwrap_or_default()
}

/// Before a launch that runs at once: flush the pending work it depends on.
pub fn flush_for(py: Python<'_>, vals: &[ArgVal]) -> PkResult<()> {
    let allocs: BTreeSet<usize> = vals
        .iter()
        .filter_map(|v| {
            if let ArgVal::View(x) = v {
                Some(x.alloc.id())
            } else {
                None
            }
        })
        .collect();
    let targets: Vec<NodeIndex> = {
        let g = GRAPH.lock().unwrap();
        allocs.iter().flat_map(|a| nodes_touching(&g, *a)).collect()
    };
    flush_nodes(py, targets)
}

pub fn flush_all(py: Python<'_>) -> PkResult<()> {
    let targets: Vec<NodeIndex> = GRAPH.lock().unwrap().by_seq.values().copied().collect();
    flush_nodes(py, targets)
}

#[pyfunction]
#[pyo3(name = "flush")]
pub fn py_flush(py: Python<'_>) -> PyResult<()> {
    flush_all(py).map_err(crate::py_err)
}

/// The last flush's fusion report and its DOT graph.
#[pyfunction]
pub fn explain_last() -> Option<(String, String)> {
    crate::fusion::explain::last()
}

/// Every fusion report since the previous call (oldest first).
#[pyfunction]
pub fn explain_history() -> Vec<String> {
    crate::fusion::explain::take_history()
}

/// Number of fused kernels built in this process (structurally identical
/// regions share one).
#[pyfunction]
pub fn fused_kernel_count() -> usize {
    crate::fusion::fused_kernel_count()
}

/// Number of launches waiting.
#[pyfunction]
pub fn pending_count() -> usize {
    GRAPH.lock().unwrap().by_seq.len()
}

/// The last Python view of an allocation died.
pub fn alloc_died(alloc: usize) {
    if let Ok(mut g) = GRAPH.try_lock() {
        if g.by_alloc.contains_key(&alloc) {
            g.dead.insert(alloc);
        }
    }
}

/// The pending DAG as JSON: nodes (workunit identity, policy, scalars, buffer
/// accesses), edges, and dead allocations. Deterministic: ordered by sequence.
#[pyfunction]
pub fn graph_json(py: Python<'_>) -> String {
    let g = GRAPH.lock().unwrap();
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    // Allocation addresses differ run to run: number them by first appearance.
    let mut ids: BTreeMap<usize, usize> = BTreeMap::new();
    for n in g.by_seq.values() {
        for a in &g.dag[*n].accesses {
            let k = ids.len();
            ids.entry(a.alloc).or_insert(k);
        }
    }
    for (&seq, &n) in &g.by_seq {
        let node = &g.dag[n];
        let l = &node.launch;
        let wu = l.wu.bind(py).get();
        let scalars: Vec<serde_json::Value> = l
            .names
            .iter()
            .zip(&l.vals)
            .filter_map(|(name, v)| match v {
                ArgVal::Int(i) => Some(serde_json::json!({"name": name, "int": i})),
                ArgVal::Float(f) => Some(serde_json::json!({"name": name, "float": f})),
                ArgVal::View(_) => None,
            })
            .collect();
        nodes.push(serde_json::json!({
            "seq": seq,
            "workunit": {"name": wu.name, "file": wu.src.filename, "line": wu.src.first_line},
            "pattern": format!("{:?}", l.key.pattern),
            "space": format!("{:?}", l.key.space),
            "begin": l.lo, "end": l.hi,
            "args": l.names.iter().zip(&l.key.args).map(|(n, t)| serde_json::json!({"name": n, "type": t})).collect::<Vec<_>>(),
            "scalars": scalars,
            "buffers": node.accesses.iter().map(|a| serde_json::json!({
                "buffer": ids[&a.alloc], "start": a.start, "end": a.end, "read": a.read, "write": a.write,
            })).collect::<Vec<_>>(),
            "site": l.site(py),
        }));
        for m in g.dag.neighbors_directed(n, Direction::Incoming) {
            edges.push((g.dag[m].seq, seq));
        }
    }
    edges.sort();
    let dead: Vec<usize> = g.dead.iter().filter_map(|a| ids.get(a).copied()).collect();
    serde_json::json!({"nodes": nodes, "edges": edges, "dead_buffers": dead}).to_string()
}
