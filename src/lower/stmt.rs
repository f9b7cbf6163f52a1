//! Statements. Locals are hoisted (see `FnCx::declarations`); loops bind their
//! variable from a hidden counter so rebinding it in the body cannot derail the
//! loop, as in Python.
use super::{cpp_ident, FnCx, VTy, Val, Var, VarKind};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{BinOp, Expr, ExprKind, Stmt, StmtKind};
use crate::types::{promote, promote_weak, DType, Layout, STy, Ty, ViewTy};

impl FnCx<'_> {
    pub fn lower_block(&mut self, stmts: &[Stmt]) -> KResult<()> {
        for s in stmts {
            self.lower_stmt(s)?;
        }
        Ok(())
    }

    fn lower_stmt(&mut self, s: &Stmt) -> KResult<()> {
        match &s.kind {
            StmtKind::Assign { target, ann, value } => {
                self.assign(target, ann.as_ref(), value.as_ref(), s)
            }
            StmtKind::AugAssign { target, op, value } => self.aug_assign(target, *op, value),
            StmtKind::If { test, body, orelse } => {
                let c = self.expr(test)?;
                self.want_scalar(&c, test, "an 'if' test")?;
                let cond = self.coerce(&c, DType::Bool);
                self.line(&format!("if ({cond}) {{"));
                self.nested(body)?;
                if !orelse.is_empty() {
                    self.line("} else {");
                    self.nested(orelse)?;
                }
                self.line("}");
                Ok(())
            }
            StmtKind::While { test, body } => {
                let c = self.expr(test)?;
                self.want_scalar(&c, test, "a 'while' test")?;
                let cond = self.coerce(&c, DType::Bool);
                self.line(&format!("while ({cond}) {{"));
                self.loop_depth += 1;
                self.nested(body)?;
                self.loop_depth -= 1;
                self.line("}");
                Ok(())
            }
            StmtKind::For {
                var,
                var_span,
                start,
                stop,
                step,
                body,
            } => self.for_range(var, *var_span, start, stop, step.as_ref(), body),
            StmtKind::Break | StmtKind::Continue => {
                if self.loop_depth == 0 {
                    return unsupported(s.span, "'break'/'continue' outside a loop");
                }
                self.line(if matches!(s.kind, StmtKind::Break) {
                    "break;"
                } else {
                    "continue;"
                });
                Ok(())
            }
            StmtKind::Pass => Ok(()),
            StmtKind::Return(v) => self.ret(v.as_ref(), s),
            // Lowered where a nested pattern runs it (see team.rs).
            StmtKind::Def(d) => {
                self.closures
                    .insert(d.name.clone(), std::sync::Arc::new((**d).clone()));
                Ok(())
            }
            StmtKind::Expr(e) => {
                let v = self.expr(e)?;
                match v.ty {
                    VTy::Void => self.line(&format!("{};", v.code)),
                    _ => self.line(&format!("(void)({});", v.code)),
                }
                Ok(())
            }
        }
    }

    fn nested(&mut self, body: &[Stmt]) -> KResult<()> {
        self.indent += 1;
        let r = self.lower_block(body);
        self.indent -= 1;
        r
    }

    fn ret(&mut self, v: Option<&Expr>, s: &Stmt) -> KResult<()> {
        match (self.ret.clone(), v) {
            (None, None) => {
                self.line("return;");
                Ok(())
            }
            (None, Some(_)) => unsupported(
                s.span,
                "a workunit cannot return a value; write results into a view or the accumulator",
            ),
            (Some(_), None) => {
                self.line("return;");
                Ok(())
            }
            (Some(cur), Some(e)) => {
                let val = self.expr(e)?;
                let (ty, weak) = match &val.ty {
                    VTy::S(st) => (Ty::Scalar(st.dt), st.weak),
                    VTy::Class(c) => (Ty::Class(c.clone()), false),
                    other => {
                        return type_error(
                            e.span,
                            format!(
                                "a @pk.function can return a number or a classtype, not {}",
                                other.describe()
                            ),
                        )
                    }
                };
                let target = if self.ret_declared {
                    let declared = cur.expect("a declared return type");
                    match (&declared, &ty) {
                        (Ty::Scalar(_), Ty::Scalar(_)) => {}
                        (a, b) if a == b => {}
                        (a, b) => {
                            return type_error(
                                e.span,
                                format!(
                                    "this returns {} but the function declares {}",
                                    b.describe(),
                                    a.describe()
                                ),
                            )
                        }
                    }
                    declared
                } else {
                    // Unannotated functions return the join of all their returns,
                    // as Python would (an int path and a float path give a float).
                    let (joined, jweak) = match (&cur, &ty) {
                        (None, t) => (t.clone(), weak),
                        (Some(Ty::Scalar(a)), Ty::Scalar(b)) => {
                            let j = promote_weak(
                                STy {
                                    dt: *a,
                                    weak: self.ret_weak,
                                },
                                STy { dt: *b, weak },
                            );
                            (Ty::Scalar(j.dt), j.weak)
                        }
                        (Some(a), b) if a == b => (a.clone(), false),
                        (Some(a), b) => {
                            return type_error(
                                e.span,
                                format!(
                                    "this returns {} but another return gives {}: a function returns one kind of value",
                                    b.describe(),
                                    a.describe()
                                ),
                            )
                        }
                    };
                    if cur.as_ref() != Some(&joined) || jweak != self.ret_weak {
                        self.changed = true;
                    }
                    self.ret = Some(Some(joined.clone()));
                    self.ret_weak = jweak;
                    joined
                };
                let code = match &target {
                    Ty::Scalar(d) => self.coerce(&val, *d),
                    _ => val.code.clone(),
                };
                self.line(&format!("return {code};"));
                Ok(())
            }
        }
    }

    fn for_range(
        &mut self,
        var: &str,
        var_span: crate::frontend::ast::Span,
        start: &Expr,
        stop: &Expr,
        step: Option<&Expr>,
        body: &[Stmt],
    ) -> KResult<()> {
        let mut parts = Vec::new();
        for e in [Some(start), Some(stop), step].into_iter().flatten() {
            let v = self.expr(e)?;
            let s = self.want_scalar(&v, e, "range()")?;
            if s.dt.is_float() {
                return type_error(e.span, "range() needs integers; convert with int(...)");
            }
            parts.push(v);
        }
        self.declare_local(
            var,
            Ty::Scalar(DType::I64),
            false,
            VarKind::LoopVar,
            var_span,
        )?;
        let cpp = self.vars[var].cpp.clone();
        let d = self.loop_depth;
        let (b, e) = (
            self.coerce(&parts[0], DType::I64),
            self.coerce(&parts[1], DType::I64),
        );
        let mut step_init = String::new();
        let (cond, inc) = match parts.get(2) {
            None => (
                format!("pk_j{d} < pk_e{d}"),
                "++pk_j{d}".replace("{d}", &d.to_string()),
            ),
            Some(st) => match st.lit {
                Some(super::Lit::I(0)) => {
                    return type_error(step.unwrap().span, "range() step must not be zero")
                }
                Some(super::Lit::I(k)) if k > 0 => {
                    (format!("pk_j{d} < pk_e{d}"), format!("pk_j{d} += {k}"))
                }
                Some(super::Lit::I(k)) => {
                    (format!("pk_j{d} > pk_e{d}"), format!("pk_j{d} += ({k})"))
                }
                _ => {
                    // The step lives in the loop's own init so sibling loops do not clash.
                    let sc = self.coerce(st, DType::I64);
                    step_init = format!(", pk_s{d} = {sc}");
                    (
                        format!("(pk_s{d} > 0 ? pk_j{d} < pk_e{d} : pk_j{d} > pk_e{d})"),
                        format!("pk_j{d} += pk_s{d}"),
                    )
                }
            },
        };
        self.line(&format!(
            "for (int64_t pk_j{d} = {b}, pk_e{d} = {e}{step_init}; {cond}; {inc}) {{"
        ));
        self.indent += 1;
        self.line(&format!("{cpp} = pk_j{d};"));
        self.indent -= 1;
        self.loop_depth += 1;
        self.nested(body)?;
        self.loop_depth -= 1;
        self.line("}");
        Ok(())
    }

    /// Creates or widens a local. Python rebinds freely; we keep one C++
    /// variable whose type is the join of everything assigned to it.
    fn declare_local(
        &mut self,
        name: &str,
        ty: Ty,
        annotated: bool,
        kind: VarKind,
        span: crate::frontend::ast::Span,
    ) -> KResult<()> {
        match self.vars.get_mut(name) {
            None => {
                self.vars.insert(
                    name.to_string(),
                    Var {
                        ty,
                        weak: false,
                        kind,
                        cpp: cpp_ident(name),
                        annotated,
                        decl: None,
                    },
                );
                self.decl_order.push(name.to_string());
                self.changed = true;
                Ok(())
            }
            Some(v) => {
                match v.kind {
                    VarKind::Local | VarKind::LoopVar | VarKind::FnParam => {}
                    VarKind::Arg => {
                        return type_error(span, format!("'{name}' is a launch argument and is read-only in the kernel; copy it into a local first"))
                    }
                    VarKind::Index => return type_error(span, format!("'{name}' is the work index and cannot be assigned")),
                    VarKind::Acc => return type_error(span, format!("assign to the accumulator '{name}' with '{name} += ...'")),
                    VarKind::LastPass => return type_error(span, format!("'{name}' is read-only")),
                    VarKind::Team => return type_error(span, format!("'{name}' is the team member and cannot be assigned")),
                }
                if annotated && !v.annotated && v.kind == VarKind::Local {
                    v.ty = ty;
                    v.annotated = true;
                    self.changed = true;
                    return Ok(());
                }
                match (&v.ty, &ty) {
                    (Ty::Scalar(a), Ty::Scalar(b)) => {
                        // A loop variable may become a float too (`k = 0.5` after the loop);
                        // parameters keep the type of their C++ signature.
                        if (!v.annotated || v.kind == VarKind::LoopVar) && v.kind != VarKind::FnParam {
                            let j = widen(*a, *b);
                            if j != *a {
                                v.ty = Ty::Scalar(j);
                                self.changed = true;
                            }
                        }
                        Ok(())
                    }
                    (a, b) if a == b => Ok(()),
                    (a, b) => type_error(
                        span,
                        format!("'{name}' was first assigned {} and now {}: a kernel local keeps one kind of value", a.describe(), b.describe()),
                    ),
                }
            }
        }
    }

    fn assign(
        &mut self,
        target: &Expr,
        ann: Option<&Expr>,
        value: Option<&Expr>,
        s: &Stmt,
    ) -> KResult<()> {
        let ann_ty = match ann {
            Some(a) => Some(self.annotation(a)?),
            None => None,
        };
        match &target.kind {
            ExprKind::Name(n) => {
                // A scratch view takes its element type from the annotation.
                self.scratch_dtype = match &ann_ty {
                    Some(Ty::View(vt)) => Some(vt.dtype),
                    _ => None,
                };
                let val = value.map(|v| self.expr(v));
                self.scratch_dtype = None;
                let val = val.transpose()?;
                let ty = match (&ann_ty, &val) {
                    (Some(t), _) => t.clone(),
                    (None, Some(v)) => match &v.ty {
                        VTy::S(st) => Ty::Scalar(default_dtype(*st)),
                        VTy::View(vt) => Ty::View(*vt),
                        VTy::Class(c) => Ty::Class(c.clone()),
                        VTy::Str(_) => {
                            return unsupported(
                                value.unwrap().span,
                                "strings are only allowed as the format of pk.printf",
                            )
                        }
                        VTy::Void => {
                            return type_error(
                                value.unwrap().span,
                                "this call returns nothing, so it cannot be assigned",
                            )
                        }
                    },
                    (None, None) => {
                        return unsupported(s.span, "an annotation without a value needs a value")
                    }
                };
                if let (
                    Ty::Scalar(_),
                    Some(Val {
                        ty: VTy::View(_), ..
                    }),
                ) = (&ty, &val)
                {
                    return type_error(
                        value.unwrap().span,
                        format!("'{n}' is declared as a number but is assigned a view"),
                    );
                }
                if let Ty::View(_) = ty {
                    return self.view_local(n, val, value, target, s);
                }
                self.declare_local(n, ty, ann_ty.is_some(), VarKind::Local, target.span)?;
                if let Some(v) = val {
                    let var = &self.vars[n.as_str()];
                    let code = match &var.ty {
                        Ty::Scalar(d) => {
                            if !matches!(v.ty, VTy::S(_)) {
                                return type_error(
                                    value.unwrap().span,
                                    format!(
                                        "'{n}' holds numbers but is assigned {}",
                                        v.ty.describe()
                                    ),
                                );
                            }
                            self.coerce(&v, *d)
                        }
                        _ => v.code.clone(),
                    };
                    let cpp = var.cpp.clone();
                    self.line(&format!("{cpp} = {code};"));
                }
                Ok(())
            }
            ExprKind::Index(..) => {
                let dest = self.expr(target)?;
                let vt =
                    match dest.ty {
                        VTy::S(st) => st.dt,
                        _ => return type_error(
                            target.span,
                            "assign to view elements (v[i] = x), not to a whole view or subview",
                        ),
                    };
                let v = match value {
                    Some(v) => v,
                    None => return unsupported(s.span, "an annotated view element needs a value"),
                };
                let val = self.expr(v)?;
                self.want_scalar(&val, v, "a view element")?;
                let code = self.coerce(&val, vt);
                self.line(&format!("{} = {code};", dest.code));
                Ok(())
            }
            ExprKind::Attr(..) if self.is_functor_member(target) => {
                self.member_is_read_only(target)
            }
            ExprKind::Attr(..) => {
                // A field of a @pk.classtype value: `p.x = 1.0`.
                let dest = self.expr(target)?;
                let v = match value {
                    Some(v) => v,
                    None => return unsupported(s.span, "an annotated field needs a value"),
                };
                let val = self.expr(v)?;
                let code = match (&dest.ty, &val.ty) {
                    (VTy::S(st), _) => {
                        self.want_scalar(&val, v, "a classtype field")?;
                        self.coerce(&val, st.dt)
                    }
                    (VTy::Class(a), VTy::Class(b)) if a == b => val.code.clone(),
                    (VTy::Class(a), other) => {
                        return type_error(
                            v.span,
                            format!("this field holds a {a}, not {}", other.describe()),
                        )
                    }
                    _ => return unsupported(target.span, "this cannot be assigned to in a kernel"),
                };
                self.line(&format!("{} = {code};", dest.code));
                Ok(())
            }
            _ => unsupported(target.span, "this cannot be assigned to in a kernel"),
        }
    }

    /// A local bound to a view or subview. It is hoisted like other locals, as a
    /// strided view of the root view's element type and memory space, so it can
    /// be rebound (`row = A[k, :]` in a loop) and used after the block it was set in.
    fn view_local(
        &mut self,
        n: &str,
        val: Option<Val>,
        value: Option<&Expr>,
        target: &Expr,
        s: &Stmt,
    ) -> KResult<()> {
        let val = match val {
            Some(v) => v,
            None => return unsupported(s.span, "a view local needs a value"),
        };
        let vt = match val.ty {
            VTy::View(vt) => vt,
            _ => {
                return type_error(
                    target.span,
                    format!(
                        "'{n}' is annotated as a view but is assigned {}",
                        val.ty.describe()
                    ),
                )
            }
        };
        let vt = ViewTy {
            layout: Layout::Stride,
            ..vt
        };
        match self.vars.get(n) {
            Some(v) => {
                if v.kind != VarKind::Local || v.ty != Ty::View(vt) {
                    return type_error(
                        target.span,
                        format!(
                            "'{n}' was first assigned {} and now {}: a kernel local keeps one kind of value",
                            v.ty.describe(),
                            Ty::View(vt).describe()
                        ),
                    );
                }
            }
            None => {
                let scratch = value.and_then(|e| self.scratch_local_type(e, &vt));
                let root = value.and_then(|e| self.root_view(e));
                let decl =
                    match (scratch, root) {
                        (Some(t), _) => t,
                        (None, Some(r)) => {
                            format!("pk::strided_t<std::decay_t<decltype({r})>, {}>", vt.rank)
                        }
                        (None, None) => return unsupported(
                            value.map_or(s.span, |e| e.span),
                            "a view local must be a view or a subview of one, as in row = A[i, :]",
                        ),
                    };
                self.vars.insert(
                    n.to_string(),
                    Var {
                        ty: Ty::View(vt),
                        weak: false,
                        kind: VarKind::Local,
                        cpp: cpp_ident(n),
                        annotated: true,
                        decl: Some(decl),
                    },
                );
                self.decl_order.push(n.to_string());
                self.changed = true;
            }
        }
        let cpp = self.vars[n].cpp.clone();
        self.line(&format!("{cpp} = {};", val.code));
        Ok(())
    }

    /// `self.x` of a functor (not of a classtype, whose methods bind `self`).
    fn is_functor_member(&self, target: &Expr) -> bool {
        matches!(&target.kind, ExprKind::Attr(b, _)
            if matches!(&b.kind, ExprKind::Name(n) if n == "self") && !self.vars.contains_key("self"))
    }

    fn member_is_read_only(&self, target: &Expr) -> KResult<()> {
        let name = match &target.kind {
            ExprKind::Attr(_, a) => a.as_str(),
            _ => "?",
        };
        type_error(
            target.span,
            format!("functor member 'self.{name}' is read-only inside a workunit; write into a view member instead"),
        )
    }

    /// The C++ name of the view a (sub)view expression starts from.
    fn root_view(&self, e: &Expr) -> Option<String> {
        self.root_view_var(e).map(|v| v.cpp.clone())
    }

    /// The view variable a (sub)view expression starts from.
    fn root_view_var(&self, e: &Expr) -> Option<&Var> {
        let mut cur = e;
        while let ExprKind::Index(b, _) = &cur.kind {
            cur = b;
        }
        let key = match &cur.kind {
            ExprKind::Name(n) => n.clone(),
            ExprKind::Attr(b, a) if matches!(&b.kind, ExprKind::Name(s) if s == "self") => {
                format!("self.{a}")
            }
            _ => return None,
        };
        self.vars.get(&key).filter(|v| matches!(v.ty, Ty::View(_)))
    }

    fn aug_assign(&mut self, target: &Expr, op: BinOp, value: &Expr) -> KResult<()> {
        if self.is_functor_member(target) {
            return self.member_is_read_only(target);
        }
        let cur = self.expr(target)?;
        let rhs = self.expr(value)?;
        if let ExprKind::Name(n) = &target.kind {
            let kind = self.vars.get(n.as_str()).map(|v| v.kind);
            if kind == Some(VarKind::Acc) {
                let acc_dt = match &self.vars[n.as_str()].ty {
                    Ty::Scalar(d) => *d,
                    _ => DType::F64,
                };
                let r = self.binary(op, &cur, &rhs, target, value, target)?;
                let code = if op == BinOp::Add {
                    format!("{} += {};", cur.code, self.coerce(&rhs, acc_dt))
                } else {
                    format!("{} = {};", cur.code, self.coerce(&r, acc_dt))
                };
                self.line(&code);
                return Ok(());
            }
            let r = self.binary(op, &cur, &rhs, target, value, target)?;
            let st = match r.ty {
                VTy::S(s) => s,
                _ => STy::strong(DType::F64),
            };
            self.declare_local(
                n,
                Ty::Scalar(default_dtype(st)),
                false,
                VarKind::Local,
                target.span,
            )?;
            let d = match &self.vars[n.as_str()].ty {
                Ty::Scalar(d) => *d,
                _ => DType::F64,
            };
            let code = self.coerce(&r, d);
            self.line(&format!("{} = {code};", cur.code));
            return Ok(());
        }
        let dt = match cur.ty {
            VTy::S(s) => s.dt,
            _ => {
                return type_error(
                    target.span,
                    "augmented assignment needs a number or a view element",
                )
            }
        };
        if self.is_atomic_element(target) {
            return self.atomic_update(&cur, op, &rhs, dt, value);
        }
        let r = self.binary(op, &cur, &rhs, target, value, target)?;
        let code = self.coerce(&r, dt);
        self.line(&format!("{} = {code};", cur.code));
        Ok(())
    }
}

impl FnCx<'_> {
    /// `v[...]` of a view created with `trait=pk.Atomic` (not a register local).
    fn is_atomic_element(&self, target: &Expr) -> bool {
        matches!(target.kind, ExprKind::Index(..))
            && self
                .root_view_var(target)
                .is_some_and(|v| matches!(v.ty, Ty::View(vt) if vt.atomic))
    }

    /// `v[i] op= x` on a pk.Atomic view: one atomic read-modify-write, as
    /// Kokkos' Atomic memory trait gives. Updates that cannot be one atomic
    /// operation with Python's result are refused rather than left racy.
    fn atomic_update(
        &mut self,
        cur: &Val,
        op: BinOp,
        rhs: &Val,
        dt: DType,
        value: &Expr,
    ) -> KResult<()> {
        let name = match op {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div if dt.is_float() => "div",
            BinOp::BitAnd => "and",
            BinOp::BitOr => "or",
            BinOp::BitXor => "xor",
            BinOp::LShift => "lshift",
            BinOp::RShift => "rshift",
            _ => {
                return type_error(
                    value.span,
                    format!("this update of a pk.Atomic view of {} is not one atomic operation: use + - * & | ^ << >> (and / on floats)", dt.name()),
                )
            }
        };
        let rt = match &rhs.ty {
            VTy::S(st) => st.dt,
            other => {
                return type_error(
                    value.span,
                    format!(
                        "an atomic update needs a number, but this is {}",
                        other.describe()
                    ),
                )
            }
        };
        if !dt.is_float() && rt.is_float() {
            return type_error(
                value.span,
                format!("an atomic update of a {} view needs an integer value, not {}: convert it with int(...)", dt.name(), rt.name()),
            );
        }
        let v = self.coerce(rhs, dt);
        // Kokkos deduces one type from both arguments: cast the value exactly.
        self.line(&format!(
            "Kokkos::atomic_fetch_{name}(&{}, ({})({v}));",
            cur.code,
            dt.cpp()
        ));
        Ok(())
    }
}

/// A weak Python int literal becomes int64 and a weak float double, as in NumPy.
pub fn default_dtype(s: STy) -> DType {
    s.dt
}

/// Python rebinding an int local to a float makes it a float; keep the wider kind.
fn widen(a: DType, b: DType) -> DType {
    if a == b {
        return a;
    }
    match (a.is_float(), b.is_float()) {
        (false, true) => promote(a, b),
        (true, false) => a,
        (true, true) => promote(a, b),
        // Python ints do not overflow; keep the wider integer.
        (false, false) => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
    }
}
