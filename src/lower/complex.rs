//! Complex numbers in kernels (Kokkos::complex): literals (`2j`), the
//! constructors (`pk.complex128(re, im)`, `complex(re, im)`), `.real`/`.imag`,
//! conjugates, `abs`, and the math functions Kokkos defines for them.
//! Arithmetic goes through the ordinary operators (ops.rs) with NumPy's
//! promotion (promote.rs); a complex value never silently becomes a real one.
use super::values::{float_lit, scalar};
use super::{FnCx, VTy, Val};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::Expr;
use crate::types::{DType, STy};

/// Functions Kokkos 3.4 defines on Kokkos::complex (Kokkos_Complex.hpp),
/// and log10, which it lacks (spelled through log).
const COMPLEX_MATH: &[&str] = &[
    "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos",
    "atan", "asinh", "acosh", "atanh", "pow",
];

impl FnCx<'_> {
    /// `2j`: a Python imaginary literal (weak, as Python numbers are).
    pub(super) fn imaginary(&self, im: f64) -> Val {
        scalar(
            format!(
                "Kokkos::complex<double>(0.0, {})",
                float_lit(im, DType::F64)
            ),
            STy::weak(DType::C128),
        )
    }

    /// `pk.complex128(re[, im])`, `complex(re[, im])`: a complex of `dt`.
    pub(super) fn complex_new(&mut self, dt: DType, args: &[Expr], e: &Expr) -> KResult<Val> {
        if args.is_empty() || args.len() > 2 {
            return type_error(
                e.span,
                format!(
                    "{}() takes the real part and optionally the imaginary part",
                    dt.name()
                ),
            );
        }
        let mut parts = Vec::new();
        for a in args {
            let v = self.expr(a)?;
            let s = self.want_scalar(&v, a, dt.name())?;
            if s.dt.is_complex() && args.len() == 2 {
                return type_error(a.span, "the parts of a complex number are real numbers");
            }
            parts.push(if s.dt.is_complex() {
                format!("{}({})", dt.cpp(), v.code)
            } else {
                self.coerce(&v, dt.real())
            });
        }
        let code = if args.len() == 2 {
            format!("{}({}, {})", dt.cpp(), parts[0], parts[1])
        } else if parts[0].starts_with(dt.cpp()) {
            parts.remove(0)
        } else {
            format!("{}({})", dt.cpp(), parts[0])
        };
        Ok(scalar(code, STy::strong(dt)))
    }

    /// `z.real`, `z.imag` of a number (a real number's imaginary part is 0).
    pub(super) fn number_part(&self, v: &Val, attr: &str) -> Option<Val> {
        let VTy::S(s) = &v.ty else { return None };
        match (attr, s.dt.is_complex()) {
            ("real" | "imag", true) => Some(scalar(
                format!("({}).{attr}()", v.code),
                STy {
                    dt: s.dt.real(),
                    weak: s.weak,
                },
            )),
            ("real", false) => Some(v.clone()),
            ("imag", false) => Some(scalar(format!("{}(0)", s.dt.cpp()), *s)),
            _ => None,
        }
    }

    /// `abs(z)`: the modulus, a real number.
    pub(super) fn complex_abs(&self, v: &Val, s: STy) -> Val {
        scalar(
            format!("Kokkos::abs({})", v.code),
            STy {
                dt: s.dt.real(),
                weak: s.weak,
            },
        )
    }

    /// `np.conj(z)`, `np.conjugate(z)`, `z.conjugate()`.
    pub(super) fn conjugate(&mut self, arg: &Expr, e: &Expr) -> KResult<Val> {
        let v = self.expr(arg)?;
        let s = self.want_scalar(&v, arg, "conjugate")?;
        let _ = e;
        Ok(if s.dt.is_complex() {
            scalar(format!("Kokkos::conj({})", v.code), s)
        } else {
            v
        })
    }

    /// A math function with a complex argument: Kokkos' complex overload,
    /// or a located error for functions complex numbers do not have.
    pub(super) fn complex_math(&mut self, f: &str, vals: &[(Val, STy)], e: &Expr) -> KResult<Val> {
        let special = super::math::is_special(f) || matches!(f, "erf" | "erfc");
        if !COMPLEX_MATH.contains(&f) && !special {
            return type_error(e.span, format!("{f}() is not defined for complex numbers"));
        }
        let r = vals
            .iter()
            .skip(1)
            .fold(vals[0].1, |a, (_, s)| crate::types::promote_weak(a, *s));
        let dt = if r.dt.is_complex() { r.dt } else { DType::C128 };
        let parts: Vec<String> = vals.iter().map(|(v, _)| self.coerce(v, dt)).collect();
        let code = if f == "log10" {
            // Kokkos 3.4 has no complex log10: log(z) / ln(10), in z's precision.
            format!(
                "(Kokkos::log({}) / {}(2.302585092994045684))",
                parts[0],
                dt.real().cpp()
            )
        } else if special {
            format!("pk::{f}({})", parts[0])
        } else {
            format!("Kokkos::{f}({})", parts.join(", "))
        };
        Ok(scalar(code, STy::strong(dt)))
    }
}
