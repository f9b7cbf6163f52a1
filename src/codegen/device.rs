//! The NVRTC form of a CUDA kernel: the same functor the Kokkos translation
//! unit holds, compiled without Kokkos' headers (device_shim.hpp stands in
//! for the names it uses) and dispatched by kernels of our own. nvcc spends
//! about 6 s per kernel parsing Kokkos; NVRTC compiles this form in a
//! fraction of a second. Only shapes the runtime can dispatch itself take
//! it (device_kernels.rs): fors over ranges and multi-dimensional ranges, and
//! reductions whose bodies only add to their accumulators (sums) or that go
//! through a scalar built-in reducer (Prod, Min, Max, logical and bitwise),
//! 1-D scans whose bodies only add to their updates (device_scan.rs),
//! atomics included, and team kernels (TeamPolicy) with nested fors and
//! sums over team, vector and team-vector ranges, single and level-0 and -1
//! scratch, printf, complex numbers (device_complex.hpp) and bounds checks
//! (device_bounds.hpp) included; with no nested scans.
//! Anything else keeps the Kokkos path.
use super::device_kernels::{covers, for_kernel, head, item, reduce_kernel};
use super::device_kernels::{team_for_kernel, team_head, team_reduce_kernel};
pub use super::device_kernels::{
    Total, FOR_BLOCK, REDUCE_BLOCK, REDUCE_MAX_BLOCKS, REDUCE_MIN_BLOCKS,
};
use super::device_names::shim_covers;
pub use super::device_scan::{scan_blocks, SCAN_BLOCK, SCAN_MAX_BLOCKS};

/// The shim and the portable prelude: everything an NVRTC kernel includes.
pub const SHIM: &str = concat!(
    include_str!("device_shim.hpp"),
    include_str!("device_complex.hpp"),
    include_str!("device_atomics.hpp"),
    include_str!("device_teams.hpp"),
    include_str!("portable.hpp"),
    include_str!("special.hpp")
);

/// PK_BOUNDS_CHECK=1: `pk::at` and the record the runtime reads back.
pub const BOUNDS: &str = include_str!("device_bounds.hpp");
/// Integer // and % by a divisor that may be zero (the `pk_zdiv` record).
pub const CHECKED: &str = include_str!("device_checked.hpp");

/// Bounds slots of `pk_args` (Kokkos' MDRange goes up to rank 6; a 1-D
/// run of repeated launches passes its count in `hi[1]`).
pub const MAX_RANK: usize = 8;
/// Kernel parameters beyond this many bytes are not portable to every
/// driver: such kernels keep the Kokkos path.
const MAX_PARAM_BYTES: usize = 4000;

/// How the runtime dispatches an NVRTC kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceKind {
    /// `pk_for`: one work item per thread, grid-stride.
    For,
    /// `pk_reduce`: these totals, each in a 16-byte result slot.
    Reduce(Vec<Total>),
    /// `pk_scan`: a 1-D scan whose body only adds to its update; the total
    /// in the result slot.
    Scan(Total),
}

impl DeviceKind {
    /// The kernel's name in its module.
    pub fn entry(&self) -> &'static str {
        match self {
            DeviceKind::For => "pk_for",
            DeviceKind::Reduce(_) => "pk_reduce",
            DeviceKind::Scan(_) => "pk_scan",
        }
    }
}

/// The pieces of a generated Kokkos translation unit the NVRTC form reuses.
#[derive(Clone, Debug)]
pub struct DeviceParts {
    /// `namespace { ... }`: helpers, classtypes and the functor.
    pub functor: String,
    pub fname: String,
    /// The entry's member assignments from `views[k]`, `scalars[j]`, `hi[1]`.
    pub unpack: String,
    pub views: usize,
    pub scalars: usize,
    pub kind: DeviceKind,
    /// Whether the functor's accumulator is the `pk_vals` record of a fused
    /// reduction (one field per total) rather than the total itself.
    pub record: bool,
    /// Dimensions of the range (0: a TeamPolicy; 1: a RangePolicy; more: an MDRange).
    pub rank: usize,
    /// Whether the first index moves fastest between neighbouring threads
    /// (the first view is LayoutLeft); otherwise the last one does.
    pub left_fastest: bool,
    /// Views reached through `pk::at` (PK_BOUNDS_CHECK=1).
    pub bounds_check: bool,
    /// Some integer // or % may divide by zero (device_checked.hpp).
    pub zero_div: bool,
}

/// Bytes of the `pk_args` kernel parameter: views, scalars, lo[8], hi[8].
pub fn args_bytes(views: usize, scalars: usize) -> usize {
    views.max(1) * 136 + scalars.max(1) * 16 + 16 * MAX_RANK
}

/// The NVRTC translation unit of `p`, or None when the functor uses
/// something the shim lacks (it then keeps the Kokkos path).
pub fn source(p: &DeviceParts) -> Option<String> {
    if !shim_covers(&p.functor)
        || args_bytes(p.views, p.scalars) > MAX_PARAM_BYTES
        || p.rank > MAX_RANK
    {
        return None;
    }
    match &p.kind {
        DeviceKind::Reduce(t) if t.is_empty() || t.len() > 8 || !t.iter().all(covers) => {
            return None
        }
        // A record total (MinLoc, ...) only alone, over a range: its fields
        // fill the result slots, and a team's shared buffer would not hold it.
        DeviceKind::Reduce(t)
            if t.iter()
                .any(|x| x.reducer.is_some_and(|r| !r.fields().is_empty()))
                && (t.len() > 1 || p.record || p.rank == 0) =>
        {
            return None
        }
        DeviceKind::Scan(t)
            if p.rank != 1
                || p.record
                || t.reducer.is_some()
                || t.dtype.is_complex()
                || !covers(t) =>
        {
            return None
        }
        _ => {}
    }
    let mut s = occupancy_line(REDUCE_MIN_BLOCKS);
    s.push_str(SHIM);
    if p.bounds_check {
        s.push_str(BOUNDS);
    }
    if p.zero_div {
        s.push_str(CHECKED);
    }
    s.push_str(&p.functor);
    s.push_str(&format!(
        "\nstruct pk_args {{\n  pk_view_arg views[{}];\n  pk_scalar_arg scalars[{}];\n  int64_t lo[{MAX_RANK}], hi[{MAX_RANK}];\n}};\n",
        p.views.max(1),
        p.scalars.max(1)
    ));
    let unpack = from_params(&p.unpack);
    if p.rank == 0 {
        // A TeamPolicy: a team reduction joins one total (teams never fuse).
        let head = team_head(&p.fname, &unpack);
        match &p.kind {
            DeviceKind::For => s.push_str(&team_for_kernel(&head)),
            DeviceKind::Reduce(t) if t.len() == 1 && !p.record => {
                s.push_str(&team_reduce_kernel(t, &head))
            }
            DeviceKind::Reduce(_) | DeviceKind::Scan(_) => return None,
        }
        return Some(s);
    }
    let head = head(&p.fname, &unpack, p.rank);
    let item = |t: &str, acc: &str| item(p.rank, p.left_fastest, t, acc);
    match &p.kind {
        DeviceKind::For => s.push_str(&for_kernel(&head, &item)),
        DeviceKind::Reduce(totals) => s.push_str(&reduce_kernel(totals, p.record, &head, &item)),
        DeviceKind::Scan(total) => s.push_str(&super::device_scan::scan_kernel(total, &head)),
    }
    Some(s)
}

/// The first line of every NVRTC source: how many blocks of a range
/// reduction each multiprocessor should hold (`__launch_bounds__`).
pub fn occupancy_line(blocks: u32) -> String {
    format!("#define PK_REDUCE_MIN_BLOCKS {blocks}\n")
}

/// The entry's unpacking lines read the kernel parameter `a` instead of
/// the entry's pointer arguments.
fn from_params(unpack: &str) -> String {
    let mut out = String::with_capacity(unpack.len() + 64);
    let mut prev: Option<char> = None;
    let mut rest = unpack;
    while let Some(c) = rest.chars().next() {
        let starts_word = !prev.is_some_and(|p| p.is_ascii_alphanumeric() || p == '_' || p == '.');
        if starts_word {
            if let Some(w) = ["views[", "scalars[", "hi[", "lo["]
                .iter()
                .find(|w| rest.starts_with(*w))
            {
                out.push_str("a.");
                out.push_str(w);
                rest = &rest[w.len()..];
                prev = Some('[');
                continue;
            }
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{DType, Reducer};

    #[test]
    fn unpacking_reads_the_kernel_parameter() {
        let u = "    f.x = decltype(f.x)((double*)views[0].data, views[0].extent[0]);\n    f.hi = (double)scalars[1].d;\n    f.pk_repeat = hi[1];\n";
        let got = from_params(u);
        assert!(got.contains("(double*)a.views[0].data, a.views[0].extent[0]"));
        assert!(got.contains("f.hi = (double)a.scalars[1].d"));
        assert!(got.contains("f.pk_repeat = a.hi[1]"));
        assert!(!got.contains("a.a."));
    }

    fn parts(kind: DeviceKind, rank: usize, left_fastest: bool) -> DeviceParts {
        DeviceParts {
            functor: "namespace {\nstruct pk_vals { double r0; float r1; };\nstruct F {};\n}\n"
                .into(),
            fname: "F".into(),
            unpack: String::new(),
            views: 0,
            scalars: 0,
            kind,
            record: false,
            rank,
            left_fastest,
            bounds_check: false,
            zero_div: false,
        }
    }

    #[test]
    fn sums_of_several_totals_write_16_byte_slots() {
        let p = parts(
            DeviceKind::Reduce(vec![Total::sum(DType::F64), Total::sum(DType::F32)]),
            1,
            false,
        );
        let s = source(&p).unwrap();
        assert!(s.contains("typedef pk_vals pk_vt;"));
        assert!(s.contains(
            "*(double*)(out + 0) = (double)s[0].r0; *(float*)(out + 16) = (float)s[0].r1;"
        ));
        // Every block of a range reduction fits on the GPU at once (see
        // REDUCE_MIN_BLOCKS): the hold is the source's first line.
        assert!(s.starts_with("#define PK_REDUCE_MIN_BLOCKS 8\n"));
        assert!(s.contains("__launch_bounds__(256, PK_REDUCE_MIN_BLOCKS) pk_reduce("));
        // A complex total fills its slot; a complex scan keeps the Kokkos path.
        let complex = DeviceKind::Reduce(vec![Total::sum(DType::C128)]);
        let s = source(&parts(complex, 1, false)).unwrap();
        assert!(s.contains("*(Kokkos::complex<double>*)(out + 0) = (Kokkos::complex<double>)s[0];"));
        let scan = DeviceKind::Scan(Total::sum(DType::C128));
        assert!(source(&parts(scan, 1, false)).is_none());
        let min = DeviceKind::Reduce(vec![Total {
            dtype: DType::C64,
            reducer: Some(Reducer::Min),
        }]);
        assert!(source(&parts(min, 1, false)).is_none());
    }

    #[test]
    fn reducers_start_from_kokkos_identities_and_join_as_kokkos_does() {
        let one = |reducer, dtype| {
            let k = DeviceKind::Reduce(vec![Total {
                dtype,
                reducer: Some(reducer),
            }]);
            source(&parts(k, 1, false))
        };
        let min = one(Reducer::Min, DType::F64).unwrap();
        assert!(min.contains("v = (double)(1.7976931348623157e+308);"));
        assert!(min.contains("if (y < x) x = y;"));
        let max = one(Reducer::Max, DType::I32).unwrap();
        assert!(max.contains("v = (int32_t)((-2147483647 - 1));"));
        let band = one(Reducer::BAnd, DType::U8).unwrap();
        assert!(band.contains("v = (uint8_t)(~(uint8_t)0);"));
        // Kokkos 3.4 reduces bools as int32 and the entry writes a bool.
        let land = one(Reducer::LAnd, DType::Bool).unwrap();
        assert!(
            land.contains("typedef int32_t pk_vt;")
                && land.contains("*(bool*)(out + 0) = (bool)s[0];")
        );
        // Kokkos has no float identity for bitwise/logical joins.
        assert!(one(Reducer::BOr, DType::F64).is_none());
        // A record reducer: its value type, its fields' identities, ties
        // keeping the first index, fields in 8-byte slots; alone over a range.
        let loc = one(Reducer::MinLoc, DType::F64).unwrap();
        assert!(loc.contains("typedef Kokkos::MinLoc<double, int64_t>::value_type pk_vt;"));
        assert!(loc.contains("v.val = 1.7976931348623157e+308; v.loc = 9223372036854775807L;"));
        assert!(loc.contains("if (y.val < x.val || (y.val == x.val && y.loc < x.loc))"));
        assert!(loc.contains("*(double*)(out + 0) = s[0].val; *(int64_t*)(out + 8) = s[0].loc;"));
        let mm = one(Reducer::MinMax, DType::I32).unwrap();
        assert!(mm.contains("v.min_val = 2147483647; v.max_val = (-2147483647 - 1);"));
        let rec = Total {
            dtype: DType::F64,
            reducer: Some(Reducer::MaxLoc),
        };
        let team = DeviceKind::Reduce(vec![rec.clone()]);
        assert!(source(&parts(team, 0, false)).is_none());
        let fused = DeviceKind::Reduce(vec![rec, Total::sum(DType::F64)]);
        assert!(source(&parts(fused, 1, false)).is_none());
        assert!(one(Reducer::MinLoc, DType::Bool).is_none());
    }

    #[test]
    fn scans_are_one_kernel_over_one_dimension() {
        let scan = |rank| {
            source(&parts(
                DeviceKind::Scan(Total::sum(DType::I64)),
                rank,
                false,
            ))
        };
        let s = scan(1).unwrap();
        assert!(s.contains(
            "pk_scan(const pk_args a, pk_vt* agg, unsigned* flag, unsigned* ctl, char* out)"
        ));
        assert!(s.contains("f(a.lo[0] + i, u, true);"));
        assert!(s.contains("*(int64_t*)out = (int64_t)carry;"));
        assert!(scan(2).is_none() && scan(0).is_none());
        let complex = DeviceKind::Scan(Total::sum(DType::C128));
        assert!(source(&parts(complex, 1, false)).is_none());
    }

    #[test]
    fn multidimensional_items_split_their_index_by_the_layout() {
        let right = source(&parts(DeviceKind::For, 3, false)).unwrap();
        assert!(right.contains("const int64_t n = pk_e0 * pk_e1 * pk_e2;"));
        assert!(right.contains("const int64_t pk_i2 = pk_r % pk_e2;"));
        assert!(right.contains("f(a.lo[0] + pk_i0, a.lo[1] + pk_i1, a.lo[2] + pk_i2);"));
        let left = source(&parts(DeviceKind::For, 2, true)).unwrap();
        assert!(left.contains("const int64_t pk_i0 = pk_r % pk_e0;"));
        assert!(left.contains("const int64_t pk_i1 = pk_r;"));
        assert!(source(&parts(DeviceKind::For, 9, false)).is_none());
    }
}
