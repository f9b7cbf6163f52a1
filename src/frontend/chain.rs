//! Chained assignment `a = b = x`, rewritten into single assignments: `x` is
//! evaluated once into a temporary, then stored to each target left to right,
//! as Python does. When `x` is `t + e` for one of the targets `t` (a view
//! element) and `e` is a name or a literal, the update is one atomic
//! fetch-add: code such as `idx = count[0] = count[0] + 1` means to claim a
//! slot, which only the atomic form does when threads share `count[0]` (and
//! which gives the same result when they do not).
use super::ast::{BinOp, Expr, ExprKind, Index, Span, Stmt, StmtKind};

pub fn chained(targets: Vec<Expr>, value: Expr, at: Span) -> Vec<Stmt> {
    let tmp = Expr::new(ExprKind::Name(format!("chain_tmp_{}", at.start)), at);
    let mut out = Vec::new();
    let mut claimed = None;
    let value = match fetch_add(&targets, &value) {
        Some((k, call, e)) => {
            claimed = Some(k);
            Expr::new(ExprKind::Bin(BinOp::Add, Box::new(call), Box::new(e)), at)
        }
        None => value,
    };
    out.push(assign(tmp.clone(), value, at));
    for (k, t) in targets.into_iter().enumerate() {
        if claimed != Some(k) {
            out.push(assign(t, tmp.clone(), at));
        }
    }
    out
}

fn assign(target: Expr, value: Expr, at: Span) -> Stmt {
    Stmt {
        kind: StmtKind::Assign {
            target,
            ann: None,
            value: Some(value),
        },
        span: at,
    }
}

/// `(target index, pk.atomic_fetch_add(v, [i, ...], e), e)` when `value` is
/// `target + e` (or `e + target`) for an element target.
fn fetch_add(targets: &[Expr], value: &Expr) -> Option<(usize, Expr, Expr)> {
    let ExprKind::Bin(BinOp::Add, l, r) = &value.kind else {
        return None;
    };
    for (elem, e) in [(l, r), (r, l)] {
        let simple = matches!(
            e.kind,
            ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Imag(_)
        );
        let Some(k) = targets.iter().position(|t| same(t, elem)) else {
            continue;
        };
        let (view, idx) = match flatten(elem) {
            Some(x) if simple && !x.1.is_empty() => x,
            _ => continue,
        };
        let at = value.span;
        let func = Expr::new(
            ExprKind::Attr(
                Box::new(Expr::new(ExprKind::Name("pk".into()), at)),
                "atomic_fetch_add".into(),
            ),
            at,
        );
        let call = Expr::new(
            ExprKind::Call {
                func: Box::new(func),
                args: vec![view, Expr::new(ExprKind::Tuple(idx), at), (**e).clone()],
                kwargs: Vec::new(),
            },
            at,
        );
        return Some((k, call, (**e).clone()));
    }
    None
}

/// `v[i][j]` or `v[i, j]` -> (v, [i, j]); None for slices.
fn flatten(e: &Expr) -> Option<(Expr, Vec<Expr>)> {
    match &e.kind {
        ExprKind::Index(base, items) => {
            let (root, mut idx) = match &base.kind {
                ExprKind::Index(..) => flatten(base)?,
                _ => (base.as_ref().clone(), Vec::new()),
            };
            for it in items {
                match it {
                    Index::At(x) => idx.push(x.clone()),
                    Index::Slice(..) => return None,
                }
            }
            Some((root, idx))
        }
        _ => None,
    }
}

/// Structural equality, ignoring where the expressions are.
fn same(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Name(x), ExprKind::Name(y)) => x == y,
        (ExprKind::Int(x), ExprKind::Int(y)) => x == y,
        (ExprKind::Attr(x, n), ExprKind::Attr(y, m)) => n == m && same(x, y),
        (ExprKind::Index(x, xs), ExprKind::Index(y, ys)) => {
            same(x, y)
                && xs.len() == ys.len()
                && xs.iter().zip(ys).all(|p| match p {
                    (Index::At(u), Index::At(v)) => same(u, v),
                    _ => false,
                })
        }
        _ => false,
    }
}
