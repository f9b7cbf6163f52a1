//! Every `PK_*` variable the core reads, read once per process into one value.
//! A flush or a launch never looks at the environment: tests and tools that
//! want other settings start a process with them.
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `PK_FUSE=1` or `PK_FUSION=naive`: the lazy runtime is on at import.
    pub lazy: bool,
    /// `PK_FUSE_NOFUSE=1`: lazy, but one kernel per launch.
    pub no_fuse: bool,
    /// `PK_FUSE_EXPLAIN=1`: print every flush's report on stderr.
    pub explain: bool,
    /// `PK_FUSION_RULES=<dir>`: rule files replacing the built-in ones.
    pub rules_dir: Option<PathBuf>,
    /// `PK_FUSION_DISABLE=a,b`: rules (and passes, e.g. `dead_temporaries`) off by name.
    pub disabled: Vec<String>,
    /// `PK_VERIFY=1`: check every flush plan (always on in debug builds).
    pub verify: bool,
    /// `PK_NUM_THREADS`: threads Kokkos starts with (-1: its default). Under
    /// MPI with several ranks on a node and no thread count set, the node's
    /// cores split evenly among them.
    pub num_threads: i32,
    /// This MPI rank's index among the ranks of its node (from the launcher's
    /// environment: MPICH, Open MPI, MVAPICH, Slurm), or -1: it picks the GPU.
    pub local_rank: i32,
    /// `PK_LOG=<filter>`: tracing spans of each stage on stderr.
    pub log: Option<String>,
    /// `PK_CACHE_DIR`: kernel cache and Kokkos install root.
    pub cache_dir: Option<OsString>,
    /// `PK_KOKKOS_ROOT`: an existing Kokkos install.
    pub kokkos_root: Option<PathBuf>,
    /// `PK_KOKKOS_CUDA`: "1" wants the CUDA build, "0" refuses it, unset: when nvcc exists.
    pub kokkos_cuda: Option<String>,
    /// `PK_CUDA_ARCH`: the GPU architecture kernels are compiled for.
    pub cuda_arch: Option<String>,
    /// `PK_BOUNDS_CHECK=1`: host kernels check every view index (IndexError
    /// instead of memory corruption).
    pub bounds_check: bool,
    /// `PK_NVRTC=0`: every CUDA kernel goes through nvcc and Kokkos, also the
    /// 1-D fors and sums NVRTC would compile (codegen/device.rs).
    pub nvrtc: bool,
    /// `PK_CUDA_POOL=0`: GPU memory a View or launch no longer needs is freed
    /// at once (`cudaFree`, which waits for the device) instead of kept for
    /// reuse (memory/pool.rs).
    pub cuda_pool: bool,
    /// `PK_MARCH=<cpu>`: what host kernels are built for (`-march=`); unset:
    /// `native` on x86-64, the generic target elsewhere; `none`: generic.
    pub march: Option<String>,
    /// `PK_FAILPOINT=fused_build|fused_run`: for tests of failure handling
    /// only, a fused kernel fails to build, or fails after it ran.
    pub failpoint: Option<String>,
}

const LOCAL_RANK: &[&str] = &[
    "MPI_LOCALRANKID",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "MV2_COMM_WORLD_LOCAL_RANK",
    "SLURM_LOCALID",
];
const LOCAL_SIZE: &[&str] = &[
    "MPI_LOCALNRANKS",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "MV2_COMM_WORLD_LOCAL_SIZE",
];

fn first_int(names: &[&str]) -> Option<i32> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok()?.trim().parse().ok())
}

/// Host threads per rank when several MPI ranks share a node and nobody set
/// a count: the cores divided among them (never fewer than one).
fn split_threads(omp_set: bool) -> Option<i32> {
    let ranks = first_int(LOCAL_SIZE)?;
    if omp_set || ranks <= 1 {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as i32);
    Some((cores / ranks).max(1))
}

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

impl Config {
    /// The configuration the environment of this process gives.
    pub fn from_env() -> Config {
        let text = |n: &str| std::env::var(n).ok();
        Config {
            lazy: flag("PK_FUSE") || text("PK_FUSION").is_some_and(|v| v == "naive"),
            no_fuse: flag("PK_FUSE_NOFUSE"),
            explain: flag("PK_FUSE_EXPLAIN"),
            rules_dir: std::env::var_os("PK_FUSION_RULES").map(PathBuf::from),
            disabled: text("PK_FUSION_DISABLE")
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            verify: flag("PK_VERIFY") || cfg!(debug_assertions),
            num_threads: text("PK_NUM_THREADS")
                .and_then(|v| v.parse().ok())
                .or_else(|| split_threads(text("OMP_NUM_THREADS").is_some()))
                .unwrap_or(-1),
            local_rank: first_int(LOCAL_RANK).unwrap_or(-1),
            log: text("PK_LOG"),
            cache_dir: std::env::var_os("PK_CACHE_DIR"),
            kokkos_root: std::env::var_os("PK_KOKKOS_ROOT").map(PathBuf::from),
            kokkos_cuda: text("PK_KOKKOS_CUDA"),
            cuda_arch: text("PK_CUDA_ARCH"),
            failpoint: text("PK_FAILPOINT"),
            bounds_check: flag("PK_BOUNDS_CHECK"),
            nvrtc: text("PK_NVRTC").as_deref() != Some("0"),
            cuda_pool: text("PK_CUDA_POOL").as_deref() != Some("0"),
            march: text("PK_MARCH"),
        }
    }

    /// Whether a rule or pass is switched off by name.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The process's configuration (read at first use).
pub fn get() -> &'static Config {
    CONFIG.get_or_init(Config::from_env)
}
