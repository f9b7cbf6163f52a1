//! `@pk.classtype` values: a C++ struct per class, whose fields are the
//! `self.x = ...` assignments of `__init__` (scalars or other classtypes), and
//! whose methods are instantiated on first call like `@pk.function`s.
use super::calls::{bind_arguments, with_origin, Callee};
use super::names::ClassInfo;
use super::{cpp_ident, ClassDef, FnCx, VTy, Val, Var, VarKind};
use crate::errors::{type_error, unsupported, KResult};
use crate::frontend::ast::{Expr, StmtKind};
use crate::types::Ty;
use std::sync::Arc;

/// `self` inside a classtype's `__init__` and methods.
fn self_var(class: &str) -> Var {
    Var {
        ty: Ty::Class(class.to_string()),
        weak: false,
        kind: VarKind::FnParam,
        cpp: "(*this)".into(),
        annotated: true,
        decl: None,
    }
}

impl FnCx<'_> {
    /// The type of field `attr` of classtype `class`, if it has one.
    pub fn class_field(&self, class: &str, attr: &str) -> Option<Ty> {
        self.unit
            .classes
            .get(class)?
            .fields
            .iter()
            .find(|(f, _)| f == attr)
            .map(|(_, t)| t.clone())
    }

    /// `Vec2(x, y)`: defines the struct on first use, then calls its constructor.
    pub fn construct(&mut self, c: &Arc<ClassInfo>, args: &[Expr], e: &Expr) -> KResult<Val> {
        let init = match &c.init {
            Some(i) => i.clone(),
            None => {
                return type_error(
                    e.span,
                    format!("classtype {} has no __init__ to build it with", c.name),
                )
            }
        };
        let params: Vec<_> = init.def.params.iter().skip(1).cloned().collect();
        if args.len() > params.len() {
            return type_error(
                e.span,
                format!("{}() takes {} argument(s)", c.name, params.len()),
            );
        }
        let bound = bind_arguments(&init, &params, args, &[], e).map_err(|mut err| {
            // Report arity problems at the call, in the caller's file.
            err.origin = None;
            err.span = e.span;
            err.message = format!("{}() takes {} argument(s)", c.name, params.len());
            err
        })?;
        let mut vals = Vec::new();
        let mut tys = Vec::new();
        for (a, p) in bound.iter().zip(&params) {
            let v = self.expr(a)?;
            let t = match (&p.ann, &v.ty) {
                (Some(ann), _) => super::annotation_type(ann, &init.globals)
                    .map_err(|err| with_origin(err, &init))?,
                (None, VTy::S(s)) => Ty::Scalar(s.dt),
                (None, VTy::Class(k)) => Ty::Class(k.clone()),
                (None, other) => {
                    return type_error(
                        a.span,
                        format!(
                            "a classtype is built from numbers and classtypes, not {}",
                            other.describe()
                        ),
                    )
                }
            };
            tys.push(t);
            vals.push(v);
        }
        match self.unit.classes.get(&c.name) {
            None => self.define_class(c, &init, &params, &tys)?,
            Some(d) if !d.done => {
                return unsupported(
                    e.span,
                    format!(
                        "classtype {} contains itself; kernels cannot build recursive values",
                        c.name
                    ),
                )
            }
            Some(_) => {}
        }
        let ctor = self.unit.classes[&c.name].ctor.clone();
        let mut cargs = Vec::new();
        for ((v, t), a) in vals.iter().zip(&ctor).zip(&bound) {
            cargs.push(match (t, &v.ty) {
                (Ty::Scalar(d), VTy::S(_)) => self.coerce(v, *d),
                (Ty::Class(want), VTy::Class(got)) if want == got => v.code.clone(),
                (t, _) => {
                    return type_error(
                        a.span,
                        format!(
                            "{}() expects {} here, not {}",
                            c.name,
                            t.describe(),
                            v.ty.describe()
                        ),
                    )
                }
            });
        }
        Ok(Val {
            code: format!("{}({})", c.name, cargs.join(", ")),
            ty: VTy::Class(c.name.clone()),
            lit: None,
        })
    }

    fn define_class(
        &mut self,
        c: &Arc<ClassInfo>,
        init: &Arc<super::names::FuncInfo>,
        params: &[crate::frontend::ast::Param],
        tys: &[Ty],
    ) -> KResult<()> {
        self.unit.classes.insert(
            c.name.clone(),
            ClassDef {
                info: c.clone(),
                fields: Vec::new(),
                ctor: tys.to_vec(),
                head: String::new(),
                done: false,
            },
        );
        let globals = init.globals.clone();
        let mut cx = FnCx::new(&globals, self.unit, init.src.clone(), false);
        cx.infer = false;
        cx.vars.insert("self".into(), self_var(&c.name));
        let mut plist = Vec::new();
        for (p, t) in params.iter().zip(tys) {
            let cpp = cpp_ident(&p.name);
            match t {
                Ty::Scalar(d) => plist.push(format!("{} {cpp}", d.cpp())),
                Ty::Class(k) => plist.push(format!("{k} {cpp}")),
                _ => {}
            }
            cx.bind(&p.name, t.clone(), VarKind::FnParam);
        }
        let mut body = String::new();
        for s in &init.def.body {
            let (target, ann, value) = match &s.kind {
                StmtKind::Pass => continue,
                StmtKind::Assign {
                    target,
                    ann,
                    value: Some(value),
                } => (target, ann, value),
                _ => {
                    return unsupported(
                        s.span,
                        "a @pk.classtype __init__ may only assign fields: self.x = value",
                    )
                    .map_err(|err| with_origin(err, init))
                }
            };
            let field = match target.dotted() {
                Some(("self", f)) => f.to_string(),
                _ => {
                    return unsupported(
                        target.span,
                        "a @pk.classtype __init__ may only assign fields: self.x = value",
                    )
                    .map_err(|err| with_origin(err, init))
                }
            };
            let v = cx.expr(value).map_err(|err| with_origin(err, init))?;
            let declared = match ann {
                Some(a) => Some(cx.annotation(a).map_err(|err| with_origin(err, init))?),
                None => None,
            };
            let ty = match (&declared, &v.ty) {
                (Some(t @ Ty::Scalar(_)), VTy::S(_)) => t.clone(),
                (Some(Ty::Class(a)), VTy::Class(b)) if a == b => Ty::Class(a.clone()),
                (None, VTy::S(s)) => Ty::Scalar(s.dt),
                (None, VTy::Class(k)) => Ty::Class(k.clone()),
                (_, other) => {
                    return type_error(
                        value.span,
                        format!(
                            "a classtype field holds a number or a classtype, not {}",
                            other.describe()
                        ),
                    )
                    .map_err(|err| with_origin(err, init))
                }
            };
            let def = cx.unit.classes.get_mut(&c.name).unwrap();
            let ty = match def.fields.iter().find(|(f, _)| *f == field) {
                Some((_, t)) => t.clone(),
                None => {
                    def.fields.push((field.clone(), ty.clone()));
                    ty
                }
            };
            let code = match &ty {
                Ty::Scalar(d) => cx.coerce(&v, *d),
                _ => v.code.clone(),
            };
            body.push_str(&format!("    this->{} = {code};\n", cpp_ident(&field)));
        }
        drop(cx);
        let def = self.unit.classes.get_mut(&c.name).unwrap();
        let mut head = String::new();
        for (f, t) in &def.fields {
            let cty = match t {
                Ty::Scalar(d) => d.cpp().to_string(),
                Ty::Class(k) => k.clone(),
                _ => unreachable!("fields are numbers or classtypes"),
            };
            head.push_str(&format!("  {cty} {};\n", cpp_ident(f)));
        }
        if !plist.is_empty() {
            head.push_str(&format!(
                "  KOKKOS_INLINE_FUNCTION {}() = default;\n",
                c.name
            ));
        }
        head.push_str(&format!(
            "  KOKKOS_INLINE_FUNCTION {}({}) {{\n{body}  }}\n",
            c.name,
            plist.join(", ")
        ));
        def.head = head;
        def.done = true;
        self.unit.class_order.push(c.name.clone());
        Ok(())
    }

    /// `p.norm(...)` on a classtype value.
    pub fn class_method_call(
        &mut self,
        recv: Val,
        class: &str,
        attr: &str,
        args: &[Expr],
        kwargs: &[(String, Expr)],
        e: &Expr,
    ) -> KResult<Val> {
        let info = match self.unit.classes.get(class) {
            Some(d) => d.info.clone(),
            None => return type_error(e.span, format!("classtype {class} is not defined here")),
        };
        match info.methods.get(attr) {
            Some(f) => {
                let f = f.clone();
                self.user_call(&f, args, kwargs, e, Callee::Class(class.to_string(), recv))
            }
            None => type_error(e.span, format!("classtype {class} has no method '{attr}'")),
        }
    }

    /// Binds `self` for the body of a method of `class`.
    pub fn bind_class_self(&mut self, class: &str) {
        self.vars.insert("self".into(), self_var(class));
    }
}
