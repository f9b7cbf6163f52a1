//! Kernel types and NumPy's promotion rules (NEP 50: Python literals are "weak"
//! and take the other operand's dtype).
use serde::Serialize;

mod dtype;
mod promote;
mod reducer;
pub use dtype::{DType, ALL_DTYPES};
pub use promote::{promote, promote_weak, STy};
pub use reducer::Reducer;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Layout {
    Right,
    Left,
    Stride,
}

impl Layout {
    pub fn cpp(self) -> &'static str {
        match self {
            Layout::Right => "Kokkos::LayoutRight",
            Layout::Left => "Kokkos::LayoutLeft",
            Layout::Stride => "Kokkos::LayoutStride",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ViewTy {
    pub dtype: DType,
    pub rank: u8,
    pub layout: Layout,
    /// Created with `trait=pk.Atomic`: `v[i] op= x` is an atomic update.
    pub atomic: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Ty {
    Scalar(DType),
    View(ViewTy),
    /// A `@pk.classtype` value, by class name.
    Class(String),
    Void,
}

impl Ty {
    pub fn describe(&self) -> String {
        match self {
            Ty::Scalar(d) => d.name().to_string(),
            Ty::View(v) => format!("View{}D[{}]", v.rank, v.dtype.name()),
            Ty::Class(c) => format!("classtype {c}"),
            Ty::Void => "nothing (a call without a value)".to_string(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Pattern {
    For,
    /// A sum reduction (the default): fuses with the fors around it.
    Reduce,
    Scan,
    /// A reduction through one of Kokkos' other built-in reducers (`reducer=`).
    Reducer(Reducer),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Space {
    Serial,
    OpenMP,
    Cuda,
    /// PyKokkos' Debug space: Serial, with every view access bounds-checked.
    Debug,
}

impl Space {
    pub fn cpp(self) -> &'static str {
        match self {
            Space::Serial | Space::Debug => "Kokkos::Serial",
            Space::OpenMP => "Kokkos::OpenMP",
            Space::Cuda => "Kokkos::Cuda",
        }
    }
    pub fn mem(self) -> &'static str {
        match self {
            Space::Cuda => "Kokkos::CudaSpace",
            _ => "Kokkos::HostSpace",
        }
    }
}

/// The type of one launch argument as seen at the call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ArgTy {
    /// A number; `weak` for Python int/float/bool (NEP 50).
    Scalar {
        dtype: DType,
        weak: bool,
    },
    View(ViewTy),
    /// A random number pool (`pk.Random_XorShift64_Pool`): each launch passes
    /// a fresh 64-bit stream seed, from which every work item seeds its own
    /// generator for `pk.rand(dtype)`.
    Rng,
}
