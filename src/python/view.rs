//! The Python View: a typed, shaped window on an allocation (memory layer),
//! exposed to NumPy through the buffer protocol without copies, and exported
//! through the CUDA array interface and DLPack. Host access asks the lazy
//! runtime to flush what is pending on the memory first.
use super::bridge::py_err;
use super::lazy::{flush_host, take_swallowed};
use super::wire;
use crate::memory::alloc::Alloc;
use crate::memory::dlpack;

use crate::types::{DType, Layout};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::c_int;
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[pyclass(subclass, module = "pykokkos._native", name = "View")]
pub struct View {
    pub alloc: Arc<Alloc>,
    /// Byte offset of element (0, ..., 0) from the allocation start.
    pub offset: isize,
    pub dtype: DType,
    pub rank: usize,
    pub extents: [i64; 8],
    /// Element strides.
    pub strides: [i64; 8],
    /// The layout the user asked for (LayoutLeft views stay LayoutLeft).
    pub declared: Layout,
    /// What kernels see: Right/Left when contiguous in that order, else Stride.
    pub kernel_layout: Layout,
    /// Set by `_sync_read` for the buffer export that follows at once (a
    /// NumPy array the package reads and drops): that export leaves a device
    /// copy current. NumPy asks every buffer without PyBUF_WRITABLE, so the
    /// request's flags cannot tell reads from writes.
    pub read_once: std::sync::atomic::AtomicBool,
    /// Exports of this view that brought only its bytes to the host.
    pub ranged_exports: std::sync::atomic::AtomicUsize,
    /// `trait=pk.Atomic`: kernels update this view's elements atomically
    /// (`v[i] += x`); subviews inherit it.
    pub atomic: std::sync::atomic::AtomicBool,
    /// The last row (`v[i]`) handed out, again for the same index.
    pub last_row: super::handoff::RowCache,
}

impl Drop for View {
    fn drop(&mut self) {
        // Views made for a single launch (NumPy arguments) were never counted.
        let prev = self
            .alloc
            .live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        if prev == Ok(1) {
            crate::lazy::unobserved::alloc_died(self.alloc.id());
        }
    }
}

/// A shape's extents: a list of ints read item by item (the common
/// `pk.View([n], ...)`; pyo3's sequence extraction costs more than the
/// allocation of a small view), anything else as a sequence.
fn extents(shape: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    match shape.cast::<pyo3::types::PyList>() {
        Ok(l) => l.iter().map(|n| n.extract::<i64>()).collect(),
        Err(_) => shape.extract(),
    }
}

/// Python-visible views are created here, so the allocation's count of live
/// Python objects stays right (the lazy runtime learns when the last one dies).
pub(super) fn born(v: View) -> View {
    v.alloc.live.fetch_add(1, Ordering::AcqRel);
    v
}

#[pymethods]
impl View {
    /// `View(shape, dtype_code, layout_code)` allocates; `parent=` with the
    /// subview lists makes a subview; `wrap=` borrows a NumPy array's memory.
    #[new]
    #[pyo3(signature = (shape=None, dtype_code=DType::F64 as u8, layout_code=wire::LAYOUT_RIGHT, parent=None, start=None, length=None, step=None, keep=None, wrap=None, space_code=wire::MEMORY_HOST))]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn py_new(
        shape: Option<&Bound<'_, PyAny>>,
        dtype_code: u8,
        layout_code: u8,
        parent: Option<PyRef<'_, View>>,
        start: Option<Vec<i64>>,
        length: Option<Vec<i64>>,
        step: Option<Vec<i64>>,
        keep: Option<Vec<bool>>,
        wrap: Option<&Bound<'_, PyAny>>,
        space_code: u8,
    ) -> PyResult<Self> {
        if shape.is_none() && wrap.is_none() && parent.is_none() {
            if let Some(v) = super::handoff::take::<View>() {
                return Ok(v);
            }
        }
        if let Some(p) = parent {
            let n = p.rank;
            return p
                .subview(
                    start.unwrap_or_else(|| vec![0; n]),
                    length.unwrap_or_else(|| p.shape().to_vec()),
                    step.unwrap_or_else(|| vec![1; n]),
                    keep.unwrap_or_else(|| vec![true; n]),
                )
                .map(born);
        }
        if let Some(obj) = wrap {
            return View::wrap(obj).map(born);
        }
        let shape = shape.ok_or_else(|| PyValueError::new_err("View needs a shape"))?;
        View::allocate(extents(shape)?, dtype_code, layout_code, space_code)
    }

    /// Runs pending work on this view's memory (host access is about to
    /// happen). Raises the error of a failed pending launch.
    fn _sync(&self, py: Python<'_>) -> PyResult<()> {
        take_swallowed(py, self.alloc.id())?;
        flush_host(py, &self.alloc)?;
        self.alloc.host_sync().map_err(py_err)
    }

    /// `v[i]`, `v[i, j]`: one element, served at once; other keys take the
    /// package's general path (`_getitem`).
    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let v = slf.borrow();
        let w = v.window();
        if let Some(off) = super::element::offset_of(key, &w)? {
            return super::element::read(slf.py(), &w, off);
        }
        if let Some(ix) = super::element::leading_ints(key, &w)? {
            // `m[i]`: a row, made here (no Python-level construction).
            if let Some(hit) = v.last_row.get(slf.py(), &ix) {
                return Ok(hit);
            }
            let sub = born(v.row(&ix)?);
            let obj = super::handoff::new_of_type(&slf.get_type(), sub)?;
            v.last_row.put(&ix, obj.clone_ref(slf.py()));
            return Ok(obj);
        }
        let ty = slf.get_type();
        // `v[a:b]`, `v[i, :]`: the subview `_getitem` would make (a pk.View),
        // made here; a user's subclass keeps the Python path.
        if super::view_slice::is_package_view(&ty)? {
            if let Some(s) = super::view_slice::slicing(key, v.shape())? {
                let sub = born(v.subview(s.start, s.length, s.step, s.keep)?);
                return super::handoff::new_of_type(&ty, sub);
            }
        }
        drop(v);
        Ok(slf
            .call_method1(pyo3::intern!(slf.py(), "_getitem"), (key,))?
            .unbind())
    }

    /// `v[i] = x` for one element and a plain number; else `_setitem`.
    fn __setitem__(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let v = slf.borrow();
        let w = v.window();
        if let Some(off) = super::element::offset_of(key, &w)? {
            if super::element::write(slf.py(), &w, off, value)? {
                return Ok(());
            }
        }
        drop(v);
        slf.call_method1(pyo3::intern!(slf.py(), "_setitem"), (key, value))?;
        Ok(())
    }

    /// Allocates anew (a subclass's `__init__` giving shape and dtype late).
    fn _reset(
        mut slf: PyRefMut<'_, Self>,
        shape: Vec<i64>,
        dtype_code: u8,
        layout_code: u8,
        space_code: u8,
    ) -> PyResult<()> {
        // A NumPy array (or other buffer) of the old memory names this View as
        // its owner: new memory under it would leave the array on freed memory.
        if slf.alloc.exports.load(Ordering::Acquire) > 0 {
            return Err(pyo3::exceptions::PyBufferError::new_err(
                "cannot resize a View while NumPy arrays or other buffers of its memory are alive \
                 (as NumPy refuses to resize an array that is referenced): delete them first",
            ));
        }
        let fresh = View::allocate(shape, dtype_code, layout_code, space_code)?;
        slf.last_row.clear();
        drop(std::mem::replace(&mut *slf, fresh));
        Ok(())
    }

    /// `resize` done on the GPU (memory/resize.rs) when kernels wrote this whole,
    /// contiguous view there: the view takes new memory of `shape` holding the
    /// kept elements; false, with nothing changed, where the host way applies.
    fn _resize_on_device(
        mut slf: PyRefMut<'_, Self>,
        py: Python<'_>,
        shape: Vec<i64>,
        dtype_code: u8,
        layout_code: u8,
    ) -> PyResult<bool> {
        let whole = slf.offset == 0
            && slf.kernel_layout == slf.declared
            && shape.len() == slf.rank
            && slf.alloc.exports.load(Ordering::Acquire) == 0;
        if !whole || crate::kokkos::cuda_loaded().is_none() {
            return Ok(false);
        }
        // Launches waiting in the lazy DAG that write it run first (queued, not waited for).
        flush_host(py, &slf.alloc)?;
        let fresh = View::allocate(shape, dtype_code, layout_code, wire::MEMORY_HOST)?;
        let moved = crate::memory::resize::on_device(
            &slf.alloc,
            &fresh.alloc,
            slf.dtype.size(),
            &slf.extents[..slf.rank],
            &fresh.extents[..fresh.rank],
            fresh.declared == Layout::Left,
        )
        .map_err(py_err)?;
        if moved {
            slf.last_row.clear();
            drop(std::mem::replace(&mut *slf, fresh));
        }
        Ok(moved)
    }

    /// Marks the view `trait=pk.Atomic` (set right after construction).
    fn _set_atomic(&self) {
        self.atomic.store(true, Ordering::Relaxed);
    }
    #[getter]
    fn _atomic(&self) -> bool {
        self.atomic.load(Ordering::Relaxed)
    }

    /// `_sync` for host access that only reads (indexing, printing): the
    /// device copy, when there is one, stays current.
    fn _sync_read(&self, py: Python<'_>) -> PyResult<()> {
        take_swallowed(py, self.alloc.id())?;
        flush_host(py, &self.alloc)?;
        self.alloc.host_read().map_err(py_err)?;
        self.read_once.store(true, Ordering::Release);
        Ok(())
    }

    /// CUDA Array Interface (v3) of views with device memory (see interop.rs).
    #[getter]
    fn __cuda_array_interface__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        super::interop::cuda_array_interface(py, self.window())
    }

    /// DLPack export (see interop.rs); a 1.0 versioned capsule when the
    /// consumer's `max_version` allows it.
    #[pyo3(signature = (stream=None, max_version=None, **_kwargs))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Py<PyAny>>,
        max_version: Option<(u32, u32)>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = stream;
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        super::interop::dlpack(py, self.window(), versioned)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        dlpack::device(&self.alloc)
    }

    /// `v.shape`, a tuple, as NumPy's (read on every call of a jitted function).
    #[getter(shape)]
    fn py_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        pyo3::types::PyTuple::new(py, self.shape())
    }
    #[getter]
    fn _dtype_code(&self) -> u8 {
        self.dtype as u8
    }
    /// Whether the elements lie in one run in C order (a strided subview's
    /// do not): a contiguous buffer export takes only such Views.
    #[getter]
    fn _c_contiguous(&self) -> bool {
        super::buffer::one_run(self.shape(), &self.strides[..self.rank], false)
    }
    #[getter]
    fn _layout_code(&self) -> u8 {
        if self.declared == Layout::Left {
            wire::LAYOUT_LEFT
        } else {
            wire::LAYOUT_RIGHT
        }
    }
    #[getter]
    fn _kernel_layout(&self) -> &'static str {
        match self.kernel_layout {
            Layout::Right => "right",
            Layout::Left => "left",
            Layout::Stride => "stride",
        }
    }
    #[getter]
    fn _ptr(&self) -> PyResult<usize> {
        self.alloc.host_sync().map_err(py_err)?;
        Ok(self.data_ptr()? as usize)
    }
    #[getter]
    fn _exports(&self) -> isize {
        self.alloc.exports.load(Ordering::Relaxed)
    }
    /// `pykokkos.numba` calls: borrowed memory whose launches may wait (`Alloc::trusted`).
    fn _set_trusted(&self, on: bool) -> PyResult<()> {
        self.set_trusted(on)
    }
    #[getter]
    fn _is_foreign(&self) -> bool {
        self.alloc.is_foreign()
    }
    #[getter]
    fn _is_allocated(&self) -> bool {
        self.alloc.holds_data()
    }
    /// Whether GPU kernels have this View's memory (a device copy, managed
    /// or borrowed device memory): `fill` then fills it there.
    #[getter]
    fn _on_device(&self) -> bool {
        self.alloc.uvm
            || self.alloc.is_device_only()
            || !self
                .alloc
                .dev
                .load(std::sync::atomic::Ordering::Acquire)
                .is_null()
    }
    /// Allocation identity and byte range, for aliasing analysis.
    #[getter]
    fn _alloc_id(&self) -> usize {
        self.alloc.id()
    }
    fn extent(&self, d: usize) -> PyResult<i64> {
        if d >= self.rank {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "extent({d}) of a view with {} dimension(s)",
                self.rank
            )));
        }
        Ok(self.extents[d])
    }
    fn rank(&self) -> usize {
        self.rank
    }
    fn __len__(&self) -> usize {
        self.extents[0] as usize
    }

    /// The buffer protocol's export (see `export_buffer`).
    ///
    /// # Safety
    /// Only CPython calls it (pyo3's `bf_getbuffer` slot), with the GIL held: `view` is the
    /// consumer's `Py_buffer`, writable for the call, and `flags` its request. The export's
    /// `obj` is this View, which must keep the exported memory valid until
    /// `__releasebuffer__`; `_reset` replacing `alloc` meanwhile would break that.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        Self::export_buffer(slf, view, flags)
    }

    /// The end of an export (see `end_export`).
    ///
    /// # Safety
    /// Only CPython calls it, with the GIL held, once per successful `__getbuffer__` on this
    /// object, from PyBuffer_Release, with the `Py_buffer` that call filled.
    unsafe fn __releasebuffer__(&self, view: *mut ffi::Py_buffer) {
        self.end_export(view)
    }
}
