//! Fixed-size list locals: `x: List[int] = [a, b]`, `y = [0.0] * 3`. A list
//! is a C array on the kernel's stack, seen through an unmanaged View of it,
//! so indexing, `len` and `extent` work as they do on views (and on the GPU:
//! the array lives in the thread's own memory).
use super::values::default_dtype;
use super::{cpp_ident, FnCx, VTy, Var, VarKind};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::{BinOp, Expr, ExprKind, Index, Stmt};
use crate::types::{promote_weak, Layout, Ty, ViewTy};

/// `List[T]` / `list[T]` (also `typing.List[T]`): the element annotation.
fn list_element(ann: &Expr) -> Option<&Expr> {
    let ExprKind::Index(base, items) = &ann.kind else {
        return None;
    };
    let named = match &base.kind {
        ExprKind::Name(n) => n == "List" || n == "list",
        ExprKind::Attr(_, a) => a == "List",
        _ => false,
    };
    match (named, items.as_slice()) {
        (true, [Index::At(t)]) => Some(t),
        _ => None,
    }
}

/// The items of `[a, b, ...]` and how often they repeat (`[0] * n`).
fn list_items(e: &Expr) -> Option<(&[Expr], usize)> {
    match &e.kind {
        ExprKind::Tuple(xs) => Some((xs.as_slice(), 1)),
        ExprKind::Bin(BinOp::Mul, l, r) => match (&l.kind, &r.kind) {
            (ExprKind::Tuple(xs), ExprKind::Int(n)) | (ExprKind::Int(n), ExprKind::Tuple(xs)) => {
                Some((xs.as_slice(), usize::try_from(*n).ok()?))
            }
            _ => None,
        },
        _ => None,
    }
}

impl FnCx<'_> {
    /// Lowers `n = [...]` (with or without a `List[T]` annotation) when it is
    /// one; false when the assignment is something else.
    pub(super) fn list_local(
        &mut self,
        n: &str,
        ann: Option<&Expr>,
        value: Option<&Expr>,
        s: &Stmt,
    ) -> KResult<bool> {
        let element = ann.and_then(list_element);
        let items = value.and_then(list_items);
        let (items, times) = match (element, items) {
            (None, None) => return Ok(false),
            (_, Some(x)) => x,
            (Some(_), None) => {
                return type_error(
                    value.map_or(s.span, |v| v.span),
                    format!("'{n}' is a List: give it its elements, as in {n}: List[int] = [a, b] or [0] * 3"),
                )
            }
        };
        let mut vals = Vec::new();
        for e in items {
            let v = self.expr(e)?;
            if !matches!(v.ty, VTy::S(_)) {
                return type_error(
                    e.span,
                    format!("list elements are numbers, not {}", v.ty.describe()),
                );
            }
            vals.push(v);
        }
        let len = vals.len() * times;
        if len == 0 {
            return type_error(
                s.span,
                format!(
                    "'{n}' would be an empty list: kernel lists have a fixed size of at least 1"
                ),
            );
        }
        let dt = match element {
            Some(t) => match self.annotation(t)? {
                Ty::Scalar(d) => d,
                other => {
                    return type_error(
                        t.span,
                        format!("list elements are numbers, not {}", other.describe()),
                    )
                }
            },
            None => default_dtype(
                vals.iter()
                    .filter_map(|v| match v.ty {
                        VTy::S(st) => Some(st),
                        _ => None,
                    })
                    .reduce(promote_weak)
                    .expect("at least one element"),
            ),
        };
        let vt = ViewTy {
            dtype: dt,
            rank: 1,
            layout: Layout::Right,
            atomic: false,
        };
        let cpp = cpp_ident(n);
        let data = format!("{cpp}__items");
        let storage = format!("{n} (list items)"); // never a Python name
        let cells = format!("{data}[{len}]");
        match (self.vars.get(n), self.vars.get(&storage)) {
            (None, _) => {
                let view = format!("Kokkos::View<{}*, Kokkos::AnonymousSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>", dt.cpp());
                for (key, c, decl) in [(storage.clone(), cells, dt.cpp().to_string()), (n.to_string(), cpp.clone(), view)] {
                    self.vars.insert(
                        key.clone(),
                        Var { ty: Ty::View(vt), weak: false, kind: VarKind::Local, cpp: c, annotated: true, decl: Some(decl) },
                    );
                    self.decl_order.push(key);
                }
                self.changed = true;
            }
            (Some(v), Some(st)) if v.ty == Ty::View(vt) && st.cpp == cells => {}
            (Some(v), _) => {
                return type_error(
                    s.span,
                    format!("'{n}' was first assigned {} and now a list of {len} {}: a kernel local keeps one kind (and a list one size)", v.ty.describe(), dt.name()),
                )
            }
        }
        for k in 0..len {
            let code = self.coerce(&vals[k % vals.len()], dt);
            self.line(&format!("{data}[{k}] = {code};"));
        }
        self.line(&format!("{cpp} = decltype({cpp})({data}, {len});"));
        Ok(true)
    }
}
