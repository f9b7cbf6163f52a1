//! Which functors the NVRTC form can take: every qualified name they use is
//! one the device shim (device_shim.hpp and the headers after it) defines.
/// Names the shim and the portable prelude define, after `Kokkos::` and `pk::`.
const KOKKOS_NAMES: &[&str] = &[
    "View",
    "LayoutRight",
    "LayoutLeft",
    "LayoutStride",
    "CudaSpace",
    "MemoryTraits",
    "Unmanaged",
    "Prod",
    "Min",
    "Max",
    "LAnd",
    "LOr",
    "BAnd",
    "BOr",
    "MinLoc",
    "MaxLoc",
    "MinMax",
    "MinMaxLoc",
    "atomic_fetch_add",
    "atomic_fetch_sub",
    "atomic_fetch_mul",
    "atomic_fetch_div",
    "atomic_fetch_and",
    "atomic_fetch_or",
    "atomic_fetch_xor",
    "atomic_fetch_lshift",
    "atomic_fetch_rshift",
    "atomic_fetch_max",
    "atomic_fetch_min",
    "atomic_increment",
    "atomic_decrement",
    "atomic_exchange",
    "atomic_compare_exchange",
    "Cuda",
    "TeamPolicy",
    "TeamThreadRange",
    "ThreadVectorRange",
    "TeamVectorRange",
    "parallel_for",
    "parallel_reduce",
    "single",
    "PerTeam",
    "PerThread",
    // Complex numbers (device_complex.hpp).
    "complex",
    "real",
    "imag",
    "abs",
    "conj",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "pow",
];
const PK_NAMES: &[&str] = &[
    "km",
    "lower_bound",
    "upper_bound",
    "floordiv",
    "mod",
    "floordiv_checked",
    "mod_checked",
    "floordiv_or_zero",
    "mod_or_zero",
    "powi",
    "ipow",
    "round",
    "round_away",
    "copysign",
    "degrees",
    "radians",
    "rsqrt",
    "cyl_bessel_j0",
    "cyl_bessel_j1",
    "pmin",
    "pmax",
    "pabs",
    "lval",
    "at",
];
/// Words that need Kokkos or the C++ library: such a functor keeps nvcc, as
/// does scratch of a level not spelled 0 or 1. (`printf` is CUDA's own in
/// device code, NVRTC's included.)
const FOREIGN: &[&str] = &["__shared__"];

/// Whether every qualified name in `text` is one the shim provides.
pub(super) fn shim_covers(text: &str) -> bool {
    if FOREIGN.iter().any(|w| text.contains(w)) {
        return false;
    }
    let names_after = |prefix: &str, allowed: &[&str]| {
        text.match_indices(prefix).all(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            allowed.contains(&&rest[..end])
        })
    };
    let levels = text.match_indices("team_scratch(").all(|(at, w)| {
        let rest = &text[at + w.len()..];
        rest.starts_with("0)") || rest.starts_with("1)")
    });
    levels
        && names_after("Kokkos::", KOKKOS_NAMES)
        && names_after("pk::", PK_NAMES)
        && names_after("std::", &["decay_t"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_the_shim_defines_pass() {
        assert!(shim_covers("Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> x; pk::km::sqrt(y); pk::floordiv(a, b); printf(\"%d\", i);"));
        assert!(shim_covers(
            "Kokkos::complex<float> z = Kokkos::sqrt(w); Kokkos::atomic_fetch_add(&v(0), z);"
        ));
        // complex128: a lock per address (device_atomics.hpp).
        assert!(shim_covers(
            "Kokkos::complex<double> z; Kokkos::atomic_fetch_add(&v(0), z);"
        ));
        for bad in [
            "Kokkos::subview(v, 0, Kokkos::ALL)",
            "pk::Rng r(1, 2);",
            "Kokkos::atomic_add(&x(0), 1.0);",
            "Kokkos::atomic_fetch_nand(&x(0), 1);",
            "Kokkos::polar(r, t)",
            "std::numeric_limits<double>::max()",
        ] {
            assert!(!shim_covers(bad), "{bad}");
        }
    }
}
