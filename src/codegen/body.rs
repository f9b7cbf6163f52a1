//! One workunit lowered into a functor body (members, parameters, the typed
//! C++ of its statements), and the helper functions and classtypes of a
//! translation unit, emitted ahead of the functor.
use super::emit::view_cpp;
use super::spec::{KernelAbi, KernelSpec, Lowered, Plan, PlanFn};
use crate::errors::{type_error, KResult};
use crate::lower::{sanitize, FnCx, Unit, VarKind};
use crate::types::{ArgTy, DType, Pattern, Ty};

/// Lowers one workunit's body against `unit` (shared by all bodies of a
/// translation unit). `plan(k, name)` says how argument k is represented;
/// `None` gives each argument its own member named as in the workunit.
pub fn lower_workunit(
    spec: &KernelSpec,
    unit: &mut Unit,
    plan: Option<&PlanFn>,
) -> KResult<Lowered> {
    let def = spec.def;
    let mut params = def.params.iter();
    if spec.is_method {
        params.next();
    }
    // Rank 0 is a TeamPolicy: one leading parameter, the team member.
    let team = spec.rank == 0;
    let nidx = spec.rank.max(1);
    let index_params: Vec<_> = params.by_ref().take(nidx).cloned().collect();
    if index_params.len() < nidx {
        let need = if team {
            "a team member parameter first, for pk.TeamPolicy".to_string()
        } else {
            format!("{nidx} index parameter(s) for this policy")
        };
        return type_error(def.span, format!("workunit '{}' needs {need}", def.name));
    }
    let mut extra = Vec::new();
    let mut acc = None;
    let mut last_pass = None;
    if spec.pattern != Pattern::For {
        match params.next() {
            Some(p) => acc = Some(p.clone()),
            None => return type_error(def.span, format!("workunit '{}' is launched as a reduction/scan but has no accumulator parameter", def.name)),
        }
        if spec.pattern == Pattern::Scan {
            match params.next() {
                Some(p) => last_pass = Some(p.clone()),
                None => {
                    return type_error(
                        def.span,
                        format!(
                        "scan workunit '{}' needs a 'last_pass' parameter after the accumulator",
                        def.name
                    ),
                    )
                }
            }
        }
    }
    extra.extend(params.cloned());

    let mut cx = FnCx::new(spec.globals, unit, spec.src.clone(), true);
    // An index the body assigns (`i -= 1`, as Python allows) is a local that
    // starts as the index the kernel passed in.
    let mut copies = String::new();
    let mut sig_names = Vec::new();
    for p in &index_params {
        let cpp = crate::lower::cpp_ident(&p.name);
        if team {
            cx.bind(&p.name, Ty::Void, VarKind::Team);
        } else if crate::analysis::access::rebinds(&def.body, &p.name) {
            cx.bind(&p.name, Ty::Scalar(DType::I64), VarKind::Local);
            copies.push_str(&format!("    int64_t {cpp} = pk_index_{cpp};\n"));
            sig_names.push(format!("pk_index_{cpp}"));
            continue;
        } else {
            cx.bind(&p.name, Ty::Scalar(DType::I64), VarKind::Index);
        }
        sig_names.push(cpp);
    }
    let acc_dt = match &acc {
        Some(p) => match &p.ann {
            Some(a) => match cx.annotation(a)? {
                Ty::Scalar(d) => Some(d),
                _ => {
                    return type_error(
                        a.span,
                        "the accumulator must be a number: pk.Acc[pk.double]",
                    )
                }
            },
            None => Some(DType::F64),
        },
        None => None,
    };
    if let (Some(p), Some(d)) = (&acc, acc_dt) {
        cx.bind(&p.name, Ty::Scalar(d), VarKind::Acc);
        if let Pattern::Reducer(r) = spec.pattern {
            cx.reducer = Some((p.name.clone(), r));
        }
    }
    if let Some(p) = &last_pass {
        cx.bind(&p.name, Ty::Scalar(DType::Bool), VarKind::LastPass);
    }
    // Launch arguments: annotated scalars take the annotation's dtype.
    let mut members = Vec::new();
    let mut abi = KernelAbi {
        view_slots: vec![],
        scalar_slots: vec![],
        acc: acc_dt,
    };
    for (k, (name, at)) in spec.args.iter().enumerate() {
        let ann = if spec.is_method {
            None
        } else {
            extra
                .iter()
                .find(|p| &p.name == name)
                .and_then(|p| p.ann.clone())
        };
        let declared = match &ann {
            // A pool's annotation (pk.Random_XorShift64_Pool) names no kernel type.
            Some(_) if *at == ArgTy::Rng => None,
            Some(a) => Some(cx.annotation(a)?),
            None => None,
        };
        let ty = match (at, declared) {
            (ArgTy::View(v), Some(Ty::View(w))) => {
                if v.dtype != w.dtype || v.rank != w.rank {
                    // (newer PyKokkos' words: "expects a View with dtype int32")
                    let what = if v.dtype != w.dtype {
                        format!("expects a View with dtype {}", w.dtype.name())
                    } else {
                        format!("expects a View of rank {}", w.rank)
                    };
                    return type_error(
                        ann.unwrap().span,
                        format!(
                            "argument '{name}' {what}: it is {} but the workunit declares {}",
                            Ty::View(*v).describe(),
                            Ty::View(w).describe()
                        ),
                    );
                }
                Ty::View(*v)
            }
            (ArgTy::View(v), None) => Ty::View(*v),
            (ArgTy::Scalar { dtype, .. }, None) => Ty::Scalar(*dtype),
            (ArgTy::Rng, _) => Ty::Scalar(DType::U64),
            (ArgTy::Scalar { .. }, Some(Ty::Scalar(d))) => Ty::Scalar(d),
            (at, Some(t)) => {
                let got = match at {
                    ArgTy::View(v) => Ty::View(*v).describe(),
                    ArgTy::Scalar { dtype, .. } => dtype.name().to_string(),
                    ArgTy::Rng => "a random pool".to_string(),
                };
                return type_error(
                    ann.unwrap().span,
                    format!(
                        "argument '{name}' is {got} but the workunit declares {}",
                        t.describe()
                    ),
                );
            }
        };
        let weak = matches!(at, ArgTy::Scalar { weak: true, .. }) && ann.is_none();
        // Functor members live apart from locals: `self.x` and a local `x` differ.
        let key = if spec.is_method {
            format!("self.{name}")
        } else {
            name.clone()
        };
        cx.bind(&key, ty.clone(), VarKind::Arg);
        let var = cx.vars.get_mut(key.as_str()).unwrap();
        var.weak = weak;
        if spec.is_method {
            var.cpp = format!("pk_m_{}", sanitize(name));
        }
        let decided = plan.map(|p| p(k, name));
        match &decided {
            Some(Plan::Member(c)) | Some(Plan::Shared(c)) => var.cpp = c.clone(),
            Some(Plan::Local(c, _)) | Some(Plan::Cached(c, ..)) => var.cpp = c.clone(),
            None => {}
        }
        let cpp = var.cpp.clone();
        if *at == ArgTy::Rng && cx.rng.is_none() {
            cx.rng = Some(cpp.clone());
        }
        if let Some(Plan::Local(c, d)) = &decided {
            cx.elem_locals.insert(key.clone(), (c.clone(), *d));
            continue;
        }
        // `v[i]` is the local; the member stays for the load and the store.
        if let Some(Plan::Cached(_, local, d, _)) = &decided {
            cx.elem_locals.insert(key.clone(), (local.clone(), *d));
        }
        let declare = match &decided {
            Some(Plan::Shared(_)) => false,
            Some(Plan::Cached(.., declares)) => *declares,
            _ => true,
        };
        match &ty {
            Ty::View(v) => {
                abi.view_slots.push(k);
                if declare {
                    members.push((
                        cpp,
                        view_cpp(v, spec.space),
                        Some((abi.view_slots.len() - 1, *v)),
                    ));
                }
            }
            Ty::Scalar(d) => {
                abi.scalar_slots.push((k, *d));
                if declare {
                    members.push((cpp, d.cpp().to_string(), None));
                }
            }
            _ => {}
        }
    }
    if !spec.is_method {
        for p in &extra {
            if !spec.args.iter().any(|(n, _)| n == &p.name) {
                return type_error(
                    p.span,
                    format!(
                        "workunit '{}' has parameter '{}' but the launch did not pass it",
                        def.name, p.name
                    ),
                );
            }
        }
    }
    let body = copies + &cx.lower_body(&def.body)?;
    let mut decls = cx.declarations();
    if cx.rng_used {
        // Each work item (each team thread) seeds its own generator.
        let pool = cx.rng.clone().unwrap_or_default();
        let at = if team {
            let m = crate::lower::cpp_ident(&index_params[0].name);
            format!("{m}.league_rank(), {m}.team_rank()")
        } else {
            sig_names.join(", ")
        };
        decls = format!("    pk::Rng pk_rng({pool}, {at});\n") + &decls;
    }
    drop(cx);
    Ok(Lowered {
        index: sig_names,
        acc: acc
            .as_ref()
            .zip(acc_dt)
            .map(|(p, d)| (crate::lower::cpp_ident(&p.name), d)),
        acc_only_added: acc.as_ref().is_some_and(|p| only_added(&def.body, &p.name)),
        acc_grows_by_adds: acc
            .as_ref()
            .is_some_and(|p| grows_by_adds(&def.body, &p.name)),
        last_pass: last_pass.as_ref().map(|p| crate::lower::cpp_ident(&p.name)),
        decls,
        body,
        members,
        abi,
    })
}

/// Classtypes and `@pk.function`s of a unit, ahead of the functor.
pub fn unit_header(unit: &Unit) -> String {
    let mut s = String::new();
    // Classtypes in completion order, their methods declared inside ...
    for name in &unit.class_order {
        let def = &unit.classes[name];
        s.push_str(&format!("struct {name} {{\n{}", def.head));
        for key in &unit.order {
            let inst = &unit.instances[key];
            if inst.class.as_deref() == Some(name.as_str()) {
                for l in inst.decl.lines() {
                    s.push_str(&format!("  {l}\n"));
                }
            }
        }
        s.push_str("};\n\n");
    }
    // ... then functions, callees first, and the classtype methods' bodies.
    for key in &unit.order {
        let inst = &unit.instances[key];
        if !inst.method {
            s.push_str(&inst.code);
            s.push('\n');
        }
    }
    s
}

/// Functor methods (`@pk.function` methods of a functor class).
pub fn unit_methods(unit: &Unit) -> String {
    let mut s = String::new();
    for key in &unit.order {
        if unit.instances[key].method {
            for l in unit.instances[key].code.lines() {
                s.push_str(&format!("  {l}\n"));
            }
        }
    }
    s
}

/// Whether `acc` appears in `body` only as the target of `acc += value`
/// (with `value` not mentioning it), in nested defs too.
fn only_added(body: &[crate::frontend::ast::Stmt], acc: &str) -> bool {
    use crate::frontend::ast::{walk_exprs, BinOp, ExprKind, StmtKind};
    let mentions = |e: &crate::frontend::ast::Expr| {
        let mut any = false;
        walk_exprs(
            &[crate::frontend::ast::Stmt {
                kind: StmtKind::Expr(e.clone()),
                span: e.span,
            }],
            &mut |x| any |= matches!(&x.kind, ExprKind::Name(n) if n == acc),
        );
        any
    };
    body.iter().all(|s| match &s.kind {
        StmtKind::AugAssign { target, op, value } if matches!(&target.kind, ExprKind::Name(n) if n == acc) => {
            *op == BinOp::Add && !mentions(value)
        }
        StmtKind::Assign { target, value, .. } => {
            !mentions(target) && value.as_ref().is_none_or(|v| !mentions(v))
        }
        StmtKind::AugAssign { target, value, .. } => !mentions(target) && !mentions(value),
        StmtKind::If { test, body, orelse } => !mentions(test) && only_added(body, acc) && only_added(orelse, acc),
        StmtKind::For { start, stop, step, body, .. } => {
            !mentions(start) && !mentions(stop) && step.as_ref().is_none_or(|x| !mentions(x)) && only_added(body, acc)
        }
        StmtKind::While { test, body } => !mentions(test) && only_added(body, acc),
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => !mentions(e),
        StmtKind::Def(d) => only_added(&d.body, acc),
        _ => true,
    })
}

/// `acc` changes only through `acc += x` (or `-=`) with `x` not reading it (other
/// statements may read it): one item's part of a scan is what its body adds
/// to zero, so the items may be taken in any grouping (Kokkos' scans assume
/// as much: they join partial updates by adding them).
fn grows_by_adds(body: &[crate::frontend::ast::Stmt], acc: &str) -> bool {
    use crate::frontend::ast::{walk_exprs, BinOp, ExprKind, Stmt, StmtKind};
    let is_acc = |e: &crate::frontend::ast::Expr| matches!(&e.kind, ExprKind::Name(n) if n == acc);
    let reads = |e: &crate::frontend::ast::Expr| {
        let mut any = false;
        let s = Stmt {
            kind: StmtKind::Expr(e.clone()),
            span: e.span,
        };
        walk_exprs(std::slice::from_ref(&s), &mut |x| {
            any |= matches!(&x.kind, ExprKind::Name(n) if n == acc)
        });
        any
    };
    body.iter().all(|s| match &s.kind {
        StmtKind::AugAssign { target, op, value } if is_acc(target) => {
            matches!(op, BinOp::Add | BinOp::Sub) && !reads(value)
        }
        StmtKind::Assign { target, .. } => !reads(target),
        StmtKind::AugAssign { target, .. } => !reads(target),
        StmtKind::If { body, orelse, .. } => grows_by_adds(body, acc) && grows_by_adds(orelse, acc),
        StmtKind::For { var, body, .. } => var != acc && grows_by_adds(body, acc),
        StmtKind::While { body, .. } => grows_by_adds(body, acc),
        StmtKind::Nonlocal(names) => !names.iter().any(|n| n == acc),
        StmtKind::Def(d) => grows_by_adds(&d.body, acc),
        _ => true,
    })
}
