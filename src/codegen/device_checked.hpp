// pykokkos-fuse device shim, continued (portable.hpp first): integer // and %
// by a divisor that may be zero in NVRTC kernels, as checked.hpp does it for
// Kokkos ones. The first division by zero is recorded in `pk_zdiv` (an
// unmangled global the runtime reads back after the launch,
// exec/device_entry.rs) and the quotient taken as 0.
extern "C" {
struct pk_zdiv_record {
  int set;
  char where[252];
};
__device__ pk_zdiv_record pk_zdiv;
}
namespace pk {
__device__ __noinline__ void zero_division(const char* where) {
  if (atomicCAS(&pk_zdiv.set, 0, 1) == 0) {
    int k = 0;
    for (; k + 1 < (int)sizeof pk_zdiv.where && where[k]; ++k) pk_zdiv.where[k] = where[k];
    pk_zdiv.where[k] = 0;
  }
}
template <class T>
__device__ __forceinline__ bool zero_divisor(T b, const char* where) {
  if (__builtin_expect(b != T(0), 1)) return false;
  zero_division(where);
  return true;
}
template <class T>
__device__ inline T floordiv_checked(T a, T b, const char* where) {
  return zero_divisor(b, where) ? T(0) : floordiv<T>(a, b);
}
template <class T>
__device__ inline T mod_checked(T a, T b, const char* where) {
  return zero_divisor(b, where) ? T(0) : mod<T>(a, b);
}
}  // namespace pk
