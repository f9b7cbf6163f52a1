//! Launches replayed as a CUDA graph. A learned flush of Cuda launches that
//! fusion cannot merge (memo/hold.rs) runs each launch through `run` as
//! usual, but with this thread collecting: an NVRTC `for` kernel then adds
//! its launch (function, grid, block, argument bytes) here instead of
//! launching it, and the flush's launches go to the GPU as one graph launch,
//! about a fifth of the driver's cost of launching them one by one.
//!
//! The graph is built once per learned flush and kept with it; later replays
//! patch the nodes whose arguments changed (new scalars, other allocations)
//! and launch the same instance. Anything that cannot wait for the graph (a
//! kernel that reads back a check record or a total, a Kokkos library kernel)
//! first launches what was collected, in order, then runs as it always does:
//! the order of launches on the legacy default stream is the program's.
use crate::compile::cudadrv::{self, GraphFns, Handle, KernelNode};
use crate::errors::{PkError, PkResult};
use parking_lot::Mutex;
use std::cell::{Cell, RefCell};
use std::ffi::c_void;

/// One collected launch.
#[derive(PartialEq)]
struct Node {
    func: usize,
    grid: u32,
    block: u32,
    args: Vec<u8>,
}

thread_local! {
    /// The launches collected so far (None: not collecting).
    static NODES: RefCell<Option<Vec<Node>>> = const { RefCell::new(None) };
    /// A launch that cannot wait is running: nothing is collected.
    static OFF: Cell<bool> = const { Cell::new(false) };
}

/// While one is alive, launches run at once even in a replay: memory copied
/// back after a kernel (borrowed, foreign or exported) needs it to have run.
pub(super) struct Off(());

impl Off {
    pub(super) fn new() -> Off {
        OFF.set(true);
        Off(())
    }
}

impl Drop for Off {
    fn drop(&mut self) {
        OFF.set(false);
    }
}

/// An instantiated graph and the launches it was last given.
pub struct Graph {
    graph: Handle,
    exec: Handle,
    nodes: Vec<Handle>,
    last: Vec<Node>,
}

// SAFETY: the handles are the driver's, valid in any thread of the process
// (with the context current, which `run` makes so before any graph call);
// the `Mutex` a program keeps its graph in serializes every use.
unsafe impl Send for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        if let Some(g) = cudadrv::driver().ok().and_then(|d| d.graph.as_ref()) {
            // SAFETY: both handles were made by this Graph and are destroyed
            // once; an instance still running is freed when it completes.
            unsafe {
                if !self.exec.is_null() {
                    (g.exec_destroy)(self.exec);
                }
                (g.destroy)(self.graph);
            }
        }
    }
}

/// Adds an NVRTC `for` launch (of `func`, `grid` blocks of `block` threads
/// over the argument bytes `args`) if this thread is collecting: true if it did.
pub(super) fn collect(func: Handle, grid: u64, block: u32, args: &[u8]) -> bool {
    if OFF.get() {
        return false;
    }
    NODES.with_borrow_mut(|nodes| match nodes {
        Some(nodes) => {
            nodes.push(Node {
                func: func as usize,
                grid: grid as u32,
                block,
                args: args.to_vec(),
            });
            true
        }
        None => false,
    })
}

/// Launches what was collected, in order, before a launch that cannot wait.
pub(super) fn drain() -> Result<(), String> {
    let nodes = NODES.with_borrow_mut(|n| n.as_mut().map(std::mem::take));
    match nodes {
        Some(nodes) if !nodes.is_empty() => launch_each(&nodes),
        _ => Ok(()),
    }
}

fn launch_each(nodes: &[Node]) -> Result<(), String> {
    let drv = cudadrv::driver().map_err(|e| e.to_string())?;
    for n in nodes {
        let mut args = n.args.clone();
        let mut params = [args.as_mut_ptr() as *mut c_void];
        // SAFETY: as DeviceEntry::call's launch of the same node: its function
        // (never unloaded), its grid (1..=i32::MAX) and block, one parameter
        // pointing at the argument bytes of the kernel's `pk_args`, which the
        // driver copies during the call; stream NULL (legacy), no extras.
        let rc = unsafe {
            (drv.launch_kernel)(
                n.func as Handle,
                n.grid,
                1,
                1,
                n.block,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        drv.check(rc, "cuLaunchKernel")?;
    }
    Ok(())
}

/// Runs `steps` (each a `run` of one launch) collecting their NVRTC
/// launches, then launches those as the graph kept in `kept`: built on the
/// first replay (or when the launches' kernels or count changed), patched
/// where arguments changed. On a failure, what was collected is launched
/// one by one (the steps before the failing one ran, as eagerly).
pub fn replay(kept: &Mutex<Option<Graph>>, steps: impl FnOnce() -> PkResult<()>) -> PkResult<()> {
    NODES.with_borrow_mut(|n| *n = Some(Vec::new()));
    let ran = steps();
    let nodes = NODES.with_borrow_mut(Option::take).unwrap_or_default();
    let err = |e: String| PkError::Runtime(format!("a replayed CUDA graph: {e}"));
    if ran.is_err() || nodes.is_empty() {
        launch_each(&nodes).map_err(err)?;
        return ran;
    }
    let drv = cudadrv::driver()?;
    let Some(g) = drv.graph.as_ref() else {
        return launch_each(&nodes).map_err(err);
    };
    let mut kept = kept.lock();
    let same = kept.as_ref().is_some_and(|k| {
        k.last.len() == nodes.len() && k.last.iter().zip(&nodes).all(|(a, b)| a.func == b.func)
    });
    if !same {
        *kept = None;
        match build(drv, g, &nodes) {
            Ok(mut built) => {
                built.last = nodes;
                *kept = Some(built);
            }
            Err(e) => {
                tracing::warn!(error = %e, "a CUDA graph did not build; its launches go one by one");
                return launch_each(&nodes).map_err(err);
            }
        }
    } else if let Some(k) = kept.as_mut() {
        for (i, n) in nodes.into_iter().enumerate() {
            if k.last[i] != n {
                let mut args = n.args.clone();
                let mut params = [args.as_mut_ptr() as *mut c_void];
                let p = node_params(&n, &mut params);
                // SAFETY: cuGraphExecKernelNodeSetParams_v2(CUgraphExec,
                // CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*): the instance
                // and node this Graph made; the node keeps its function (only
                // grid, block and parameters change); the driver copies the
                // parameter bytes during the call.
                let rc = unsafe { (g.set_kernel)(k.exec, k.nodes[i], &p) };
                drv.check(rc, "cuGraphExecKernelNodeSetParams")
                    .map_err(err)?;
                k.last[i] = n;
            }
        }
    }
    let exec = kept.as_ref().map_or(std::ptr::null_mut(), |k| k.exec);
    // SAFETY: cuGraphLaunch(CUgraphExec, CUstream): a live instance, stream
    // NULL (the legacy default stream, ordered with Kokkos' work and copies).
    // The memory its nodes use is kept by the memory layer as for any launch
    // (frees go through cudaFree, which waits for queued work).
    drv.check(
        unsafe { (g.launch)(exec, std::ptr::null_mut()) },
        "cuGraphLaunch",
    )
    .map_err(err)
}

fn node_params(n: &Node, params: &mut [*mut c_void; 1]) -> KernelNode {
    KernelNode {
        func: n.func as Handle,
        grid: [n.grid, 1, 1],
        block: [n.block, 1, 1],
        shared: 0,
        params: params.as_mut_ptr(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    }
}

/// A graph of `nodes` in a chain (each after the one before: the program's
/// order), instantiated.
fn build(drv: &cudadrv::Driver, g: &GraphFns, nodes: &[Node]) -> Result<Graph, String> {
    let mut graph: Handle = std::ptr::null_mut();
    // SAFETY: cuGraphCreate(CUgraph*, unsigned flags = 0) writes `graph`.
    drv.check(unsafe { (g.create)(&mut graph, 0) }, "cuGraphCreate")?;
    let mut out = Graph {
        graph,
        exec: std::ptr::null_mut(),
        nodes: Vec::with_capacity(nodes.len()),
        last: Vec::new(),
    };
    for n in nodes {
        let mut args = n.args.clone();
        let mut params = [args.as_mut_ptr() as *mut c_void];
        let p = node_params(n, &mut params);
        let mut node: Handle = std::ptr::null_mut();
        let deps = out
            .nodes
            .last()
            .map_or(std::ptr::null(), |d| d as *const Handle);
        // SAFETY: cuGraphAddKernelNode_v2(CUgraphNode*, CUgraph, const
        // CUgraphNode* deps, size_t n, const CUDA_KERNEL_NODE_PARAMS*): writes
        // `node`; `deps` is the previous node of this graph (or none); the
        // driver copies the parameter bytes during the call.
        let rc =
            unsafe { (g.add_kernel)(&mut node, graph, deps, usize::from(!deps.is_null()), &p) };
        drv.check(rc, "cuGraphAddKernelNode")?;
        out.nodes.push(node);
    }
    // SAFETY: cuGraphInstantiateWithFlags(CUgraphExec*, CUgraph, flags = 0).
    let rc = unsafe { (g.instantiate)(&mut out.exec, graph, 0) };
    drv.check(rc, "cuGraphInstantiate")?;
    Ok(out)
}
