//! Native objects made in Rust as instances of a Python subclass (the
//! package's `View`) without the subclass's Python-level `__new__`, which
//! costs microseconds (too much for `m[i][j]`): the native constructor is
//! called on the subclass with no arguments and takes the prepared value
//! from here.
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use std::any::Any;
use std::cell::RefCell;

thread_local! {
    static NEXT: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// The value a no-argument native construction on this thread stands for.
pub fn take<T: 'static>() -> Option<T> {
    NEXT.with(|n| {
        let v = n.borrow_mut().take()?;
        v.downcast::<T>().ok().map(|b| *b)
    })
}

/// An instance of `ty`, a Python subclass of the native class `T`, holding `v`.
pub fn new_of_type<T: pyo3::PyClass + pyo3::type_object::PyTypeInfo + 'static>(
    ty: &Bound<'_, PyType>,
    v: T,
) -> PyResult<Py<PyAny>> {
    let py = ty.py();
    let native = py.get_type::<T>();
    if !ty.is_subclass(&native)? {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{} is not a subclass of {}",
            ty.name()?,
            native.name()?
        )));
    }
    NEXT.with(|n| *n.borrow_mut() = Some(Box::new(v)));
    // SAFETY: the native type's tp_new, called on a subtype of it, as CPython
    // does for subclasses; the empty tuple and null kwargs are valid arguments.
    // The GIL is held (`py`). `native` is T's pyo3 heap type, whose `tp_new` slot is pyo3's
    // (non-null: T has a constructor; pyo3 fills the slot even without one) with the
    // `newfunc` signature; it returns a new reference or NULL with an exception. `ty` is
    // T or a subclass of it (checked above), so the object has T's layout.
    let obj = unsafe {
        let new = pyo3::ffi::PyType_GetSlot(native.as_type_ptr(), pyo3::ffi::Py_tp_new);
        let new = std::mem::transmute::<*mut std::os::raw::c_void, pyo3::ffi::newfunc>(new);
        new(
            ty.as_type_ptr(),
            PyTuple::empty(py).as_ptr(),
            std::ptr::null_mut(),
        )
    };
    NEXT.with(|n| n.borrow_mut().take());
    if obj.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `obj` is a non-null new reference from tp_new, now ours; GIL held.
    Ok(unsafe { Py::from_owned_ptr(py, obj) })
}

/// One cached row object per view. The row holds only the allocation, never
/// the view it came from, so the cache makes no reference cycle.
#[derive(Default)]
pub struct RowCache(parking_lot::Mutex<Option<(Vec<i64>, Py<PyAny>)>>);

impl RowCache {
    pub fn get(&self, py: Python<'_>, ix: &[i64]) -> Option<Py<PyAny>> {
        let c = self.0.lock();
        c.as_ref()
            .filter(|(k, _)| k.as_slice() == ix)
            .map(|(_, o)| o.clone_ref(py))
    }

    pub fn put(&self, ix: &[i64], row: Py<PyAny>) {
        // The old row (if any) is released after the lock: its drop may run Python.
        let old = self.0.lock().replace((ix.to_vec(), row));
        drop(old);
    }

    pub fn clear(&self) {
        let old = self.0.lock().take();
        drop(old);
    }
}
