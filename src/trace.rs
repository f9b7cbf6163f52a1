//! Profiling traces (`PK_TRACE=<file>`, `pk.trace.record(path)`): one JSON
//! object per line, the format `docs/trace-format.md` describes. The first
//! line is a header naming the format and its version; then events in the
//! order they happened, each with `t_us`, microseconds since recording began:
//! `launch` (what a launch was given), `flush` (what ran and the regions it
//! formed), `kernel` (one kernel run and its time), `compile` (a kernel built
//! or found in the cache). Recording is off unless started: each hook costs
//! one atomic load then.
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub const FORMAT: &str = "pykokkos-fuse-trace";
pub const VERSION: u32 = 1;

struct Recorder {
    out: BufWriter<File>,
    t0: Instant,
}

static ON: AtomicBool = AtomicBool::new(false);
static REC: Mutex<Option<Recorder>> = Mutex::new(None);

/// Whether a trace is being recorded.
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Starts writing a trace to `path` (replacing a trace being recorded).
pub fn start(path: &str, header: Value) -> std::io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    let mut h = json!({"format": FORMAT, "version": VERSION});
    if let (Some(m), Value::Object(extra)) = (h.as_object_mut(), header) {
        m.extend(extra);
    }
    writeln!(out, "{h}")?;
    let mut rec = REC.lock();
    if let Some(mut old) = rec.take() {
        let _ = old.out.flush();
    }
    *rec = Some(Recorder {
        out,
        t0: Instant::now(),
    });
    ON.store(true, Ordering::Release);
    Ok(())
}

/// Stops recording; everything is on disk when it returns.
pub fn stop() -> std::io::Result<()> {
    ON.store(false, Ordering::Release);
    let mut rec = REC.lock();
    match rec.take() {
        Some(mut r) => r.out.flush(),
        None => Ok(()),
    }
}

/// Where the program asked for the next flush ("file:line"), set by the
/// binding that holds the interpreter; taken by the flush's event.
static SITE: Mutex<String> = Mutex::new(String::new());

pub fn set_site(site: String) {
    *SITE.lock() = site;
}

pub fn take_site() -> String {
    std::mem::take(&mut *SITE.lock())
}

/// Microseconds since recording began (0 when off).
pub fn now_us() -> f64 {
    let rec = REC.lock();
    rec.as_ref()
        .map_or(0.0, |r| r.t0.elapsed().as_secs_f64() * 1e6)
}

/// Writes one event whose fields `fields` already holds as JSON text (no
/// braces), stamped with the time it ended.
pub fn event_text(ev: &str, fields: &str) {
    if !on() {
        return;
    }
    let mut rec = REC.lock();
    if let Some(r) = rec.as_mut() {
        let t = (r.t0.elapsed().as_secs_f64() * 1e7).round() / 10.0;
        if writeln!(r.out, r#"{{"ev":"{ev}","t_us":{t},{fields}}}"#).is_err() {
            ON.store(false, Ordering::Release);
        }
    }
}

/// Writes one event (`ev` is its kind), stamped with the time it ended.
pub fn event(ev: &str, mut body: Value) {
    if !on() {
        return;
    }
    let mut rec = REC.lock();
    if let Some(r) = rec.as_mut() {
        let t = r.t0.elapsed().as_secs_f64() * 1e6;
        if let Some(m) = body.as_object_mut() {
            m.insert("ev".into(), json!(ev));
            m.insert("t_us".into(), json!((t * 10.0).round() / 10.0));
        }
        // A full disk must not fail the program: the trace just ends there.
        if writeln!(r.out, "{body}").is_err() {
            ON.store(false, Ordering::Release);
        }
    }
}
