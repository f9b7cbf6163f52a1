//! The kernel AST: the small Python subset a workunit may use, with byte spans
//! into the captured source so every later stage can point at the user's line.

/// Byte range `[start, end)` into the (dedented) source of one kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    BitAnd,
    BitOr,
    BitXor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum UnOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    /// An imaginary literal (`2j`); `1 + 2j` is a sum with one.
    Imag(f64),
    Bool(bool),
    /// Only legal as the format argument of `pk.printf`.
    Str(String),
    Name(String),
    Attr(Box<Expr>, String),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    /// `and` (true) / `or` (false) over two or more operands.
    BoolOp(bool, Vec<Expr>),
    /// `a < b <= c`: left operand, then (op, right) pairs.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    IfExp(Box<Expr>, Box<Expr>, Box<Expr>),
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        kwargs: Vec<(String, Expr)>,
    },
    /// `v[a, b]`; `v[a][b]` is two nested `Index` nodes.
    Index(Box<Expr>, Vec<Index>),
    /// `[i, j]` or `(i, j)`: only as an index list argument of an atomic.
    Tuple(Vec<Expr>),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum Index {
    At(Expr),
    /// `lo:hi` (either may be absent); steps are rejected by the parser.
    Slice(Option<Expr>, Option<Expr>),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum StmtKind {
    Assign {
        target: Expr,
        ann: Option<Expr>,
        value: Option<Expr>,
    },
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    /// `for var in range(start, stop, step)`.
    For {
        var: String,
        var_span: Span,
        start: Expr,
        stop: Expr,
        step: Option<Expr>,
        body: Vec<Stmt>,
    },
    While {
        test: Expr,
        body: Vec<Stmt>,
    },
    Break,
    Continue,
    Pass,
    Return(Option<Expr>),
    Expr(Expr),
    /// `nonlocal a, b` in a nested `def`: those names are the enclosing kernel's.
    Nonlocal(Vec<String>),
    /// A nested `def`: the body of a nested parallel pattern (a team kernel's
    /// `pk.parallel_for(pk.TeamThreadRange(m, n), body)`) or of `pk.single`.
    Def(Box<FunctionDef>),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Param {
    pub name: String,
    pub ann: Option<Expr>,
    /// `def f(x, scale=2.0)`: the default, used by `@pk.function` calls.
    pub default: Option<Expr>,
    pub span: Span,
}

/// One `def`: a workunit, a `@pk.function`, or a functor method.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FunctionDef {
    pub name: String,
    pub params: Vec<Param>,
    pub returns: Option<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Self {
        Expr { kind, span }
    }

    /// `pk.double` -> Some(("pk", "double")), for module-qualified names.
    pub fn dotted(&self) -> Option<(&str, &str)> {
        match &self.kind {
            ExprKind::Attr(base, attr) => match &base.kind {
                ExprKind::Name(m) => Some((m.as_str(), attr.as_str())),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether `stmts` leave a loop or the function part way (`break`, `return`),
/// at any depth.
pub fn exits_early(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Break | StmtKind::Return(_) => true,
        StmtKind::If { body, orelse, .. } => exits_early(body) || exits_early(orelse),
        StmtKind::For { body, .. } | StmtKind::While { body, .. } => exits_early(body),
        _ => false,
    })
}

/// Calls `f` on `e` and every expression inside it, outermost first.
pub fn walk_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Attr(b, _) | ExprKind::Unary(_, b) => walk_expr(b, f),
        ExprKind::Bin(_, a, b) => {
            walk_expr(a, f);
            walk_expr(b, f);
        }
        ExprKind::BoolOp(_, xs) | ExprKind::Tuple(xs) => xs.iter().for_each(|x| walk_expr(x, f)),
        ExprKind::Compare(a, rest) => {
            walk_expr(a, f);
            rest.iter().for_each(|(_, x)| walk_expr(x, f));
        }
        ExprKind::IfExp(a, b, c) => {
            walk_expr(a, f);
            walk_expr(b, f);
            walk_expr(c, f);
        }
        ExprKind::Call { func, args, kwargs } => {
            walk_expr(func, f);
            args.iter().for_each(|x| walk_expr(x, f));
            kwargs.iter().for_each(|(_, x)| walk_expr(x, f));
        }
        ExprKind::Index(b, idx) => {
            walk_expr(b, f);
            for i in idx {
                match i {
                    Index::At(x) => walk_expr(x, f),
                    Index::Slice(lo, hi) => {
                        lo.iter().chain(hi.iter()).for_each(|x| walk_expr(x, f));
                    }
                }
            }
        }
        _ => {}
    }
}

/// The names read by the annotations of annotated assignments in `stmts`
/// (`d: DepOne = ...`), nested defs included: Python never evaluates those,
/// so name resolution learns of them from the source.
pub fn annotation_names(stmts: &[Stmt], out: &mut std::collections::BTreeSet<String>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { ann: Some(a), .. } => walk_expr(a, &mut |e| {
                if let ExprKind::Name(n) = &e.kind {
                    out.insert(n.clone());
                }
            }),
            StmtKind::If { body, orelse, .. } => {
                annotation_names(body, out);
                annotation_names(orelse, out);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => {
                annotation_names(body, out)
            }
            StmtKind::Def(d) => annotation_names(&d.body, out),
            _ => {}
        }
    }
}

/// Calls `f` on every expression in `stmts`, outermost first.
pub fn walk_exprs<'a>(stmts: &'a [Stmt], f: &mut dyn FnMut(&'a Expr)) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { target, ann, value } => {
                walk_expr(target, f);
                ann.iter().chain(value.iter()).for_each(|x| walk_expr(x, f));
            }
            StmtKind::AugAssign { target, value, .. } => {
                walk_expr(target, f);
                walk_expr(value, f);
            }
            StmtKind::If { test, body, orelse } => {
                walk_expr(test, f);
                walk_exprs(body, f);
                walk_exprs(orelse, f);
            }
            StmtKind::For {
                start,
                stop,
                step,
                body,
                ..
            } => {
                walk_expr(start, f);
                walk_expr(stop, f);
                step.iter().for_each(|x| walk_expr(x, f));
                walk_exprs(body, f);
            }
            StmtKind::While { test, body } => {
                walk_expr(test, f);
                walk_exprs(body, f);
            }
            StmtKind::Return(Some(x)) | StmtKind::Expr(x) => walk_expr(x, f),
            StmtKind::Def(d) => walk_exprs(&d.body, f),
            _ => {}
        }
    }
}

impl Span {
    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// Statements in a body, nested ones included (a fused region's size measure).
pub fn count_statements(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .map(|s| {
            1 + match &s.kind {
                StmtKind::If { body, orelse, .. } => {
                    count_statements(body) + count_statements(orelse)
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } => count_statements(body),
                StmtKind::Def(d) => count_statements(&d.body),
                _ => 0,
            }
        })
        .sum()
}
