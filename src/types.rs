//! Kernel types and NumPy's promotion rules (NEP 50: Python literals are "weak"
//! and take the other operand's dtype).
use serde::Serialize;

#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum DType {
    Bool = 0,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

pub const ALL_DTYPES: [DType; 11] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F32,
    DType::F64,
];

impl DType {
    pub fn from_code(c: u8) -> Option<DType> {
        ALL_DTYPES.get(c as usize).copied()
    }
    pub fn cpp(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8_t",
            DType::I16 => "int16_t",
            DType::I32 => "int32_t",
            DType::I64 => "int64_t",
            DType::U8 => "uint8_t",
            DType::U16 => "uint16_t",
            DType::U32 => "uint32_t",
            DType::U64 => "uint64_t",
            DType::F32 => "float",
            DType::F64 => "double",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    pub fn is_int(self) -> bool {
        !self.is_float() && self != DType::Bool
    }
    pub fn is_signed(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
    /// Buffer-protocol format character (struct module), native byte order.
    pub fn format(self) -> &'static str {
        match self {
            DType::Bool => "?",
            DType::I8 => "b",
            DType::I16 => "h",
            DType::I32 => "i",
            DType::I64 => "q",
            DType::U8 => "B",
            DType::U16 => "H",
            DType::U32 => "I",
            DType::U64 => "Q",
            DType::F32 => "f",
            DType::F64 => "d",
        }
    }
    pub fn from_format(f: &str) -> Option<DType> {
        let f = f.trim_start_matches(['@', '=', '<']);
        Some(match f {
            "?" => DType::Bool,
            "b" => DType::I8,
            "h" => DType::I16,
            "i" => DType::I32,
            "l" | "q" => DType::I64,
            "B" => DType::U8,
            "H" => DType::U16,
            "I" => DType::U32,
            "L" | "Q" => DType::U64,
            "f" => DType::F32,
            "d" => DType::F64,
            _ => return None,
        })
    }
    pub fn from_name(n: &str) -> Option<DType> {
        ALL_DTYPES.iter().copied().find(|d| d.name() == n)
    }
}

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

/// Kokkos' built-in reducers, as `parallel_reduce(..., reducer=pk.Max)` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Reducer {
    Prod,
    Min,
    Max,
    LAnd,
    LOr,
    BAnd,
    BOr,
    MinLoc,
    MaxLoc,
    MinMax,
    MinMaxLoc,
}

impl Reducer {
    /// In the order of the codes the Python layer passes (Sum is code 1, the plain reduce).
    pub const ALL: [Reducer; 11] = [
        Reducer::Prod,
        Reducer::Min,
        Reducer::Max,
        Reducer::LAnd,
        Reducer::LOr,
        Reducer::BAnd,
        Reducer::BOr,
        Reducer::MinLoc,
        Reducer::MaxLoc,
        Reducer::MinMax,
        Reducer::MinMaxLoc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reducer::Prod => "Prod",
            Reducer::Min => "Min",
            Reducer::Max => "Max",
            Reducer::LAnd => "LAnd",
            Reducer::LOr => "LOr",
            Reducer::BAnd => "BAnd",
            Reducer::BOr => "BOr",
            Reducer::MinLoc => "MinLoc",
            Reducer::MaxLoc => "MaxLoc",
            Reducer::MinMax => "MinMax",
            Reducer::MinMaxLoc => "MinMaxLoc",
        }
    }

    /// The accumulator's fields, in Kokkos' struct order (none: the accumulator
    /// is the number itself); `true` marks a location (an int64 index).
    pub fn fields(self) -> &'static [(&'static str, bool)] {
        match self {
            Reducer::MinLoc | Reducer::MaxLoc => &[("val", false), ("loc", true)],
            Reducer::MinMax => &[("min_val", false), ("max_val", false)],
            Reducer::MinMaxLoc => &[
                ("min_val", false),
                ("max_val", false),
                ("min_loc", true),
                ("max_loc", true),
            ],
            _ => &[],
        }
    }

    /// The Kokkos reducer type for accumulator dtype `d` (results on the host).
    pub fn kokkos(self, d: DType) -> String {
        let t = d.cpp();
        match self {
            Reducer::MinLoc | Reducer::MaxLoc | Reducer::MinMaxLoc => {
                format!("Kokkos::{}<{t}, int64_t>", self.name())
            }
            _ => format!("Kokkos::{}<{t}>", self.name()),
        }
    }
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

fn int_rank(d: DType) -> u8 {
    d.size() as u8
}

/// NumPy's result dtype for two strong (array) operands.
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    if a == Bool {
        return b;
    }
    if b == Bool {
        return a;
    }
    match (a.is_float(), b.is_float()) {
        (true, true) => {
            if a == F64 || b == F64 {
                F64
            } else {
                F32
            }
        }
        (true, false) | (false, true) => {
            let (f, i) = if a.is_float() { (a, b) } else { (b, a) };
            if f == F64 || i.size() >= 4 {
                F64
            } else {
                F32
            }
        }
        (false, false) => {
            if a.is_signed() == b.is_signed() {
                return if int_rank(a) >= int_rank(b) { a } else { b };
            }
            let (s, u) = if a.is_signed() { (a, b) } else { (b, a) };
            if s.size() > u.size() {
                s
            } else {
                match u.size() {
                    1 => I16,
                    2 => I32,
                    4 => I64,
                    _ => F64,
                }
            }
        }
    }
}

/// A scalar type during expression typing: `weak` marks Python literals and
/// Python-number arguments, which adopt the other operand's dtype (NEP 50).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct STy {
    pub dt: DType,
    pub weak: bool,
}

impl STy {
    pub fn strong(dt: DType) -> Self {
        STy { dt, weak: false }
    }
    pub fn weak(dt: DType) -> Self {
        STy { dt, weak: true }
    }
}

pub fn promote_weak(a: STy, b: STy) -> STy {
    match (a.weak, b.weak) {
        (false, false) | (true, true) => STy {
            dt: promote(a.dt, b.dt),
            weak: a.weak && b.weak,
        },
        (true, false) => STy::strong(absorb(b.dt, a.dt)),
        (false, true) => STy::strong(absorb(a.dt, b.dt)),
    }
}

/// A weak Python number `w` meeting a strong dtype `s`.
fn absorb(s: DType, w: DType) -> DType {
    if w.is_float() && !s.is_float() {
        DType::F64
    } else if w.is_int() && s == DType::Bool {
        DType::I64
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn numpy_promotion_table() {
        assert_eq!(promote(I32, I64), I64);
        assert_eq!(promote(I32, F32), F64);
        assert_eq!(promote(I16, F32), F32);
        assert_eq!(promote(U8, I8), I16);
        assert_eq!(promote(U32, I32), I64);
        assert_eq!(promote(U64, I64), F64);
        assert_eq!(promote(F32, F64), F64);
        assert_eq!(promote(Bool, U16), U16);
    }

    #[test]
    fn weak_literals_take_the_array_dtype() {
        assert_eq!(promote_weak(STy::strong(F32), STy::weak(F64)).dt, F32);
        assert_eq!(promote_weak(STy::strong(I32), STy::weak(I64)).dt, I32);
        assert_eq!(promote_weak(STy::strong(I32), STy::weak(F64)).dt, F64);
    }
}
