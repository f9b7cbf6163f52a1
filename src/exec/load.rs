//! Building and loading one kernel (a launch's or a fused region's): its
//! NVRTC form where it has one and NVRTC takes it, else the Kokkos
//! translation unit through nvcc or the host compiler; and the view roles
//! the CUDA mirror bookkeeping reads.
use super::device_entry::DeviceEntry;
use super::kernel::{Entry, Kernel};
use crate::analysis::access::{self, Access};
use crate::codegen::device::{self, DeviceParts};
use crate::codegen::KernelSpec;
use crate::compile::{self, nvrtc::Outcome};
use crate::errors::PkResult;
use crate::types::Space;

/// Builds and loads one kernel of `source` (and its NVRTC form `device`).
pub fn load(
    source: &str,
    device: Option<&DeviceParts>,
    label: &str,
    space: Space,
) -> PkResult<Kernel> {
    let nvrtc_source = device
        .filter(|_| crate::config::get().nvrtc)
        .and_then(|d| device::source(d).map(|s| (d, s)));
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
    use crate::codegen::device::{occupancy_line, DeviceKind, REDUCE_MIN_BLOCKS};
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
/// and which it fills (kernel.rs `view_fills`); `index`: the work index's name.
pub fn view_roles(
    spec: &KernelSpec,
    slots: &[usize],
    index: Option<&str>,
) -> (Vec<bool>, Vec<bool>) {
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
