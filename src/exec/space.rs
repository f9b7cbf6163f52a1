//! The default execution space (what a launch without an explicit space uses).
use crate::compile::toolchain;
use crate::errors::{PkError, PkResult};
use crate::types::Space;
use std::sync::atomic::{AtomicU8, Ordering};

static DEFAULT_SPACE: AtomicU8 = AtomicU8::new(1);

/// Space codes shared with the Python package: 0 Serial, 1 OpenMP, 2 Cuda, 3 Debug.
pub fn from_code(code: u8) -> Space {
    match code {
        0 => Space::Serial,
        2 => Space::Cuda,
        3 => Space::Debug,
        _ => Space::OpenMP,
    }
}

pub fn code(s: Space) -> u8 {
    match s {
        Space::Serial => 0,
        Space::OpenMP => 1,
        Space::Cuda => 2,
        Space::Debug => 3,
    }
}

pub fn default_space() -> Space {
    from_code(DEFAULT_SPACE.load(Ordering::Relaxed))
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
    DEFAULT_SPACE.store(code(s), Ordering::Relaxed);
    Ok(())
}
