//! `pk.TeamThreadMDRange(m, n0, n1[, n2])` (and the vector forms) in a team
//! kernel's nested `pk.parallel_for`. Kokkos 3.4 has no multi-dimensional
//! team ranges: the body runs over the flat range of n0 * n1 (* n2) items,
//! each split back into its indices (the last one fastest), which gives every
//! index tuple exactly once, as the MD range does.
use super::{FnCx, VTy, VarKind};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::{Expr, ExprKind, FunctionDef};
use crate::types::{DType, Ty};

const MD_RANGES: &[(&str, &str)] = &[
    ("TeamThreadMDRange", "Kokkos::TeamThreadRange"),
    ("ThreadVectorMDRange", "Kokkos::ThreadVectorRange"),
    ("TeamVectorMDRange", "Kokkos::TeamVectorRange"),
];

/// A multi-dimensional team range: the flat Kokkos range and the extents.
pub(super) struct MdRange {
    kokkos: &'static str,
    member: String,
    extents: Vec<String>,
}

impl FnCx<'_> {
    /// `e` as a multi-dimensional team range, if it is one.
    pub(super) fn md_range(&mut self, e: &Expr) -> KResult<Option<MdRange>> {
        let ExprKind::Call { func, args, .. } = &e.kind else {
            return Ok(None);
        };
        let Some((_, name)) = func.dotted() else {
            return Ok(None);
        };
        let Some((_, kokkos)) = MD_RANGES.iter().find(|(p, _)| *p == name) else {
            return Ok(None);
        };
        if !(3..=4).contains(&args.len()) {
            return type_error(
                e.span,
                format!("pk.{name} takes (team_member, n0, n1) or (team_member, n0, n1, n2)"),
            );
        }
        let Some(member) = self.team_member(&args[0]) else {
            return type_error(
                args[0].span,
                format!("the first argument of pk.{name} must be the workunit's team member"),
            );
        };
        let mut extents = Vec::new();
        for a in &args[1..] {
            let v = self.expr(a)?;
            if !matches!(&v.ty, VTy::S(st) if st.dt.is_int()) {
                return type_error(
                    a.span,
                    format!(
                        "the extents of pk.{name} must be integers, not {}",
                        v.ty.describe()
                    ),
                );
            }
            let n = format!("pk_md{}_{}", e.span.start, extents.len());
            self.line(&format!("const int64_t {n} = (int64_t)({});", v.code));
            extents.push(n);
        }
        Ok(Some(MdRange {
            kokkos,
            member,
            extents,
        }))
    }

    /// `pk.parallel_for(md_range, body)` with body taking one index per extent.
    pub(super) fn md_for(&mut self, r: MdRange, def: &FunctionDef) -> KResult<()> {
        if def.params.len() != r.extents.len() {
            return type_error(
                def.span,
                format!(
                    "'{}' runs over {} dimensions: it must take {} indices",
                    def.name,
                    r.extents.len(),
                    r.extents.len()
                ),
            );
        }
        let params: Vec<_> = def
            .params
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    Ty::Scalar(DType::I64),
                    VarKind::Index,
                    "const int64_t".to_string(),
                )
            })
            .collect();
        let body = self.lambda(def, &params)?;
        let total = r.extents.join(" * ");
        self.line(&format!(
            "Kokkos::parallel_for({}({}, {total}), [&](const int64_t pk_flat) {{",
            r.kokkos, r.member
        ));
        // Split the flat index, the last dimension fastest.
        let mut rest = "pk_flat".to_string();
        let n = r.extents.len();
        let mut split = Vec::new();
        for d in (0..n).rev() {
            let name = super::cpp_ident(&def.params[d].name);
            if d == 0 {
                split.push(format!("  const int64_t {name} = {rest};"));
            } else {
                split.push(format!(
                    "  const int64_t {name} = {rest} % {};",
                    r.extents[d]
                ));
                rest = format!("({rest} / {})", r.extents[d]);
            }
        }
        for l in split.into_iter().rev() {
            self.line(&l);
        }
        self.raw(&body);
        self.line("});");
        Ok(())
    }
}
