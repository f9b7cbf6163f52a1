// pykokkos-fuse device shim, continued (device_shim.hpp first): Kokkos::complex
// for NVRTC kernels. Its layout (the two parts, aligned as a pair) and its
// formulas are those of Kokkos 3.4, so a kernel computes the same bits through
// NVRTC as through nvcc: the scaled division, sqrt's branches, the inverse
// functions through logarithms. Generated code coerces both operands of an
// operator to one type; the mixed forms are here for literals and indices.
namespace Kokkos {
template <class A, class B>
using pk_common = decltype(A() + B());

template <class T>
struct alignas(2 * sizeof(T)) complex {
  T re_ = T(0), im_ = T(0);
  using value_type = T;
  complex() = default;
  __device__ complex(const T& re) : re_(re) {}
  __device__ complex(const T& re, const T& im) : re_(re), im_(im) {}
  template <class U>
  __device__ complex(const complex<U>& o) : re_(o.re_), im_(o.im_) {}
  __device__ T real() const { return re_; }
  __device__ T imag() const { return im_; }
  __device__ void real(const T& v) { re_ = v; }
  __device__ void imag(const T& v) { im_ = v; }
  __device__ complex& operator+=(const complex& o) { re_ += o.re_, im_ += o.im_; return *this; }
  __device__ complex& operator+=(const T& v) { re_ += v; return *this; }
  __device__ complex& operator-=(const complex& o) { re_ -= o.re_, im_ -= o.im_; return *this; }
  __device__ complex& operator-=(const T& v) { re_ -= v; return *this; }
  __device__ complex& operator*=(const complex& o) {
    const T r = re_ * o.re_ - im_ * o.im_;
    im_ = re_ * o.im_ + im_ * o.re_, re_ = r;
    return *this;
  }
  __device__ complex& operator*=(const T& v) { re_ *= v, im_ *= v; return *this; }
  __device__ complex& operator/=(const complex& o) { return *this = *this / o; }
  __device__ complex& operator/=(const T& v) { re_ /= v, im_ /= v; return *this; }
};

// A partial another block wrote: both parts read past the cache.
template <class T>
__device__ __forceinline__ complex<T> pk_vload(const complex<T>* p) {
  const volatile T* q = (const volatile T*)p;
  return complex<T>(T(q[0]), T(q[1]));
}

template <class T>
__device__ T real(const complex<T>& z) { return z.re_; }
template <class T>
__device__ T imag(const complex<T>& z) { return z.im_; }
template <class T>
__device__ complex<T> operator+(const complex<T>& z) { return z; }
template <class T>
__device__ complex<T> operator-(const complex<T>& z) { return complex<T>(-z.re_, -z.im_); }

template <class A, class B>
__device__ complex<pk_common<A, B>> operator+(const complex<A>& x, const complex<B>& y) {
  return complex<pk_common<A, B>>(x.re_ + y.re_, x.im_ + y.im_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator+(const complex<A>& x, const B& y) {
  return complex<pk_common<A, B>>(x.re_ + y, x.im_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator+(const A& x, const complex<B>& y) {
  return complex<pk_common<A, B>>(x + y.re_, y.im_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator-(const complex<A>& x, const complex<B>& y) {
  return complex<pk_common<A, B>>(x.re_ - y.re_, x.im_ - y.im_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator-(const complex<A>& x, const B& y) {
  return complex<pk_common<A, B>>(x.re_ - y, x.im_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator-(const A& x, const complex<B>& y) {
  return complex<pk_common<A, B>>(x - y.re_, -y.im_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator*(const complex<A>& x, const complex<B>& y) {
  return complex<pk_common<A, B>>(x.re_ * y.re_ - x.im_ * y.im_, x.re_ * y.im_ + x.im_ * y.re_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator*(const complex<A>& x, const B& y) {
  return complex<pk_common<A, B>>(y * x.re_, y * x.im_);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator*(const A& x, const complex<B>& y) {
  return complex<pk_common<A, B>>(x * y.re_, x * y.im_);
}
// Scaled by y's 1-norm, so that |y|^2 does not overflow where the quotient
// would not; a zero divisor gives what dividing each part by zero gives.
template <class A, class B>
__device__ complex<pk_common<A, B>> operator/(const complex<A>& x, const complex<B>& y) {
  using C = pk_common<A, B>;
  const C s = Experimental::fabs(C(y.re_)) + Experimental::fabs(C(y.im_));
  if (s == C(0)) return complex<C>(x.re_ / s, x.im_ / s);
  const complex<C> xs(x.re_ / s, x.im_ / s), ys(y.re_ / s, -y.im_ / s);
  const A norm = ys.re_ * ys.re_ + ys.im_ * ys.im_;
  complex<C> q = xs * ys;
  q /= C(norm);
  return q;
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator/(const complex<A>& x, const B& y) {
  return complex<pk_common<A, B>>(x.re_ / y, x.im_ / y);
}
template <class A, class B>
__device__ complex<pk_common<A, B>> operator/(const A& x, const complex<B>& y) {
  return complex<pk_common<A, B>>(x) / y;
}

template <class A, class B>
__device__ bool operator==(const complex<A>& x, const complex<B>& y) {
  using C = pk_common<A, B>;
  return C(x.re_) == C(y.re_) && C(x.im_) == C(y.im_);
}
template <class A, class B>
__device__ bool operator==(const complex<A>& x, const B& y) {
  using C = pk_common<A, B>;
  return C(x.re_) == C(y) && x.im_ == A(0);
}
template <class A, class B>
__device__ bool operator==(const A& x, const complex<B>& y) { return y == x; }
template <class A, class B>
__device__ bool operator!=(const complex<A>& x, const complex<B>& y) { return !(x == y); }
template <class A, class B>
__device__ bool operator!=(const complex<A>& x, const B& y) { return !(x == y); }
template <class A, class B>
__device__ bool operator!=(const A& x, const complex<B>& y) { return !(y == x); }

template <class T>
__device__ T abs(const complex<T>& z) { return Experimental::hypot(z.re_, z.im_); }
template <class T>
__device__ complex<T> conj(const complex<T>& z) { return complex<T>(z.re_, -z.im_); }
template <class T>
__device__ complex<T> sqrt(const complex<T>& z) {
  const T r = z.re_, i = z.im_;
  if (r == T(0)) {
    const T t = Experimental::sqrt(Experimental::fabs(i) / 2);
    return complex<T>(t, i < T(0) ? -t : t);
  }
  const T t = Experimental::sqrt(2 * (abs(z) + Experimental::fabs(r))), u = t / 2;
  return r > T(0) ? complex<T>(u, i / t) : complex<T>(Experimental::fabs(i) / t, i < T(0) ? -u : u);
}
template <class T>
__device__ complex<T> exp(const complex<T>& z) {
  return Experimental::exp(z.re_) * complex<T>(Experimental::cos(z.im_), Experimental::sin(z.im_));
}
template <class T>
__device__ complex<T> log(const complex<T>& z) {
  return complex<T>(Experimental::log(abs(z)), Experimental::atan2(z.im_, z.re_));
}
template <class T>
__device__ complex<T> pow(const complex<T>& x, const complex<T>& y) {
  return x == T() ? complex<T>(T()) : exp(y * log(x));
}
template <class T>
__device__ complex<T> sin(const complex<T>& z) {
  return complex<T>(Experimental::sin(z.re_) * Experimental::cosh(z.im_),
                    Experimental::cos(z.re_) * Experimental::sinh(z.im_));
}
template <class T>
__device__ complex<T> cos(const complex<T>& z) {
  return complex<T>(Experimental::cos(z.re_) * Experimental::cosh(z.im_),
                    -Experimental::sin(z.re_) * Experimental::sinh(z.im_));
}
template <class T>
__device__ complex<T> tan(const complex<T>& z) { return sin(z) / cos(z); }
template <class T>
__device__ complex<T> sinh(const complex<T>& z) {
  return complex<T>(Experimental::sinh(z.re_) * Experimental::cos(z.im_),
                    Experimental::cosh(z.re_) * Experimental::sin(z.im_));
}
template <class T>
__device__ complex<T> cosh(const complex<T>& z) {
  return complex<T>(Experimental::cosh(z.re_) * Experimental::cos(z.im_),
                    Experimental::sinh(z.re_) * Experimental::sin(z.im_));
}
template <class T>
__device__ complex<T> tanh(const complex<T>& z) { return sinh(z) / cosh(z); }
template <class T>
__device__ complex<T> asinh(const complex<T>& z) { return log(z + sqrt(z * z + T(1))); }
template <class T>
__device__ complex<T> acosh(const complex<T>& z) {
  return T(2) * log(sqrt(T(0.5) * (z + T(1))) + sqrt(T(0.5) * (z - T(1))));
}
template <class T>
__device__ complex<T> atanh(const complex<T>& z) {
  const T i2 = z.im_ * z.im_, r = T(1) - i2 - z.re_ * z.re_;
  const T p = T(1) + z.re_, m = T(1) - z.re_;
  const T pp = i2 + p * p, mm = i2 + m * m;
  return complex<T>(T(0.25) * (Experimental::log(pp) - Experimental::log(mm)),
                    T(0.5) * Experimental::atan2(T(2) * z.im_, r));
}
template <class T>
__device__ complex<T> asin(const complex<T>& z) {
  const complex<T> t = asinh(complex<T>(-z.im_, z.re_));
  return complex<T>(t.im_, -t.re_);
}
template <class T>
__device__ complex<T> acos(const complex<T>& z) {
  const complex<T> t = asin(z);
  return complex<T>(Experimental::acos(T(0)) - t.re_, -t.im_);
}
template <class T>
__device__ complex<T> atan(const complex<T>& z) {
  const T r2 = z.re_ * z.re_, i = T(1) - r2 - z.im_ * z.im_;
  const T p = z.im_ + T(1), m = z.im_ - T(1);
  const T pp = r2 + p * p, mm = r2 + m * m;
  return complex<T>(T(0.5) * Experimental::atan2(T(2) * z.re_, i), T(0.25) * Experimental::log(pp / mm));
}
}  // namespace Kokkos
