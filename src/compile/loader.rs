//! Loading compiled kernels. Libraries are never unloaded: their code may be
//! referenced by Kokkos (kernel labels, profiling) until the process ends.
use crate::errors::{PkError, PkResult};
use std::os::raw::{c_char, c_int, c_void};
use std::path::Path;

pub type EntryFn = unsafe extern "C" fn(
    *const c_void,
    *const c_void,
    *const i64,
    *const i64,
    *mut c_void,
) -> c_int;
pub type ErrorFn = unsafe extern "C" fn() -> *const c_char;

/// Opens a shared library for the rest of the process's life.
pub fn open(path: &Path) -> PkResult<&'static libloading::Library> {
    let _span = tracing::info_span!("load", path = %path.display()).entered();
    // SAFETY: dlopen runs the library's initializers. Every caller passes a
    // library this crate generated and built into the private cache
    // (compile::load, open_fresh, kokkos::init: kernels or the support
    // library, `trust::verify`-checked or just built, `looks_complete` where
    // a damaged file may be met): its initializers are Kokkos' and the C++
    // runtime's static constructors, which ask nothing of the caller. The
    // handle is leaked, so no termination routine runs while pointers into
    // the library are in use. (Nothing here enforces the caller's side: this
    // safe fn would load any path it is given.)
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| PkError::Environment(format!("could not load {}: {e}", path.display())))?;
    Ok(Box::leak(Box::new(lib)))
}

/// Whether `path` is a whole 64-bit little-endian ELF file: every loadable
/// segment and the section table lie inside it. A truncated library must not
/// reach dlopen, which maps it and then dies of SIGBUS touching what is not there.
pub fn looks_complete(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let check = || -> std::io::Result<bool> {
        let mut f = std::fs::File::open(path)?;
        let size = f.metadata()?.len();
        let mut h = [0u8; 64];
        f.read_exact(&mut h)?;
        if &h[..4] != b"\x7fELF" || h[4] != 2 || h[5] != 1 {
            return Ok(false);
        }
        let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
        let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let (phoff, shoff) = (u64_at(&h, 32), u64_at(&h, 40));
        let (phentsize, phnum) = (u16_at(&h, 54), u16_at(&h, 56));
        let (shentsize, shnum) = (u16_at(&h, 58), u16_at(&h, 60));
        if shoff + shentsize * shnum > size || phoff + phentsize * phnum > size || phentsize < 56 {
            return Ok(false);
        }
        let mut ph = vec![0u8; (phentsize * phnum) as usize];
        f.seek(SeekFrom::Start(phoff))?;
        f.read_exact(&mut ph)?;
        Ok(ph.chunks(phentsize as usize).all(|p| {
            let (offset, filesz) = (u64_at(p, 8), u64_at(p, 32));
            offset + filesz <= size
        }))
    };
    check().unwrap_or(false)
}

/// Opens a library that replaced one at the same path this process may have
/// opened already (the dynamic loader would hand back the old one by name):
/// through a link of its own.
pub fn open_fresh(path: &Path) -> PkResult<&'static libloading::Library> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let alias = path.with_extension(format!("{}.{nanos}.so", std::process::id()));
    std::fs::hard_link(path, &alias).or_else(|_| std::fs::copy(path, &alias).map(|_| ()))?;
    let lib = open(&alias);
    // The mapping stays valid once loaded; the name is not needed.
    let _ = std::fs::remove_file(&alias);
    lib
}

pub fn symbol<T: Copy>(lib: &'static libloading::Library, name: &str) -> PkResult<T> {
    // SAFETY: relies on each caller choosing T as the C declaration of `name`:
    // `pk_run` -> EntryFn and `pk_error` -> ErrorFn (the prototypes
    // codegen/single.rs and fused.rs emit), the `pk_*` functions of
    // cache.rs's SUPPORT_SOURCE -> the fields of kokkos.rs's `Support` and
    // `CudaFns` (int <-> c_int, size_t <-> usize). libloading checks T is
    // pointer-sized; these are defined functions, never null. `lib` is leaked
    // ('static), so the copied-out pointer cannot dangle. (A safe generic fn:
    // the type check is the callers', not enforced here.)
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| {
            PkError::Environment(format!("symbol {name} missing from a kernel library: {e}"))
        })
}

/// Hands a kernel library the runtime's Ctrl-C flag and question
/// (prelude.hpp `pk_set_stop`), where it has them (support libraries too).
pub fn hand_stop_hooks(lib: &'static libloading::Library) {
    type SetStop = unsafe extern "C" fn(*const u8, extern "C" fn() -> c_int);
    if let Ok(set) = symbol::<SetStop>(lib, "pk_set_stop") {
        // SAFETY: `pk_set_stop` is prelude.hpp's `void pk_set_stop(const
        // unsigned char*, int (*)())`, SetStop's C form. It stores both: the
        // flag is a static AtomicBool (one byte, read there with relaxed
        // atomic loads), and `stop_wanted` a plain extern "C" function;
        // both live as long as the process, as the library does.
        unsafe { set(crate::interrupt::flag_ptr(), crate::interrupt::stop_wanted) }
    }
}

pub fn error_text(f: ErrorFn) -> String {
    // SAFETY: every ErrorFn is a `pk_error` symbol (kernel or support
    // library), `const char* pk_error()`, returning prelude.hpp's
    // `pk::last_error()`: a thread_local static char[1024], zero-initialized
    // and only written by snprintf with its size, so non-null and
    // NUL-terminated; it lives as long as the thread and the (never unloaded)
    // library. Only the calling thread writes it, and it is copied at once.
    unsafe { std::ffi::CStr::from_ptr(f()) }
        .to_string_lossy()
        .into_owned()
}
