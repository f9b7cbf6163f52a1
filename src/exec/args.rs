//! Launch argument values as the C ABI takes them: views (memory layer) and
//! numbers, converted to the kernel's dtype when a launch runs.
pub use crate::memory::view::{PkViewArg, ViewVal};
use crate::types::DType;

/// A number as the C ABI passes it: 16 bytes, every one of them initialized
/// (built only through `int`, `float` and `complex`), so the device path may
/// copy it as bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub union PkScalarArg {
    pub i: i64,
    pub d: f64,
    /// A complex number (real, imaginary).
    pub c: [f64; 2],
}

impl PkScalarArg {
    pub fn int(i: i64) -> PkScalarArg {
        PkScalarArg {
            c: [f64::from_bits(i as u64), 0.0],
        }
    }
    pub fn float(d: f64) -> PkScalarArg {
        PkScalarArg { c: [d, 0.0] }
    }
    pub fn complex(re: f64, im: f64) -> PkScalarArg {
        PkScalarArg { c: [re, im] }
    }
    /// The 16 bytes the C ABI reads.
    pub fn bytes(&self) -> [u8; 16] {
        // SAFETY: every constructor writes both words of `c`, so all 16 bytes
        // are initialized, and any bit pattern is a valid [f64; 2].
        let c = unsafe { self.c };
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&c[0].to_ne_bytes());
        out[8..].copy_from_slice(&c[1].to_ne_bytes());
        out
    }
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
            return PkScalarArg::complex(c[0], c[1]);
        }
        // A complex number only reaches a real slot through a checked
        // conversion (`.real`); its real part is what is left.
        let this = match self {
            ArgVal::Complex(r, _) => &ArgVal::Float(*r),
            other => other,
        };
        match (this, dt.is_float()) {
            (ArgVal::Int(i), false) => PkScalarArg::int(*i),
            (ArgVal::Int(i), true) => PkScalarArg::float(*i as f64),
            (ArgVal::Float(f), true) => PkScalarArg::float(*f),
            (ArgVal::Float(f), false) => PkScalarArg::int(*f as i64),
            (ArgVal::View(_) | ArgVal::Complex(..), _) => {
                unreachable!("a scalar slot holds a number")
            }
        }
    }
}
