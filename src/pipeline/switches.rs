//! `PK_FUSION_DISABLE`'s names: fusion rules (of the active rule files) and
//! the passes and learners that can be switched off by name.
use crate::errors::{PkError, PkResult};
use std::sync::OnceLock;

/// The learners `PK_FUSION_DISABLE` left on. The configuration is the
/// process's, read once: these are asked on every launch.
pub struct On {
    /// alone.rs (and with it cost.rs).
    pub adaptive: bool,
    /// cost.rs.
    pub adaptive_cost: bool,
    pub tape: bool,
    /// plan_cache.rs (`plan_cache`: every flush is planned afresh).
    pub plan_cache: bool,
}

#[inline]
pub fn on() -> &'static On {
    static ON: OnceLock<On> = OnceLock::new();
    ON.get_or_init(|| {
        let c = crate::config::get();
        let adaptive = !c.is_disabled("adaptive");
        On {
            adaptive,
            adaptive_cost: adaptive && !c.is_disabled("adaptive_cost"),
            tape: !c.is_disabled("tape"),
            plan_cache: !c.is_disabled("plan_cache"),
        }
    })
}

/// Passes and learners `PK_FUSION_DISABLE` can switch off besides the rules.
const SWITCHES: &[&str] = &[
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
