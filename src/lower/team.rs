//! Team kernels (`pk.TeamPolicy`): the team member's methods, nested parallel
//! patterns over team ranges, `pk.single`, and the nested `def`s that are their
//! bodies. A nested def is lowered where a pattern runs it, as a C++ lambda
//! capturing by reference, so its parameter types come from that pattern.
use super::lambda::lambda_sig;
use super::{FnCx, VTy, Val, VarKind};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::{Expr, ExprKind, FunctionDef};
use crate::types::{DType, STy, Ty};

/// Python names of the team ranges and their Kokkos counterparts.
const RANGES: &[(&str, &str)] = &[
    ("TeamThreadRange", "Kokkos::TeamThreadRange"),
    ("ThreadVectorRange", "Kokkos::ThreadVectorRange"),
    ("TeamVectorRange", "Kokkos::TeamVectorRange"),
];

/// Names outside nested patterns that only make sense as their arguments.
pub const PATTERN_ONLY: &[&str] = &[
    "TeamThreadMDRange",
    "ThreadVectorMDRange",
    "TeamVectorMDRange",
    "TeamThreadRange",
    "ThreadVectorRange",
    "TeamVectorRange",
    "PerTeam",
    "PerThread",
];

impl FnCx<'_> {
    /// The team member variable `n`, if that is what `e` names.
    pub(super) fn team_member(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Name(n) => self
                .vars
                .get(n.as_str())
                .filter(|v| v.kind == VarKind::Team)
                .map(|v| v.cpp.clone()),
            _ => None,
        }
    }

    pub(super) fn is_team_member(&self, e: &Expr) -> bool {
        self.team_member(e).is_some()
    }

    /// `m.league_rank()`, `m.team_rank()`, `m.team_size()`, `m.league_size()`,
    /// `m.team_barrier()` on the team member.
    pub(super) fn team_method(
        &mut self,
        base: &Expr,
        attr: &str,
        args: &[Expr],
        e: &Expr,
    ) -> KResult<Val> {
        let m = self.team_member(base).expect("checked by the caller");
        if !args.is_empty() && attr != "team_scratch" {
            return type_error(e.span, format!("{attr}() takes no arguments"));
        }
        match attr {
            "league_rank" | "team_rank" | "team_size" | "league_size" => Ok(Val {
                code: format!("{m}.{attr}()"),
                ty: VTy::S(STy::strong(DType::I32)),
                lit: None,
            }),
            "team_scratch" => type_error(
                e.span,
                "team_scratch(level) is only allowed as the first argument of pk.ScratchView1D/2D/3D",
            ),
            "team_barrier" => Ok(Val {
                code: format!("{m}.team_barrier()"),
                ty: VTy::Void,
                lit: None,
            }),
            _ => type_error(
                e.span,
                format!("the team member has no method '{attr}': it has league_rank(), team_rank(), team_size(), league_size() and team_barrier()"),
            ),
        }
    }

    /// `pk.ScratchView1D(m.team_scratch(level), n0, ...)` (up to 3D): a view of
    /// the team's scratch memory. Its element type is the annotation's
    /// (`s: pk.ScratchView1D[pk.double] = ...`), double without one.
    pub(super) fn scratch_view(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        let Some(rank) = scratch_rank(f) else {
            let msg = format!("pk.{f} is not a scratch view type: use pk.ScratchView1D ... 8D");
            return type_error(e.span, msg);
        };
        let Some((member, level)) = args.first().and_then(|a| self.scratch_source(a)) else {
            return type_error(e.span, format!("pk.{f} needs the team's scratch memory first: pk.{f}(team_member.team_scratch(0), n...)"));
        };
        // No extents at all is Kokkos' own `View(scratch)`: every extent 0, as
        // PyKokkos generates it.
        if args.len() != 1 + rank as usize && args.len() != 1 {
            return type_error(
                e.span,
                format!("pk.{f} takes the scratch memory and {rank} extent(s) (or none: an empty view, as in Kokkos)"),
            );
        }
        let level = self.expr(level)?;
        let mut parts = vec![format!("{member}.team_scratch({})", level.code)];
        if args.len() == 1 {
            parts.extend((0..rank).map(|_| "(size_t)0".to_string()));
        }
        for a in &args[1..] {
            let v = self.expr(a)?;
            match &v.ty {
                VTy::S(st) if st.dt.is_int() => parts.push(format!("(size_t)({})", v.code)),
                _ => {
                    return type_error(
                        a.span,
                        format!(
                            "the extents of pk.{f} must be integers, not {}",
                            v.ty.describe()
                        ),
                    )
                }
            }
        }
        let dt = self.scratch_dtype.unwrap_or(DType::F64);
        let vt = crate::types::ViewTy {
            dtype: dt,
            rank,
            layout: crate::types::Layout::Stride,
            atomic: false,
        };
        Ok(Val {
            code: format!(
                "{}({})",
                scratch_view_type(&member, dt, rank),
                parts.join(", ")
            ),
            ty: VTy::View(vt),
            lit: None,
        })
    }

    /// (team member, level) of `m.team_scratch(level)`.
    fn scratch_source<'e>(&self, e: &'e Expr) -> Option<(String, &'e Expr)> {
        let ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        match (&func.kind, args.as_slice()) {
            (ExprKind::Attr(base, attr), [level]) if attr == "team_scratch" => {
                self.team_member(base).map(|m| (m, level))
            }
            _ => None,
        }
    }

    /// The C++ type of a view local bound to `pk.ScratchViewND(...)`, if `e` is one.
    pub(super) fn scratch_local_type(&self, e: &Expr, vt: &crate::types::ViewTy) -> Option<String> {
        let ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        match func.dotted() {
            Some((m, f))
                if f.starts_with("ScratchView") && super::names::is_pk_module(self.globals, m) =>
            {
                let (member, _) = self.scratch_source(args.first()?)?;
                Some(scratch_view_type(&member, vt.dtype, vt.rank))
            }
            _ => None,
        }
    }

    /// `pk.TeamThreadRange(m, n)` / `(m, begin, end)` and the vector ranges, as C++.
    fn team_range(&mut self, e: &Expr) -> KResult<String> {
        let bad = || {
            type_error(
                e.span,
                "the first argument of a nested pattern must be pk.TeamThreadRange(member, n), pk.ThreadVectorRange(member, n) or pk.TeamVectorRange(member, n) (or begin, end instead of n)",
            )
        };
        let ExprKind::Call { func, args, .. } = &e.kind else {
            return bad();
        };
        let Some((_, name)) = func.dotted() else {
            return bad();
        };
        let Some((_, cpp)) = RANGES.iter().find(|(p, _)| *p == name) else {
            return bad();
        };
        if !(2..=3).contains(&args.len()) {
            return type_error(
                e.span,
                format!("pk.{name} takes (team_member, n) or (team_member, begin, end)"),
            );
        }
        let (m, bounds) = self.range_args(name, args)?;
        Ok(format!("{cpp}({m}, {})", bounds.join(", ")))
    }

    /// The element type of a nested body's accumulator: its annotation, else double.
    pub(super) fn acc_dtype(&self, p: &crate::frontend::ast::Param) -> KResult<DType> {
        match &p.ann {
            Some(a) => match self.annotation(a)? {
                Ty::Scalar(d) => Ok(d),
                _ => type_error(
                    a.span,
                    "the accumulator must be a number: pk.Acc[pk.double]",
                ),
            },
            None => Ok(DType::F64),
        }
    }

    /// The team member and the integer bounds of `pk.<name>(member, ...)`, as C++.
    pub(super) fn range_args(
        &mut self,
        name: &str,
        args: &[Expr],
    ) -> KResult<(String, Vec<String>)> {
        let Some(m) = self.team_member(&args[0]) else {
            return type_error(
                args[0].span,
                format!("the first argument of pk.{name} must be the workunit's team member"),
            );
        };
        let mut bounds = Vec::new();
        for a in &args[1..] {
            let v = self.expr(a)?;
            match &v.ty {
                VTy::S(st) if st.dt.is_int() || st.dt == DType::Bool => {
                    bounds.push(format!("(int64_t)({})", v.code))
                }
                _ => {
                    return type_error(
                        a.span,
                        format!(
                            "the bounds of pk.{name} must be integers, not {}",
                            v.ty.describe()
                        ),
                    )
                }
            }
        }
        Ok((m, bounds))
    }

    /// `pk.parallel_for/parallel_reduce/parallel_scan(range, body)` and
    /// `pk.single(pk.PerTeam(m) | pk.PerThread(m), body)` inside a kernel.
    pub(super) fn nested_pattern(&mut self, f: &str, args: &[Expr], e: &Expr) -> KResult<Val> {
        let what = format!("pk.{f}");
        if args.len() != 2 {
            return type_error(
                e.span,
                format!("{what} inside a kernel takes (range, body) where body is a nested 'def'"),
            );
        }
        let def = self.closure_of(&args[1], &what)?;
        let void = Val {
            code: String::new(),
            ty: VTy::Void,
            lit: None,
        };
        let idx = |d: &FunctionDef, k: usize| d.params.get(k).map(|p| p.name.clone());
        let arity = |n: usize, want: &str| -> KResult<()> {
            if def.params.len() != n {
                return type_error(
                    def.span,
                    format!("'{}' is the body of {what}: it must take {want}", def.name),
                );
            }
            Ok(())
        };
        match f {
            "parallel_for" => {
                if let Some(md) = self.md_range(&args[0])? {
                    self.md_for(md, &def)?;
                    return Ok(void);
                }
                let range = self.team_range(&args[0])?;
                arity(1, "one parameter, the index")?;
                let i = idx(&def, 0).unwrap();
                let params = vec![(
                    i,
                    Ty::Scalar(DType::I64),
                    VarKind::Index,
                    "const int64_t".to_string(),
                )];
                let body = self.lambda(&def, &params)?;
                self.line(&format!(
                    "Kokkos::parallel_for({range}, [&]({}) {{",
                    lambda_sig(&params)
                ));
                self.raw(&body);
                self.line("});");
                Ok(void)
            }
            "parallel_reduce" | "parallel_scan" => {
                if f == "parallel_reduce" {
                    if let Some(md) = self.md_range(&args[0])? {
                        return self.md_reduce(md, &def, e);
                    }
                }
                let range = self.team_range(&args[0])?;
                let scan = f == "parallel_scan";
                if scan {
                    arity(3, "the index, the accumulator and the last_pass flag")?;
                } else {
                    arity(2, "the index and the accumulator")?;
                }
                let dt = self.acc_dtype(&def.params[1])?;
                let mut params = vec![
                    (
                        idx(&def, 0).unwrap(),
                        Ty::Scalar(DType::I64),
                        VarKind::Index,
                        "const int64_t".to_string(),
                    ),
                    (
                        idx(&def, 1).unwrap(),
                        Ty::Scalar(dt),
                        VarKind::Acc,
                        format!("{}&", dt.cpp()),
                    ),
                ];
                if scan {
                    params.push((
                        idx(&def, 2).unwrap(),
                        Ty::Scalar(DType::Bool),
                        VarKind::LastPass,
                        "const bool".to_string(),
                    ));
                }
                let body = self.lambda(&def, &params)?;
                let sig = lambda_sig(&params);
                if scan {
                    self.line(&format!("Kokkos::parallel_scan({range}, [&]({sig}) {{"));
                    self.raw(&body);
                    self.line("});");
                    return Ok(void);
                }
                // The total lands in a temporary the enclosing statement reads.
                let tmp = format!("pk_red{}", e.span.start);
                self.line(&format!("{0} {tmp} = {0}();", dt.cpp()));
                self.line(&format!("Kokkos::parallel_reduce({range}, [&]({sig}) {{"));
                self.raw(&body);
                self.line(&format!("}}, {tmp});"));
                Ok(Val {
                    code: tmp,
                    ty: VTy::S(STy::strong(dt)),
                    lit: None,
                })
            }
            "single" => {
                let who = match &args[0].kind {
                    ExprKind::Call { func, args: a, .. } => match (func.dotted(), a.as_slice()) {
                        (Some((_, k @ ("PerTeam" | "PerThread"))), [m])
                            if self.is_team_member(m) =>
                        {
                            Some(format!("Kokkos::{k}({})", self.team_member(m).unwrap()))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                let Some(who) = who else {
                    return type_error(args[0].span, "pk.single needs pk.PerTeam(team_member) or pk.PerThread(team_member) first");
                };
                arity(0, "no parameters")?;
                let body = self.lambda(&def, &[])?;
                self.line(&format!("Kokkos::single({who}, [&]() {{"));
                self.raw(&body);
                self.line("});");
                Ok(void)
            }
            _ => unreachable!("nested_pattern is called for the four pattern names"),
        }
    }
}

/// A scratch view of `dt` with `rank` dimensions in the team's scratch space.
fn scratch_view_type(member: &str, dt: DType, rank: u8) -> String {
    format!(
        "Kokkos::View<{}{}, typename std::decay_t<decltype({member})>::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>",
        dt.cpp(),
        "*".repeat(rank as usize)
    )
}

/// The rank of `ScratchView1D` ... `ScratchView8D`.
fn scratch_rank(f: &str) -> Option<u8> {
    let r: u8 = f
        .strip_prefix("ScratchView")?
        .strip_suffix('D')?
        .parse()
        .ok()?;
    (1..=8).contains(&r).then_some(r)
}
