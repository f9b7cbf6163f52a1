//! `@pk.function` and classtype method calls: arguments bound as Python binds
//! them (defaults included), the function instantiated once per argument types.
use super::names::{FuncInfo, Global};
use super::values::scalar;
use super::{cpp_ident, FnCx, Instance, VTy, Val, VarKind};
use crate::errors::{type_error, unsupported, KResult, KernelError};
use crate::frontend::ast::{Expr, ExprKind};
use crate::types::{DType, STy, Ty};
use std::sync::Arc;

/// Who a `@pk.function` belongs to, which decides how it is emitted and called.
#[derive(Clone, Debug)]
pub enum Callee {
    /// A module-level function.
    Free,
    /// A functor's method: a const member function of the functor struct.
    Functor,
    /// A classtype's method, called on this receiver.
    Class(String, Val),
}

impl FnCx<'_> {
    /// A `@pk.function` call: instantiate the function for these argument types
    /// (once per translation unit) and call the instance.
    pub fn user_call(
        &mut self,
        f: &Arc<FuncInfo>,
        args: &[Expr],
        kwargs: &[(String, Expr)],
        e: &Expr,
        callee: Callee,
    ) -> KResult<Val> {
        let method = !matches!(callee, Callee::Free);
        let params: Vec<_> = f
            .def
            .params
            .iter()
            .skip(method as usize)
            .filter(|p| method || p.name != "self")
            .cloned()
            .collect();
        let args = bind_arguments(f, &params, args, kwargs, e)?;
        let args = args.as_slice();
        let mut vals = Vec::new();
        let mut tys = Vec::new();
        for (a, p) in args.iter().zip(&params) {
            let v = self.expr(a)?;
            let ty = match (&p.ann, &v.ty) {
                (Some(ann), _) => {
                    super::annotation_type(ann, &f.globals).map_err(|err| with_origin(err, f))?
                }
                (None, VTy::S(s)) => Ty::Scalar(if s.weak && s.dt == DType::I64 {
                    DType::I64
                } else {
                    s.dt
                }),
                (None, VTy::View(vt)) => Ty::View(*vt),
                (None, VTy::Class(c)) => Ty::Class(c.clone()),
                (None, other) => {
                    return type_error(
                        a.span,
                        format!("cannot pass {} to a @pk.function", other.describe()),
                    )
                }
            };
            // A view annotation fixes dtype and rank; the layout comes from the argument.
            let ty = match (ty, &v.ty) {
                (Ty::View(want), VTy::View(got)) => {
                    if want.dtype != got.dtype || want.rank != got.rank {
                        return type_error(
                            a.span,
                            format!(
                                "{}() expects {} for '{}' but got {}",
                                f.def.name,
                                Ty::View(want).describe(),
                                p.name,
                                v.ty.describe()
                            ),
                        );
                    }
                    Ty::View(*got)
                }
                (Ty::Class(want), VTy::Class(got)) if &want == got => Ty::Class(want),
                (Ty::View(_), other)
                | (Ty::Scalar(_), other @ (VTy::View(_) | VTy::Class(_)))
                | (Ty::Class(_), other) => {
                    return type_error(
                        a.span,
                        format!(
                            "{}() parameter '{}' cannot take {}",
                            f.def.name,
                            p.name,
                            other.describe()
                        ),
                    )
                }
                (t, _) => t,
            };
            tys.push(ty);
            vals.push(v);
        }
        let sig: String = tys
            .iter()
            .map(|t| t.describe())
            .collect::<Vec<_>>()
            .join(",");
        // A functor method's body names the members of the launch it was
        // called from: bodies with other members (fused launches of two
        // instances) need their own instance.
        let sig = match &callee {
            Callee::Functor => format!("{sig}|{}", self.member_binding()),
            _ => sig,
        };
        let key = (f.id, sig);
        if !self.unit.instances.contains_key(&key) {
            self.instantiate(f, &params, &tys, key.clone(), &callee)?;
        }
        let inst = self.unit.instances[&key].clone();
        let mut cargs = Vec::new();
        for (v, t) in vals.iter().zip(&tys) {
            cargs.push(match t {
                Ty::Scalar(d) => self.coerce(v, *d),
                // Classtype values are passed by reference, as Python passes objects.
                Ty::Class(_) => format!("pk::lval({})", v.code),
                _ => v.code.clone(),
            });
        }
        let code = match &callee {
            Callee::Class(_, recv) => {
                format!("{}.{}({})", recv.code, inst.cpp_name, cargs.join(", "))
            }
            _ => format!("{}({})", inst.cpp_name, cargs.join(", ")),
        };
        Ok(match inst.ret {
            Ty::Scalar(d) => scalar(code, STy::strong(d)),
            Ty::Class(c) => Val {
                code,
                ty: VTy::Class(c),
                lit: None,
            },
            _ => Val {
                code,
                ty: VTy::Void,
                lit: None,
            },
        })
    }

    /// The C++ names the functor's members are bound to in this body.
    fn member_binding(&self) -> String {
        let vars = self
            .vars
            .iter()
            .filter(|(k, _)| k.starts_with("self."))
            .map(|(k, v)| format!("{k}={}", v.cpp));
        let consts = self
            .globals
            .iter()
            .filter(|(k, g)| k.starts_with("self.") && !matches!(g, Global::Function(_)))
            .map(|(k, g)| format!("{k}={g:?}"));
        vars.chain(consts).collect::<Vec<_>>().join(";")
    }

    pub(super) fn instantiate(
        &mut self,
        f: &Arc<FuncInfo>,
        params: &[crate::frontend::ast::Param],
        tys: &[Ty],
        key: (usize, String),
        callee: &Callee,
    ) -> KResult<()> {
        let method = matches!(callee, Callee::Functor);
        let class = match callee {
            Callee::Class(c, _) => Some(c.clone()),
            _ => None,
        };
        if self.unit.depth > 16 {
            return unsupported(f.def.span, format!("{}() calls itself (directly or through others): recursion is not supported in kernels", f.def.name));
        }
        let declared_ret = match &f.def.returns {
            Some(r) => match &r.kind {
                ExprKind::Int(_) | ExprKind::Bool(_) => None,
                _ => {
                    Some(super::annotation_type(r, &f.globals).map_err(|err| with_origin(err, f))?)
                }
            },
            None => None,
        };
        self.unit.depth += 1;
        self.unit.stack.push(f.def.name.clone());
        let mut globals = f.globals.clone();
        // A functor method sees the functor's members and its other methods.
        let members: Vec<(String, super::Var)> = if method {
            for (k, g) in self.globals.iter() {
                if k.starts_with("self.") {
                    globals.insert(k.clone(), g.clone());
                }
            }
            self.vars
                .iter()
                .filter(|(k, _)| k.starts_with("self."))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        } else {
            Vec::new()
        };
        let src = f.src.clone();
        let result = {
            let mut cx = FnCx::new(&globals, self.unit, src, false);
            for (k, v) in members {
                cx.vars.insert(k, v);
            }
            if let Some(c) = &class {
                cx.bind_class_self(c);
            }
            let mut tparams = Vec::new();
            let mut plist = Vec::new();
            for (k, (p, t)) in params.iter().zip(tys).enumerate() {
                cx.bind(&p.name, t.clone(), VarKind::FnParam);
                let cpp = cpp_ident(&p.name);
                match t {
                    Ty::Scalar(d) => plist.push(format!("{} {cpp}", d.cpp())),
                    Ty::Class(c) => plist.push(format!("{c}& {cpp}")),
                    _ => {
                        tparams.push(format!("class pk_V{k}"));
                        plist.push(format!("const pk_V{k}& {cpp}"));
                    }
                }
            }
            cx.ret_declared = declared_ret.is_some();
            cx.ret = Some(declared_ret.clone());
            let body = cx.lower_body(&f.def.body);
            body.map(|b| (b, cx.declarations(), cx.ret.clone(), tparams, plist))
        };
        self.unit.depth -= 1;
        self.unit.stack.pop();
        let (body, decls, ret, tparams, plist) = result.map_err(|err| with_origin(err, f))?;
        let ret = ret.flatten().unwrap_or(Ty::Void);
        let rcpp = match &ret {
            Ty::Scalar(d) => d.cpp().to_string(),
            Ty::Class(c) => c.clone(),
            _ => "void".into(),
        };
        let n = self.unit.instances.len();
        let cpp_name = format!("pkf_{}_{n}", super::sanitize(&f.def.name));
        let templ = if tparams.is_empty() {
            String::new()
        } else {
            format!("template <{}>\n", tparams.join(", "))
        };
        // Methods become const member functions of the functor struct, so they
        // read the members directly.
        // Classtype methods are declared in their struct and defined after all structs.
        let qual = match &class {
            Some(c) => format!("{c}::"),
            None => String::new(),
        };
        let code = format!(
            "// @pk.function {} ({})\n{templ}KOKKOS_INLINE_FUNCTION {rcpp} {qual}{cpp_name}({}){} {{\n{decls}{body}{}}}\n",
            f.def.name,
            key.1,
            plist.join(", "),
            if method { " const" } else { "" },
            if rcpp == "void" { String::new() } else { format!("  return {rcpp}();\n") }
        );
        let decl = format!(
            "{templ}KOKKOS_INLINE_FUNCTION {rcpp} {cpp_name}({});\n",
            plist.join(", ")
        );
        self.unit.order.push(key.clone());
        self.unit.instances.insert(
            key,
            Instance {
                cpp_name,
                ret,
                code,
                method,
                class,
                decl,
            },
        );
        Ok(())
    }
}

/// Errors inside a function body point into that function's file.
pub fn with_origin(mut err: KernelError, f: &FuncInfo) -> KernelError {
    if err.origin.is_none() {
        err.origin = Some(f.src.clone());
    }
    err
}

/// Matches a call's positional and keyword arguments to a `@pk.function`'s
/// parameters, filling in defaults, as Python does.
pub fn bind_arguments(
    f: &FuncInfo,
    params: &[crate::frontend::ast::Param],
    args: &[Expr],
    kwargs: &[(String, Expr)],
    e: &Expr,
) -> KResult<Vec<Expr>> {
    let name = &f.def.name;
    if args.len() > params.len() {
        return type_error(
            e.span,
            format!(
                "{name}() takes {} argument(s) but {} were given",
                params.len(),
                args.len()
            ),
        );
    }
    let mut bound: Vec<Option<Expr>> = args.iter().cloned().map(Some).collect();
    bound.resize(params.len(), None);
    for (k, v) in kwargs {
        match params.iter().position(|p| &p.name == k) {
            Some(at) if bound[at].is_some() => {
                return type_error(
                    v.span,
                    format!("{name}() got multiple values for argument '{k}'"),
                )
            }
            Some(at) => bound[at] = Some(v.clone()),
            None => return type_error(v.span, format!("{name}() has no parameter named '{k}'")),
        }
    }
    let mut out = Vec::new();
    for (b, p) in bound.into_iter().zip(params) {
        match (b, &p.default) {
            (Some(x), _) => out.push(x),
            (None, Some(d)) => {
                out.push(default_value(d, &p.name, f).map_err(|err| with_origin(err, f))?)
            }
            (None, None) => {
                return type_error(
                    e.span,
                    format!(
                        "{name}() takes {} argument(s) but {} were given (missing '{}')",
                        params.len(),
                        args.len() + kwargs.len(),
                        p.name
                    ),
                )
            }
        }
    }
    Ok(out)
}

/// A parameter default as a literal: a number, or a module-level number of the
/// function's own module (Python evaluated it when the function was defined).
fn default_value(d: &Expr, param: &str, f: &FuncInfo) -> KResult<Expr> {
    // The value Python computed, when the resolver reported it.
    match f.globals.get(&format!("default:{param}")) {
        Some(Global::Int(i)) => return Ok(Expr::new(ExprKind::Int(*i), d.span)),
        Some(Global::Float(v)) => return Ok(Expr::new(ExprKind::Float(*v), d.span)),
        Some(Global::Bool(b)) => return Ok(Expr::new(ExprKind::Bool(*b), d.span)),
        _ => {}
    }
    let kind = match &d.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => d.kind.clone(),
        ExprKind::Unary(crate::frontend::ast::UnOp::Neg, x) => match &x.kind {
            ExprKind::Int(i) => ExprKind::Int(-i),
            ExprKind::Float(v) => ExprKind::Float(-v),
            _ => return type_error(d.span, "a @pk.function parameter default must be a number"),
        },
        ExprKind::Name(n) => match f.globals.get(n) {
            Some(Global::Int(i)) => ExprKind::Int(*i),
            Some(Global::Float(v)) => ExprKind::Float(*v),
            Some(Global::Bool(b)) => ExprKind::Bool(*b),
            _ => return type_error(d.span, "a @pk.function parameter default must be a number"),
        },
        _ => return type_error(d.span, "a @pk.function parameter default must be a number"),
    };
    Ok(Expr::new(kind, d.span))
}
