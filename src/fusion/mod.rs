//! The fusion engine, pure planning over candidates that carry no Python
//! objects: legality (engine invariants, then the rules' policy), greedy
//! partition into regions, plan verification, dead temporaries, the argument
//! layout of a fused kernel, and explain reports. The flush pipeline
//! (`pipeline/mod.rs`) calls each stage; nothing here runs a kernel.
pub mod cand;
pub mod dead;
pub mod defer;
pub mod explain;
pub mod invariants;
pub mod layout;
pub mod legality;
pub mod overwritten;
pub mod plan;
pub mod renumber;
pub mod rules;
pub mod verify;
