//! Profiling-trace bindings: start and stop recording (`pk.trace`), and the
//! events the Python layer adds (stored buffer data, final buffer digests).
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use crate::memory::alloc::{Alloc, TraceRoot};
use crate::memory::view::ViewVal;
use parking_lot::Mutex;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::buffer::HeldBuffer;

/// `PK_TRACE_DATA=1`: where buffer contents go, and what the trace knows of
/// each buffer it saw.
static DATA: Mutex<Option<(PathBuf, BTreeMap<usize, Seen>)>> = Mutex::new(None);

struct Seen {
    /// Kept where it keeps the memory valid (runtime-owned, or holding its
    /// owner), so the end of the recording can read it.
    alloc: Option<Arc<Alloc>>,
    /// The host-write count when last stored (runtime-owned memory).
    writes: u64,
    /// How many times it was stored again.
    n: usize,
    /// Memory Python may write unseen (NumPy's): the digest of its bytes as
    /// last stored or left by a launch, so a change is noticed by content.
    digest: Option<blake3::Hash>,
    /// `<id>.out` holds its bytes after its last launch.
    out: bool,
}

/// Blocks of borrowed memory named so far in this recording: first address
/// -> (bytes, buffer id). A block freed and another of other length made at
/// its address gets a new id.
static ROOTS: Mutex<BTreeMap<usize, (usize, usize)>> = Mutex::new(BTreeMap::new());

/// Names the memory a launch borrows by the block it lies in (once per
/// allocation), then stores what the trace's data mode needs before the
/// launch runs. Returns (buffer, file) for the buffers a replay must load
/// before this launch.
pub fn prepare(py: Python<'_>, l: &Launch, held: &[HeldBuffer]) -> Vec<(usize, String)> {
    for v in &l.vals {
        if let ArgVal::View(x) = v {
            if x.alloc.is_borrowed() && x.alloc.trace_root.get().is_none() {
                let _ = x.alloc.trace_root.set(root_of(py, x, held));
            }
        }
    }
    store_inputs(l)
}

/// The block `x`'s memory lies in: where its Python owner says (a NumPy
/// array's base, a CuPy allocation), else the bytes the view reaches.
fn root_of(py: Python<'_>, x: &ViewVal, held: &[HeldBuffer]) -> TraceRoot {
    let a = &x.alloc;
    let base = a.base_address();
    let (lo, hi) = (base as isize + x.range.0, base as isize + x.range.1);
    let device = a.is_device_only();
    let owner = a.owner_ptr().or_else(|| {
        held.iter()
            .find(|h| h.0.buf as usize == base)
            .map(|h| h.0.obj)
            .filter(|o| !o.is_null())
    });
    let asked = owner.and_then(|o| {
        // SAFETY: the owner is alive: the allocation or a held buffer refers to it.
        let obj = unsafe { Bound::from_borrowed_ptr(py, o) };
        let f = py
            .import("pykokkos.trace")
            .ok()?
            .getattr("memory_root")
            .ok()?;
        f.call1((obj,))
            .ok()?
            .extract::<Option<(usize, usize, bool)>>()
            .ok()?
    });
    // Only a block a live owner vouches for is read whole: a block named
    // earlier may have been freed since.
    let (start, len) = match asked {
        Some((s, n, d)) if d == device && s as isize <= lo && hi <= (s + n) as isize => (s, n),
        _ => (lo as usize, (hi - lo).max(0) as usize),
    };
    let mut roots = ROOTS.lock();
    let fresh = 1usize << 48; // above any user address on the machines we run on
    let id = match roots.get(&start) {
        Some((n, id)) if *n == len => *id,
        Some((_, id)) => id.wrapping_add(fresh),
        None => start,
    };
    roots.insert(start, (len, id));
    TraceRoot {
        id,
        start,
        len,
        device,
    }
}

/// The bytes a trace stores of an allocation: the block borrowed memory lies
/// in, or the runtime's own allocation (its host copy brought up to date).
fn bytes_of(a: &Alloc) -> std::io::Result<Cow<'_, [u8]>> {
    let err = |e: crate::errors::PkError| std::io::Error::other(e.to_string());
    match a.trace_root.get() {
        Some(r) if r.device => crate::memory::device::device_bytes(r.start, r.len)
            .map(Cow::Owned)
            .map_err(err),
        // SAFETY: the block is alive (a launch uses it now, or the trace holds
        // its owner) and no kernel writes it meanwhile: the caller holds the
        // GIL, and launches on borrowed memory run before their call returns.
        Some(r) => Ok(Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(r.start as *const u8, r.len)
        })),
        None => {
            a.host_read().map_err(err)?;
            let p = a.ptr().map_err(err)?;
            // SAFETY: the allocation holds `data_len()` bytes at `p`; no kernel
            // runs now (a buffer the host changed has no pending writer).
            Ok(Cow::Borrowed(unsafe {
                std::slice::from_raw_parts(p as *const u8, a.data_len())
            }))
        }
    }
}

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) {
    if let Err(err) = std::fs::write(dir.join(name), bytes) {
        tracing::warn!(error = %err, "trace data: {name} not stored");
    }
}

/// Stores each buffer a launch is given the first time the trace sees it,
/// and again when the host may have written it since: runtime-owned memory
/// by its host-write count, memory Python reaches unseen by its contents.
fn store_inputs(l: &Launch) -> Vec<(usize, String)> {
    let mut reload = Vec::new();
    let mut data = DATA.lock();
    let Some((dir, seen)) = data.as_mut() else {
        return reload;
    };
    let mut done = BTreeSet::new();
    for v in &l.vals {
        let ArgVal::View(x) = v else { continue };
        let a = &x.alloc;
        let id = a.trace_id();
        if !done.insert(id) {
            continue;
        }
        let writes = a.host_writes.load(std::sync::atomic::Ordering::Relaxed);
        let bytes = match bytes_of(a) {
            Ok(b) => b,
            Err(err) => {
                tracing::warn!(error = %err, "trace data: buffer {id} not stored");
                continue;
            }
        };
        let digest = a.is_foreign().then(|| blake3::hash(&bytes));
        let keep = (!a.is_borrowed() || a.owner_ptr().is_some()).then(|| a.clone());
        let name = match seen.get_mut(&id) {
            None => {
                let out = false;
                let n = 0;
                seen.insert(
                    id,
                    Seen {
                        alloc: keep,
                        writes,
                        n,
                        digest,
                        out,
                    },
                );
                format!("{id}.in")
            }
            Some(s) => {
                s.out = false; // this launch may change it
                let changed = match digest {
                    Some(d) => s.digest != Some(d),
                    None => s.writes != writes,
                };
                if !changed {
                    continue;
                }
                (s.writes, s.digest, s.n) = (writes, digest, s.n + 1);
                s.alloc = keep.or(s.alloc.take());
                let name = format!("{id}.{}.in", s.n);
                reload.push((id, name.clone()));
                name
            }
        };
        write(dir, &name, &bytes);
    }
    reload
}

/// After a launch on memory Python reaches unseen ran (such launches run
/// before their call returns): stores what it left there as the buffer's
/// result so far, and its digest, against which the next use tells whether
/// the host wrote it in between.
pub fn store_results(l: &Launch) {
    let mut data = DATA.lock();
    let Some((dir, seen)) = data.as_mut() else {
        return;
    };
    let mut done = BTreeSet::new();
    for v in &l.vals {
        let ArgVal::View(x) = v else { continue };
        let a = &x.alloc;
        let id = a.trace_id();
        let pending = a.pending.load(std::sync::atomic::Ordering::Acquire) > 0;
        if !a.is_foreign() || pending || !done.insert(id) {
            continue;
        }
        let (Some(s), Ok(bytes)) = (seen.get_mut(&id), bytes_of(a)) else {
            continue;
        };
        s.digest = Some(blake3::hash(&bytes));
        s.out = true;
        write(dir, &format!("{id}.out"), &bytes);
    }
}

/// Stores the final contents of every buffer the trace saw, then forgets them.
#[pyfunction]
pub fn trace_data(dir: Option<&str>) -> PyResult<()> {
    let mut data = DATA.lock();
    if let Some((old, seen)) = data.take() {
        for (id, s) in &seen {
            // Memory whose results were stored after its launches keeps
            // them; a later host write there reaches no kernel.
            let Some(a) = s.alloc.as_ref().filter(|_| !s.out) else {
                continue;
            };
            let bytes = bytes_of(a).map_err(|e| PyOSError::new_err(e.to_string()))?;
            // Host writes after the last launch that used it: a replay loads them at the end.
            let writes = a.host_writes.load(std::sync::atomic::Ordering::Relaxed);
            if writes != s.writes && s.digest.is_none() {
                let name = format!("{id}.{}.in", s.n + 1);
                std::fs::write(old.join(&name), &bytes)
                    .map_err(|e| PyOSError::new_err(e.to_string()))?;
                let ev = serde_json::json!({"buffer": id, "file": name});
                crate::trace::event_text("host_data", &crate::exec::describe::fields(&ev));
            }
            std::fs::write(old.join(format!("{id}.out")), &bytes)
                .map_err(|e| PyOSError::new_err(e.to_string()))?;
        }
    }
    if let Some(d) = dir {
        std::fs::create_dir_all(d).map_err(|e| PyOSError::new_err(format!("{d}: {e}")))?;
        // A trace recorded again to the same path: the old run's buffers go.
        for entry in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = entry.path();
            if matches!(p.extension().and_then(|x| x.to_str()), Some("in" | "out")) {
                let _ = std::fs::remove_file(p);
            }
        }
        *data = Some((PathBuf::from(d), BTreeMap::new()));
    }
    Ok(())
}

/// Starts recording to `path`; `header` (JSON text) adds fields to the first line.
#[pyfunction]
pub fn trace_start(path: &str, header: &str) -> PyResult<()> {
    let h: serde_json::Value = serde_json::from_str(header)
        .map_err(|e| PyValueError::new_err(format!("trace header: {e}")))?;
    ROOTS.lock().clear();
    crate::trace::start(path, h).map_err(|e| PyOSError::new_err(format!("{path}: {e}")))
}

/// Stops recording; the file is complete when it returns.
#[pyfunction]
pub fn trace_stop() -> PyResult<()> {
    crate::trace::stop().map_err(|e| PyOSError::new_err(e.to_string()))
}

#[pyfunction]
pub fn trace_on() -> bool {
    crate::trace::on()
}

/// Adds one event of kind `ev` with the fields of `body` (JSON text).
#[pyfunction]
pub fn trace_event(ev: &str, body: &str) -> PyResult<()> {
    let b: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| PyValueError::new_err(format!("trace event: {e}")))?;
    crate::trace::event(ev, b);
    Ok(())
}

/// The built-in fusion rules as (folder, rule.toml text), for `tune`.
#[pyfunction]
pub fn default_rule_files() -> Vec<(String, String)> {
    crate::fusion::rules::default_files()
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect()
}

/// Kernels build and load but do not run (`replay --compile-only`).
#[pyfunction]
pub fn set_build_only(on: bool) {
    crate::exec::run::set_build_only(on);
}

/// The digest a trace records of a workunit's source (to notice it changed).
#[pyfunction]
pub fn hash_text(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}
