//! The element types of Views and kernel numbers.
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
    /// Kokkos::complex<float> (two float32), NumPy's complex64.
    C64,
    /// Kokkos::complex<double>, NumPy's complex128.
    C128,
}

pub const ALL_DTYPES: [DType; 13] = [
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
    DType::C64,
    DType::C128,
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
            DType::C64 => "Kokkos::complex<float>",
            DType::C128 => "Kokkos::complex<double>",
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
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }
    pub fn is_int(self) -> bool {
        !self.is_float() && !self.is_complex() && self != DType::Bool
    }
    /// The real type of a complex dtype's parts (itself for the others).
    pub fn real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
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
            DType::C64 => "Zf",
            DType::C128 => "Zd",
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
            "Zf" | "F" => DType::C64,
            "Zd" | "D" => DType::C128,
            _ => return None,
        })
    }
    pub fn from_name(n: &str) -> Option<DType> {
        ALL_DTYPES.iter().copied().find(|d| d.name() == n)
    }
}
