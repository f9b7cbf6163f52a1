//! Math functions: Python's `math`, NumPy's and Kokkos' (`pk.`), rounding,
//! and float predicates.
use super::names::dtype_by_pk_name;
use super::values::scalar;
use super::{FnCx, Val};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::Expr;
use crate::types::{DType, STy};

/// Float math functions of one or two arguments, and whether they return bool.
const MATH1: &[&str] = &[
    "sqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "fabs",
    "cbrt",
    "erf",
    "erfc",
    "tgamma",
    "lgamma",
    "rsqrt",
    "nearbyint",
    "degrees",
    "radians",
    "erfcx",
    "expint1",
    "cyl_bessel_j0",
    "cyl_bessel_j1",
    "cyl_bessel_y0",
    "cyl_bessel_y1",
    "cyl_bessel_i0",
    "cyl_bessel_i1",
    "cyl_bessel_k0",
    "cyl_bessel_k1",
    "cyl_bessel_h10",
    "cyl_bessel_h11",
    "cyl_bessel_h20",
    "cyl_bessel_h21",
];
/// The special functions' names, in table order (the package's
/// `pk.cyl_bessel_j0` and the rest outside kernels are these).
pub fn special_names() -> impl Iterator<Item = &'static str> {
    MATH1.iter().copied().filter(|n| is_special(n))
}
/// The special functions of special.hpp (Kokkos 3.4 has none): defined on
/// real and complex numbers; the Hankel functions are complex on both.
pub(super) fn is_special(n: &str) -> bool {
    n == "erfcx" || n == "expint1" || n.starts_with("cyl_bessel_")
}
const MATH2: &[&str] = &[
    "pow",
    "atan2",
    "hypot",
    "fmod",
    "fmin",
    "fmax",
    "fdim",
    "remainder",
    "copysign",
];
const PRED: &[&str] = &["isnan", "isinf", "isfinite"];
/// Return ints under `math.` (Python) and floats under `pk.` (Kokkos).
const ROUNDING: &[&str] = &["floor", "ceil", "trunc", "round"];

pub(super) fn is_math_name(n: &str) -> bool {
    MATH1.contains(&n) || MATH2.contains(&n) || PRED.contains(&n) || ROUNDING.contains(&n)
}

impl FnCx<'_> {
    /// The single argument of a float function, converted to float32 when it
    /// is float32 and to float64 otherwise (NumPy's choice for ints).
    pub(super) fn float_arg(
        &mut self,
        args: &[Expr],
        e: &Expr,
        name: &str,
    ) -> KResult<(String, DType)> {
        let v = self.one_arg(args, e, name)?;
        let s = self.want_scalar(&v, &args[0], name)?;
        let fdt = if s.dt == DType::F32 {
            DType::F32
        } else {
            DType::F64
        };
        Ok((self.coerce(&v, fdt), fdt))
    }

    pub(super) fn rounding(
        &mut self,
        name: &str,
        args: &[Expr],
        e: &Expr,
        to_int: bool,
    ) -> KResult<Val> {
        let (inner, fdt) = self.float_arg(args, e, name)?;
        let code = match (name, to_int) {
            // Python's round() sends halves to the even neighbour ...
            ("round", true) => format!("pk::km::nearbyint({inner})"),
            // ... Kokkos' (C's) round sends them away from zero.
            ("round", false) => format!("pk::round_away({inner})"),
            (other, _) => format!("pk::km::{other}({inner})"),
        };
        if to_int {
            Ok(scalar(format!("(int64_t)({code})"), STy::weak(DType::I64)))
        } else {
            Ok(scalar(code, STy::strong(fdt)))
        }
    }

    pub(super) fn math_call(
        &mut self,
        f: &str,
        args: &[Expr],
        e: &Expr,
        python_math: bool,
    ) -> KResult<Val> {
        // Python's math spells the gamma function without the 't'.
        let f = match f {
            "gamma" => "tgamma",
            other => other,
        };
        // math.log(x, base)
        if f == "log" && args.len() == 2 {
            let vals = self.scalars(args, f)?;
            let parts: Vec<String> = vals
                .iter()
                .map(|(v, _)| self.coerce(v, DType::F64))
                .collect();
            return Ok(scalar(
                format!("(pk::km::log({}) / pk::km::log({}))", parts[0], parts[1]),
                STy::strong(DType::F64),
            ));
        }
        if python_math && f == "round" {
            return type_error(
                e.span,
                "the math module has no round(); use round(x) or pk.round(x)",
            );
        }
        if ROUNDING.contains(&f) {
            return self.rounding(f, args, e, python_math);
        }
        let (arity, pred) = if MATH1.contains(&f) {
            (1, false)
        } else if MATH2.contains(&f) {
            (2, false)
        } else if PRED.contains(&f) {
            (1, true)
        } else {
            return type_error(e.span, format!("'{f}' is not a supported math function"));
        };
        if args.len() != arity {
            return type_error(e.span, format!("{f}() takes {arity} argument(s)"));
        }
        let vals = self.scalars(args, f)?;
        if vals.iter().any(|(_, s)| s.dt.is_complex()) {
            return self.complex_math(f, &vals, e);
        }
        let all_f32 = vals
            .iter()
            .all(|(_, s)| s.dt == DType::F32 || (s.weak && !s.dt.is_float()));
        let any_f32 = vals.iter().any(|(_, s)| s.dt == DType::F32);
        let fdt = if all_f32 && any_f32 {
            DType::F32
        } else {
            DType::F64
        };
        let parts: Vec<String> = vals.iter().map(|(v, _)| self.coerce(v, fdt)).collect();
        let ns = if matches!(f, "rsqrt" | "copysign" | "degrees" | "radians") || is_special(f) {
            "pk"
        } else {
            "pk::km"
        };
        let code = format!("{ns}::{f}({})", parts.join(", "));
        Ok(if pred {
            scalar(code, STy::strong(DType::Bool))
        } else if f.starts_with("cyl_bessel_h") {
            let cdt = if fdt == DType::F32 {
                DType::C64
            } else {
                DType::C128
            };
            scalar(code, STy::strong(cdt))
        } else {
            scalar(code, STy::strong(fdt))
        })
    }

    pub(super) fn numpy_call(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        match f {
            "abs" | "absolute" => self.abs(args, e),
            "conj" | "conjugate" if args.len() == 1 => self.conjugate(&args[0], e),
            "real" | "imag" if args.len() == 1 => {
                let v = self.expr(&args[0])?;
                self.want_scalar(&v, &args[0], f)?;
                Ok(self.number_part(&v, f).expect("a number has both parts"))
            }
            "minimum" | "maximum" if args.len() == 2 => {
                self.minmax(if f == "minimum" { "min" } else { "max" }, args, e)
            }
            // NumPy rounds halves to even and returns a float.
            "round" | "rint" | "around" => {
                let (inner, fdt) = self.float_arg(args, e, f)?;
                Ok(scalar(
                    format!("pk::km::nearbyint({inner})"),
                    STy::strong(fdt),
                ))
            }
            _ => match dtype_by_pk_name(f) {
                // np.float is Python's float (double); pk.float is float32.
                Some(_) if f == "float" => self.dtype_cast(DType::F64, args, e),
                Some(dt) => self.dtype_cast(dt, args, e),
                None => self.math_call(f, args, e, false),
            },
        }
    }
}
