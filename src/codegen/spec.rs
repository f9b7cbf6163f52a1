//! What code generation takes and gives: the kernel spec, the entry point's
//! argument slots, per-argument plans, and a lowered body before assembly.
use crate::frontend::ast::FunctionDef;
use crate::frontend::source::SourceInfo;
use crate::lower::Globals;
use crate::types::{ArgTy, DType, Pattern, Space, ViewTy};
use serde::Serialize;
use std::sync::Arc;

/// What every Kokkos kernel includes: the Kokkos-bound part, then the
/// portable part NVRTC kernels share (see device.rs).
pub const PRELUDE: &str = concat!(
    include_str!("prelude.hpp"),
    include_str!("portable.hpp"),
    include_str!("special.hpp"),
    include_str!("checked.hpp")
);

/// Everything that determines one generated kernel.
pub struct KernelSpec<'a> {
    pub def: &'a FunctionDef,
    pub src: Arc<SourceInfo>,
    pub globals: &'a Globals,
    pub pattern: Pattern,
    pub space: Space,
    /// Number of work indices (1 for RangePolicy, n for MDRange).
    pub rank: usize,
    /// Launch arguments in workunit parameter order (functor members for functors).
    pub args: Vec<(String, ArgTy)>,
    /// `self` is the first parameter (functor method): members are `self.x`.
    pub is_method: bool,
    pub label: String,
    /// A for that runs its body `hi[1]` times per work item: a run of exact
    /// repeats of one launch, as one kernel (single kernels only).
    pub repeat: bool,
}

/// What the runtime needs to call the entry point.
#[derive(Clone, Debug, Serialize)]
pub struct KernelAbi {
    /// Argument index (into `KernelSpec::args`) for each view slot, in order.
    pub view_slots: Vec<usize>,
    /// Argument index and C++ dtype for each scalar slot, in order.
    pub scalar_slots: Vec<(usize, DType)>,
    pub acc: Option<DType>,
}

pub struct Generated {
    pub source: String,
    pub abi: KernelAbi,
    /// The NVRTC form of a CUDA kernel, when its shape has one (device.rs).
    pub device: Option<super::device::DeviceParts>,
}

/// How one launch argument appears in the functor being generated.
#[derive(Clone, Debug, Hash)]
pub enum Plan {
    /// A member of its own (the default), with this C++ name.
    Member(String),
    /// Shares a member declared for an earlier body (same buffer, fused).
    Shared(String),
    /// A dead temporary of a fused kernel: a per-work-item local of this dtype.
    Local(String, DType),
    /// A buffer of a fused kernel only ever accessed at the work index: the
    /// member (declared here when the flag says so) is loaded into the local
    /// once per work item and stored back after the last body (fused.rs).
    Cached(String, String, DType, bool),
}

/// (C++ name, C++ type, view slot) of one functor member.
pub type Member = (String, String, Option<(usize, ViewTy)>);

/// One workunit lowered into a functor body, before assembly.
pub struct Lowered {
    pub index: Vec<String>,
    pub acc: Option<(String, DType)>,
    /// The body only ever adds to its accumulator (`acc += x`), never reads
    /// it: partial sums in any grouping give the same total (see
    /// pk::chunked_reduce). A body that reads it sees Kokkos' running value.
    pub acc_only_added: bool,
    /// The body changes its accumulator only by adding to it (it may read
    /// it): what a scan needs to split its range freely (the NVRTC form).
    pub acc_grows_by_adds: bool,
    pub last_pass: Option<String>,
    pub decls: String,
    pub body: String,
    /// (C++ name, C++ type, view slot) of members this body declares.
    pub members: Vec<Member>,
    pub abi: KernelAbi,
}

/// Decides, per argument index and name, how an argument is represented.
pub type PlanFn<'a> = dyn Fn(usize, &str) -> Plan + 'a;
