//! Code generation of one fused region: every workunit body becomes a member
//! function of one functor (so a `return` ends only its own body and locals
//! never collide), `operator()` calls them in program order for each work
//! item, buffers passed under several names become one member, dead
//! temporaries become locals, and several reductions one multi-value reduction
//! (each total with its own identity and join: sums, and the scalar built-in
//! reducers, whose bodies start each work item from the identity in a register).
use super::body::{lower_workunit, unit_header, unit_methods};
use super::device::{DeviceKind, DeviceParts, Total};
use super::device_kernels::{identity, join};
use super::emit::{
    bounds_checked, checks_after, layout_args, range_for, range_reduce, scalar_from_abi, view_cpp,
    ENTRY_END, ENTRY_START,
};
use super::spec::{KernelSpec, Plan};
use crate::errors::KResult;
use crate::lower::sanitize;
use crate::lower::Unit;
use crate::types::{DType, ViewTy};
use crate::types::{Pattern, Space};

pub struct Body<'a> {
    pub spec: KernelSpec<'a>,
    pub plans: Vec<Plan>,
}

/// How the runtime fills the fused entry point's arguments.
#[derive(Clone, Debug)]
pub struct FusedAbi {
    /// Per view member (`pk_b{g}`): the (body, argument) whose view supplies it.
    pub groups: Vec<(usize, usize)>,
    /// Per scalar slot: (body, argument, dtype).
    pub scalars: Vec<(usize, usize, DType)>,
    /// Accumulator dtype of each reduce body, in body order.
    pub accs: Vec<(usize, DType)>,
}

/// `groups[g]`: the view type of member `pk_b{g}`; `locals[t]`: dtype of
/// `pk_t{t}`; `cached`: the members `pk_b{g}` each work item keeps in a local
/// `pk_c{g}` of this dtype.
pub fn generate(
    bodies: &[Body],
    groups: &[(usize, usize, ViewTy)],
    locals: &[(usize, DType)],
    cached: &[(usize, DType)],
    written: &[bool],
    space: Space,
    label: &str,
) -> KResult<(String, FusedAbi, Option<DeviceParts>)> {
    let mut unit = Unit {
        bounds_check: bounds_checked(space),
        ..Default::default()
    };
    let mut lowered = Vec::new();
    for b in bodies {
        let plans = b.plans.clone();
        let plan = move |k: usize, _: &str| plans[k].clone();
        lowered.push(lower_workunit(&b.spec, &mut unit, Some(&plan))?);
    }
    let mut abi = FusedAbi {
        groups: groups.iter().map(|(b, a, _)| (*b, *a)).collect(),
        scalars: vec![],
        accs: vec![],
    };
    let inner = label.trim_start_matches("fused(").trim_end_matches(')');
    let fname = format!("pk_fused_{}", sanitize(&inner.replace('+', "_")));
    let mut s = format!("// {label}\n#include \"pk_prelude.hpp\"\n\n");
    let functor_at = s.len();
    s.push_str("namespace {\n");
    s.push_str(&unit_header(&unit));
    let reduces: Vec<usize> = bodies
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b.spec.pattern, Pattern::Reduce | Pattern::Reducer(_)))
        .map(|(i, _)| i)
        .collect();
    // Each reduction's total: its type, and the built-in reducer that joins it.
    let totals: Vec<Total> = reduces
        .iter()
        .map(|&b| Total {
            reducer: match bodies[b].spec.pattern {
                Pattern::Reducer(r) => Some(r),
                _ => None,
            },
            ..Total::sum(lowered[b].acc.as_ref().unwrap().1)
        })
        .collect();
    let any_reducer = totals.iter().any(|t| t.reducer.is_some());
    // Several reductions, or one through a built-in reducer: a value type of
    // our own with each total's identity and join.
    let multi = reduces.len() > 1 || any_reducer;
    if multi {
        s.push_str("struct pk_vals {\n");
        for (r, &b) in reduces.iter().enumerate() {
            s.push_str(&format!(
                "  {} r{r};\n",
                lowered[b].acc.as_ref().unwrap().1.cpp()
            ));
        }
        s.push_str("};\n\n");
    }
    s.push_str(&format!("struct {fname} {{\n"));
    if multi {
        s.push_str("  using value_type = pk_vals;\n");
    }
    for (g, (_, _, vt)) in groups.iter().enumerate() {
        s.push_str(&format!("  {} pk_b{g};\n", view_cpp(vt, space)));
    }
    for (b, lw) in lowered.iter().enumerate() {
        for (k, dt) in &lw.abi.scalar_slots {
            s.push_str(&format!("  {} pk_s{b}_{k};\n", dt.cpp()));
            abi.scalars.push((b, *k, *dt));
        }
    }
    s.push_str(&unit_methods(&unit));
    for (b, lw) in lowered.iter().enumerate() {
        let mut sig = format!("const int64_t {}", lw.index[0]);
        if let Some((p, d)) = &lw.acc {
            sig.push_str(&format!(", {}& {p}", d.cpp()));
            abi.accs.push((b, *d));
        }
        for (t, (_, d)) in locals.iter().enumerate() {
            sig.push_str(&format!(", {}& pk_t{t}", d.cpp()));
        }
        for (g, d) in cached {
            sig.push_str(&format!(", {}& pk_c{g}", d.cpp()));
        }
        s.push_str(&format!(
            "  // {} ({}:{})\n  KOKKOS_INLINE_FUNCTION void pk_body{b}({sig}) const {{\n{}{}  }}\n",
            bodies[b].spec.def.name,
            bodies[b].spec.src.filename,
            bodies[b].spec.src.first_line,
            lw.decls,
            lw.body
        ));
    }
    let acc_param = match reduces.len() {
        0 => String::new(),
        1 if !multi => format!(
            ", {}& pk_acc",
            lowered[reduces[0]].acc.as_ref().unwrap().1.cpp()
        ),
        _ => ", value_type& pk_acc".to_string(),
    };
    // Each reduction adds into a register of its own, folded into the
    // accumulator once per work item: the accumulator is a reference the
    // compiler must assume the bodies' stores may alias. A body that reads
    // its accumulator gets the accumulator itself (the running value).
    // A built-in reducer's body starts from the identity in its register
    // (as each Kokkos thread's value does) and is joined in.
    let acc_of = |r: usize| match multi {
        false => "pk_acc".to_string(),
        true => format!("pk_acc.r{r}"),
    };
    let in_register = |r: usize| lowered[reduces[r]].acc_only_added || totals[r].reducer.is_some();
    // Where total r starts: its reducer's identity, or zero for a sum.
    let start = |r: usize| match totals[r].reducer {
        Some(_) => identity(&totals[r]),
        None => format!("{}()", totals[r].dtype.cpp()),
    };
    let mut item = |head: &str, direct: bool| {
        s.push_str(&format!(
            "  KOKKOS_INLINE_FUNCTION void {head}(const int64_t pk_i{acc_param}) const {{\n"
        ));
        // (`direct`: every body on the accumulator itself, for a caller whose
        // accumulator is a local no store can alias: pk::chunked_vals.)
        let in_register = |r: usize| !direct && in_register(r);
        for (t, (_, d)) in locals.iter().enumerate() {
            s.push_str(&format!("    {0} pk_t{t} = {0}();\n", d.cpp()));
        }
        // Buffers only ever accessed at the work index: each element is loaded
        // once and stored once, the bodies working on a local in between (read
        // through the member, each access after a store to another buffer would
        // be loaded again: the compiler cannot tell that they do not alias).
        for (g, d) in cached {
            s.push_str(&format!("    {} pk_c{g} = pk_b{g}(pk_i);\n", d.cpp()));
        }
        for r in (0..reduces.len()).filter(|&r| in_register(r)) {
            s.push_str(&format!(
                "    {} pk_r{r} = {};\n",
                totals[r].dtype.cpp(),
                start(r)
            ));
        }
        for (b, lw) in lowered.iter().enumerate() {
            let mut args = vec!["pk_i".to_string()];
            if lw.acc.is_some() {
                let r = reduces.iter().position(|x| *x == b).unwrap();
                args.push(if in_register(r) {
                    format!("pk_r{r}")
                } else {
                    acc_of(r)
                });
            }
            args.extend((0..locals.len()).map(|t| format!("pk_t{t}")));
            args.extend(cached.iter().map(|(g, _)| format!("pk_c{g}")));
            s.push_str(&format!("    pk_body{b}({});\n", args.join(", ")));
        }
        for (g, _) in cached
            .iter()
            .filter(|(g, _)| written.get(*g).copied().unwrap_or(true))
        {
            s.push_str(&format!("    pk_b{g}(pk_i) = pk_c{g};\n"));
        }
        for r in (0..reduces.len()).filter(|&r| in_register(r)) {
            s.push_str(&format!(
                "    {}\n",
                join(&totals[r], &acc_of(r), &format!("pk_r{r}"))
            ));
        }
        s.push_str("  }\n");
    };
    item("operator()", false);
    // Chunked on the host when no body reads its running value (that one
    // must see Kokkos' running value, as its own kernel does).
    let chunked = multi && space != Space::Cuda && (0..reduces.len()).all(in_register);
    if chunked {
        item("direct", true);
    }
    if multi {
        s.push_str("  KOKKOS_INLINE_FUNCTION void init(value_type& v) const {\n");
        for r in 0..reduces.len() {
            s.push_str(&format!("    v.r{r} = {};\n", start(r)));
        }
        // Kokkos' join, and `merge`, the same on plain values: pk::chunked_vals
        // joins its partials with it (a volatile one would keep them in memory).
        let heads = [
            "join(volatile value_type& a, const volatile value_type& b)",
            "merge(value_type& a, const value_type& b)",
        ];
        for head in &heads[..if chunked { 2 } else { 1 }] {
            s.push_str(&format!(
                "  }}\n  KOKKOS_INLINE_FUNCTION void {head} const {{\n"
            ));
            for (r, t) in totals.iter().enumerate() {
                s.push_str(&format!(
                    "    {}\n",
                    join(t, &format!("a.r{r}"), &format!("b.r{r}"))
                ));
            }
        }
        s.push_str("  }\n");
    }
    s.push_str("};\n}  // namespace\n\n");
    let functor = s[functor_at..].to_string();
    s.push_str(ENTRY_START);
    s.push_str(&format!("    {fname} f;\n"));
    let mut unpack = String::new();
    for (g, (_, _, vt)) in groups.iter().enumerate() {
        unpack.push_str(&format!(
            "    f.pk_b{g} = decltype(f.pk_b{g})(({}*)views[{g}].data, {});\n",
            vt.dtype.cpp(),
            layout_args(g, vt)
        ));
    }
    for (j, (b, k, d)) in abi.scalars.iter().enumerate() {
        unpack.push_str(&format!(
            "    f.pk_s{b}_{k} = {};\n",
            scalar_from_abi(*d, j)
        ));
    }
    s.push_str(&unpack);
    let kind = match reduces.len() {
        0 => Some(DeviceKind::For),
        _ if (0..reduces.len()).all(in_register) => Some(DeviceKind::Reduce(totals.clone())),
        _ => None,
    };
    let device = kind
        .filter(|_| space == Space::Cuda)
        .map(|kind| DeviceParts {
            functor,
            fname: fname.clone(),
            unpack,
            views: groups.len(),
            scalars: abi.scalars.len(),
            kind,
            record: multi,
            rank: 1,
            left_fastest: false,
            bounds_check: unit.bounds_check,
            zero_div: unit.zero_div,
        });
    let policy = format!(
        "Kokkos::RangePolicy<{}, Kokkos::IndexType<int64_t>>(lo[0], hi[0])",
        space.cpp()
    );
    let clabel = label.replace('"', "'");
    match reduces.len() {
        0 => s.push_str(&range_for(space, &clabel, unit.uneven)),
        1 if !multi => {
            let d = lowered[reduces[0]].acc.as_ref().unwrap().1.cpp();
            if lowered[reduces[0]].acc_only_added {
                s.push_str(&range_reduce(space, &clabel, &policy, d, unit.uneven));
            } else {
                s.push_str(&format!("    {d} r = {d}();\n    Kokkos::parallel_reduce(\"{clabel}\", {policy}, f, r);\n    *({d}*)result = r;\n"));
            }
        }
        _ => {
            // (On the host in chunks, partials in registers: see pk::chunked_vals.)
            let run = match chunked {
                false => format!("Kokkos::parallel_reduce(\"{clabel}\", {policy}, f, r)"),
                true => format!(
                    "pk::chunked_vals<{}>(\"{clabel}\", f, lo[0], hi[0], r, {})",
                    space.cpp(),
                    unit.uneven
                ),
            };
            s.push_str(&format!("    pk_vals r;\n    {run};\n"));
            for (r, &b) in reduces.iter().enumerate() {
                let d = lowered[b].acc.as_ref().unwrap().1.cpp();
                s.push_str(&format!(
                    "    *({d}*)((char*)result + {}) = r.r{r};\n",
                    16 * r
                ));
            }
        }
    }
    s.push_str(&checks_after(unit.bounds_check, unit.zero_div));
    s.push_str(ENTRY_END);
    s.push_str("extern \"C\" const char* pk_error() { return pk::last_error(); }\n");
    Ok((s, abi, device))
}
