// pykokkos-fuse device shim, continued (device_shim.hpp and
// device_atomics.hpp first): team kernels for NVRTC.
namespace Kokkos {
// Teams (TeamPolicy) as Kokkos' CUDA backend runs them: a team is one block of
// blockDim.y threads (team_rank: threadIdx.y) of blockDim.x vector lanes
// (threadIdx.x, a power of two up to 32, so one thread's lanes share a warp);
// block b runs league ranks b, b + gridDim.x, ... (device_kernels.rs).
struct Cuda {};
// A team's scratch (either level): every thread of the team makes the same
// allocations in the same order, so a bump pointer of its own gives each
// thread the same addresses. Past the end: null, as Kokkos' get_shmem gives.
struct pk_scratch {
  char* base;
  int64_t size;
  mutable int64_t used;
  __device__ void* get(int64_t bytes) const {
    used = (used + 7) & ~int64_t(7);
    if (used + bytes > size) return nullptr;
    void* p = base + used;
    used += bytes;
    return p;
  }
};
template <class D, class L, class S, class M>
template <class... E>
__device__ View<D, L, S, M>::View(const pk_scratch& sc, E... e) {
  const int64_t v[] = {(int64_t)e..., 0};
  for (int d = 0; d < R; ++d) ext[d] = v[d];
  set_strides();
  ptr = (value_type*)sc.get(size() * (int64_t)sizeof(value_type));
}
struct pk_member {
  int64_t lr, ls;
  pk_scratch s0, s1;  // level 0 (shared memory), level 1 (the block's global slice)
  typedef pk_scratch scratch_memory_space;
  __device__ int league_rank() const { return (int)lr; }
  __device__ int league_size() const { return (int)ls; }
  __device__ int team_rank() const { return (int)threadIdx.y; }
  __device__ int team_size() const { return (int)blockDim.y; }
  __device__ void team_barrier() const { __syncthreads(); }
  __device__ const pk_scratch& team_scratch(int level) const { return level == 0 ? s0 : s1; }
};
template <class S>
struct TeamPolicy {
  typedef pk_member member_type;
};

// Nested ranges: over the team's threads (each thread's lanes run the same
// items), over one thread's vector lanes, or over both.
struct pk_range {
  int64_t b, e;
  int kind;  // 0 TeamThreadRange, 1 ThreadVectorRange, 2 TeamVectorRange
};
#define PK_RANGE(name, kind)                                                                  \
  __device__ inline pk_range name(const pk_member&, int64_t n) { return {0, n, kind}; }       \
  __device__ inline pk_range name(const pk_member&, int64_t b, int64_t e) { return {b, e, kind}; }
PK_RANGE(TeamThreadRange, 0) PK_RANGE(ThreadVectorRange, 1) PK_RANGE(TeamVectorRange, 2)
#undef PK_RANGE
__device__ inline void pk_lanes(int kind, int64_t& first, int64_t& step) {
  if (kind == 0) {
    first = threadIdx.y, step = blockDim.y;
  } else if (kind == 1) {
    first = threadIdx.x, step = blockDim.x;
  } else {
    first = threadIdx.y * blockDim.x + threadIdx.x, step = blockDim.x * blockDim.y;
  }
}
template <class F>
__device__ void parallel_for(const pk_range& r, const F& f) {
  int64_t t, step;
  pk_lanes(r.kind, t, step);
  for (int64_t i = r.b + t; i < r.e; i += step) f(i);
}
// The lanes of this thread within its warp.
__device__ inline unsigned pk_vector_mask() {
  if (blockDim.x >= 32) return 0xffffffffu;
  const unsigned first = ((threadIdx.y * blockDim.x) % 32);
  return ((1u << blockDim.x) - 1) << first;
}
// A lane's value, 8 bytes at a time (a complex128 takes two shuffles).
template <class T>
__device__ T pk_shuffle(T v, int from, bool down) {
  unsigned long long bits[(sizeof(T) + 7) / 8] = {};
  pk_copy_bytes(bits, &v, sizeof(T));
  for (auto& w : bits) {
    w = down ? __shfl_down_sync(pk_vector_mask(), w, from, blockDim.x)
             : __shfl_sync(pk_vector_mask(), w, from, blockDim.x);
  }
  pk_copy_bytes(&v, bits, sizeof(T));
  return v;
}
// One buffer per type for every nested sum of a kernel (a team has at most
// 1024 threads): a buffer per call site would add up past shared memory.
template <class T>
__device__ T* pk_team_buffer() {
  return pk_shared_values<T, 1024, 1>();
}
// A nested sum: each thread (or lane) adds its items into a value of its own,
// then the values are added in a fixed order (lane 0's, or thread 0's, result)
// and every participant gets the same total, as Kokkos broadcasts it.
template <class F, class T>
__device__ void parallel_reduce(const pk_range& r, const F& f, T& result) {
  T v = T();
  int64_t t, step;
  pk_lanes(r.kind, t, step);
  for (int64_t i = r.b + t; i < r.e; i += step) f(i, v);
  if (r.kind == 1) {
    for (int o = blockDim.x / 2; o > 0; o /= 2) v += pk_shuffle(v, o, true);
    result = pk_shuffle(v, 0, false);
    return;
  }
  T* buf = pk_team_buffer<T>();
  const unsigned me = threadIdx.y * blockDim.x + threadIdx.x;
  const unsigned n = r.kind == 2 ? blockDim.x * blockDim.y : blockDim.y;
  __syncthreads();  // the last reduction's readers are done with buf
  if (r.kind == 2) buf[me] = v;
  else if (threadIdx.x == 0) buf[threadIdx.y] = v;
  __syncthreads();
  if (me == 0) {
    T s = buf[0];
    for (unsigned k = 1; k < n; ++k) s += buf[k];
    buf[0] = s;
  }
  __syncthreads();
  result = buf[0];
}
struct pk_single {
  bool per_thread;
};
__device__ inline pk_single PerTeam(const pk_member&) { return {false}; }
__device__ inline pk_single PerThread(const pk_member&) { return {true}; }
template <class F>
__device__ void single(const pk_single& s, const F& f) {
  if (threadIdx.x == 0 && (s.per_thread || threadIdx.y == 0)) f();
}
}  // namespace Kokkos
