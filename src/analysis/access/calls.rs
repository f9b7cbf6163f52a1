//! Calls inside a kernel: followed into the bodies of the functions and
//! methods they reach, with parameters bound to the views passed; anything
//! that cannot be followed is conservative.
use super::{is_self, reads_only, rebinds, Callees, Mode, Walk, MAX_DEPTH};
use crate::frontend::ast::{Expr, ExprKind, FunctionDef};
use std::collections::BTreeMap;

impl<'a> Walk<'a, '_> {
    pub(super) fn call(&mut self, e: &Expr, func: &Expr, args: &[Expr], kwargs: &[(String, Expr)]) {
        if let ExprKind::Attr(b, attr) = &func.kind {
            if attr == "extent" && !is_self(b) {
                // Metadata only: no element is touched.
                args.iter().for_each(|a| self.expr(a, Mode::Read));
                return;
            }
        }
        if reads_only(func) {
            args.iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .for_each(|a| self.expr(a, Mode::Read));
            return;
        }
        let method = matches!(&func.kind, ExprKind::Attr(b, _) if is_self(b));
        if self.depth < MAX_DEPTH {
            if let Some((def, scope)) = self.callee(func, method) {
                self.follow(e, def, scope, method, args, kwargs);
                return;
            }
        }
        for a in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
            self.expr(a, Mode::Both);
        }
        if method && self.members {
            // A method that cannot be followed may touch any member, anywhere.
            let members: Vec<String> = self.ranks.keys().cloned().collect();
            for n in members {
                self.mark(&n, Mode::Both, e.span);
            }
        }
    }

    fn callee(&self, func: &Expr, method: bool) -> Option<(&'a FunctionDef, &'a dyn Callees)> {
        match &func.kind {
            ExprKind::Attr(_, m) if method && self.members => {
                self.methods?.callee(&format!("self.{m}"))
            }
            ExprKind::Name(f) => self.funcs?.callee(f),
            _ => None,
        }
    }

    /// Walks a callee's body with its parameters bound to the views passed.
    fn follow(
        &mut self,
        call: &Expr,
        def: &'a FunctionDef,
        scope: &'a dyn Callees,
        method: bool,
        args: &[Expr],
        kwargs: &[(String, Expr)],
    ) {
        let params = &def.params[(method && !def.params.is_empty()) as usize..];
        let mut binds = BTreeMap::new();
        let mut index = None;
        let passed = args
            .iter()
            .zip(params)
            .map(|(a, p)| (p.name.as_str(), a))
            .chain(kwargs.iter().map(|(k, a)| (k.as_str(), a)));
        for (p, a) in passed {
            match self.view_name(a) {
                // A whole view: the callee's accesses through `p` are the view's.
                Some(v) if !rebinds(&def.body, p) => {
                    binds.insert(p.to_string(), v);
                }
                _ => {
                    let mode = if self.is_view_value(a) {
                        Mode::Both
                    } else {
                        Mode::Read
                    };
                    self.expr(a, mode);
                }
            }
            let is_index = matches!((&a.kind, &self.index), (ExprKind::Name(n), Some(i)) if n == i);
            if is_index && !rebinds(&def.body, p) {
                index = Some(p.to_string());
            }
        }
        let mut inner = Walk {
            ranks: self.ranks,
            out: &mut *self.out,
            index,
            binds: Some(binds),
            members: method && self.members,
            funcs: Some(scope),
            methods: self.methods,
            site: Some(self.site.unwrap_or(call.span)),
            depth: self.depth + 1,
            nested: self.nested,
            returned: self.returned,
        };
        inner.block(&def.body);
    }
}
