// pykokkos-fuse prelude, after portable.hpp (Kokkos kernels only).
namespace pk {
// Integer // and % by zero: Python raises ZeroDivisionError where C++ traps
// (SIGFPE). A divisor that may be zero is tested; the first division by zero
// is recorded (where: "file:line: expression"), the quotient taken as 0, and
// the entry point then fails with code 3. (NVRTC kernels: device_checked.hpp.)
struct zdiv_info {
  int set;
  const char* where;
};
inline zdiv_info& zdiv() {
  static zdiv_info z{0, nullptr};
  return z;
}
#if defined(KOKKOS_ENABLE_CUDA)
struct dev_zdiv_info {
  int set;
  char where[256];
};
static __device__ dev_zdiv_info dev_zdiv;
#endif
#if defined(KOKKOS_ENABLE_CUDA)
KOKKOS_INLINE_FUNCTION
#else
__attribute__((noinline, cold)) static
#endif
void zero_division(const char* where) {
#if defined(__CUDA_ARCH__)
  if (atomicCAS(&dev_zdiv.set, 0, 1) == 0) copy_str(dev_zdiv.where, where, sizeof dev_zdiv.where);
#else
  if (Kokkos::atomic_compare_exchange(&zdiv().set, 0, 1) == 0) zdiv().where = where;
#endif
}
// The test stays in the loop; the report goes out of line (cold), so the
// division's fast path keeps its shape.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION bool zero_divisor(T b, const char* where) {
  if (__builtin_expect(b != T(0), 1)) return false;
  zero_division(where);
  return true;
}
template <class T>
KOKKOS_INLINE_FUNCTION T floordiv_checked(T a, T b, const char* where) {
  return zero_divisor(b, where) ? T(0) : floordiv<T>(a, b);
}
template <class T>
KOKKOS_INLINE_FUNCTION T mod_checked(T a, T b, const char* where) {
  return zero_divisor(b, where) ? T(0) : mod<T>(a, b);
}
inline int zdiv_report(const char* where) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "integer division or modulo by zero (%s)", where);
  fail(buf);
  return 3;
}
// After a dispatch: the recorded division by zero, as the entry's failure
// (the record is cleared even when an index outside a view is reported).
inline int zdiv_check() {
#if defined(KOKKOS_ENABLE_CUDA)
  dev_zdiv_info d;
  Kokkos::fence();
  if (cudaMemcpyFromSymbol(&d, dev_zdiv, sizeof d) == cudaSuccess && d.set) {
    const dev_zdiv_info clear{};
    cudaMemcpyToSymbol(dev_zdiv, &clear, sizeof clear);
    return zdiv_report(d.where);
  }
#endif
  zdiv_info& z = zdiv();
  if (!z.set) return 0;
  z.set = 0;
  return zdiv_report(z.where);
}
}  // namespace pk
