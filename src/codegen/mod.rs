//! Code generation: one workunit (with its helper functions and classtypes)
//! becomes a Kokkos functor plus an `extern "C"` entry taking raw pointers
//! (`single.rs`); a fused region becomes one functor calling every body
//! (`fused.rs`). Output is deterministic (ordered maps, stable names) so the
//! cache key and snapshots never flicker.
pub mod body;
pub mod device;
mod device_kernels;
mod device_names;
mod device_records;
mod device_scan;
pub mod emit;
pub mod fused;
pub mod single;
pub mod spec;

use crate::errors::{KernelError, LocatedError, PkError, PkResult};
use crate::frontend::workunit::Workunit;
pub use crate::lower::sanitize;
pub use crate::types::{ArgTy, Pattern, Space};
pub use body::{lower_workunit, unit_header, unit_methods};
pub use emit::{layout_args, range_for, team_member_cpp, view_cpp};
pub use single::generate;
pub use spec::{Generated, KernelAbi, KernelSpec, Lowered, Member, Plan, PlanFn, PRELUDE};

/// The C++ of one workunit (lowered and generated), not compiled; an error
/// located in the workunit's source.
pub fn translate(wu: &Workunit, spec: &KernelSpec) -> PkResult<Generated> {
    let _span = tracing::info_span!("translate", workunit = %wu.name).entered();
    generate(spec).map_err(|e| located(e, wu))
}

/// A code generator's error, located in `wu`'s source.
pub fn located(e: KernelError, wu: &Workunit) -> PkError {
    PkError::Kernel(Box::new(LocatedError::new(e, &wu.src, &wu.name)))
}
