//! Which view parameters a workunit reads and which it writes, from its AST.
//! Conservative where precision would need more than syntax: a view handed to a
//! `@pk.function`, aliased into a local, or touched by an atomic counts as both
//! read and written. A store after a load of the same element is a write.
use crate::frontend::ast::{Expr, ExprKind, FunctionDef, Index, Span, Stmt, StmtKind};
use crate::types::ArgTy;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Access {
    pub read: bool,
    pub write: bool,
    /// Every access is `v[i]` with `i` the work index (a rank-1 view): the
    /// condition under which work items of fused kernels cannot interfere.
    pub at_work_index: bool,
    /// Where the first access other than `v[i]` is (for explain reports).
    pub off_index: Option<Span>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
    Both,
}

struct Walk<'a> {
    ranks: &'a BTreeMap<String, u8>,
    out: BTreeMap<String, Access>,
    /// The work index parameter (None for multi-dimensional policies).
    index: Option<&'a str>,
}

/// The work index parameter of a one-dimensional launch.
pub fn work_index(def: &FunctionDef, is_method: bool, rank: usize) -> Option<&str> {
    if rank != 1 {
        return None;
    }
    def.params.get(is_method as usize).map(|p| p.name.as_str())
}

/// Access of each view argument (by name) of one launch; `index` names the
/// work index parameter of a one-dimensional launch.
pub fn view_access(
    def: &FunctionDef,
    args: &[(String, ArgTy)],
    index: Option<&str>,
) -> BTreeMap<String, Access> {
    let ranks: BTreeMap<String, u8> = args
        .iter()
        .filter_map(|(n, t)| match t {
            ArgTy::View(v) => Some((n.clone(), v.rank)),
            _ => None,
        })
        .collect();
    let mut w = Walk {
        ranks: &ranks,
        out: BTreeMap::new(),
        index,
    };
    w.block(&def.body);
    w.out
}

fn root(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(n) => Some(n),
        ExprKind::Attr(b, a) if matches!(&b.kind, ExprKind::Name(s) if s == "self") => Some(a),
        ExprKind::Index(b, _) => root(b),
        _ => None,
    }
}

/// Number of indices applied to the root of an index chain.
fn depth(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Index(b, items) => depth(b) + items.len(),
        _ => 0,
    }
}

impl Walk<'_> {
    fn mark(&mut self, name: &str, m: Mode, at: Span) {
        self.mark_at(name, m, false, at);
    }

    fn mark_at(&mut self, name: &str, m: Mode, at_work_index: bool, at: Span) {
        if !self.ranks.contains_key(name) {
            return;
        }
        let first = !self.out.contains_key(name);
        let a = self.out.entry(name.to_string()).or_default();
        a.read |= m != Mode::Write;
        a.write |= m != Mode::Read;
        a.at_work_index = (first || a.at_work_index) && at_work_index;
        if !at_work_index && a.off_index.is_none() {
            a.off_index = Some(at);
        }
    }

    /// `v[i]` (or `self.v[i]`) with `i` the work index and `v` of rank 1.
    fn is_work_index_access(&self, e: &Expr) -> bool {
        let (ExprKind::Index(base, items), Some(idx)) = (&e.kind, self.index) else {
            return false;
        };
        let direct = matches!(&base.kind, ExprKind::Name(_))
            || matches!(&base.kind, ExprKind::Attr(b, _) if matches!(&b.kind, ExprKind::Name(s) if s == "self"));
        let at_i = matches!(items.as_slice(), [Index::At(x)] if matches!(&x.kind, ExprKind::Name(n) if n == idx));
        direct && at_i && root(e).is_some_and(|n| self.ranks.get(n) == Some(&1))
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign { target, value, .. } => {
                if let Some(v) = value {
                    // `row = A[j]` or `B = A` aliases the view: treat as both.
                    let aliasing =
                        matches!(target.kind, ExprKind::Name(_)) && self.is_view_value(v);
                    self.expr(v, if aliasing { Mode::Both } else { Mode::Read });
                }
                self.target(target, Mode::Write);
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.expr(value, Mode::Read);
                self.target(target, Mode::Both);
            }
            StmtKind::If { test, body, orelse } => {
                self.expr(test, Mode::Read);
                self.block(body);
                self.block(orelse);
            }
            StmtKind::For {
                start,
                stop,
                step,
                body,
                ..
            } => {
                for e in [Some(start), Some(stop), step.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    self.expr(e, Mode::Read);
                }
                self.block(body);
            }
            StmtKind::While { test, body } => {
                self.expr(test, Mode::Read);
                self.block(body);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.expr(e, Mode::Read),
            // A nested def runs inside the kernel (team patterns): its accesses count.
            StmtKind::Def(d) => self.block(&d.body),
            _ => {}
        }
    }

    fn is_view_value(&self, e: &Expr) -> bool {
        match root(e) {
            Some(n) => self.ranks.get(n).is_some_and(|r| depth(e) < *r as usize),
            None => false,
        }
    }

    fn target(&mut self, t: &Expr, m: Mode) {
        if let ExprKind::Index(..) = &t.kind {
            if let Some(n) = root(t) {
                let wi = self.is_work_index_access(t);
                self.mark_at(n, m, wi, t.span);
            }
            self.indices(t);
        }
    }

    fn indices(&mut self, e: &Expr) {
        if let ExprKind::Index(b, items) = &e.kind {
            self.indices(b);
            for it in items {
                match it {
                    Index::At(x) => self.expr(x, Mode::Read),
                    Index::Slice(lo, hi) => {
                        for x in lo.iter().chain(hi.iter()) {
                            self.expr(x, Mode::Read);
                        }
                    }
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr, m: Mode) {
        match &e.kind {
            ExprKind::Name(n) => self.mark(n, m, e.span),
            ExprKind::Attr(b, a) => {
                if matches!(&b.kind, ExprKind::Name(s) if s == "self") {
                    self.mark(a, m, e.span);
                } else {
                    self.expr(b, Mode::Read);
                }
            }
            ExprKind::Index(..) => {
                if let Some(n) = root(e) {
                    // A partial index is a subview: it may be written through.
                    let partial = self.ranks.get(n).is_some_and(|r| depth(e) < *r as usize);
                    let wi = self.is_work_index_access(e);
                    self.mark_at(n, if partial { Mode::Both } else { m }, wi, e.span);
                }
                self.indices(e);
            }
            ExprKind::Call { func, args, kwargs } => {
                let builtin = match &func.kind {
                    ExprKind::Name(n) => matches!(
                        n.as_str(),
                        "int" | "float" | "bool" | "abs" | "min" | "max" | "round" | "len"
                    ),
                    ExprKind::Attr(b, attr) => match &b.kind {
                        ExprKind::Name(m) if m == "math" => true,
                        ExprKind::Name(m) if m == "pk" || m == "pykokkos" => {
                            !attr.starts_with("atomic")
                        }
                        _ => attr == "extent",
                    },
                    _ => false,
                };
                if let ExprKind::Attr(b, attr) = &func.kind {
                    if attr == "extent" {
                        // Metadata only: no element is touched.
                        let _ = b;
                        for a in args {
                            self.expr(a, Mode::Read);
                        }
                        return;
                    }
                }
                let mode = if builtin { Mode::Read } else { Mode::Both };
                for a in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
                    self.expr(a, mode);
                }
                // `self.m(...)`: a functor's @pk.function method may read and
                // write any member, anywhere; until method bodies are followed,
                // every member view counts as read and written off the index.
                if matches!(&func.kind, ExprKind::Attr(b, _) if matches!(&b.kind, ExprKind::Name(s) if s == "self"))
                {
                    let members: Vec<String> = self.ranks.keys().cloned().collect();
                    for n in members {
                        self.mark(&n, Mode::Both, e.span);
                    }
                }
            }
            ExprKind::Bin(_, a, b) => {
                self.expr(a, Mode::Read);
                self.expr(b, Mode::Read);
            }
            ExprKind::Unary(_, a) => self.expr(a, Mode::Read),
            ExprKind::BoolOp(_, xs) | ExprKind::Tuple(xs) => {
                xs.iter().for_each(|x| self.expr(x, Mode::Read))
            }
            ExprKind::Compare(a, rest) => {
                self.expr(a, Mode::Read);
                rest.iter().for_each(|(_, x)| self.expr(x, Mode::Read));
            }
            ExprKind::IfExp(a, b, c) => {
                self.expr(a, Mode::Read);
                self.expr(b, m);
                self.expr(c, m);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::parse::parse_function;
    use crate::types::{DType, Layout, ViewTy};

    fn v(n: &str, rank: u8) -> (String, ArgTy) {
        (
            n.into(),
            ArgTy::View(ViewTy {
                dtype: DType::F64,
                rank,
                layout: Layout::Right,
                atomic: false,
            }),
        )
    }

    #[test]
    fn read_then_store_same_element_is_a_write() {
        let f = parse_function("def k(i, a):\n    x = a[i]\n    a[i] = x + 1\n").unwrap();
        let acc = view_access(&f, &[v("a", 1)], Some("i"));
        assert_eq!(
            acc["a"],
            Access {
                read: true,
                write: true,
                at_work_index: true,
                off_index: None,
            }
        );
    }

    #[test]
    fn copy_reads_src_writes_dst_and_ignores_unused() {
        let f = parse_function("def k(i, dst, src, unused):\n    dst[i] = src[i]\n").unwrap();
        let acc = view_access(&f, &[v("dst", 1), v("src", 1), v("unused", 1)], Some("i"));
        assert_eq!(
            acc["dst"],
            Access {
                read: false,
                write: true,
                at_work_index: true,
                off_index: None,
            }
        );
        assert_eq!(
            acc["src"],
            Access {
                read: true,
                write: false,
                at_work_index: true,
                off_index: None,
            }
        );
        assert!(!acc.contains_key("unused"));
    }

    #[test]
    fn views_given_to_functions_and_atomics_are_read_and_written() {
        let f = parse_function(
            "def k(i, a, b, c):\n    f(a)\n    pk.atomic_add(b, [0], 1)\n    r = c[i]\n",
        )
        .unwrap();
        let acc = view_access(&f, &[v("a", 1), v("b", 1), v("c", 2)], Some("i"));
        assert!(acc["a"].write && acc["b"].write && acc["c"].write);
    }

    #[test]
    fn only_plain_work_index_accesses_qualify() {
        let src = "def k(i, a, b, c, d, e):\n    a[i] = b[i + 1]\n    c[0] = 1\n    for j in range(i):\n        d[j] = 0\n    e[i] = e[i] * 2\n";
        let f = parse_function(src).unwrap();
        let acc = view_access(
            &f,
            &[v("a", 1), v("b", 1), v("c", 1), v("d", 1), v("e", 1)],
            Some("i"),
        );
        assert!(acc["a"].at_work_index && acc["e"].at_work_index);
        assert!(!acc["b"].at_work_index && !acc["c"].at_work_index && !acc["d"].at_work_index);
    }

    #[test]
    fn a_functor_method_call_touches_every_member() {
        // `self.put(i, 1.0)` may write `self.a` inside the method.
        let f = parse_function("def init(self, i):\n    self.put(i, 1.0)\n").unwrap();
        let acc = view_access(&f, &[v("a", 1), v("b", 2)], Some("i"));
        for n in ["a", "b"] {
            assert!(acc[n].read && acc[n].write && !acc[n].at_work_index, "{n}");
        }
    }
}
