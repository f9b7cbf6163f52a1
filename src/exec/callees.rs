//! Resolved names as the access analysis sees them: the functions a kernel
//! calls, so that their bodies' view accesses count at the call.
use crate::analysis::access::Callees;
use crate::frontend::ast::FunctionDef;
use crate::lower::{Global, Globals};

/// `f` and `self.m` resolve to `@pk.function`s and functor methods; a
/// callee's own free names resolve through its own globals.
impl Callees for Globals {
    fn callee(&self, name: &str) -> Option<(&FunctionDef, &dyn Callees)> {
        match self.get(name) {
            Some(Global::Function(f)) => Some((&f.def, &f.globals)),
            _ => None,
        }
    }
}
