//! Launch argument values as the C ABI takes them: views (memory layer) and
//! numbers, converted to the kernel's dtype when a launch runs.
pub use crate::memory::view::{PkViewArg, ViewVal};
use crate::types::DType;

#[repr(C)]
#[derive(Clone, Copy)]
pub union PkScalarArg {
    pub i: i64,
    pub d: f64,
}

#[derive(Clone)]
pub enum ArgVal {
    View(ViewVal),
    Int(i64),
    Float(f64),
}

impl ArgVal {
    /// The C ABI scalar for a number argument, converted to the kernel's dtype.
    pub fn scalar(&self, dt: DType) -> PkScalarArg {
        match (self, dt.is_float()) {
            (ArgVal::Int(i), false) => PkScalarArg { i: *i },
            (ArgVal::Int(i), true) => PkScalarArg { d: *i as f64 },
            (ArgVal::Float(f), true) => PkScalarArg { d: *f },
            (ArgVal::Float(f), false) => PkScalarArg { i: *f as i64 },
            (ArgVal::View(_), _) => unreachable!("a scalar slot holds a number"),
        }
    }
}
