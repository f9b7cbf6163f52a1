//! The dispatching kernels of the NVRTC form (device.rs): `pk_for` and
//! `pk_reduce`, grid-stride over the flattened index space, each work item
//! handed to the functor with its multi-dimensional index.
use super::device_records as records;
use crate::types::{DType, Reducer};

/// Threads per block of the generated for and reduce kernels, and the most
/// blocks a reduction uses (the runtime sizes its scratch by it).
pub const FOR_BLOCK: u32 = 128;
pub const REDUCE_BLOCK: u32 = 256;
pub const REDUCE_MAX_BLOCKS: u32 = 1024;
/// Blocks of a range reduction each multiprocessor should hold at once: 8 of
/// 256 threads (at most 32 registers a thread) keep all REDUCE_MAX_BLOCKS
/// resident on a 132-multiprocessor GPU. With more registers they run in two
/// waves, the second partial, and a fused chain of maps and a sum took 10-20%
/// longer than the same bytes summed alone (H200). The NVRTC source asks for
/// it through `PK_REDUCE_MIN_BLOCKS` (its first line, device.rs); a kernel
/// that would spill to local memory under it is built without it.
pub const REDUCE_MIN_BLOCKS: u32 = 8;

/// One total of a reduction: its type, and the built-in reducer that joins
/// it (None: a sum).
#[derive(Clone, Debug, PartialEq)]
pub struct Total {
    pub dtype: DType,
    pub reducer: Option<Reducer>,
}

impl Total {
    pub fn sum(dtype: DType) -> Total {
        Total {
            dtype,
            reducer: None,
        }
    }
}

/// `pk_for`: one work item per thread, grid-stride.
pub fn for_kernel(head: &str, item: &dyn Fn(&str, &str) -> String) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__({FOR_BLOCK}) pk_for(const pk_args a) {{\n{head}  for (; t < n; t += step) {}\n}}\n",
        item("t", "")
    )
}

/// The head of both kernels: the functor, the work-item count `n` (the
/// product of the extents), this thread's first item `t` and the stride.
pub fn head(fname: &str, unpack: &str, rank: usize) -> String {
    let mut s = format!("  {fname} f;\n{unpack}");
    for d in 0..rank {
        s.push_str(&format!(
            "  const int64_t pk_e{d} = a.hi[{d}] - a.lo[{d}];\n"
        ));
    }
    let n: Vec<String> = (0..rank).map(|d| format!("pk_e{d}")).collect();
    s.push_str(&format!(
        "  const int64_t n = {};\n  const int64_t step = (int64_t)gridDim.x * blockDim.x;\n  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n",
        n.join(" * ")
    ));
    s
}

/// The statement running flat item `t` (an expression): its index split
/// into one per dimension, the fastest-moving one first when `left_fastest`
/// (consecutive threads then touch consecutive elements of LayoutLeft views)
/// and last otherwise; `acc` (empty for a for) is the accumulator argument.
pub fn item(rank: usize, left_fastest: bool, t: &str, acc: &str) -> String {
    let acc = if acc.is_empty() {
        String::new()
    } else {
        format!(", {acc}")
    };
    if rank == 1 {
        return format!("f(a.lo[0] + {t}{acc});");
    }
    let order: Vec<usize> = if left_fastest {
        (0..rank).collect()
    } else {
        (0..rank).rev().collect()
    };
    let mut s = format!("{{\n    int64_t pk_r = {t};\n");
    for &d in &order[..rank - 1] {
        s.push_str(&format!(
            "    const int64_t pk_i{d} = pk_r % pk_e{d};\n    pk_r /= pk_e{d};\n"
        ));
    }
    s.push_str(&format!(
        "    const int64_t pk_i{} = pk_r;\n",
        order[rank - 1]
    ));
    let idx: Vec<String> = (0..rank).map(|d| format!("a.lo[{d}] + pk_i{d}")).collect();
    s.push_str(&format!("    f({}{acc});\n  }}", idx.join(", ")));
    s
}

/// The type a total is accumulated in: Kokkos 3.4's reducers take bools as
/// int32 (Reducer::kokkos), plain sums keep the accumulator's type.
fn acc_type(t: &Total) -> &'static str {
    match t.reducer {
        Some(_) if t.dtype == DType::Bool => "int32_t",
        _ => t.dtype.cpp(),
    }
}

/// The starting value of a total: Kokkos' `reduction_identity`.
pub(super) fn identity(t: &Total) -> String {
    let ty = acc_type(t);
    let d = if t.reducer.is_some() && t.dtype == DType::Bool {
        DType::I32
    } else {
        t.dtype
    };
    let (lowest, highest) = limits(d);
    let v = match t.reducer {
        None => "0".to_string(),
        Some(Reducer::Prod | Reducer::LAnd) => "1".to_string(),
        Some(Reducer::Min) => highest.to_string(),
        Some(Reducer::Max) => lowest.to_string(),
        Some(Reducer::BAnd) => format!("~({ty})0"),
        _ => "0".to_string(), // LOr, BOr
    };
    format!("({ty})({v})")
}

/// The lowest and highest finite values of `d` as C++ literals.
fn limits(d: DType) -> (&'static str, &'static str) {
    match d {
        DType::I8 => ("-128", "127"),
        DType::I16 => ("-32768", "32767"),
        DType::I32 => ("(-2147483647 - 1)", "2147483647"),
        DType::I64 => ("(-9223372036854775807L - 1)", "9223372036854775807L"),
        DType::U8 => ("0", "255"),
        DType::U16 => ("0", "65535"),
        DType::U32 => ("0", "4294967295u"),
        DType::U64 => ("0", "18446744073709551615ul"),
        DType::F32 => ("-3.40282347e+38f", "3.40282347e+38f"),
        _ => ("-1.7976931348623157e+308", "1.7976931348623157e+308"),
    }
}

/// `dst` joined with `src`, as the Kokkos reducer's `join` does it.
pub(super) fn join(t: &Total, dst: &str, src: &str) -> String {
    match t.reducer {
        None => format!("{dst} += {src};"),
        Some(Reducer::Prod) => format!("{dst} *= {src};"),
        Some(Reducer::Min) => format!("if ({src} < {dst}) {dst} = {src};"),
        Some(Reducer::Max) => format!("if ({src} > {dst}) {dst} = {src};"),
        Some(Reducer::LAnd) => format!("{dst} = {dst} && {src};"),
        Some(Reducer::LOr) => format!("{dst} = {dst} || {src};"),
        Some(Reducer::BAnd) => format!("{dst} = {dst} & {src};"),
        _ => format!("{dst} = {dst} | {src};"), // BOr
    }
}

/// Whether the NVRTC form can hold `t`: real numbers, the scalar reducers,
/// the record ones (MinLoc, ..., device_records.rs) on numbers, and the
/// logical and bitwise ones on integers only (Kokkos has no identity for
/// them on floats); complex numbers in sums and products.
pub fn covers(t: &Total) -> bool {
    let bitwise = matches!(
        t.reducer,
        Some(Reducer::LAnd | Reducer::LOr | Reducer::BAnd | Reducer::BOr)
    );
    let complex_ok = t.reducer.is_none() || t.reducer == Some(Reducer::Prod);
    (!t.dtype.is_complex() || complex_ok)
        && t.reducer
            .is_none_or(|r| r.fields().is_empty() || t.dtype != DType::Bool)
        && !(bitwise && matches!(t.dtype, DType::F32 | DType::F64))
}

/// The value type of a reduction's totals and its helpers: `pk_init` (the
/// identities), `pk_join`, `pk_load` (a partial another block wrote), the
/// block's tree and `pk_finish`, which joins the blocks and writes the totals. `record`: the functor's
/// accumulator is the `pk_vals` record (fused reductions), one field a total.
pub(super) fn reduce_helpers(totals: &[Total], record: bool) -> String {
    let multi = record || totals.len() > 1;
    let vt = if multi {
        "pk_vals".to_string()
    } else {
        records::value_type(totals[0].reducer, totals[0].dtype)
            .unwrap_or_else(|| acc_type(&totals[0]).to_string())
    };
    let field = |r: usize, v: &str| {
        if multi {
            format!("{v}.r{r}")
        } else {
            v.to_string()
        }
    };
    let each = |f: &dyn Fn(usize, &Total) -> String| {
        totals
            .iter()
            .enumerate()
            .map(|(r, t)| f(r, t))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // A record reducer (MinLoc, ...): its fields one by one.
    let record = |t: &Total| t.reducer.filter(|r| !r.fields().is_empty());
    let init = each(&|r, t| match record(t) {
        Some(red) => records::init(red, limits(t.dtype), &field(r, "v")),
        None => format!("{} = {};", field(r, "v"), identity(t)),
    });
    let joins = each(&|r, t| match record(t) {
        Some(red) => records::join(red, &field(r, "x"), &field(r, "y")),
        None => join(t, &field(r, "x"), &field(r, "y")),
    });
    let load = each(&|r, t| {
        let f = field(r, "v");
        let p = if multi {
            format!("p->r{r}")
        } else {
            "(*p)".into()
        };
        match record(t) {
            Some(red) => records::load(red, &f, &p),
            None => format!("{f} = Kokkos::pk_vload(&{p});"),
        }
    });
    // A record total is alone in its reduction (device.rs): its fields take
    // 8-byte slots from the start.
    let write = each(&|r, t| match record(t) {
        Some(red) => records::write(red, t.dtype, &field(r, "s[0]")),
        None => {
            let d = t.dtype.cpp();
            format!("*({d}*)(out + {}) = ({d}){};", 16 * r, field(r, "s[0]"))
        }
    });
    let helpers = format!(
        r#"typedef {vt} pk_vt;
__device__ __forceinline__ pk_vt pk_init() {{ pk_vt v; {init} return v; }}
__device__ __forceinline__ void pk_join(pk_vt& x, const pk_vt& y) {{ {joins} }}
__device__ __forceinline__ pk_vt pk_load(const pk_vt* p) {{ pk_vt v; {load} return v; }}
// A tree over the block's nt values (any count; the same joins on every run).
__device__ __forceinline__ void pk_tree(pk_vt* s, unsigned me, unsigned nt) {{
  unsigned w = 1;
  while (2 * w < nt) w *= 2;
  for (; w > 0; w >>= 1) {{
    if (me < w && me + w < nt) pk_join(s[me], s[me + w]);
    __syncthreads();
  }}
}}
// Thread me of nt gives its value `acc`: the block's total goes to partial,
// and the last block to finish joins the blocks' totals in block order and
// writes them to out.
__device__ __forceinline__ void pk_finish(pk_vt* s, bool* last, const pk_vt& acc, unsigned me, unsigned nt,
                                          pk_vt* partial, unsigned* done, char* out) {{
  s[me] = acc;
  __syncthreads();
  pk_tree(s, me, nt);
  if (me == 0) {{
    partial[blockIdx.x] = s[0];
    __threadfence();
    *last = atomicAdd(done, 1u) == gridDim.x - 1;
  }}
  __syncthreads();
  if (!*last) return;
  __threadfence();
  pk_vt mine = pk_init();
  for (unsigned k = me; k < gridDim.x; k += nt) pk_join(mine, pk_load(partial + k));
  s[me] = mine;
  __syncthreads();
  pk_tree(s, me, nt);
  if (me == 0) {{
    {write}
    *done = 0;
  }}
}}
"#
    );
    helpers
}

/// `pk_reduce`: each thread folds its work items (grid-stride) into
/// registers, four at a time into four partials (four independent loads in
/// flight per thread: one would leave the kernel waiting on memory latency),
/// each block its threads in a tree, and the last block to finish the
/// blocks' partials in block order (`pk_finish`). The joins fall the same way on every run
/// of the same range, so totals are reproducible.
pub fn reduce_kernel(
    totals: &[Total],
    record: bool,
    head: &str,
    item: &dyn Fn(&str, &str) -> String,
) -> String {
    let helpers = reduce_helpers(totals, record);
    let b = REDUCE_BLOCK;
    let items = [
        item("t", "acc"),
        item("t + step", "acc1"),
        item("t + 2 * step", "acc2"),
        item("t + 3 * step", "acc3"),
    ]
    .join("\n    ");
    let tail = item("t", "acc");
    format!(
        r#"{helpers}extern "C" __global__ void __launch_bounds__({b}, PK_REDUCE_MIN_BLOCKS) pk_reduce(const pk_args a, pk_vt* partial, unsigned* done, char* out) {{
  pk_vt* s = Kokkos::pk_shared_values<pk_vt, {b}>();
  __shared__ bool last;
{head}  pk_vt acc = pk_init(), acc1 = pk_init(), acc2 = pk_init(), acc3 = pk_init();
  for (; t + 3 * step < n; t += 4 * step) {{
    {items}
  }}
  for (; t < n; t += step) {tail}
  pk_join(acc, acc1);
  pk_join(acc2, acc3);
  pk_join(acc, acc2);
  pk_finish(s, &last, acc, threadIdx.x, blockDim.x, partial, done, out);
}}
"#
    )
}

/// The head of the team kernels: the functor, the league size, the level-0
/// scratch, dynamic shared memory of hi[3] bytes per team plus hi[4] per
/// thread (the launch sizes it; device_entry.rs), and the block's slice of
/// the level-1 scratch in global memory (hi[5] and hi[6]; the launch puts
/// the buffer's address in lo[7], which a TeamPolicy does not use).
pub fn team_head(fname: &str, unpack: &str) -> String {
    format!(
        "  {fname} f;\n{unpack}  extern __shared__ double pk_shmem[];\n  const int64_t pk_league = a.hi[0];\n  const int64_t pk_shmem_bytes = a.hi[3] + a.hi[4] * (int64_t)blockDim.y;\n  const int64_t pk_l1_bytes = (a.hi[5] + a.hi[6] * (int64_t)blockDim.y + 15) / 16 * 16;\n  char* const pk_l1 = (char*)a.lo[7] + blockIdx.x * pk_l1_bytes;\n"
    )
}

/// Block b runs league ranks b, b + gridDim.x, ...; every thread of the block
/// goes round the same number of times, so the barrier after each (the next
/// rank reuses the scratch) is reached by all.
fn team_loop(call: &str) -> String {
    format!(
        "  for (int64_t pk_lr = blockIdx.x; pk_lr < pk_league; pk_lr += gridDim.x) {{\n    const Kokkos::pk_member m{{pk_lr, pk_league, {{(char*)pk_shmem, pk_shmem_bytes, 0}}, {{pk_l1, pk_l1_bytes, 0}}}};\n    {call}\n    __syncthreads();\n  }}\n"
    )
}

/// `pk_for` of a TeamPolicy: blockDim (vector length, team size).
pub fn team_for_kernel(head: &str) -> String {
    format!(
        "extern \"C\" __global__ void pk_for(const pk_args a) {{\n{head}{}}}\n",
        team_loop("f(m);")
    )
}

/// `pk_reduce` of a TeamPolicy: each team rank folds its calls into a value
/// of its own. Its vector lanes run the same code on the same value (Kokkos
/// keeps one value per team rank, shared by the lanes), so lane 0's counts
/// once. The blocks' values are joined as in pk_reduce (`pk_finish`).
pub fn team_reduce_kernel(totals: &[Total], head: &str) -> String {
    let helpers = reduce_helpers(totals, false);
    let walk = team_loop("f(m, acc);");
    format!(
        r#"{helpers}extern "C" __global__ void pk_reduce(const pk_args a, pk_vt* partial, unsigned* done, char* out) {{
  pk_vt* s = Kokkos::pk_shared_values<pk_vt, 1024>();
  __shared__ bool last;
{head}  pk_vt acc = pk_init();
{walk}  const unsigned me = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
  pk_finish(s, &last, threadIdx.x == 0 ? acc : pk_init(), me, nt, partial, done, out);
}}
"#
    )
}
