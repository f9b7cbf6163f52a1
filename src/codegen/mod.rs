//! Code generation: one workunit (with its helper functions and classtypes)
//! becomes a Kokkos functor plus an `extern "C"` entry taking raw pointers.
//! Output is deterministic (ordered maps, stable names) so the cache key and
//! snapshots never flicker.
use crate::errors::{type_error, KResult};
use crate::frontend::ast::FunctionDef;
use crate::frontend::source::SourceInfo;
use crate::lower::{FnCx, Globals, Unit, VarKind};
pub mod fused;

pub use crate::types::{ArgTy, Pattern, Space};
use crate::types::{DType, Layout, Ty, ViewTy};
use serde::Serialize;
use std::sync::Arc;

pub const PRELUDE: &str = include_str!("prelude.hpp");

/// Everything that determines one generated kernel.
pub struct KernelSpec<'a> {
    pub def: &'a FunctionDef,
    pub src: Arc<SourceInfo>,
    pub globals: &'a Globals,
    pub pattern: Pattern,
    pub space: Space,
    /// Number of work indices (1 for RangePolicy, n for MDRange).
    pub rank: usize,
    /// Launch arguments in workunit parameter order (functor members for functors).
    pub args: Vec<(String, ArgTy)>,
    /// `self` is the first parameter (functor method): members are `self.x`.
    pub is_method: bool,
    pub label: String,
}

/// What the runtime needs to call the entry point.
#[derive(Clone, Debug, Serialize)]
pub struct KernelAbi {
    /// Argument index (into `KernelSpec::args`) for each view slot, in order.
    pub view_slots: Vec<usize>,
    /// Argument index and C++ dtype for each scalar slot, in order.
    pub scalar_slots: Vec<(usize, DType)>,
    pub acc: Option<DType>,
}

pub struct Generated {
    pub source: String,
    pub abi: KernelAbi,
}

pub fn view_cpp(v: &ViewTy, space: Space) -> String {
    format!(
        "Kokkos::View<{}{}, {}, {}, Kokkos::MemoryTraits<Kokkos::Unmanaged>>",
        v.dtype.cpp(),
        "*".repeat(v.rank as usize),
        v.layout.cpp(),
        space.mem()
    )
}

/// How one launch argument appears in the functor being generated.
#[derive(Clone, Debug, Hash)]
pub enum Plan {
    /// A member of its own (the default), with this C++ name.
    Member(String),
    /// Shares a member declared for an earlier body (same buffer, fused).
    Shared(String),
    /// A dead temporary of a fused kernel: a per-work-item local of this dtype.
    Local(String, DType),
}

/// (C++ name, C++ type, view slot) of one functor member.
pub type Member = (String, String, Option<(usize, ViewTy)>);

/// One workunit lowered into a functor body, before assembly.
pub struct Lowered {
    pub index: Vec<String>,
    pub acc: Option<(String, DType)>,
    pub last_pass: Option<String>,
    pub decls: String,
    pub body: String,
    /// (C++ name, C++ type, view slot) of members this body declares.
    pub members: Vec<Member>,
    pub abi: KernelAbi,
}

/// Decides, per argument index and name, how an argument is represented.
pub type PlanFn<'a> = dyn Fn(usize, &str) -> Plan + 'a;

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
    for p in &index_params {
        if team {
            cx.bind(&p.name, Ty::Void, VarKind::Team);
        } else {
            cx.bind(&p.name, Ty::Scalar(DType::I64), VarKind::Index);
        }
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
            Some(a) => Some(cx.annotation(a)?),
            None => None,
        };
        let ty = match (at, declared) {
            (ArgTy::View(v), Some(Ty::View(w))) => {
                if v.dtype != w.dtype || v.rank != w.rank {
                    return type_error(
                        ann.unwrap().span,
                        format!(
                            "argument '{name}' is {} but the workunit declares {}",
                            Ty::View(*v).describe(),
                            Ty::View(w).describe()
                        ),
                    );
                }
                Ty::View(*v)
            }
            (ArgTy::View(v), None) => Ty::View(*v),
            (ArgTy::Scalar { dtype, .. }, None) => Ty::Scalar(*dtype),
            (ArgTy::Scalar { .. }, Some(Ty::Scalar(d))) => Ty::Scalar(d),
            (at, Some(t)) => {
                let got = match at {
                    ArgTy::View(v) => Ty::View(*v).describe(),
                    ArgTy::Scalar { dtype, .. } => dtype.name().to_string(),
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
            Some(Plan::Local(c, _)) => var.cpp = c.clone(),
            None => {}
        }
        let cpp = var.cpp.clone();
        if let Some(Plan::Local(c, d)) = &decided {
            cx.elem_locals.insert(key.clone(), (c.clone(), *d));
            continue;
        }
        let declare = !matches!(decided, Some(Plan::Shared(_)));
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
    let body = cx.lower_body(&def.body)?;
    let decls = cx.declarations();
    drop(cx);
    Ok(Lowered {
        index: index_params
            .iter()
            .map(|p| crate::lower::cpp_ident(&p.name))
            .collect(),
        acc: acc
            .as_ref()
            .zip(acc_dt)
            .map(|(p, d)| (crate::lower::cpp_ident(&p.name), d)),
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

/// Generates the translation unit for one kernel.
pub fn generate(spec: &KernelSpec) -> KResult<Generated> {
    let def = spec.def;
    let mut unit = Unit::default();
    let lw = lower_workunit(spec, &mut unit, None)?;
    let (members, abi, decls, body) = (lw.members, lw.abi, lw.decls, lw.body);
    let acc_dt = lw.acc.as_ref().map(|a| a.1);
    let nidx = spec.rank;

    // `pk_wu_` keeps clear of the entry points (pk_run, pk_error) and ABI structs.
    let fname = format!("pk_wu_{}", sanitize(&def.name));
    let mut s = String::new();
    s.push_str(&format!(
        "// workunit '{}' ({}:{})\n",
        def.name, spec.src.filename, spec.src.first_line
    ));
    s.push_str("#include \"pk_prelude.hpp\"\n\nnamespace {\n");
    s.push_str(&unit_header(&unit));
    s.push_str(&format!("struct {fname} {{\n"));
    for (name, ty, _) in &members {
        s.push_str(&format!("  {ty} {name};\n"));
    }
    s.push_str(&unit_methods(&unit));
    let team = spec.rank == 0;
    let idx: Vec<String> = lw
        .index
        .iter()
        .map(|p| {
            if team {
                format!("const {} {p}", team_member_cpp(spec.space))
            } else {
                format!("const int64_t {p}")
            }
        })
        .collect();
    let mut sig = idx.join(", ");
    if let Some((p, d)) = &lw.acc {
        sig.push_str(&format!(", {}& {p}", d.cpp()));
    }
    if let Some(p) = &lw.last_pass {
        sig.push_str(&format!(", const bool {p}"));
    }
    s.push_str(&format!("  KOKKOS_INLINE_FUNCTION void operator()({sig}) const {{\n{decls}{body}  }}\n}};\n}}  // namespace\n\n"));

    // The entry point: unpack raw arguments, dispatch, report exceptions.
    s.push_str("extern \"C\" int pk_run(const pk_view_arg* views, const pk_scalar_arg* scalars, const int64_t* lo, const int64_t* hi, void* result) {\n  try {\n");
    s.push_str(&format!("    {fname} f;\n"));
    for (name, _, slot) in &members {
        if let Some((k, v)) = slot {
            s.push_str(&format!(
                "    f.{name} = decltype(f.{name})(({}*)views[{k}].data, {});\n",
                v.dtype.cpp(),
                layout_args(*k, v)
            ));
        }
    }
    for (j, (k, d)) in abi.scalar_slots.iter().enumerate() {
        let name = &members.iter().filter(|m| m.2.is_none()).nth(j).unwrap().0;
        let _ = k;
        let field = if d.is_float() { "d" } else { "i" };
        s.push_str(&format!(
            "    f.{name} = ({})scalars[{j}].{field};\n",
            d.cpp()
        ));
    }
    let policy = if team {
        // hi = [league size, team size (<= 0: Kokkos::AUTO), vector length,
        //       scratch bytes per team and per thread at levels 0 and 1].
        // Kokkos aborts the process on a team larger than the kernel allows:
        // ask first, and fail like any other launch error instead.
        let t = format!("Kokkos::TeamPolicy<{}>", spec.space.cpp());
        let tag = match spec.pattern {
            Pattern::For => "Kokkos::ParallelForTag",
            _ => "Kokkos::ParallelReduceTag",
        };
        s.push_str(&format!(
            "    {t} pk_probe((int)hi[0], 1, (int)hi[2]);\n    pk::team_scratch(pk_probe, hi);\n    const int pk_team_max = pk_probe.team_size_max(f, {tag}());\n    if (hi[1] > pk_team_max) return pk::team_too_large(hi[1], pk_team_max);\n    {t} pk_policy = hi[1] > 0 ? {t}((int)hi[0], (int)hi[1], (int)hi[2]) : {t}((int)hi[0], Kokkos::AUTO, (int)hi[2]);\n    pk::team_scratch(pk_policy, hi);\n"
        ));
        "pk_policy".to_string()
    } else if nidx == 1 {
        format!(
            "Kokkos::RangePolicy<{}, Kokkos::IndexType<int64_t>>(lo[0], hi[0])",
            spec.space.cpp()
        )
    } else {
        let los: Vec<String> = (0..nidx).map(|d| format!("lo[{d}]")).collect();
        let his: Vec<String> = (0..nidx).map(|d| format!("hi[{d}]")).collect();
        format!(
            "Kokkos::MDRangePolicy<{}, Kokkos::Rank<{nidx}>, Kokkos::IndexType<int64_t>>({{{}}}, {{{}}})",
            spec.space.cpp(),
            los.join(", "),
            his.join(", ")
        )
    };
    let label = crate::codegen::sanitize(&spec.label);
    match (spec.pattern, acc_dt) {
        (Pattern::For, _) if nidx == 1 && !team => {
            s.push_str(&range_for(spec.space, &label, &policy))
        }
        (Pattern::For, _) => s.push_str(&format!("    Kokkos::parallel_for(\"{label}\", {policy}, f);\n")),
        (Pattern::Reduce, Some(d)) => s.push_str(&format!(
            "    {0} r = {0}();\n    Kokkos::parallel_reduce(\"{label}\", {policy}, f, r);\n    *({0}*)result = r;\n",
            d.cpp()
        )),
        (Pattern::Scan, Some(d)) => s.push_str(&format!(
            "    {0} r = {0}();\n    Kokkos::parallel_scan(\"{label}\", {policy}, f, r);\n    *({0}*)result = r;\n",
            d.cpp()
        )),
        _ => unreachable!("reductions always have an accumulator type"),
    }
    s.push_str("    return 0;\n  } catch (std::exception& e) {\n    return pk::fail(e.what());\n  } catch (...) {\n    return pk::fail(\"unknown C++ exception\");\n  }\n}\n\n");
    s.push_str("extern \"C\" const char* pk_error() { return pk::last_error(); }\n");
    Ok(Generated { source: s, abi })
}

/// The dispatch of a 1-D parallel_for of functor `f` over `lo[0]..hi[0]` (single
/// and fused kernels). On the GPU it goes through `pk::cuda_for` (prelude.hpp):
/// Kokkos 3.4's RangePolicy block sizing costs a fifth of the bandwidth there.
pub fn range_for(space: Space, label: &str, policy: &str) -> String {
    if space == Space::Cuda {
        format!("    pk::cuda_for(\"{label}\", f, lo[0], hi[0]);\n")
    } else {
        format!("    Kokkos::parallel_for(\"{label}\", {policy}, f);\n")
    }
}

/// The C++ type of a TeamPolicy workunit's team member in `space`.
pub fn team_member_cpp(space: Space) -> String {
    format!("Kokkos::TeamPolicy<{}>::member_type&", space.cpp())
}

pub fn layout_args(k: usize, v: &ViewTy) -> String {
    let r = v.rank as usize;
    match v.layout {
        Layout::Stride => {
            let parts: Vec<String> = (0..r)
                .map(|d| format!("views[{k}].extent[{d}], views[{k}].stride[{d}]"))
                .collect();
            format!("Kokkos::LayoutStride({})", parts.join(", "))
        }
        _ => (0..r)
            .map(|d| format!("views[{k}].extent[{d}]"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

pub use crate::lower::sanitize;
