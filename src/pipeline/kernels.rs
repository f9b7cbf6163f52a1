//! The kernels the pipelines run: one launch's, a run of repeats', a fused
//! region's; each found in its in-process table, else translated, built and
//! loaded.
use crate::analysis::access::{self, Access};
use crate::codegen::device::DeviceParts;
use crate::codegen::{self, fused, KernelSpec};
use crate::compile;
use crate::compile::nvrtc::Outcome;
use crate::errors::{LocatedError, PkError, PkResult};
use crate::exec::device_entry::DeviceEntry;
use crate::exec::kernel::{Entry, Kernel, BUILT, FUSED, FUSED_FAILED, KERNELS, REPEATS};
use crate::exec::launch::{Launch, Origin};
use crate::frontend::ast::FunctionDef;
use crate::frontend::workunit::Workunit;
use crate::fusion::layout;
use crate::lazy::graph::Node;
use crate::lower::Globals;
use crate::types::Space;
use std::sync::Arc;

/// The kernel of one launch: the in-process table, else translated and built.
pub(super) fn single_kernel(l: &Launch, origin: &dyn Origin) -> PkResult<Arc<Kernel>> {
    match KERNELS.get(&l.key) {
        Some(k) => Ok(k.clone()),
        None => build_single(l, origin, false),
    }
}

/// The kernel that runs a launch's body `hi[1]` times per work item (a run
/// of exact repeats of it): the in-process table, else translated and built.
pub(super) fn repeat_kernel(l: &Launch, origin: &dyn Origin) -> PkResult<Arc<Kernel>> {
    match REPEATS.get(&l.key) {
        Some(k) => Ok(k.clone()),
        None => build_single(l, origin, true),
    }
}

/// Translates, builds and loads one launch's kernel (looping when `repeat`),
/// and files it in its table.
fn build_single(l: &Launch, origin: &dyn Origin, repeat: bool) -> PkResult<Arc<Kernel>> {
    let globals = origin.globals(l.key.consts())?;
    let def = l.workunit().def()?;
    let mut spec = spec(l, &def, &globals);
    spec.repeat = repeat;
    let generated = translate(l.workunit(), &spec)?;
    let abi = &generated.abi;
    let mut kernel = load(
        &generated.source,
        generated.device.as_ref(),
        &l.workunit().name,
        l.key.space,
    )?;
    kernel.views = abi.view_slots.iter().map(|&k| (0, k)).collect();
    let index = access::work_index(&def, l.is_method, spec.rank);
    (kernel.view_writes, kernel.view_fills) = view_roles(&spec, &abi.view_slots, index);
    kernel.scalars = abi.scalar_slots.iter().map(|&(k, d)| (0, k, d)).collect();
    kernel.accs = abi.acc.map(|d| (0, d)).into_iter().collect();
    if let crate::types::Pattern::Reducer(r) = l.key.pattern {
        kernel.record = (!r.fields().is_empty()).then_some(r);
    }
    let kernel = Arc::new(kernel);
    let table = if repeat { &REPEATS } else { &KERNELS };
    table.insert(l.key.clone(), kernel.clone());
    BUILT.insert(l.key.clone());
    Ok(kernel)
}

/// The kernel of a fused region: found by its structure, else generated and built.
pub(super) fn fused_kernel(
    nodes: &[Arc<Node>],
    region: &[&Launch],
    lay: &layout::Layout,
    label: &str,
) -> PkResult<Arc<Kernel>> {
    let key = layout::region_key(region, &lay.plans);
    if let Some(k) = FUSED.get(&key) {
        return Ok(k.clone());
    }
    // A region that failed to build once is not compiled again.
    if FUSED_FAILED.contains(&key) {
        return Err(PkError::Runtime(format!("{label} failed to build before")));
    }
    let built = build_fused(nodes, region, lay, label);
    match &built {
        Ok(k) => {
            FUSED.insert(key, k.clone());
            for l in region {
                BUILT.insert(l.key.clone());
            }
        }
        // An interrupted build is no failure of the region: built next time.
        Err(PkError::Interrupted(_)) => {}
        Err(_) => {
            FUSED_FAILED.insert(key);
        }
    }
    built
}

/// The kernel of a fused region: generated, built and loaded.
fn build_fused(
    nodes: &[Arc<Node>],
    region: &[&Launch],
    lay: &layout::Layout,
    label: &str,
) -> PkResult<Arc<Kernel>> {
    let _span = tracing::info_span!("fuse", region = %label).entered();
    if crate::config::get().failpoint.as_deref() == Some("fused_build") {
        return Err(PkError::Runtime(format!(
            "{label} did not build (failpoint)"
        )));
    }
    let globals: Vec<Globals> = nodes
        .iter()
        .map(|n| n.origin.globals(n.launch.key.consts()))
        .collect::<PkResult<_>>()?;
    let defs = region
        .iter()
        .map(|l| l.workunit().def())
        .collect::<PkResult<Vec<_>>>()?;
    let bodies: Vec<fused::Body> = region
        .iter()
        .enumerate()
        .map(|(i, l)| fused::Body {
            spec: spec(l, &defs[i], &globals[i]),
            plans: lay.plans[i].clone(),
        })
        .collect();
    let space = region[0].key.space;
    let (source, abi, device) = fused::generate(
        &bodies,
        &lay.groups,
        &lay.locals,
        &lay.cached,
        &lay.written,
        space,
        label,
    )
    // A body that does not translate alone fails here too: report it as its own.
    .map_err(|e| located(e, region[0].workunit()))?;
    let mut kernel = load(&source, device.as_ref(), label, space)?;
    kernel.views = abi.groups;
    if space == Space::Cuda {
        kernel.view_writes = lay.written.clone(); // (mirror bookkeeping, as view_writes)
        if lay.filled.contains(&true) {
            kernel.view_fills = lay.filled.clone();
        }
    }
    kernel.scalars = abi.scalars;
    kernel.accs = abi.accs;
    Ok(Arc::new(kernel))
}

/// Build and load one kernel (both pipelines): its NVRTC form where it has
/// one and NVRTC takes it, else the Kokkos translation unit through nvcc or
/// the host compiler.
fn load(source: &str, device: Option<&DeviceParts>, label: &str, space: Space) -> PkResult<Kernel> {
    let nvrtc_source = device
        .filter(|_| crate::config::get().nvrtc)
        .and_then(|d| codegen::device::source(d).map(|s| (d, s)));
    if let Some((d, nv)) = nvrtc_source {
        let device = crate::kokkos::device_id()?;
        match nvrtc_load(&nv, d, label, device)? {
            Outcome::Loaded(f, key) => {
                let e = DeviceEntry::new(f, d, device);
                return Ok(Kernel::with_entry(Entry::Device(e), key, space));
            }
            Outcome::Rejected(log) => {
                tracing::info!(kernel = label, "NVRTC rejected it; nvcc builds it: {log}")
            }
        }
    }
    Ok(Kernel::new(compile::load(source, label)?, space))
}

/// NVRTC's build of `nv`, the source of `d`. A range reduction is held to
/// few registers so that all its blocks fit on the GPU at once
/// (device_kernels.rs REDUCE_MIN_BLOCKS); one that then spills to local
/// memory loses more than that gains, and is built without the hold.
fn nvrtc_load(nv: &str, d: &DeviceParts, label: &str, device: i32) -> PkResult<Outcome> {
    use codegen::device::{occupancy_line, DeviceKind, REDUCE_MIN_BLOCKS};
    let (entry, bounds) = (d.kind.entry(), (d.bounds_check, d.zero_div));
    // Range kernels want L1, as Kokkos gives its own; a team kernel's scratch
    // lives in shared memory (rank 0: a TeamPolicy).
    let prefer_l1 = d.rank > 0;
    let loaded = compile::nvrtc::load(nv, entry, label, device, bounds, prefer_l1)?;
    let held_range_reduction = matches!(d.kind, DeviceKind::Reduce(_)) && d.rank > 0;
    match &loaded {
        Outcome::Loaded(f, _) if held_range_reduction && compile::nvrtc::local_bytes(f)? > 0 => {
            let free = nv.replacen(&occupancy_line(REDUCE_MIN_BLOCKS), &occupancy_line(1), 1);
            compile::nvrtc::load(&free, entry, label, device, bounds, prefer_l1)
        }
        _ => Ok(loaded),
    }
}

/// CUDA kernels (mirror bookkeeping): which view slots the kernel may write,
/// and which it fills (exec/kernel.rs `view_fills`).
fn view_roles(spec: &KernelSpec, slots: &[usize], index: Option<&str>) -> (Vec<bool>, Vec<bool>) {
    if spec.space != Space::Cuda {
        return (Vec::new(), Vec::new());
    }
    let acc = access::view_access(spec.def, &spec.args, index, Some(spec.globals));
    let access = |k: usize| acc.get(&spec.args[k].0);
    let writes = slots
        .iter()
        .map(|&k| access(k).is_none_or(|a| a.write))
        .collect();
    let fills = |a: &Access| a.write && !a.read && a.at_work_index && a.always_written;
    let fills: Vec<bool> = match spec.rank {
        1 => slots
            .iter()
            .map(|&k| access(k).is_some_and(fills))
            .collect(),
        _ => Vec::new(),
    };
    (
        writes,
        if fills.contains(&true) {
            fills
        } else {
            Vec::new()
        },
    )
}

/// The kernel spec of a launch (its parsed definition and resolved names given).
fn spec<'a>(l: &Launch, def: &'a FunctionDef, globals: &'a Globals) -> KernelSpec<'a> {
    KernelSpec {
        def,
        src: l.workunit().src.clone(),
        globals,
        pattern: l.key.pattern,
        space: l.key.space,
        rank: l.key.rank as usize,
        args: l
            .names
            .iter()
            .cloned()
            .zip(l.key.args.iter().cloned())
            .collect(),
        is_method: l.is_method,
        label: l.label.to_string(),
        repeat: false,
    }
}

/// The C++ of one workunit (lower and generate), without compiling it.
pub fn translate(wu: &Workunit, spec: &KernelSpec) -> PkResult<codegen::Generated> {
    let _span = tracing::info_span!("translate", workunit = %wu.name).entered();
    codegen::generate(spec).map_err(|e| located(e, wu))
}

fn located(e: crate::errors::KernelError, wu: &Workunit) -> PkError {
    PkError::Kernel(Box::new(LocatedError::new(e, &wu.src, &wu.name)))
}

/// Runs a fused region's kernel over its launches' arguments (`bodies`, in
/// the region's order) and the first launch's range, each reduction's total
/// into `totals`. Under `PK_FAILPOINT=fused_run` it fails after the kernel
/// ran (tests: a fused kernel that ran is never rerun launch by launch).
pub(super) fn run_fused_kernel(
    kernel: &Kernel,
    bodies: &[&[crate::exec::args::ArgVal]],
    (lo, hi): (&[i64], &[i64]),
    label: &str,
    totals: &mut [Option<crate::exec::kernel::Total>],
) -> PkResult<()> {
    crate::exec::run::run(
        kernel,
        bodies,
        lo,
        hi,
        crate::exec::run::Who::Region(label),
        totals,
    )?;
    if crate::config::get().failpoint.as_deref() == Some("fused_run") {
        return Err(PkError::Runtime(format!(
            "{label} failed after it ran (failpoint)"
        )));
    }
    Ok(())
}
