//! Where a launch the program submits goes: `submit` routes it (eager mode,
//! the memo's verdict: held, run at once; or the DAG) and runs it there.
//! The binding converts arguments in and the outcome out; everything between
//! is here, so each rule of routing is read in one place.
use super::cost;
use super::flush::{eager, flush};
use super::memo::hold::{self, Offer};
use super::memo::slots;
use crate::errors::PkResult;
use crate::exec::kernel::Total;
use crate::exec::launch::{Launch, Origin};
use crate::lazy::graph::{self, Demand};
use crate::lazy::slot::Slot;
use std::sync::Arc;
use std::time::Instant;

/// What `submit` needs of the caller: the launch's origins and the GIL.
/// (Routing, recording and holding run with the GIL held: spilling held
/// launches may drop Python references. Kernels run without it.)
pub trait Caller {
    /// The origin a recorded launch keeps (its call site), made only when one is.
    fn origin(&self) -> Arc<dyn Origin>;
    /// The origin a launch that runs now borrows for the run.
    fn borrowed(&self) -> &(dyn Origin + Sync);
    /// Runs `f` with the GIL released.
    fn detached<T: Send>(&self, f: impl FnOnce() -> PkResult<T> + Send) -> PkResult<T>;
    /// The launch's route is decided: `seq` if it was recorded (traces time
    /// submission up to here).
    fn routed(&self, _seq: Option<u64>) {}
    /// The launch ran in the program's turn (traces keep its results).
    fn ran(&self, _l: &Launch) {}
}

/// What became of a submitted launch.
pub enum Submitted {
    /// It ran (now, at once, or as the last launch of a learned flush): its
    /// total, if it has one.
    Ran(Option<Total>),
    /// It was recorded: its sequence number, its result slot (reductions and
    /// scans), and whether it has effects beyond its views (printf: the
    /// caller flushes it at once, so its output comes when it was launched).
    Recorded {
        seq: u64,
        slot: Option<Arc<Slot>>,
        effects: bool,
    },
    /// It is held: it runs with the last launch of its learned flush.
    Held,
}

/// Where a launch goes, decided on a borrowed launch: the launch stays where
/// the caller built it, and moves only to be recorded or held (it is 200
/// bytes; a launch that runs at once is never copied).
enum Route {
    /// To run now (`run_now`): eager mode, or it touches memory Python can
    /// change behind our back (NumPy arrays, exported views), or a trial of
    /// running at once (then timed, for the cost signal).
    Now(bool),
    /// A launch lazy mode runs at once with nothing pending (`at_once`,
    /// memo/slots.rs), timed for the cost signal (cost.rs) when the flag says so.
    AtOnce(bool),
    /// To be recorded (`record`).
    Record,
    /// To be held (`hold::offer`): it may start or continue a learned flush.
    Hold,
}

/// Launches waiting, at most: a stream of launches that nothing reads runs
/// when it reaches this many. Each waiting launch holds a few kilobytes (its
/// arguments, its views), so such a stream grew without bound (24,000
/// launches: 195 MB), and its first flush took 0.1-0.6 s to plan, 4-25 us a
/// launch, where eagerly they run at 2.5 us each. Fusion loses nothing that
/// matters: a region is cut at most once every this many launches.
pub const MOST_PENDING: usize = 2048;

/// Submits a launch: runs it, records it, or holds it.
pub fn submit(l: Launch, c: &impl Caller) -> PkResult<Submitted> {
    // One that holding gives back is routed again, not to be held.
    let mut try_hold = true;
    // (At once: nothing pending; timed: for the cost signal.)
    let (quiet, timed) = loop {
        match route(&l, try_hold)? {
            Route::Record => {
                // Before this launch is recorded: an error of the work
                // flushed comes from a launch that did not happen.
                if graph::pending_count() >= MOST_PENDING {
                    // (What ran is dropped here, the GIL held: see `Ran`.)
                    let ran = c.detached(|| flush(Demand::All))?;
                    drop(ran);
                }
                let (seq, slot, effects) = record(l, || c.origin())?;
                c.routed(Some(seq));
                return Ok(Submitted::Recorded { seq, slot, effects });
            }
            Route::Now(trial) => break (false, trial),
            Route::AtOnce(timed) => break (true, timed),
            Route::Hold => match hold::offer(&l)? {
                Offer::Hold(keep) => {
                    keep.keep(l);
                    return Ok(Submitted::Held);
                }
                // The learned flush's fused kernel, over every launch held.
                Offer::Run(run) => {
                    return c.detached(|| run.go(&l)).map(Submitted::Ran);
                }
                Offer::Back => try_hold = false,
            },
        }
    };
    c.routed(None);
    let origin = c.borrowed();
    let total = match quiet {
        true => c.detached(|| at_once(&l, origin, timed))?,
        false => c.detached(|| run_now(&l, origin, timed))?,
    };
    c.ran(&l);
    Ok(Submitted::Ran(total))
}

/// Where `l` goes (`hold`: whether it may be held; not once holding gave
/// it back). Cheap, GIL-free work.
fn route(l: &Launch, hold: bool) -> PkResult<Route> {
    l.check_space()?;
    if !graph::enabled() {
        return Ok(Route::Now(false));
    }
    // Launches are held (this one continues them, or spills them), or a
    // learned flush may start with it (memo/slots.rs).
    if hold && (hold::holding() || slots::starts_flush(l)) {
        return Ok(Route::Hold);
    }
    // With nothing pending, nothing recorded could fuse with it: the memo
    // says whether it runs at once (its flushes ran it alone, or recording
    // costs more) or is recorded.
    let quiet = graph::quiet();
    let at_once = quiet && slots::at_once(l);
    // A trial of running at once (cost.rs): timed, after what it depends on.
    if cost::eager_trial(l) {
        return Ok(if quiet {
            Route::AtOnce(true)
        } else {
            Route::Now(true)
        });
    }
    if at_once {
        return Ok(Route::AtOnce(cost::time_at_once(l)));
    }
    // Something is pending: while recording small host launches costs
    // more, one runs now, after what it depends on (cost.rs), unless it
    // repeats the newest pending launch (folded into it, it costs less).
    if l.runs_now() || (!quiet && cost::runs_now(l) && !graph::folds_into_newest(l)) {
        return Ok(Route::Now(false));
    }
    Ok(Route::Record)
}

/// Records a launch `route` sent here (with the origin `origin()` makes).
fn record(
    l: Launch,
    origin: impl FnOnce() -> Arc<dyn Origin>,
) -> PkResult<(u64, Option<Arc<Slot>>, bool)> {
    // Launches held come first, in program order.
    hold::spill()?;
    // Folding exact repeats into one node is a fusion decision: not when unfused.
    let fold = !super::switches::fusing_off();
    let weight = cost::recording_weight(&l);
    let t0 = weight.is_some_and(|w| w > 0).then(Instant::now);
    let recorded = graph::record(l, origin, fold)?;
    if let Some(w) = weight {
        cost::recorded(t0.map_or(0, |t| t.elapsed().as_nanos() as u64), w);
    }
    Ok(recorded)
}

/// Runs a launch now, after the pending work it depends on (`trial`: one of
/// a trial of running at once, timed).
fn run_now(l: &Launch, origin: &dyn Origin, trial: bool) -> PkResult<Option<Total>> {
    if !graph::enabled() {
        return eager(l, origin);
    }
    // Nothing pending (the common case once launches run at once): no flush.
    if !graph::quiet() {
        let _ran = flush(Demand::Allocs(&l.allocs()))?;
    }
    // Only small launches count towards the sampling (as `route`'s do).
    at_once(l, origin, trial || cost::time_at_once(l))
}

/// Runs a launch's kernel, nothing else (`route` sent it here as `AtOnce`,
/// or `run_now` flushed what it needs); `timed`: for the cost signal.
fn at_once(l: &Launch, origin: &dyn Origin, timed: bool) -> PkResult<Option<Total>> {
    if !timed {
        return eager(l, origin);
    }
    let t0 = Instant::now();
    let total = eager(l, origin)?;
    cost::ran_at_once(t0.elapsed().as_nanos() as u64);
    Ok(total)
}
