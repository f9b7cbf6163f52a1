//! Kokkos' built-in reducers (`parallel_reduce(..., reducer=pk.Max)`).
use super::dtype::DType;
use serde::Serialize;

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

    /// Whether it keeps an index (MinLoc, ...): ties keep the first one only
    /// in Kokkos' own order of joins.
    pub fn has_loc(self) -> bool {
        self.fields().iter().any(|&(_, loc)| loc)
    }

    /// The Kokkos reducer type for accumulator dtype `d` (results on the host).
    pub fn kokkos(self, d: DType) -> String {
        // Kokkos 3.4's CUDA reductions get one-byte values wrong (LAnd/LOr
        // of bools gave true regardless): bools reduce as int32 0/1.
        let t = if d == DType::Bool { "int32_t" } else { d.cpp() };
        match self {
            Reducer::MinLoc | Reducer::MaxLoc | Reducer::MinMaxLoc => {
                format!("Kokkos::{}<{t}, int64_t>", self.name())
            }
            _ => format!("Kokkos::{}<{t}>", self.name()),
        }
    }
}
