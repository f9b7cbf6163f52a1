//! The two pipelines, each a list of named stages, one call per line.
//!
//! - `submit(launch)` (submit.rs): route (the memo's verdict) -> run now,
//!   run at once, hold, or record.
//! - `eager(launch)` (flush.rs): kernel for the launch (the in-process
//!   table, else resolve names -> translate -> build and load) -> run.
//! - `flush(demand)` (flush.rs): dependency closure -> plan (the cached plan
//!   of its shape, else candidates -> overwritten launches dropped ->
//!   partition -> verify -> dead temporaries -> deferral -> explain;
//!   planning.rs, settle.rs) -> per region: take it out of the DAG (deferred
//!   launches stay in it) -> kernel (fused: layout -> generate -> build and
//!   load) -> run -> what the memo learns (memo/).
//!
//! Both build kernels through `exec::load` and run them through `exec::run`.
//! The bindings call in with the GIL released.
mod cost;
mod flush;
mod kernels;
pub mod memo;
mod planning;
mod settle;
mod submit;
mod switches;

use crate::errors::PkResult;
use crate::lazy::deferral;
use std::sync::atomic::Ordering;

pub use cost::costs;
pub use flush::{flush, Ran};
pub use memo::plans::replays as plan_replays;
pub use submit::{submit, Caller, Submitted};
pub use switches::check_disabled;

/// Lazy mode was switched on or off: what the memo learned starts over
/// (but the measured costs, cost.rs), and so does what deferral learned
/// (lazy/deferral.rs).
pub fn lazy_switched() -> PkResult<()> {
    cost::reset();
    memo::forget(true);
    deferral::forget();
    // Launches another thread held meanwhile are recorded, not lost (the
    // binding calls this with the GIL held, as spilling needs).
    memo::hold::spill()
}

/// Fusion on or off for later flushes (lazy mode stays as it is).
pub fn set_fusing(on: bool) {
    switches::on().no_fuse.store(!on, Ordering::Relaxed);
    memo::forget(false);
}
