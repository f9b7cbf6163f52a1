//! Execution: argument values, the launch record, building and loading a
//! kernel, the loaded-kernel tables, and the one function that runs a kernel.
pub mod args;
mod callees;
pub mod describe;
mod device_bytes;
pub mod device_entry;
mod device_records;
pub mod facts;
pub mod graph;
pub mod kernel;
pub mod launch;
pub mod load;
pub mod run;
pub mod space;
