//! The fusion engine: partition a flush into regions by the rules of
//! `fusion-rules/`, then build and run ONE Kokkos kernel per region.
//!
//! flush (lazy/mod.rs) = take the closure -> plan regions (`plan.rs`, rules
//! from `rules.rs`, predicates in `legality.rs`) -> find dead temporaries ->
//! generate the fused C++ (`kernel.rs`) -> cache lookup / compile / load ->
//! run. Each stage is one call below.
pub mod explain;
pub mod kernel;
pub mod legality;
pub mod plan;
pub mod rules;

use crate::args::{ArgVal, PkScalarArg};
use crate::build::{cache, loader, toolchain};
use crate::codegen::{ArgTy, KernelSpec, Plan};
use crate::errors::{LocatedError, PkError, PkResult};
use crate::launch::Total;
use crate::lazy::access::Access;
use crate::lazy::Launch;
use crate::types::{DType, ViewTy};
use dashmap::DashMap;
use plan::{Cand, ViewUse};
use pyo3::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;
use std::sync::{Arc, LazyLock};

/// Fusion is on in lazy mode unless `PK_FUSE_NOFUSE=1` (lazy without fusing).
pub fn enabled() -> bool {
    std::env::var("PK_FUSE_NOFUSE")
        .map(|v| v != "1")
        .unwrap_or(true)
}

/// A launch as the planner sees it.
pub fn candidate<'a>(
    py: Python<'_>,
    l: &'a Launch,
    access: &'a BTreeMap<String, Access>,
) -> Cand<'a> {
    let wu = l.wu.bind(py).get();
    let statements = wu.statement_count();
    let mut views = Vec::new();
    for (k, (name, v)) in l.names.iter().zip(&l.vals).enumerate() {
        if let (ArgVal::View(vv), Some(a), ArgTy::View(vt)) = (v, access.get(name), &l.key.args[k])
        {
            views.push(ViewUse {
                name,
                arg: k,
                alloc: vv.alloc.id(),
                range: vv.range,
                geometry: plan::Geometry {
                    offset: vv.offset,
                    rank: vt.rank,
                    extent: vv.raw.extent,
                    stride: vv.raw.stride,
                    dtype: vt.dtype as u8,
                },
                access: *a,
            });
        }
    }
    Cand {
        label: &l.label,
        site: l,
        pattern: l.key.pattern,
        space: l.key.space,
        lo: &l.lo,
        hi: &l.hi,
        views,
        statements,
        team: l.key.rank == 0,
        src: wu.src.clone(),
    }
}

/// Allocations a region may keep in registers: no Python view of them is
/// left, nothing outside the region touches them, every access is `v[i]` at
/// the work index through one geometry, and each work item writes before it
/// reads (or the memory was never allocated, so its zeros are the local's).
pub fn dead_temporaries(
    region: &[&Launch],
    cands: &[&Cand],
    touched_elsewhere: &dyn Fn(usize) -> bool,
) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for (l, c) in region.iter().zip(cands) {
        for u in &c.views {
            if !seen.insert(u.alloc) {
                continue;
            }
            let alloc = match &l.vals[u.arg] {
                ArgVal::View(x) => x.alloc.clone(),
                _ => continue,
            };
            if alloc.live.load(std::sync::atomic::Ordering::Acquire) != 0
                || alloc.is_foreign()
                || touched_elsewhere(u.alloc)
            {
                continue;
            }
            let uses: Vec<&ViewUse<'_>> = cands
                .iter()
                .flat_map(|c| c.views.iter().filter(|w| w.alloc == u.alloc))
                .collect();
            let uniform = uses
                .iter()
                .all(|w| w.access.at_work_index && w.geometry == u.geometry);
            let first = uses[0].access;
            let writes_first = first.write && !first.read;
            if uniform && (writes_first || !alloc.is_allocated()) {
                out.insert(u.alloc);
            }
        }
    }
    out
}

/// A compiled fused kernel and how to call it.
pub struct FusedKernel {
    run: loader::EntryFn,
    error: loader::ErrorFn,
    abi: kernel::FusedAbi,
    pub source_key: String,
}

static FUSED: LazyLock<DashMap<[u8; 32], Arc<FusedKernel>>> = LazyLock::new(DashMap::new);

/// Feeds `std::hash::Hash` values into blake3 (region keys).
struct Blake3Hasher(blake3::Hasher);

impl std::hash::Hasher for Blake3Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finish(&self) -> u64 {
        unreachable!("region keys use the full blake3 digest")
    }
}

pub fn fused_kernel_count() -> usize {
    FUSED.len()
}

/// Argument plans of every body: shared buffers become one member, dead
/// temporaries locals. Returns (plans per body, view groups, locals).
#[allow(clippy::type_complexity)]
fn layout(
    region: &[&Launch],
    dead: &BTreeSet<usize>,
) -> (
    Vec<Vec<Plan>>,
    Vec<(usize, usize, ViewTy)>,
    Vec<(usize, DType)>,
) {
    let mut groups: Vec<(usize, usize, ViewTy)> = Vec::new();
    let mut group_keys: Vec<(usize, isize, Vec<i64>, Vec<i64>, ViewTy)> = Vec::new();
    let mut locals: Vec<(usize, DType)> = Vec::new();
    let mut plans = Vec::new();
    for (b, l) in region.iter().enumerate() {
        let mut p = Vec::new();
        for (k, v) in l.vals.iter().enumerate() {
            match (v, &l.key.args[k]) {
                (ArgVal::View(x), ArgTy::View(vt)) => {
                    let id = x.alloc.id();
                    if dead.contains(&id) {
                        let t = match locals.iter().position(|(a, _)| *a == id) {
                            Some(t) => t,
                            None => {
                                locals.push((id, vt.dtype));
                                locals.len() - 1
                            }
                        };
                        p.push(Plan::Local(format!("pk_t{t}"), vt.dtype));
                        continue;
                    }
                    let r = vt.rank as usize;
                    let gk = (
                        id,
                        x.offset,
                        x.raw.extent[..r].to_vec(),
                        x.raw.stride[..r].to_vec(),
                        *vt,
                    );
                    match group_keys.iter().position(|g| *g == gk) {
                        Some(g) => p.push(Plan::Shared(format!("pk_b{g}"))),
                        None => {
                            group_keys.push(gk);
                            groups.push((b, k, *vt));
                            p.push(Plan::Member(format!("pk_b{}", groups.len() - 1)));
                        }
                    }
                }
                _ => p.push(Plan::Member(format!("pk_s{b}_{k}"))),
            }
        }
        plans.push(p);
    }
    (plans, groups, locals)
}

pub fn region_label(region: &[&Launch]) -> String {
    let names: Vec<&str> = region.iter().map(|l| l.label.as_str()).collect();
    format!("fused({})", names.join("+"))
}

/// Builds (or finds) and runs the kernel of one region. Returns each launch's
/// reduction total (None for fors).
pub fn run_region(
    py: Python<'_>,
    region: &[&Launch],
    dead: &BTreeSet<usize>,
) -> PkResult<Vec<Option<Total>>> {
    let (plans, groups, locals) = layout(region, dead);
    let label = region_label(region);
    // Structurally identical regions (same workunits, argument types and
    // sharing) reuse one kernel: the key has no data pointers or values.
    // Hashed rather than formatted: a flush of many small regions computes one
    // key per region, and blake3 makes a collision out of the question.
    let space = region[0].key.space;
    let mut h = Blake3Hasher(blake3::Hasher::new());
    space.hash(&mut h);
    for (l, p) in region.iter().zip(&plans) {
        (
            l.wu.bind(py).get().id,
            l.key.pattern,
            &l.key.args,
            l.is_method,
            p,
        )
            .hash(&mut h);
    }
    let key: [u8; 32] = h.0.finalize().into();
    let fk = match FUSED.get(&key) {
        Some(k) => k.clone(),
        None => {
            let k = Arc::new(build(py, region, &plans, &groups, &locals, &label)?);
            FUSED.insert(key, k.clone());
            k
        }
    };
    crate::runtime::kokkos()?;
    let group_vals: Vec<&crate::args::ViewVal> = fk
        .abi
        .groups
        .iter()
        .map(|&(b, k)| match &region[b].vals[k] {
            ArgVal::View(v) => v,
            _ => unreachable!("a view group comes from a view argument"),
        })
        .collect();
    let (device_launch, views) = crate::device::kernel_views(space, &group_vals, &[])?;
    let scalars: Vec<PkScalarArg> = fk
        .abi
        .scalars
        .iter()
        .map(|&(b, k, dt)| region[b].vals[k].scalar(dt))
        .collect();
    let (lo, hi) = (
        region[0].lo.clone(),
        region[0]
            .hi
            .iter()
            .zip(&region[0].lo)
            .map(|(h, l)| (*h).max(*l))
            .collect::<Vec<_>>(),
    );
    let mut result = vec![0u64; fk.abi.accs.len().max(1)];
    let rc = crate::launch::call_entry(py, fk.run, &views, &scalars, &lo, &hi, &mut result);
    if rc != 0 {
        return Err(PkError::Runtime(format!(
            "{label} failed in Kokkos: {}",
            loader::error_text(fk.error)
        )));
    }
    if let Some(l) = device_launch {
        l.finish()?;
    }
    let mut totals = vec![None; region.len()];
    for (slot, (b, dt)) in fk.abi.accs.iter().enumerate() {
        totals[*b] = Some(crate::launch::read_total(&result[slot], *dt));
    }
    Ok(totals)
}

fn build(
    py: Python<'_>,
    region: &[&Launch],
    plans: &[Vec<Plan>],
    groups: &[(usize, usize, ViewTy)],
    locals: &[(usize, DType)],
    label: &str,
) -> PkResult<FusedKernel> {
    let _span = tracing::info_span!("fuse", region = %label).entered();
    let mut globals = Vec::new();
    let mut defs = Vec::new();
    for l in region {
        let wu = l.wu.bind(py).get();
        let methods = l.methods.as_ref().map(|m| m.bind(py).clone());
        globals
            .push(crate::resolve::globals_of(py, wu, methods.as_ref()).map_err(PkError::Python)?);
        defs.push(wu.def()?);
    }
    let mut bodies = Vec::new();
    for (i, l) in region.iter().enumerate() {
        let wu = l.wu.bind(py).get();
        bodies.push(kernel::Body {
            spec: KernelSpec {
                def: &defs[i],
                src: wu.src.clone(),
                globals: &globals[i],
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
                label: l.label.clone(),
            },
            plans: plans[i].clone(),
        });
    }
    let (source, abi) = kernel::generate(&bodies, groups, locals, region[0].key.space, label)
        .map_err(|e| {
            // A body that does not translate alone fails here too: report it as its own.
            let first = region[0].wu.bind(py).get();
            PkError::Kernel(Box::new(LocatedError::new(e, &first.src, &first.name)))
        })?;
    let tc = toolchain::get()?;
    let key = cache::key(tc, &source);
    let so = cache::compile(tc, &key, &source, label)?;
    let lib = loader::open(&so)?;
    Ok(FusedKernel {
        run: loader::symbol(lib, "pk_run")?,
        error: loader::symbol(lib, "pk_error")?,
        abi,
        source_key: key,
    })
}
