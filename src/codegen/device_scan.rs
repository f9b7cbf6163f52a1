//! `pk_scan`: the NVRTC form of a 1-D `parallel_scan` (device.rs), one
//! kernel instead of Kokkos' three. The range is cut into one segment per
//! block; a block takes the next segment in the order blocks start (a ticket)
//! so it only ever waits for segments whose blocks are already running.
//! Each block adds up its segment and publishes the total; joins the totals
//! of the segments before it (in segment order, the same on every run); then
//! walks its segment in rounds of one item per thread: each item's part from
//! zero, an inclusive scan of the round in shared memory, and the final call
//! of each item from its exclusive prefix. The last segment's running value
//! is the scan's total; the last block to finish clears the tickets and flags
//! for the next launch.
use super::device_kernels::{reduce_helpers, Total};

/// Threads per block of the scan kernel; the most segments (blocks) one
/// launch cuts its range into, and the fewest rounds a segment is worth.
pub const SCAN_BLOCK: u32 = 256;
pub const SCAN_MAX_BLOCKS: u32 = 1024;
const SCAN_MIN_ROUNDS: u64 = 4;

/// Blocks (segments) of a scan over `n` items.
pub fn scan_blocks(n: u64) -> u64 {
    n.div_ceil(SCAN_BLOCK as u64 * SCAN_MIN_ROUNDS)
        .clamp(1, SCAN_MAX_BLOCKS as u64)
}

/// The kernel over the functor of `head` (device_kernels::head), whose call
/// is `f(i, update, final)`. Scratch: `agg` one total per segment, `flag` one
/// word per segment (set once its total is there), `ctl` the ticket and
/// finished-block counters, `out` the total.
pub fn scan_kernel(total: &Total, head: &str) -> String {
    let helpers = reduce_helpers(std::slice::from_ref(total), false);
    let b = SCAN_BLOCK;
    let d = total.dtype.cpp();
    format!(
        r#"{helpers}extern "C" __global__ void __launch_bounds__({b}) pk_scan(const pk_args a, pk_vt* agg, unsigned* flag, unsigned* ctl, char* out) {{
  __shared__ pk_vt s[{b}];
  __shared__ unsigned seg_s;
  __shared__ bool last;
{head}  const unsigned me = threadIdx.x, nt = blockDim.x;
  (void)t; (void)step;
  if (me == 0) seg_s = atomicAdd(ctl, 1u);
  __syncthreads();
  const unsigned seg = seg_s;
  const int64_t per = (n + gridDim.x - 1) / gridDim.x;
  const int64_t lo = (int64_t)seg * per < n ? (int64_t)seg * per : n;
  const int64_t hi = lo + per < n ? lo + per : n;
  pk_vt acc = pk_init();
  for (int64_t i = lo + me; i < hi; i += nt) f(a.lo[0] + i, acc, false);
  s[me] = acc;
  __syncthreads();
  pk_tree(s, me, nt);
  if (me == 0) {{
    agg[seg] = s[0];
    __threadfence();
    atomicExch(flag + seg, 1u);
  }}
  pk_vt before = pk_init();
  for (unsigned k = me; k < seg; k += nt) {{
    while (atomicAdd(flag + k, 0u) == 0u) {{}}
    __threadfence();
    pk_join(before, pk_load(agg + k));
  }}
  __syncthreads();
  s[me] = before;
  __syncthreads();
  pk_tree(s, me, nt);
  pk_vt carry = s[0];
  __syncthreads();
  for (int64_t base = lo; base < hi; base += nt) {{
    const int64_t i = base + me;
    pk_vt v = pk_init();
    if (i < hi) f(a.lo[0] + i, v, false);
    s[me] = v;
    __syncthreads();
    for (unsigned w = 1; w < nt; w <<= 1) {{
      pk_vt x = s[me];
      if (me >= w) {{ pk_vt y = s[me - w]; pk_join(y, x); x = y; }}
      __syncthreads();
      s[me] = x;
      __syncthreads();
    }}
    pk_vt u = carry;
    if (me > 0) pk_join(u, s[me - 1]);
    if (i < hi) f(a.lo[0] + i, u, true);
    pk_join(carry, s[nt - 1]);
    __syncthreads();
  }}
  if (seg == gridDim.x - 1 && me == 0) *({d}*)out = ({d})carry;
  __syncthreads();
  if (me == 0) {{
    __threadfence();
    last = atomicAdd(ctl + 1, 1u) == gridDim.x - 1;
  }}
  __syncthreads();
  if (!last) return;
  for (unsigned k = me; k < gridDim.x; k += nt) flag[k] = 0u;
  if (me == 0) {{ ctl[0] = 0u; ctl[1] = 0u; }}
}}
"#
    )
}
