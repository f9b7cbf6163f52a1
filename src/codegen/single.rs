//! The translation unit of one launch: the workunit's functor, then an
//! `extern "C"` entry that unpacks raw arguments, builds the policy
//! (range, multi-dimensional or team) and dispatches.
use super::body::{lower_workunit, unit_header, unit_methods};
use super::device::{DeviceKind, DeviceParts, Total};
use super::emit::{bounds_checked, checks_after, range_reduce, scalar_from_abi};
use super::emit::{layout_args, range_for, team_member_cpp, ENTRY_END, ENTRY_START};
use super::spec::{Generated, KernelSpec};
use crate::errors::KResult;
use crate::lower::sanitize;
use crate::lower::Unit;
use crate::types::{DType, Pattern, Reducer, Space};

/// Generates the translation unit for one kernel.
pub fn generate(spec: &KernelSpec) -> KResult<Generated> {
    let def = spec.def;
    let mut unit = Unit {
        bounds_check: bounds_checked(spec.space),
        ..Default::default()
    };
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
    s.push_str("#include \"pk_prelude.hpp\"\n\n");
    let functor_at = s.len();
    s.push_str("namespace {\n");
    s.push_str(&unit_header(&unit));
    s.push_str(&format!("struct {fname} {{\n"));
    for (name, ty, _) in &members {
        s.push_str(&format!("  {ty} {name};\n"));
    }
    let repeat = spec.repeat && spec.pattern == Pattern::For && spec.rank == 1;
    if repeat {
        s.push_str("  int64_t pk_repeat;\n");
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
        let t = match spec.pattern {
            Pattern::Reducer(r) => format!("{}::value_type", r.kokkos(*d)),
            _ => d.cpp().to_string(),
        };
        sig.push_str(&format!(", {t}& {p}"));
    }
    if let Some(p) = &lw.last_pass {
        sig.push_str(&format!(", const bool {p}"));
    }
    if repeat {
        // A run of identical launches: the body once per launch, in order,
        // in each work item (a `return` in the body ends one launch's turn).
        s.push_str(&format!("  KOKKOS_INLINE_FUNCTION void operator()({sig}) const {{\n    for (int64_t pk_rep = 0; pk_rep < pk_repeat; ++pk_rep) [&]() {{\n{decls}{body}    }}();\n  }}\n}};\n}}  // namespace\n\n"));
    } else {
        s.push_str(&format!("  KOKKOS_INLINE_FUNCTION void operator()({sig}) const {{\n{decls}{body}  }}\n}};\n}}  // namespace\n\n"));
    }

    let functor = s[functor_at..].to_string();

    // The entry point: unpack raw arguments, dispatch, report exceptions.
    s.push_str(ENTRY_START);
    s.push_str(&format!("    {fname} f;\n"));
    let mut unpack = String::new();
    if repeat {
        unpack.push_str("    f.pk_repeat = hi[1];\n");
    }
    for (name, _, slot) in &members {
        if let Some((k, v)) = slot {
            unpack.push_str(&format!(
                "    f.{name} = decltype(f.{name})(({}*)views[{k}].data, {});\n",
                v.dtype.cpp(),
                layout_args(*k, v)
            ));
        }
    }
    for (j, (k, d)) in abi.scalar_slots.iter().enumerate() {
        let name = &members.iter().filter(|m| m.2.is_none()).nth(j).unwrap().0;
        let _ = k;
        unpack.push_str(&format!("    f.{name} = {};\n", scalar_from_abi(*d, j)));
    }
    s.push_str(&unpack);
    let kind = match (spec.pattern, acc_dt) {
        (Pattern::For, _) => Some(DeviceKind::For),
        (Pattern::Reduce, Some(d)) if lw.acc_only_added => {
            Some(DeviceKind::Reduce(vec![Total::sum(d)]))
        }
        (Pattern::Reducer(r), Some(dtype)) => Some(DeviceKind::Reduce(vec![Total {
            dtype,
            reducer: Some(r),
        }])),
        (Pattern::Scan, Some(d)) if nidx == 1 && !team && !repeat && lw.acc_grows_by_adds => {
            Some(DeviceKind::Scan(Total::sum(d)))
        }
        _ => None,
    };
    // Neighbouring threads take neighbouring elements of the first view.
    let left_fastest = members
        .iter()
        .find_map(|(_, _, slot)| slot.as_ref())
        .is_some_and(|(_, v)| v.layout == crate::types::Layout::Left);
    let device = kind
        .filter(|_| spec.space == Space::Cuda)
        .map(|kind| DeviceParts {
            functor,
            fname: fname.clone(),
            unpack: unpack.clone(),
            views: abi.view_slots.len(),
            scalars: abi.scalar_slots.len(),
            kind,
            record: false,
            rank: nidx,
            left_fastest,
            bounds_check: unit.bounds_check,
            zero_div: unit.zero_div,
        });
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
    let label = sanitize(&spec.label);
    match (spec.pattern, acc_dt) {
        (Pattern::For, _) if nidx == 1 && !team => {
            s.push_str(&range_for(spec.space, &label, unit.uneven))
        }
        // 2-D on the host: rows through a local copy of the functor (prelude.hpp).
        (Pattern::For, _) if nidx == 2 && !team && spec.space != Space::Cuda => {
            s.push_str(&format!(
                "    pk_stop = pk::host_for2<{}>(\"{label}\", f, lo, hi, {left_fastest});\n",
                spec.space.cpp()
            ))
        }
        (Pattern::For, _) => s.push_str(&format!("    Kokkos::parallel_for(\"{label}\", {policy}, f);\n")),
        (Pattern::Reduce, Some(d)) if nidx == 1 && !team && lw.acc_only_added => {
            s.push_str(&range_reduce(spec.space, &label, &policy, d.cpp(), unit.uneven))
        }
        // A 2-D sum on the host: rows into partial sums in registers (prelude.hpp).
        (Pattern::Reduce, Some(d))
            if nidx == 2 && !team && lw.acc_only_added && spec.space != Space::Cuda =>
        {
            s.push_str(&format!(
                "    {0} r = {0}();\n    pk::chunked_reduce2<{1}>(\"{label}\", f, lo, hi, {left_fastest}, r);\n    *({0}*)result = r;\n",
                d.cpp(),
                spec.space.cpp()
            ))
        }
        (Pattern::Reduce, Some(d)) => s.push_str(&format!(
            "    {0} r = {0}();\n    Kokkos::parallel_reduce(\"{label}\", {policy}, f, r);\n    *({0}*)result = r;\n",
            d.cpp()
        )),
        // 1-D on the host, but for the *Loc reducers: partial values in registers.
        (Pattern::Reducer(r), Some(d))
            if nidx == 1 && !team && spec.space != Space::Cuda && !r.has_loc() =>
        {
            s.push_str(&format!(
                "    {0}::value_type r;\n    pk::chunked_reducer<{1}, {0}>(\"{label}\", f, lo[0], hi[0], r, {2});\n",
                r.kokkos(d),
                spec.space.cpp(),
                unit.uneven,
            ));
            if r.fields().is_empty() {
                s.push_str(&format!("    *({0}*)result = r;\n", d.cpp()));
            }
            record_fields(&mut s, r, d);
        }
        (Pattern::Reducer(r), Some(d)) => s.push_str(&reducer_dispatch(r, d, &label, &policy)),
        (Pattern::Scan, Some(d)) => s.push_str(&format!(
            "    {0} r = {0}();\n    Kokkos::parallel_scan(\"{label}\", {policy}, f, r);\n    *({0}*)result = r;\n",
            d.cpp()
        )),
        _ => unreachable!("reductions always have an accumulator type"),
    }
    s.push_str(&checks_after(unit.bounds_check, unit.zero_div));
    s.push_str(ENTRY_END);
    s.push_str("extern \"C\" const char* pk_error() { return pk::last_error(); }\n");
    Ok(Generated {
        source: s,
        abi,
        device,
    })
}

/// A reduction through Kokkos' built-in reducer `r`: the total, or each field
/// of the reducer's record in its own 8-byte result slot (Kokkos' order).
fn reducer_dispatch(r: Reducer, d: DType, label: &str, policy: &str) -> String {
    let red = r.kokkos(d);
    let mut s = format!(
        "    {red}::value_type r;\n    Kokkos::parallel_reduce(\"{label}\", {policy}, f, {red}(r));\n"
    );
    if r.fields().is_empty() {
        s.push_str(&format!("    *({0}*)result = r;\n", d.cpp()));
    }
    record_fields(&mut s, r, d);
    s
}

/// A record reducer's fields (MinMax, MinLoc, ...) into their 8-byte slots.
fn record_fields(s: &mut String, r: Reducer, d: DType) {
    for (k, (field, loc)) in r.fields().iter().enumerate() {
        let t = if *loc { "int64_t" } else { d.cpp() };
        s.push_str(&format!(
            "    *({t}*)((uint64_t*)result + {k}) = r.{field};\n"
        ));
    }
}
