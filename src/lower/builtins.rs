//! Calls to Python builtins and their dispatch: casts, abs/min/max, dtype
//! casts; math, `pk.` functions and user functions are routed to their files.
use super::calls::Callee;
use super::math::is_math_name;
use super::names::{is_math_module, is_numpy_module, is_pk_module, Global};
use super::values::scalar;
use super::{FnCx, VTy, Val};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{Expr, ExprKind};
use crate::types::{promote_weak, DType, STy};

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
                "complex" => self.complex_new(DType::C128, args, e),
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
                // Upstream's translator takes a bare printf(...) as pk.printf.
                "printf" if !self.globals.contains_key("printf") => self.printf(args, e),
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
                if attr == "conjugate" && args.is_empty() && matches!(v.ty, VTy::S(_)) {
                    return self.conjugate(base, e);
                }
                type_error(func.span, format!("'.{attr}(...)' is not a function kernels can call"))
            }
            _ => unsupported(func.span, "only named functions can be called in kernels"),
        }
    }

    pub(super) fn one_arg(&mut self, args: &[Expr], e: &Expr, name: &str) -> KResult<Val> {
        if args.len() != 1 {
            return type_error(e.span, format!("{name}() takes exactly one argument here"));
        }
        self.expr(&args[0])
    }

    pub(super) fn scalars(&mut self, args: &[Expr], what: &str) -> KResult<Vec<(Val, STy)>> {
        let mut out = Vec::new();
        for a in args {
            let v = self.expr(a)?;
            let s = self.want_scalar(&v, a, what)?;
            out.push((v, s));
        }
        Ok(out)
    }

    pub(super) fn cast(&mut self, n: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
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
                code: super::values::float_lit(x, DType::F64),
                ty: VTy::S(STy::weak(DType::F64)),
                lit: Some(super::Lit::F(x)),
            });
        }
        let v = self.one_arg(args, e, n)?;
        let s = self.want_scalar(&v, &args[0], n)?;
        if s.dt.is_complex() && n != "bool" {
            return type_error(
                args[0].span,
                format!("{n}() of a complex number: take its .real, .imag or abs()"),
            );
        }
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

    pub(super) fn abs(&mut self, args: &[Expr], e: &Expr) -> KResult<Val> {
        let v = self.one_arg(args, e, "abs")?;
        let s = self.want_scalar(&v, &args[0], "abs()")?;
        if s.dt.is_complex() {
            return Ok(self.complex_abs(&v, s));
        }
        let code = if s.dt.is_float() {
            format!("pk::km::fabs({})", v.code)
        } else {
            format!("pk::pabs({})", v.code)
        };
        Ok(scalar(code, s))
    }

    pub(super) fn minmax(&mut self, n: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
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

    /// `pk.float32(x)`, `np.int64(x)`: a conversion to that dtype.
    pub(super) fn dtype_cast(&mut self, dt: DType, args: &[Expr], e: &Expr) -> KResult<Val> {
        if dt.is_complex() {
            return self.complex_new(dt, args, e);
        }
        let v = self.one_arg(args, e, dt.name())?;
        let s = self.want_scalar(&v, &args[0], dt.name())?;
        if s.dt.is_complex() {
            return type_error(
                args[0].span,
                format!(
                    "{}() of a complex number: take its .real, .imag or abs()",
                    dt.name()
                ),
            );
        }
        let code = if dt == DType::Bool {
            format!("({} != 0)", v.code)
        } else {
            format!("({})({})", dt.cpp(), v.code)
        };
        Ok(scalar(code, STy::strong(dt)))
    }
}
