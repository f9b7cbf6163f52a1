//! One flush at a time: a region taken out of the DAG is invisible to another
//! thread's closure, so that thread must wait until it has run (its host read,
//! or the launch that depends on it, comes after).
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicUsize, Ordering};

static FLUSH: Mutex<()> = Mutex::new(());
static FLUSHING: AtomicUsize = AtomicUsize::new(0);

/// Whether a flush is under way or waiting for its turn (a host access must
/// then go through a flush even when nothing is pending).
pub fn flushing() -> bool {
    FLUSHING.load(Ordering::Acquire) > 0
}

/// The turn of one flush; counted as under way from the moment it waits.
pub struct Turn {
    _guard: MutexGuard<'static, ()>,
}

pub fn flush_turn() -> Turn {
    FLUSHING.fetch_add(1, Ordering::AcqRel);
    Turn {
        _guard: FLUSH.lock(),
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        FLUSHING.fetch_sub(1, Ordering::AcqRel);
    }
}
