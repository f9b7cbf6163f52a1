//! Augmented assignments (`x op= y`): plain updates, accumulator updates,
//! and one atomic operation on the elements of `trait=pk.Atomic` views.
use super::values::default_dtype;
use super::{FnCx, VTy, Val, VarKind};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::{BinOp, Expr, ExprKind};
use crate::types::{DType, STy, Ty};

impl FnCx<'_> {
    pub(super) fn aug_assign(&mut self, target: &Expr, op: BinOp, value: &Expr) -> KResult<()> {
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

    /// `v[...]` of a view created with `trait=pk.Atomic` (not a register local).
    pub(super) fn is_atomic_element(&self, target: &Expr) -> bool {
        matches!(target.kind, ExprKind::Index(..))
            && self
                .root_view_var(target)
                .is_some_and(|v| matches!(v.ty, Ty::View(vt) if vt.atomic))
    }

    /// `v[i] op= x` on a pk.Atomic view: one atomic read-modify-write, as
    /// Kokkos' Atomic memory trait gives. Updates that cannot be one atomic
    /// operation with Python's result are refused rather than left racy.
    pub(super) fn atomic_update(
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
