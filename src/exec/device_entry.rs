//! Launching an NVRTC kernel (codegen/device.rs) with the entry-point
//! arguments a Kokkos library would get: the views, scalars and bounds go
//! into the one `pk_args` parameter, a reduction's partials into device scratch
//! of its own. Launches go to the legacy default stream, as Kokkos 3.4's
//! default instance's do, so they stay ordered with Kokkos' kernels and
//! copies, and its fences cover them.
use super::args::PkScalarArg;
use super::device_bytes::{total_back, view_bytes};
use crate::codegen::device::{args_bytes, DeviceKind, DeviceParts, Total, FOR_BLOCK, MAX_RANK};
use crate::codegen::device::{
    scan_blocks, REDUCE_BLOCK, REDUCE_MAX_BLOCKS, SCAN_BLOCK, SCAN_MAX_BLOCKS,
};
use crate::compile::cudadrv::{self, CuPtr};
use crate::compile::nvrtc::DeviceFn;
use crate::memory::view::PkViewArg;
use parking_lot::{Mutex, MutexGuard};
use std::ffi::c_void;
use std::sync::OnceLock;

pub struct DeviceEntry {
    pub(super) func: DeviceFn,
    kind: DeviceKind,
    views: usize,
    scalars: usize,
    rank: usize,
    /// The GPU whose primary context (Kokkos') the function was loaded in.
    device: i32,
    /// A reduction's device scratch: the blocks' partials, the finished-blocks
    /// counter (left at zero by the last block), the totals. Allocated at
    /// the first launch; the lock keeps two launches from sharing it.
    scratch: Mutex<Option<CuPtr>>,
    /// A team kernel's most threads per block and static shared bytes.
    limits: OnceLock<(i32, i32)>,
    /// A team kernel's level-1 scratch (global memory, a slice per block),
    /// the largest last. A smaller one is kept: kernels queued before it
    /// grew may still use it.
    level1: Mutex<Vec<(CuPtr, usize)>>,
}

/// Shared memory a block may take without opting in (every CUDA GPU).
const SHARED_BYTES: i64 = 48 * 1024;

/// Bytes of one total: 16 bound every scalar type, a record reducer's value
/// (MinMaxLoc: two values and two locations) takes 8 a field, in 16s.
fn total_bytes(totals: &[Total]) -> usize {
    totals
        .iter()
        .map(|t| {
            (8 * t.reducer.map_or(0, |r| r.fields().len()))
                .next_multiple_of(16)
                .max(16)
        })
        .sum()
}

/// The blocks' partials of a reduction.
fn partial_bytes(totals: &[Total]) -> usize {
    REDUCE_MAX_BLOCKS as usize * total_bytes(totals)
}

/// A scan's scratch: a total and a flag word per segment, then the ticket
/// and finished-block counters (16 bytes), then the total (16 bytes).
const SCAN_AGG: usize = SCAN_MAX_BLOCKS as usize * 16;
const SCAN_FLAGS: usize = SCAN_MAX_BLOCKS as usize * 4;

impl DeviceEntry {
    pub fn new(func: DeviceFn, parts: &DeviceParts, device: i32) -> DeviceEntry {
        DeviceEntry {
            func,
            kind: parts.kind.clone(),
            views: parts.views,
            scalars: parts.scalars,
            rank: parts.rank,
            device,
            scratch: Mutex::new(None),
            limits: OnceLock::new(),
            level1: Mutex::new(Vec::new()),
        }
    }

    /// (most blocks, vector length, team size, level-0 scratch bytes) of a
    /// TeamPolicy launch; `hi` = [league, team size (<= 0: AUTO), vector
    /// length, scratch bytes per team and per thread at levels 0 and 1]. What
    /// Kokkos aborts the process for is an error here.
    fn team_geometry(
        &self,
        drv: &cudadrv::Driver,
        hi: &[i64],
    ) -> Result<(u64, u32, u32, u32), String> {
        let at = |k: usize| hi.get(k).copied().unwrap_or(0);
        let (league, vector) = (at(0).max(0) as u64, at(2));
        if !(1..=32).contains(&vector) || vector & (vector - 1) != 0 {
            return Err(format!(
                "pk.TeamPolicy: the vector length must be a power of two up to 32 on Cuda, got {vector}"
            ));
        }
        let (most, fixed) = match self.limits.get() {
            Some(l) => *l,
            None => {
                let (mut most, mut fixed) = (0, 0);
                let f = self.func.0;
                drv.check(
                    // SAFETY: cuFuncGetAttribute(int*, CUfunction_attribute,
                    // CUfunction), attribute 0 (MAX_THREADS_PER_BLOCK): writes one
                    // int into `most`, a live local; `f` is the entry's function,
                    // its module never unloaded; `call` made the context current
                    // on this thread before calling team_geometry.
                    unsafe { (drv.func_get_attribute)(&mut most, 0, f) },
                    "cuFuncGetAttribute",
                )?;
                drv.check(
                    // SAFETY: as above, attribute 1 (SHARED_SIZE_BYTES) into `fixed`.
                    unsafe { (drv.func_get_attribute)(&mut fixed, 1, f) },
                    "cuFuncGetAttribute",
                )?;
                *self.limits.get_or_init(|| (most, fixed))
            }
        };
        let most_team = (most as i64 / vector).max(1);
        let team = match at(1) {
            t if t > 0 => t,
            _ => (256 / vector).min(most_team).max(1), // Kokkos::AUTO
        };
        if team > most_team {
            return Err(format!(
                "pk.TeamPolicy asks for teams of {team} threads, but this kernel can use at most {most_team} in this execution space"
            ));
        }
        let shmem = at(3).max(0) + at(4).max(0) * team;
        if shmem > SHARED_BYTES - fixed as i64 {
            return Err(format!(
                "pk.TeamPolicy asks for {shmem} bytes of level-0 scratch per team; at most {} fit in a Cuda block's shared memory beside this kernel's own",
                SHARED_BYTES - fixed as i64
            ));
        }
        let blocks = match self.kind {
            DeviceKind::For => league.min(i32::MAX as u64),
            DeviceKind::Reduce(_) | DeviceKind::Scan(_) => {
                league.clamp(1, REDUCE_MAX_BLOCKS as u64)
            }
        };
        Ok((blocks, vector as u32, team as u32, shmem as u32))
    }

    /// Level-1 scratch for `blocks` teams of `size` threads (`hi[5]` bytes a
    /// team, `hi[6]` a thread, each block's slice 16-aligned); 0 when none is
    /// asked for. Launches go to one stream, so blocks of successive kernels
    /// reuse it in turn.
    fn level1(
        &self,
        drv: &cudadrv::Driver,
        blocks: u64,
        hi: &[i64],
        size: u32,
    ) -> Result<CuPtr, String> {
        let at = |k: usize| hi.get(k).copied().unwrap_or(0).max(0) as usize;
        let bytes = blocks as usize * (at(5) + at(6) * size as usize).next_multiple_of(16);
        if bytes == 0 {
            return Ok(0);
        }
        let mut held = self.level1.lock();
        match held.last() {
            Some(&(p, n)) if n >= bytes => Ok(p),
            _ => {
                let mut p: CuPtr = 0;
                // SAFETY: cuMemAlloc_v2(CUdeviceptr*, size_t) writes `p`, a live
                // local; `bytes` > 0 (checked above); the context is current
                // (`call` made it so). The allocation is never freed (kept in
                // `level1`), so kernels still queued with a smaller one are safe.
                drv.check(unsafe { (drv.mem_alloc)(&mut p, bytes) }, "cuMemAlloc")?;
                held.push((p, bytes));
                Ok(p)
            }
        }
    }

    /// The kernel's device scratch of `bytes`, zeroed once, allocated at the
    /// first launch (the kernels leave their counters at zero). The guard
    /// is held until the totals are back: two launches never share it.
    fn scratch(
        &self,
        drv: &cudadrv::Driver,
        bytes: usize,
    ) -> Result<(MutexGuard<'_, Option<CuPtr>>, CuPtr), String> {
        let mut scratch = self.scratch.lock();
        if let Some(p) = *scratch {
            return Ok((scratch, p));
        }
        let mut p: CuPtr = 0;
        // SAFETY: cuMemAlloc_v2(CUdeviceptr*, size_t) writes `p`, a live local;
        // `bytes` > 0 (its callers add fixed 16- and 32-byte parts); the context
        // is current (`call`). The scratch is never freed.
        drv.check(unsafe { (drv.mem_alloc)(&mut p, bytes) }, "cuMemAlloc")?;
        // SAFETY: cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t) over exactly
        // the `bytes` just allocated at `p`; device memory only.
        drv.check(unsafe { (drv.memset_d8)(p, 0, bytes) }, "cuMemsetD8")?;
        *scratch = Some(p);
        Ok((scratch, p))
    }

    /// Runs the kernel over the range `lo..hi` (one pair per dimension); a
    /// reduction writes its totals into `result` (16 bytes each), as the
    /// Kokkos entry point does.
    pub fn call(
        &self,
        views: &[PkViewArg],
        scalars: &[PkScalarArg],
        lo: &[i64],
        hi: &[i64],
        result: &mut [u64],
    ) -> Result<(), String> {
        if views.len() != self.views || scalars.len() != self.scalars {
            return Err(format!(
                "got {} views and {} scalars for a kernel of {} and {}",
                views.len(),
                scalars.len(),
                self.views,
                self.scalars
            ));
        }
        if lo.len() < self.rank || hi.len() < self.rank {
            return Err(format!(
                "a rank-{} range got {} bounds",
                self.rank,
                lo.len().min(hi.len())
            ));
        }
        // The work items; none: a for has nothing to do, a reduction still
        // runs (on one block) to write its identities, as Kokkos' does.
        let n = (0..self.rank).try_fold(1i64, |n, d| n.checked_mul((hi[d] - lo[d]).max(0)));
        let Some(n) = n else {
            return Err("the range has more than 2^63 work items".into());
        };
        let drv = cudadrv::driver().map_err(|e| e.to_string())?;
        // The driver API needs the context current on the launching thread;
        // Kokkos' runtime calls make it current only in threads that made one.
        // Made current even for an empty range: the caller then reads the
        // kernel's check records (device_records.rs) through the driver.
        if !CONTEXT_SET.get() {
            drv.ensure_context(self.device)?;
            CONTEXT_SET.set(true);
        }
        if n == 0 && self.kind == DeviceKind::For {
            return Ok(());
        }
        // Ranges: blocks of FOR_BLOCK or REDUCE_BLOCK threads; teams: blocks of
        // (vector length, team size) threads and their level-0 scratch.
        let team = match self.rank {
            0 => Some(self.team_geometry(drv, hi)?),
            _ => None,
        };
        // A team kernel finds its level-1 scratch at lo[7] (codegen team_head).
        let level1 = match team {
            Some((blocks, _, size, _)) => self.level1(drv, blocks, hi, size)?,
            None => 0,
        };
        // pk_args: views, scalars, lo[8], hi[8] (codegen/device.rs).
        let mut args = vec![0u8; args_bytes(self.views, self.scalars)];
        for (k, v) in views.iter().enumerate() {
            args[136 * k..136 * (k + 1)].copy_from_slice(view_bytes(v));
        }
        let at = self.views.max(1) * 136;
        for (j, s) in scalars.iter().enumerate() {
            args[at + 16 * j..at + 16 * (j + 1)].copy_from_slice(&s.bytes());
        }
        let at = at + self.scalars.max(1) * 16;
        for (k, v) in (0..MAX_RANK)
            .map(|k| lo.get(k))
            .chain((0..MAX_RANK).map(|k| hi.get(k)))
            .enumerate()
        {
            let v = match (k, v) {
                (7, _) if team.is_some() => level1 as i64,
                (_, v) => v.copied().unwrap_or(0),
            };
            args[at + 8 * k..at + 8 * (k + 1)].copy_from_slice(&v.to_ne_bytes());
        }
        // Each kernel parameter is passed by the address of its value.
        let a = args.as_mut_ptr() as *mut c_void;
        let launch = |grid: u64, block: u32, params: &mut [*mut c_void]| -> Result<(), String> {
            let (grid, (bx, by, shmem)) = match team {
                Some(t) => (t.0, (t.1, t.2, t.3)),
                None => (grid, (block, 1, 0)),
            };
            if grid == 0 {
                return Ok(());
            }
            // Launches a replay collected go first (exec/graph.rs).
            super::graph::drain()?;
            // SAFETY: cuLaunchKernel's 11 arguments as cuda.h declares them. The
            // function is live (module never unloaded) in the context `call`
            // made current. Grid: 1..=i32::MAX blocks (the callers clamp; 0
            // returned above); block and shared bytes: a range's fixed sizes,
            // or a team's as team_geometry checked them against the kernel's
            // limits. `params` holds one pointer per parameter of the generated
            // kernel, in order: pk_for(pk_args), pk_reduce(pk_args, pk_vt*,
            // unsigned*, char*), pk_scan(pk_args, pk_vt*, unsigned*, unsigned*,
            // char*) (device_kernels.rs, device_scan.rs). `a` points at `args`,
            // args_bytes(views, scalars) bytes laid out as codegen/device.rs's
            // `struct pk_args` (136-byte views, 16-byte scalars, lo[8], hi[8];
            // all 8-aligned, no padding); the others at local u64 device
            // addresses, the size of a device pointer. The driver copies the
            // values during the call, and all of them outlive it. Stream NULL:
            // the legacy default stream; `extra` NULL. What the kernel then
            // reads on the device: the scratch (held under its lock until the
            // totals are back), the level-1 scratch (never freed; lo[7]) and
            // the views' memory, kept by the memory layer (memory/device.rs
            // `Launch`, memory/alloc.rs), whose frees go through cudaFree
            // (pk_cuda_free), which waits for the device's queued work.
            let rc = unsafe {
                (drv.launch_kernel)(
                    self.func.0,
                    grid as u32,
                    1,
                    1,
                    bx,
                    by,
                    1,
                    shmem,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            drv.check(rc, "cuLaunchKernel")
        };
        match &self.kind {
            DeviceKind::For => {
                let grid = (n as u64).div_ceil(FOR_BLOCK as u64).min(i32::MAX as u64);
                // In a graph replay, a range kernel with no record to read
                // back joins the graph instead of launching now.
                let plain = team.is_none() && self.func.1.is_none() && self.func.2.is_none();
                if plain && super::graph::collect(self.func.0, grid, FOR_BLOCK, &args) {
                    return Ok(());
                }
                launch(grid, FOR_BLOCK, &mut [a])
            }
            DeviceKind::Reduce(dts) => {
                let grid = (n as u64)
                    .div_ceil(REDUCE_BLOCK as u64)
                    .clamp(1, REDUCE_MAX_BLOCKS as u64);
                let (_held, base) =
                    self.scratch(drv, partial_bytes(dts) + 16 + total_bytes(dts))?;
                let mut partial = base;
                let mut done = base + partial_bytes(dts) as u64;
                let mut out = done + 16;
                launch(
                    grid,
                    REDUCE_BLOCK,
                    &mut [
                        a,
                        &mut partial as *mut _ as *mut c_void,
                        &mut done as *mut _ as *mut c_void,
                        &mut out as *mut _ as *mut c_void,
                    ],
                )?;
                total_back(drv, out, total_bytes(dts), result)
            }
            DeviceKind::Scan(_) => {
                let (_held, base) = self.scratch(drv, SCAN_AGG + SCAN_FLAGS + 32)?;
                let mut agg = base;
                let mut flag = base + SCAN_AGG as u64;
                let mut ctl = flag + SCAN_FLAGS as u64;
                let mut out = ctl + 16;
                launch(
                    scan_blocks(n as u64),
                    SCAN_BLOCK,
                    &mut [
                        a,
                        &mut agg as *mut _ as *mut c_void,
                        &mut flag as *mut _ as *mut c_void,
                        &mut ctl as *mut _ as *mut c_void,
                        &mut out as *mut _ as *mut c_void,
                    ],
                )?;
                total_back(drv, out, 16, result)
            }
        }
    }
}

thread_local! {
    static CONTEXT_SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
