//! The record reducers (MinLoc, MaxLoc, MinMax, MinMaxLoc) in the NVRTC
//! form's reduction helpers (device_kernels.rs): each field's identity, the
//! join, loads of a partial another block wrote and the write of the result,
//! one 8-byte slot a field in Kokkos' field order (as the Kokkos entry writes it).
//! Functions take the total's reducer and value type (device_kernels::Total);
//! `Reducer::fields` lists the fields.
use crate::types::{DType, Reducer};

/// The value type the functor's accumulator has (the shim's value_type).
pub fn value_type(r: Option<Reducer>, d: DType) -> Option<String> {
    let r = r.filter(|r| !r.fields().is_empty())?;
    Some(format!("{}::value_type", r.kokkos(d)))
}

/// Whether a value field keeps the smaller value (else the larger).
fn keeps_min(r: Reducer, field: &str) -> bool {
    field.starts_with("min") || (field == "val" && r == Reducer::MinLoc)
}

/// `v`'s fields set to Kokkos' identities: a value field the extreme it
/// can only improve on (`(lowest, highest)` of its type), a location the
/// largest index (reduction_identity).
pub fn init(r: Reducer, (lowest, highest): (&str, &str), v: &str) -> String {
    r.fields()
        .iter()
        .map(|&(f, loc)| {
            let x = match (loc, keeps_min(r, f)) {
                (true, _) => "9223372036854775807L",
                (false, true) => highest,
                (false, false) => lowest,
            };
            format!("{v}.{f} = {x};")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `dst` joined with `src`. A tie in value keeps the smaller location, so
/// the result is the first extreme whatever the grouping (NumPy's argmin).
pub fn join(r: Reducer, dst: &str, src: &str) -> String {
    let pick = |val: &str, loc: Option<&str>| {
        let op = if keeps_min(r, val) { "<" } else { ">" };
        match loc {
            Some(l) => format!(
                "if ({src}.{val} {op} {dst}.{val} || ({src}.{val} == {dst}.{val} && {src}.{l} < {dst}.{l})) {{ {dst}.{val} = {src}.{val}; {dst}.{l} = {src}.{l}; }}"
            ),
            None => format!("if ({src}.{val} {op} {dst}.{val}) {dst}.{val} = {src}.{val};"),
        }
    };
    match r {
        Reducer::MinLoc | Reducer::MaxLoc => pick("val", Some("loc")),
        Reducer::MinMax => format!("{} {}", pick("min_val", None), pick("max_val", None)),
        _ => format!(
            "{} {}",
            pick("min_val", Some("min_loc")),
            pick("max_val", Some("max_loc"))
        ),
    }
}

/// `v` read field by field from `p` (a partial another block wrote).
pub fn load(r: Reducer, v: &str, p: &str) -> String {
    r.fields()
        .iter()
        .map(|(f, _)| format!("{v}.{f} = *(const volatile decltype({v}.{f})*)&{p}.{f};"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The result's fields into 8-byte slots from `out`.
pub fn write(r: Reducer, d: DType, src: &str) -> String {
    let d = d.cpp();
    r.fields()
        .iter()
        .enumerate()
        .map(|(k, &(f, loc))| {
            let ty = if loc { "int64_t" } else { d };
            format!("*({ty}*)(out + {}) = {src}.{f};", 8 * k)
        })
        .collect::<Vec<_>>()
        .join(" ")
}
