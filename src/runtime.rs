//! Process-wide runtime state: Kokkos' lifetime (through the support library),
//! the in-process kernel table, and the default execution space.
use crate::build::{cache, loader, toolchain};
use crate::codegen::{ArgTy, Pattern, Space};
use crate::errors::{PkError, PkResult};
use crate::pipeline::Kernel;
use dashmap::DashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

struct Support {
    fence: unsafe extern "C" fn(),
    finalize: unsafe extern "C" fn(),
    concurrency: unsafe extern "C" fn() -> c_int,
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
    SUPPORT
        .get_or_init(|| init().map_err(|e| e.to_string()))
        .as_ref()
        .map(|_| ())
        .map_err(|e| PkError::Environment(e.clone()))
}

fn init() -> PkResult<Support> {
    let _span = tracing::info_span!("kokkos_initialize").entered();
    let tc = toolchain::get()?;
    let so = cache::support_library(tc)?;
    let lib = loader::open(&so)?;
    let initialize: unsafe extern "C" fn(c_int) -> c_int = loader::symbol(lib, "pk_initialize")?;
    let error: loader::ErrorFn = loader::symbol(lib, "pk_error")?;
    let threads = std::env::var("PK_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);
    if unsafe { initialize(threads) } != 0 {
        return Err(PkError::Runtime(format!(
            "Kokkos::initialize failed: {}",
            loader::error_text(error)
        )));
    }
    Ok(Support {
        fence: loader::symbol(lib, "pk_fence")?,
        finalize: loader::symbol(lib, "pk_finalize")?,
        concurrency: loader::symbol(lib, "pk_concurrency")?,
        error,
        cuda: load_cuda(lib),
    })
}

pub fn fence() {
    crate::device::IN_FLIGHT.store(false, std::sync::atomic::Ordering::Release);
    if let Some(Ok(s)) = SUPPORT.get() {
        unsafe { (s.fence)() }
    }
}

pub fn finalize() {
    if let Some(Ok(s)) = SUPPORT.get() {
        unsafe { (s.finalize)() }
    }
}

pub fn concurrency() -> PkResult<i32> {
    kokkos()?;
    match SUPPORT.get() {
        Some(Ok(s)) => Ok(unsafe { (s.concurrency)() }),
        _ => Err(PkError::Environment("Kokkos is not initialized".into())),
    }
}

/// Identity of one compiled kernel in this process.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub workunit: usize,
    pub pattern: Pattern,
    pub space: Space,
    pub rank: u8,
    pub args: Vec<ArgTy>,
}

pub static KERNELS: LazyLock<DashMap<KernelKey, Arc<Kernel>>> = LazyLock::new(DashMap::new);

static DEFAULT_SPACE: AtomicU8 = AtomicU8::new(1);

pub fn default_space() -> Space {
    match DEFAULT_SPACE.load(Ordering::Relaxed) {
        0 => Space::Serial,
        2 => Space::Cuda,
        _ => Space::OpenMP,
    }
}

pub fn set_default_space(s: Space) -> PkResult<()> {
    if s == Space::Cuda {
        let tc = toolchain::get()?;
        if !tc.kokkos.has_cuda {
            return Err(PkError::Environment(format!(
                "the Kokkos install at {} has no CUDA backend (set PK_KOKKOS_CUDA=1 on a machine with nvcc)",
                tc.kokkos.prefix.display()
            )));
        }
    }
    DEFAULT_SPACE.store(
        match s {
            Space::Serial => 0,
            Space::OpenMP => 1,
            Space::Cuda => 2,
        },
        Ordering::Relaxed,
    );
    Ok(())
}
