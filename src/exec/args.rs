//! Launch argument values as the C ABI takes them: views (memory layer) and
//! numbers, converted to the kernel's dtype when a launch runs.
pub use crate::memory::view::{PkViewArg, ViewVal};
use crate::types::DType;

#[repr(C)]
#[derive(Clone, Copy)]
pub union PkScalarArg {
    pub i: i64,
    pub d: f64,
    /// A complex number (real, imaginary).
    pub c: [f64; 2],
}

#[derive(Clone)]
pub enum ArgVal {
    View(ViewVal),
    Int(i64),
    Float(f64),
    Complex(f64, f64),
}

impl ArgVal {
    /// The C ABI scalar for a number argument, converted to the kernel's dtype.
    pub fn scalar(&self, dt: DType) -> PkScalarArg {
        if dt.is_complex() {
            let c = match self {
                ArgVal::Int(i) => [*i as f64, 0.0],
                ArgVal::Float(f) => [*f, 0.0],
                ArgVal::Complex(r, i) => [*r, *i],
                ArgVal::View(_) => unreachable!("a scalar slot holds a number"),
            };
            return PkScalarArg { c };
        }
        // A complex number only reaches a real slot through a checked
        // conversion (`.real`); its real part is what is left.
        let this = match self {
            ArgVal::Complex(r, _) => &ArgVal::Float(*r),
            other => other,
        };
        match (this, dt.is_float()) {
            (ArgVal::Int(i), false) => PkScalarArg { i: *i },
            (ArgVal::Int(i), true) => PkScalarArg { d: *i as f64 },
            (ArgVal::Float(f), true) => PkScalarArg { d: *f },
            (ArgVal::Float(f), false) => PkScalarArg { i: *f as i64 },
            (ArgVal::View(_) | ArgVal::Complex(..), _) => {
                unreachable!("a scalar slot holds a number")
            }
        }
    }
}
