//! Which view parameters a workunit reads and which it writes, from its AST.
//! Calls are followed into the bodies of the `@pk.function`s and functor
//! methods they reach (when the caller can name them), with parameters bound
//! to the views passed. Conservative only where syntax cannot decide: a view
//! handed to a function that cannot be followed, aliased into a local, or
//! touched by an atomic counts as both read and written; a call to a method
//! that cannot be followed touches every member. A store after a load of the
//! same element is a write.
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
    /// Some store `v[i] = ...` runs in every work item: at the body's top
    /// level, before any `return`, not inside a branch, a loop or a callee.
    /// (A kernel that writes a temporary only under a condition leaves the
    /// other elements as they were: they cannot live in registers.)
    pub always_written: bool,
    /// Every access is in the workunit's own body (none in a function or
    /// method it calls, whose code reaches the view on its own).
    pub direct: bool,
}

/// Resolves the functions a kernel calls, so that their accesses count.
pub trait Callees {
    /// The definition that `name` (`f`, or `self.m` for a functor method)
    /// calls, with the resolver of its own free names.
    fn callee(&self, name: &str) -> Option<(&FunctionDef, &dyn Callees)>;
}

/// Deeper call chains (or recursion) fall back to the conservative rule.
const MAX_DEPTH: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
    Both,
}

/// One function body being walked: the kernel itself or a callee.
struct Walk<'a, 'o> {
    ranks: &'a BTreeMap<String, u8>,
    out: &'o mut BTreeMap<String, Access>,
    /// The work index in this body (None for multi-dimensional policies, or
    /// where the body rebinds it).
    index: Option<String>,
    /// In a callee: its parameters bound to whole views. None in the kernel,
    /// whose view parameters are the launch's arguments themselves.
    binds: Option<BTreeMap<String, String>>,
    /// Whether `self.x` names the functor's member `x` here.
    members: bool,
    /// Resolvers of plain function names and of `self.m` methods.
    funcs: Option<&'a dyn Callees>,
    methods: Option<&'a dyn Callees>,
    /// In a callee: the call in the kernel's source that led here (reports
    /// must point into the kernel's own file).
    site: Option<Span>,
    depth: usize,
    /// Branches and loops around the statement being walked.
    nested: usize,
    /// A `return` was seen: later statements may not run.
    returned: bool,
}

/// The work index parameter of a one-dimensional launch.
pub fn work_index(def: &FunctionDef, is_method: bool, rank: usize) -> Option<&str> {
    if rank != 1 {
        return None;
    }
    def.params.get(is_method as usize).map(|p| p.name.as_str())
}

/// Access of each view argument (by name) of one launch; `index` names the
/// work index parameter of a one-dimensional launch; `callees` (when given)
/// resolves the functions and methods the body calls.
pub fn view_access(
    def: &FunctionDef,
    args: &[(String, ArgTy)],
    index: Option<&str>,
    callees: Option<&dyn Callees>,
) -> BTreeMap<String, Access> {
    let ranks: BTreeMap<String, u8> = args
        .iter()
        .filter_map(|(n, t)| match t {
            ArgTy::View(v) => Some((n.clone(), v.rank)),
            _ => None,
        })
        .collect();
    let mut out = BTreeMap::new();
    let mut w = Walk {
        ranks: &ranks,
        out: &mut out,
        index: index.filter(|i| !rebinds(&def.body, i)).map(str::to_string),
        binds: None,
        members: true,
        funcs: callees,
        methods: callees,
        site: None,
        depth: 0,
        nested: 0,
        returned: false,
    };
    w.block(&def.body);
    out
}

/// Whether `body` assigns `name` (then it is no longer the work index):
/// assignment, augmented assignment, a loop variable, a nested def's parameter.
pub fn rebinds(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
            matches!(&target.kind, ExprKind::Name(n) if n == name)
        }
        StmtKind::For { var, body, .. } => var == name || rebinds(body, name),
        StmtKind::If { body, orelse, .. } => rebinds(body, name) || rebinds(orelse, name),
        StmtKind::While { body, .. } => rebinds(body, name),
        StmtKind::Def(d) => d.params.iter().any(|p| p.name == name) || rebinds(&d.body, name),
        _ => false,
    })
}

/// Number of indices applied to the root of an index chain.
fn depth(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Index(b, items) => depth(b) + items.len(),
        _ => 0,
    }
}

fn is_self(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(s) if s == "self")
}

/// Calls whose arguments are only read: casts, math, `pk.*` other than atomics.
fn reads_only(func: &Expr) -> bool {
    match &func.kind {
        ExprKind::Name(n) => matches!(
            n.as_str(),
            "int" | "float" | "bool" | "abs" | "min" | "max" | "round" | "len"
        ),
        ExprKind::Attr(b, attr) => match &b.kind {
            ExprKind::Name(m) if m == "math" => true,
            ExprKind::Name(m) if m == "pk" || m == "pykokkos" => !attr.starts_with("atomic"),
            _ => false,
        },
        _ => false,
    }
}

impl<'a> Walk<'a, '_> {
    /// The launch argument a name (or `self.x`) refers to in this body.
    fn view_name(&self, e: &Expr) -> Option<String> {
        let n = match &e.kind {
            ExprKind::Name(n) => match &self.binds {
                None => n.clone(),
                Some(b) => b.get(n)?.clone(),
            },
            ExprKind::Attr(b, a) if is_self(b) && self.members => a.clone(),
            _ => return None,
        };
        self.ranks.contains_key(&n).then_some(n)
    }

    /// The view at the root of an index chain.
    fn root(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Index(b, _) => self.root(b),
            _ => self.view_name(e),
        }
    }

    fn mark(&mut self, name: &str, m: Mode, at: Span) {
        self.mark_at(name, m, false, at);
    }

    fn mark_at(&mut self, name: &str, m: Mode, at_work_index: bool, at: Span) {
        let at = self.site.unwrap_or(at);
        let first = !self.out.contains_key(name);
        let a = self.out.entry(name.to_string()).or_default();
        a.read |= m != Mode::Write;
        a.write |= m != Mode::Read;
        a.at_work_index = (first || a.at_work_index) && at_work_index;
        a.direct = (first || a.direct) && self.site.is_none();
        a.always_written |= m == Mode::Write
            && at_work_index
            && self.nested == 0
            && !self.returned
            && self.site.is_none();
        if !at_work_index && a.off_index.is_none() {
            a.off_index = Some(at);
        }
    }

    /// `v[i]` (or `self.v[i]`) with `i` the work index and `v` of rank 1.
    fn is_work_index_access(&self, e: &Expr) -> bool {
        let (ExprKind::Index(base, items), Some(idx)) = (&e.kind, &self.index) else {
            return false;
        };
        let at_i = matches!(items.as_slice(), [Index::At(x)] if matches!(&x.kind, ExprKind::Name(n) if n == idx));
        at_i && self
            .view_name(base)
            .is_some_and(|n| self.ranks.get(&n) == Some(&1))
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
                self.nested += 1;
                self.block(body);
                self.block(orelse);
                self.nested -= 1;
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
                self.nested += 1;
                self.block(body);
                self.nested -= 1;
            }
            StmtKind::While { test, body } => {
                self.expr(test, Mode::Read);
                self.nested += 1;
                self.block(body);
                self.nested -= 1;
            }
            // A returned view may be written by the caller.
            StmtKind::Return(Some(e)) if self.is_view_value(e) => {
                self.expr(e, Mode::Both);
                self.returned = true;
            }
            StmtKind::Return(Some(e)) => {
                self.expr(e, Mode::Read);
                self.returned = true;
            }
            StmtKind::Return(None) => self.returned = true,
            StmtKind::Expr(e) => self.expr(e, Mode::Read),
            // A nested def runs inside the kernel (team patterns): its accesses count.
            StmtKind::Def(d) => {
                self.nested += 1;
                self.block(&d.body);
                self.nested -= 1;
            }
            _ => {}
        }
    }

    fn is_view_value(&self, e: &Expr) -> bool {
        self.root(e)
            .is_some_and(|n| depth(e) < self.ranks[&n] as usize)
    }

    fn target(&mut self, t: &Expr, m: Mode) {
        if let ExprKind::Index(..) = &t.kind {
            if let Some(n) = self.root(t) {
                let wi = self.is_work_index_access(t);
                self.mark_at(&n, m, wi, t.span);
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
            ExprKind::Name(_) => {
                if let Some(n) = self.view_name(e) {
                    self.mark(&n, m, e.span);
                }
            }
            ExprKind::Attr(b, _) => match self.view_name(e) {
                Some(n) => self.mark(&n, m, e.span),
                None if !is_self(b) => self.expr(b, Mode::Read),
                None => {}
            },
            ExprKind::Index(..) => {
                if let Some(n) = self.root(e) {
                    // A partial index is a subview: it may be written through.
                    let partial = depth(e) < self.ranks[&n] as usize;
                    let wi = self.is_work_index_access(e);
                    self.mark_at(&n, if partial { Mode::Both } else { m }, wi, e.span);
                }
                self.indices(e);
            }
            ExprKind::Call { func, args, kwargs } => self.call(e, func, args, kwargs),
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
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Imag(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_) => {}
        }
    }
}

mod calls;
/// Whether a body calls anything (resolving its names is then worth it).
pub fn calls_something(def: &FunctionDef) -> bool {
    let mut any = false;
    crate::frontend::ast::walk_exprs(&def.body, &mut |e| {
        any |= matches!(e.kind, ExprKind::Call { .. })
    });
    any
}

/// Whether a body has effects beyond the views it writes (`pk.printf`):
/// such a launch always runs, even when nothing reads what it wrote.
pub fn has_effects(def: &FunctionDef) -> bool {
    let mut any = false;
    crate::frontend::ast::walk_exprs(&def.body, &mut |e| {
        if let ExprKind::Call { func, .. } = &e.kind {
            any |= matches!(&func.kind, ExprKind::Attr(_, f) if f == "printf")
                || matches!(&func.kind, ExprKind::Name(f) if f == "printf" || f == "print");
        }
    });
    any
}

#[cfg(test)]
mod tests;
