//! The C++ toolchain (found by the `cc` crate) and the Kokkos install, probed
//! once per process. Their identity goes into every cache key.
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
    pub has_cuda: bool,
}

#[derive(Debug)]
pub struct Toolchain {
    pub compiler: PathBuf,
    pub args: Vec<OsString>,
    pub kokkos: Kokkos,
    pub cache: PathBuf,
    /// Hash of compiler identity, flags, Kokkos config and prelude.
    pub identity: String,
    /// Folder holding pk_prelude.hpp and its precompiled header.
    pub include_dir: PathBuf,
}

pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("PK_CACHE_DIR") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("pykokkos-fuse")
}

fn find_kokkos() -> PkResult<Kokkos> {
    let explicit = std::env::var_os("PK_KOKKOS_ROOT").map(PathBuf::from);
    let prefix = match explicit {
        Some(p) => p,
        None => {
            let want_cuda = std::env::var("PK_KOKKOS_CUDA")
                .map(|v| v == "1")
                .unwrap_or(false);
            cache_root().join(format!(
                "kokkos-{KOKKOS_VERSION}-{}",
                if want_cuda { "cuda" } else { "host" }
            ))
        }
    };
    let cfg = prefix.join("include").join("KokkosCore_config.h");
    let text = std::fs::read_to_string(&cfg).map_err(|_| {
        PkError::Environment(format!(
            "Kokkos is not installed at {}: run `make setup` in the pykokkos-fuse checkout \
             (or `python -m pykokkos.kokkos_setup`), or set PK_KOKKOS_ROOT to an existing Kokkos install",
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
        has_cuda,
    })
}

fn compiler() -> PkResult<(PathBuf, Vec<OsString>)> {
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

fn which(p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(p))
            .find(|c| c.is_file())
    })
}

static TOOLCHAIN: OnceLock<Result<Toolchain, String>> = OnceLock::new();

pub fn get() -> PkResult<&'static Toolchain> {
    TOOLCHAIN
        .get_or_init(|| probe().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| PkError::Environment(e.clone()))
}

fn probe() -> PkResult<Toolchain> {
    let kokkos = find_kokkos()?;
    let (compiler, mut args) = compiler()?;
    for a in ["-std=c++17", "-fopenmp", "-fPIC", "-O3"] {
        args.push(a.into());
    }
    args.push(format!("-I{}", kokkos.prefix.join("include").display()).into());
    let cache = cache_root();
    let mut h = blake3::Hasher::new();
    h.update(binary_identity(&compiler).as_bytes());
    for a in &args {
        h.update(a.to_string_lossy().as_bytes());
        h.update(b"\0");
    }
    h.update(kokkos.config.as_bytes());
    h.update(kokkos.prefix.to_string_lossy().as_bytes());
    h.update(PRELUDE.as_bytes());
    let identity = h.finalize().to_hex()[..16].to_string();
    let include_dir = cache.join(format!("pch-{identity}"));
    Ok(Toolchain {
        compiler,
        args,
        kokkos,
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
        vec![
            "-shared".into(),
            format!("-L{}", self.kokkos.libdir.display()).into(),
            format!("-Wl,-rpath,{}", self.kokkos.libdir.display()).into(),
            "-lkokkoscore".into(),
        ]
    }
}
