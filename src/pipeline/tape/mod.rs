//! Learned flushes. A loop that reads a total every iteration flushes the
//! same few small launches again and again. Recording them and flushing
//! costs more than the kernel launches fusion saves, so the cost signal
//! ran them one by one, as eager mode does, and lazy mode paid its checks
//! on top: it was the slower mode there.
//!
//! A flush that ran as one fused region of every pending launch (each a
//! small host `for` but the last, nothing deferred or dropped) is kept as a
//! `Program`: its launches' facts, their origins, and the fused kernel. When
//! the same launches arrive again with nothing pending, the first ones are
//! held here (no node, no hazards, no plan), and the last one runs the fused
//! kernel at once over all their arguments and returns its total, as eager
//! mode would. One kernel launch instead of several: lazy mode is then the
//! faster one.
//!
//! "The same launches": kernel keys and labels, ranges, view geometry,
//! allocations numbered by first use, and, at the last launch, whether each
//! allocation is alive and holds data (the facts the fused kernel was
//! planned, verified and built for: a dead temporary lives in registers).
//! Scalar values may differ, as they may for a cached plan.
//!
//! Held launches count as pending (`graph::set_held`): no launch runs at
//! once while they wait, host access to any view flushes, and so does any
//! launch that does not continue the program; a flush first spills them
//! into the DAG, in program order, with the origins the program learned
//! (call sites of the learned flush). Spilling happens with the GIL held
//! (the binding's flush, the tape's own launches, `graph_json`), so it never
//! waits for a thread that needs the GIL. While the fused kernel runs they
//! still count, and a flush in another thread waits for it (`wait_run`).
//!
//! `PK_FUSION_DISABLE=tape` switches it off; so do tracing (a trace records
//! each launch as it came) and `PK_FUSE_NOFUSE`.
use super::kernels::run_fused_kernel;
use super::planning::no_fuse;
/// The tape is locked twice per iteration of a read-every-iteration loop,
/// always by the thread that holds the GIL, so never contended in practice: a
/// spin lock, whose unlock is a plain store (a std Mutex's is a locked swap
/// that looks for waiters), yielding the core if it ever has to wait.
type SpinLock<T> = spin::mutex::SpinMutex<T, spin::relax::Yield>;
type SpinGuard<'a, T> = spin::mutex::SpinMutexGuard<'a, T>;
use crate::errors::PkResult;
use crate::exec::args::ArgVal;
use crate::exec::kernel::Total;
use crate::exec::launch::Launch;
use crate::lazy::graph;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Programs kept: one per `digest % SLOTS` of their first kernel.
const SLOTS: usize = 32;
/// `STATE`'s bit that says the tape holds launches (its bits below: the
/// slots that hold a program).
const HOLDING: u64 = 1 << SLOTS;

mod lesson;
mod matching;
use lesson::{Lesson, Program, MAX_ALLOCS, MAX_STEPS};
use matching::{alive_as_learned, matches};

/// Launches held, waiting for the rest of their program.
struct Held {
    program: Arc<Program>,
    launches: Vec<Launch>,
    /// Allocations by number, as bound so far.
    ids: SmallVec<[usize; MAX_ALLOCS]>,
}

struct Tape {
    programs: [Option<Arc<Program>>; SLOTS],
    held: Option<Held>,
    /// Per slot: programs given back since one last ran whole. At `STRIKES`
    /// the slot learns nothing more until the tape is switched or forgets
    /// (a program that cannot match would cost a hold, a spill and a lesson
    /// every iteration).
    strikes: [u8; SLOTS],
}

const STRIKES: u8 = 2;

static TAPE: SpinLock<Tape> = SpinLock::new(Tape {
    programs: [const { None }; SLOTS],
    held: None,
    strikes: [0; SLOTS],
});

/// What is read without the tape's lock.
struct Flags {
    /// Whether the tape holds launches, and which slots hold a program:
    /// every lazy launch asks (one load; most start none and find no bit
    /// set). Only written with the tape's lock held, so a load and a store
    /// suffice.
    state: AtomicU64,
    /// A program's fused kernel is running (`Run::go`).
    running: AtomicBool,
    /// Programs run whole (tests see that the tape is used).
    runs: AtomicU64,
    /// Switched off by `set_on` (tests that count flushes).
    off: AtomicBool,
}

static FLAGS: Flags = Flags {
    state: AtomicU64::new(0),
    running: AtomicBool::new(false),
    runs: AtomicU64::new(0),
    off: AtomicBool::new(false),
};

fn tape() -> SpinGuard<'static, Tape> {
    TAPE.lock()
}

fn slot(digest: u64) -> usize {
    (digest % SLOTS as u64) as usize
}

fn on() -> bool {
    !FLAGS.off.load(Ordering::Relaxed)
        && !crate::trace::on()
        && !no_fuse().load(Ordering::Relaxed)
        && super::switches::on().tape
}

/// Whether `route` should offer `l` to the tape: it holds launches (`l`
/// continues them or spills them), or a program may start with `l`.
#[inline]
pub fn wants(l: &Launch) -> bool {
    FLAGS.state.load(Ordering::Acquire) & (HOLDING | 1 << slot(l.key.digest())) != 0
}

/// Sets and clears `STATE` bits; `_locked` is the proof that the tape's lock
/// is held.
fn set_state(_locked: &Tape, set: u64, clear: u64) {
    let state = FLAGS.state.load(Ordering::Relaxed);
    FLAGS.state.store((state | set) & !clear, Ordering::Release);
}

fn holding() -> bool {
    FLAGS.state.load(Ordering::Acquire) & HOLDING != 0
}

/// What the tape makes of a launch.
pub enum Offer {
    /// To be held (`Keep::keep`): it runs with the last launch of its program.
    Hold(Keep),
    /// The last launch of a program: `Run::go` runs them all.
    Run(Run),
    /// Not the tape's (what it held before is in the DAG now, in order).
    Back,
}

/// The tape, locked, waiting for the launch it is to hold (the launch moves
/// once, into the tape, and only if it is held).
pub struct Keep(SpinGuard<'static, Tape>);

impl Keep {
    pub fn keep(mut self, l: Launch) {
        if let Some(held) = self.0.held.as_mut() {
            held.launches.push(l);
            graph::set_held(held.launches.len());
        }
        set_state(&self.0, HOLDING, 0);
    }
}

/// Offers `l` to the tape. Called with the GIL held, like every spill.
pub fn offer(l: &Launch) -> PkResult<Offer> {
    let mut tape = tape();
    let Some(mut held) = tape.held.take().filter(|h| !h.launches.is_empty()) else {
        return Ok(start(tape, l));
    };
    let k = held.launches.len();
    let step = &held.program.steps[k];
    // (A launch that repeats the one before would have folded into it.)
    let fits = on() && matches(step, l, &mut held.ids) && !l.repeats(&held.launches[k - 1]);
    if !fits {
        return give_back(tape, held);
    }
    if k + 1 < held.program.steps.len() {
        tape.held = Some(held);
        return Ok(Offer::Hold(Keep(tape)));
    }
    // The kernel keeps the allocations that were dead in registers: they
    // must be dead now too (and the live ones alive), as when it was planned.
    if !alive_as_learned(&held.program, &held.launches, l) {
        return give_back(tape, held);
    }
    // The held launches stay pending until the kernel has run: no launch
    // runs at once around it, and a flush waits for it.
    FLAGS.running.store(true, Ordering::Release);
    set_state(&tape, 0, HOLDING);
    tape.strikes[slot(held.program.steps[0].key.digest())] = 0;
    drop(tape);
    Ok(Offer::Run(Run {
        program: held.program,
        held: held.launches,
    }))
}

/// To hold `l` if a program starts with it and nothing is pending.
fn start(mut tape: SpinGuard<'static, Tape>, l: &Launch) -> Offer {
    let quiet = graph::quiet();
    let Some(program) = tape.programs[slot(l.key.digest())].as_ref() else {
        return Offer::Back;
    };
    let mut ids = SmallVec::new();
    if !(quiet && on() && matches(&program.steps[0], l, &mut ids)) {
        return Offer::Back;
    }
    let program = program.clone();
    let launches = Vec::with_capacity(program.steps.len() - 1);
    tape.held = Some(Held {
        program,
        launches,
        ids,
    });
    Offer::Hold(Keep(tape))
}

/// Moves what the tape holds into the DAG, in order. Called with the GIL
/// held, before anything flushes or looks at the DAG.
pub fn spill() -> PkResult<()> {
    if !holding() {
        return Ok(());
    }
    let held = {
        let mut tape = tape();
        let held = tape.held.take();
        if let Some(h) = &held {
            unlearn(&mut tape, &h.program);
        }
        set_state(&tape, 0, HOLDING);
        held
    };
    match held {
        Some(held) => spill_held(held),
        // (Holding, yet nothing held: an offer that failed half way.)
        None => {
            graph::set_held(0);
            Ok(())
        }
    }
}

/// Waits for a program's fused kernel to finish (a flush, in its turn, must
/// not run beside it: it was launched first).
pub fn wait_run() {
    while FLAGS.running.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
}

/// The launches did not go as learned: the held ones are recorded, and the
/// program is forgotten (it is learned again from a flush that goes so; a
/// program that keeps failing would cost a hold and a spill each time).
fn give_back(mut tape: SpinGuard<'static, Tape>, held: Held) -> PkResult<Offer> {
    unlearn(&mut tape, &held.program);
    let s = slot(held.program.steps[0].key.digest());
    tape.strikes[s] = tape.strikes[s].saturating_add(1);
    set_state(&tape, 0, HOLDING);
    drop(tape);
    spill_held(held)?;
    Ok(Offer::Back)
}

/// Takes `program` out of its slot (if a newer one did not take its place).
fn unlearn(tape: &mut Tape, program: &Arc<Program>) {
    let s = slot(program.steps[0].key.digest());
    if tape.programs[s]
        .as_ref()
        .is_some_and(|p| Arc::ptr_eq(p, program))
    {
        // (Not the last reference: the held launches' program outlives the lock.)
        tape.programs[s] = None;
        set_state(tape, 0, 1 << s);
    }
}

fn spill_held(held: Held) -> PkResult<()> {
    let fold = !no_fuse().load(Ordering::Relaxed);
    let mut first_error = Ok(());
    for (l, step) in held.launches.into_iter().zip(&held.program.steps) {
        if let Err(e) = graph::record(l, || step.origin.clone(), fold) {
            first_error = first_error.and(Err(e));
        }
    }
    // Only now: until each is in the DAG, it counts as held.
    graph::set_held(0);
    first_error
}

/// A program's launches, taken off the tape to run as its fused kernel.
pub struct Run {
    program: Arc<Program>,
    held: Vec<Launch>,
}

impl Run {
    /// Runs the fused kernel over the held launches' arguments and `last`'s
    /// (the GIL released): the last launch's total.
    pub fn go(self, last: &Launch) -> PkResult<Option<Total>> {
        let mut bodies: SmallVec<[&[ArgVal]; MAX_STEPS]> =
            self.held.iter().map(|l| &l.vals[..]).collect();
        bodies.push(&last.vals);
        let mut totals: SmallVec<[Option<Total>; MAX_STEPS]> =
            smallvec::smallvec![None; bodies.len()];
        // (The region's range is its first launch's, as a flush runs it.)
        let first = &self.held[0];
        let range = (&first.lo[..], &first.hi[..]);
        run_fused_kernel(
            &self.program.kernel,
            &bodies,
            range,
            &self.program.label,
            &mut totals,
        )?;
        FLAGS.runs.fetch_add(1, Ordering::Relaxed);
        Ok(totals.last().copied().flatten())
    }
}

impl Drop for Run {
    /// The kernel ran (or failed, or never started): nothing is held.
    fn drop(&mut self) {
        // In this order: no program starts while anything counts as held, so
        // a flush that saw `running` false never misses a later program's run.
        FLAGS.running.store(false, Ordering::Release);
        graph::set_held(0);
    }
}

/// Programs run whole so far.
pub fn runs() -> u64 {
    FLAGS.runs.load(Ordering::Relaxed)
}

/// The tape on or off (tests whose checks count flushes switch it off);
/// returns whether it was on. Off spills what it holds and forgets programs.
/// Called with the GIL held.
pub fn set_on(on: bool) -> PkResult<bool> {
    let was = !FLAGS.off.swap(!on, Ordering::Relaxed);
    if !on {
        spill()?;
        forget();
    }
    Ok(was)
}

/// Forgets every program (lazy mode or fusion was switched).
pub fn forget() {
    let programs = {
        let mut tape = tape();
        set_state(&tape, 0, HOLDING - 1);
        tape.strikes = [0; SLOTS];
        std::mem::replace(&mut tape.programs, [const { None }; SLOTS])
    };
    // Dropped outside the lock: their origins hold Python objects, whose
    // release may run Python code (which may launch).
    drop(programs);
}

/// What a flush about to run would teach (see the module's comment): None
/// unless it is one plain fused region of every pending launch.
pub fn lesson(
    nodes: &[Arc<crate::lazy::graph::Node>],
    planned: &super::planning::Planned,
) -> Option<Lesson> {
    if !on() {
        return None;
    }
    lesson::of(nodes, planned)
}

/// The flush of `lesson` ran: its program is kept, in the slot of its first
/// kernel (a newer one takes the place of an older).
pub fn learn(lesson: Lesson) {
    let Some(program) = lesson.program() else {
        return;
    };
    let s = slot(program.steps[0].key.digest());
    let older = {
        let mut tape = tape();
        if tape.strikes[s] >= STRIKES {
            return;
        }
        set_state(&tape, 1 << s, 0);
        tape.programs[s].replace(Arc::new(program))
    };
    drop(older); // outside the lock, as in `forget`
}
