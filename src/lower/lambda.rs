//! Nested `def`s of team kernels as C++ lambdas: their captures, their own
//! locals (Python scoping), and the parameters each nested pattern passes.
use super::{FnCx, VarKind};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{Expr, ExprKind, FunctionDef, Stmt, StmtKind};
use crate::types::Ty;
use std::collections::BTreeSet;

/// Names a body binds (assignment targets, loop variables, nested defs): in
/// Python they are the nested function's own locals, hiding outer ones.
pub(super) fn assigned_names(stmts: &[Stmt], out: &mut BTreeSet<String>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
                if let ExprKind::Name(n) = &target.kind {
                    out.insert(n.clone());
                }
            }
            StmtKind::For { var, body, .. } => {
                out.insert(var.clone());
                assigned_names(body, out);
            }
            StmtKind::If { body, orelse, .. } => {
                assigned_names(body, out);
                assigned_names(orelse, out);
            }
            StmtKind::While { body, .. } => assigned_names(body, out),
            StmtKind::Def(d) => {
                out.insert(d.name.clone());
            }
            _ => {}
        }
    }
}

pub(super) fn lambda_sig(params: &[LambdaParam]) -> String {
    params
        .iter()
        .map(|(n, _, _, t)| format!("{t} {}", super::cpp_ident(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a nested pattern passes its body: (name, type, kind, C++ parameter type).
pub(super) type LambdaParam = (String, Ty, VarKind, String);

impl FnCx<'_> {
    /// The nested def `e` names, for a pattern that runs it.
    pub(super) fn closure_of(&self, e: &Expr, pattern: &str) -> KResult<FunctionDef> {
        match &e.kind {
            ExprKind::Name(n) => match self.closures.get(n.as_str()) {
                Some(d) => Ok((**d).clone()),
                None => type_error(
                    e.span,
                    format!("the body of {pattern} must be a function defined with 'def' inside this workunit; '{n}' is not one"),
                ),
            },
            _ => type_error(e.span, format!("the body of {pattern} must be the name of a nested 'def'")),
        }
    }

    /// Appends already indented code (emission pass only).
    pub(super) fn raw(&mut self, code: &str) {
        if !self.infer {
            self.out.push_str(code);
        }
    }

    /// Lowers a nested def's body as a lambda body with `params` bound; names it
    /// assigns are its own, other names are the enclosing kernel's (captured by
    /// reference). Returns the indented body with its declarations.
    pub(super) fn lambda(&mut self, def: &FunctionDef, params: &[LambdaParam]) -> KResult<String> {
        if let Some(r) = &def.returns {
            return unsupported(
                r.span,
                "a nested 'def' run by a pattern returns nothing; drop the annotation",
            );
        }
        let saved_vars = self.vars.clone();
        let saved_order = std::mem::take(&mut self.decl_order);
        let saved_out = std::mem::take(&mut self.out);
        let saved_indent = self.indent;
        let saved_loop = std::mem::replace(&mut self.loop_depth, 0);
        let saved_infer = self.infer;
        let saved_changed = self.changed;
        let saved_ret = self.ret.take();
        // A nested body's own accumulator of the same name is a plain sum.
        let saved_reducer = match &self.reducer {
            Some((acc, _)) if params.iter().any(|p| &p.0 == acc) => self.reducer.take(),
            _ => None,
        };
        let saved_workunit = std::mem::replace(&mut self.is_workunit, true);
        let mut own = BTreeSet::new();
        assigned_names(&def.body, &mut own);
        // `nonlocal x`: assignments to x are the enclosing kernel's x.
        for s in &def.body {
            if let StmtKind::Nonlocal(names) = &s.kind {
                for n in names {
                    own.remove(n);
                }
            }
        }
        for (n, ..) in params {
            own.insert(n.clone());
        }
        for n in &own {
            self.vars.remove(n.as_str());
        }
        for (n, t, k, _) in params {
            self.bind(n, t.clone(), *k);
        }
        let result = (|| -> KResult<String> {
            for _round in 0..8 {
                self.infer = true;
                self.changed = false;
                self.out.clear();
                self.lower_block(&def.body)?;
                if !self.changed {
                    break;
                }
            }
            if saved_infer {
                return Ok(String::new());
            }
            self.infer = false;
            self.out.clear();
            self.indent = saved_indent + 1;
            self.lower_block(&def.body)?;
            let pad = "  ".repeat(saved_indent + 1);
            Ok(self.declarations_with(&pad) + &self.out)
        })();
        self.vars = saved_vars;
        self.decl_order = saved_order;
        self.out = saved_out;
        self.indent = saved_indent;
        self.loop_depth = saved_loop;
        self.infer = saved_infer;
        self.changed = saved_changed;
        self.ret = saved_ret;
        self.is_workunit = saved_workunit;
        if saved_reducer.is_some() {
            self.reducer = saved_reducer;
        }
        result
    }
}
