//! NVRTC kernels (codegen/device.rs): compiled to a cubin for the GPU's
//! architecture, cached on disk like libraries (blake3 key, build record,
//! temp-then-rename), loaded into the context Kokkos runs in. A source NVRTC
//! rejects leaves a marker, so later processes go to nvcc directly.
use super::cudadrv::{self, Handle};
use super::{cache, toolchain, trust};
use crate::errors::{PkError, PkResult};
use std::ffi::{c_char, CString};
use std::fs;

/// A loaded `extern "C" __global__` function, and the address of its
/// module's `pk_oob` record where it has one (PK_BOUNDS_CHECK=1). CUDA
/// functions may be launched from any thread of the context's process.
#[derive(Clone, Copy)]
pub struct DeviceFn(
    pub Handle,
    pub Option<cudadrv::CuPtr>,
    /// The module's `pk_zdiv` record (device_checked.hpp), where it has one.
    pub Option<cudadrv::CuPtr>,
);
// SAFETY: the fields are a CUfunction (an opaque driver handle Rust never
// dereferences) and two device addresses (plain integers). The driver API is
// thread-safe and a CUfunction may be used from any thread of the process
// once its context is current there (DeviceEntry::call makes it so); its
// module is never unloaded (no cuModuleUnload anywhere), so the handle stays
// valid wherever the value is sent.
unsafe impl Send for DeviceFn {}
// SAFETY: as for Send: the value is immutable (Copy) and shared uses only
// pass the handle to thread-safe driver calls; the module records it names
// are read and cleared under the dispatch turn (exec/run.rs), one launch at a time.
unsafe impl Sync for DeviceFn {}

/// What became of one NVRTC source.
pub enum Outcome {
    /// The function and its cache key.
    Loaded(DeviceFn, String),
    /// NVRTC rejected it (now or in an earlier process): use nvcc.
    Rejected(String),
}

/// Compiles (or finds) `source` and loads its function `entry` on `device`;
/// `records`: the source has device_bounds.hpp's `pk_oob` record and/or
/// device_checked.hpp's `pk_zdiv` one, whose addresses the function carries.
pub fn load(
    source: &str,
    entry: &str,
    label: &str,
    device: i32,
    records: (bool, bool),
    prefer_l1: bool,
) -> PkResult<Outcome> {
    let tc = toolchain::get()?;
    let cuda = tc.cuda.as_ref().ok_or_else(|| {
        PkError::Environment("NVRTC kernels need a Kokkos with the CUDA backend".into())
    })?;
    let key = cache::key(tc, &format!("nvrtc\0{source}"));
    let dir = tc.cache.join("kernels");
    let cubin = dir.join(format!("{key}.cubin"));
    let rejected = dir.join(format!("{key}.nvrtc-rejected"));
    if rejected.exists() {
        return Ok(Outcome::Rejected("NVRTC rejected it before".into()));
    }
    let t0 = std::time::Instant::now();
    let (bytes, cached) = match trust::verify(&cubin, &key, &tc.identity) {
        trust::Verdict::Trusted => (fs::read(&cubin)?, true),
        _ => {
            trust::make_private(&dir)?;
            let _lock = trust::lock(&tc.cache, &format!("kernel-{}", &key[..2]))?;
            // The source beside its cubin, for whoever reads what NVRTC
            // compiled (or refused); never read back.
            let _ = fs::write(dir.join(format!("{key}.cu")), source);
            match compile_interruptibly(source, &cuda.arch, cuda.libdir.as_deref(), label)? {
                Ok(bytes) => {
                    publish(&bytes, &cubin, &key, &tc.identity)?;
                    (bytes, false)
                }
                Err(log) => {
                    let _ = fs::write(&rejected, &log);
                    return Ok(Outcome::Rejected(log));
                }
            }
        }
    };
    crate::trace::event(
        "compile",
        serde_json::json!({"kernel": label, "key": key, "cached": cached,
                           "us": (t0.elapsed().as_secs_f64() * 1e6).round()}),
    );
    let drv = cudadrv::driver()?;
    let env = |e: String| PkError::Runtime(format!("{label}: {e}"));
    drv.ensure_context(device).map_err(env)?;
    let mut module: Handle = std::ptr::null_mut();
    drv.check(
        // SAFETY: cuModuleLoadData(CUmodule*, const void* image): `module` is a
        // live local; `bytes` is a whole cubin (ELF) for this GPU's sm_ arch,
        // fresh from NVRTC or a trust::verify-checked copy whose blake3 matches
        // what NVRTC gave, so the sizes in its own headers stay inside the Vec,
        // which outlives the call (the driver copies the image). The primary
        // context was made current just above.
        unsafe { (drv.module_load_data)(&mut module, bytes.as_ptr().cast()) },
        "cuModuleLoadData",
    )
    .map_err(env)?;
    let name = CString::new(entry).expect("entry names have no NUL");
    let mut f: Handle = std::ptr::null_mut();
    drv.check(
        // SAFETY: cuModuleGetFunction(CUfunction*, CUmodule, const char*): `f` is
        // a live local, `module` was loaded just above (and is never unloaded),
        // `name` a NUL-terminated CString alive until the end of this function.
        unsafe { (drv.module_get_function)(&mut f, module, name.as_ptr()) },
        "cuModuleGetFunction",
    )
    .map_err(env)?;
    if prefer_l1 {
        // Kokkos' initialization sets the whole context to prefer shared memory
        // (cudaDeviceSetCacheConfig), then asks for a large L1 for each range
        // kernel it launches. A kernel loaded here would keep the context's
        // setting: ExaMiniMD's force kernel, whose neighbour gathers live in L1,
        // ran 1.8x slower than the same cubin in a process without Kokkos.
        drv.check(
            // SAFETY: cuFuncSetCacheConfig(CUfunction, CUfunc_cache) with
            // CU_FUNC_CACHE_PREFER_L1 (2); `f` was just got from the loaded module.
            unsafe { (drv.func_set_cache_config)(f, 2) },
            "cuFuncSetCacheConfig",
        )
        .map_err(env)?;
    }
    // Bounds-checked kernels record an index outside a view (device_bounds.hpp),
    // checked divisions a division by zero (device_checked.hpp).
    let global = |wanted: bool, name: &std::ffi::CStr| {
        wanted
            .then(|| {
                let (mut at, mut bytes) = (0, 0);
                // SAFETY: cuModuleGetGlobal_v2(CUdeviceptr*, size_t*, CUmodule,
                // const char*): both out-pointers are live locals, `module` is
                // the loaded module, `name` a static C string literal.
                let rc =
                    unsafe { (drv.module_get_global)(&mut at, &mut bytes, module, name.as_ptr()) };
                drv.check(rc, "cuModuleGetGlobal").map(|()| at)
            })
            .transpose()
            .map_err(env)
    };
    let oob = global(records.0, c"pk_oob")?;
    let zdiv = global(records.1, c"pk_zdiv")?;
    Ok(Outcome::Loaded(DeviceFn(f, oob, zdiv), key))
}

/// Bytes of local memory (spilled registers, arrays) a thread of `f` uses.
pub fn local_bytes(f: &DeviceFn) -> PkResult<i32> {
    let drv = cudadrv::driver()?;
    let mut n = 0;
    // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
    drv.check(
        // SAFETY: cuFuncGetAttribute(int*, CUfunction_attribute, CUfunction) with
        // attribute 3 writes one int into `n`, a live local; `f.0` is a function
        // of a never-unloaded module. Its caller (pipeline/kernels.rs) runs it
        // on the thread that just ran `load`, whose context is current.
        unsafe { (drv.func_get_attribute)(&mut n, 3, f.0) },
        "cuFuncGetAttribute",
    )
    .map_err(PkError::Runtime)?;
    Ok(n)
}

/// `compile` on a thread of its own, waited for until Ctrl-C (the program's
/// handler raised): NVRTC cannot be stopped, so an interrupted compile is left
/// to finish unseen and its cubin is dropped (nothing is cached).
fn compile_interruptibly(
    source: &str,
    arch: &str,
    libdir: Option<&std::path::Path>,
    label: &str,
) -> PkResult<Result<Vec<u8>, String>> {
    crate::interrupt::chain();
    let (tx, rx) = std::sync::mpsc::channel();
    let (source, arch, libdir, label) = (
        source.to_owned(),
        arch.to_owned(),
        libdir.map(|p| p.to_owned()),
        label.to_owned(),
    );
    std::thread::spawn(move || {
        let _ = tx.send(compile(&source, &arch, libdir.as_deref(), &label));
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(25)) {
            Ok(out) => return out,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if crate::interrupt::requested() => {
                return Err(PkError::Interrupted(
                    "an NVRTC kernel compile was interrupted (nothing was cached)".into(),
                ));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => return Err(PkError::Runtime(format!("NVRTC compile thread: {e}"))),
        }
    }
}

/// The cubin of `source`, or NVRTC's log when it does not compile.
fn compile(
    source: &str,
    arch: &str,
    libdir: Option<&std::path::Path>,
    label: &str,
) -> PkResult<Result<Vec<u8>, String>> {
    let _span = tracing::info_span!("nvrtc", kernel = label).entered();
    let nv = cudadrv::nvrtc(libdir)?;
    let src = CString::new(source).map_err(|_| PkError::Runtime("NUL in kernel source".into()))?;
    let mut prog: Handle = std::ptr::null_mut();
    // SAFETY: nvrtcCreateProgram(nvrtcProgram*, const char* src, const char*
    // name, int numHeaders, const char* const* headers, const char* const*
    // includeNames): `prog` is a live local, `src` and the name are
    // NUL-terminated and outlive the call; with 0 headers both arrays may be
    // NULL. NVRTC calls may run on several threads at once as long as each
    // program handle is used by one thread: `prog` is this thread's alone.
    let rc = unsafe {
        (nv.create)(
            &mut prog,
            src.as_ptr(),
            c"pk_kernel.cu".as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(PkError::Runtime(format!(
            "nvrtcCreateProgram failed ({rc})"
        )));
    }
    // The flags of the nvcc path that change results: no contraction of a
    // product and a sum into one rounding (see toolchain.rs).
    let opts: Vec<CString> = [
        format!("--gpu-architecture={arch}"),
        "-std=c++17".into(),
        "--fmad=false".into(),
    ]
    .into_iter()
    .map(|o| CString::new(o).unwrap())
    .collect();
    let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: nvrtcCompileProgram(nvrtcProgram, int, const char* const*):
    // `prog` was created above; `ptrs` holds `ptrs.len()` (3) pointers into
    // `opts`' CStrings, all alive until the end of this function.
    let rc = unsafe { (nv.compile)(prog, ptrs.len() as i32, ptrs.as_ptr()) };
    let out = if rc == 0 {
        let mut n = 0usize;
        // SAFETY: nvrtcGetCUBINSize(nvrtcProgram, size_t*) writes `n`, a live
        // local, for the program compiled above.
        let size_rc = unsafe { (nv.cubin_size)(prog, &mut n) };
        let mut buf = vec![0u8; n];
        let cubin_rc = if size_rc == 0 && n > 0 {
            // SAFETY: nvrtcGetCUBIN(nvrtcProgram, char*) writes the cubin, whose
            // size NVRTC just reported as `n`, into `buf` of exactly `n` bytes
            // (called only when that report succeeded with a non-empty size).
            unsafe { (nv.cubin)(prog, buf.as_mut_ptr().cast()) }
        } else {
            size_rc
        };
        // A cubin NVRTC could not hand over is never cached or loaded
        // (cuModuleLoadData takes no length): nvcc builds the kernel instead.
        match (size_rc, cubin_rc, n) {
            (0, 0, 1..) => Ok(buf),
            _ => Err(format!(
                "NVRTC compiled the kernel but gave no cubin (codes {size_rc}, {cubin_rc}, {n} bytes)"
            )),
        }
    } else {
        let mut n = 0usize;
        // SAFETY: nvrtcGetProgramLogSize(nvrtcProgram, size_t*) writes `n`, a
        // live local, for the program created above.
        unsafe { (nv.log_size)(prog, &mut n) };
        let mut buf = vec![0u8; n.max(1)];
        // SAFETY: nvrtcGetProgramLog(nvrtcProgram, char*) writes the log and its
        // NUL, `n` bytes as just reported, into `buf` of at least `n` bytes.
        unsafe { (nv.log)(prog, buf.as_mut_ptr().cast()) };
        let log = String::from_utf8_lossy(&buf)
            .trim_end_matches('\0')
            .to_string();
        tracing::debug!(kernel = label, log = %log, "NVRTC rejected a kernel; nvcc builds it");
        Err(log)
    };
    // SAFETY: nvrtcDestroyProgram(nvrtcProgram*): `prog` was created above, is
    // destroyed exactly once here, and is not used afterwards.
    unsafe { (nv.destroy)(&mut prog) };
    Ok(out)
}

/// Writes a cubin and its record through temporary files and renames.
fn publish(bytes: &[u8], cubin: &std::path::Path, key: &str, identity: &str) -> PkResult<()> {
    // (Removed when dropped, unless the rename publishes it.)
    let dir = cubin.parent().unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::Builder::new().suffix(".tmp").tempfile_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    trust::write_record(tmp.path(), cubin, key, identity)?;
    tmp.persist(cubin).map_err(|e| PkError::from(e.error))?;
    Ok(())
}
