//! Buffer exports of part of a mirrored allocation (mpi4py's message
//! buffers: a halo row of a large GPU View): only the exported bytes cross,
//! each way.
use super::alloc::{Alloc, NEWER, STALE};
use super::device::{cuda_err, d2h, h2d};
use crate::errors::PkResult;
use crate::kokkos as runtime;
use std::sync::atomic::Ordering;

impl Alloc {
    /// A buffer export of bytes `[lo, hi)` that may write them (mpi4py's
    /// message buffers: a halo row of a large GPU View). Where the device copy
    /// is newer only those bytes come over (where both agree, none), the
    /// device copy keeps its state, and `export_ended` sends them back: a row
    /// costs a row, not the View. Otherwise, as `host_sync`. True when the
    /// range was handled on its own.
    pub fn host_export(&self, lo: isize, hi: isize) -> PkResult<bool> {
        let d = self.dev.load(Ordering::Acquire);
        let state = self.dev_state.load(Ordering::Acquire);
        // A View as large as its allocation gains nothing from a range.
        let part = lo >= 0 && lo < hi && ((hi - lo) as usize) < self.bytes();
        let mirrored = !self.uvm && !d.is_null() && !self.is_device_only();
        if !mirrored || state == STALE || !part {
            self.host_sync()?;
            return Ok(false);
        }
        self.host_writes.fetch_add(1, Ordering::Relaxed);
        if state == NEWER {
            let c = runtime::cuda_loaded().expect("a device mirror implies CUDA");
            let n = (hi - lo) as usize;
            let rc = d2h(c, self.ptr()?.wrapping_offset(lo), d.wrapping_offset(lo), n);
            if rc != 0 {
                return Err(cuda_err("copying part of a view back from the GPU"));
            }
        }
        self.ranges.lock().push((lo, hi));
        Ok(true)
    }

    /// The export of `[lo, hi)` that `host_export` made ended: what the host
    /// holds there (a received message) goes to the device.
    pub fn export_ended(&self, lo: isize, hi: isize) -> PkResult<()> {
        let mut r = self.ranges.lock();
        let Some(k) = r.iter().position(|x| *x == (lo, hi)) else {
            return Ok(());
        };
        r.swap_remove(k);
        self.push_range(lo, hi)
    }

    /// Ranges still exported are the host's newest bytes: they go to the
    /// device, once, before anything copies the whole allocation either way
    /// or a kernel uses it (which may then write them on the device: the
    /// export's host bytes are not pushed over that again).
    pub(super) fn push_exports(&self) -> PkResult<()> {
        let r = std::mem::take(&mut *self.ranges.lock());
        r.into_iter()
            .try_for_each(|(lo, hi)| self.push_range(lo, hi))
    }

    fn push_range(&self, lo: isize, hi: isize) -> PkResult<()> {
        let d = self.dev.load(Ordering::Acquire);
        let c = runtime::cuda_loaded().expect("a device mirror implies CUDA");
        let rc = h2d(
            c,
            d.wrapping_offset(lo),
            self.ptr()?.wrapping_offset(lo),
            (hi - lo) as usize,
        );
        if rc != 0 {
            return Err(cuda_err("copying part of a view to the GPU"));
        }
        Ok(())
    }
}
