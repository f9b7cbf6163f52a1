//! Ctrl-C while the runtime works without the interpreter (a flush of many
//! kernels, a compile): Python's SIGINT handler only notes the signal, and the
//! interpreter acts on it when it runs bytecode again, after the whole flush.
//! So the runtime watches too: a handler chained in front of Python's sets a
//! flag (one relaxed load to test), and between kernels of a flush and while
//! a compiler runs the work asks Python, through a hook the binding registers,
//! whether the program wants to stop (its handler raised KeyboardInterrupt).
//! A program that replaced or ignores SIGINT keeps its own handling.
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::OnceLock;

static FLAG: AtomicBool = AtomicBool::new(false);
static HOOK: OnceLock<fn() -> bool> = OnceLock::new();
/// The handler ours stands in front of (Python's), as sigaction gave it:
/// the function and its flags. Atomics, as the signal handler reads them.
static PREV_FN: AtomicUsize = AtomicUsize::new(0);
static PREV_FLAGS: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_sigint(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    FLAG.store(true, Ordering::Relaxed);
    // Then whatever handled it before (Python's: it notes the signal too).
    let h = PREV_FN.load(Ordering::Acquire);
    if h == libc::SIG_DFL || h == libc::SIG_IGN || h == on_sigint as *const () as usize {
        return;
    }
    // SAFETY: `h` is the handler installed before ours (chain), called as
    // its flags say; never ours (checked above), so no recursion.
    unsafe {
        if PREV_FLAGS.load(Ordering::Relaxed) & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}

/// Chains our handler in front of the one SIGINT has now, where that is a
/// handler (Python's); `ask` tells whether the program wants to stop. Once.
pub fn install(ask: fn() -> bool) {
    if HOOK.set(ask).is_ok() {
        chain();
    }
}

/// Puts our handler back in front where something replaced it since: Python
/// re-installs its own C handler on every `signal.signal(SIGINT, ...)`, as
/// ipykernel does around each cell (Jupyter). One sigaction query (about
/// 0.1 us) when ours is still there; called where work may run long (a
/// flush of several kernels, a compile, a large host kernel), not per launch.
pub fn chain() {
    if HOOK.get().is_none() {
        return;
    }
    let ours = on_sigint as *const () as usize;
    // SAFETY: plain sigaction calls on zeroed structs; the handler only
    // stores an atomic flag and calls the previous handler, as a signal
    // handler may.
    unsafe {
        let mut now: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut now) != 0 {
            return;
        }
        let h = now.sa_sigaction;
        if h == ours || h == libc::SIG_DFL || h == libc::SIG_IGN {
            return; // ours already, or no Python handler to stand in front of
        }
        PREV_FLAGS.store(now.sa_flags, Ordering::Relaxed);
        PREV_FN.store(h, Ordering::Release);
        let mut mine: libc::sigaction = std::mem::zeroed();
        mine.sa_sigaction = ours;
        mine.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | (now.sa_flags & libc::SA_RESTART);
        libc::sigemptyset(&mut mine.sa_mask);
        libc::sigaction(libc::SIGINT, &mine, std::ptr::null_mut());
    }
}

/// Whether the work under way should stop now: SIGINT came, and the
/// program's handler raised (the binding keeps the exception to re-raise).
/// One relaxed load when no signal came.
pub fn requested() -> bool {
    FLAG.load(Ordering::Relaxed) && HOOK.get().is_some_and(|ask| ask())
}

/// The flag, for kernel libraries to test between their tasks (prelude.hpp
/// StopHooks). It lives as long as the process.
pub fn flag_ptr() -> *const u8 {
    FLAG.as_ptr() as *const u8
}

/// `requested`, as a kernel library calls it once its dispatch saw the flag
/// and left tasks undone: 1 stops the kernel there, 0 runs the rest.
pub extern "C" fn stop_wanted() -> std::os::raw::c_int {
    requested() as std::os::raw::c_int
}

/// The binding consumed the signal (it ran the program's handler).
pub fn clear() {
    FLAG.store(false, Ordering::Relaxed);
}
