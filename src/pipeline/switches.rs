//! `PK_FUSION_DISABLE`'s names: fusion rules (of the active rule files) and
//! the passes and learners that can be switched off by name.
use crate::errors::{PkError, PkResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The learners `PK_FUSION_DISABLE` left on. The configuration is the
/// process's, read once: these are asked on every launch.
pub struct On {
    /// Running at once (memo/slots.rs, and with it cost.rs).
    pub adaptive: bool,
    /// cost.rs.
    pub adaptive_cost: bool,
    /// Learned flushes (memo/hold.rs).
    pub tape: bool,
    /// Plans by shape (memo/plans.rs; off: every flush is planned afresh).
    pub plan_cache: bool,
    /// Learned flushes switched off for now (`pk._native.set_tape`: tests
    /// that count flushes).
    pub tape_paused: AtomicBool,
    /// Lazy mode fuses regions unless `PK_FUSE_NOFUSE=1` (or a test
    /// switched it off: `set_fusing`).
    pub no_fuse: AtomicBool,
}

#[inline]
pub fn on() -> &'static On {
    static ON: OnceLock<On> = OnceLock::new();
    ON.get_or_init(|| {
        let c = crate::config::get();
        // `memo` is all of the memo; the older names are its parts.
        let on = |name| !c.is_disabled("memo") && !c.is_disabled(name);
        let adaptive = on("adaptive");
        On {
            adaptive,
            adaptive_cost: adaptive && on("adaptive_cost"),
            tape: on("tape"),
            plan_cache: on("plan_cache"),
            tape_paused: AtomicBool::new(false),
            no_fuse: c.no_fuse.into(),
        }
    })
}

/// Whether fusion is off for now (`no_fuse`).
#[inline]
pub fn fusing_off() -> bool {
    on().no_fuse.load(Ordering::Relaxed)
}

/// Passes and learners `PK_FUSION_DISABLE` can switch off besides the rules.
const SWITCHES: &[&str] = &[
    "memo",
    "adaptive",
    "adaptive_cost",
    "tape",
    "plan_cache",
    crate::fusion::dead::PASS,
    crate::fusion::defer::PASS,
    crate::fusion::overwritten::PASS,
];

/// `PK_FUSION_DISABLE` names only rules and switches that exist: a typo
/// would otherwise switch nothing off without a word (checked at import).
pub fn check_disabled() -> PkResult<()> {
    let disabled = &crate::config::get().disabled;
    if disabled.is_empty() {
        return Ok(());
    }
    let mut known = crate::fusion::rules::all_names()?;
    known.extend(SWITCHES.iter().map(|s| s.to_string()));
    if let Some(bad) = disabled.iter().find(|d| !known.contains(d)) {
        known.sort();
        return Err(PkError::Environment(format!(
            "PK_FUSION_DISABLE names '{bad}', which is no fusion rule or pass; the names are: {}",
            known.join(", ")
        )));
    }
    Ok(())
}
