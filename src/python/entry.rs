//! `pk.parallel_for` and `pk.parallel_reduce` themselves. The common call, a
//! policy (after an optional label) and a plain `@pk.workunit` function with
//! keyword arguments, goes
//! straight to the launch binding: no Python frame of ours in between, which
//! was a fifth of what recording a lazy launch cost. Every other form (names,
//! functors, lambdas, reducers, explicit fusion lists) goes to the Python
//! implementation that `runtime/_launch.py` registers at import.
use super::kw::Kw;
use super::launch::launch_with;
use super::lazy::Pending;
use super::wire;
use super::workunit::Workunit;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use pyo3::Borrowed;
use std::sync::OnceLock;

/// The Python forms: (parallel_for, parallel_reduce, the wrapper of a
/// pending total, `types.FunctionType`).
struct Forms {
    for_: Py<PyAny>,
    reduce: Py<PyAny>,
    finish: Py<PyAny>,
    function: Py<PyType>,
}

static FORMS: OnceLock<Forms> = OnceLock::new();

fn forms() -> PyResult<&'static Forms> {
    FORMS
        .get()
        .ok_or_else(|| PyRuntimeError::new_err("pykokkos.runtime._launch was not imported"))
}

/// Registers the Python forms (once, at import of `pykokkos.runtime._launch`).
#[pyfunction]
pub fn set_launch_forms(
    for_: Py<PyAny>,
    reduce: Py<PyAny>,
    finish: Py<PyAny>,
    function: Py<PyType>,
) {
    let _ = FORMS.set(Forms {
        for_,
        reduce,
        finish,
        function,
    });
}

/// The workunit of the common form: a plain function (a bound method is a
/// functor's workunit) decorated with `@pk.workunit`.
fn common<'py>(f: &Forms, wu: &Borrowed<'_, 'py, PyAny>) -> PyResult<Option<Bound<'py, Workunit>>> {
    let py = wu.py();
    if !wu.get_type().is(f.function.bind(py)) {
        return Ok(None);
    }
    let Some(nat) = wu.getattr_opt(pyo3::intern!(py, "__pk_workunit__"))? else {
        return Ok(None);
    };
    Ok(nat.cast_into::<Workunit>().ok())
}

// The entries are C functions of the vectorcall convention (METH_FASTCALL |
// METH_KEYWORDS): the arguments arrive as an array and the keyword names as
// a tuple, so the common call builds no argument tuple and only the one dict
// of keyword arguments the launch binding reads. (A pyo3 function taking
// `*args` or `**kwargs` is called through a tuple and two dicts.)

/// A launch entry: 0 for, 1 reduce.
fn enter<'py>(
    py: Python<'py>,
    pattern: u8,
    args: &[Borrowed<'_, 'py, PyAny>],
    kwnames: Option<Borrowed<'_, 'py, PyTuple>>,
) -> PyResult<Bound<'py, PyAny>> {
    let f = forms()?;
    let nkw = kwnames.as_ref().map_or(0, |k| k.len());
    let (pos, vals) = args.split_at(args.len() - nkw);
    let kw = match kwnames {
        Some(names) => Kw::Call { names, vals },
        None => Kw::Dict(None),
    };
    // A reducer or an initial value goes through the Python form.
    let special = pattern == wire::PATTERN_REDUCE
        && (kw.has(pyo3::intern!(py, "reducer"))? || kw.has(pyo3::intern!(py, "initial_value"))?);
    // PyKokkos' labelled form `pk.parallel_for("name", policy, wu, ...)` too
    // (ExaMiniMD labels every launch).
    let (name, rest) = match pos {
        [name, rest @ ..] if rest.len() == 2 => match name.cast::<PyString>() {
            Ok(s) => (Some(s), rest),
            Err(_) => (None, pos),
        },
        _ => (None, pos),
    };
    let label = match &name {
        Some(s) => Some(s.to_str()?),
        None => None,
    };
    if let ([policy, wu], false) = (rest, special) {
        if let Some(wu) = common(f, wu)? {
            // The call site is looked up only if the launch is recorded.
            let r = launch_with(
                py, pattern, policy, &wu, &kw, label, false, None, None, None,
            )?;
            return Ok(match r {
                // Lazy mode hands back a pending total: the Python number type wraps it.
                Some(r) if r.is_instance_of::<Pending>() => {
                    f.finish.bind(py).call1((r, py.None()))?
                }
                Some(r) => r,
                None => py.None().into_bound(py),
            });
        }
    }
    let form = if pattern == wire::PATTERN_FOR {
        &f.for_
    } else {
        &f.reduce
    };
    form.bind(py)
        .call(PyTuple::new(py, pos)?, kw.dict(py)?.as_ref())
}

/// The C side of an entry: the GIL is held; errors and panics become Python
/// exceptions.
///
/// # Safety
/// `args` holds `nargs` positional then `len(kwnames)` keyword values, as
/// CPython passes them to a METH_FASTCALL | METH_KEYWORDS function.
/// The calling thread holds the GIL; `kwnames` is null or a tuple of str; the array and
/// the objects in it stay alive (borrowed) for the call; `nargs` has no
/// PY_VECTORCALL_ARGUMENTS_OFFSET bit (CPython strips it before calling a FASTCALL method).
unsafe fn enter_c(
    pattern: u8,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let py = Python::assume_attached();
    let kwnames =
        (!kwnames.is_null()).then(|| Borrowed::from_ptr(py, kwnames).cast_unchecked::<PyTuple>());
    let n = nargs as usize + kwnames.as_ref().map_or(0, |k| k.len());
    let raw = if n == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(args, n)
    };
    // Inline for the usual few arguments: no allocation per launch.
    let args: smallvec::SmallVec<[Borrowed<'_, '_, PyAny>; 8]> =
        raw.iter().map(|&p| Borrowed::from_ptr(py, p)).collect();
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        enter(py, pattern, &args, kwnames)
    }));
    match out {
        Ok(Ok(obj)) => obj.into_ptr(),
        Ok(Err(e)) => {
            e.restore(py);
            std::ptr::null_mut()
        }
        Err(_) => {
            PanicException::new_err("pykokkos: a launch entry panicked").restore(py);
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// Only CPython calls it, through `DEFS` (METH_FASTCALL | METH_KEYWORDS): with the GIL
/// held and the arguments that convention defines, which is `enter_c`'s contract.
unsafe extern "C" fn parallel_for_c(
    _module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    enter_c(0, args, nargs, kwnames)
}

/// # Safety
/// As `parallel_for_c`.
unsafe extern "C" fn parallel_reduce_c(
    _module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    enter_c(1, args, nargs, kwnames)
}

/// Method tables live as long as the functions made from them: for ever.
struct Def(ffi::PyMethodDef);
// SAFETY: read-only after construction; the pointers are to static strings and functions.
// `DEFS` is an immutable static with no interior mutability: Rust never writes it, and
// CPython only reads a PyMethodDef; `&'static CStr` literals and fn items are valid from any
// thread.
unsafe impl Sync for Def {}

static DEFS: [Def; 2] = [
    Def(ffi::PyMethodDef {
        ml_name: c"parallel_for".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: parallel_for_c,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: c"parallel_for(*args, **kwargs)\n--\n\n`parallel_for([name,] policy, workunit, **kwargs)`: runs (or, under PK_FUSE=1, records) a workunit over a policy.".as_ptr(),
    }),
    Def(ffi::PyMethodDef {
        ml_name: c"parallel_reduce".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: parallel_reduce_c,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: c"parallel_reduce(*args, **kwargs)\n--\n\n`parallel_reduce([name,] policy, workunit, *, initial_value=None, reducer=None, **kwargs)`: runs (or records) a reduction; returns its total.".as_ptr(),
    }),
];

/// Adds `parallel_for` and `parallel_reduce` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for def in &DEFS {
        // SAFETY: the GIL is held (`m` is a `Bound`). The PyMethodDef is in a static, so it
        // outlives the function, as PyCFunction_NewEx requires; CPython only reads it (the
        // `cast_mut` is for the C signature). `self` is the module (the C functions ignore
        // it), and a NULL `module` leaves `__module__` unset. The result is a new reference
        // or NULL with an exception, which `from_owned_ptr_or_err` turns into an error.
        let f = unsafe {
            let p = ffi::PyCFunction_NewEx(
                std::ptr::from_ref(&def.0).cast_mut(),
                m.as_ptr(),
                std::ptr::null_mut(),
            );
            Bound::from_owned_ptr_or_err(m.py(), p)?
        };
        m.add(f.getattr("__name__")?.extract::<String>()?, f)?;
    }
    Ok(())
}
