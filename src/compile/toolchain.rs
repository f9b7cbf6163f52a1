//! The C++ toolchain (found by the `cc` crate) and the Kokkos install, probed
//! once per process. Their identity goes into every cache key.
//!
//! A Kokkos built with CUDA (KOKKOS_ENABLE_CUDA in KokkosCore_config.h) needs every
//! translation unit that includes its headers compiled by nvcc, host-space kernels
//! too: then the compiler is the `nvcc_wrapper` Kokkos installs in `<prefix>/bin`,
//! targeting the GPU's own architecture (nvidia-smi, or `PK_CUDA_ARCH`).
use super::cuda::{cuda_toolchain, which, Cuda};
use super::trust;
use crate::codegen::PRELUDE;
use crate::errors::{PkError, PkResult};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const KOKKOS_VERSION: &str = "3.4.01";

#[derive(Debug)]
pub struct Kokkos {
    pub prefix: PathBuf,
    pub libdir: PathBuf,
    /// e.g. "30401 SERIAL OPENMP": from KokkosCore_config.h.
    pub config: String,
    /// blake3 of the whole KokkosCore_config.h: every option of the build
    /// (architectures, debug checks, ...) is in the cache identity.
    pub config_digest: String,
    pub has_cuda: bool,
}

#[derive(Debug)]
pub struct Toolchain {
    pub compiler: PathBuf,
    pub args: Vec<OsString>,
    pub kokkos: Kokkos,
    /// Set when Kokkos has the CUDA backend: `compiler` is then nvcc_wrapper.
    pub cuda: Option<Cuda>,
    /// Whether kernels include a precompiled pk_prelude.hpp.gch. GCC's precompiled
    /// headers cannot go through nvcc (its host pass compiles cudafe++'s rewritten
    /// translation unit, not our source), so CUDA toolchains parse the prelude each time.
    pub use_pch: bool,
    pub cache: PathBuf,
    /// Hash of compiler identity, flags, Kokkos config and prelude.
    pub identity: String,
    /// Folder holding pk_prelude.hpp and its precompiled header.
    pub include_dir: PathBuf,
}

/// The kernel cache and Kokkos install root: `PK_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/pykokkos-fuse` (`~/.cache/...`), made private; a shared
/// `PK_CACHE_DIR` gets a per-user folder inside it (see `trust::private_root`).
/// kokkos_setup.py applies the same rule.
pub fn cache_root() -> PkResult<PathBuf> {
    static ROOT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    ROOT.get_or_init(|| resolve_root().map_err(|e| e.to_string()))
        .clone()
        .map_err(PkError::Environment)
}

fn resolve_root() -> PkResult<PathBuf> {
    if let Some(d) = &crate::config::get().cache_dir {
        return trust::private_root(Path::new(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("pykokkos-fuse");
    trust::make_private(&dir)?;
    Ok(dir)
}

/// Builds the project's own Kokkos (`want_cuda`: the CUDA build) where none
/// is installed yet: set by the Python package (`pykokkos.install.kokkos_setup`), so
/// a `pip install` needs no other command.
pub type Installer = Box<dyn Fn(bool) -> Result<(), String> + Send + Sync>;
static INSTALLER: OnceLock<Installer> = OnceLock::new();

pub fn set_installer(f: Installer) {
    let _ = INSTALLER.set(f);
}

fn find_kokkos() -> PkResult<Kokkos> {
    let explicit = crate::config::get().kokkos_root.clone();
    let want_cuda = crate::config::get().kokkos_cuda.as_deref() == Some("1");
    let prefix = match &explicit {
        Some(p) => p.clone(),
        None => cache_root()?.join(format!(
            "kokkos-{KOKKOS_VERSION}-{}",
            if want_cuda { "cuda" } else { "host" }
        )),
    };
    let cfg = prefix.join("include").join("KokkosCore_config.h");
    if let (false, None, Some(install)) = (cfg.exists(), &explicit, INSTALLER.get()) {
        install(want_cuda).map_err(PkError::Environment)?;
    }
    let text = std::fs::read_to_string(&cfg).map_err(|_| {
        PkError::Environment(format!(
            "Kokkos is not installed at {}: run `make setup` in the pykokkos-fuse checkout \
             (or `python -m pykokkos.install.kokkos_setup`), or set PK_KOKKOS_ROOT to an existing Kokkos install",
            prefix.display()
        ))
    })?;
    let mut config = String::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("#define KOKKOS_VERSION ") {
            config.push_str(v.trim());
        }
        if let Some(b) = line.strip_prefix("#define KOKKOS_ENABLE_") {
            let b = b.trim();
            if ["SERIAL", "OPENMP", "CUDA", "THREADS", "CUDA_LAMBDA"].contains(&b) {
                config.push(' ');
                config.push_str(b);
            }
        }
    }
    let libdir = ["lib", "lib64"]
        .iter()
        .map(|d| prefix.join(d))
        .find(|d| d.join("libkokkoscore.so").exists())
        .ok_or_else(|| {
            PkError::Environment(format!(
                "no libkokkoscore.so under {}/lib: Kokkos must be built shared",
                prefix.display()
            ))
        })?;
    let has_cuda = config.split(' ').any(|w| w == "CUDA");
    Ok(Kokkos {
        prefix,
        libdir,
        config,
        config_digest: blake3::hash(text.as_bytes()).to_hex().to_string(),
        has_cuda,
    })
}

/// What the `cc` crate's choice of compiler and flags depends on. Its probe
/// runs the compiler twice (~16 ms), so the answer is remembered on disk under
/// this fingerprint and a new process only pays a few `stat`s.
fn compiler_fingerprint() -> String {
    let mut h = blake3::Hasher::new();
    h.update(env!("PK_TARGET").as_bytes());
    let target_us = env!("PK_TARGET").replace('-', "_");
    for var in [
        "CXX",
        "CXXFLAGS",
        "TARGET_CXX",
        "HOST_CXX",
        "TARGET_CXXFLAGS",
        "HOST_CXXFLAGS",
        "CRATE_CC_NO_DEFAULTS",
        "PATH",
    ]
    .into_iter()
    .map(String::from)
    .chain([format!("CXX_{target_us}"), format!("CXXFLAGS_{target_us}")])
    {
        h.update(var.as_bytes());
        h.update(b"=");
        h.update(
            std::env::var_os(&var)
                .unwrap_or_default()
                .as_encoded_bytes(),
        );
        h.update(b"\0");
    }
    let cxx = std::env::var_os("CXX").map_or_else(|| PathBuf::from("c++"), PathBuf::from);
    h.update(binary_identity(&cxx).as_bytes());
    h.finalize().to_hex()[..16].to_string()
}

fn compiler() -> PkResult<(PathBuf, Vec<OsString>)> {
    let root = cache_root()?;
    let memo = root.join(format!("compiler-{}.txt", compiler_fingerprint()));
    if let Ok(text) = std::fs::read_to_string(&memo) {
        let mut lines = text.lines();
        if let Some(path) = lines.next().filter(|p| !p.is_empty()) {
            return Ok((PathBuf::from(path), lines.map(OsString::from).collect()));
        }
    }
    let (path, args) = probe_compiler()?;
    // Remember it; a failure to write only costs the next process a probe.
    let mut text = format!("{}\n", path.display());
    for a in &args {
        text.push_str(&a.to_string_lossy());
        text.push('\n');
    }
    let dir = memo.parent().unwrap_or(Path::new("."));
    if let Ok(mut tmp) = tempfile::Builder::new().suffix(".tmp").tempfile_in(dir) {
        if std::io::Write::write_all(&mut tmp, text.as_bytes()).is_ok() {
            let _ = tmp.persist(&memo);
        }
    }
    Ok((path, args))
}

fn probe_compiler() -> PkResult<(PathBuf, Vec<OsString>)> {
    let target = env!("PK_TARGET");
    let tool = cc::Build::new()
        .cpp(true)
        .target(target)
        .host(target)
        .opt_level(3)
        .debug(false)
        .cargo_metadata(false)
        .warnings(false)
        .try_get_compiler()
        .map_err(|e| {
            PkError::Environment(format!(
                "no C++ compiler found ({e}); install g++ or set CXX"
            ))
        })?;
    let path = tool.path().to_path_buf();
    let args = tool.args().to_vec();
    Ok((path, args))
}

/// Path + size + mtime of the resolved compiler binary: changes when it is upgraded,
/// costs a `stat` instead of running `--version` in every process.
fn binary_identity(p: &Path) -> String {
    let resolved = which(p).unwrap_or_else(|| p.to_path_buf());
    let real = std::fs::canonicalize(&resolved).unwrap_or(resolved);
    let meta = std::fs::metadata(&real).ok();
    let (len, mtime) = meta
        .map(|m| {
            (
                m.len(),
                m.modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs()),
            )
        })
        .unwrap_or((0, 0));
    format!("{}:{len}:{mtime}", real.display())
}

static TOOLCHAIN: OnceLock<Result<Toolchain, String>> = OnceLock::new();

pub fn get() -> PkResult<&'static Toolchain> {
    TOOLCHAIN
        .get_or_init(|| probe().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| PkError::Environment(e.clone()))
}

/// Host kernels are built for this machine's CPU, as Numba's are: its
/// vector units halve a memory-bound reduction's instructions (pykokkos.numba's
/// `extremes` on 4M doubles: 1.55 -> 1.2 ms). Every product stays rounded, as
/// NumPy's and the CUDA build's (`--fmad=false`) are: g++ contracts a*b+c into
/// an FMA in any C++ mode once the CPU has one (`-ffp-contract=off`), and its
/// vectorizer fuses complex products regardless (no FMA in the target). A
/// kernel built for one CPU may not run on another: the CPU enters the key.
fn host_target(h: &mut blake3::Hasher) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["-ffp-contract=off".into()];
    // Only on x86-64, where the FMA extensions can be switched off: an Arm
    // CPU's fused forms are part of its base instruction set.
    let x86 = cfg!(target_arch = "x86_64");
    let march = match &crate::config::get().march {
        Some(m) => m.as_str(),
        None if x86 => "native",
        None => "none",
    };
    if march != "none" && !march.is_empty() {
        args.push(format!("-march={march}").into());
        if x86 {
            // Not even the vectorizer may fuse: g++ 12 turns Kokkos::complex's
            // product into vfmaddsub under -ffp-contract=off, and AVX-512F's
            // own FMA forms stay on after -mno-fma. AVX2 width is kept.
            args.extend(["-mno-fma".into(), "-mno-avx512f".into()]);
        }
        if march == "native" {
            h.update(cpu_identity().as_bytes());
        }
    }
    args
}

/// The flags host kernels are built with for their CPU (`host_target`'s), as
/// one string: what another build takes to compute the same results
/// (`pk.config()["host_target"]`; benches/bench_examinimd.py builds the C++
/// ExaMiniMD with them).
pub fn host_target_flags() -> String {
    let args = host_target(&mut blake3::Hasher::new());
    let args: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
    args.join(" ")
}

/// The CPU's model and feature flags (Linux; empty elsewhere).
fn cpu_identity() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let first = |key: &str| {
        info.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(key))
            .unwrap_or_default()
            .to_string()
    };
    format!("{}\n{}", first("model name"), first("flags"))
}

fn probe() -> PkResult<Toolchain> {
    let kokkos = find_kokkos()?;
    let mut h = blake3::Hasher::new();
    let (compiler, mut args, cuda) = if kokkos.has_cuda {
        let (wrapper, cuda) = cuda_toolchain(&kokkos.prefix)?;
        let mut args: Vec<OsString> = Vec::new();
        for a in [
            "-std=c++17",
            "-O3",
            &format!("-arch={}", cuda.arch),
            "--expt-extended-lambda",
            "--expt-relaxed-constexpr",
            // No fused multiply-add contraction: host kernels (g++ in ISO C++
            // mode) and NumPy round every product, and fusion puts a product
            // and the sum that used it in one expression. Contracting them
            // would make fused results differ from eager ones in the last bit.
            "--fmad=false",
            "-Xcompiler",
            "-fPIC,-fopenmp",
        ] {
            args.push(a.into());
        }
        // nvcc_wrapper's host compiler is part of what builds the kernels.
        let host = std::env::var_os("NVCC_WRAPPER_DEFAULT_COMPILER")
            .map_or_else(|| PathBuf::from("g++"), PathBuf::from);
        h.update(b"cuda\0");
        h.update(binary_identity(&cuda.nvcc).as_bytes());
        h.update(binary_identity(&host).as_bytes());
        h.update(cuda.arch.as_bytes());
        (wrapper, args, Some(cuda))
    } else {
        let (compiler, mut args) = compiler()?;
        for a in ["-std=c++17", "-fopenmp", "-fPIC", "-O3"] {
            args.push(a.into());
        }
        args.extend(host_target(&mut h));
        (compiler, args, None)
    };
    args.push(format!("-I{}", kokkos.prefix.join("include").display()).into());
    let cache = cache_root()?;
    h.update(binary_identity(&compiler).as_bytes());
    for a in &args {
        h.update(a.to_string_lossy().as_bytes());
        h.update(b"\0");
    }
    h.update(kokkos.config.as_bytes());
    h.update(kokkos.config_digest.as_bytes());
    // Generated code and its ABI belong to this version of the package.
    h.update(concat!("pykokkos-fuse ", env!("CARGO_PKG_VERSION")).as_bytes());
    h.update(kokkos.prefix.to_string_lossy().as_bytes());
    h.update(PRELUDE.as_bytes());
    let identity = h.finalize().to_hex()[..16].to_string();
    let include_dir = cache.join(format!("pch-{identity}"));
    let use_pch = cuda.is_none();
    Ok(Toolchain {
        compiler,
        args,
        kokkos,
        cuda,
        use_pch,
        cache,
        identity,
        include_dir,
    })
}

impl Toolchain {
    /// A compiler command with our flags, ready for inputs and outputs.
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.compiler);
        c.args(&self.args);
        c
    }

    pub fn link_args(&self) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec![
            "-shared".into(),
            format!("-L{}", self.kokkos.libdir.display()).into(),
            format!("-Wl,-rpath,{}", self.kokkos.libdir.display()).into(),
            "-lkokkoscore".into(),
        ];
        if let Some(cuda) = &self.cuda {
            // One CUDA runtime per process: the kernels share libkokkoscore's libcudart.so
            // instead of each carrying a static copy (nvcc's default).
            v.push("-cudart".into());
            v.push("shared".into());
            if let Some(dir) = &cuda.libdir {
                v.push(format!("-L{}", dir.display()).into());
                v.push(format!("-Wl,-rpath,{}", dir.display()).into());
            }
        }
        v
    }
}
