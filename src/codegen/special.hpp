// Special functions (Kokkos 3.4 has none of them): the exponential integral
// E1 (expint1), erf/erfc of complex argument and the scaled complementary
// error function erfcx, and the cylinder functions of orders 0 and 1 (J, Y,
// I, K and the Hankel functions) of real and complex argument. SciPy's
// scipy.special is the reference: same branches, same values at the edges
// (nan where SciPy's real function is undefined). Everything is computed in
// double precision; float arguments are widened and the result narrowed, as
// SciPy's single-precision loops do.
namespace pk {
namespace sf {
using C = Kokkos::complex<double>;
// Used only as values (in double arithmetic or through a temporary): CUDA
// device code may not bind a host variable to a reference, as Kokkos::complex's
// constructor and operators take their real arguments.
constexpr double PI = 3.14159265358979323846;
constexpr double EULER = 0.57721566490153286061;
constexpr double INV_SQRT_PI = 0.56418958354775628695;
constexpr double EPS = 1e-17;

KOKKOS_INLINE_FUNCTION C mul_i(const C& z) { return C(-z.imag(), z.real()); }
KOKKOS_INLINE_FUNCTION C mul_neg_i(const C& z) { return C(z.imag(), -z.real()); }
KOKKOS_INLINE_FUNCTION double mag(const C& z) { return km::fabs(z.real()) + km::fabs(z.imag()); }
KOKKOS_INLINE_FUNCTION double nan_value() { return km::sqrt(-1.0); }
KOKKOS_INLINE_FUNCTION double inf_value() { return 1.0 / km::fabs(0.0); }

// Faddeeva's w(z) = exp(-z^2) erfc(-iz) for Im z >= 0: the trapezoidal rule
// on w(z) = (i/pi) int exp(-t^2) / (z - t) dt with step h = 1/2, plus the
// term the pole at t = z adds while it lies within pi/h of the real axis.
// The rule's error is about exp(-pi^2/h^2) = 1e-17. Of the two grids (nodes
// at k h and at (k + 1/2) h) the one whose nodes stay at least h/4 from
// Re z is used, so the sum and the pole term never cancel badly.
KOKKOS_INLINE_FUNCTION C faddeeva_upper(const C& z) {
  const double h = 0.5, x = z.real(), y = z.imag();
  const double frac = x / h - km::floor(x / h);  // in [0, 1)
  const bool shifted = frac < 0.25 || frac > 0.75;
  const C z2 = z * z;
  C sum = shifted ? C(0.0) : C(1.0) / z;
  for (int k = 0; k < 16; ++k) {
    const double t = shifted ? (k + 0.5) * h : (k + 1) * h;
    // Nodes +t and -t together: 1/(z - t) + 1/(z + t) = 2z / (z^2 - t^2).
    sum = sum + km::exp(-t * t) * (2.0 * z) / (z2 - C(t * t));
  }
  C w = mul_i(sum) * (h / PI);
  if (y < PI / h) {
    // exp(2 pi i z / h), of modulus at most 1, and the pole's term
    // 2 exp(-z^2) / (1 -+ exp(-2 pi i z / h)) written with it.
    const double a = 2.0 * PI / h;
    const C e = km::exp(-a * y) * C(km::cos(a * x), km::sin(a * x));
    w = w + 2.0 * Kokkos::exp(-z2) * e / (shifted ? e + C(1.0) : e - C(1.0));
  }
  return w;
}

KOKKOS_INLINE_FUNCTION C faddeeva(const C& z) {
  if (z.imag() >= 0) return faddeeva_upper(z);
  // w(z) = 2 exp(-z^2) - w(-z) below the real axis.
  return 2.0 * Kokkos::exp(-(z * z)) - faddeeva_upper(-z);
}

// erf's Maclaurin series, for |z| < 1 where 1 - erfc(z) would cancel.
KOKKOS_INLINE_FUNCTION C erf_series(const C& z) {
  const C m = -(z * z);
  C term = z, sum = z;
  for (int n = 1; n < 60; ++n) {
    term = term * m / double(n);
    const C t = term / double(2 * n + 1);
    sum = sum + t;
    if (mag(t) <= EPS * mag(sum)) break;
  }
  return 2.0 * INV_SQRT_PI * sum;
}

KOKKOS_INLINE_FUNCTION C erf(const C& z) {
  if (mag(z) < 1.0) return erf_series(z);
  if (z.real() < 0) return -erf(-z);
  // erfc(z) = exp(-z^2) w(iz); iz lies in the upper half-plane here.
  return C(1.0) - Kokkos::exp(-(z * z)) * faddeeva_upper(mul_i(z));
}

KOKKOS_INLINE_FUNCTION C erfc(const C& z) {
  if (mag(z) < 1.0) return C(1.0) - erf_series(z);
  if (z.real() < 0) return C(2.0) - erfc(-z);
  return Kokkos::exp(-(z * z)) * faddeeva_upper(mul_i(z));
}

KOKKOS_INLINE_FUNCTION C erfcx(const C& z) { return faddeeva(mul_i(z)); }

KOKKOS_INLINE_FUNCTION double erfcx(double x) {
  if (x >= 0) return faddeeva_upper(C(0.0, x)).real();
  const double e = km::exp(x * x);  // inf below x = -26.6, as SciPy's
  return 2.0 * e - faddeeva_upper(C(0.0, -x)).real();
}

// E1(z): its power series where it does not cancel much (small |z|, and
// near the negative real axis, where E1 grows like exp(-z): the terms reach
// exp(|z|), the sum exp(|Re z|), and y^2 < 8 (|z| + |x|) keeps their ratio
// below e^8), the continued fraction elsewhere (modified Lentz).
KOKKOS_INLINE_FUNCTION C expint1(const C& z) {
  const double r = Kokkos::abs(z), x = z.real(), y = z.imag();
  if (r == 0.0) return C(inf_value());
  if (r < 2.0 || (x < 0 && y * y < 8.0 * (r - x))) {
    C term = C(1.0), sum = C(0.0);
    for (int k = 1; k < 1000; ++k) {
      term = term * (-z) / double(k);
      const C t = term / double(k);
      sum = sum + t;
      if (mag(t) <= EPS * mag(sum)) break;
    }
    return C(-EULER) - Kokkos::log(z) - sum;
  }
  const double tiny = 1e-300;
  C b = z + C(1.0), c = C(1.0 / tiny), d = C(1.0) / b, f = d;
  for (int i = 1; i < 5000; ++i) {
    const double an = -double(i) * double(i);
    b = b + C(2.0);
    d = C(1.0) / (an * d + b);
    c = b + an / c;
    const C delta = c * d;
    f = f * delta;
    if (mag(delta - C(1.0)) <= 1e-16) break;
  }
  return f * Kokkos::exp(-z);
}

KOKKOS_INLINE_FUNCTION double expint1(double x) {
  if (x < 0) return nan_value();  // SciPy's real E1 is undefined there
  return expint1(C(x)).real();
}

// I_n(z), K_n(z) for n = 0, 1 and Re z >= 0; the other functions follow
// from these by the connection formulas (DLMF 10.27, 10.34).
KOKKOS_INLINE_FUNCTION C bessel_i_series(int n, const C& z) {
  const C h = 0.5 * z, h2 = h * h;
  C term = n == 0 ? C(1.0) : h, sum = term;
  for (int k = 1; k < 200; ++k) {
    term = term * h2 / (double(k) * double(k + n));
    sum = sum + term;
    if (mag(term) <= EPS * mag(sum)) break;
  }
  return sum;
}

KOKKOS_INLINE_FUNCTION C bessel_i_right(int n, const C& z) {
  const double r = Kokkos::abs(z);
  if (r <= 5.0) return bessel_i_series(n, z);
  // (1/pi) int_0^pi exp(z cos t) cos(nt) dt: the trapezoidal rule with m
  // panels is exact up to I_{2m-n}(z), negligible once 2m is well past |z|.
  const int m = int(0.5 * r + 4.0 * km::sqrt(r) + 20.0);
  C sum = 0.5 * (Kokkos::exp(z) + (n == 0 ? 1.0 : -1.0) * Kokkos::exp(-z));
  for (int k = 1; k < m; ++k) {
    const double c = km::cos(PI * k / m);
    sum = sum + (n == 0 ? 1.0 : c) * Kokkos::exp(c * z);
  }
  return sum / double(m);
}

KOKKOS_INLINE_FUNCTION C bessel_k_right(int n, const C& z) {
  if (Kokkos::abs(z) <= 2.0) {
    // The ascending series (A&S 9.6.13 and 9.6.11), with harmonic numbers.
    const C h = 0.5 * z, h2 = h * h, lg = Kokkos::log(h);
    C term = C(1.0), isum = C(1.0);
    if (n == 0) {
      C sum = C(0.0);
      double hk = 0.0;
      for (int k = 1; k < 100; ++k) {
        term = term * h2 / (double(k) * double(k));
        hk += 1.0 / k;
        sum = sum + hk * term;
        isum = isum + term;
        if (mag(term) <= EPS * mag(isum)) break;
      }
      return sum - (lg + C(+EULER)) * isum;
    }
    C sum = C(1.0 - 2.0 * EULER);  // k = 0: H_0 + H_1 - 2 gamma
    double hk = 0.0;
    for (int k = 1; k < 100; ++k) {
      term = term * h2 / (double(k) * double(k + 1));
      hk += 1.0 / k;
      sum = sum + (2.0 * hk + 1.0 / (k + 1) - 2.0 * EULER) * term;
      isum = isum + term;
      if (mag(term) <= EPS * mag(isum)) break;
    }
    return C(1.0) / z + lg * h * isum - 0.5 * h * sum;
  }
  // K_n(z) = sqrt(pi/2z) e^-z / Gamma(n+1/2) int_0^inf e^-u u^(n-1/2) (1 + u/2z)^(n-1/2) du
  // with u = s^2: an even, analytic integrand whose singularities lie at
  // least sqrt|z| from the real s axis, so the trapezoidal rule with step
  // 0.2 is accurate to about exp(-2 pi 1.4 / 0.2) = 1e-19.
  const double st = 0.2;
  const C inv2z = C(0.5) / z;
  C acc = C(n == 0 ? 0.5 : 0.0);
  for (int k = 1; k < 40; ++k) {
    const double s = k * st, e = km::exp(-s * s);
    const C q = Kokkos::sqrt(C(1.0) + (s * s) * inv2z);
    acc = acc + (n == 0 ? e / q : (e * s * s) * q);
  }
  const C pre = Kokkos::sqrt(C(2.0) / z) * Kokkos::exp(-z) * st;
  return n == 0 ? pre * acc : 2.0 * pre * acc;
}

KOKKOS_INLINE_FUNCTION C bessel_i(int n, const C& z) {
  if (z.real() >= 0) return bessel_i_right(n, z);
  const C r = bessel_i_right(n, -z);
  return n == 0 ? r : -r;
}

KOKKOS_INLINE_FUNCTION C bessel_k(int n, const C& z) {
  if (z.real() >= 0) return bessel_k_right(n, z);
  // K_n(-w) = (-1)^n K_n(w) -+ i pi I_n(w), the sign by the side of the cut.
  const C w = -z;
  const C k = (n == 0 ? 1.0 : -1.0) * bessel_k_right(n, w);
  const C i = mul_i((+PI) * bessel_i_right(n, w));
  return z.imag() >= 0 ? k - i : k + i;
}

KOKKOS_INLINE_FUNCTION C bessel_j(int n, const C& z) {
  const C v = bessel_i(n, mul_neg_i(z));  // J_n(z) = i^n I_n(-iz)
  return n == 0 ? v : mul_i(v);
}

// H1_n(z) = (2/pi) i^-(n+1) K_n(-iz) for -pi/2 < arg z <= pi, and
// H2_n(z) = (2/pi) i^(n+1) K_n(iz) for -pi < arg z <= pi/2; outside its
// sector each is 2 J_n - the other one.
KOKKOS_INLINE_FUNCTION bool h1_direct_ok(const C& z) { return !(z.real() <= 0 && z.imag() < 0); }
KOKKOS_INLINE_FUNCTION bool h2_direct_ok(const C& z) { return !(z.real() < 0 && z.imag() >= 0); }
KOKKOS_INLINE_FUNCTION C h1_direct(int n, const C& z) {
  const C k = bessel_k(n, mul_neg_i(z)) * (2.0 / PI);
  return n == 0 ? mul_neg_i(k) : -k;
}
KOKKOS_INLINE_FUNCTION C h2_direct(int n, const C& z) {
  const C k = bessel_k(n, mul_i(z)) * (2.0 / PI);
  return n == 0 ? mul_i(k) : -k;
}
KOKKOS_INLINE_FUNCTION C hankel1(int n, const C& z) {
  return h1_direct_ok(z) ? h1_direct(n, z) : 2.0 * bessel_j(n, z) - h2_direct(n, z);
}
KOKKOS_INLINE_FUNCTION C hankel2(int n, const C& z) {
  return h2_direct_ok(z) ? h2_direct(n, z) : 2.0 * bessel_j(n, z) - h1_direct(n, z);
}
KOKKOS_INLINE_FUNCTION C bessel_y(int n, const C& z) {
  // (H1 - H2) / 2i
  if (!h1_direct_ok(z)) return mul_neg_i(bessel_j(n, z) - h2_direct(n, z));
  if (!h2_direct_ok(z)) return mul_neg_i(h1_direct(n, z) - bessel_j(n, z));
  return 0.5 * mul_neg_i(h1_direct(n, z) - h2_direct(n, z));
}

// At z = 0, SciPy's values: Y is -inf, the others are undefined (K is inf
// only for a real argument; SciPy's H2_0(0) is nan + inf i).
KOKKOS_INLINE_FUNCTION bool zero(const C& z) { return z.real() == 0 && z.imag() == 0; }
KOKKOS_INLINE_FUNCTION C undefined() { return C(nan_value(), nan_value()); }
KOKKOS_INLINE_FUNCTION C y_of(int n, const C& z) { return zero(z) ? C(-inf_value(), 0.0) : bessel_y(n, z); }
KOKKOS_INLINE_FUNCTION C k_of(int n, const C& z) { return zero(z) ? undefined() : bessel_k(n, z); }
KOKKOS_INLINE_FUNCTION C h1_of(int n, const C& z) { return zero(z) ? undefined() : hankel1(n, z); }
KOKKOS_INLINE_FUNCTION C h2_of(int n, const C& z) {
  return zero(z) ? C(nan_value(), n == 0 ? inf_value() : nan_value()) : hankel2(n, z);
}
KOKKOS_INLINE_FUNCTION double k_real(int n, double x) {
  if (x < 0) return nan_value();  // complex there: SciPy's real loop gives nan
  return x == 0 ? inf_value() : bessel_k(n, C(x)).real();
}
}  // namespace sf

// The public names, on float, double, complex<float> and complex<double>.
#define PK_SF_COMPLEX(NAME, EXPR)                                                        \
  KOKKOS_INLINE_FUNCTION Kokkos::complex<double> NAME(const Kokkos::complex<double>& z) { \
    return EXPR;                                                                         \
  }                                                                                      \
  KOKKOS_INLINE_FUNCTION Kokkos::complex<float> NAME(const Kokkos::complex<float>& z) {  \
    const Kokkos::complex<double> r = NAME(Kokkos::complex<double>(z.real(), z.imag())); \
    return Kokkos::complex<float>(float(r.real()), float(r.imag()));                     \
  }
#define PK_SF_REAL(NAME, EXPR)                                   \
  KOKKOS_INLINE_FUNCTION double NAME(double x) { return EXPR; } \
  KOKKOS_INLINE_FUNCTION float NAME(float x) { return float(NAME(double(x))); }
// Hankel functions of a real argument are complex.
#define PK_SF_HANKEL(NAME, EXPR)                                                     \
  PK_SF_COMPLEX(NAME, EXPR)                                                          \
  KOKKOS_INLINE_FUNCTION Kokkos::complex<double> NAME(double x) {                    \
    return NAME(Kokkos::complex<double>(x, 0.0));                                    \
  }                                                                                  \
  KOKKOS_INLINE_FUNCTION Kokkos::complex<float> NAME(float x) {                      \
    return NAME(Kokkos::complex<float>(x, 0.0f));                                    \
  }

PK_SF_COMPLEX(erf, sf::erf(z))
PK_SF_COMPLEX(erfc, sf::erfc(z))
PK_SF_COMPLEX(erfcx, sf::erfcx(z))
PK_SF_REAL(erfcx, sf::erfcx(x))
PK_SF_COMPLEX(expint1, sf::expint1(z))
PK_SF_REAL(expint1, sf::expint1(x))
PK_SF_COMPLEX(cyl_bessel_j0, sf::bessel_j(0, z))
PK_SF_COMPLEX(cyl_bessel_j1, sf::bessel_j(1, z))
PK_SF_COMPLEX(cyl_bessel_i0, sf::bessel_i(0, z))
PK_SF_COMPLEX(cyl_bessel_i1, sf::bessel_i(1, z))
PK_SF_COMPLEX(cyl_bessel_y0, sf::y_of(0, z))
PK_SF_COMPLEX(cyl_bessel_y1, sf::y_of(1, z))
PK_SF_COMPLEX(cyl_bessel_k0, sf::k_of(0, z))
PK_SF_COMPLEX(cyl_bessel_k1, sf::k_of(1, z))
PK_SF_REAL(cyl_bessel_j0, sf::bessel_j(0, sf::C(x)).real())
PK_SF_REAL(cyl_bessel_j1, sf::bessel_j(1, sf::C(x)).real())
PK_SF_REAL(cyl_bessel_i0, sf::bessel_i(0, sf::C(x)).real())
PK_SF_REAL(cyl_bessel_i1, sf::bessel_i(1, sf::C(x)).real())
// Y and K of a negative real number are complex: SciPy's real loops give nan.
PK_SF_REAL(cyl_bessel_y0, x < 0 ? sf::nan_value() : sf::y_of(0, sf::C(x)).real())
PK_SF_REAL(cyl_bessel_y1, x < 0 ? sf::nan_value() : sf::y_of(1, sf::C(x)).real())
PK_SF_REAL(cyl_bessel_k0, sf::k_real(0, x))
PK_SF_REAL(cyl_bessel_k1, sf::k_real(1, x))
PK_SF_HANKEL(cyl_bessel_h10, sf::h1_of(0, z))
PK_SF_HANKEL(cyl_bessel_h11, sf::h1_of(1, z))
PK_SF_HANKEL(cyl_bessel_h20, sf::h2_of(0, z))
PK_SF_HANKEL(cyl_bessel_h21, sf::h2_of(1, z))
#undef PK_SF_COMPLEX
#undef PK_SF_REAL
#undef PK_SF_HANKEL
}  // namespace pk
