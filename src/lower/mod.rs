//! Lowering: a typed walk over the kernel AST that emits C++ statements.
//!
//! One walk serves two stages. `infer` runs it with code discarded until the
//! types of all locals stop changing (a local assigned an int and later a float
//! becomes a float, as in Python). `emit` runs it once more with those types
//! fixed and keeps the code. Keeping typing and emission in one place means a
//! construct's semantics are written exactly once.
mod annotation;
mod assign;
mod builtins;
mod calls;
mod classes;
mod complex;
mod expr;
mod ident;
mod index;
mod lambda;
mod lists;
pub(crate) mod math;
mod mdrange;
pub mod names;
mod ops;
mod pkcalls;
mod reducer;
mod stmt;
mod team;
mod update;
mod values;

pub use annotation::annotation_type;
pub use ident::{cpp_ident, sanitize};

pub use names::{Global, Globals};

use crate::errors::KResult;
use crate::frontend::ast::Expr;
use crate::frontend::source::SourceInfo;
use crate::types::{DType, STy, Ty, ViewTy};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a name inside a kernel body came to exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// The work index (`i`), or one of several for MDRange.
    Index,
    /// The reduction/scan accumulator (a reference).
    Acc,
    /// `last_pass` of a scan.
    LastPass,
    /// A launch argument or functor member: read-only inside the kernel.
    Arg,
    /// A parameter of a `@pk.function`: a by-value copy the body may rebind.
    FnParam,
    Local,
    LoopVar,
    /// The team member of a TeamPolicy workunit: only its methods and team
    /// ranges use it.
    Team,
}

#[derive(Clone, Debug)]
pub struct Var {
    pub ty: Ty,
    pub weak: bool,
    pub kind: VarKind,
    pub cpp: String,
    /// Annotated locals keep their declared type; others widen like Python.
    pub annotated: bool,
    /// The C++ type a hoisted view local is declared with.
    pub decl: Option<String>,
}

/// A lowered expression: C++ text and its kernel type.
#[derive(Clone, Debug)]
pub struct Val {
    pub code: String,
    pub ty: VTy,
    /// Literal value, so coercions can print `2.0f` instead of `(float)(2)`.
    pub lit: Option<Lit>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lit {
    I(i64),
    F(f64),
    B(bool),
}

#[derive(Clone, Debug, PartialEq)]
pub enum VTy {
    S(STy),
    View(ViewTy),
    Class(String),
    Str(String),
    Void,
}

impl VTy {
    pub fn describe(&self) -> String {
        match self {
            VTy::S(s) => s.dt.name().to_string(),
            VTy::View(v) => format!("a View{}D[{}]", v.rank, v.dtype.name()),
            VTy::Class(c) => format!("a {c}"),
            VTy::Str(_) => "a string".into(),
            VTy::Void => "nothing".into(),
        }
    }
}

/// A `@pk.function` instantiated for one set of argument types.
#[derive(Clone, Debug)]
pub struct Instance {
    pub cpp_name: String,
    pub ret: Ty,
    /// The definition (out of line for classtype methods).
    pub code: String,
    /// A functor's `@pk.function` method: emitted inside the functor struct.
    pub method: bool,
    /// A classtype's method: declared inside that struct (`decl`), defined later.
    pub class: Option<String>,
    pub decl: String,
}

/// A `@pk.classtype` as one translation unit uses it.
#[derive(Clone, Debug)]
pub struct ClassDef {
    pub info: Arc<names::ClassInfo>,
    pub fields: Vec<(String, Ty)>,
    /// Types of the constructor's parameters.
    pub ctor: Vec<Ty>,
    /// Fields and constructors: the struct's text up to its methods.
    pub head: String,
    /// False while its `__init__` is being translated.
    pub done: bool,
}

/// Everything one translation unit accumulates while lowering its kernels.
#[derive(Default, Debug)]
pub struct Unit {
    /// Function instances keyed by (function identity, argument type signature).
    pub instances: BTreeMap<(usize, String), Instance>,
    /// Emission order of instances (callees before callers).
    pub order: Vec<(usize, String)>,
    /// `@pk.classtype` structs by name, and the order they were completed in
    /// (a class whose fields hold another class comes after it).
    pub classes: BTreeMap<String, ClassDef>,
    pub class_order: Vec<String>,
    pub depth: usize,
    /// Names of the `@pk.function`s being instantiated, innermost last.
    pub stack: Vec<String>,
    /// View elements go through `pk::at` (PK_BOUNDS_CHECK=1, host spaces).
    pub bounds_check: bool,
    /// Some integer `//` or `%` divides by a value that may be zero: the
    /// entry point reports it (ZeroDivisionError), as Python would raise.
    pub zero_div: bool,
    /// Some loop of the unit may run more or fewer times from one work item
    /// to the next (FnCx::uneven_loop): a host range is then dealt out in
    /// small chunks (prelude.hpp host_chunks); otherwise it splits in one
    /// contiguous run per thread, as Kokkos' own schedule.
    pub uneven: bool,
}

/// The body being lowered and everything it can see.
pub struct FnCx<'a> {
    pub vars: BTreeMap<String, Var>,
    pub decl_order: Vec<String>,
    pub globals: &'a Globals,
    pub unit: &'a mut Unit,
    pub src: Arc<SourceInfo>,
    /// Inference pass: learn local types; code is thrown away.
    pub infer: bool,
    pub changed: bool,
    /// Some(ty) in a `@pk.function`: the joined return type so far.
    pub ret: Option<Option<Ty>>,
    /// The return type was annotated (`-> float`): returns convert to it.
    pub ret_declared: bool,
    /// The joined return type so far came only from Python literals (NEP 50 weak).
    pub ret_weak: bool,
    pub is_workunit: bool,
    pub out: String,
    pub indent: usize,
    pub loop_depth: usize,
    /// Lowering `pk.floor_divide` / `pk.remainder`: integer division by zero
    /// gives 0, as NumPy's (and Numba's error_model="numpy") does.
    pub numpy_division: bool,
    /// Fused kernels: views that became per-work-item locals (dead temporaries).
    /// `v[i]` of such a view is the local named here.
    pub elem_locals: BTreeMap<String, (String, DType)>,
    /// The element type of the scratch view being built (from the annotation
    /// of the local it is assigned to).
    pub scratch_dtype: Option<DType>,
    /// Nested `def`s seen so far, by name: bodies of nested patterns.
    pub closures: BTreeMap<String, Arc<crate::frontend::ast::FunctionDef>>,
    /// The workunit's accumulator and its built-in reducer (`reducer=`), if any.
    pub reducer: Option<(String, crate::types::Reducer)>,
    /// The C++ name of the workunit's random pool argument (the first), and
    /// whether the body draws from it (`pk.rand`).
    pub rng: Option<String>,
    pub rng_used: bool,
    /// Set by `coerce` when a complex value was converted to a real type;
    /// the statement being lowered then fails (located at the statement).
    pub complex_to_real: std::cell::Cell<bool>,
}

impl<'a> FnCx<'a> {
    pub fn new(
        globals: &'a Globals,
        unit: &'a mut Unit,
        src: Arc<SourceInfo>,
        is_workunit: bool,
    ) -> Self {
        FnCx {
            vars: BTreeMap::new(),
            decl_order: Vec::new(),
            globals,
            unit,
            src,
            infer: true,
            changed: false,
            ret: None,
            ret_declared: false,
            ret_weak: false,
            is_workunit,
            out: String::new(),
            indent: 1,
            loop_depth: 0,
            numpy_division: false,
            elem_locals: BTreeMap::new(),
            closures: BTreeMap::new(),
            scratch_dtype: None,
            reducer: None,
            rng: None,
            rng_used: false,
            complex_to_real: std::cell::Cell::new(false),
        }
    }

    pub fn bind(&mut self, name: &str, ty: Ty, kind: VarKind) {
        let weak = false;
        self.vars.insert(
            name.to_string(),
            Var {
                ty,
                weak,
                kind,
                cpp: cpp_ident(name),
                annotated: true,
                decl: None,
            },
        );
    }

    pub fn line(&mut self, text: &str) {
        if !self.infer {
            for _ in 0..self.indent {
                self.out.push_str("  ");
            }
            self.out.push_str(text);
            self.out.push('\n');
        }
    }

    /// Hoisted declarations of scalar locals, so Python's function-wide scope
    /// survives C++ block scoping (a name first set inside an `if` is visible after).
    pub fn declarations(&self) -> String {
        self.declarations_with(if self.is_workunit { "    " } else { "  " })
    }

    fn declarations_with(&self, pad: &str) -> String {
        let mut s = String::new();
        for name in &self.decl_order {
            let v = &self.vars[name];
            if let (VarKind::Local | VarKind::LoopVar, Ty::Scalar(d)) = (v.kind, &v.ty) {
                s.push_str(&format!("{pad}{} {} = {}();\n", d.cpp(), v.cpp, d.cpp()));
            } else if let (VarKind::Local, Ty::Class(c)) = (v.kind, &v.ty) {
                s.push_str(&format!("{pad}{} {};\n", c, v.cpp));
            } else if let (VarKind::Local, Ty::View(_), Some(d)) = (v.kind, &v.ty, &v.decl) {
                s.push_str(&format!("{pad}{d} {};\n", v.cpp));
            }
        }
        s
    }

    /// Runs `body` to a fixed point of local types, then once more to emit code.
    pub fn lower_body(&mut self, body: &[crate::frontend::ast::Stmt]) -> KResult<String> {
        for _round in 0..8 {
            self.infer = true;
            self.changed = false;
            self.lower_block(body)?;
            if !self.changed {
                break;
            }
        }
        self.infer = false;
        self.out.clear();
        // operator() sits inside the functor struct; functions at namespace scope.
        self.indent = if self.is_workunit { 2 } else { 1 };
        self.lower_block(body)?;
        Ok(std::mem::take(&mut self.out))
    }

    /// `x: float`, `pk.View1D[pk.double]`, `pk.Acc[pk.int64]` -> a type.
    pub fn annotation(&self, ann: &Expr) -> KResult<Ty> {
        annotation_type(ann, self.globals)
    }
}
