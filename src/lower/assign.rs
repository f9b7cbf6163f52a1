//! Assignments: local declarations (typed on first assignment), stores to
//! views and functor members, and locals that alias views.
use super::values::{default_dtype, widen};
use super::{cpp_ident, FnCx, VTy, Val, Var, VarKind};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{Expr, ExprKind, Stmt};
use crate::types::{Layout, Ty, ViewTy};

impl FnCx<'_> {
    /// Creates or widens a local. Python rebinds freely; we keep one C++
    /// variable whose type is the join of everything assigned to it.
    pub(super) fn declare_local(
        &mut self,
        name: &str,
        ty: Ty,
        annotated: bool,
        kind: VarKind,
        span: crate::frontend::ast::Span,
    ) -> KResult<()> {
        let assignable_acc = self.acc_assignable(name);
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
                    VarKind::Acc if assignable_acc => {}
                    VarKind::Acc => return type_error(span, format!("assign to the accumulator '{name}' with '{name} += ...' (or pass reducer=pk.Max, pk.Min, ... to pk.parallel_reduce)")),
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

    pub(super) fn assign(
        &mut self,
        target: &Expr,
        ann: Option<&Expr>,
        value: Option<&Expr>,
        s: &Stmt,
    ) -> KResult<()> {
        if let ExprKind::Name(n) = &target.kind {
            if self.list_local(n, ann, value, s)? {
                return Ok(());
            }
        }
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
    pub(super) fn view_local(
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
    pub(super) fn is_functor_member(&self, target: &Expr) -> bool {
        matches!(&target.kind, ExprKind::Attr(b, _)
            if matches!(&b.kind, ExprKind::Name(n) if n == "self") && !self.vars.contains_key("self"))
    }

    pub(super) fn member_is_read_only(&self, target: &Expr) -> KResult<()> {
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
    pub(super) fn root_view(&self, e: &Expr) -> Option<String> {
        self.root_view_var(e).map(|v| v.cpp.clone())
    }

    /// The view variable a (sub)view expression starts from.
    pub(super) fn root_view_var(&self, e: &Expr) -> Option<&Var> {
        let mut cur = e;
        while let ExprKind::Index(b, _) = &cur.kind {
            cur = b;
        }
        let key = match &cur.kind {
            ExprKind::Name(n) => self.name_key(n),
            ExprKind::Attr(b, a) if matches!(&b.kind, ExprKind::Name(s) if s == "self") => {
                format!("self.{a}")
            }
            _ => return None,
        };
        self.vars.get(&key).filter(|v| matches!(v.ty, Ty::View(_)))
    }

    /// The variable a bare name stands for: a functor's member `self.n` when
    /// no local or parameter is called `n` (the C++ operator() upstream
    /// generates reads members by their bare names), else `n`.
    pub(super) fn name_key(&self, n: &str) -> String {
        if !self.vars.contains_key(n) && !self.vars.contains_key("self") {
            let member = format!("self.{n}");
            if self.vars.contains_key(&member) {
                return member;
            }
        }
        n.to_string()
    }
}
