//! Analyses of a kernel's AST that the runtime acts on: which views a launch
//! reads and writes, and whether it touches them only at the work index. Used
//! by lazy hazards, fusion legality and CUDA mirror bookkeeping alike.
pub mod access;
pub mod extents;
