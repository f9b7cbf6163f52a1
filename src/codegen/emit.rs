//! C++ snippets both generators share: view types, view construction from
//! the ABI, the 1-D dispatch, the team member type.
use crate::types::{DType, Layout, Space, ViewTy};

/// The dispatch of a 1-D parallel_for of functor `f` over `lo[0]..hi[0]` (single
/// and fused kernels). On the GPU it goes through `pk::cuda_for` (prelude.hpp):
/// Kokkos 3.4's RangePolicy block sizing costs a fifth of the bandwidth there.
/// On the host through `pk::host_for`: short ranges run in place, and
/// Ctrl-C may stop it part way (`pk_stop`, see ENTRY_START). `uneven`: work
/// items may cost unequal amounts (Unit::uneven), so the host deals the range
/// out in small chunks.
pub fn range_for(space: Space, label: &str, uneven: bool) -> String {
    if space == Space::Cuda {
        format!("    pk::cuda_for(\"{label}\", f, lo[0], hi[0]);\n")
    } else {
        format!(
            "    pk_stop = pk::host_for<{}>(\"{label}\", f, lo[0], hi[0], {uneven});\n",
            space.cpp()
        )
    }
}

/// The entry point's opening. `pk_stop` is pk::STOPPED once Ctrl-C stopped
/// a host dispatch part way (prelude.hpp StopHooks); the checks after the
/// dispatch still run (they reset their records), then ENTRY_END returns it.
pub const ENTRY_START: &str = "extern \"C\" int pk_run(const pk_view_arg* views, const pk_scalar_arg* scalars, const int64_t* lo, const int64_t* hi, void* result) {\n  int pk_stop = 0;\n  try {\n";

/// The entry point's end: what stopped it, and C++ exceptions as failures.
pub const ENTRY_END: &str = "    return pk_stop;\n  } catch (std::exception& e) {\n    return pk::fail(e.what());\n  } catch (...) {\n    return pk::fail(\"unknown C++ exception\");\n  }\n}\n\n";

/// The dispatch of a 1-D reduction into one `d` total: chunked on the host
/// (accumulators in registers, see pk::chunked_reduce; `uneven` as for
/// `range_for`), Kokkos' own on GPUs.
pub fn range_reduce(space: Space, label: &str, policy: &str, d: &str, uneven: bool) -> String {
    let run = if space == Space::Cuda {
        format!("Kokkos::parallel_reduce(\"{label}\", {policy}, f, r)")
    } else {
        format!(
            "pk::chunked_reduce<{}>(\"{label}\", f, lo[0], hi[0], r, {uneven})",
            space.cpp()
        )
    };
    format!("    {d} r = {d}();\n    {run};\n    *({d}*)result = r;\n")
}

/// Scalar argument `j` of the C ABI as a `d`.
pub fn scalar_from_abi(d: DType, j: usize) -> String {
    if d.is_complex() {
        format!("{}(scalars[{j}].c[0], scalars[{j}].c[1])", d.cpp())
    } else if d.is_float() {
        format!("({})scalars[{j}].d", d.cpp())
    } else {
        format!("({})scalars[{j}].i", d.cpp())
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

pub fn view_cpp(v: &ViewTy, space: Space) -> String {
    format!(
        "Kokkos::View<{}{}, {}, {}, Kokkos::MemoryTraits<Kokkos::Unmanaged>>",
        v.dtype.cpp(),
        "*".repeat(v.rank as usize),
        v.layout.cpp(),
        space.mem()
    )
}

/// Whether kernels for `space` check view indices: `PK_BOUNDS_CHECK=1`, and
/// always in the Debug space.
/// The entry's lines after the dispatch that report what the kernel recorded:
/// an index outside a view (code 2) or a division by zero (code 3). Both
/// records are read, so neither is left set for the next launch; the
/// division's first, so the index's report is the error text when both are.
pub fn checks_after(bounds: bool, zero_div: bool) -> String {
    match (bounds, zero_div) {
        (false, false) => String::new(),
        (true, false) => "    if (int rc = pk::oob_check()) return rc;\n".into(),
        (false, true) => "    if (int rc = pk::zdiv_check()) return rc;\n".into(),
        (true, true) => "    int zrc = pk::zdiv_check();\n    if (int rc = pk::oob_check()) return rc;\n    if (zrc) return zrc;\n".into(),
    }
}

pub fn bounds_checked(space: Space) -> bool {
    space == Space::Debug || crate::config::get().bounds_check
}
