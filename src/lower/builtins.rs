//! Calls: casts, abs/min/max, math functions, pk.printf, atomics and
//! `@pk.function` / `@pk.classtype` calls (instantiated per argument types).
use super::expr::scalar;
use super::names::{
    dtype_by_pk_name, is_math_module, is_numpy_module, is_pk_module, FuncInfo, Global,
};
use super::{cpp_ident, FnCx, Instance, VTy, Val, VarKind};
use crate::errors::{type_error, unsupported, KResult, KernelError};
use crate::frontend::ast::{Expr, ExprKind};
use crate::types::{promote_weak, DType, STy, Ty};
use std::sync::Arc;

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
];
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

/// Who a `@pk.function` belongs to, which decides how it is emitted and called.
#[derive(Clone, Debug)]
pub enum Callee {
    /// A module-level function.
    Free,
    /// A functor's method: a const member function of the functor struct.
    Functor,
    /// A classtype's method, called on this receiver.
    Class(String, Val),
}

fn is_math_name(n: &str) -> bool {
    MATH1.contains(&n) || MATH2.contains(&n) || PRED.contains(&n) || ROUNDING.contains(&n)
}

const ATOMIC_FETCH: &[&str] = &[
    "add", "sub", "mul", "div", "min", "max", "and", "or", "xor", "lshift", "rshift", "mod",
];

impl FnCx<'_> {
    pub fn call(&mut self, e: &Expr) -> KResult<Val> {
        let (func, args, kwargs) = match &e.kind {
            ExprKind::Call { func, args, kwargs } => (func, args, kwargs),
            _ => unreachable!("call() on a non-call"),
        };
        if let ExprKind::Name(n) = &func.kind {
            if self.closures.contains_key(n.as_str()) && !self.vars.contains_key(n.as_str()) {
                return type_error(
                    func.span,
                    format!("'{n}' is a nested def: it can only be the body of a nested pk.parallel_for/parallel_reduce/parallel_scan or of pk.single; to call it, make it a @pk.function"),
                );
            }
        }
        // @pk.functions and classtypes shadow builtins of the same name, as in Python.
        let user = match &func.kind {
            ExprKind::Name(n) if !self.vars.contains_key(n.as_str()) => {
                match self.globals.get(n.as_str()).cloned() {
                    Some(Global::Function(f)) => Some((f, false)),
                    Some(Global::ClassType(c)) => {
                        let c = c.clone();
                        if let Some((k, v)) = kwargs.first() {
                            return unsupported(
                                v.span,
                                format!("keyword argument '{k}=' is not supported when building a classtype; pass it by position"),
                            );
                        }
                        return self.construct(&c, args, e);
                    }
                    _ => None,
                }
            }
            ExprKind::Attr(base, attr)
                if matches!(&base.kind, ExprKind::Name(m) if m == "self")
                    && !self.vars.contains_key("self") =>
            {
                match self.globals.get(&format!("self.{attr}")).cloned() {
                    Some(Global::Function(f)) => Some((f, true)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((f, method)) = user {
            let callee = if method {
                Callee::Functor
            } else {
                Callee::Free
            };
            return self.user_call(&f, args, kwargs, e, callee);
        }
        // Keyword arguments go to @pk.functions and classtype methods only.
        let module_attr =
            |b: &Expr| matches!(&b.kind, ExprKind::Name(m) if !self.vars.contains_key(m.as_str()));
        let class_method = matches!(&func.kind, ExprKind::Attr(base, _) if !module_attr(base));
        if let (Some((k, v)), false) = (kwargs.first(), class_method) {
            return unsupported(
                v.span,
                format!(
                    "keyword argument '{k}=' is not supported in kernel calls; pass it by position"
                ),
            );
        }
        match &func.kind {
            ExprKind::Name(n) if !self.vars.contains_key(n.as_str()) => match n.as_str() {
                "int" | "float" | "bool" => self.cast(n, args, e),
                "abs" => self.abs(args, e),
                "min" | "max" => self.minmax(n, args, e),
                "round" => self.rounding("round", args, e, true),
                // The builtin pow(a, b) is `a ** b`.
                "pow" if args.len() == 2 && !self.globals.contains_key("pow") => {
                    let (x, y) = (self.expr(&args[0])?, self.expr(&args[1])?);
                    self.binary(crate::frontend::ast::BinOp::Pow, &x, &y, &args[0], &args[1], e)
                }
                "len" => {
                    let v = self.one_arg(args, e, "len")?;
                    match v.ty {
                        VTy::View(_) => Ok(scalar(format!("(int64_t){}.extent(0)", v.code), STy::weak(DType::I64))),
                        _ => type_error(e.span, "len() needs a view"),
                    }
                }
                "range" => unsupported(e.span, "range(...) is only allowed as the iterable of a 'for' loop"),
                "print" => unsupported(e.span, "print() is not available in kernels; use pk.printf(\"%f\\n\", x)"),
                _ => match self.globals.get(n.as_str()).cloned() {
                    // PyKokkos also accepts bare Kokkos math names: sqrt(x), floor(x).
                    None if is_math_name(n) => self.math_call(n, args, e, false),
                    None if self.unit.stack.iter().any(|f| f == n) => unsupported(
                        func.span,
                        format!("'{n}' calls itself (directly or through other functions): recursion is not supported in kernels; write a loop"),
                    ),
                    _ => type_error(
                        func.span,
                        format!("'{n}' is not a function kernels can call: use math/pk functions, abs/min/max/int/float/bool, or a @pk.function"),
                    ),
                },
            },
            ExprKind::Attr(base, attr) => {
                // Module functions: pk.sqrt(x), math.floor(x), np.float32(x).
                if let ExprKind::Name(m) = &base.kind {
                    if !self.vars.contains_key(m.as_str()) && m != "self" {
                        if is_pk_module(self.globals, m) {
                            return self.pk_call(attr, args, e);
                        } else if is_math_module(self.globals, m) {
                            return self.math_call(attr, args, e, true);
                        } else if is_numpy_module(self.globals, m) {
                            return self.numpy_call(attr, args, e);
                        }
                    }
                }
                if matches!(&base.kind, ExprKind::Name(m) if m == "self")
                    && !self.vars.contains_key("self")
                {
                    return type_error(
                        func.span,
                        format!("the functor has no @pk.function method '{attr}'"),
                    );
                }
                if self.is_team_member(base) {
                    return self.team_method(base, attr, args, e);
                }
                let v = self.expr(base)?;
                if let VTy::Class(c) = &v.ty {
                    let c = c.clone();
                    return self.class_method_call(v, &c, attr, args, kwargs, e);
                }
                if attr == "extent" {
                    if let VTy::View(vt) = v.ty {
                        let d = self.one_arg(args, e, "extent")?;
                        if let Some(super::Lit::I(k)) = d.lit {
                            if k < 0 || k >= vt.rank as i64 {
                                return type_error(e.span, format!("extent({k}) of a view with {} dimension(s)", vt.rank));
                            }
                        }
                        return Ok(scalar(format!("(int64_t){}.extent({})", v.code, d.code), STy::weak(DType::I64)));
                    }
                }
                type_error(func.span, format!("'.{attr}(...)' is not a function kernels can call"))
            }
            _ => unsupported(func.span, "only named functions can be called in kernels"),
        }
    }

    fn one_arg(&mut self, args: &[Expr], e: &Expr, name: &str) -> KResult<Val> {
        if args.len() != 1 {
            return type_error(e.span, format!("{name}() takes exactly one argument here"));
        }
        self.expr(&args[0])
    }

    fn scalars(&mut self, args: &[Expr], what: &str) -> KResult<Vec<(Val, STy)>> {
        let mut out = Vec::new();
        for a in args {
            let v = self.expr(a)?;
            let s = self.want_scalar(&v, a, what)?;
            out.push((v, s));
        }
        Ok(out)
    }

    fn cast(&mut self, n: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        if let (
            true,
            [Expr {
                kind: ExprKind::Str(text),
                span,
            }],
        ) = (n == "float", args)
        {
            // float("inf"), float("-inf"), float("nan"), float("1.5")
            let t = text.trim().to_ascii_lowercase();
            let x = match t.trim_start_matches(['+', '-']) {
                "inf" | "infinity" => Some(f64::INFINITY),
                "nan" => Some(f64::NAN),
                _ => t.parse::<f64>().ok(),
            };
            let x = match x {
                Some(x) if t.starts_with('-') && !x.is_sign_negative() => -x,
                Some(x) => x,
                None => return type_error(*span, format!("float() cannot convert {text:?}")),
            };
            return Ok(Val {
                code: super::expr::float_lit(x, DType::F64),
                ty: VTy::S(STy::weak(DType::F64)),
                lit: Some(super::Lit::F(x)),
            });
        }
        let v = self.one_arg(args, e, n)?;
        self.want_scalar(&v, &args[0], n)?;
        let dt = match n {
            "int" => DType::I64,
            "float" => DType::F64,
            _ => DType::Bool,
        };
        let code = if dt == DType::Bool {
            format!("({} != 0)", v.code)
        } else {
            format!("({})({})", dt.cpp(), v.code)
        };
        Ok(scalar(
            code,
            if dt == DType::Bool {
                STy::strong(dt)
            } else {
                STy::weak(dt)
            },
        ))
    }

    fn abs(&mut self, args: &[Expr], e: &Expr) -> KResult<Val> {
        let v = self.one_arg(args, e, "abs")?;
        let s = self.want_scalar(&v, &args[0], "abs()")?;
        let code = if s.dt.is_float() {
            format!("pk::km::fabs({})", v.code)
        } else {
            format!("pk::pabs({})", v.code)
        };
        Ok(scalar(code, s))
    }

    fn minmax(&mut self, n: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        if args.len() < 2 {
            return type_error(
                e.span,
                format!("{n}() in a kernel takes two or more numbers"),
            );
        }
        let vals = self.scalars(args, n)?;
        let r = vals
            .iter()
            .skip(1)
            .fold(vals[0].1, |acc, (_, s)| promote_weak(acc, *s));
        let f = if n == "min" { "pk::pmin" } else { "pk::pmax" };
        let mut code = self.coerce(&vals[0].0, r.dt);
        for (v, _) in &vals[1..] {
            code = format!("{f}<{}>({code}, {})", r.dt.cpp(), self.coerce(v, r.dt));
        }
        Ok(scalar(code, r))
    }

    /// The single argument of a float function, converted to float32 when it
    /// is float32 and to float64 otherwise (NumPy's choice for ints).
    fn float_arg(&mut self, args: &[Expr], e: &Expr, name: &str) -> KResult<(String, DType)> {
        let v = self.one_arg(args, e, name)?;
        let s = self.want_scalar(&v, &args[0], name)?;
        let fdt = if s.dt == DType::F32 {
            DType::F32
        } else {
            DType::F64
        };
        Ok((self.coerce(&v, fdt), fdt))
    }

    fn rounding(&mut self, name: &str, args: &[Expr], e: &Expr, to_int: bool) -> KResult<Val> {
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

    fn math_call(&mut self, f: &str, args: &[Expr], e: &Expr, python_math: bool) -> KResult<Val> {
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
        let ns = if matches!(f, "rsqrt" | "copysign" | "degrees" | "radians") {
            "pk"
        } else {
            "pk::km"
        };
        let code = format!("{ns}::{f}({})", parts.join(", "));
        Ok(if pred {
            scalar(code, STy::strong(DType::Bool))
        } else {
            scalar(code, STy::strong(fdt))
        })
    }

    /// `pk.float32(x)`, `np.int64(x)`: a conversion to that dtype.
    fn dtype_cast(&mut self, dt: DType, args: &[Expr], e: &Expr) -> KResult<Val> {
        let v = self.one_arg(args, e, dt.name())?;
        self.want_scalar(&v, &args[0], dt.name())?;
        let code = if dt == DType::Bool {
            format!("({} != 0)", v.code)
        } else {
            format!("({})({})", dt.cpp(), v.code)
        };
        Ok(scalar(code, STy::strong(dt)))
    }

    fn numpy_call(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        match f {
            "abs" | "absolute" => self.abs(args, e),
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

    fn pk_call(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
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

    fn printf(&mut self, args: &[Expr], e: &Expr) -> KResult<Val> {
        let (fmt_text, fmt) = match args.first().map(|a| &a.kind) {
            Some(ExprKind::Str(s)) => (s.clone(), super::expr::cpp_string(s)),
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
    fn atomic(
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

    /// A `@pk.function` call: instantiate the function for these argument types
    /// (once per translation unit) and call the instance.
    pub fn user_call(
        &mut self,
        f: &Arc<FuncInfo>,
        args: &[Expr],
        kwargs: &[(String, Expr)],
        e: &Expr,
        callee: Callee,
    ) -> KResult<Val> {
        let method = !matches!(callee, Callee::Free);
        let params: Vec<_> = f
            .def
            .params
            .iter()
            .skip(method as usize)
            .filter(|p| method || p.name != "self")
            .cloned()
            .collect();
        let args = bind_arguments(f, &params, args, kwargs, e)?;
        let args = args.as_slice();
        let mut vals = Vec::new();
        let mut tys = Vec::new();
        for (a, p) in args.iter().zip(&params) {
            let v = self.expr(a)?;
            let ty = match (&p.ann, &v.ty) {
                (Some(ann), _) => {
                    super::annotation_type(ann, &f.globals).map_err(|err| with_origin(err, f))?
                }
                (None, VTy::S(s)) => Ty::Scalar(if s.weak && s.dt == DType::I64 {
                    DType::I64
                } else {
                    s.dt
                }),
                (None, VTy::View(vt)) => Ty::View(*vt),
                (None, VTy::Class(c)) => Ty::Class(c.clone()),
                (None, other) => {
                    return type_error(
                        a.span,
                        format!("cannot pass {} to a @pk.function", other.describe()),
                    )
                }
            };
            // A view annotation fixes dtype and rank; the layout comes from the argument.
            let ty = match (ty, &v.ty) {
                (Ty::View(want), VTy::View(got)) => {
                    if want.dtype != got.dtype || want.rank != got.rank {
                        return type_error(
                            a.span,
                            format!(
                                "{}() expects {} for '{}' but got {}",
                                f.def.name,
                                Ty::View(want).describe(),
                                p.name,
                                v.ty.describe()
                            ),
                        );
                    }
                    Ty::View(*got)
                }
                (Ty::Class(want), VTy::Class(got)) if &want == got => Ty::Class(want),
                (Ty::View(_), other)
                | (Ty::Scalar(_), other @ (VTy::View(_) | VTy::Class(_)))
                | (Ty::Class(_), other) => {
                    return type_error(
                        a.span,
                        format!(
                            "{}() parameter '{}' cannot take {}",
                            f.def.name,
                            p.name,
                            other.describe()
                        ),
                    )
                }
                (t, _) => t,
            };
            tys.push(ty);
            vals.push(v);
        }
        let sig: String = tys
            .iter()
            .map(|t| t.describe())
            .collect::<Vec<_>>()
            .join(",");
        let key = (f.id, sig);
        if !self.unit.instances.contains_key(&key) {
            self.instantiate(f, &params, &tys, key.clone(), &callee)?;
        }
        let inst = self.unit.instances[&key].clone();
        let mut cargs = Vec::new();
        for (v, t) in vals.iter().zip(&tys) {
            cargs.push(match t {
                Ty::Scalar(d) => self.coerce(v, *d),
                // Classtype values are passed by reference, as Python passes objects.
                Ty::Class(_) => format!("pk::lval({})", v.code),
                _ => v.code.clone(),
            });
        }
        let code = match &callee {
            Callee::Class(_, recv) => {
                format!("{}.{}({})", recv.code, inst.cpp_name, cargs.join(", "))
            }
            _ => format!("{}({})", inst.cpp_name, cargs.join(", ")),
        };
        Ok(match inst.ret {
            Ty::Scalar(d) => scalar(code, STy::strong(d)),
            Ty::Class(c) => Val {
                code,
                ty: VTy::Class(c),
                lit: None,
            },
            _ => Val {
                code,
                ty: VTy::Void,
                lit: None,
            },
        })
    }

    fn instantiate(
        &mut self,
        f: &Arc<FuncInfo>,
        params: &[crate::frontend::ast::Param],
        tys: &[Ty],
        key: (usize, String),
        callee: &Callee,
    ) -> KResult<()> {
        let method = matches!(callee, Callee::Functor);
        let class = match callee {
            Callee::Class(c, _) => Some(c.clone()),
            _ => None,
        };
        if self.unit.depth > 16 {
            return unsupported(f.def.span, format!("{}() calls itself (directly or through others): recursion is not supported in kernels", f.def.name));
        }
        let declared_ret = match &f.def.returns {
            Some(r) => match &r.kind {
                ExprKind::Int(_) | ExprKind::Bool(_) => None,
                _ => {
                    Some(super::annotation_type(r, &f.globals).map_err(|err| with_origin(err, f))?)
                }
            },
            None => None,
        };
        self.unit.depth += 1;
        self.unit.stack.push(f.def.name.clone());
        let mut globals = f.globals.clone();
        // A functor method sees the functor's members and its other methods.
        let members: Vec<(String, super::Var)> = if method {
            for (k, g) in self.globals.iter() {
                if k.starts_with("self.") {
                    globals.insert(k.clone(), g.clone());
                }
            }
            self.vars
                .iter()
                .filter(|(k, _)| k.starts_with("self."))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        } else {
            Vec::new()
        };
        let src = f.src.clone();
        let result = {
            let mut cx = FnCx::new(&globals, self.unit, src, false);
            for (k, v) in members {
                cx.vars.insert(k, v);
            }
            if let Some(c) = &class {
                cx.bind_class_self(c);
            }
            let mut tparams = Vec::new();
            let mut plist = Vec::new();
            for (k, (p, t)) in params.iter().zip(tys).enumerate() {
                cx.bind(&p.name, t.clone(), VarKind::FnParam);
                let cpp = cpp_ident(&p.name);
                match t {
                    Ty::Scalar(d) => plist.push(format!("{} {cpp}", d.cpp())),
                    Ty::Class(c) => plist.push(format!("{c}& {cpp}")),
                    _ => {
                        tparams.push(format!("class pk_V{k}"));
                        plist.push(format!("const pk_V{k}& {cpp}"));
                    }
                }
            }
            cx.ret_declared = declared_ret.is_some();
            cx.ret = Some(declared_ret.clone());
            let body = cx.lower_body(&f.def.body);
            body.map(|b| (b, cx.declarations(), cx.ret.clone(), tparams, plist))
        };
        self.unit.depth -= 1;
        self.unit.stack.pop();
        let (body, decls, ret, tparams, plist) = result.map_err(|err| with_origin(err, f))?;
        let ret = ret.flatten().unwrap_or(Ty::Void);
        let rcpp = match &ret {
            Ty::Scalar(d) => d.cpp().to_string(),
            Ty::Class(c) => c.clone(),
            _ => "void".into(),
        };
        let n = self.unit.instances.len();
        let cpp_name = format!("pkf_{}_{n}", crate::codegen::sanitize(&f.def.name));
        let templ = if tparams.is_empty() {
            String::new()
        } else {
            format!("template <{}>\n", tparams.join(", "))
        };
        // Methods become const member functions of the functor struct, so they
        // read the members directly.
        // Classtype methods are declared in their struct and defined after all structs.
        let qual = match &class {
            Some(c) => format!("{c}::"),
            None => String::new(),
        };
        let code = format!(
            "// @pk.function {} ({})\n{templ}KOKKOS_INLINE_FUNCTION {rcpp} {qual}{cpp_name}({}){} {{\n{decls}{body}{}}}\n",
            f.def.name,
            key.1,
            plist.join(", "),
            if method { " const" } else { "" },
            if rcpp == "void" { String::new() } else { format!("  return {rcpp}();\n") }
        );
        let decl = format!(
            "{templ}KOKKOS_INLINE_FUNCTION {rcpp} {cpp_name}({});\n",
            plist.join(", ")
        );
        self.unit.order.push(key.clone());
        self.unit.instances.insert(
            key,
            Instance {
                cpp_name,
                ret,
                code,
                method,
                class,
                decl,
            },
        );
        Ok(())
    }
}

/// Errors inside a function body point into that function's file.
pub fn with_origin(mut err: KernelError, f: &FuncInfo) -> KernelError {
    if err.origin.is_none() {
        err.origin = Some(f.src.clone());
    }
    err
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

/// Matches a call's positional and keyword arguments to a `@pk.function`'s
/// parameters, filling in defaults, as Python does.
pub fn bind_arguments(
    f: &FuncInfo,
    params: &[crate::frontend::ast::Param],
    args: &[Expr],
    kwargs: &[(String, Expr)],
    e: &Expr,
) -> KResult<Vec<Expr>> {
    let name = &f.def.name;
    if args.len() > params.len() {
        return type_error(
            e.span,
            format!(
                "{name}() takes {} argument(s) but {} were given",
                params.len(),
                args.len()
            ),
        );
    }
    let mut bound: Vec<Option<Expr>> = args.iter().cloned().map(Some).collect();
    bound.resize(params.len(), None);
    for (k, v) in kwargs {
        match params.iter().position(|p| &p.name == k) {
            Some(at) if bound[at].is_some() => {
                return type_error(
                    v.span,
                    format!("{name}() got multiple values for argument '{k}'"),
                )
            }
            Some(at) => bound[at] = Some(v.clone()),
            None => return type_error(v.span, format!("{name}() has no parameter named '{k}'")),
        }
    }
    let mut out = Vec::new();
    for (b, p) in bound.into_iter().zip(params) {
        match (b, &p.default) {
            (Some(x), _) => out.push(x),
            (None, Some(d)) => {
                out.push(default_value(d, &p.name, f).map_err(|err| with_origin(err, f))?)
            }
            (None, None) => {
                return type_error(
                    e.span,
                    format!(
                        "{name}() takes {} argument(s) but {} were given (missing '{}')",
                        params.len(),
                        args.len() + kwargs.len(),
                        p.name
                    ),
                )
            }
        }
    }
    Ok(out)
}

/// A parameter default as a literal: a number, or a module-level number of the
/// function's own module (Python evaluated it when the function was defined).
fn default_value(d: &Expr, param: &str, f: &FuncInfo) -> KResult<Expr> {
    // The value Python computed, when the resolver reported it.
    match f.globals.get(&format!("default:{param}")) {
        Some(Global::Int(i)) => return Ok(Expr::new(ExprKind::Int(*i), d.span)),
        Some(Global::Float(v)) => return Ok(Expr::new(ExprKind::Float(*v), d.span)),
        Some(Global::Bool(b)) => return Ok(Expr::new(ExprKind::Bool(*b), d.span)),
        _ => {}
    }
    let kind = match &d.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => d.kind.clone(),
        ExprKind::Unary(crate::frontend::ast::UnOp::Neg, x) => match &x.kind {
            ExprKind::Int(i) => ExprKind::Int(-i),
            ExprKind::Float(v) => ExprKind::Float(-v),
            _ => return type_error(d.span, "a @pk.function parameter default must be a number"),
        },
        ExprKind::Name(n) => match f.globals.get(n) {
            Some(Global::Int(i)) => ExprKind::Int(*i),
            Some(Global::Float(v)) => ExprKind::Float(*v),
            Some(Global::Bool(b)) => ExprKind::Bool(*b),
            _ => return type_error(d.span, "a @pk.function parameter default must be a number"),
        },
        _ => return type_error(d.span, "a @pk.function parameter default must be a number"),
    };
    Ok(Expr::new(kind, d.span))
}
