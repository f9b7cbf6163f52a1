//! The CUDA side of the toolchain: the GPU architecture kernels target and
//! nvcc through Kokkos' nvcc_wrapper.
use crate::errors::{PkError, PkResult};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a CUDA-enabled Kokkos adds to the toolchain.
#[derive(Debug)]
pub struct Cuda {
    /// e.g. "sm_90": from PK_CUDA_ARCH or the first GPU nvidia-smi lists.
    pub arch: String,
    /// The nvcc that nvcc_wrapper runs ($CUDA_ROOT/bin/nvcc, else the one on PATH).
    pub nvcc: PathBuf,
    /// The CUDA runtime's library folder (beside nvcc), for the kernels' rpath.
    pub libdir: Option<PathBuf>,
}

/// "sm_90" from "sm_90", "90", "9.0" or "compute_90"; None for anything else.
pub fn normalize_arch(raw: &str) -> Option<String> {
    let t = raw.trim();
    let digits = if let Some(r) = t.strip_prefix("sm_").or_else(|| t.strip_prefix("compute_")) {
        r.to_string()
    } else if let Some((major, minor)) = t.split_once('.') {
        format!("{}{}", major.trim(), minor.trim())
    } else {
        t.to_string()
    };
    let (num, suffix) = match digits.strip_suffix('a') {
        Some(n) => (n, "a"),
        None => (digits.as_str(), ""),
    };
    if num.len() >= 2 && num.chars().all(|c| c.is_ascii_digit()) {
        Some(format!("sm_{num}{suffix}"))
    } else {
        None
    }
}

/// The GPU architecture kernels are compiled for: PK_CUDA_ARCH, else the first GPU's
/// compute capability as nvidia-smi reports it.
pub(super) fn cuda_arch() -> PkResult<String> {
    if let Some(v) = &crate::config::get().cuda_arch {
        return normalize_arch(v).ok_or_else(|| {
            PkError::Environment(format!(
                "PK_CUDA_ARCH={v} is not a CUDA architecture: use e.g. sm_90, 90 or 9.0"
            ))
        });
    }
    let out = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).to_string(),
        Ok(o) => {
            return Err(PkError::Environment(format!(
                "Kokkos is built with CUDA but `nvidia-smi --query-gpu=compute_cap` failed ({}): \
                 set PK_CUDA_ARCH (e.g. sm_90) or use a host-only Kokkos (PK_KOKKOS_CUDA unset)",
                String::from_utf8_lossy(&o.stderr).trim()
            )))
        }
        Err(e) => {
            return Err(PkError::Environment(format!(
                "Kokkos is built with CUDA but nvidia-smi could not run ({e}): set PK_CUDA_ARCH \
                 (e.g. sm_90) or use a host-only Kokkos (PK_KOKKOS_CUDA unset)"
            )))
        }
    };
    let first = text.lines().next().unwrap_or("").to_string();
    normalize_arch(&first).ok_or_else(|| {
        PkError::Environment(format!(
            "nvidia-smi reported no usable compute capability ({first:?}): set PK_CUDA_ARCH (e.g. sm_90)"
        ))
    })
}

/// nvcc_wrapper and the facts about CUDA that go into the toolchain identity.
/// nvcc_wrapper of the Kokkos install at `prefix`, and the CUDA facts kernels need.
pub(super) fn cuda_toolchain(prefix: &Path) -> PkResult<(PathBuf, Cuda)> {
    let wrapper = prefix.join("bin").join("nvcc_wrapper");
    if !wrapper.is_file() {
        return Err(PkError::Environment(format!(
            "Kokkos at {} is built with CUDA but has no bin/nvcc_wrapper",
            prefix.display()
        )));
    }
    // nvcc_wrapper runs $CUDA_ROOT/bin/nvcc when CUDA_ROOT is set, else `nvcc` from PATH.
    let nvcc = match std::env::var_os("CUDA_ROOT") {
        Some(root) => PathBuf::from(root).join("bin").join("nvcc"),
        None => which(Path::new("nvcc")).ok_or_else(|| {
            PkError::Environment(
                "Kokkos is built with CUDA but nvcc is not on PATH (nor CUDA_ROOT set)".into(),
            )
        })?,
    };
    let nvcc = std::fs::canonicalize(&nvcc).unwrap_or(nvcc);
    let libdir = nvcc.parent().and_then(|bin| {
        let root = bin.parent()?;
        [
            root.join("lib64"),
            root.join("lib"),
            root.join("targets/x86_64-linux/lib"),
        ]
        .into_iter()
        .find(|d| d.join("libcudart.so").exists())
    });
    Ok((
        wrapper,
        Cuda {
            arch: cuda_arch()?,
            nvcc,
            libdir,
        },
    ))
}

/// The file `p` names: itself when it has a folder part, else its match on PATH.
pub(super) fn which(p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(p))
            .find(|c| c.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::normalize_arch;

    #[test]
    fn arch_spellings() {
        for raw in ["sm_90", "90", "9.0", "9.0\n", "compute_90"] {
            assert_eq!(normalize_arch(raw).as_deref(), Some("sm_90"), "{raw:?}");
        }
        assert_eq!(normalize_arch("sm_90a").as_deref(), Some("sm_90a"));
        assert_eq!(normalize_arch("8.6").as_deref(), Some("sm_86"));
        assert_eq!(normalize_arch("12.0").as_deref(), Some("sm_120"));
        for bad in ["", "hopper", "sm_", "9", "N/A"] {
            assert_eq!(normalize_arch(bad), None, "{bad:?}");
        }
    }
}
