//! The kernels the pipelines run: one launch's, a run of repeats', a fused
//! region's; each found in its in-process table, else translated, built and
//! loaded.
use crate::analysis::access;
use crate::codegen::{self, fused};
use crate::errors::{PkError, PkResult};
use crate::exec::args::ArgVal;
use crate::exec::kernel::{Kernel, Total, BUILT, FUSED, FUSED_FAILED, KERNELS, REPEATS};
use crate::exec::launch::{Launch, Origin};
use crate::exec::load::{load, view_roles};
use crate::exec::run::{run, Who};
use crate::fusion::layout;
use crate::lazy::graph::Node;
use crate::lower::Globals;
use crate::types::Space;
use smallvec::SmallVec;
use std::sync::Arc;

/// The kernel of one launch, or (`repeat`) the one that runs its body
/// `hi[1]` times per work item (a run of exact repeats of it): the
/// in-process table, else translated and built.
pub(super) fn single_kernel(
    l: &Launch,
    origin: &dyn Origin,
    repeat: bool,
) -> PkResult<Arc<Kernel>> {
    let table = if repeat { &REPEATS } else { &KERNELS };
    match table.get(&l.key) {
        Some(k) => Ok(k.clone()),
        None => build_single(l, origin, repeat),
    }
}

/// Translates, builds and loads one launch's kernel (looping when `repeat`),
/// and files it in its table.
fn build_single(l: &Launch, origin: &dyn Origin, repeat: bool) -> PkResult<Arc<Kernel>> {
    let globals = origin.globals(l.key.consts())?;
    let def = l.workunit().def()?;
    let mut spec = l.spec(&def, &globals);
    spec.repeat = repeat;
    let generated = codegen::translate(l.workunit(), &spec)?;
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
            spec: l.spec(&defs[i], &globals[i]),
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
    .map_err(|e| codegen::located(e, region[0].workunit()))?;
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

/// Runs a fused region's kernel over its launches' arguments (in the
/// region's order) and the first launch's range: each launch's total.
/// Under `PK_FAILPOINT=fused_run` it fails after the kernel ran (tests: a
/// fused kernel that ran is never rerun launch by launch).
pub(super) fn run_fused_kernel(
    kernel: &Kernel,
    launches: &[&Launch],
    label: &str,
) -> PkResult<Totals> {
    let bodies: SmallVec<[&[ArgVal]; 16]> = launches.iter().map(|l| &l.vals[..]).collect();
    let mut totals: Totals = smallvec::smallvec![None; launches.len()];
    let first = launches[0];
    run(
        kernel,
        &bodies,
        &first.lo,
        &first.hi,
        Who::Region(label),
        &mut totals,
    )?;
    if crate::config::get().failpoint.as_deref() == Some("fused_run") {
        return Err(PkError::Runtime(format!(
            "{label} failed after it ran (failpoint)"
        )));
    }
    Ok(totals)
}

/// A fused kernel's totals, one per launch.
pub(super) type Totals = SmallVec<[Option<Total>; 16]>;
