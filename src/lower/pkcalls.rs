//! `pk.` calls other than math: `pk.printf` and the atomic operations.
use super::names::dtype_by_pk_name;
use super::values::scalar;
use super::{FnCx, VTy, Val};
use crate::errors::{type_error, unsupported, KResult, KernelError};
use crate::frontend::ast::{BinOp, Expr, ExprKind};
use crate::types::STy;

const ATOMIC_FETCH: &[&str] = &[
    "add", "sub", "mul", "div", "min", "max", "and", "or", "xor", "lshift", "rshift", "mod",
];

impl FnCx<'_> {
    pub(super) fn pk_call(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        if f == "printf" {
            return self.printf(args, e);
        }
        if let Some(dt) = dtype_by_pk_name(f) {
            return self.dtype_cast(dt, args, e);
        }
        if let Some(op) = f.strip_prefix("atomic_fetch_") {
            if ATOMIC_FETCH.contains(&op) {
                return self.atomic(&format!("atomic_fetch_{op}"), args, e, 1, true);
            }
        }
        match f {
            "atomic_add" | "atomic_sub" | "atomic_max" | "atomic_min" => {
                return self.atomic(f, args, e, 1, false)
            }
            "atomic_increment" | "atomic_decrement" => return self.atomic(f, args, e, 0, false),
            "atomic_compare_exchange" => return self.atomic(f, args, e, 2, true),
            "atomic_exchange" => return self.atomic(f, args, e, 1, true),
            "abs" => return self.abs(args, e),
            "floor_divide" | "remainder" => return self.numpy_division(f, args, e),
            "min" | "max" => return self.minmax(f, args, e),
            "fence" => {
                return unsupported(
                    e.span,
                    "pk.fence() is a host call; it cannot run inside a kernel",
                )
            }
            "parallel_for" | "parallel_reduce" | "parallel_scan" | "single" => {
                return self.nested_pattern(f, args, e)
            }
            "inclusive_scan" => return self.team_inclusive_scan(args, e),
            "lower_bound" | "upper_bound" => return self.bound_search(f, args, e),
            "rand" => return self.rand(args, e),
            _ if f.starts_with("ScratchView") => return self.scratch_view(f, args, e),
            _ if super::team::PATTERN_ONLY.contains(&f) => {
                return type_error(
                    e.span,
                    format!("pk.{f}(...) is only allowed as the first argument of a nested pk.parallel_for/parallel_reduce/parallel_scan or pk.single"),
                )
            }
            _ => {}
        }
        self.math_call(f, args, e, false)
    }

    /// `pk.floor_divide(a, b)`, `pk.remainder(a, b)`: `//` and `%` as NumPy
    /// computes them (an integer divided by zero gives 0, floats IEEE).
    fn numpy_division(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        let [a, b] = args else {
            return type_error(e.span, format!("pk.{f}() takes two arguments in a kernel"));
        };
        let (x, y) = (self.expr(a)?, self.expr(b)?);
        let op = if f == "remainder" {
            BinOp::Mod
        } else {
            BinOp::FloorDiv
        };
        self.numpy_division = true;
        let r = self.binary(op, &x, &y, a, b, e);
        self.numpy_division = false;
        r
    }

    pub(super) fn printf(&mut self, args: &[Expr], e: &Expr) -> KResult<Val> {
        let (fmt_text, fmt) = match args.first().map(|a| &a.kind) {
            Some(ExprKind::Str(s)) => (s.clone(), super::values::cpp_string(s)),
            _ => {
                return type_error(
                    e.span,
                    "pk.printf needs a string literal as its first argument",
                )
            }
        };
        let wants = printf_conversions(&fmt_text).map_err(|m| KernelError {
            kind: crate::errors::KernelErrorKind::Type,
            span: args[0].span,
            message: m,
            origin: None,
        })?;
        if wants.len() != args.len() - 1 {
            return type_error(
                e.span,
                format!(
                    "the pk.printf format has {} conversion(s) but {} value(s) were given",
                    wants.len(),
                    args.len() - 1
                ),
            );
        }
        let mut parts = vec![fmt];
        for (a, want) in args[1..].iter().zip(&wants) {
            let v = self.expr(a)?;
            if let VTy::Str(_) = v.ty {
                if *want != "const char*" {
                    return type_error(a.span, "a string goes with a %s conversion");
                }
                parts.push(v.code);
                continue;
            }
            self.want_scalar(&v, a, "pk.printf")?;
            if *want == "const char*" {
                return type_error(a.span, "%s prints a string literal, but this is a number");
            }
            // C varargs are untyped: convert each value to what its conversion reads.
            parts.push(format!("({want})({})", v.code));
        }
        Ok(Val {
            code: format!("printf({})", parts.join(", ")),
            ty: VTy::Void,
            lit: None,
        })
    }

    /// `pk.atomic_fetch_add(v, [i, j], x)` -> `Kokkos::atomic_fetch_add(&v(i, j), x)`.
    pub(super) fn atomic(
        &mut self,
        f: &str,
        args: &[Expr],
        e: &Expr,
        nvals: usize,
        returns: bool,
    ) -> KResult<Val> {
        if args.len() != 2 + nvals {
            return type_error(
                e.span,
                format!("pk.{f} takes a view, an index list and {nvals} value(s)"),
            );
        }
        let view = self.expr(&args[0])?;
        let vt = match view.ty {
            VTy::View(v) => v,
            _ => {
                return type_error(
                    args[0].span,
                    format!("the first argument of pk.{f} must be a view"),
                )
            }
        };
        let idx: Vec<&Expr> = match &args[1].kind {
            ExprKind::Tuple(xs) => xs.iter().collect(),
            _ => vec![&args[1]],
        };
        if idx.len() != vt.rank as usize {
            return type_error(
                args[1].span,
                format!(
                    "the view has {} dimension(s) but {} index(es) were given",
                    vt.rank,
                    idx.len()
                ),
            );
        }
        let mut ic = Vec::new();
        for x in idx {
            let v = self.expr(x)?;
            let s = self.want_scalar(&v, x, "an atomic index")?;
            if s.dt.is_float() {
                return type_error(x.span, "a view index must be an integer");
            }
            ic.push(v.code);
        }
        let mut parts = vec![format!("&{}({})", view.code, ic.join(", "))];
        for a in &args[2..] {
            let v = self.expr(a)?;
            self.want_scalar(&v, a, "an atomic value")?;
            // Kokkos' atomics deduce one T from the pointer and the value: cast.
            let c = self.coerce(&v, vt.dtype);
            parts.push(format!("({})({c})", vt.dtype.cpp()));
        }
        // Kokkos 3.4 lacks some void forms; the fetch forms do the same work.
        let name = match f {
            "atomic_add" | "atomic_sub" | "atomic_max" | "atomic_min" => {
                format!("atomic_fetch_{}", &f["atomic_".len()..])
            }
            _ => f.to_string(),
        };
        let code = if returns {
            format!("Kokkos::{name}({})", parts.join(", "))
        } else {
            format!("(void)Kokkos::{name}({})", parts.join(", "))
        };
        if returns {
            Ok(scalar(code, STy::strong(vt.dtype)))
        } else {
            Ok(Val {
                code,
                ty: VTy::Void,
                lit: None,
            })
        }
    }
}

/// The C type each conversion of a printf format reads, in order.
fn printf_conversions(fmt: &str) -> Result<Vec<&'static str>, String> {
    let b = fmt.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if b[k] != b'%' {
            k += 1;
            continue;
        }
        k += 1;
        if k < b.len() && b[k] == b'%' {
            k += 1;
            continue;
        }
        while k < b.len() && b"-+ #0'".contains(&b[k]) {
            k += 1;
        }
        if k < b.len() && b[k] == b'*' {
            out.push("int");
            k += 1;
        }
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k < b.len() && b[k] == b'.' {
            k += 1;
            if k < b.len() && b[k] == b'*' {
                out.push("int");
                k += 1;
            }
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
        }
        let lstart = k;
        while k < b.len() && b"hlLqjzt".contains(&b[k]) {
            k += 1;
        }
        let len = &fmt[lstart..k];
        let conv = match b.get(k) {
            Some(c) => *c as char,
            None => return Err("the pk.printf format ends inside a '%' conversion".into()),
        };
        k += 1;
        let signed = match len {
            "" | "h" | "hh" => "int",
            "l" | "z" | "t" => "long",
            "ll" | "q" | "j" => "long long",
            _ => {
                return Err(format!(
                    "unsupported length '{len}' in a pk.printf conversion"
                ))
            }
        };
        out.push(match conv {
            'd' | 'i' | 'c' => signed,
            'u' | 'o' | 'x' | 'X' => match signed {
                "int" => "unsigned int",
                "long" => "unsigned long",
                _ => "unsigned long long",
            },
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => "double",
            's' => "const char*",
            other => {
                return Err(format!(
                    "the pk.printf conversion '%{other}' is not supported in kernels"
                ))
            }
        });
    }
    Ok(out)
}

impl FnCx<'_> {
    /// `pk.inclusive_scan(team_member, v)`: the team replaces the 1-D view `v`
    /// with its running sums (v[i] = v[0] + ... + v[i]), all threads together.
    fn team_inclusive_scan(&mut self, args: &[Expr], e: &Expr) -> KResult<Val> {
        let member = match args.first().and_then(|a| self.team_member(a)) {
            Some(m) if args.len() == 2 => m,
            _ => {
                return type_error(
                    e.span,
                    "pk.inclusive_scan takes (team_member, view): the team member of a pk.TeamPolicy workunit and a 1-D view",
                )
            }
        };
        let v = self.expr(&args[1])?;
        match v.ty {
            VTy::View(vt) if vt.rank == 1 && vt.dtype != crate::types::DType::Bool => {}
            _ => {
                return type_error(
                    args[1].span,
                    format!(
                        "pk.inclusive_scan scans a 1-D view of numbers, not {}",
                        v.ty.describe()
                    ),
                )
            }
        }
        Ok(Val {
            code: format!("pk::team_inclusive_scan({member}, {})", v.code),
            ty: VTy::Void,
            lit: None,
        })
    }

    /// `pk.rand(dtype)`: the next number of this work item's generator
    /// (floats in [0, 1), see pk::Rng in the prelude).
    fn rand(&mut self, args: &[Expr], e: &Expr) -> KResult<Val> {
        let usage =
            "pk.rand takes one argument, the dtype of the number (pk.double, pk.int32, ...)";
        let dt = match args {
            [a] => match self.annotation(a) {
                Ok(crate::types::Ty::Scalar(d)) => d,
                _ => return type_error(a.span, usage),
            },
            _ => return type_error(e.span, usage),
        };
        if !self.is_workunit || self.rng.is_none() {
            return type_error(
                e.span,
                "pk.rand draws from the workunit's random pool: pass a pk.Random_XorShift64_Pool (or XorShift1024) to the launch, as a keyword argument or a functor member, and call pk.rand in the workunit itself",
            );
        }
        self.rng_used = true;
        Ok(scalar(
            format!("pk_rng.draw<{}>()", dt.cpp()),
            STy::strong(dt),
        ))
    }
}

impl FnCx<'_> {
    /// `pk.lower_bound(v, n, x)` / `pk.upper_bound(v, n, x)`: a binary search of
    /// the sorted first n elements of a 1-d view (or scratch view).
    fn bound_search(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        let [v, n, x] = args else {
            return type_error(
                e.span,
                format!("pk.{f}(view, n, value) takes three arguments"),
            );
        };
        let view = self.expr(v)?;
        match &view.ty {
            VTy::View(t) if t.rank == 1 => {}
            _ => {
                return type_error(
                    v.span,
                    format!(
                        "pk.{f} searches a 1-d view (or scratch view), not {}",
                        view.ty.describe()
                    ),
                )
            }
        }
        let count = self.expr(n)?;
        let value = self.expr(x)?;
        let (VTy::S(c), VTy::S(_)) = (&count.ty, &value.ty) else {
            return type_error(
                e.span,
                format!("pk.{f}: the count and the value are numbers"),
            );
        };
        if !c.dt.is_int() {
            return type_error(
                n.span,
                format!("pk.{f}: the count of elements searched is an integer"),
            );
        }
        Ok(scalar(
            format!(
                "pk::{f}({}, (int64_t)({}), {})",
                view.code, count.code, value.code
            ),
            STy::strong(crate::types::DType::I64),
        ))
    }
}
