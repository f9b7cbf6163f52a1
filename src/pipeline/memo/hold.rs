//! Learned flushes replayed as their launches arrive. A loop that reads a
//! total every iteration flushes the same few small launches again and
//! again; recording them and flushing cost more than the kernel launches
//! fusion saved, so lazy mode was the slower mode there.
//!
//! A flush that ran as one fused region of every pending launch (each a
//! small host `for` but the last, nothing deferred or dropped) is kept as a
//! `Program`: its launches' own words (shape.rs), the life of each
//! allocation, their origins, and the fused kernel. When the same launches
//! arrive again with nothing pending, the first ones are held here (no node,
//! no hazards, no plan), and the last one runs the fused kernel over all
//! their arguments and returns its total, as eager mode would: one kernel
//! launch instead of several, and lazy mode is the faster one.
//!
//! "The same launches": equal words (kernels, ranges, view geometry,
//! allocations numbered by first use), kernel keys and labels, and at the
//! last launch every allocation as alive as when the flush was planned (a
//! dead temporary lives in registers). Scalar values may differ, as they
//! may for a cached plan.
//!
//! Held launches count as pending (`graph::set_held`): no launch runs at
//! once while they wait, host access to any view flushes, and so does any
//! launch that does not continue the program; a flush first spills them
//! into the DAG, in program order, with the origins the program learned.
//! Spilling happens with the GIL held (the binding's flush, the memo's own
//! launches, `graph_json`), so it never waits for a thread that needs the
//! GIL. While the fused kernel runs they still count, and a flush in another
//! thread waits for it (`wait_run`).
pub use super::program::Lesson;
use super::program::{on, Ids, Program, Replay, Scratch, MAX_STEPS};
use super::slots::{self, Event, SLOTS};
use crate::errors::PkResult;
use crate::exec::kernel::Total;
use crate::exec::launch::Launch;
use crate::exec::run::{run, Who};
use crate::lazy::graph::{self, Node};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The memo's lock is taken twice per iteration of a read-every-iteration
/// loop, always by the thread that holds the GIL, so never contended in
/// practice: a spin lock, whose unlock is a plain store (a std Mutex's is a
/// locked swap that looks for waiters), yielding the core if it must wait.
type SpinLock<T> = spin::mutex::SpinMutex<T, spin::relax::Yield>;
type SpinGuard<'a, T> = spin::mutex::SpinMutexGuard<'a, T>;

/// Launches held, waiting for the rest of their program.
struct Held {
    program: Arc<Program>,
    launches: Vec<Launch>,
    /// Allocations by number, as bound so far.
    ids: Ids,
}

struct Programs {
    /// Per slot of slots.rs: the program that starts with its kernel.
    by_slot: [Option<Arc<Program>>; SLOTS],
    held: Option<Held>,
    scratch: Scratch,
}

static PROGRAMS: SpinLock<Programs> = SpinLock::new(Programs {
    by_slot: [const { None }; SLOTS],
    held: None,
    scratch: [0; _],
});

/// What is read without the lock.
struct Flags {
    /// Launches are held: every lazy launch asks (one load).
    holding: AtomicBool,
    /// A program's fused kernel is running (`Run::go`).
    running: AtomicBool,
    /// Programs run whole (tests see that they are used).
    runs: AtomicU64,
}

static FLAGS: Flags = Flags {
    holding: AtomicBool::new(false),
    running: AtomicBool::new(false),
    runs: AtomicU64::new(0),
};

fn lock() -> SpinGuard<'static, Programs> {
    PROGRAMS.lock()
}

/// Whether launches are held (a launch continues them or spills them).
#[inline]
pub fn holding() -> bool {
    FLAGS.holding.load(Ordering::Acquire)
}

/// What holding makes of a launch.
pub enum Offer {
    /// To be held (`Keep::keep`): it runs with the last launch of its program.
    Hold(Keep),
    /// The last launch of a program: `Run::go` runs them all.
    Run(Run),
    /// Not held (what was held before is in the DAG now, in order).
    Back,
}

/// The lock, waiting for the launch it is to hold (the launch moves once,
/// and only if it is held).
pub struct Keep(SpinGuard<'static, Programs>);

impl Keep {
    pub fn keep(mut self, l: Launch) {
        if let Some(held) = self.0.held.as_mut() {
            held.launches.push(l);
            graph::set_held(held.launches.len());
        }
        FLAGS.holding.store(true, Ordering::Release);
    }
}

/// Offers `l` to be held. Called with the GIL held, like every spill.
pub fn offer(l: &Launch) -> PkResult<Offer> {
    let mut p = lock();
    let Some(mut held) = p.held.take().filter(|h| !h.launches.is_empty()) else {
        return Ok(start(p, l));
    };
    let k = held.launches.len();
    // (A launch that repeats the one before would have folded into it.)
    let fits = on()
        && held.program.matches(k, l, &mut held.ids, &mut p.scratch)
        && !l.repeats(&held.launches[k - 1]);
    if !fits {
        return give_back(p, held);
    }
    if k + 1 < held.program.ends.len() {
        p.held = Some(held);
        return Ok(Offer::Hold(Keep(p)));
    }
    // The kernel keeps the allocations that were dead in registers: they
    // must be dead now too (and the live ones alive), as when it was planned.
    if !held.program.alive_as_learned(&held.launches, l, &held.ids) {
        return give_back(p, held);
    }
    // The held launches stay pending until the kernel has run: no launch
    // runs at once around it, and a flush waits for it.
    FLAGS.running.store(true, Ordering::Release);
    FLAGS.holding.store(false, Ordering::Release);
    slots::program(held.program.keys[0].digest(), Event::Ran);
    drop(p);
    Ok(Offer::Run(Run {
        program: held.program,
        held: held.launches,
    }))
}

/// To hold `l` if a program starts with it and nothing is pending.
fn start(mut p: SpinGuard<'static, Programs>, l: &Launch) -> Offer {
    let Programs {
        by_slot, scratch, ..
    } = &mut *p;
    let Some(program) = by_slot[slots::index(l.key.digest())].as_ref() else {
        return Offer::Back;
    };
    let mut ids = Ids::default();
    if !(graph::quiet() && on() && program.matches(0, l, &mut ids, scratch)) {
        return Offer::Back;
    }
    let program = program.clone();
    let launches = Vec::with_capacity(program.ends.len() - 1);
    p.held = Some(Held {
        program,
        launches,
        ids,
    });
    Offer::Hold(Keep(p))
}

/// Moves what is held into the DAG, in order. Called with the GIL held,
/// before anything flushes or looks at the DAG.
pub fn spill() -> PkResult<()> {
    if !holding() {
        return Ok(());
    }
    let held = {
        let mut p = lock();
        let held = p.held.take();
        if let Some(h) = &held {
            unlearn(&mut p, &h.program, Event::Dropped);
        }
        FLAGS.holding.store(false, Ordering::Release);
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
/// program is forgotten (learned again from a flush that goes so).
fn give_back(mut p: SpinGuard<'static, Programs>, held: Held) -> PkResult<Offer> {
    unlearn(&mut p, &held.program, Event::GivenBack);
    FLAGS.holding.store(false, Ordering::Release);
    drop(p);
    spill_held(held)?;
    Ok(Offer::Back)
}

/// Takes `program` out of its slot (if a newer one did not take its place).
fn unlearn(p: &mut Programs, program: &Arc<Program>, e: Event) {
    let digest = program.keys[0].digest();
    let s = &mut p.by_slot[slots::index(digest)];
    if s.as_ref().is_some_and(|q| Arc::ptr_eq(q, program)) {
        // (Not the last reference: the held launches' program outlives the lock.)
        *s = None;
        slots::program(digest, e);
    }
}

fn spill_held(held: Held) -> PkResult<()> {
    let fold = !super::super::switches::fusing_off();
    let mut first_error = Ok(());
    for (l, origin) in held.launches.into_iter().zip(&held.program.origins) {
        if let Err(e) = graph::record(l, || origin.clone(), fold) {
            first_error = first_error.and(Err(e));
        }
    }
    // Only now: until each is in the DAG, it counts as held.
    graph::set_held(0);
    first_error
}

/// A program's launches, taken off to run as its fused kernel.
pub struct Run {
    program: Arc<Program>,
    held: Vec<Launch>,
}

impl Run {
    /// Runs the held launches and `last` as learned (the GIL released): the
    /// last launch's total.
    pub fn go(self, last: &Launch) -> PkResult<Option<Total>> {
        let total = match &self.program.replay {
            Replay::Fused { kernel, label } => {
                let mut launches: SmallVec<[&Launch; MAX_STEPS]> = self.held.iter().collect();
                launches.push(last);
                let totals = super::super::kernels::run_fused_kernel(kernel, &launches, label)?;
                totals.last().copied().flatten()
            }
            // Each launch runs as eagerly, its kernel launch collected into
            // the graph (`for` launches only: no total).
            Replay::Graph { kernels, graph } => {
                let launches = self.held.iter().chain(std::iter::once(last));
                crate::exec::graph::replay(graph, || {
                    for (kernel, l) in kernels.iter().zip(launches) {
                        let who = Who::Workunit(&l.workunit().name);
                        run(kernel, &[&l.vals], &l.lo, &l.hi, who, &mut [None])?;
                    }
                    Ok(())
                })?;
                None
            }
        };
        FLAGS.runs.fetch_add(1, Ordering::Relaxed);
        Ok(total)
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

/// Holding on or off (tests whose checks count flushes switch it off);
/// returns whether it was on. Off spills what is held and forgets programs.
/// Called with the GIL held.
pub fn set_on(on: bool) -> PkResult<bool> {
    let paused = &super::super::switches::on().tape_paused;
    let was = !paused.swap(!on, Ordering::Relaxed);
    if !on {
        spill()?;
        forget();
    }
    Ok(was)
}

/// Forgets every program (lazy mode or fusion was switched).
pub fn forget() {
    let programs = {
        let mut p = lock();
        slots::forget(true);
        std::mem::replace(&mut p.by_slot, [const { None }; SLOTS])
    };
    // Dropped outside the lock: their origins hold Python objects, whose
    // release may run Python code (which may launch).
    drop(programs);
}

/// The flush of `lesson` ran over `nodes`: its program is kept, in the slot
/// of its first kernel (a newer one takes the place of an older), if its
/// region ran fused.
pub fn learn(lesson: Lesson, nodes: &[Arc<Node>]) {
    let Some(program) = lesson.program(nodes) else {
        return;
    };
    let digest = program.keys[0].digest();
    let older = {
        let mut p = lock();
        if !slots::program(digest, Event::Learned) {
            return;
        }
        p.by_slot[slots::index(digest)].replace(Arc::new(program))
    };
    drop(older); // outside the lock, as in `forget`
}
