//! Statements. Locals are hoisted (see `FnCx::declarations`); loops bind their
//! variable from a hidden counter so rebinding it in the body cannot derail the
//! loop, as in Python.
use super::{FnCx, VTy, VarKind};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{Expr, ExprKind, Stmt, StmtKind};
use crate::types::{promote_weak, DType, STy, Ty};

impl FnCx<'_> {
    pub fn lower_block(&mut self, stmts: &[Stmt]) -> KResult<()> {
        for s in stmts {
            self.lower_stmt(s)?;
            if self.complex_to_real.take() {
                return type_error(
                    s.span,
                    "a complex number does not convert to a real type here: take its .real, .imag or abs()",
                );
            }
        }
        Ok(())
    }

    /// `x` when `target = value` reads `acc = acc + x` or `acc = x + acc` for
    /// an accumulator `acc`.
    fn accumulation<'e>(&self, target: &Expr, value: &'e Expr) -> Option<&'e Expr> {
        use crate::frontend::ast::{BinOp, ExprKind};
        let ExprKind::Name(acc) = &target.kind else {
            return None;
        };
        if self.vars.get(acc).map(|v| v.kind) != Some(super::VarKind::Acc) {
            return None;
        }
        let is_acc = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == acc);
        match &value.kind {
            ExprKind::Bin(BinOp::Add, l, r) if is_acc(l) => Some(r),
            ExprKind::Bin(BinOp::Add, l, r) if is_acc(r) => Some(l),
            _ => None,
        }
    }

    fn lower_stmt(&mut self, s: &Stmt) -> KResult<()> {
        match &s.kind {
            StmtKind::Assign { target, ann, value } => {
                // `acc = acc + x` (or `x + acc`) is PyKokkos' other spelling of `acc += x`.
                if let Some(x) = value.as_ref().and_then(|v| self.accumulation(target, v)) {
                    return self.aug_assign(target, crate::frontend::ast::BinOp::Add, x);
                }
                self.assign(target, ann.as_ref(), value.as_ref(), s)
            }
            StmtKind::AugAssign { target, op, value } => self.aug_assign(target, *op, value),
            // Scoping only (see `lambda`): the names must exist around the def.
            StmtKind::Nonlocal(names) => match names.iter().find(|n| !self.vars.contains_key(*n)) {
                Some(n) => type_error(
                    s.span,
                    format!("nonlocal '{n}' names no variable of this kernel (kernels cannot assign Python's variables; return the value or pass a View to write into)"),
                ),
                None => Ok(()),
            },
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
                // How long a while loop runs depends on its data.
                self.unit.uneven = true;
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

    /// Whether a `for` loop may run a different number of times from one
    /// work item to the next in a way that follows the item: its bounds read
    /// the work index (a triangular `range(i + 1, n)`), or a parameter of the
    /// function it is in (called with the index, perhaps), or it stops early
    /// (`break`, `return`: an escape-time loop). A bound read from a view
    /// (`range(num_neighs[i])`) counts as even, as Kokkos' schedule takes it.
    fn uneven_loop(&self, bounds: [Option<&Expr>; 3], body: &[Stmt]) -> bool {
        let mut reads = false;
        for e in bounds.into_iter().flatten() {
            crate::frontend::ast::walk_expr(e, &mut |x| {
                if let ExprKind::Name(n) = &x.kind {
                    reads |= self.vars.get(n).is_some_and(|v| match v.kind {
                        VarKind::Index => true,
                        VarKind::FnParam => !self.is_workunit,
                        _ => false,
                    });
                }
            });
        }
        reads || crate::frontend::ast::exits_early(body)
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
        if self.uneven_loop([Some(start), Some(stop), step], body) {
            self.unit.uneven = true;
        }
        self.nested(body)?;
        self.loop_depth -= 1;
        self.line("}");
        Ok(())
    }
}
