//! Profiling-trace bindings: start and stop recording (`pk.trace`), and the
//! events the Python layer adds (stored buffer data, final buffer digests).
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use crate::memory::alloc::Alloc;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// `PK_TRACE_DATA=1`: where buffer contents go, and per buffer seen so far
/// its allocation, the host-write count when it was last stored, and how
/// many times it was stored.
static DATA: Mutex<Option<Stored>> = Mutex::new(None);

type Stored = (PathBuf, BTreeMap<usize, (Arc<Alloc>, u64, usize)>);

fn dump(dir: &std::path::Path, name: &str, a: &Alloc) -> std::io::Result<()> {
    a.host_read()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let p = a.ptr().map_err(|e| std::io::Error::other(e.to_string()))?;
    // SAFETY: the allocation holds `data_len()` bytes at `p`, and no kernel runs
    // now (the caller holds the GIL; a buffer changed by the host has no
    // pending writer: host access flushed them).
    let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, a.data_len()) };
    std::fs::write(dir.join(name), bytes)
}

/// Stores the contents of each buffer a launch is given the first time a
/// trace with data sees it, and again whenever the host may have written it
/// since (a host write, or a live NumPy export). Returns (buffer, file) for
/// the buffers the replay must load before this launch.
pub fn store_inputs(l: &Launch) -> Vec<(usize, String)> {
    let mut reload = Vec::new();
    let mut data = DATA.lock().unwrap_or_else(|e| e.into_inner());
    let Some((dir, seen)) = data.as_mut() else {
        return reload;
    };
    for v in &l.vals {
        let ArgVal::View(x) = v else { continue };
        let id = x.alloc.trace_id();
        let writes = x
            .alloc
            .host_writes
            .load(std::sync::atomic::Ordering::Relaxed);
        let name = match seen.get_mut(&id) {
            None => {
                seen.insert(id, (x.alloc.clone(), writes, 0));
                format!("{id}.in")
            }
            Some((_, last, n)) if *last != writes || x.alloc.is_foreign() => {
                *last = writes;
                *n += 1;
                let name = format!("{id}.{n}.in");
                reload.push((id, name.clone()));
                name
            }
            Some(_) => continue,
        };
        if let Err(err) = dump(dir, &name, &x.alloc) {
            tracing::warn!(error = %err, "trace data: buffer {id} not stored");
        }
    }
    reload
}

/// Stores the final contents of every buffer the trace saw, then forgets them.
#[pyfunction]
pub fn trace_data(dir: Option<&str>) -> PyResult<()> {
    let mut data = DATA.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((old, seen)) = data.take() {
        for (id, (a, last, n)) in &seen {
            // Host writes after the last launch that used it: a replay loads them at the end.
            let writes = a.host_writes.load(std::sync::atomic::Ordering::Relaxed);
            if writes != *last || a.is_foreign() {
                let name = format!("{id}.{}.in", n + 1);
                dump(&old, &name, a).map_err(|e| PyOSError::new_err(e.to_string()))?;
                crate::trace::event_text("host_data", &format!(r#""buffer":{id},"file":"{name}""#));
            }
            dump(&old, &format!("{id}.out"), a).map_err(|e| PyOSError::new_err(e.to_string()))?;
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
