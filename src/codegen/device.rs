//! The NVRTC form of a CUDA kernel: the same functor the Kokkos translation
//! unit holds, compiled without Kokkos' headers (device_shim.hpp stands in
//! for the names it uses) and dispatched by kernels of our own. nvcc spends
//! about 6 s per kernel parsing Kokkos; NVRTC compiles this form in a
//! fraction of a second. Only shapes the runtime can dispatch itself take
//! it: a 1-D for, and a 1-D reduction whose bodies only add to their
//! accumulators (sums), with no bounds checks, atomics, printf or complex
//! numbers. Anything else keeps the Kokkos path.
use crate::types::DType;

/// The shim and the portable prelude: everything an NVRTC kernel includes.
pub const SHIM: &str = concat!(
    include_str!("device_shim.hpp"),
    include_str!("portable.hpp")
);

/// Threads per block of the generated for and sum kernels, and the most
/// blocks a sum uses (the runtime sizes its scratch by it).
pub const FOR_BLOCK: u32 = 128;
pub const SUM_BLOCK: u32 = 256;
pub const SUM_MAX_BLOCKS: u32 = 1024;
/// Kernel parameters beyond this many bytes are not portable to every
/// driver: such kernels keep the Kokkos path.
const MAX_PARAM_BYTES: usize = 4000;

/// How the runtime dispatches an NVRTC kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceKind {
    /// `pk_for`: one work item per thread, grid-stride.
    For,
    /// `pk_sum`: the totals of these dtypes, each in a 16-byte result slot.
    Sum(Vec<DType>),
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
}

/// Bytes of the `pk_args` kernel parameter: views, scalars, lo[2], hi[2].
pub fn args_bytes(views: usize, scalars: usize) -> usize {
    views.max(1) * 136 + scalars.max(1) * 16 + 32
}

/// Names the shim and the portable prelude define, after `Kokkos::` and `pk::`.
const KOKKOS_NAMES: &[&str] = &[
    "View",
    "LayoutRight",
    "LayoutLeft",
    "LayoutStride",
    "CudaSpace",
    "MemoryTraits",
    "Unmanaged",
];
const PK_NAMES: &[&str] = &[
    "km",
    "floordiv",
    "mod",
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
];
/// Words that need Kokkos or the C++ library: such a functor keeps nvcc.
const FOREIGN: &[&str] = &["std::", "printf", "atomic", "Kokkos::complex", "__shared__"];

/// Whether every qualified name in `text` is one the shim provides.
fn shim_covers(text: &str) -> bool {
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
    names_after("Kokkos::", KOKKOS_NAMES) && names_after("pk::", PK_NAMES)
}

/// The NVRTC translation unit of `p`, or None when the functor uses
/// something the shim lacks (it then keeps the Kokkos path).
pub fn source(p: &DeviceParts) -> Option<String> {
    if !shim_covers(&p.functor) || args_bytes(p.views, p.scalars) > MAX_PARAM_BYTES {
        return None;
    }
    if let DeviceKind::Sum(d) = &p.kind {
        if d.is_empty() || d.len() > 8 || d.iter().any(|t| t.is_complex()) {
            return None;
        }
    }
    let mut s = String::from(SHIM);
    s.push_str(&p.functor);
    s.push_str(&format!(
        "\nstruct pk_args {{\n  pk_view_arg views[{}];\n  pk_scalar_arg scalars[{}];\n  int64_t lo[2], hi[2];\n}};\n",
        p.views.max(1),
        p.scalars.max(1)
    ));
    let unpack = from_params(&p.unpack);
    let head = format!("  {} f;\n{unpack}  const int64_t n = a.hi[0] - a.lo[0];\n  const int64_t step = (int64_t)gridDim.x * blockDim.x;\n  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n", p.fname);
    match &p.kind {
        DeviceKind::For => s.push_str(&format!(
            "extern \"C\" __global__ void __launch_bounds__({FOR_BLOCK}) pk_for(const pk_args a) {{\n{head}  for (; t < n; t += step) f(a.lo[0] + t);\n}}\n"
        )),
        DeviceKind::Sum(dts) => s.push_str(&sum_kernel(dts, &head)),
    }
    Some(s)
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

/// `pk_sum`: each thread adds its work items (grid-stride) into registers,
/// four at a time into four partial sums (four independent loads in flight
/// per thread: one would leave the kernel waiting on memory latency), each
/// block its threads in a tree, and the last block to finish the
/// blocks' partials in block order. The additions fall the same way on
/// every run of the same range, so totals are reproducible.
fn sum_kernel(dts: &[DType], head: &str) -> String {
    let multi = dts.len() > 1;
    let vt = if multi {
        "pk_vals".to_string()
    } else {
        dts[0].cpp().to_string()
    };
    let fields: Vec<String> = (0..dts.len()).map(|r| format!("r{r}")).collect();
    let (join, load, write) = if multi {
        (
            fields
                .iter()
                .map(|f| format!("x.{f} += y.{f};"))
                .collect::<Vec<_>>()
                .join(" "),
            fields
                .iter()
                .map(|f| format!("v.{f} = *(const volatile decltype(v.{f})*)&p->{f};"))
                .collect::<Vec<_>>()
                .join(" "),
            dts.iter()
                .enumerate()
                .map(|(r, d)| format!("*({}*)(out + {}) = s[0].r{r};", d.cpp(), 16 * r))
                .collect::<Vec<_>>()
                .join(" "),
        )
    } else {
        (
            "x += y;".to_string(),
            "v = *(const volatile pk_vt*)p;".to_string(),
            "*(pk_vt*)out = s[0];".to_string(),
        )
    };
    let b = SUM_BLOCK;
    format!(
        r#"typedef {vt} pk_vt;
__device__ __forceinline__ void pk_join(pk_vt& x, const pk_vt& y) {{ {join} }}
__device__ __forceinline__ pk_vt pk_load(const pk_vt* p) {{ pk_vt v; {load} return v; }}
__device__ __forceinline__ void pk_tree(pk_vt* s) {{
  for (unsigned w = {b} / 2; w > 0; w >>= 1) {{
    if (threadIdx.x < w) pk_join(s[threadIdx.x], s[threadIdx.x + w]);
    __syncthreads();
  }}
}}
extern "C" __global__ void __launch_bounds__({b}) pk_sum(const pk_args a, pk_vt* partial, unsigned* done, char* out) {{
  __shared__ pk_vt s[{b}];
  __shared__ bool last;
{head}  pk_vt acc = pk_vt(), acc1 = pk_vt(), acc2 = pk_vt(), acc3 = pk_vt();
  for (; t + 3 * step < n; t += 4 * step) {{
    f(a.lo[0] + t, acc);
    f(a.lo[0] + t + step, acc1);
    f(a.lo[0] + t + 2 * step, acc2);
    f(a.lo[0] + t + 3 * step, acc3);
  }}
  for (; t < n; t += step) f(a.lo[0] + t, acc);
  pk_join(acc, acc1);
  pk_join(acc2, acc3);
  pk_join(acc, acc2);
  s[threadIdx.x] = acc;
  __syncthreads();
  pk_tree(s);
  if (threadIdx.x == 0) {{
    partial[blockIdx.x] = s[0];
    __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }}
  __syncthreads();
  if (!last) return;
  __threadfence();
  pk_vt mine = pk_vt();
  for (unsigned k = threadIdx.x; k < gridDim.x; k += {b}) pk_join(mine, pk_load(partial + k));
  s[threadIdx.x] = mine;
  __syncthreads();
  pk_tree(s);
  if (threadIdx.x == 0) {{
    {write}
    *done = 0;
  }}
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacking_reads_the_kernel_parameter() {
        let u = "    f.x = decltype(f.x)((double*)views[0].data, views[0].extent[0]);\n    f.hi = (double)scalars[1].d;\n    f.pk_repeat = hi[1];\n";
        let got = from_params(u);
        assert!(got.contains("(double*)a.views[0].data, a.views[0].extent[0]"));
        assert!(got.contains("f.hi = (double)a.scalars[1].d"));
        assert!(got.contains("f.pk_repeat = a.hi[1]"));
        assert!(!got.contains("a.a."));
    }

    #[test]
    fn only_names_the_shim_defines_pass() {
        assert!(shim_covers("Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> x; pk::km::sqrt(y); pk::floordiv(a, b);"));
        for bad in [
            "Kokkos::subview(v, 0, Kokkos::ALL)",
            "pk::Rng r(1, 2);",
            "pk::at(v, \"w\", \"v\", i)",
            "printf(\"%d\", i);",
            "Kokkos::atomic_add(&x(0), 1.0);",
            "Kokkos::complex<double> z;",
            "std::numeric_limits<double>::max()",
        ] {
            assert!(!shim_covers(bad), "{bad}");
        }
    }

    #[test]
    fn sums_of_several_totals_write_16_byte_slots() {
        let p = DeviceParts {
            functor: "namespace {\nstruct pk_vals { double r0; float r1; };\nstruct F {};\n}\n"
                .into(),
            fname: "F".into(),
            unpack: String::new(),
            views: 0,
            scalars: 0,
            kind: DeviceKind::Sum(vec![DType::F64, DType::F32]),
        };
        let s = source(&p).unwrap();
        assert!(s.contains("typedef pk_vals pk_vt;"));
        assert!(s.contains("*(double*)(out + 0) = s[0].r0; *(float*)(out + 16) = s[0].r1;"));
        let complex = DeviceParts {
            kind: DeviceKind::Sum(vec![DType::C128]),
            ..p
        };
        assert!(source(&complex).is_none());
    }
}
