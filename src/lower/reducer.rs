//! The accumulator of a reduction through a built-in reducer (`reducer=`):
//! plain assignment for the scalar reducers (`if x > acc: acc = x` under
//! pk.Max), and the fields of the struct ones (`acc.val`, `acc.loc` under
//! pk.MinLoc; `acc.min_val`, `acc.max_val`, ... under pk.MinMax(Loc)).
use super::values::field_val;
use super::{FnCx, Val, VarKind};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::Expr;
use crate::types::{DType, Reducer, Ty};

impl FnCx<'_> {
    /// The reducer of the accumulator named `n`, if it is one.
    fn reducer_of(&self, n: &str) -> Option<Reducer> {
        match &self.reducer {
            Some((acc, r))
                if acc == n && self.vars.get(n).map(|v| v.kind) == Some(VarKind::Acc) =>
            {
                Some(*r)
            }
            _ => None,
        }
    }

    /// Whether `acc = x` may assign the accumulator `n` (a scalar built-in reducer).
    pub(super) fn acc_assignable(&self, n: &str) -> bool {
        self.reducer_of(n).is_some_and(|r| r.fields().is_empty())
    }

    /// A read of the accumulator `n` by itself: refused for the struct reducers.
    pub(super) fn check_acc_read(&self, n: &str, e: &Expr) -> KResult<()> {
        match self.reducer_of(n) {
            Some(r) if !r.fields().is_empty() => {
                let names: Vec<String> =
                    r.fields().iter().map(|(f, _)| format!("{n}.{f}")).collect();
                type_error(
                    e.span,
                    format!(
                        "under reducer=pk.{} the accumulator is a record: use {}",
                        r.name(),
                        names.join(", ")
                    ),
                )
            }
            _ => Ok(()),
        }
    }

    /// `acc.field` of a struct reducer's accumulator `n`: Some(value), or None
    /// when `n` is not such an accumulator.
    pub(super) fn acc_field(&mut self, n: &str, attr: &str, e: &Expr) -> KResult<Option<Val>> {
        let Some(r) = self.reducer_of(n) else {
            return Ok(None);
        };
        let var = &self.vars[n];
        let d = match var.ty {
            Ty::Scalar(d) => d,
            _ => DType::F64,
        };
        let base = Val {
            code: var.cpp.clone(),
            ty: super::VTy::Void,
            lit: None,
        };
        match r.fields().iter().find(|(f, _)| *f == attr) {
            Some((_, true)) => Ok(Some(field_val(&base, attr, Ty::Scalar(DType::I64)))),
            Some((_, false)) => Ok(Some(field_val(&base, attr, Ty::Scalar(d)))),
            None if r.fields().is_empty() => type_error(
                e.span,
                format!("under reducer=pk.{} the accumulator '{n}' is a number and has no field '.{attr}'", r.name()),
            ),
            None => {
                let names: Vec<&str> = r.fields().iter().map(|(f, _)| *f).collect();
                type_error(
                    e.span,
                    format!("the pk.{} accumulator has the fields {}, not '.{attr}'", r.name(), names.join(", ")),
                )
            }
        }
    }
}
