// pykokkos-fuse device shim: what NVRTC kernels (codegen/device.rs) use in
// place of Kokkos' headers. Parsing Kokkos costs nvcc seconds per kernel; a
// for or reduction over views needs only these few names. They mean what
// Kokkos' do: unmanaged views indexed by extents and strides, and the
// Experimental math functions on float and double. NVRTC has no standard
// headers, so the fixed-width types are spelled here (LP64, as on the host).
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
#define KOKKOS_INLINE_FUNCTION __device__ inline
#define KOKKOS_FORCEINLINE_FUNCTION __device__ __forceinline__
#define INFINITY (__longlong_as_double(0x7ff0000000000000LL))
#define NAN (__longlong_as_double(0x7ff8000000000000LL))

// The one standard name generated code uses: scratch view types are spelled
// `typename std::decay_t<decltype(member)>::scratch_memory_space`. (Where a
// standard library is present, as in the tests' host emulation, its own.)
#ifndef __GLIBCXX__
namespace std {
template <class T>
struct pk_decay {
  using type = T;
};
template <class T>
struct pk_decay<const T> {
  using type = T;
};
template <class T>
struct pk_decay<T&> {
  using type = typename pk_decay<T>::type;
};
template <class T>
using decay_t = typename pk_decay<T>::type;
}  // namespace std
#endif

namespace Kokkos {
struct LayoutRight {};
struct LayoutLeft {};
// Extents and strides (in elements) of up to 8 dimensions, in pairs.
struct LayoutStride {
  int64_t e[8] = {}, s[8] = {};
  template <class... A>
  __device__ LayoutStride(A... a) {
    const int64_t v[] = {(int64_t)a...};
    for (int k = 0; k < (int)sizeof...(A) / 2; ++k) e[k] = v[2 * k], s[k] = v[2 * k + 1];
  }
};
struct CudaSpace {};
enum MemoryTraitsFlags { Unmanaged = 1 };
template <unsigned>
struct MemoryTraits {};

template <class T>
struct pk_dims {
  static constexpr int rank = 0;
  using value = T;
};
template <class T>
struct pk_dims<T*> {
  static constexpr int rank = pk_dims<T>::rank + 1;
  using value = typename pk_dims<T>::value;
};
template <class A, class B>
struct pk_same {
  static constexpr bool value = false;
};
template <class A>
struct pk_same<A, A> {
  static constexpr bool value = true;
};
template <class T>
struct pk_unconst {
  using type = T;
};
template <class T>
struct pk_unconst<const T> {
  using type = T;
};

// An unmanaged view of an allocation the runtime owns. A 1-D view of layout
// Right or Left is contiguous (the runtime hands out no other), so its index
// needs no stride: the load is as plain as CuPy's.
struct pk_scratch;
template <class D, class L = LayoutRight, class S = void, class M = void>
struct View {
  static constexpr int R = pk_dims<D>::rank;
  using value_type = typename pk_dims<D>::value;
  using non_const_value_type = typename pk_unconst<value_type>::type;
  using reference_type = value_type&;
  value_type* ptr = nullptr;
  int64_t ext[R] = {}, str[R] = {};
  View() = default;
  template <class... E>
  __device__ View(value_type* p, E... e) : ptr(p) {
    const int64_t v[] = {(int64_t)e...};
    for (int d = 0; d < R; ++d) ext[d] = v[d];
    set_strides();
  }
  // A team's scratch view (`View<T*, scratch space, Unmanaged>(m.team_scratch(0), n...)`):
  // taken from the team's scratch, laid out left as Kokkos' Cuda scratch views are.
  template <class... E>
  __device__ View(const pk_scratch& sc, E... e);
  __device__ void set_strides() {
    int64_t s = 1;
    for (int k = 0; k < R; ++k) {
      const int d = pk_same<L, LayoutLeft>::value || pk_same<L, pk_scratch>::value ? k : R - 1 - k;
      str[d] = s, s *= ext[d];
    }
  }
  __device__ View(value_type* p, const LayoutStride& l) : ptr(p) {
    for (int d = 0; d < R; ++d) ext[d] = l.e[d], str[d] = l.s[d];
  }
  template <class... I>
  __device__ __forceinline__ value_type& operator()(I... i) const {
    static_assert(sizeof...(I) == R, "a view takes one index per dimension");
    if constexpr (R == 1 && !pk_same<L, LayoutStride>::value) {
      return ptr[(int64_t)(i + ...)];
    } else {
      const int64_t idx[] = {(int64_t)i...};
      int64_t off = 0;
      for (int d = 0; d < R; ++d) off += idx[d] * str[d];
      return ptr[off];
    }
  }
  __device__ int64_t extent(int d) const { return d < R ? ext[d] : 1; }
  __device__ int64_t extent_int(int d) const { return extent(d); }
  __device__ int64_t stride(int d) const { return str[d]; }
  __device__ int64_t size() const {
    int64_t n = 1;
    for (int d = 0; d < R; ++d) n *= ext[d];
    return n;
  }
  __device__ value_type* data() const { return ptr; }
};

// The built-in reducers as kernel signatures name them (`Kokkos::Min<double>::
// value_type&`); their joins and identities come with the kernel (device.rs).
#define PK_REDUCER(R)                   \
  template <class T, class S = void> \
  struct R {                            \
    typedef T value_type;               \
  };
PK_REDUCER(Prod) PK_REDUCER(Min) PK_REDUCER(Max) PK_REDUCER(LAnd) PK_REDUCER(LOr)
PK_REDUCER(BAnd) PK_REDUCER(BOr)
#undef PK_REDUCER

// Kokkos' atomics: one read-modify-write of one element, returning the old
// value. The hardware has compare-and-swap on 4 and 8 bytes only, so every
// operation is a CAS loop on the aligned word that holds the element (1 and
// 2 bytes: its neighbours are written back unchanged); adds and integer
// min/max take CUDA's own instructions where one exists.
// Copies an object's bytes (NVRTC has no memcpy builtin; this compiles to moves).
template <class A, class B>
__device__ __forceinline__ void pk_copy_bytes(A* to, const B* from, unsigned long n) {
  for (unsigned long k = 0; k < n; ++k) ((unsigned char*)to)[k] = ((const unsigned char*)from)[k];
}
template <class W, class T, class F>
__device__ T pk_cas_loop(T* p, F op) {
  W* w = (W*)p;
  W seen, old = *(volatile W*)w;
  do {
    seen = old;
    T cur, next;
    pk_copy_bytes(&cur, &seen, sizeof(T));
    next = op(cur);
    W bits;
    pk_copy_bytes(&bits, &next, sizeof(T));
    old = atomicCAS(w, seen, bits);
  } while (old != seen);
  T r;
  pk_copy_bytes(&r, &old, sizeof(T));
  return r;
}
template <class T, class F>
__device__ T pk_atomic(T* p, F op) {
  if constexpr (sizeof(T) == 8) {
    return pk_cas_loop<unsigned long long>(p, op);
  } else if constexpr (sizeof(T) == 4) {
    return pk_cas_loop<unsigned int>(p, op);
  } else {
    const unsigned long long at = (unsigned long long)p;
    unsigned int* w = (unsigned int*)(at & ~3ull);
    const unsigned shift = (unsigned)(at & 3) * 8;
    const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int seen, old = *(volatile unsigned int*)w;
    T cur;
    do {
      seen = old;
      unsigned int part = (seen & mask) >> shift;
      pk_copy_bytes(&cur, &part, sizeof(T));
      const T next = op(cur);
      unsigned int bits = 0;
      pk_copy_bytes(&bits, &next, sizeof(T));
      old = atomicCAS(w, seen, (seen & ~mask) | ((bits << shift) & mask));
    } while (old != seen);
    return cur;
  }
}
template <class T>
struct pk_hw_add {  // the types atomicAdd takes (as themselves or as bits)
  static constexpr bool value = pk_same<T, float>::value || pk_same<T, double>::value ||
                                pk_same<T, int>::value || pk_same<T, unsigned int>::value ||
                                pk_same<T, long>::value || pk_same<T, unsigned long>::value;
};
template <class T>
__device__ T atomic_fetch_add(T* p, T v) {
  if constexpr (pk_same<T, long>::value || pk_same<T, unsigned long>::value) {
    return (T)atomicAdd((unsigned long long*)p, (unsigned long long)v);
  } else if constexpr (pk_hw_add<T>::value) {
    return atomicAdd(p, v);
  } else {
    return pk_atomic(p, [v](T x) { return (T)(x + v); });
  }
}
template <class T>
__device__ T atomic_fetch_sub(T* p, T v) {
  if constexpr (pk_hw_add<T>::value && !pk_same<T, float>::value && !pk_same<T, double>::value) {
    return atomic_fetch_add(p, (T)(T(0) - v));
  } else {
    return pk_atomic(p, [v](T x) { return (T)(x - v); });
  }
}
template <class T>
__device__ T atomic_fetch_max(T* p, T v) {
  if constexpr (pk_same<T, int>::value || pk_same<T, unsigned int>::value) {
    return atomicMax(p, v);
  } else if constexpr (pk_same<T, long>::value) {
    return (T)atomicMax((long long*)p, (long long)v);
  } else if constexpr (pk_same<T, unsigned long>::value) {
    return (T)atomicMax((unsigned long long*)p, (unsigned long long)v);
  } else {
    return pk_atomic(p, [v](T x) { return x > v ? x : v; });
  }
}
template <class T>
__device__ T atomic_fetch_min(T* p, T v) {
  if constexpr (pk_same<T, int>::value || pk_same<T, unsigned int>::value) {
    return atomicMin(p, v);
  } else if constexpr (pk_same<T, long>::value) {
    return (T)atomicMin((long long*)p, (long long)v);
  } else if constexpr (pk_same<T, unsigned long>::value) {
    return (T)atomicMin((unsigned long long*)p, (unsigned long long)v);
  } else {
    return pk_atomic(p, [v](T x) { return x < v ? x : v; });
  }
}
#define PK_ATOMIC(name, expr) \
  template <class T>          \
  __device__ T atomic_fetch_##name(T* p, T v) { return pk_atomic(p, [v](T x) { return (T)(expr); }); }
PK_ATOMIC(mul, x * v) PK_ATOMIC(div, x / v) PK_ATOMIC(and, x & v) PK_ATOMIC(or, x | v)
PK_ATOMIC(xor, x ^ v) PK_ATOMIC(lshift, x << v) PK_ATOMIC(rshift, x >> v)
#undef PK_ATOMIC
template <class T>
__device__ void atomic_increment(T* p) { (void)atomic_fetch_add(p, (T)1); }
template <class T>
__device__ void atomic_decrement(T* p) { (void)atomic_fetch_sub(p, (T)1); }
template <class T>
__device__ T atomic_exchange(T* p, T v) { return pk_atomic(p, [v](T) { return v; }); }
// Compares bits, as Kokkos' CUDA form does (atomicCAS on the word).
template <class T>
__device__ T atomic_compare_exchange(T* p, T cmp, T v) {
  return pk_atomic(p, [cmp, v](T x) {
    const unsigned char *a = (const unsigned char*)&x, *b = (const unsigned char*)&cmp;
    for (unsigned k = 0; k < sizeof(T); ++k)
      if (a[k] != b[k]) return x;
    return v;
  });
}

// Teams (TeamPolicy) as Kokkos' CUDA backend runs them: a team is one block of
// blockDim.y threads (team_rank: threadIdx.y) of blockDim.x vector lanes
// (threadIdx.x, a power of two up to 32, so one thread's lanes share a warp);
// block b runs league ranks b, b + gridDim.x, ... (device_kernels.rs).
struct Cuda {};
// A team's level-0 scratch: every thread of the team makes the same
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
  pk_scratch s0;
  typedef pk_scratch scratch_memory_space;
  __device__ int league_rank() const { return (int)lr; }
  __device__ int league_size() const { return (int)ls; }
  __device__ int team_rank() const { return (int)threadIdx.y; }
  __device__ int team_size() const { return (int)blockDim.y; }
  __device__ void team_barrier() const { __syncthreads(); }
  __device__ const pk_scratch& team_scratch(int) const { return s0; }
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
template <class T>
__device__ T pk_shuffle(T v, int from, bool down) {
  unsigned long long bits = 0;
  pk_copy_bytes(&bits, &v, sizeof(T));
  bits = down ? __shfl_down_sync(pk_vector_mask(), bits, from, blockDim.x)
              : __shfl_sync(pk_vector_mask(), bits, from, blockDim.x);
  pk_copy_bytes(&v, &bits, sizeof(T));
  return v;
}
// One buffer per type for every nested sum of a kernel (a team has at most
// 1024 threads): a buffer per call site would add up past shared memory.
template <class T>
__device__ T* pk_team_buffer() {
  __shared__ T buf[1024];
  return buf;
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

// Kokkos::Experimental math on float and double, as CUDA's math library
// spells them (the float forms end in f).
namespace Experimental {
#define PK_MATH1(fn)                                        \
  __device__ inline double fn(double x) { return ::fn(x); } \
  __device__ inline float fn(float x) { return ::fn##f(x); }
#define PK_MATH2(fn)                                                          \
  __device__ inline double fn(double x, double y) { return ::fn(x, y); }     \
  __device__ inline float fn(float x, float y) { return ::fn##f(x, y); }
PK_MATH1(sqrt) PK_MATH1(cbrt) PK_MATH1(exp) PK_MATH1(exp2) PK_MATH1(expm1)
PK_MATH1(log) PK_MATH1(log2) PK_MATH1(log10) PK_MATH1(log1p)
PK_MATH1(sin) PK_MATH1(cos) PK_MATH1(tan) PK_MATH1(asin) PK_MATH1(acos) PK_MATH1(atan)
PK_MATH1(sinh) PK_MATH1(cosh) PK_MATH1(tanh) PK_MATH1(asinh) PK_MATH1(acosh) PK_MATH1(atanh)
PK_MATH1(fabs) PK_MATH1(erf) PK_MATH1(erfc) PK_MATH1(tgamma) PK_MATH1(lgamma)
PK_MATH1(floor) PK_MATH1(ceil) PK_MATH1(trunc) PK_MATH1(nearbyint)
PK_MATH2(pow) PK_MATH2(atan2) PK_MATH2(hypot) PK_MATH2(fmod) PK_MATH2(fmin) PK_MATH2(fmax)
PK_MATH2(fdim) PK_MATH2(remainder)
#undef PK_MATH1
#undef PK_MATH2
template <class T>
__device__ inline bool isnan(T x) { return x != x; }
template <class T>
__device__ inline bool isinf(T x) { return x == T(INFINITY) || x == -T(INFINITY); }
template <class T>
__device__ inline bool isfinite(T x) { return !isnan(x) && !isinf(x); }
}  // namespace Experimental
}  // namespace Kokkos
