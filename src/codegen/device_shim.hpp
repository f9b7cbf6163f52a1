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

// A partial another block wrote, read past the cache (complex numbers:
// device_complex.hpp reads their parts).
template <class T>
__device__ __forceinline__ T pk_vload(const T* p) { return *(const volatile T*)p; }
// A block's N values of type T in shared memory, one array per Tag. Raw
// bytes: a __shared__ array may not have a constructor, and complex numbers
// start at zero.
struct alignas(16) pk_raw16 {
  unsigned char b[16];
};
template <class T, int N, int Tag = 0>
__device__ __forceinline__ T* pk_shared_values() {
  __shared__ pk_raw16 raw[(N * sizeof(T) + 15) / 16];
  return (T*)raw;
}

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
// The record reducers: their value types, fields in Kokkos' order.
template <class S, class I>
struct MinLoc {
  struct value_type { S val; I loc; };
};
template <class S, class I>
struct MaxLoc {
  struct value_type { S val; I loc; };
};
template <class S, class P = void>
struct MinMax {
  struct value_type { S min_val; S max_val; };
};
template <class S, class I>
struct MinMaxLoc {
  struct value_type { S min_val; S max_val; I min_loc; I max_loc; };
};

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
