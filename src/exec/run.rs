//! The one way a loaded kernel runs: eager launches, single launches of a
//! flush and fused regions all come through `run`.
use super::args::{ArgVal, PkScalarArg, ViewVal};
use super::kernel::{read_total, Kernel, Total};
use crate::build::loader;
use crate::errors::{PkError, PkResult};
use crate::memory::device;

/// What ran, for the error a failing kernel raises.
#[derive(Clone, Copy)]
pub enum Who<'a> {
    Workunit(&'a str),
    Region(&'a str),
}

/// Runs `k` now over the argument values of its bodies (one for a single
/// launch, one per launch of a fused region) and the policy `lo..hi`.
/// Writes each body's reduction total into `totals` (one per body; fors are
/// left alone). The caller has released the GIL: kernels may run long.
pub fn run(
    k: &Kernel,
    bodies: &[&[ArgVal]],
    lo: &[i64],
    hi: &[i64],
    who: Who<'_>,
    totals: &mut [Option<Total>],
) -> PkResult<()> {
    crate::kokkos::kokkos()?;
    let vals: Vec<&ViewVal> = k
        .views
        .iter()
        .map(|&(b, a)| match &bodies[b][a] {
            ArgVal::View(v) => v,
            _ => unreachable!("a view slot holds a view"),
        })
        .collect();
    let (device_launch, views) = device::kernel_views(k.space, &vals, &k.view_writes)?;
    let scalars: Vec<PkScalarArg> = k
        .scalars
        .iter()
        .map(|&(b, a, dt)| bodies[b][a].scalar(dt))
        .collect();
    let hi: Vec<i64> = hi.iter().zip(lo).map(|(h, l)| (*h).max(*l)).collect();
    let mut result = [0u64; 8];
    let mut spill = Vec::new();
    let result: &mut [u64] = if k.accs.len() <= result.len() {
        &mut result
    } else {
        spill.resize(k.accs.len(), 0);
        &mut spill
    };
    let rc = {
        let _span = tracing::debug_span!("launch").entered();
        // SAFETY: every pointer stays valid for the call (owned by this frame
        // or by the allocations `vals` keeps alive); the entry point reads the
        // slot counts its code generator wrote.
        unsafe {
            (k.run)(
                views.as_ptr() as *const _,
                scalars.as_ptr() as *const _,
                lo.as_ptr(),
                hi.as_ptr(),
                result.as_mut_ptr() as *mut _,
            )
        }
    };
    if rc != 0 {
        let msg = loader::error_text(k.error);
        return Err(PkError::Runtime(match who {
            Who::Workunit(n) => format!("workunit '{n}' failed in Kokkos: {msg}"),
            Who::Region(l) => format!("{l} failed in Kokkos: {msg}"),
        }));
    }
    if let Some(l) = device_launch {
        l.finish()?;
    }
    for (slot, &(b, dt)) in k.accs.iter().enumerate() {
        totals[b] = Some(read_total(&result[slot], dt));
    }
    Ok(())
}
