//! Views every work item of a one-dimensional launch indexes at `i + c` (the
//! work index plus an integer literal) in their first dimension, so the launch
//! can be refused before it runs when a view is too short for its range: a
//! read past the end returns garbage, a write corrupts the heap. Only accesses
//! that run in every work item count: statements at the body's top level,
//! before anything that may return, outside branches, loops and the
//! short-circuit parts of `and`, `or`, `a if c else b` and chained compares.
use super::access::rebinds;
use crate::frontend::ast::{BinOp, Expr, ExprKind, FunctionDef, Index, Span, Stmt, StmtKind};
use std::collections::BTreeMap;

/// The offsets `c` of a view's certain `v[i + c]` accesses: the smallest and
/// the largest, with the source of one access that reaches each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    pub min: (i64, Span),
    pub max: (i64, Span),
}

/// When an access runs in every work item: always, or inside a loop
/// `for j in range(n)` whose count is the scalar parameter `n` (it runs when
/// the launch passes n > 0).
pub type Guard = Option<String>;

/// Per view parameter (by name, or member name for `self.v` in a functor
/// method) and guard, the offsets every work item indexes at. `index` is the
/// work index parameter; a body that rebinds it has none.
pub fn certain_reach(def: &FunctionDef, index: &str) -> BTreeMap<(String, Guard), Reach> {
    let mut out = BTreeMap::new();
    if !rebinds(&def.body, index) {
        block(&def.body, index, &None, &mut out);
    }
    // A loop count the body assigns is not the one the launch passes.
    out.retain(|(_, g), _| g.as_ref().is_none_or(|g| !rebinds(&def.body, g)));
    out
}

type Out = BTreeMap<(String, Guard), Reach>;

/// The certain accesses of `body`'s statements, up to the first that may not
/// fall through; whether all of them do.
fn block(body: &[Stmt], index: &str, guard: &Guard, out: &mut Out) -> bool {
    for s in body {
        let at = |e: &Expr, out: &mut Out| expr(e, index, guard, out);
        let more = match &s.kind {
            StmtKind::Assign { target, value, .. } => {
                if let Some(v) = value {
                    at(v, out);
                }
                at(target, out);
                true
            }
            StmtKind::AugAssign { target, value, .. } => {
                at(value, out);
                at(target, out);
                true
            }
            StmtKind::Expr(e) => {
                at(e, out);
                true
            }
            StmtKind::Return(e) => {
                if let Some(e) = e {
                    at(e, out);
                }
                false
            }
            // `for j in range(n)`: its body runs (once at least) when n > 0.
            StmtKind::For {
                start,
                stop,
                step: None,
                body: inner,
                ..
            } if guard.is_none() && matches!(start.kind, ExprKind::Int(0)) => {
                at(stop, out);
                let g = match &stop.kind {
                    ExprKind::Int(n) if *n > 0 => Some(None),
                    ExprKind::Name(n) => Some(Some(n.clone())),
                    _ => None,
                };
                if let Some(g) = g {
                    block(inner, index, &g, out);
                }
                !returns(inner) && !breaks(inner)
            }
            // A branch may hold a `return`, `break` or `continue`, a loop a
            // `return`: what follows may not run.
            StmtKind::If { test, .. } => {
                at(test, out);
                !returns(std::slice::from_ref(s)) && !breaks(std::slice::from_ref(s))
            }
            StmtKind::While { test, .. } => {
                at(test, out);
                !returns(std::slice::from_ref(s))
            }
            StmtKind::Break | StmtKind::Continue => false,
            _ => !returns(std::slice::from_ref(s)),
        };
        if !more {
            return false;
        }
    }
    true
}

fn breaks(body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Break | StmtKind::Continue => true,
        StmtKind::If { body, orelse, .. } => breaks(body) || breaks(orelse),
        _ => false,
    })
}

fn returns(body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If { body, orelse, .. } => returns(body) || returns(orelse),
        StmtKind::For { body, .. } | StmtKind::While { body, .. } => returns(body),
        _ => false,
    })
}

/// Records the certain accesses in `e` (evaluated whenever it is).
fn expr(e: &Expr, index: &str, guard: &Guard, out: &mut Out) {
    match &e.kind {
        ExprKind::Index(base, items) => {
            if let Some((name, first)) = root(base, items) {
                if let Some(c) = offset(first, index) {
                    let r = out.entry((name, guard.clone())).or_insert(Reach {
                        min: (c, e.span),
                        max: (c, e.span),
                    });
                    if c < r.min.0 {
                        r.min = (c, e.span);
                    }
                    if c > r.max.0 {
                        r.max = (c, e.span);
                    }
                }
            }
            expr(base, index, guard, out);
            for it in items {
                if let Index::At(x) = it {
                    expr(x, index, guard, out);
                }
            }
        }
        ExprKind::Bin(_, a, b) => {
            expr(a, index, guard, out);
            expr(b, index, guard, out);
        }
        ExprKind::Unary(_, a) => expr(a, index, guard, out),
        ExprKind::Call { args, kwargs, .. } => {
            args.iter().for_each(|a| expr(a, index, guard, out));
            kwargs.iter().for_each(|(_, a)| expr(a, index, guard, out));
        }
        // Only the parts that always run.
        ExprKind::BoolOp(_, xs) => xs.iter().take(1).for_each(|x| expr(x, index, guard, out)),
        ExprKind::IfExp(test, _, _) => expr(test, index, guard, out),
        ExprKind::Compare(a, rest) => {
            expr(a, index, guard, out);
            if let Some((_, b)) = rest.first() {
                expr(b, index, guard, out);
            }
        }
        ExprKind::Tuple(xs) => xs.iter().for_each(|x| expr(x, index, guard, out)),
        _ => {}
    }
}

/// The view at the root of an index chain and the index of its first
/// dimension: `v[a]`, `v[a, b]`, `v[a][b]`, `self.v[a]`.
fn root<'e>(base: &'e Expr, items: &'e [Index]) -> Option<(String, &'e Expr)> {
    match &base.kind {
        ExprKind::Index(inner, first) => root(inner, first),
        ExprKind::Name(n) => match items.first()? {
            Index::At(x) => Some((n.clone(), x)),
            Index::Slice(..) => None,
        },
        ExprKind::Attr(s, n) if matches!(&s.kind, ExprKind::Name(x) if x == "self") => {
            match items.first()? {
                Index::At(x) => Some((n.clone(), x)),
                Index::Slice(..) => None,
            }
        }
        _ => None,
    }
}

/// `c` where `x` is `i`, `i + c`, `c + i` or `i - c`.
fn offset(x: &Expr, index: &str) -> Option<i64> {
    let is_i = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == index);
    let lit = |e: &Expr| match &e.kind {
        ExprKind::Int(c) => Some(*c),
        _ => None,
    };
    match &x.kind {
        _ if is_i(x) => Some(0),
        ExprKind::Bin(BinOp::Add, a, b) if is_i(a) => lit(b),
        ExprKind::Bin(BinOp::Add, a, b) if is_i(b) => lit(a),
        ExprKind::Bin(BinOp::Sub, a, b) if is_i(a) => lit(b).and_then(i64::checked_neg),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::parse::parse_function;

    fn reach(src: &str) -> BTreeMap<String, (i64, i64)> {
        let def = parse_function(src).unwrap();
        certain_reach(&def, "i")
            .into_iter()
            .map(|((k, g), r)| {
                (
                    g.map_or(k.clone(), |g| format!("{k} if {g}")),
                    (r.min.0, r.max.0),
                )
            })
            .collect()
    }

    #[test]
    fn top_level_accesses_count_and_guarded_ones_do_not() {
        let r = reach("def k(i, x, y, z, w):\n    y[i] = x[i + 1] - x[i - 2]\n    if i < 5:\n        z[i] = 0.0\n    w[i][0] = z[i] if i > 0 else 1.0\n");
        assert_eq!(r.get("x"), Some(&(-2, 1)));
        assert_eq!(r.get("y"), Some(&(0, 0)));
        assert_eq!(r.get("w"), Some(&(0, 0)));
        assert_eq!(r.get("z"), None);
    }

    #[test]
    fn nothing_after_a_possible_return_or_a_rebound_index() {
        let r = reach("def k(i, x, y):\n    if i >= 4:\n        return\n    y[i] = x[i]\n");
        assert!(r.is_empty());
        let r = reach("def k(i, x):\n    i = i * 2\n    x[i] = 1.0\n");
        assert!(r.is_empty());
        let r = reach("def k(i, x, y):\n    ok = i < 3 and x[i] > 0\n    y[i + 0] = 1.0\n");
        assert_eq!(r.get("x"), None);
        assert_eq!(r.get("y"), Some(&(0, 0)));
    }

    #[test]
    fn a_counted_loop_runs_its_body_when_its_count_is_positive() {
        let r = reach("def k(i, out, a, n):\n    for j in range(n):\n        out[i][j] = a[i + 1][0]\n    for j in range(3):\n        a[i][j] = 0\n    for j in range(0, n, 2):\n        out[i + 5][j] = 0\n");
        assert_eq!(r.get("out if n"), Some(&(0, 0)));
        assert_eq!(r.get("a if n"), Some(&(1, 1)));
        assert_eq!(r.get("a"), Some(&(0, 0)));
        assert_eq!(r.len(), 3);
        let r = reach("def k(i, x, y, n):\n    for j in range(n):\n        if i == 0:\n            continue\n        y[i] = x[i - 1]\n");
        assert!(r.is_empty());
        let r = reach(
            "def k(i, x, n):\n    n = n - i - 1\n    for j in range(n):\n        x[i + 1] = 0.0\n",
        );
        assert!(r.is_empty());
    }
}
