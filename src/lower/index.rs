//! Indexing: view elements (`v[i]`, `v[i][j]`, `v[i, j]`), subview slices and
//! the bounds of each dimension, typed as NumPy would.
use super::values::{cpp_string, scalar};
use super::{FnCx, Lit, VTy, Val};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{Expr, ExprKind, Index};
use crate::types::{DType, Layout, STy, ViewTy};

impl FnCx<'_> {
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
            // `x[i]`, or `self.x[i]` in a workunit method (its member's key).
            let key = match &base.kind {
                ExprKind::Name(n) => Some(self.name_key(n)),
                ExprKind::Attr(b, a) if matches!(&b.kind, ExprKind::Name(s) if s == "self") => {
                    Some(format!("self.{a}"))
                }
                _ => None,
            };
            if let (Some(n), [Index::At(at)]) = (key, idx.as_slice()) {
                if let Some((cpp, dt)) = self.elem_locals.get(n.as_str()) {
                    // A view a fused kernel keeps in a register (a dead
                    // temporary, or a member loaded once per work item): the
                    // access analysis found it only ever indexed by the work
                    // index. Checked again here: anything else must not build
                    // (the region then runs launch by launch).
                    let at_work_index = matches!(&at.kind, ExprKind::Name(i)
                        if self.vars.get(i.as_str()).is_some_and(|v| v.kind == super::VarKind::Index));
                    if !at_work_index {
                        return unsupported(
                            at.span,
                            "internal error: a view kept in a register is indexed by something other than the work index",
                        );
                    }
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

    pub(super) fn apply_index(
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
        if full && self.unit.bounds_check {
            // Where and which view, for the IndexError an access outside raises.
            let loc = self.src.locate(e.span);
            let at = cpp_string(&format!("{}:{}", loc.filename, loc.line));
            let name = self
                .src
                .text
                .get(base_span.start as usize..base_span.end as usize);
            let name = cpp_string(name.unwrap_or("?"));
            return Ok(scalar(
                format!("pk::at({}, {at}, {name}, {})", base.code, args.join(", ")),
                STy::strong(vt.dtype),
            ));
        }
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

    /// An index into dimension `d` of `view`: a negative literal counts from
    /// the end, as in Python (`v[-1]`). Other indices are used as they are.
    pub(super) fn index_code(&self, v: &Val, view: &str, d: usize) -> String {
        match v.lit {
            Some(Lit::I(k)) if k < 0 => format!("((int64_t){view}.extent({d}) - {})", -k),
            _ => v.code.clone(),
        }
    }
}
