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

// pk.cyl_bessel_j0/j1 (Kokkos 3.4 has no special functions): the power
// series below |x| = 15, Hankel's asymptotic expansion above, both summed
// until their terms stop mattering; about 1e-11 absolute error throughout.
KOKKOS_INLINE_FUNCTION double bessel_j(int n, double x) {
  const double ax = x < 0 ? -x : x;
  if (ax < 15.0) {
    const double h = 0.5 * x, h2 = -h * h;
    double term = n == 0 ? 1.0 : h, sum = term;
    for (int k = 1; k < 80; ++k) {
      term *= h2 / (k * (double)(k + n));
      sum += term;
      if (km::fabs(term) <= 1e-17 * km::fabs(sum)) break;
    }
    return sum;
  }
  const double mu = 4.0 * n * n;
  double term = 1.0, p = 1.0, q = 0.0, last = 1.0;
  for (int k = 1; k < 60; ++k) {
    term *= (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * ax);
    const double t = km::fabs(term);
    if (t > last) break;  // the asymptotic series starts to diverge
    last = t;
    if (k % 2 == 1) q += ((k / 2) % 2 == 0 ? term : -term);
    else p += ((k / 2) % 2 == 0 ? term : -term);
    if (t < 1e-17) break;
  }
  const double w = ax - (0.5 * n + 0.25) * 3.14159265358979323846;
  const double j = km::sqrt(2.0 / (3.14159265358979323846 * ax)) * (p * km::cos(w) - q * km::sin(w));
  return (n == 1 && x < 0) ? -j : j;
}
KOKKOS_INLINE_FUNCTION double cyl_bessel_j0(double x) { return bessel_j(0, x); }
KOKKOS_INLINE_FUNCTION double cyl_bessel_j1(double x) { return bessel_j(1, x); }

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
