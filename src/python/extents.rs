//! Launch-time extent checks: a range launch whose every work item indexes a
//! view at `i + c` (analysis/extents.rs) is refused with an IndexError before
//! it runs when the view is too short for the range (a read past the end
//! returns garbage, a write corrupts the heap). A few comparisons a launch;
//! `PK_BOUNDS_CHECK=1` checks every other index inside the kernel.
use super::workunit::Workunit;
use crate::analysis::{access, extents};
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

pub type Reaches = Vec<((String, extents::Guard), extents::Reach)>;

fn reaches(wu: &Workunit, is_method: bool) -> Option<Reaches> {
    let def = wu.core.def().ok()?;
    let index = access::work_index(&def, is_method, 1)?;
    Some(extents::certain_reach(&def, index).into_iter().collect())
}

/// Refuses a one-dimensional range launch that would index a view outside
/// its first dimension in every work item.
pub fn check(wu: &Workunit, l: &Launch) -> PyResult<()> {
    let (lo, hi) = (l.lo[0], l.hi[0]);
    if hi <= lo {
        return Ok(());
    }
    let cached = wu
        .reach
        .get_or_init(|| (l.is_method, reaches(wu, l.is_method).unwrap_or_default()));
    let fresh;
    let list = if cached.0 == l.is_method {
        &cached.1
    } else {
        fresh = reaches(wu, l.is_method).unwrap_or_default();
        &fresh
    };
    let arg = |name: &str| l.names.iter().position(|n| n == name).map(|k| &l.vals[k]);
    for ((name, guard), r) in list {
        // Inside `for j in range(n)`: certain when this launch passes n > 0.
        if let Some(g) = guard {
            if !matches!(arg(g), Some(ArgVal::Int(n)) if *n > 0) {
                continue;
            }
        }
        let Some(ArgVal::View(x)) = arg(name) else {
            continue;
        };
        let extent = x.raw.extent[0];
        let (low, high) = (lo + r.min.0, hi - 1 + r.max.0);
        let bad = if low < 0 {
            Some((low, r.min.1))
        } else if high >= extent {
            Some((high, r.max.1))
        } else {
            None
        };
        if let Some((index, span)) = bad {
            let src = &wu.core.src;
            let loc = src.locate(span);
            let text = src
                .text
                .get(span.start as usize..span.end as usize)
                .unwrap_or(name);
            return Err(PyIndexError::new_err(format!(
                "workunit '{}' indexes view '{name}' as {text} ({}:{}) in every work item of the range [{lo}, {hi}), \
                 which reaches index {index}; '{name}' has {extent} element(s) in its first dimension",
                wu.core.name, loc.filename, loc.line
            )));
        }
    }
    Ok(())
}
