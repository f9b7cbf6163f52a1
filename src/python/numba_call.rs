//! `pykokkos.numba`'s call of a translated function (`rt.call`) in its
//! common case, here: every argument a Python number or a writable NumPy
//! array. A program calls a jitted function between large NumPy steps,
//! which leave none of the call path in the CPU's caches; there each line
//! of Python the call ran cost about a microsecond, and the call cost
//! three to six times what Numba's dispatch does (docs/numba.md). Anything
//! else (device arrays, Views, read-only or 0-d arrays, a call inside a
//! call given device arrays) goes to the Python path (`rt._call`), which
//! this one must agree with.
use super::lazy::flush;
use super::view::{born, View};
use crate::lazy::graph::Demand;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyTuple, PyType};
use smallvec::SmallVec;
use std::sync::atomic::Ordering;

/// What the Python side hands over once (`numba_call_setup`, a dict of these).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Setup {
    /// The package's `View` class (a subclass of the native one).
    pub(super) view: Py<PyType>,
    /// The Python path, for every other call: `rt._call(body, *args)`.
    slow: Py<PyAny>,
    /// `numpy.asarray`, `numpy.generic`, `pk.LazyNumber`.
    asarray: Py<PyAny>,
    generic: Py<PyType>,
    lazy_number: Py<PyType>,
    /// `rt._ON_DEVICE`: set while a call given device arrays runs (its
    /// inner calls then keep serial code on the device: the Python path).
    on_device: Py<PyAny>,
    /// `rt.serial_policy`: a serial block's policy when the default space
    /// is a GPU (the host space's one work item, or the device's).
    pub(super) serial_policy: Py<PyAny>,
}

static SETUP: PyOnceLock<Setup> = PyOnceLock::new();

#[pyfunction]
pub fn numba_call_setup(py: Python<'_>, setup: Setup) {
    let _ = SETUP.set(py, setup);
}

/// What `numba_call_setup` was given.
pub(super) fn setup(py: Python<'_>) -> PyResult<&Setup> {
    SETUP
        .get(py)
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("numba_call_setup was not called"))
}

/// Whether a call given device arrays is running (`rt._ON_DEVICE`).
pub(super) fn on_device(py: Python<'_>, s: &Setup) -> PyResult<bool> {
    s.on_device.bind(py).call_method0("get")?.is_truthy()
}

/// `rt.call(body, *args)`: runs `body` on Views of the arguments, flushes,
/// and hands back what Numba would (see `rt._call`).
#[pyfunction]
#[pyo3(signature = (body, *args))]
pub fn numba_call(
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
) -> PyResult<Py<PyAny>> {
    let s = setup(py)?;
    let slow = || -> PyResult<Py<PyAny>> {
        let mut all: Vec<Bound<'_, PyAny>> = vec![body.clone()];
        all.extend(args.iter());
        Ok(s.slow.bind(py).call1(PyTuple::new(py, all)?)?.unbind())
    };
    if on_device(py, s)? {
        return slow();
    }
    // The body's arguments; per wrapped array, its View and the array.
    let mut views: SmallVec<[Bound<'_, PyAny>; 8]> = SmallVec::new();
    let mut own: SmallVec<[(Bound<'_, View>, Bound<'_, PyAny>); 8]> = SmallVec::new();
    for a in args.iter() {
        if is_number(&a) {
            views.push(a);
            continue;
        }
        if !super::view_slice::is_plain_ndarray(&a)? {
            return slow();
        }
        // Read-only and 0-d arrays: `pk.asarray` says how they go (the
        // Views made so far go first: their arrays are wrapped again there).
        let Ok(v) = View::wrap(&a) else {
            drop((own, views));
            return slow();
        };
        let v = super::handoff::new_of_type(s.view.bind(py), born(v))?.into_bound(py);
        own.push((v.cast::<View>()?.clone(), a));
        views.push(v);
    }
    // Launches on the caller's arrays may wait in the DAG (and fuse) while
    // only this call holds them, unless two share memory: then they run in
    // order, as NumPy memory always does. (Byte spans that overlap count as
    // shared; for the contiguous arrays that can be trusted at all, that is
    // what `np.shares_memory` answers.)
    let spans: SmallVec<[(usize, usize); 8]> = own.iter().map(|(v, _)| span(&v.borrow())).collect();
    let trusted = spans
        .iter()
        .enumerate()
        .all(|(i, a)| spans[i + 1..].iter().all(|b| a.1 <= b.0 || b.1 <= a.0));
    if trusted {
        for (v, _) in &own {
            v.borrow().set_trusted(true)?;
        }
    }
    let ran = body.call1(PyTuple::new(py, &views)?).and_then(|out| {
        flush(py, Demand::All)?;
        result(py, s, out, &own)
    });
    // Every View is reset, whatever failed; the first error is the call's.
    let mut reset = Ok(());
    if trusted {
        for (v, _) in &own {
            reset = reset.and(v.borrow().set_trusted(false));
        }
    }
    let out = ran?;
    reset.map(|()| out)
}

/// What the call hands back for what the body returned: an argument's View
/// as the argument itself, a new View as a NumPy array, a lazy total or a
/// NumPy scalar as a Python number.
fn result(
    py: Python<'_>,
    s: &Setup,
    x: Bound<'_, PyAny>,
    own: &[(Bound<'_, View>, Bound<'_, PyAny>)],
) -> PyResult<Py<PyAny>> {
    if let Ok(t) = x.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|v| result(py, s, v, own))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyTuple::new(py, items)?.into_any().unbind());
    }
    if x.cast::<View>().is_ok() {
        if let Some((_, a)) = own.iter().find(|(v, _)| v.is(&x)) {
            return Ok(a.clone().unbind());
        }
        return Ok(s.asarray.bind(py).call1((x,))?.unbind());
    }
    let x = match x.is_instance(s.lazy_number.bind(py))? {
        true => x.call_method0("__pk_number__")?,
        false => x,
    };
    if x.is_instance(s.generic.bind(py))? {
        return Ok(x.call_method0("item")?.unbind());
    }
    Ok(x.unbind())
}

/// A Python number of the exact built-in types (`rt._NUMBERS`): passed as it is.
fn is_number(a: &Bound<'_, PyAny>) -> bool {
    a.is_exact_instance_of::<PyFloat>()
        || a.is_exact_instance_of::<PyInt>()
        || a.is_exact_instance_of::<PyBool>()
        || a.is_exact_instance_of::<PyComplex>()
}

/// The bytes a view of borrowed memory can touch, as addresses.
fn span(v: &View) -> (usize, usize) {
    debug_assert!(v.alloc.is_borrowed());
    let base = v.alloc.ptr().map_or(0, |p| p as usize);
    let (lo, hi) = v.byte_range();
    (base.wrapping_add_signed(lo), base.wrapping_add_signed(hi))
}

impl View {
    /// `pykokkos.numba` calls: borrowed memory whose launches may wait
    /// (`Alloc::trusted`) while the call holds it.
    pub(super) fn set_trusted(&self, on: bool) -> PyResult<()> {
        if !on {
            // The call ends: its device copy (if a Cuda kernel made one) goes back.
            self.alloc.drop_mirror().map_err(super::bridge::py_err)?;
        }
        // The call's device copy mirrors the buffer's [0, len) bytes: right
        // only when the array's elements fill exactly those (a strided or
        // reversed array keeps the per-launch copies of its byte range).
        let whole = self.byte_range() == (0, self.alloc.span() as isize);
        self.alloc.trusted.store(on && whole, Ordering::Release);
        Ok(())
    }
}

/// Most signatures a dispatcher serves natively (more go the Python way).
const SIGNATURES: usize = 16;

/// One signature a dispatcher ran as Kokkos, served natively.
struct Signature {
    /// Per argument: its type, and for an array its dtype and rank.
    words: SmallVec<[usize; 12]>,
    /// The dtypes the words name, held so that no other dtype can take
    /// their address.
    _dtypes: SmallVec<[Py<PyAny>; 4]>,
    /// The translated body (`rt.call`'s first argument) and the Python key.
    body: Py<PyAny>,
    key: Py<PyAny>,
}

/// The base of `pykokkos.numba`'s Dispatcher: a call with the types of a
/// signature that ran as Kokkos goes straight to `numba_call` (no Python
/// frame of the dispatcher or of the generated entry: together about 40 us
/// of a call right after a large NumPy step); every other call goes to the
/// subclass' `_call_slow`, which registers what ran (`_register_fast`).
#[pyclass(subclass, module = "pykokkos._native", name = "FastDispatch")]
pub struct FastDispatch {
    /// How the last call ran ("kokkos", "numba", "python") and its key.
    #[pyo3(get, set)]
    last_ran: Option<Py<PyAny>>,
    #[pyo3(get, set)]
    last_key: Option<Py<PyAny>>,
    signatures: parking_lot::Mutex<Vec<Signature>>,
}

#[pymethods]
impl FastDispatch {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn py_new(
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> Self {
        FastDispatch {
            last_ran: None,
            last_key: None,
            signatures: parking_lot::Mutex::new(Vec::new()),
        }
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if kwargs.is_none_or(|k| k.is_empty()) {
            if let Some((words, _)) = words(args)? {
                let me = slf.borrow();
                let found = me
                    .signatures
                    .lock()
                    .iter()
                    .find(|s| s.words == words)
                    .map(|s| (s.body.clone_ref(py), s.key.clone_ref(py)));
                drop(me);
                if let Some((body, key)) = found {
                    let kokkos = pyo3::intern!(py, "kokkos").clone().into_any().unbind();
                    let old = {
                        let mut me = slf.borrow_mut();
                        (me.last_ran.replace(kokkos), me.last_key.replace(key))
                    };
                    drop(old); // (outside the borrow: dropping may run Python code)
                    return numba_call(py, body.bind(py), args);
                }
            }
        }
        Ok(slf
            .call_method(pyo3::intern!(py, "_call_slow"), args, kwargs)?
            .unbind())
    }

    // What it holds is visible to the cycle collector (a body's module may
    // hold the dispatcher).
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.last_ran)?;
        visit.call(&self.last_key)?;
        if let Some(table) = self.signatures.try_lock() {
            for s in table.iter() {
                visit.call(&s.body)?;
                visit.call(&s.key)?;
            }
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.last_ran = None;
        self.last_key = None;
        let gone = std::mem::take(&mut *self.signatures.lock());
        drop(gone); // (outside the lock)
    }

    /// Calls with the types of `args` run `body` natively from now on.
    fn _register_fast(
        &self,
        args: &Bound<'_, PyTuple>,
        body: Py<PyAny>,
        key: Py<PyAny>,
    ) -> PyResult<()> {
        let Some((words, dtypes)) = words(args)? else {
            return Ok(());
        };
        let mut table = self.signatures.lock();
        if table.len() < SIGNATURES && !table.iter().any(|s| s.words == words) {
            table.push(Signature {
                words,
                _dtypes: dtypes,
                body,
                key,
            });
        }
        Ok(())
    }
}

type Words = (SmallVec<[usize; 12]>, SmallVec<[Py<PyAny>; 4]>);

/// What tells one signature from another, as the Python key does (the
/// number of arguments; per argument its type, for an array its dtype and
/// rank), as words; None when an argument is neither a Python number nor a
/// NumPy array.
fn words(args: &Bound<'_, PyTuple>) -> PyResult<Option<Words>> {
    let py = args.py();
    let mut words: SmallVec<[usize; 12]> = SmallVec::new();
    words.push(args.len());
    let mut dtypes = SmallVec::new();
    for a in args.iter() {
        words.push(a.get_type().as_ptr() as usize);
        if is_number(&a) {
            continue;
        }
        if !super::view_slice::is_plain_ndarray(&a)? {
            return Ok(None);
        }
        let dtype = a.getattr(pyo3::intern!(py, "dtype"))?;
        words.push(dtype.as_ptr() as usize);
        words.push(a.getattr(pyo3::intern!(py, "ndim"))?.extract::<usize>()?);
        dtypes.push(dtype.unbind());
    }
    Ok(Some((words, dtypes)))
}
