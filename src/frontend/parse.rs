//! The one module that imports rustpython-parser (no longer developed upstream):
//! it parses a captured `def` and converts it at once into `ast.rs`, rejecting
//! everything outside the kernel subset with a located, plain sentence.
use super::ast::*;
use crate::errors::{unsupported, KResult, KernelError, KernelErrorKind};
use rustpython_parser::ast as py;
use rustpython_parser::text_size::TextRange;
use rustpython_parser::Mode;

fn span(r: TextRange) -> Span {
    Span {
        start: u32::from(r.start()),
        end: u32::from(r.end()),
    }
}

/// Parses source holding exactly one function definition (decorators allowed).
pub fn parse_function(source: &str) -> KResult<FunctionDef> {
    let module = rustpython_parser::parse(source, Mode::Module, "<kernel>").map_err(|e| {
        let at = u32::from(e.offset);
        KernelError {
            kind: KernelErrorKind::Unsupported,
            span: Span {
                start: at,
                end: at + 1,
            },
            message: format!("Python syntax error: {}", e.error),
            origin: None,
        }
    })?;
    let body = match module {
        py::Mod::Module(m) => m.body,
        _ => return unsupported(Span::default(), "expected a module"),
    };
    for stmt in body {
        if let py::Stmt::FunctionDef(f) = stmt {
            return function(f);
        }
    }
    unsupported(
        Span::default(),
        "no function definition found in the captured source",
    )
}

fn function(f: py::StmtFunctionDef) -> KResult<FunctionDef> {
    let a = *f.args;
    if let Some(v) = a.vararg {
        return unsupported(
            span(v.range),
            "*args is not supported in kernels; name each parameter",
        );
    }
    let mut params = Vec::new();
    for p in a.posonlyargs.into_iter().chain(a.args).chain(a.kwonlyargs) {
        params.push(Param {
            name: p.def.arg.as_str().to_string(),
            ann: p.def.annotation.map(|x| expr(*x)).transpose()?,
            default: p.default.map(|x| expr(*x)).transpose()?,
            span: span(p.def.range),
        });
    }
    if let Some(k) = a.kwarg {
        return unsupported(
            span(k.range),
            "**kwargs is not supported in kernels; name each parameter",
        );
    }
    Ok(FunctionDef {
        name: f.name.as_str().to_string(),
        params,
        // `-> None` declares a function without a value: the same as no annotation.
        returns: f
            .returns
            .filter(
                |x| !matches!(&**x, py::Expr::Constant(c) if matches!(c.value, py::Constant::None)),
            )
            .map(|x| expr(*x))
            .transpose()?,
        body: block(f.body)?,
        span: span(f.range),
    })
}

fn block(stmts: Vec<py::Stmt>) -> KResult<Vec<Stmt>> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            py::Stmt::Assign(a) if a.targets.len() > 1 => {
                let targets = a.targets.into_iter().map(target).collect::<KResult<_>>()?;
                let value = expr(*a.value)?;
                out.extend(super::chain::chained(targets, value, span(a.range)));
            }
            s => out.push(stmt(s)?),
        }
    }
    Ok(out)
}

fn binop(op: py::Operator, at: Span) -> KResult<BinOp> {
    Ok(match op {
        py::Operator::Add => BinOp::Add,
        py::Operator::Sub => BinOp::Sub,
        py::Operator::Mult => BinOp::Mul,
        py::Operator::Div => BinOp::Div,
        py::Operator::FloorDiv => BinOp::FloorDiv,
        py::Operator::Mod => BinOp::Mod,
        py::Operator::Pow => BinOp::Pow,
        py::Operator::LShift => BinOp::LShift,
        py::Operator::RShift => BinOp::RShift,
        py::Operator::BitAnd => BinOp::BitAnd,
        py::Operator::BitOr => BinOp::BitOr,
        py::Operator::BitXor => BinOp::BitXor,
        py::Operator::MatMult => {
            return unsupported(
                at,
                "matrix multiplication '@' is not supported in kernels; write the loops",
            )
        }
    })
}

fn stmt(s: py::Stmt) -> KResult<Stmt> {
    let (kind, r) = match s {
        py::Stmt::Assign(a) => {
            if a.targets.len() != 1 {
                return unsupported(
                    span(a.range),
                    "chained assignment 'a = b = x' is not supported; assign each name separately",
                );
            }
            let target = target(a.targets.into_iter().next().unwrap())?;
            (
                StmtKind::Assign {
                    target,
                    ann: None,
                    value: Some(expr(*a.value)?),
                },
                a.range,
            )
        }
        py::Stmt::AnnAssign(a) => (
            StmtKind::Assign {
                target: target(*a.target)?,
                ann: Some(expr(*a.annotation)?),
                value: a.value.map(|v| expr(*v)).transpose()?,
            },
            a.range,
        ),
        py::Stmt::AugAssign(a) => {
            let op = binop(a.op, span(a.range))?;
            (
                StmtKind::AugAssign {
                    target: target(*a.target)?,
                    op,
                    value: expr(*a.value)?,
                },
                a.range,
            )
        }
        py::Stmt::If(i) => (
            StmtKind::If {
                test: expr(*i.test)?,
                body: block(i.body)?,
                orelse: block(i.orelse)?,
            },
            i.range,
        ),
        py::Stmt::While(w) => {
            if !w.orelse.is_empty() {
                return unsupported(
                    span(w.range),
                    "'while ... else' is not supported in kernels; use a flag variable",
                );
            }
            (
                StmtKind::While {
                    test: expr(*w.test)?,
                    body: block(w.body)?,
                },
                w.range,
            )
        }
        py::Stmt::For(f) => {
            let r = f.range;
            (for_range(f)?, r)
        }
        py::Stmt::Break(b) => (StmtKind::Break, b.range),
        py::Stmt::Continue(c) => (StmtKind::Continue, c.range),
        py::Stmt::Pass(p) => (StmtKind::Pass, p.range),
        py::Stmt::Nonlocal(n) => (
            StmtKind::Nonlocal(n.names.iter().map(|x| x.to_string()).collect()),
            n.range,
        ),
        py::Stmt::Return(r) => (
            StmtKind::Return(r.value.map(|v| expr(*v)).transpose()?),
            r.range,
        ),
        py::Stmt::Expr(e) => {
            // A bare string is a docstring: keep it out of the kernel.
            if let py::Expr::Constant(c) = &*e.value {
                if matches!(c.value, py::Constant::Str(_)) {
                    return Ok(Stmt {
                        kind: StmtKind::Pass,
                        span: span(e.range),
                    });
                }
            }
            (StmtKind::Expr(expr(*e.value)?), e.range)
        }
        py::Stmt::FunctionDef(f) => {
            let r = f.range;
            (StmtKind::Def(Box::new(function(f)?)), r)
        }
        other => {
            let (what, instead) = match &other {
                py::Stmt::Try(_) | py::Stmt::TryStar(_) => (
                    "'try'",
                    "kernels cannot raise or catch exceptions; check conditions with 'if'",
                ),
                py::Stmt::With(_) | py::Stmt::AsyncWith(_) => {
                    ("'with'", "kernels have no context managers")
                }
                py::Stmt::Global(_) => (
                    "'global'",
                    "pass the value as a keyword argument of the launch instead",
                ),
                py::Stmt::AsyncFunctionDef(_) => (
                    "an 'async def'",
                    "define a @pk.function at module level and call it",
                ),
                py::Stmt::ClassDef(_) => (
                    "a class definition",
                    "use a @pk.classtype defined outside the kernel",
                ),
                py::Stmt::Raise(_) => ("'raise'", "kernels cannot raise exceptions"),
                py::Stmt::Assert(_) => ("'assert'", "check the condition with 'if' and pk.printf"),
                py::Stmt::Import(_) | py::Stmt::ImportFrom(_) => {
                    ("'import'", "import modules at the top of the file")
                }
                py::Stmt::Delete(_) => ("'del'", "locals live until the end of the work item"),
                py::Stmt::AsyncFor(_) => ("'async for'", "use 'for v in range(...)'"),
                py::Stmt::Match(_) => ("'match'", "use if/elif/else"),
                _ => (
                    "this statement",
                    "see the kernel language in the documentation",
                ),
            };
            let r = stmt_range(&other);
            return unsupported(
                span(r),
                format!("{what} is not supported in kernels: {instead}"),
            );
        }
    };
    Ok(Stmt {
        kind,
        span: span(r),
    })
}

fn stmt_range(s: &py::Stmt) -> TextRange {
    use rustpython_parser::ast::Ranged;
    s.range()
}

fn for_range(f: py::StmtFor) -> KResult<StmtKind> {
    if !f.orelse.is_empty() {
        return unsupported(
            span(f.range),
            "'for ... else' is not supported in kernels; use a flag variable",
        );
    }
    let (var, var_span) = match *f.target {
        py::Expr::Name(n) => (n.id.as_str().to_string(), span(n.range)),
        other => {
            return unsupported(
                span(expr_range(&other)),
                "a kernel 'for' loop binds one name: 'for j in range(n)'",
            )
        }
    };
    let iter = *f.iter;
    let iter_span = span(expr_range(&iter));
    let call = match iter {
        py::Expr::Call(c) => c,
        _ => {
            return unsupported(
                iter_span,
                "kernels loop only over 'range(...)'; index the view inside the loop instead",
            )
        }
    };
    let is_range = matches!(&*call.func, py::Expr::Name(n) if n.id.as_str() == "range");
    if !is_range || !call.keywords.is_empty() || call.args.is_empty() || call.args.len() > 3 {
        return unsupported(iter_span, "kernels loop only over 'range(stop)', 'range(start, stop)' or 'range(start, stop, step)'");
    }
    let mut args: Vec<Expr> = call.args.into_iter().map(expr).collect::<KResult<_>>()?;
    let zero = Expr::new(ExprKind::Int(0), iter_span);
    let (start, stop, step) = match args.len() {
        1 => (zero, args.pop().unwrap(), None),
        2 => {
            let stop = args.pop().unwrap();
            (args.pop().unwrap(), stop, None)
        }
        _ => {
            let step = args.pop().unwrap();
            let stop = args.pop().unwrap();
            (args.pop().unwrap(), stop, Some(step))
        }
    };
    Ok(StmtKind::For {
        var,
        var_span,
        start,
        stop,
        step,
        body: block(f.body)?,
    })
}

/// Assignment targets: names, subscripts, and `self.member`.
fn target(e: py::Expr) -> KResult<Expr> {
    match &e {
        py::Expr::Name(_) | py::Expr::Subscript(_) | py::Expr::Attribute(_) => expr(e),
        py::Expr::Tuple(t) => unsupported(
            span(t.range),
            "tuple unpacking is not supported in kernels; assign each name separately",
        ),
        other => unsupported(span(expr_range(other)), "this cannot be assigned to"),
    }
}

fn expr_range(e: &py::Expr) -> TextRange {
    use rustpython_parser::ast::Ranged;
    e.range()
}

fn constant(c: py::ExprConstant) -> KResult<Expr> {
    let at = span(c.range);
    let kind = match c.value {
        py::Constant::Bool(b) => ExprKind::Bool(b),
        py::Constant::Int(i) => match i.to_string().parse::<i64>() {
            Ok(v) => ExprKind::Int(v),
            Err(_) => return unsupported(at, "integer literal does not fit in 64 bits"),
        },
        py::Constant::Float(f) => ExprKind::Float(f),
        py::Constant::Str(s) => ExprKind::Str(s),
        py::Constant::None => {
            return unsupported(at, "'None' is not a kernel value; use a number or a flag")
        }
        py::Constant::Complex { imag, .. } => ExprKind::Imag(imag),
        _ => {
            return unsupported(
                at,
                "this literal is not supported in kernels; use int, float or bool",
            )
        }
    };
    Ok(Expr::new(kind, at))
}

fn index_item(e: py::Expr) -> KResult<Index> {
    match e {
        py::Expr::Slice(s) => {
            if s.step.is_some() {
                return unsupported(
                    span(s.range),
                    "slices with a step are not supported in kernels",
                );
            }
            Ok(Index::Slice(
                s.lower.map(|x| expr(*x)).transpose()?,
                s.upper.map(|x| expr(*x)).transpose()?,
            ))
        }
        other => Ok(Index::At(expr(other)?)),
    }
}

fn expr(e: py::Expr) -> KResult<Expr> {
    let at = span(expr_range(&e));
    let kind = match e {
        py::Expr::Constant(c) => return constant(c),
        py::Expr::Name(n) => ExprKind::Name(n.id.as_str().to_string()),
        py::Expr::Attribute(a) => {
            ExprKind::Attr(Box::new(expr(*a.value)?), a.attr.as_str().to_string())
        }
        py::Expr::BinOp(b) => ExprKind::Bin(
            binop(b.op, at)?,
            Box::new(expr(*b.left)?),
            Box::new(expr(*b.right)?),
        ),
        py::Expr::UnaryOp(u) => {
            let op = match u.op {
                py::UnaryOp::USub => UnOp::Neg,
                py::UnaryOp::UAdd => UnOp::Pos,
                py::UnaryOp::Not => UnOp::Not,
                py::UnaryOp::Invert => UnOp::Invert,
            };
            ExprKind::Unary(op, Box::new(expr(*u.operand)?))
        }
        py::Expr::BoolOp(b) => ExprKind::BoolOp(
            matches!(b.op, py::BoolOp::And),
            b.values.into_iter().map(expr).collect::<KResult<_>>()?,
        ),
        py::Expr::Compare(c) => {
            let mut rest = Vec::new();
            for (op, rhs) in c.ops.into_iter().zip(c.comparators) {
                let op =
                    match op {
                        py::CmpOp::Eq => CmpOp::Eq,
                        py::CmpOp::NotEq => CmpOp::Ne,
                        py::CmpOp::Lt => CmpOp::Lt,
                        py::CmpOp::LtE => CmpOp::Le,
                        py::CmpOp::Gt => CmpOp::Gt,
                        py::CmpOp::GtE => CmpOp::Ge,
                        py::CmpOp::Is | py::CmpOp::IsNot => return unsupported(
                            at,
                            "'is' compares object identity, which kernels do not have; use '=='",
                        ),
                        py::CmpOp::In | py::CmpOp::NotIn => {
                            return unsupported(
                                at,
                                "'in' is not supported in kernels; compare values with '=='",
                            )
                        }
                    };
                rest.push((op, expr(rhs)?));
            }
            ExprKind::Compare(Box::new(expr(*c.left)?), rest)
        }
        py::Expr::IfExp(i) => ExprKind::IfExp(
            Box::new(expr(*i.test)?),
            Box::new(expr(*i.body)?),
            Box::new(expr(*i.orelse)?),
        ),
        py::Expr::Call(c) => {
            let mut kwargs = Vec::new();
            for k in c.keywords {
                match k.arg {
                    Some(name) => kwargs.push((name.as_str().to_string(), expr(k.value)?)),
                    None => {
                        return unsupported(
                            span(k.range),
                            "'**' argument unpacking is not supported in kernels",
                        )
                    }
                }
            }
            let mut args = Vec::new();
            for a in c.args {
                if let py::Expr::Starred(s) = &a {
                    return unsupported(
                        span(s.range),
                        "'*' argument unpacking is not supported in kernels",
                    );
                }
                args.push(expr(a)?);
            }
            ExprKind::Call {
                func: Box::new(expr(*c.func)?),
                args,
                kwargs,
            }
        }
        py::Expr::Subscript(s) => {
            let items = match *s.slice {
                py::Expr::Tuple(t) => t.elts.into_iter().map(index_item).collect::<KResult<_>>()?,
                other => vec![index_item(other)?],
            };
            ExprKind::Index(Box::new(expr(*s.value)?), items)
        }
        py::Expr::Tuple(t) => {
            ExprKind::Tuple(t.elts.into_iter().map(expr).collect::<KResult<_>>()?)
        }
        py::Expr::List(l) => ExprKind::Tuple(l.elts.into_iter().map(expr).collect::<KResult<_>>()?),
        other => {
            let what = match &other {
                py::Expr::Dict(_) => "dict literals are not supported in kernels; pass a View instead",
                py::Expr::Set(_) => "set literals are not supported in kernels",
                py::Expr::ListComp(_) | py::Expr::SetComp(_) | py::Expr::DictComp(_) | py::Expr::GeneratorExp(_) => {
                    "comprehensions are not supported in kernels; write a 'for' loop over range(...)"
                }
                py::Expr::Lambda(_) => "lambda is not supported in kernels; define a @pk.function",
                py::Expr::JoinedStr(_) | py::Expr::FormattedValue(_) => {
                    "f-strings are not supported in kernels; use pk.printf(\"%d\\n\", x)"
                }
                py::Expr::NamedExpr(_) => "the walrus operator ':=' is not supported in kernels; assign first",
                py::Expr::Await(_) | py::Expr::Yield(_) | py::Expr::YieldFrom(_) => "await/yield are not supported in kernels",
                py::Expr::Starred(_) => "'*' unpacking is not supported in kernels",
                py::Expr::Slice(_) => "a slice is only allowed inside a view index, as in A[j, :]",
                _ => "this expression is not supported in kernels",
            };
            return unsupported(at, what);
        }
    };
    Ok(Expr::new(kind, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_params_and_body() {
        let f = parse_function("def k(i, a: float, v):\n    v[i] = a * v[i]\n").unwrap();
        assert_eq!(f.name, "k");
        assert_eq!(f.params.len(), 3);
        assert!(matches!(f.body[0].kind, StmtKind::Assign { .. }));
    }

    #[test]
    fn rejects_list_comprehension_with_span() {
        let src = "def k(i):\n    x = [j for j in range(3)]\n";
        let e = parse_function(src).unwrap_err();
        assert_eq!(&src[e.span.start as usize..e.span.start as usize + 1], "[");
        assert!(e.message.contains("comprehension"));
    }
}
