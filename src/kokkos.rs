//! Kokkos' lifetime in this process, through the support library (compiled
//! once per machine): initialize, fence, finalize, and the CUDA memory
//! functions device mirrors use.
use crate::compile::{cache, loader, toolchain};
use crate::errors::{PkError, PkResult};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

struct Support {
    fence: unsafe extern "C" fn(),
    thread_enter: unsafe extern "C" fn(),
    finalize: unsafe extern "C" fn(),
    concurrency: unsafe extern "C" fn() -> c_int,
    device: unsafe extern "C" fn() -> c_int,
    error: loader::ErrorFn,
    cuda: Option<CudaFns>,
}

/// Device-memory functions of the support library (CUDA builds only).
#[derive(Clone, Copy)]
pub struct CudaFns {
    pub malloc: unsafe extern "C" fn(usize) -> *mut c_void,
    pub malloc_managed: unsafe extern "C" fn(usize) -> *mut c_void,
    pub free: unsafe extern "C" fn(*mut c_void),
    pub h2d: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int,
    pub d2h: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int,
    pub zero: unsafe extern "C" fn(*mut c_void, usize) -> c_int,
    pub mem_info: unsafe extern "C" fn(*mut usize, *mut usize) -> c_int,
}

fn load_cuda(lib: &'static libloading::Library) -> Option<CudaFns> {
    Some(CudaFns {
        malloc: loader::symbol(lib, "pk_cuda_malloc").ok()?,
        malloc_managed: loader::symbol(lib, "pk_cuda_malloc_managed").ok()?,
        free: loader::symbol(lib, "pk_cuda_free").ok()?,
        h2d: loader::symbol(lib, "pk_cuda_h2d").ok()?,
        d2h: loader::symbol(lib, "pk_cuda_d2h").ok()?,
        zero: loader::symbol(lib, "pk_cuda_zero").ok()?,
        mem_info: loader::symbol(lib, "pk_cuda_mem_info").ok()?,
    })
}

/// The device-memory functions, initializing Kokkos first; an error when this
/// Kokkos has no CUDA backend.
pub fn cuda() -> PkResult<&'static CudaFns> {
    kokkos()?;
    match SUPPORT.get() {
        Some(Ok(Support { cuda: Some(c), .. })) => Ok(c),
        _ => Err(PkError::Environment(
            "device memory needs a Kokkos with the CUDA backend (set PK_KOKKOS_CUDA=1 on a machine with nvcc)"
                .into(),
        )),
    }
}

/// The functions only if some device memory may already exist (no init).
pub fn cuda_loaded() -> Option<&'static CudaFns> {
    match SUPPORT.get() {
        Some(Ok(Support { cuda: Some(c), .. })) => Some(c),
        _ => None,
    }
}

/// The support library's last error text (CUDA failures).
pub fn support_error() -> String {
    match SUPPORT.get() {
        Some(Ok(s)) => loader::error_text(s.error),
        _ => String::new(),
    }
}

static SUPPORT: OnceLock<Result<Support, String>> = OnceLock::new();

/// Compiles (once per machine) and loads the support library, then
/// initializes Kokkos (once per process). OMP_NUM_THREADS is honoured by Kokkos.
pub fn kokkos() -> PkResult<()> {
    if SUPPORT.get().is_none() {
        // One initialization at a time; an interrupted one (Ctrl-C during the
        // build) is not kept, so the next call builds again.
        static ONE: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
        let _one = ONE.lock();
        if SUPPORT.get().is_none() {
            match init() {
                Err(e @ PkError::Interrupted(_)) => return Err(e),
                r => {
                    let _ = SUPPORT.set(r.map_err(|e| e.to_string()));
                }
            }
        }
    }
    SUPPORT
        .get()
        .expect("set above")
        .as_ref()
        .map(|_| ())
        .map_err(|e| PkError::Environment(e.clone()))
}

fn init() -> PkResult<Support> {
    let _span = tracing::info_span!("kokkos_initialize").entered();
    let tc = toolchain::get()?;
    let mut so = cache::support_library(tc)?;
    if !loader::looks_complete(&so) {
        // Damaged (a killed copy, a full disk): rebuilt, never mapped.
        std::fs::remove_file(&so)?;
        so = cache::support_library(tc)?;
    }
    let lib = loader::open(&so)?;
    let initialize: unsafe extern "C" fn(c_int, c_int) -> c_int =
        loader::symbol(lib, "pk_initialize")?;
    let error: loader::ErrorFn = loader::symbol(lib, "pk_error")?;
    let cfg = crate::config::get();
    // SAFETY: `initialize` is SUPPORT_SOURCE's `extern "C" int
    // pk_initialize(int threads, int local_rank)` (compile/cache.rs), typed
    // to match; both arguments are i32 by value. It runs once per process:
    // `kokkos` calls `init` under its ONE mutex only while SUPPORT is unset,
    // and pk_initialize itself returns early if Kokkos is initialized.
    if unsafe { initialize(cfg.num_threads, cfg.local_rank) } != 0 {
        return Err(PkError::Runtime(format!(
            "Kokkos::initialize failed: {}",
            loader::error_text(error)
        )));
    }
    Ok(Support {
        fence: loader::symbol(lib, "pk_fence")?,
        thread_enter: loader::symbol(lib, "pk_thread_enter")?,
        finalize: loader::symbol(lib, "pk_finalize")?,
        concurrency: loader::symbol(lib, "pk_concurrency")?,
        device: loader::symbol(lib, "pk_device_id")?,
        error,
        cuda: load_cuda(lib),
    })
}

/// Set when a CUDA kernel was launched and nobody has waited for it since.
/// Kokkos launches are asynchronous; a launch does not fence, so back-to-back
/// launches cost only their enqueue. Copies through `cudaMemcpy` on the legacy
/// default stream (Kokkos 3.4's default instance) already wait for earlier
/// kernels; what bypasses them (managed memory read by the host, memory shared
/// with other CUDA libraries) calls `settle` first.
pub static IN_FLIGHT: AtomicBool = AtomicBool::new(false);

/// Waits for launched CUDA kernels, if any may still run.
pub fn settle() {
    if IN_FLIGHT.swap(false, Ordering::AcqRel) {
        fence();
    }
}

pub fn fence() {
    IN_FLIGHT.store(false, Ordering::Release);
    if let Some(Ok(s)) = SUPPORT.get() {
        // SAFETY: `extern "C" void pk_fence()` (SUPPORT_SOURCE), Kokkos::fence():
        // SUPPORT is Ok only after pk_initialize succeeded. It may run
        // without the dispatch turn (`settle`): in Kokkos 3.4 the Serial and
        // OpenMP static fences are empty and Cuda's is cudaDeviceSynchronize,
        // which is thread-safe. (Not guarded against a call after `finalize`.)
        unsafe { (s.fence)() }
    }
}

thread_local! {
    static ENTERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Lets the calling thread dispatch Kokkos work (any Python thread may
/// launch); the caller holds the dispatch turn. Once per thread.
pub fn thread_enter() {
    if ENTERED.get() {
        return;
    }
    if let Some(Ok(s)) = SUPPORT.get() {
        // SAFETY: `extern "C" void pk_thread_enter()` (SUPPORT_SOURCE) sets only
        // this thread's thread-local OpenMP instance pointer, from the master
        // pointer pk_initialize stored before SUPPORT was published (the
        // OnceLock orders it). Callers hold the dispatch turn, so the lent
        // instance is used by one dispatching thread at a time.
        unsafe { (s.thread_enter)() }
        ENTERED.set(true);
    }
}

pub fn finalize() {
    if let Some(Ok(s)) = SUPPORT.get() {
        // SAFETY: `extern "C" void pk_finalize()` (SUPPORT_SOURCE) finalizes at
        // most once, and only an initialized Kokkos. Its callers
        // (python/runtime.rs, at exit or from pk.finalize) hold the GIL, so two
        // finalizes never race on its `done` flag. Open question: nothing
        // keeps a kernel running on a thread that released the GIL from
        // overlapping it, nor later calls (launches, fence, device_id) from
        // reaching a finalized Kokkos.
        unsafe { (s.finalize)() }
    }
}

/// The GPU this process runs its Cuda kernels on (-1 without CUDA).
pub fn device_id() -> PkResult<i32> {
    kokkos()?;
    match SUPPORT.get() {
        // SAFETY: `extern "C" int pk_device_id()` (SUPPORT_SOURCE): reads the
        // initialized Cuda instance's device (or returns -1); no arguments,
        // and SUPPORT is Ok only after pk_initialize succeeded.
        Some(Ok(s)) => Ok(unsafe { (s.device)() }),
        _ => Err(PkError::Environment("Kokkos is not initialized".into())),
    }
}

pub fn concurrency() -> PkResult<i32> {
    kokkos()?;
    match SUPPORT.get() {
        // SAFETY: `extern "C" int pk_concurrency()` (SUPPORT_SOURCE): in Kokkos
        // 3.4 it reads a global set at initialization (OpenMP) or returns 1
        // (Serial), so any thread may call it; SUPPORT is Ok only after
        // pk_initialize succeeded.
        Some(Ok(s)) => Ok(unsafe { (s.concurrency)() }),
        _ => Err(PkError::Environment("Kokkos is not initialized".into())),
    }
}
