//! Launch-time extent checks: a range launch whose every work item indexes a
//! view at `i + c` (analysis/extents.rs) is refused with an IndexError before
//! it runs when the view is too short for the range (a read past the end
//! returns garbage, a write corrupts the heap). The analysis runs once per
//! workunit, its names are resolved to argument positions once per list of
//! argument names, so a launch pays a pointer compare and, per view, a load
//! and two compares. `PK_BOUNDS_CHECK=1` checks every other index in the kernel.
use crate::analysis::{access, extents};
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use crate::frontend::workunit::Workunit;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use std::sync::{Arc, OnceLock};

/// One certain access: the view's argument position, the position of the
/// loop count that guards it (if any), and its reach.
struct Check {
    view: usize,
    guard: Option<usize>,
    name: String,
    reach: extents::Reach,
}

/// A workunit's checks for launches with one list of argument names (the
/// launches of one kind share it), and whether they are of a method.
pub struct Reaches {
    is_method: bool,
    names: Arc<[String]>,
    checks: Vec<Check>,
}

fn reaches(wu: &Workunit, l: &Launch) -> Reaches {
    let found = wu.def().ok().and_then(|def| {
        let index = access::work_index(&def, l.is_method, 1)?;
        Some(extents::certain_reach(&def, index))
    });
    let pos = |n: &str| l.names.iter().position(|x| x == n);
    let checks = found
        .unwrap_or_default()
        .into_iter()
        .filter_map(|((name, guard), reach)| {
            // A guard that is no argument (a local count) cannot be judged.
            let guard = match guard {
                Some(g) => Some(pos(&g)?),
                None => None,
            };
            Some(Check {
                view: pos(&name)?,
                guard,
                name,
                reach,
            })
        })
        .collect();
    Reaches {
        is_method: l.is_method,
        names: l.names.clone(),
        checks,
    }
}

/// Refuses a one-dimensional range launch of `wu` that would index a view
/// outside its first dimension in every work item; `cache` keeps its checks.
#[inline]
pub fn check(wu: &Workunit, cache: &OnceLock<Reaches>, l: &Launch) -> PyResult<()> {
    let (lo, hi) = (l.lo[0], l.hi[0]);
    if hi <= lo {
        return Ok(());
    }
    let cached = cache.get_or_init(|| reaches(wu, l));
    let fresh;
    // Functor launches build their list of names each time: equal is enough.
    let same = Arc::ptr_eq(&cached.names, &l.names) || cached.names[..] == l.names[..];
    let r = if cached.is_method == l.is_method && same {
        cached
    } else {
        fresh = reaches(wu, l);
        &fresh
    };
    for c in &r.checks {
        // Inside `for j in range(n)`: certain when this launch passes n > 0.
        if let Some(g) = c.guard {
            if !matches!(l.vals[g], ArgVal::Int(n) if n > 0) {
                continue;
            }
        }
        let ArgVal::View(x) = &l.vals[c.view] else {
            continue;
        };
        let extent = x.raw.extent[0];
        let (low, high) = (lo + c.reach.min.0, hi - 1 + c.reach.max.0);
        if low >= 0 && high < extent {
            continue;
        }
        let (index, span) = if low < 0 {
            (low, c.reach.min.1)
        } else {
            (high, c.reach.max.1)
        };
        let src = &wu.src;
        let loc = src.locate(span);
        let name = &c.name;
        let text = src
            .text
            .get(span.start as usize..span.end as usize)
            .unwrap_or(name);
        return Err(PyIndexError::new_err(format!(
            "workunit '{}' indexes view '{name}' as {text} ({}:{}) in every work item of the range [{lo}, {hi}), \
             which reaches index {index}; '{name}' has {extent} element(s) in its first dimension",
            wu.name, loc.filename, loc.line
        )));
    }
    Ok(())
}
