//! A lock that costs one locked instruction a use, not two. The tape
//! (tape.rs) is locked twice per iteration of a read-every-iteration loop,
//! always by the thread that holds the GIL: it is never contended in
//! practice, and `std::sync::Mutex`'s unlock is a locked swap (it looks for
//! waiters), as much as the lock itself. Here the unlock is a plain store.
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

pub struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and one guard at a time
// exists (the flag is taken with acquire ordering and given back with release).
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    pub const fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    pub fn lock(&self) -> SpinGuard<'_, T> {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Held by another thread for a few instructions (never across a
            // kernel or a wait): give it the core.
            while self.locked.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
        }
        SpinGuard {
            lock: self,
            _value: PhantomData,
        }
    }
}

pub struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
    /// Shared across threads only as a `&mut T` may be (T: Sync).
    _value: PhantomData<&'a mut T>,
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `SpinLock`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and `&mut self` is unique.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::SpinLock;
    use std::sync::Arc;

    #[test]
    fn counts_from_threads_add_up() {
        let lock = Arc::new(SpinLock::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *lock.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), 40_000);
    }
}
