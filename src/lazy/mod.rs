//! The lazy runtime (PK_FUSE=1): launches become nodes of a DAG whose edges
//! are data hazards on buffers; `closure` answers what a demanded result
//! depends on. Running what it returns is the flush pipeline's job.
pub mod closure;
pub mod deferral;
pub mod failure;
mod frontier;
pub mod graph;
mod hazards;
pub mod slot;
pub mod turn;
pub mod unobserved;
