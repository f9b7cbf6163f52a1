//! A launch's keyword arguments against the parameters its kind fixes: an
//! index or accumulator position named by keyword, said plainly, and the
//! accumulator that newer PyKokkos passes by keyword (`acc=0.0`).
use super::bridge::py_err;
use super::workunit::Workunit;
use crate::types::Pattern;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A keyword argument that names an index or accumulator position means the
/// workunit lacks a parameter the launch kind needs: say which one.
pub(super) fn check_leading_params(
    wu: &Workunit,
    pattern: Pattern,
    rank: usize,
    kw: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let def = wu.core.def().map_err(py_err)?;
    let mut roles: Vec<&str> = if rank == 0 {
        vec!["team member"]
    } else {
        vec!["work index"; rank]
    };
    match pattern {
        Pattern::For => {}
        Pattern::Reduce | Pattern::Reducer(_) => roles.push("accumulator"),
        Pattern::Scan => roles.extend(["accumulator", "last_pass flag"]),
    }
    for (p, role) in def.params.iter().zip(&roles) {
        if kw.contains(&p.name)? {
            let launch = match pattern {
                Pattern::For => "parallel_for",
                Pattern::Reduce | Pattern::Reducer(_) => "parallel_reduce",
                Pattern::Scan => "parallel_scan",
            };
            return Err(PyTypeError::new_err(format!(
                "workunit '{}' is launched with pk.{launch} over {rank} index dimension(s), so its parameters must start with \
                 {}; but '{}' (passed as a keyword argument) sits in the {role} position: add the missing {role} parameter",
                wu.core.name,
                roles.join(", "),
                p.name
            )));
        }
    }
    Ok(())
}

/// A reduction given its accumulator by keyword with a number (newer PyKokkos'
/// `pk.parallel_reduce(policy, wu, acc=0.0, ...)`): accepted and unused, as
/// Kokkos overwrites a reduction's result variable.
pub(super) fn accumulator_given(
    wu: &Workunit,
    pattern: Pattern,
    rank: usize,
    kw: &Bound<'_, PyDict>,
) -> PyResult<bool> {
    if !matches!(pattern, Pattern::Reduce | Pattern::Reducer(_)) {
        return Ok(false);
    }
    let def = wu.core.def().map_err(py_err)?;
    let Some(acc) = def.params.get(rank.max(1)) else {
        return Ok(false);
    };
    Ok(match kw.get_item(&acc.name)? {
        Some(v) => {
            (v.is_instance_of::<pyo3::types::PyFloat>() || v.is_instance_of::<pyo3::types::PyInt>())
                && !v.is_instance_of::<pyo3::types::PyBool>()
        }
        None => false,
    })
}
