//! Expressions: typing by NumPy's rules and C++ text with Python semantics.
use super::names::{is_math_module, is_pk_module, Global};
use super::values::{cpp_string, float_lit, scalar};
use super::{FnCx, Lit, VTy, Val};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{CmpOp, Expr, ExprKind};
use crate::types::{promote_weak, DType, STy, Ty};

impl FnCx<'_> {
    /// The C++ text of `v` converted to dtype `dt`.
    pub fn coerce(&self, v: &Val, dt: DType) -> String {
        if let Some(l) = v.lit {
            match (l, dt.is_float(), dt) {
                (Lit::I(i), false, DType::Bool) => {
                    return if i != 0 {
                        "true".into()
                    } else {
                        "false".into()
                    }
                }
                (Lit::I(i), false, _) if dt.is_signed() || i >= 0 => {
                    return if dt.size() == 8 && (i > i32::MAX as i64 || i < i32::MIN as i64) {
                        format!("{}({i}LL)", dt.cpp())
                    } else {
                        format!("{i}")
                    }
                }
                (Lit::I(i), true, _) => return float_lit(i as f64, dt),
                (Lit::F(f), true, _) => return float_lit(f, dt),
                (Lit::B(b), _, DType::Bool) => return b.to_string(),
                _ => {}
            }
        }
        match &v.ty {
            VTy::S(s) if s.dt == dt => v.code.clone(),
            VTy::S(s) if s.dt.is_complex() && dt == DType::Bool => {
                format!("(({0}).real() != 0 || ({0}).imag() != 0)", v.code)
            }
            VTy::S(s) if s.dt.is_complex() && !dt.is_complex() => {
                // NumPy refuses it too (a complex does not fit a real slot).
                self.complex_to_real.set(true);
                format!("({})(({}).real())", dt.cpp(), v.code)
            }
            _ => format!("({})({})", dt.cpp(), v.code),
        }
    }

    pub fn want_scalar(&self, v: &Val, e: &Expr, what: &str) -> KResult<STy> {
        match &v.ty {
            VTy::S(s) => Ok(*s),
            other => type_error(
                e.span,
                format!("{what} needs a number, but this is {}", other.describe()),
            ),
        }
    }

    pub fn expr(&mut self, e: &Expr) -> KResult<Val> {
        match &e.kind {
            ExprKind::Int(i) => Ok(Val { code: i.to_string(), ty: VTy::S(STy::weak(DType::I64)), lit: Some(Lit::I(*i)) }),
            ExprKind::Float(f) => Ok(Val {
                code: float_lit(*f, DType::F64),
                ty: VTy::S(STy::weak(DType::F64)),
                lit: Some(Lit::F(*f)),
            }),
            ExprKind::Imag(im) => Ok(self.imaginary(*im)),
            ExprKind::Bool(b) => Ok(Val { code: b.to_string(), ty: VTy::S(STy::strong(DType::Bool)), lit: Some(Lit::B(*b)) }),
            ExprKind::Str(s) => Ok(Val { code: cpp_string(s), ty: VTy::Str(s.clone()), lit: None }),
            ExprKind::Name(n) => self.name(n, e),
            ExprKind::Attr(base, attr) => self.attribute(base, attr, e),
            ExprKind::Bin(op, a, b) => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                self.binary(*op, &x, &y, a, b, e)
            }
            ExprKind::Unary(op, a) => self.unary(*op, a),
            ExprKind::BoolOp(is_and, xs) => {
                let mut vals = Vec::new();
                for x in xs {
                    let v = self.expr(x)?;
                    let s = self.want_scalar(&v, x, "'and'/'or'")?;
                    vals.push((v, s));
                }
                if vals.iter().all(|(_, s)| s.dt == DType::Bool) {
                    let parts: Vec<String> = vals.iter().map(|(v, _)| self.coerce(v, DType::Bool)).collect();
                    let sep = if *is_and { " && " } else { " || " };
                    return Ok(scalar(format!("({})", parts.join(sep)), STy::strong(DType::Bool)));
                }
                // Python's `a or b` is a value, not a bool: the first operand that
                // decides the outcome, evaluated lazily and left to right.
                let r = vals.iter().skip(1).fold(vals[0].1, |acc, (_, s)| promote_weak(acc, *s));
                let t = r.dt.cpp();
                let test = if *is_and { "!" } else { "" };
                let mut body = String::new();
                let last = vals.len() - 1;
                for (k, (v, _)) in vals.iter().enumerate() {
                    let c = self.coerce(v, r.dt);
                    if k == last {
                        body.push_str(&format!("return {c}; "));
                    } else {
                        body.push_str(&format!("{{ const {t} pk_t = {c}; if ({test}pk_t) return pk_t; }} "));
                    }
                }
                Ok(scalar(format!("([&]() -> {t} {{ {body}}}())"), r))
            }
            ExprKind::Compare(first, rest) => {
                let mut left = self.expr(first)?;
                let mut left_e: &Expr = first;
                let mut parts = Vec::new();
                for (op, rhs) in rest {
                    let right = self.expr(rhs)?;
                    let (ls, rs) = (self.want_scalar(&left, left_e, "a comparison")?, self.want_scalar(&right, rhs, "a comparison")?);
                    let c = promote_weak(ls, rs).dt;
                    if c.is_complex() && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                        return type_error(left_e.span.join(rhs.span), "complex numbers have no order: compare their .real, .imag or abs()");
                    }
                    let sym = match op {
                        CmpOp::Eq => "==",
                        CmpOp::Ne => "!=",
                        CmpOp::Lt => "<",
                        CmpOp::Le => "<=",
                        CmpOp::Gt => ">",
                        CmpOp::Ge => ">=",
                    };
                    parts.push(format!("({} {sym} {})", self.coerce(&left, c), self.coerce(&right, c)));
                    left = right;
                    left_e = rhs;
                }
                Ok(scalar(format!("({})", parts.join(" && ")), STy::strong(DType::Bool)))
            }
            ExprKind::IfExp(c, a, b) => {
                let cv = self.expr(c)?;
                self.want_scalar(&cv, c, "a conditional expression's test")?;
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (xs, ys) = (self.want_scalar(&x, a, "a conditional expression")?, self.want_scalar(&y, b, "a conditional expression")?);
                let r = promote_weak(xs, ys);
                Ok(scalar(
                    format!("({} ? {} : {})", self.coerce(&cv, DType::Bool), self.coerce(&x, r.dt), self.coerce(&y, r.dt)),
                    r,
                ))
            }
            ExprKind::Call { .. } => self.call(e),
            ExprKind::Index(..) => self.index(e),
            ExprKind::Tuple(_) => unsupported(e.span, "tuples and lists are only allowed as list locals of numbers (x = [a, b]) and as the index list of an atomic (pk.atomic_add(v, [i], x))"),
        }
    }

    fn name(&mut self, n: &str, e: &Expr) -> KResult<Val> {
        self.check_acc_read(n, e)?;
        if let Some(v) = self.vars.get(n) {
            if v.kind == super::VarKind::Team {
                return type_error(e.span, format!("'{n}' is the team member: use its methods ({n}.league_rank(), ...) or pass it to pk.TeamThreadRange"));
            }
            let ty = match &v.ty {
                Ty::Scalar(d) => VTy::S(STy {
                    dt: *d,
                    weak: v.weak,
                }),
                Ty::View(vt) => VTy::View(*vt),
                Ty::Class(c) => VTy::Class(c.clone()),
                Ty::Void => VTy::Void,
            };
            return Ok(Val {
                code: v.cpp.clone(),
                ty,
                lit: None,
            });
        }
        if self.closures.contains_key(n) {
            return type_error(e.span, format!("'{n}' is a nested def: it can only be the body of a nested pk.parallel_for/parallel_reduce/parallel_scan or of pk.single"));
        }
        // A functor's (or workload's) member by its bare name, as in the C++
        // operator() upstream generates: after locals, before module globals.
        let key = self.name_key(n);
        if key != n {
            return self.name(&key, e);
        }
        match self.globals.get(n) {
            Some(Global::Int(i)) => Ok(Val { code: i.to_string(), ty: VTy::S(STy::weak(DType::I64)), lit: Some(Lit::I(*i)) }),
            Some(Global::Float(f)) => Ok(Val { code: float_lit(*f, DType::F64), ty: VTy::S(STy::weak(DType::F64)), lit: Some(Lit::F(*f)) }),
            Some(Global::Bool(b)) => Ok(Val { code: b.to_string(), ty: VTy::S(STy::strong(DType::Bool)), lit: Some(Lit::B(*b)) }),
            Some(Global::Function(_)) | Some(Global::ClassType(_)) => {
                type_error(e.span, format!("'{n}' is a function; call it, as in {n}(...)"))
            }
            Some(_) => type_error(e.span, format!("the module '{n}' is not a value; use one of its functions or constants")),
            None => type_error(
                e.span,
                format!("name '{n}' is not defined: kernels see their parameters, their locals, and module-level numbers, @pk.functions and @pk.classtypes"),
            ),
        }
    }

    fn attribute(&mut self, base: &Expr, attr: &str, e: &Expr) -> KResult<Val> {
        if let ExprKind::Name(m) = &base.kind {
            if let Some(v) = self.acc_field(m, attr, e)? {
                return Ok(v);
            }
            if m == "self" && !self.vars.contains_key("self") {
                let member = format!("self.{attr}");
                if self.vars.contains_key(&member) {
                    return self.name(&member, e);
                }
                return type_error(
                    e.span,
                    format!("the functor has no member '{attr}' set in __init__"),
                );
            }
            if !self.vars.contains_key(m.as_str()) {
                let is_pk = is_pk_module(self.globals, m);
                let is_math = is_math_module(self.globals, m)
                    || super::names::is_numpy_module(self.globals, m);
                let c = match (attr, is_pk || is_math) {
                    ("pi", true) => Some(std::f64::consts::PI),
                    ("e", true) => Some(std::f64::consts::E),
                    ("tau", true) => Some(std::f64::consts::TAU),
                    ("inf", true) => Some(f64::INFINITY),
                    ("nan", true) => Some(f64::NAN),
                    _ => None,
                };
                if let Some(c) = c {
                    return Ok(Val {
                        code: float_lit(c, DType::F64),
                        ty: VTy::S(STy::weak(DType::F64)),
                        lit: Some(Lit::F(c)),
                    });
                }
                if is_pk || is_math {
                    return type_error(
                        e.span,
                        format!(
                            "'{m}.{attr}' is not a kernel value (constants: pi, e, tau, inf, nan)"
                        ),
                    );
                }
            }
        }
        let b = self.expr(base)?;
        if let Some(part) = self.number_part(&b, attr) {
            return Ok(part);
        }
        if let VTy::Class(c) = &b.ty {
            if let Some(t) = self.class_field(c, attr) {
                return Ok(super::values::field_val(&b, attr, t));
            }
            return type_error(e.span, format!("classtype {c} has no field '{attr}'"));
        }
        type_error(e.span, format!("attribute '.{attr}' is not supported here; kernels read view elements with v[i] and sizes with v.extent(d)"))
    }
}
