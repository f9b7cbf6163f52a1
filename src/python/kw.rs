//! A launch's keyword arguments: a dict (the `launch` binding, functor
//! members), or the names and values of a vectorcall (the launch entries),
//! read where they are without building a dict.
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use pyo3::Borrowed;

pub enum Kw<'a, 'py> {
    Dict(Option<&'a Bound<'py, PyDict>>),
    Call {
        names: Borrowed<'a, 'py, PyTuple>,
        vals: &'a [Borrowed<'a, 'py, PyAny>],
    },
}

impl<'py> Kw<'_, 'py> {
    pub fn len(&self) -> usize {
        match self {
            Kw::Dict(d) => d.map_or(0, |d| d.len()),
            Kw::Call { vals, .. } => vals.len(),
        }
    }

    /// The value passed as `key`, if any.
    pub fn get(&self, key: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self {
            Kw::Dict(d) => d.map(|d| d.get_item(key)).transpose().map(Option::flatten),
            Kw::Call { names, vals } => {
                // A call's keyword names are the interned names the caller
                // spelled, as the parameter names are: identity first.
                let mut at =
                    (0..names.len()).find(|&i| names.get_borrowed_item(i).is_ok_and(|n| n.is(key)));
                if at.is_none() {
                    for i in 0..names.len() {
                        if names.get_borrowed_item(i)?.eq(key)? {
                            at = Some(i);
                            break;
                        }
                    }
                }
                Ok(at.map(|i| vals[i].to_owned()))
            }
        }
    }

    /// Whether `key` was passed.
    pub fn has(&self, key: &Bound<'py, PyString>) -> PyResult<bool> {
        self.get(key).map(|v| v.is_some())
    }

    /// As a dict: for error reports and the Python forms (None when there are none).
    pub fn dict(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        match self {
            Kw::Dict(d) => Ok(d.cloned()),
            Kw::Call { names, vals } => {
                let d = PyDict::new(py);
                for (i, v) in vals.iter().enumerate() {
                    d.set_item(names.get_borrowed_item(i)?, v)?;
                }
                Ok(Some(d))
            }
        }
    }
}
