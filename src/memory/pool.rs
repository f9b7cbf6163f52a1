//! GPU memory for mirrors and launch temporaries, kept for reuse instead of
//! freed. `cudaFree` waits until the whole device is idle, so a program that
//! drops a View each step (a sort's scratch, a vector that `resize` replaced)
//! drained the GPU's queue at every drop and then left the GPU idle while
//! Python reached its next launch: on an H200, ExaMiniMD's binning spent
//! about 2 ms of host time a rebuild there, a third of its loop.
//!
//! Reuse needs no wait: every kernel, copy and memset of the runtime goes to
//! the legacy default stream (exec/device_entry.rs, as Kokkos 3.4's do), so
//! whatever is done with a block handed out again runs after the work that
//! used it before. Blocks are rounded up to a size class and kept per class,
//! up to `CAP` bytes in all; past it, or with `PK_CUDA_POOL=0`, a block is
//! freed as before. An allocation that fails frees what the pool keeps and
//! tries once more, so the pool never makes a program run out of memory.
use crate::kokkos::CudaFns;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::os::raw::c_void;

/// The most bytes the pool keeps unused.
const CAP: usize = 2 << 30;

/// Blocks handed out (address -> class) and blocks kept (class -> addresses).
#[derive(Default)]
pub struct Pool {
    live: HashMap<usize, usize>,
    kept: HashMap<usize, Vec<usize>>,
    kept_bytes: usize,
}

/// The size a request of `n` bytes is served with: 512-byte steps up to 1 MiB,
/// then steps of an eighth of the power of two below (at most 12.5% unused),
/// so that sizes that differ a little from step to step (a View sized by the
/// atoms a step holds) share blocks.
pub fn class(n: usize) -> usize {
    let n = n.max(1);
    if n <= 1 << 20 {
        return n.div_ceil(512) * 512;
    }
    let step = (1usize << (usize::BITS - 1 - n.leading_zeros())) / 8;
    n.div_ceil(step) * step
}

impl Pool {
    /// A kept block of `class` bytes, now handed out.
    pub fn take(&mut self, class: usize) -> Option<usize> {
        let p = self.kept.get_mut(&class)?.pop()?;
        self.kept_bytes -= class;
        self.live.insert(p, class);
        Some(p)
    }

    /// A block of `class` bytes that the caller just allocated, handed out.
    pub fn handed(&mut self, p: usize, class: usize) {
        self.live.insert(p, class);
    }

    /// The block at `p` is given back: true if the pool keeps it; false if
    /// the caller must free it (not the pool's, or the pool is full).
    pub fn give(&mut self, p: usize) -> bool {
        let Some(class) = self.live.remove(&p) else {
            return false;
        };
        if self.kept_bytes + class > CAP {
            return false;
        }
        self.kept_bytes += class;
        self.kept.entry(class).or_default().push(p);
        true
    }

    /// Every kept block, no longer kept (for the caller to free).
    pub fn drain(&mut self) -> Vec<usize> {
        self.kept_bytes = 0;
        self.kept.drain().flat_map(|(_, v)| v).collect()
    }

    pub fn kept_bytes(&self) -> usize {
        self.kept_bytes
    }
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

fn enabled() -> bool {
    crate::config::get().cuda_pool
}

/// `n` bytes of GPU memory (null when the GPU has none left).
pub fn alloc(c: &CudaFns, n: usize) -> *mut u8 {
    if !enabled() {
        // SAFETY: `pk_cuda_malloc(size_t)` (cudaMalloc) takes no pointer.
        return unsafe { (c.malloc)(n) } as *mut u8;
    }
    let k = class(n);
    if let Some(p) = POOL.lock().get_or_insert_with(Pool::default).take(k) {
        return p as *mut u8;
    }
    // SAFETY: as above.
    let mut p = unsafe { (c.malloc)(k) } as *mut u8;
    if p.is_null() {
        let kept = POOL.lock().as_mut().map(Pool::drain).unwrap_or_default();
        if !kept.is_empty() {
            for b in kept {
                // SAFETY: each kept block came from `c.malloc` and was given back (no owner
                // uses it); `drain` removed it from the pool, so it is freed once here.
                unsafe { (c.free)(b as *mut c_void) };
            }
            // SAFETY: as above.
            p = unsafe { (c.malloc)(k) } as *mut u8;
        }
    }
    if !p.is_null() {
        POOL.lock()
            .get_or_insert_with(Pool::default)
            .handed(p as usize, k);
    }
    p
}

/// Gives back a block `alloc` handed out; its owner no longer uses it (kernels
/// already queued that use it may still run: see the module's comment).
///
/// # Safety
/// `p` came from `alloc` (or from `c.malloc`) and is given back once.
pub unsafe fn release(c: &CudaFns, p: *mut u8) {
    if p.is_null() {
        return;
    }
    let kept = POOL
        .lock()
        .as_mut()
        .is_some_and(|pool| pool.give(p as usize));
    if !kept {
        // SAFETY: the caller's contract: a live block of `c.malloc`, freed once.
        unsafe { (c.free)(p as *mut c_void) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_a_little() {
        assert_eq!(class(0), 512);
        assert_eq!(class(1), 512);
        assert_eq!(class(513), 1024);
        assert_eq!(class(1 << 20), 1 << 20);
        // Past 1 MiB: eighths of the power of two below.
        assert_eq!(class((1 << 20) + 1), (1 << 20) + (1 << 17));
        assert_eq!(class(3_000_000), 3_145_728);
        for n in [1usize, 700, 5 << 20, 123_456_789] {
            let k = class(n);
            assert!(k >= n && (k - n) * 8 <= n.max(512 * 8), "{n} -> {k}");
        }
    }

    #[test]
    fn a_given_block_serves_the_next_request_of_its_class() {
        let mut pool = Pool::default();
        pool.handed(0x1000, 4096);
        assert!(pool.give(0x1000));
        assert_eq!(pool.kept_bytes(), 4096);
        assert_eq!(pool.take(8192), None);
        assert_eq!(pool.take(4096), Some(0x1000));
        assert_eq!(pool.kept_bytes(), 0);
        assert_eq!(pool.take(4096), None);
        // Handed out again: giving it back works once more, a second give does not.
        assert!(pool.give(0x1000));
        assert!(!pool.give(0x1000));
    }

    #[test]
    fn blocks_the_pool_never_handed_out_and_blocks_past_the_cap_are_freed() {
        let mut pool = Pool::default();
        assert!(!pool.give(0x2000));
        pool.handed(0x10, CAP);
        pool.handed(0x20, 512);
        assert!(pool.give(0x10));
        assert!(!pool.give(0x20), "over the cap: the caller frees it");
        let mut all = pool.drain();
        all.sort();
        assert_eq!(all, vec![0x10]);
        assert_eq!(pool.kept_bytes(), 0);
        assert_eq!(pool.take(CAP), None);
    }
}
