//! The one way a loaded kernel runs: eager launches, single launches of a
//! flush and fused regions all come through `run`.
use super::args::{ArgVal, PkScalarArg};
use super::kernel::{read_total, Entry, Kernel, Total};
use crate::compile::loader;
use crate::errors::{PkError, PkResult};
use crate::memory::device_launch as device;
use crate::types::Space;
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Kokkos' host backends run one parallel dispatch at a time per process
/// (OpenMP refuses a second one: "in parallel or not initialized"), so
/// kernels launched from several threads take turns here.
static DISPATCH: Mutex<()> = Mutex::new(());

/// Turns held or waited for. Every host element access asks whether a
/// kernel is running: one load answers it, where probing the mutex costs
/// a locked compare-and-swap and a release.
static HOLDERS: AtomicUsize = AtomicUsize::new(0);

/// The dispatch turn, held until dropped.
pub struct Turn {
    _guard: MutexGuard<'static, ()>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        HOLDERS.fetch_sub(1, Ordering::Release);
    }
}

/// Holds the dispatch turn (also for fences and Kokkos' own calls).
pub fn dispatch_turn() -> Turn {
    HOLDERS.fetch_add(1, Ordering::AcqRel);
    Turn {
        _guard: DISPATCH.lock(),
    }
}

/// `replay --compile-only`: kernels are built and loaded but not run (totals
/// read as zero), so a trace prewarms the compile cache without its data.
static BUILD_ONLY: AtomicBool = AtomicBool::new(false);

pub fn set_build_only(on: bool) {
    BUILD_ONLY.store(on, Ordering::Relaxed);
}

/// Whether a kernel is running (or about to) in another thread right now.
pub fn dispatch_busy() -> bool {
    HOLDERS.load(Ordering::Acquire) > 0
}

/// What a host entry point returns when Ctrl-C stopped it part way
/// (prelude.hpp pk::STOPPED).
const STOPPED: i32 = 4;

thread_local! {
    static VIEW_ARGS: std::cell::Cell<Vec<super::args::PkViewArg>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Host launches of at least this many work items (some tens of
/// microseconds at least) make sure Ctrl-C reaches the runtime first.
const LARGE: i64 = 1 << 16;

/// Work items of a launch's first two dimensions (teams: the league).
fn items(lo: &[i64], his: &[i64]) -> i64 {
    lo.iter()
        .zip(his)
        .take(2)
        .map(|(b, e)| (e - b).max(0))
        .fold(1i64, |a, n| a.saturating_mul(n))
}

/// What ran, for the error a failing kernel raises.
#[derive(Clone, Copy)]
pub enum Who<'a> {
    Workunit(&'a str),
    Region(&'a str),
}

/// Runs `k` now over the argument values of its bodies (one for a single
/// launch, one per launch of a fused region) and the policy `lo..his`.
/// Writes each body's reduction total into `totals` (one per body; fors are
/// left alone). The caller has released the GIL: kernels may run long.
pub fn run(
    k: &Kernel,
    bodies: &[&[ArgVal]],
    lo: &[i64],
    his: &[i64],
    who: Who<'_>,
    totals: &mut [Option<Total>],
) -> PkResult<()> {
    if BUILD_ONLY.load(Ordering::Relaxed) {
        for &(b, dt) in &k.accs {
            totals[b] = Some(match k.record {
                Some(reducer) => Total::Rec {
                    words: [0; 4],
                    dt,
                    reducer,
                },
                None => read_total(&[0; 2], dt),
            });
        }
        return Ok(());
    }
    crate::kokkos::kokkos()?;
    if k.space != Space::Cuda && items(lo, his) >= LARGE {
        // Long enough to be worth a stop part way (prelude.hpp StopHooks).
        crate::interrupt::chain();
    }
    let _turn = dispatch_turn();
    crate::kokkos::thread_enter();
    let vals = k.views.iter().map(|&(b, a)| match &bodies[b][a] {
        ArgVal::View(v) => v,
        _ => unreachable!("a view slot holds a view"),
    });
    // This thread's buffer of view arguments, lent for the launch (a kernel
    // never launches another from inside, and a failed launch just drops it).
    let mut views = VIEW_ARGS.take();
    let fills = || device::Fills::of(&k.view_fills, lo, his);
    let device_launch = device::kernel_views(k.space, vals, &k.view_writes, fills, &mut views)?;
    // (Memory copied back after the kernel: it cannot wait for a CUDA graph.)
    let _now = device_launch
        .as_ref()
        .is_some_and(|l| !l.plain())
        .then(super::graph::Off::new);
    // Small launches are the common case: scalars, bounds and results on the
    // stack, spilling to the heap only past these sizes.
    let mut scalar_buf = [PkScalarArg::int(0); 16];
    let mut scalar_spill = Vec::new();
    let scalars: &mut [PkScalarArg] = if k.scalars.len() <= scalar_buf.len() {
        &mut scalar_buf[..k.scalars.len()]
    } else {
        scalar_spill.resize(k.scalars.len(), PkScalarArg::int(0));
        &mut scalar_spill
    };
    for (slot, &(b, a, dt)) in scalars.iter_mut().zip(&k.scalars) {
        *slot = bodies[b][a].scalar(dt);
    }
    // Ends before begins are empty ranges (Kokkos wants end >= begin).
    let mut hi_buf = [0i64; 8];
    let mut hi_spill = Vec::new();
    let hi: &mut [i64] = if his.len() <= hi_buf.len() {
        &mut hi_buf[..his.len()]
    } else {
        hi_spill.resize(his.len(), 0);
        &mut hi_spill
    };
    for (h, (e, b)) in hi.iter_mut().zip(his.iter().zip(lo)) {
        *h = (*e).max(*b);
    }
    // One 16-byte slot per total (a complex128 fills one).
    let mut result = [0u64; 16];
    let mut spill = Vec::new();
    let result: &mut [u64] = if 2 * k.accs.len() <= result.len() {
        &mut result
    } else {
        spill.resize(2 * k.accs.len(), 0);
        &mut spill
    };
    let t0 = crate::trace::on().then(std::time::Instant::now);
    // (code, what failed): 2 is an index outside a view (PK_BOUNDS_CHECK=1).
    let failed: Option<(i32, &str, String)> = {
        let _span = tracing::debug_span!("launch").entered();
        // A Kokkos kernel on Cuda: launches a replay collected go first.
        let drained = match &k.entry {
            Entry::Library { .. } if k.space == Space::Cuda => super::graph::drain(),
            _ => Ok(()),
        };
        match &k.entry {
            _ if drained.is_err() => drained.err().map(|e| (1, "CUDA", e)),
            Entry::Library { run, error } => {
                // SAFETY: `run` is the library's `pk_run`, declared by the code
                // generator (codegen/single.rs, fused.rs) as `int pk_run(const
                // pk_view_arg*, const pk_scalar_arg*, const int64_t*, const
                // int64_t*, void*)`, the EntryFn type (#[repr(C)] PkViewArg and
                // PkScalarArg mirror portable.hpp's structs). Every pointer stays
                // valid for the call: `views`, `scalars`, `hi` and `result` are
                // owned by this frame, `lo` is borrowed from the caller, and the
                // views' data lives in allocations the `bodies` hold (or in
                // `device_launch`'s temporary device buffers). The entry
                // point reads the slot counts its code generator wrote (the
                // lengths of k.views / k.scalars, which size `views` and
                // `scalars`; `lo` and `hi` as long as the launch's rank, which
                // the callers' policy bounds are assumed to match, unchecked
                // here) and writes its 16-byte total slots (a record reducer's
                // up to 4 words): `result` has 2 * k.accs.len() and at least 16.
                // The dispatch turn serializes Kokkos dispatch, and
                // thread_enter lent this thread the OpenMP instance.
                let rc = unsafe {
                    run(
                        views.as_ptr() as *const _,
                        scalars.as_ptr() as *const _,
                        lo.as_ptr(),
                        hi.as_ptr(),
                        result.as_mut_ptr() as *mut _,
                    )
                };
                (rc != 0).then(|| (rc, "Kokkos", loader::error_text(*error)))
            }
            Entry::Device(d) => match d
                .call(&views, scalars, lo, hi, result)
                .and_then(|()| d.failure())
            {
                Ok(None) => None,
                Ok(Some((code, msg))) => Some((code, "CUDA", msg)),
                Err(msg) => Some((1, "CUDA", msg)),
            },
        }
    };
    if let Some(t0) = t0 {
        let (kind, name) = match who {
            Who::Workunit(n) => ("workunit", n),
            Who::Region(l) => ("region", l),
        };
        let us = t0.elapsed().as_secs_f64() * 1e6;
        #[derive(serde::Serialize)]
        struct Kernel<'a> {
            name: &'a str,
            kind: &'static str,
            bodies: usize,
            us: f64,
            /// How the code was built: "nvrtc" (the device shim, launched through
            /// the driver) or "kokkos" (a Kokkos translation unit: nvcc or g++).
            via: &'static str,
        }
        let via = match &k.entry {
            Entry::Device(_) => "nvrtc",
            Entry::Library { .. } => "kokkos",
        };
        let k = Kernel {
            name,
            kind,
            bodies: bodies.len(),
            us: (us * 10.0).round() / 10.0,
            via,
        };
        crate::trace::event_text("kernel", &super::describe::fields(&k));
    }
    VIEW_ARGS.set(views);
    // The kernel ran (perhaps only in part): borrowed memory gets back what it
    // wrote, as the host's own memory would have, also when it then failed.
    // (A division by zero ran every work item, with a quotient of 0.)
    let ran = || failed.as_ref().is_none_or(|f| f.0 == 3);
    let finished = device_launch.map_or(Ok(()), |l| l.finish(ran()));
    if let Some((rc, what, msg)) = failed {
        if rc == STOPPED && what == "Kokkos" {
            // Ctrl-C, and the program stops: some work items ran, the others not.
            return Err(PkError::Interrupted(match who {
                Who::Workunit(n) => format!("workunit '{n}' was stopped part way: some of its work items ran, the others did not"),
                Who::Region(l) => format!("{l} was stopped part way: some of its work items ran, the others did not"),
            }));
        }
        if rc == 3 {
            // Integer division by zero (those work items went on with a quotient of 0).
            return Err(PkError::ZeroDivision(match who {
                Who::Workunit(n) => format!("workunit '{n}': {msg}"),
                Who::Region(l) => format!("{l}: {msg}"),
            }));
        }
        if rc == 2 {
            // An index outside a view: nothing was touched there.
            return Err(PkError::Index(match who {
                Who::Workunit(n) => format!("workunit '{n}': {msg}"),
                Who::Region(l) => format!("{l}: {msg}"),
            }));
        }
        return Err(PkError::Runtime(match who {
            Who::Workunit(n) => format!("workunit '{n}' failed in {what}: {msg}"),
            Who::Region(l) => format!("{l} failed in {what}: {msg}"),
        }));
    }
    finished?;
    for (slot, &(b, dt)) in k.accs.iter().enumerate() {
        totals[b] = Some(read_total(&result[2 * slot..2 * slot + 2], dt));
    }
    if let (Some(reducer), Some(&(b, dt))) = (k.record, k.accs.first()) {
        let mut words = [0u64; 4];
        words.copy_from_slice(&result[..4]);
        totals[b] = Some(Total::Rec { words, dt, reducer });
    }
    Ok(())
}
