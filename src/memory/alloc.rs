//! Allocations: zeroed host memory allocated on first use, borrowed NumPy
//! memory, CUDA managed memory, and borrowed device memory (CuPy, DLPack).
//! One `Alloc` is shared by a view and all its subviews.
use crate::errors::{PkError, PkResult};
use pyo3::ffi;
use pyo3::prelude::*;
use std::alloc::{self, GlobalAlloc};
use std::os::raw::c_void;
use std::sync::atomic::{AtomicIsize, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// One allocation, shared by a view and all its subviews. Runtime-owned memory
/// is allocated on first use (a flush or a host access), so a view that no
/// kernel or host access ever needs costs nothing.
/// Device mirror states: the host copy is newer (or may have changed), both
/// copies agree, a kernel may have written the device copy.
pub const STALE: u8 = 0;
pub const SYNC: u8 = 1;
pub const NEWER: u8 = 2;

pub struct Alloc {
    /// Bytes between the allocation's start and the data (see `owned`).
    pub(super) color: usize,
    pub(super) ptr: AtomicPtr<u8>,
    pub(super) bytes: usize,
    /// Some for memory we only borrow (a NumPy array): released on drop.
    pub(super) foreign: Option<ForeignBuf>,
    /// Memory the runtime did not allocate (NumPy's).
    borrowed: bool,
    /// Borrowed memory that no Python code touches behind the runtime's back
    /// for now (a `pykokkos.numba` call holds the only handles): its launches
    /// may wait in the DAG. It stays observable, so its writes are never dead.
    pub trusted: std::sync::atomic::AtomicBool,
    /// What keeps borrowed host memory valid (an imported DLPack tensor).
    keep: Option<Py<PyAny>>,
    /// Python View objects (the view and its subviews) still alive.
    pub live: AtomicUsize,
    /// Buffer-protocol exports alive: while > 0 Python may touch the memory
    /// behind the runtime's back, so the memory counts as foreign.
    pub exports: AtomicIsize,
    /// Launches waiting in the lazy DAG that touch it: host access with
    /// none (and no flush under way) has nothing to wait for.
    pub pending: AtomicUsize,
    /// Pending launches that access it (each counted once, however many of
    /// its arguments do): with those a flush holds, whether any other
    /// pending launch touches it (fusion's dead temporaries).
    pub uses: AtomicUsize,
    /// Host accesses that may have written the memory so far (traces with
    /// data store a buffer again when it changed behind the kernels' back).
    pub host_writes: std::sync::atomic::AtomicU64,
    /// CudaUVMSpace: the memory is CUDA managed memory, valid on both sides.
    pub(crate) uvm: bool,
    /// The device mirror (CUDA launches), null until a kernel needs it.
    pub(crate) dev: AtomicPtr<u8>,
    /// Which copy is current: `STALE`, `SYNC` or `NEWER` (see `device.rs`).
    pub(crate) dev_state: AtomicU8,
    /// One element of a newer device copy was read on its own since the
    /// device copy was last written (`device_element`): the next read
    /// brings the whole copy back.
    pub(crate) peeked: std::sync::atomic::AtomicBool,
    /// Byte ranges of buffer exports taken while the device copy was newer:
    /// only those bytes came to the host, and they go back to the device
    /// when the export ends (see `device.rs`, `host_export`).
    pub(crate) ranges: parking_lot::Mutex<Vec<(isize, isize)>>,
    /// Device memory we only borrow (a CuPy array, through
    /// `__cuda_array_interface__`): no host copy exists, `dev` is its address,
    /// and the owner object is kept alive while a launch uses it.
    pub(crate) device_owner: Option<Py<PyAny>>,
    /// Borrowed memory as a profiling trace names it: the whole block the
    /// pointer lies in (a NumPy array's base), so every wrapper and subview
    /// of one array is one buffer. Set by the trace when it first sees it.
    pub trace_root: std::sync::OnceLock<TraceRoot>,
}

/// The block of borrowed memory a trace stores: its identity, first address
/// (host, or device when `device`) and length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRoot {
    pub id: usize,
    pub start: usize,
    pub len: usize,
    pub device: bool,
}

/// A buffer exported by a Python object (a NumPy array), released on drop.
pub struct ForeignBuf(pub Box<ffi::Py_buffer>);

// SAFETY: every field but `foreign` is Send already (atomics, a Mutex, a OnceLock, `Py`
// handles, integers). `foreign` is a `Py_buffer` of raw pointers that `PyObject_GetBuffer`
// filled before the `Alloc` was built; the memory it describes stays valid until it is
// released, whatever thread holds the `Alloc`. After construction it is only read (`len`,
// `obj`) and it is released in `Drop` (`&mut self`), which takes the GIL itself
// (`Python::attach`) on whichever thread drops the last `Arc`. `ptr` and `dev` are only
// handed out as raw pointers: their users order accesses to the memory (GIL, dispatch turn,
// `flush_host`).
unsafe impl Send for Alloc {}
// SAFETY: a shared `&Alloc` mutates only atomics, the `ranges` Mutex and the `trace_root`
// OnceLock; `foreign` is read-only until `Drop`, and `keep`/`device_owner` are `Py` handles
// (Sync). The `&self` methods that copy between `ptr` and `dev` (`host_access`,
// `device_ptr`, `call_mirror`, the export ranges) rely on their callers' ordering: the GIL
// for host access, the dispatch turn for kernels, `flush_host` between the two. Open
// question: `device_ptr` and `call_mirror` set `dev` by load-then-store, not a CAS, so a
// kernel (dispatch turn) and `__dlpack__`/`__cuda_array_interface__` (GIL) on one
// allocation could both allocate a mirror: one leaks and the state may be wrong, but no
// block is freed twice.
unsafe impl Sync for Alloc {}

// View memory comes from the system allocator (not the global one, see
// lib.rs). 16 bytes lets it use calloc: big views then come from fresh
// zero pages that the first (parallel) kernel touches, instead of a serial memset.
pub(super) const ALIGN: usize = 16;

impl Alloc {
    pub fn owned(bytes: usize, uvm: bool) -> Arc<Alloc> {
        // Big arrays come page-aligned from mmap, so element i of every array
        // shares its address bits below 4 KiB: loads then falsely wait on stores
        // to other arrays ("4K aliasing"), which cripples kernels touching
        // several arrays at once. Start each at one of 16 offsets instead.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let color = if bytes >= 1 << 16 && !uvm {
            (NEXT.fetch_add(1, Ordering::Relaxed) % 16) * 256
        } else {
            0
        };
        Alloc::new(color, std::ptr::null_mut(), bytes, None, uvm)
    }

    pub fn borrowed(ptr: *mut u8, foreign: Option<ForeignBuf>) -> Arc<Alloc> {
        Alloc::new(0, ptr, 0, Some(foreign), false)
    }

    /// `foreign`: Some for borrowed memory (with its buffer, if one).
    fn new(
        color: usize,
        ptr: *mut u8,
        bytes: usize,
        foreign: Option<Option<ForeignBuf>>,
        uvm: bool,
    ) -> Arc<Alloc> {
        Arc::new(Alloc {
            color,
            ptr: AtomicPtr::new(ptr),
            bytes,
            borrowed: foreign.is_some(),
            foreign: foreign.flatten(),
            trusted: std::sync::atomic::AtomicBool::new(false),
            keep: None,
            live: AtomicUsize::new(0),
            exports: AtomicIsize::new(0),
            pending: AtomicUsize::new(0),
            uses: AtomicUsize::new(0),
            host_writes: std::sync::atomic::AtomicU64::new(0),
            uvm,
            dev: AtomicPtr::new(std::ptr::null_mut()),
            dev_state: AtomicU8::new(0),
            peeked: std::sync::atomic::AtomicBool::new(false),
            ranges: Default::default(),
            device_owner: None,
            trace_root: Default::default(),
        })
    }

    /// The memory, allocating (zeroed) on first use; a MemoryError (not an
    /// abort) when the system has none to give.
    pub fn ptr(&self) -> PkResult<*mut u8> {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return Ok(p);
        }
        if self.bytes == 0 {
            return Ok(std::ptr::NonNull::<u64>::dangling().as_ptr() as *mut u8);
        }
        if self.uvm {
            return self.ptr_managed();
        }
        let layout = alloc::Layout::from_size_align(self.bytes + self.color, ALIGN)
            .expect("view size checked at creation");
        // SAFETY: `layout` has a non-zero size (`self.bytes > 0`, checked above) and the
        // power-of-two alignment ALIGN; a null result (no memory) is handled below.
        let base = unsafe { alloc::System.alloc_zeroed(layout) };
        if base.is_null() {
            return Err(PkError::Memory(format!(
                "cannot allocate {} bytes for a View",
                self.bytes
            )));
        }
        advise_huge_pages(base, self.bytes + self.color);
        // SAFETY: `base` is a live block of `bytes + color` bytes with `bytes > 0`, so
        // `base + color` lies inside it; `color` is a multiple of 256, so it stays aligned.
        let fresh = unsafe { base.add(self.color) };
        match self.ptr.compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(fresh),
            Err(winner) => {
                // SAFETY: `base` came from `System.alloc_zeroed(layout)` above with this very
                // `layout`; the exchange failed, so it was never published and nothing else
                // refers to it.
                unsafe { alloc::System.dealloc(base, layout) };
                Ok(winner)
            }
        }
    }

    /// CUDA managed memory (CudaUVMSpace views), zeroed on first use.
    fn ptr_managed(&self) -> PkResult<*mut u8> {
        let c = crate::kokkos::cuda()?;
        // SAFETY: `c` holds functions of the support library, which is never unloaded
        // (`loader::open` leaks it), typed as its C definition `void*
        // pk_cuda_malloc_managed(size_t)`; it takes no pointer, and null is handled below.
        let fresh = unsafe { (c.malloc_managed)(self.bytes) } as *mut u8;
        if fresh.is_null() {
            return Err(PkError::Memory(format!(
                "cudaMallocManaged of {} bytes failed: {}",
                self.bytes,
                crate::kokkos::support_error()
            )));
        }
        // SAFETY: `fresh` is a non-null block of `self.bytes` bytes of managed memory
        // (`cudaMallocManaged`, `cudaMemAttachGlobal`: host-accessible, 256-byte aligned),
        // not yet published, so no other thread or kernel refers to it. (Open question: on
        // GPUs without concurrentManagedAccess the host may not touch any managed memory
        // while a kernel runs, and nothing here waits for kernels in flight.)
        unsafe { std::ptr::write_bytes(fresh, 0, self.bytes) };
        match self.ptr.compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(fresh),
            Err(winner) => {
                // SAFETY: `fresh` came from `malloc_managed` above and lost the race, so it
                // was never published; it is freed once, by the matching `pk_cuda_free`.
                unsafe { (c.free)(fresh as *mut c_void) };
                Ok(winner)
            }
        }
    }

    pub fn is_borrowed(&self) -> bool {
        self.borrowed
    }

    /// Borrowed device memory (a CUDA array interface): kernels on the Cuda
    /// space use it in place; there is nothing on the host.
    pub fn is_device_only(&self) -> bool {
        self.device_owner.is_some()
    }

    /// Wraps host memory kept valid by `owner` (an imported DLPack tensor).
    pub fn host_borrowed(ptr: *mut u8, owner: Py<PyAny>) -> Arc<Alloc> {
        let a = Alloc::borrowed(ptr, None);
        let mut a = Arc::try_unwrap(a).ok().expect("fresh allocation");
        a.keep = Some(owner);
        Arc::new(a)
    }

    /// Wraps device memory owned by `owner` (e.g. a CuPy array).
    pub fn device_borrowed(dev: *mut u8, owner: Py<PyAny>) -> Arc<Alloc> {
        let a = Alloc::borrowed(std::ptr::null_mut(), None);
        let mut a = Arc::try_unwrap(a).ok().expect("fresh allocation");
        a.dev = AtomicPtr::new(dev);
        a.dev_state = AtomicU8::new(SYNC);
        a.device_owner = Some(owner);
        Arc::new(a)
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bytes of memory behind `ptr`: the allocation's, or for a borrowed NumPy
    /// buffer the length its exporter gave (0 when unknown, as for DLPack).
    pub fn data_len(&self) -> usize {
        match &self.foreign {
            Some(ForeignBuf(buf)) if self.bytes == 0 => buf.len.max(0) as usize,
            _ => self.bytes,
        }
    }

    /// Bytes a device copy of the memory takes: the allocation's, or a
    /// borrowed buffer's length.
    pub fn span(&self) -> usize {
        if self.borrowed {
            self.data_len()
        } else {
            self.bytes
        }
    }

    pub fn is_allocated(&self) -> bool {
        !self.ptr.load(Ordering::Acquire).is_null()
    }

    /// Some copy may hold values other than zeros: host memory exists, or a
    /// device copy does (a Cuda kernel may have written only that one).
    pub fn holds_data(&self) -> bool {
        self.is_allocated() || !self.dev.load(Ordering::Acquire).is_null()
    }

    /// Memory Python can reach without the runtime knowing.
    pub fn is_foreign(&self) -> bool {
        self.borrowed || self.exports.load(Ordering::Acquire) > 0
    }

    /// Launches touching it must run at once: Python may read or write it
    /// behind the runtime's back (untrusted borrowed memory, live exports).
    pub fn runs_now(&self) -> bool {
        (self.borrowed && !self.trusted.load(Ordering::Acquire))
            || self.exports.load(Ordering::Acquire) > 0
    }

    /// The buffer a profiling trace names: the memory itself for borrowed
    /// memory (every wrapper of one NumPy array is one buffer, as a program
    /// wrapping it at each call means), else the allocation.
    pub fn trace_id(self: &Arc<Self>) -> usize {
        if let Some(r) = self.trace_root.get() {
            r.id
        } else if self.borrowed && self.device_owner.is_none() {
            self.ptr.load(Ordering::Acquire) as usize
        } else {
            self.id()
        }
    }

    /// Bytes from the trace's buffer start to this allocation's first byte
    /// (borrowed memory inside a larger block), else 0.
    pub fn trace_shift(&self) -> isize {
        self.trace_root
            .get()
            .map_or(0, |r| self.base_address() as isize - r.start as isize)
    }

    /// The address kernels see for offset 0: the host pointer, or the device
    /// address of borrowed device memory.
    pub fn base_address(&self) -> usize {
        if self.device_owner.is_some() {
            self.dev.load(Ordering::Acquire) as usize
        } else {
            self.ptr.load(Ordering::Acquire) as usize
        }
    }

    /// The Python object that owns borrowed memory, where the allocation
    /// keeps one (a wrapped NumPy array, a DLPack or CUDA-array owner).
    pub fn owner_ptr(&self) -> Option<*mut ffi::PyObject> {
        if let Some(ForeignBuf(b)) = &self.foreign {
            return (!b.obj.is_null()).then_some(b.obj);
        }
        self.keep
            .as_ref()
            .or(self.device_owner.as_ref())
            .map(|o| o.as_ptr())
    }

    pub fn id(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

/// Views at least this big ask for transparent huge pages (NumPy's threshold).
const HUGE_PAGES_FROM: usize = 4 << 20;

/// Asks the kernel to back the whole 2 MiB pages of a big, not yet touched
/// allocation with huge pages, as NumPy does for its arrays: a kernel
/// streaming through hundreds of megabytes otherwise takes a TLB miss every
/// 4 KiB, which costs a memory-bound loop several percent against the same
/// loop over a NumPy array. Only advice: where THP is off it does nothing.
/// A View under glibc's mmap threshold (which grows to 32 MiB as big blocks
/// are freed) may come from heap memory already touched: khugepaged then
/// collapses it later, and the range keeps the advice after the View is
/// freed, as it does after a NumPy array.
fn advise_huge_pages(base: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if bytes < HUGE_PAGES_FROM {
            return;
        }
        let start = (base as usize).next_multiple_of(HUGE);
        let end = (base as usize + bytes) / HUGE * HUGE;
        if end > start {
            // Failure (an old kernel, THP compiled out) leaves small pages.
            // SAFETY: `[start, end)` is page-aligned and lies inside the block just allocated
            // (`base .. base + bytes`), which this allocation owns; MADV_HUGEPAGE is advice
            // only: it neither drops nor changes contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (base, bytes, HUGE_PAGES_FROM);
}
