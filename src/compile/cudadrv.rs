//! The CUDA driver and NVRTC, opened at run time (the wheel links neither:
//! machines without a GPU never load them). Only what NVRTC kernels need:
//! compile to a cubin, load it into the context Kokkos runs in, launch.
//!
//! Why not cudarc (0.19, judged for this table): its loader panics where
//! libcuda, libnvrtc or one symbol is missing, where this table gives a typed
//! error and the program goes on on the host; it finds NVRTC by name only, not
//! the toolkit's own beside nvcc (`nvrtc(libdir)`); its bindings are fixed to
//! one CUDA version at build time, on a build machine with no CUDA; and the
//! graph calls exec/graph.rs needs (add a kernel node, patch it in the
//! instance) are only in its raw `sys` layer, as unsafe as these fields.
use crate::errors::{PkError, PkResult};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub type CuResult = c_int;
pub type CuPtr = u64;
pub type Handle = *mut c_void;

/// Entry points of libcuda (the `_v2` names are the 64-bit forms).
pub struct Driver {
    pub ctx_get_current: unsafe extern "C" fn(*mut Handle) -> CuResult,
    pub ctx_set_current: unsafe extern "C" fn(Handle) -> CuResult,
    pub device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    pub primary_ctx_retain: unsafe extern "C" fn(*mut Handle, c_int) -> CuResult,
    pub module_load_data: unsafe extern "C" fn(*mut Handle, *const c_void) -> CuResult,
    pub module_get_function: unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult,
    pub module_get_global:
        unsafe extern "C" fn(*mut CuPtr, *mut usize, Handle, *const c_char) -> CuResult,
    #[allow(clippy::type_complexity)]
    pub launch_kernel: unsafe extern "C" fn(
        Handle,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Handle,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    pub mem_alloc: unsafe extern "C" fn(*mut CuPtr, usize) -> CuResult,
    pub memset_d8: unsafe extern "C" fn(CuPtr, u8, usize) -> CuResult,
    pub memcpy_dtoh: unsafe extern "C" fn(*mut c_void, CuPtr, usize) -> CuResult,
    pub memcpy_dtod_async: unsafe extern "C" fn(CuPtr, CuPtr, usize, Handle) -> CuResult,
    pub func_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, Handle) -> CuResult,
    pub func_set_cache_config: unsafe extern "C" fn(Handle, c_int) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    /// CUDA graphs (exec/graph.rs); None on a driver without them.
    pub graph: Option<GraphFns>,
}

/// `CUDA_KERNEL_NODE_PARAMS_v2` of cuda.h: a kernel node's function, grid,
/// block, dynamic shared bytes and parameters (`kern` and `ctx` NULL: the
/// function in the current context).
#[repr(C)]
pub struct KernelNode {
    pub func: Handle,
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared: c_uint,
    pub params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: Handle,
    pub ctx: Handle,
}

/// The driver's graph entry points: build a graph of kernel nodes,
/// instantiate it, patch a node of the instance, launch it.
pub struct GraphFns {
    pub create: unsafe extern "C" fn(*mut Handle, c_uint) -> CuResult,
    pub add_kernel: unsafe extern "C" fn(
        *mut Handle,
        Handle,
        *const Handle,
        usize,
        *const KernelNode,
    ) -> CuResult,
    pub instantiate: unsafe extern "C" fn(*mut Handle, Handle, u64) -> CuResult,
    pub set_kernel: unsafe extern "C" fn(Handle, Handle, *const KernelNode) -> CuResult,
    pub launch: unsafe extern "C" fn(Handle, Handle) -> CuResult,
    pub exec_destroy: unsafe extern "C" fn(Handle) -> CuResult,
    pub destroy: unsafe extern "C" fn(Handle) -> CuResult,
}

fn graph_fns(lib: &'static libloading::Library) -> Option<GraphFns> {
    Some(GraphFns {
        create: sym(lib, "cuGraphCreate").ok()?,
        add_kernel: sym(lib, "cuGraphAddKernelNode_v2").ok()?,
        instantiate: sym(lib, "cuGraphInstantiateWithFlags").ok()?,
        set_kernel: sym(lib, "cuGraphExecKernelNodeSetParams_v2").ok()?,
        launch: sym(lib, "cuGraphLaunch").ok()?,
        exec_destroy: sym(lib, "cuGraphExecDestroy").ok()?,
        destroy: sym(lib, "cuGraphDestroy").ok()?,
    })
}

/// Entry points of libnvrtc.
pub struct Nvrtc {
    #[allow(clippy::type_complexity)]
    pub create: unsafe extern "C" fn(
        *mut Handle,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    pub compile: unsafe extern "C" fn(Handle, c_int, *const *const c_char) -> c_int,
    pub log_size: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    pub log: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    pub cubin_size: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    pub cubin: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    pub destroy: unsafe extern "C" fn(*mut Handle) -> c_int,
}

fn open(path: &Path) -> Result<&'static libloading::Library, String> {
    // SAFETY: only called (below) for libcuda.so.1 and libnvrtc.so, NVIDIA's
    // libraries, whose load-time initializers ask nothing of the caller. The
    // handle is leaked, so the library is never unloaded: no termination
    // routine runs while the 'static function pointers taken from it live.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("could not load {}: {e}", path.display()))?;
    Ok(Box::leak(Box::new(lib)))
}

fn sym<T: Copy>(lib: &'static libloading::Library, name: &str) -> Result<T, String> {
    // SAFETY: every caller (`driver`, `nvrtc`) names a documented entry point
    // and stores it in a field whose `unsafe extern "C" fn` type is that
    // function's prototype in cuda.h / nvrtc.h (see the fields above);
    // libloading checks T is pointer-sized, and a defined function never
    // resolves to null. `lib` is leaked ('static), so copying the pointer
    // out of the `Symbol` cannot outlive the mapping.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name}: {e}"))
}

static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();
static NVRTC: OnceLock<Result<Nvrtc, String>> = OnceLock::new();

pub fn driver() -> PkResult<&'static Driver> {
    DRIVER
        .get_or_init(|| {
            let lib = open(Path::new("libcuda.so.1"))?;
            let init: unsafe extern "C" fn(c_uint) -> CuResult = sym(lib, "cuInit")?;
            let d = Driver {
                ctx_get_current: sym(lib, "cuCtxGetCurrent")?,
                ctx_set_current: sym(lib, "cuCtxSetCurrent")?,
                device_get: sym(lib, "cuDeviceGet")?,
                primary_ctx_retain: sym(lib, "cuDevicePrimaryCtxRetain")?,
                module_load_data: sym(lib, "cuModuleLoadData")?,
                module_get_function: sym(lib, "cuModuleGetFunction")?,
                module_get_global: sym(lib, "cuModuleGetGlobal_v2")?,
                launch_kernel: sym(lib, "cuLaunchKernel")?,
                mem_alloc: sym(lib, "cuMemAlloc_v2")?,
                memset_d8: sym(lib, "cuMemsetD8_v2")?,
                memcpy_dtoh: sym(lib, "cuMemcpyDtoH_v2")?,
                memcpy_dtod_async: sym(lib, "cuMemcpyDtoDAsync_v2")?,
                func_get_attribute: sym(lib, "cuFuncGetAttribute")?,
                func_set_cache_config: sym(lib, "cuFuncSetCacheConfig")?,
                get_error_string: sym(lib, "cuGetErrorString")?,
                graph: graph_fns(lib),
            };
            // SAFETY: `init` is cuInit, `CUresult cuInit(unsigned int Flags)`;
            // Flags must be 0. It may be called any number of times, from any
            // thread (the OnceLock runs it once anyway).
            d.check(unsafe { init(0) }, "cuInit")?;
            Ok(d)
        })
        .as_ref()
        .map_err(|e| PkError::Environment(format!("the CUDA driver: {e}")))
}

impl Driver {
    /// `Err` with the driver's words for a failed call.
    pub fn check(&self, rc: CuResult, what: &str) -> Result<(), String> {
        if rc == 0 {
            return Ok(());
        }
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString(CUresult, const char**) only writes `s`, a
        // live local; for an unknown code it leaves NULL there (checked below).
        unsafe { (self.get_error_string)(rc, &mut s) };
        let text = if s.is_null() {
            format!("error {rc}")
        } else {
            // SAFETY: a non-null `s` from cuGetErrorString points at one of the
            // driver's static NUL-terminated strings; libcuda is never unloaded
            // and the text is copied out at once.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        Err(format!("{what} failed: {text}"))
    }

    /// Makes the primary context of `device` (the one Kokkos' runtime calls
    /// use) current on this thread, if no context is.
    pub fn ensure_context(&self, device: i32) -> Result<(), String> {
        let mut cur: Handle = std::ptr::null_mut();
        self.check(
            // SAFETY: cuCtxGetCurrent(CUcontext*) writes the calling thread's
            // current context (or NULL) into `cur`, a live local; `self` exists
            // only after cuInit succeeded (`driver`).
            unsafe { (self.ctx_get_current)(&mut cur) },
            "cuCtxGetCurrent",
        )?;
        if !cur.is_null() {
            return Ok(());
        }
        let mut dev: c_int = 0;
        self.check(
            // SAFETY: cuDeviceGet(CUdevice*, int) writes `dev`, a live local; an
            // ordinal past the device count is refused with an error code.
            unsafe { (self.device_get)(&mut dev, device.max(0)) },
            "cuDeviceGet",
        )?;
        let mut ctx: Handle = std::ptr::null_mut();
        self.check(
            // SAFETY: cuDevicePrimaryCtxRetain(CUcontext*, CUdevice) writes `ctx`,
            // a live local; `dev` came from cuDeviceGet just above. The retain
            // is never released, so the context outlives every handle made in it.
            unsafe { (self.primary_ctx_retain)(&mut ctx, dev) },
            "cuDevicePrimaryCtxRetain",
        )?;
        // SAFETY: cuCtxSetCurrent(CUcontext) binds `ctx`, the primary context
        // just retained (so alive), to this thread only; it touches no Rust memory.
        self.check(unsafe { (self.ctx_set_current)(ctx) }, "cuCtxSetCurrent")
    }
}

/// libnvrtc of the CUDA toolkit nvcc belongs to (`libdir`), else the loader's.
pub fn nvrtc(libdir: Option<&Path>) -> PkResult<&'static Nvrtc> {
    NVRTC
        .get_or_init(|| {
            let path = libdir
                .map(|d| d.join("libnvrtc.so"))
                .filter(|p| p.exists())
                .unwrap_or_else(|| PathBuf::from("libnvrtc.so"));
            let lib = open(&path)?;
            Ok(Nvrtc {
                create: sym(lib, "nvrtcCreateProgram")?,
                compile: sym(lib, "nvrtcCompileProgram")?,
                log_size: sym(lib, "nvrtcGetProgramLogSize")?,
                log: sym(lib, "nvrtcGetProgramLog")?,
                cubin_size: sym(lib, "nvrtcGetCUBINSize")?,
                cubin: sym(lib, "nvrtcGetCUBIN")?,
                destroy: sym(lib, "nvrtcDestroyProgram")?,
            })
        })
        .as_ref()
        .map_err(|e| PkError::Environment(format!("NVRTC: {e}")))
}
