//! Where a launch the program submits goes: `submit` routes it (eager mode,
//! the tape, the learners' "run it at once", or the DAG) and runs it there.
//! The binding converts arguments in and the outcome out; everything between
//! is here, so each rule of routing is read in one place.
use super::flush::{eager, flush};
use super::{alone, cost, tape};
use crate::errors::PkResult;
use crate::exec::kernel::Total;
use crate::exec::launch::{Launch, Origin};
use crate::lazy::graph::{self, Demand};
use crate::lazy::slot::Slot;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// What `submit` needs of the caller: the launch's origins and the GIL.
/// (Routing, recording and the tape run with the GIL held: spilling the
/// tape may drop Python references. Kernels run without it.)
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
    /// The tape holds it: it runs with the last launch of its learned flush.
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
    /// alone.rs), timed for the cost signal (cost.rs) when the flag says so.
    AtOnce(bool),
    /// To be recorded (`record`).
    Record,
    /// To the tape (`tape::offer`): it may continue a learned flush.
    Tape,
}

/// Submits a launch: runs it, records it, or hands it to the tape.
pub fn submit(l: Launch, c: &impl Caller) -> PkResult<Submitted> {
    // One the tape gives back is routed again, past the tape.
    let mut try_tape = true;
    // (At once: nothing pending; timed: for the cost signal.)
    let (quiet, timed) = loop {
        match route(&l, try_tape)? {
            Route::Record => {
                let (seq, slot, effects) = record(l, || c.origin())?;
                c.routed(Some(seq));
                return Ok(Submitted::Recorded { seq, slot, effects });
            }
            Route::Now(trial) => break (false, trial),
            Route::AtOnce(timed) => break (true, timed),
            Route::Tape => match tape::offer(&l)? {
                tape::Offer::Hold(keep) => {
                    keep.keep(l);
                    return Ok(Submitted::Held);
                }
                // The learned flush's fused kernel, over every launch held.
                tape::Offer::Run(run) => {
                    return c.detached(|| run.go(&l)).map(Submitted::Ran);
                }
                tape::Offer::Back => try_tape = false,
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

/// Where `l` goes (`tape`: whether the tape may take it; not once it gave
/// the launch back). Cheap, GIL-free work.
fn route(l: &Launch, tape: bool) -> PkResult<Route> {
    l.check_space()?;
    if !graph::enabled() {
        return Ok(Route::Now(false));
    }
    // The tape holds launches (this one continues or spills them), or a
    // learned flush may start here: one kernel for several launches beats
    // running them at once.
    if tape && tape::wants(l) {
        return Ok(Route::Tape);
    }
    let quiet = graph::quiet();
    // A trial of running at once (cost.rs): timed, after what it depends on.
    if cost::eager_trial(l) {
        return Ok(if quiet {
            Route::AtOnce(true)
        } else {
            Route::Now(true)
        });
    }
    // With nothing pending, nothing recorded could fuse with it, and running
    // now is running at once (`runs_now` need not be asked): at once if its
    // flushes ran it alone, or recording it costs more (alone.rs).
    if quiet && alone::run_at_once(l) {
        return Ok(Route::AtOnce(cost::small(l) && cost::time_at_once()));
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
    // Launches the tape held come first, in program order.
    tape::spill()?;
    // Folding exact repeats into one node is a fusion decision: not when unfused.
    let fold = !super::planning::no_fuse().load(Ordering::Relaxed);
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
    at_once(l, origin, trial || (cost::small(l) && cost::time_at_once()))
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
