//! Expressions: typing by NumPy's rules and C++ text with Python semantics.
use super::names::{is_math_module, is_pk_module, Global};
use super::values::{cpp_string, float_lit, scalar};
use super::{FnCx, Lit, VTy, Val};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{BinOp, CmpOp, Expr, ExprKind, Index, UnOp};
use crate::types::{promote_weak, DType, Layout, STy, Ty, ViewTy};

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
            ExprKind::Tuple(_) => unsupported(e.span, "tuples and lists are only allowed as the index list of an atomic, as in pk.atomic_add(v, [i], x)"),
        }
    }

    fn name(&mut self, n: &str, e: &Expr) -> KResult<Val> {
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
        if let VTy::Class(c) = &b.ty {
            if let Some(t) = self.class_field(c, attr) {
                return Ok(super::values::field_val(&b, attr, t));
            }
            return type_error(e.span, format!("classtype {c} has no field '{attr}'"));
        }
        type_error(e.span, format!("attribute '.{attr}' is not supported here; kernels read view elements with v[i] and sizes with v.extent(d)"))
    }

    pub fn binary(
        &mut self,
        op: BinOp,
        x: &Val,
        y: &Val,
        a: &Expr,
        b: &Expr,
        e: &Expr,
    ) -> KResult<Val> {
        let what = "an arithmetic operator";
        let (xs, ys) = (self.want_scalar(x, a, what)?, self.want_scalar(y, b, what)?);
        let _ = e;
        let mut r = promote_weak(xs, ys);
        let ints = !xs.dt.is_float() && !ys.dt.is_float();
        let arith = matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::FloorDiv
                | BinOp::Mod
                | BinOp::Pow
                | BinOp::LShift
                | BinOp::RShift
        );
        if r.dt == DType::Bool && arith {
            r.dt = DType::I64;
        }
        let (mut cx, cy) = (self.coerce(x, r.dt), self.coerce(y, r.dt));
        // C++ types `1 << k` and `100000 * 100000` as int: give a literal left
        // operand the result's width so the operation happens in 64 bits.
        if matches!(x.lit, Some(Lit::I(_)))
            && r.dt.is_int()
            && r.dt.size() == 8
            && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::LShift)
        {
            cx = format!("(({}){cx})", r.dt.cpp());
        }
        let code = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    _ => "*",
                };
                narrow(format!("{cx} {sym} {cy}"), r.dt)
            }
            BinOp::Div => {
                if ints {
                    r = STy {
                        dt: DType::F64,
                        weak: r.weak,
                    };
                    format!(
                        "({} / {})",
                        self.coerce(x, DType::F64),
                        self.coerce(y, DType::F64)
                    )
                } else {
                    format!("({cx} / {cy})")
                }
            }
            // Integer versions are templates; the float ones are overloads.
            BinOp::FloorDiv | BinOp::Mod => {
                let f = if op == BinOp::Mod { "mod" } else { "floordiv" };
                if r.dt.is_float() {
                    format!("pk::{f}({cx}, {cy})")
                } else {
                    format!("pk::{f}<{}>({cx}, {cy})", r.dt.cpp())
                }
            }
            BinOp::Pow => {
                if ints && matches!(y.lit, Some(Lit::I(k)) if k < 0) {
                    // Python: an int to a negative power is a float (2 ** -1 == 0.5).
                    r = STy {
                        dt: DType::F64,
                        weak: r.weak,
                    };
                    format!(
                        "pk::km::pow({}, {})",
                        self.coerce(x, DType::F64),
                        self.coerce(y, DType::F64)
                    )
                } else if ints && !r.dt.is_float() {
                    format!("pk::ipow<{}>({cx}, {cy})", r.dt.cpp())
                } else {
                    format!("pk::km::pow({cx}, {cy})")
                }
            }
            BinOp::LShift | BinOp::RShift | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                if !ints {
                    return type_error(
                        a.span.join(b.span),
                        "bitwise operators need integer (or bool) operands",
                    );
                }
                if r.dt.is_float() {
                    // uint64 with a signed integer: NumPy has no common integer type.
                    return type_error(
                        a.span.join(b.span),
                        format!(
                            "bitwise operators on {} and {} have no common integer type (NumPy refuses them too); convert one operand with int(...)",
                            xs.dt.name(),
                            ys.dt.name()
                        ),
                    );
                }
                let sym = match op {
                    BinOp::LShift => "<<",
                    BinOp::RShift => ">>",
                    BinOp::BitAnd => "&",
                    BinOp::BitOr => "|",
                    _ => "^",
                };
                narrow(format!("{cx} {sym} {cy}"), r.dt)
            }
        };
        Ok(scalar(code, r))
    }

    fn unary(&mut self, op: UnOp, a: &Expr) -> KResult<Val> {
        let v = self.expr(a)?;
        let s = self.want_scalar(&v, a, "a unary operator")?;
        Ok(match op {
            UnOp::Not => scalar(
                format!("(!{})", self.coerce(&v, DType::Bool)),
                STy::strong(DType::Bool),
            ),
            UnOp::Pos => v,
            UnOp::Neg => {
                let dt = if s.dt == DType::Bool {
                    DType::I64
                } else {
                    s.dt
                };
                if let Some(Lit::I(i)) = v.lit {
                    return Ok(Val {
                        code: format!("({})", -i),
                        ty: VTy::S(STy { dt, weak: s.weak }),
                        lit: Some(Lit::I(-i)),
                    });
                }
                if let Some(Lit::F(f)) = v.lit {
                    return Ok(Val {
                        code: float_lit(-f, dt),
                        ty: VTy::S(STy { dt, weak: s.weak }),
                        lit: Some(Lit::F(-f)),
                    });
                }
                scalar(
                    narrow(format!("-{}", self.coerce(&v, dt)), dt),
                    STy { dt, weak: s.weak },
                )
            }
            UnOp::Invert => {
                if s.dt.is_float() {
                    return type_error(a.span, "'~' needs an integer operand");
                }
                let dt = if s.dt == DType::Bool {
                    DType::I64
                } else {
                    s.dt
                };
                scalar(
                    narrow(format!("~{}", self.coerce(&v, dt)), dt),
                    STy { dt, weak: s.weak },
                )
            }
        })
    }

    /// `v[i][j]`, `v[i, j]`, `A[j, :]`: element access or an in-kernel subview.
    pub fn index(&mut self, e: &Expr) -> KResult<Val> {
        // `v[i][j]` is merged into one access `v(i, j)`; a level with a slice
        // makes a subview first, which later levels then index (`A[j, :][k]`).
        // `v.shape[d]` is NumPy's spelling of `v.extent(d)`.
        if let ExprKind::Index(base, idx) = &e.kind {
            if let (ExprKind::Attr(b, attr), [Index::At(d)]) = (&base.kind, idx.as_slice()) {
                if attr == "shape" {
                    let v = self.expr(b)?;
                    if let VTy::View(vt) = v.ty {
                        let dv = self.expr(d)?;
                        if let Some(Lit::I(k)) = dv.lit {
                            if k < 0 || k >= vt.rank as i64 {
                                return type_error(
                                    e.span,
                                    format!("shape[{k}] of a view with {} dimension(s)", vt.rank),
                                );
                            }
                        }
                        return Ok(scalar(
                            format!("(int64_t){}.extent({})", v.code, dv.code),
                            STy::weak(DType::I64),
                        ));
                    }
                }
            }
        }
        if let ExprKind::Index(base, idx) = &e.kind {
            if let (ExprKind::Name(n), [Index::At(_)]) = (&base.kind, idx.as_slice()) {
                if let Some((cpp, dt)) = self.elem_locals.get(n.as_str()) {
                    // A dead temporary of a fused kernel: only ever indexed by the
                    // work index (checked by fusion legality), so it is a local.
                    return Ok(scalar(cpp.clone(), STy::strong(*dt)));
                }
            }
        }
        let mut levels: Vec<(&Expr, &[Index])> = Vec::new();
        let mut cur = e;
        while let ExprKind::Index(base, idx) = &cur.kind {
            levels.push((cur, idx.as_slice()));
            cur = base;
        }
        levels.reverse();
        let mut val = self.expr(cur)?;
        let mut val_span = cur.span;
        let mut pending: Vec<&Index> = Vec::new();
        let last = levels.len() - 1;
        for (k, (node, idx)) in levels.iter().enumerate() {
            pending.extend(idx.iter());
            let sliced = idx.iter().any(|it| matches!(it, Index::Slice(..)));
            if sliced || k == last {
                val = self.apply_index(val, val_span, &pending, node)?;
                val_span = node.span;
                pending.clear();
            }
        }
        Ok(val)
    }

    fn apply_index(
        &mut self,
        base: Val,
        base_span: crate::frontend::ast::Span,
        items: &[&Index],
        e: &Expr,
    ) -> KResult<Val> {
        let vt = match &base.ty {
            VTy::View(v) => *v,
            other => {
                return type_error(
                    base_span,
                    format!(
                        "only views can be indexed, but this is {}",
                        other.describe()
                    ),
                )
            }
        };
        if items.len() > vt.rank as usize {
            return type_error(
                e.span,
                format!(
                    "this view has {} dimension(s) but is indexed with {} indices",
                    vt.rank,
                    items.len()
                ),
            );
        }
        let mut args = Vec::new();
        let mut kept = 0u8;
        for it in items {
            match it {
                Index::At(x) => {
                    let d = args.len();
                    let v = self.expr(x)?;
                    let s = self.want_scalar(&v, x, "a view index")?;
                    if s.dt.is_float() {
                        return type_error(
                            x.span,
                            "a view index must be an integer; convert with int(...)",
                        );
                    }
                    args.push(self.index_code(&v, &base.code, d));
                }
                Index::Slice(lo, hi) => {
                    kept += 1;
                    if lo.is_none() && hi.is_none() {
                        args.push("Kokkos::ALL".into());
                    } else {
                        let d = args.len();
                        let lo = match lo {
                            Some(x) => {
                                let v = self.expr(x)?;
                                self.index_code(&v, &base.code, d)
                            }
                            None => "0".into(),
                        };
                        let hi = match hi {
                            Some(x) => {
                                let v = self.expr(x)?;
                                self.index_code(&v, &base.code, d)
                            }
                            None => format!("{}.extent({d})", base.code),
                        };
                        args.push(format!("std::make_pair((int64_t)({lo}), (int64_t)({hi}))"));
                    }
                }
            }
        }
        let full = items.len() == vt.rank as usize && kept == 0;
        if full {
            return Ok(scalar(
                format!("{}({})", base.code, args.join(", ")),
                STy::strong(vt.dtype),
            ));
        }
        while args.len() < vt.rank as usize {
            args.push("Kokkos::ALL".into());
            kept += 1;
        }
        Ok(Val {
            code: format!("Kokkos::subview({}, {})", base.code, args.join(", ")),
            ty: VTy::View(ViewTy {
                dtype: vt.dtype,
                rank: kept,
                layout: Layout::Stride,
                atomic: false,
            }),
            lit: None,
        })
    }
}

impl FnCx<'_> {
    /// An index into dimension `d` of `view`: a negative literal counts from
    /// the end, as in Python (`v[-1]`). Other indices are used as they are.
    fn index_code(&self, v: &Val, view: &str, d: usize) -> String {
        match v.lit {
            Some(Lit::I(k)) if k < 0 => format!("((int64_t){view}.extent({d}) - {})", -k),
            _ => v.code.clone(),
        }
    }
}

/// C++ promotes narrow integers to int; cast back so wrap-around matches NumPy.
fn narrow(code: String, dt: DType) -> String {
    if dt.size() < 4 && dt != DType::F32 {
        format!("({})({code})", dt.cpp())
    } else {
        format!("({code})")
    }
}
