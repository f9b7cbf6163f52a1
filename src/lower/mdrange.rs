//! `pk.TeamThreadMDRange(m, n0, n1[, n2])` (and the vector forms) in a team
//! kernel's nested `pk.parallel_for` and `pk.parallel_reduce`. Kokkos 3.4 has no multi-dimensional
//! team ranges: the body runs over the flat range of n0 * n1 (* n2) items,
//! each split back into its indices (the last one fastest), which gives every
//! index tuple exactly once, as the MD range does.
use super::{FnCx, VTy, Val, VarKind};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::{Expr, ExprKind, FunctionDef};
use crate::types::{DType, STy, Ty};

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
        let (member, bounds) = self.range_args(name, args)?;
        let mut extents = Vec::new();
        for b in bounds {
            let n = format!("pk_md{}_{}", e.span.start, extents.len());
            self.line(&format!("const int64_t {n} = {b};"));
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
        let params = self.md_params(&r, def, 0)?;
        let body = self.lambda(def, &params)?;
        self.md_loop(&r, def, "", &body);
        self.line("});");
        Ok(())
    }

    /// `pk.parallel_reduce(md_range, body)`: body takes the indices, then the
    /// accumulator; the total is the value of the call.
    pub(super) fn md_reduce(&mut self, r: MdRange, def: &FunctionDef, e: &Expr) -> KResult<Val> {
        let mut params = self.md_params(&r, def, 1)?;
        let acc = &def.params[r.extents.len()];
        let dt = self.acc_dtype(acc)?;
        params.push((
            acc.name.clone(),
            Ty::Scalar(dt),
            VarKind::Acc,
            format!("{}&", dt.cpp()),
        ));
        let body = self.lambda(def, &params)?;
        let tmp = format!("pk_red{}", e.span.start);
        self.line(&format!("{0} {tmp} = {0}();", dt.cpp()));
        let acc_param = format!(", {}& {}", dt.cpp(), super::cpp_ident(&acc.name));
        self.md_loop(&r, def, &acc_param, &body);
        self.line(&format!("}}, {tmp});"));
        Ok(Val {
            code: tmp,
            ty: VTy::S(STy::strong(dt)),
            lit: None,
        })
    }

    /// One index parameter per extent (plus `extra` after them), all checked.
    fn md_params(
        &self,
        r: &MdRange,
        def: &FunctionDef,
        extra: usize,
    ) -> KResult<Vec<(String, Ty, VarKind, String)>> {
        let n = r.extents.len();
        if def.params.len() != n + extra {
            let what = if extra == 0 {
                String::new()
            } else {
                " and the accumulator".to_string()
            };
            return type_error(
                def.span,
                format!(
                    "'{}' runs over {n} dimensions: it must take {n} indices{what}",
                    def.name
                ),
            );
        }
        Ok(def.params[..n]
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    Ty::Scalar(DType::I64),
                    VarKind::Index,
                    "const int64_t".to_string(),
                )
            })
            .collect())
    }

    /// Opens the flat loop (`parallel_for` or `parallel_reduce`) and splits
    /// the flat index, the last dimension fastest; the caller closes it.
    fn md_loop(&mut self, r: &MdRange, def: &FunctionDef, acc_param: &str, body: &str) {
        let total = r.extents.join(" * ");
        let pattern = if acc_param.is_empty() {
            "parallel_for"
        } else {
            "parallel_reduce"
        };
        self.line(&format!(
            "Kokkos::{pattern}({}({}, {total}), [&](const int64_t pk_flat{acc_param}) {{",
            r.kokkos, r.member
        ));
        let mut rest = "pk_flat".to_string();
        let mut split = Vec::new();
        for d in (0..r.extents.len()).rev() {
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
        self.raw(body);
    }
}
