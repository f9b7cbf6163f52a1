// pykokkos-fuse portable prelude: the entry ABI and the Python semantics C++
// lacks, in code that needs only KOKKOS_INLINE_FUNCTION and Kokkos'
// Experimental math. Kokkos kernels get it after prelude.hpp; NVRTC kernels
// after device_shim.hpp, which stands in for those few Kokkos names.

// The plain C ABI every kernel entry point shares with the Rust runtime.
extern "C" {
struct pk_view_arg {
  void* data;
  int64_t extent[8];
  int64_t stride[8];  // in elements
};
union pk_scalar_arg {
  int64_t i;
  double d;
  double c[2];  // a complex number (real, imaginary)
};
}

namespace pk {
namespace km = Kokkos::Experimental;

// Python's // and % round toward negative infinity; C++ truncates toward zero.
template <class T>
KOKKOS_INLINE_FUNCTION T floordiv(T a, T b) {
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
// Float floor division as CPython computes it (float_floor_div): from fmod, so
// that 1.0 // 0.1 is 9.0 (not floor(1.0 / 0.1) == 10.0).
template <class T>
KOKKOS_INLINE_FUNCTION T float_floordiv(T a, T b) {
  if (b == T(0)) return a / b;  // NumPy's IEEE result (+-inf, nan) where Python raises
  T m = km::fmod(a, b);
  T d = (a - m) / b;
  if (m != T(0)) {
    if ((b < T(0)) != (m < T(0))) d -= T(1);
  }
  if (d != T(0)) {
    T f = km::floor(d);
    if (d - f > T(0.5)) f += T(1);
    return f;
  }
  T q = a / b;
  return (q < T(0) || (q == T(0) && T(1) / q < T(0))) ? -T(0) : T(0);
}
KOKKOS_INLINE_FUNCTION double floordiv(double a, double b) { return float_floordiv(a, b); }
KOKKOS_INLINE_FUNCTION float floordiv(float a, float b) { return float_floordiv(a, b); }

template <class T>
KOKKOS_INLINE_FUNCTION T mod(T a, T b) {
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// NumPy's integer // and % (Numba's error_model="numpy"): by zero, 0.
template <class T>
KOKKOS_INLINE_FUNCTION T floordiv_or_zero(T a, T b) {
  return b == T(0) ? T(0) : floordiv<T>(a, b);
}
template <class T>
KOKKOS_INLINE_FUNCTION T mod_or_zero(T a, T b) {
  return b == T(0) ? T(0) : mod<T>(a, b);
}
// CPython's float_rem: the result takes the divisor's sign (zero too).
template <class T>
KOKKOS_INLINE_FUNCTION T float_mod(T a, T b) {
  T r = km::fmod(a, b);
  if (r != T(0)) {
    if ((r < T(0)) != (b < T(0))) r += b;
    return r;
  }
  return (b < T(0)) ? -T(0) : T(0);
}
KOKKOS_INLINE_FUNCTION double mod(double a, double b) { return float_mod(a, b); }
KOKKOS_INLINE_FUNCTION float mod(float a, float b) { return float_mod(a, b); }

// A float to a small literal integer power: multiplications by squaring (as
// Numba and LLVM lower it), not a call to pow() in the inner loop.
template <int N, class T>
KOKKOS_INLINE_FUNCTION T powi(T x) {
  if constexpr (N == 0) {
    return T(1);
  } else if constexpr (N == 1) {
    return x;
  } else {
    T h = powi<N / 2>(x);
    if constexpr (N % 2) return h * h * x;
    else return h * h;
  }
}

// Integer power by squaring; a negative exponent gives 0 unless the base is +-1
// (Python would return a float there; kernels keep the integer type).
template <class T>
KOKKOS_INLINE_FUNCTION T ipow(T base, T exp) {
  if (exp < 0) return (base == 1) ? 1 : (base == -1 ? ((exp % 2) ? -1 : 1) : 0);
  T r = 1;
  while (exp) {
    if (exp & 1) r *= base;
    base *= base;
    exp >>= 1;
  }
  return r;
}

// Python's round(): halves go to the even neighbour, as nearbyint does by default.
KOKKOS_INLINE_FUNCTION double round(double x) { return km::nearbyint(x); }
// C's round(): halves away from zero (Kokkos 3.4 has no round()).
template <class T>
KOKKOS_INLINE_FUNCTION T round_away(T x) {
  T t = km::trunc(x);
  if (km::fabs(x - t) >= T(0.5)) t += (x < 0) ? T(-1) : T(1);
  return t;
}
template <class T>
KOKKOS_INLINE_FUNCTION T copysign(T x, T y) {
  T a = km::fabs(x);
  bool neg = y < T(0) || (y == T(0) && T(1) / y < T(0));
  return neg ? -a : a;
}
template <class T>
KOKKOS_INLINE_FUNCTION T degrees(T x) { return x * T(57.29577951308232); }
template <class T>
KOKKOS_INLINE_FUNCTION T radians(T x) { return x * T(0.017453292519943295); }
KOKKOS_INLINE_FUNCTION double rsqrt(double x) { return 1.0 / km::sqrt(x); }
KOKKOS_INLINE_FUNCTION float rsqrt(float x) { return 1.0f / km::sqrt(x); }

template <class T>
KOKKOS_INLINE_FUNCTION T pmin(T a, T b) { return b < a ? b : a; }
template <class T>
KOKKOS_INLINE_FUNCTION T pmax(T a, T b) { return a < b ? b : a; }
template <class T>
KOKKOS_INLINE_FUNCTION T pabs(T a) { return a < 0 ? -a : a; }

// Classtype values are passed to functions by reference (Python passes objects);
// a temporary argument lives until the end of the call's full expression.
template <class T>
KOKKOS_INLINE_FUNCTION T& lval(T&& t) { return t; }
// pk.lower_bound / pk.upper_bound (std::lower_bound / upper_bound on v[0:n]):
// the first index whose element is not less than (greater than) x, n if none.
template <class V, class T>
KOKKOS_INLINE_FUNCTION int64_t lower_bound(const V& v, int64_t n, const T& x) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (v(m) < x) lo = m + 1; else hi = m;
  }
  return lo;
}
template <class V, class T>
KOKKOS_INLINE_FUNCTION int64_t upper_bound(const V& v, int64_t n, const T& x) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (!(x < v(m))) lo = m + 1; else hi = m;
  }
  return lo;
}

}  // namespace pk
