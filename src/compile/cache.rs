//! The on-disk kernel cache: blake3 keys, one build per key at a time (a lock
//! per key), compile-to-temp then atomic rename, so concurrent processes never
//! see half-written files and a failed or killed compile leaves nothing that
//! would be loaded. Only entries `trust::verify` accepts are handed out.
use super::toolchain::Toolchain;
use super::trust::{self, Verdict};
use crate::codegen::PRELUDE;
use crate::errors::{PkError, PkResult};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bump when generated code or the entry ABI changes meaning.
pub const FORMAT_VERSION: &str = "pkfuse-3";

pub fn key(tc: &Toolchain, source: &str) -> String {
    key_for(&tc.identity, source)
}

pub fn key_for(identity: &str, source: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(FORMAT_VERSION.as_bytes());
    h.update(b"\0");
    h.update(identity.as_bytes());
    h.update(b"\0");
    h.update(source.as_bytes());
    h.finalize().to_hex()[..32].to_string()
}

fn unique_tmp(dir: &Path, stem: &str, ext: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!(".{stem}.{}.{nanos}.tmp{ext}", std::process::id()))
}

/// Where a kernel of this key lives once compiled.
pub fn kernel_path(tc: &Toolchain, key: &str) -> PathBuf {
    tc.cache.join("kernels").join(format!("{key}.so"))
}

/// Runs the compiler to the end, or until Ctrl-C (the program's handler
/// raised): then it is killed, and the build reports `Interrupted`.
fn run(cmd: &mut Command) -> PkResult<std::process::Output> {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let child = cmd
        .process_group(0) // its own group: stopped whole (g++'s cc1plus and ld too)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| PkError::Environment(format!("could not run the C++ compiler: {e}")))?;
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let interrupted =
        || PkError::Interrupted("a kernel compile was interrupted (nothing was cached)".into());
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(25)) {
            Ok(out) => {
                let out =
                    out.map_err(|e| PkError::Environment(format!("the C++ compiler: {e}")))?;
                // Killed by the terminal's Ctrl-C along with us: an interruption, not a failure.
                if !out.status.success() && crate::interrupt::requested() {
                    return Err(interrupted());
                }
                return Ok(out);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if crate::interrupt::requested() => {
                // SAFETY: kill(2) takes plain integers and touches no memory of
                // ours. It targets the compiler's process group (process_group(0)
                // made its id the compiler's pid); the id stays reserved while any
                // member lives. The waiter thread may have reaped the compiler
                // since the timeout, so if the whole group also ended, the id
                // could in principle be reused: a narrow window, a wrong signal
                // at worst, not memory unsafety.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                let _ = rx.recv();
                return Err(interrupted());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => return Err(PkError::Environment(format!("the C++ compiler: {e}"))),
        }
    }
}

/// The prelude and its precompiled header, built once per toolchain identity.
/// Kernels then compile in a fraction of the time a full Kokkos parse takes.
/// CUDA toolchains (nvcc cannot use GCC's precompiled headers) get the header alone.
pub fn ensure_prelude(tc: &Toolchain) -> PkResult<()> {
    let dir = &tc.include_dir;
    if dir.join(".complete").exists() {
        return Ok(());
    }
    // One build at a time; who waited finds it done.
    let _lock = trust::lock(&tc.cache, &format!("pch-{}", tc.identity))?;
    if dir.join(".complete").exists() {
        return Ok(());
    }
    let _span = tracing::info_span!("precompile_header", dir = %dir.display()).entered();
    let tmp = unique_tmp(&tc.cache, "pch", "");
    fs::create_dir_all(&tmp)?;
    let hdr = tmp.join("pk_prelude.hpp");
    fs::write(&hdr, PRELUDE)?;
    if !tc.use_pch {
        return publish_prelude(&tmp, dir);
    }
    let out = run(tc
        .command()
        .arg("-x")
        .arg("c++-header")
        .arg(&hdr)
        .arg("-o")
        .arg(tmp.join("pk_prelude.hpp.gch")))
    .inspect_err(|_| {
        let _ = fs::remove_dir_all(&tmp);
    })?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&tmp);
        return Err(PkError::Environment(format!(
            "precompiling the Kokkos prelude failed:\n{}",
            excerpt(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    publish_prelude(&tmp, dir)
}

fn publish_prelude(tmp: &Path, dir: &Path) -> PkResult<()> {
    fs::write(tmp.join(".complete"), "")?;
    // Another process may have won the race; theirs is as good as ours.
    if fs::rename(tmp, dir).is_err() {
        let _ = fs::remove_dir_all(tmp);
    }
    Ok(())
}

/// Compiles `source` into the cache under `key` unless a trusted build of it
/// is already there. Returns the shared library's path.
pub fn compile(tc: &Toolchain, key: &str, source: &str, kernel: &str) -> PkResult<PathBuf> {
    let so = kernel_path(tc, key);
    if cached(&so, key, tc, kernel, false) {
        crate::trace::event(
            "compile",
            serde_json::json!({"kernel": kernel, "key": key, "cached": true, "us": 0.0}),
        );
        return Ok(so);
    }
    let t0 = std::time::Instant::now();
    let built = compile_missing(tc, key, source, kernel, &so);
    let us = t0.elapsed().as_secs_f64() * 1e6;
    // Another process built it while this one waited for the key's lock: a
    // cache hit that cost the wait.
    let loaded = matches!(built, Ok((_, false)));
    crate::trace::event(
        "compile",
        serde_json::json!({"kernel": kernel, "key": key, "cached": loaded, "us": us.round()}),
    );
    built.map(|(p, _)| p)
}

/// The part of `compile` past the first cache lookup: the path, and whether
/// this process built it (false: another did while this one waited).
fn compile_missing(
    tc: &Toolchain,
    key: &str,
    source: &str,
    kernel: &str,
    so: &Path,
) -> PkResult<(PathBuf, bool)> {
    crate::interrupt::chain();
    let so = so.to_path_buf();
    let dir = so.parent().unwrap().to_path_buf();
    trust::make_private(&dir)?;
    // Striped by the key's first byte: a bounded number of lock files.
    let _lock = trust::lock(&tc.cache, &format!("kernel-{}", &key[..2.min(key.len())]))?;
    // Another process (or thread) may have built it while we waited.
    if cached(&so, key, tc, kernel, true) {
        return Ok((so, false));
    }
    ensure_prelude(tc)?;
    let _span = tracing::info_span!("compile", kernel, key).entered();
    let cpp = dir.join(format!("{key}.cpp"));
    let tmp_cpp = unique_tmp(&dir, key, ".cpp");
    fs::write(&tmp_cpp, source)?;
    let _ = fs::rename(&tmp_cpp, &cpp);
    let tmp_so = unique_tmp(&dir, key, ".so");
    let mut cmd = tc.command();
    cmd.arg(format!("-I{}", tc.include_dir.display()));
    if tc.use_pch {
        cmd.arg("-Winvalid-pch");
    }
    cmd.arg(&cpp).arg("-o").arg(&tmp_so).args(tc.link_args());
    let out = run(&mut cmd).inspect_err(|_| {
        // Interrupted: nothing of this build stays in the cache.
        let _ = fs::remove_file(&tmp_so);
        let _ = fs::remove_file(&cpp);
    })?;
    if !out.status.success() {
        let _ = fs::remove_file(&tmp_so);
        // Keep the source for the bug report, out of the cache's way.
        let failed = tc.cache.join("failed");
        let _ = trust::make_private(&failed);
        let kept = failed.join(format!("{key}.cpp"));
        let _ = fs::rename(&cpp, &kept);
        return Err(PkError::Compile {
            kernel: kernel.to_string(),
            cpp_path: kept.display().to_string(),
            excerpt: excerpt(&String::from_utf8_lossy(&out.stderr)),
        });
    }
    // The record first: a library without its record is never loaded.
    let published = trust::write_record(&tmp_so, &so, key, &tc.identity)
        .and_then(|()| fs::rename(&tmp_so, &so).map_err(PkError::from));
    if published.is_err() {
        let _ = fs::remove_file(&tmp_so);
    }
    published.map(|()| (so, true))
}

/// Whether a trusted build of `key` is at `so`; an untrusted one is reported
/// (once) and will be replaced by the caller's build.
fn cached(so: &Path, key: &str, tc: &Toolchain, kernel: &str, locked: bool) -> bool {
    match trust::verify(so, key, &tc.identity) {
        Verdict::Trusted => {
            tracing::info!(target: "pykokkos", kernel, key, "cache hit (disk)");
            true
        }
        Verdict::Missing => false,
        // Outside the lock a build may be between its two renames: look
        // again under it before calling the entry bad.
        Verdict::Untrusted(_) if !locked => false,
        Verdict::Untrusted(why) => {
            trust::warn_untrusted(so, &why);
            false
        }
    }
}

/// The compiler's first error lines: enough to report, not a wall of templates.
fn excerpt(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("error"))
        .take(8)
        .collect();
    if lines.is_empty() {
        stderr.lines().take(12).collect::<Vec<_>>().join("\n")
    } else {
        lines.join("\n")
    }
}

/// Builds (once) the support library that owns Kokkos initialization.
pub fn support_library(tc: &Toolchain) -> PkResult<PathBuf> {
    let key = key(tc, SUPPORT_SOURCE);
    compile(tc, &format!("support-{key}"), SUPPORT_SOURCE, "support")
}

const SUPPORT_SOURCE: &str = r#"// pykokkos-fuse support library: Kokkos lifetime and fences.
#include "pk_prelude.hpp"
#include <cstring>
#include <mutex>
#ifdef KOKKOS_ENABLE_OPENMP
// The OpenMP backend's instance, which Kokkos 3.4 keeps in a thread-local of
// the thread that initialized it: other threads lend it (one dispatch at a
// time, serialized by the runtime) instead of failing "not initialized".
static Kokkos::Impl::OpenMPExec* pk_openmp_master = nullptr;
#endif
extern "C" int pk_initialize(int threads, int local_rank) {
  if (Kokkos::is_initialized()) return 0;
  try {
    Kokkos::InitArguments args;
    args.num_threads = threads;
    args.disable_warnings = true;
#ifdef KOKKOS_ENABLE_CUDA
    // MPI ranks of one node take the node's GPUs in turn (as Kokkos'
    // --kokkos-map-device-id-by=mpi_rank does), counted, never assumed.
    int devices = 0;
    if (local_rank >= 0 && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
      args.device_id = local_rank % devices;
#else
    (void)local_rank;
#endif
    Kokkos::initialize(args);
#ifdef KOKKOS_ENABLE_OPENMP
    pk_openmp_master = Kokkos::Impl::t_openmp_instance;
#endif
    return 0;
  } catch (std::exception& e) { return pk::fail(e.what()); }
}
extern "C" void pk_thread_enter() {
#ifdef KOKKOS_ENABLE_OPENMP
  if (!Kokkos::Impl::t_openmp_instance) Kokkos::Impl::t_openmp_instance = pk_openmp_master;
#endif
}
extern "C" void pk_finalize() {
  // Kokkos 3.4 cannot be re-initialized after finalize; finalize at most once.
  static bool done = false;
  if (!done && Kokkos::is_initialized()) { done = true; Kokkos::finalize(); }
}
extern "C" void pk_fence() { Kokkos::fence(); }
extern "C" int pk_device_id() {
#ifdef KOKKOS_ENABLE_CUDA
  return Kokkos::Cuda().cuda_device();
#else
  return -1;
#endif
}
extern "C" int pk_concurrency() { return Kokkos::DefaultHostExecutionSpace::concurrency(); }
extern "C" const char* pk_error() { return pk::last_error(); }
#ifdef KOKKOS_ENABLE_CUDA
// Device memory for view mirrors (only in CUDA builds; the runtime loads these
// symbols as optional).
static int pk_cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return 0;
  cudaGetLastError();
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %s", what, cudaGetErrorString(e));
  return pk::fail(buf);
}
extern "C" void* pk_cuda_malloc(size_t n) {
  void* p = nullptr;
  if (pk_cuda_check(cudaMalloc(&p, n ? n : 1), "cudaMalloc")) return nullptr;
  return p;
}
extern "C" void* pk_cuda_malloc_managed(size_t n) {
  void* p = nullptr;
  if (pk_cuda_check(cudaMallocManaged(&p, n ? n : 1, cudaMemAttachGlobal), "cudaMallocManaged")) return nullptr;
  return p;
}
extern "C" void pk_cuda_free(void* p) { if (p) cudaFree(p); }
extern "C" int pk_cuda_h2d(void* dst, const void* src, size_t n) {
  return pk_cuda_check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "cudaMemcpy host->device");
}
// Small copies back (an element a loop reads every turn) go through pinned
// memory: from pageable memory, cudaMemcpy of 8 bytes took 8-9 us on an H200.
static std::mutex pk_staging_lock;
static void* pk_staging = nullptr;
static bool pk_staging_failed = false;  // (asked once: no pinned memory, plain copies)
constexpr size_t PK_STAGING_BYTES = 4096;
extern "C" int pk_cuda_d2h(void* dst, const void* src, size_t n) {
  if (n <= PK_STAGING_BYTES) {
    std::lock_guard<std::mutex> held(pk_staging_lock);
    if (!pk_staging && !pk_staging_failed && cudaMallocHost(&pk_staging, PK_STAGING_BYTES) != cudaSuccess) {
      cudaGetLastError();  // no pinned memory: the plain copy below
      pk_staging = nullptr;
      pk_staging_failed = true;
    }
    if (pk_staging) {
      int rc = pk_cuda_check(cudaMemcpy(pk_staging, src, n, cudaMemcpyDeviceToHost), "cudaMemcpy device->host");
      if (rc == 0) std::memcpy(dst, pk_staging, n);
      return rc;
    }
  }
  return pk_cuda_check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "cudaMemcpy device->host");
}
extern "C" int pk_cuda_zero(void* p, size_t n) {
  return pk_cuda_check(cudaMemset(p, 0, n), "cudaMemset");
}
extern "C" int pk_cuda_mem_info(size_t* free_b, size_t* total_b) {
  return pk_cuda_check(cudaMemGetInfo(free_b, total_b), "cudaMemGetInfo");
}
#endif
"#;

#[cfg(test)]
mod tests {
    /// The key of a fixed input is pinned: changing it invalidates every user's cache,
    /// so it must only happen together with a FORMAT_VERSION bump.
    #[test]
    fn pinned_key() {
        assert_eq!(
            super::key_for("toolchain-x", "int main() {}"),
            super::key_for("toolchain-x", "int main() {}")
        );
        assert_eq!(
            super::key_for("toolchain-x", "int main() {}"),
            "87b3f09c85a07c33cf4b596fbe89d4e8"
        );
    }
}
