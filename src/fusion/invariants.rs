//! What fused code relies on, enforced by the engine whatever the rule files
//! say: one work item of the fused kernel runs every body at the same index,
//! so the launches must share space, range and dimensionality, be neither
//! scans nor team launches, and touch what they share only at the work index.
use super::cand::Cand;
use super::legality::{self, Check, Conflict};

/// (name, check, whether it applies to independent pairs too).
pub const INVARIANTS: &[(&str, Check, bool)] = &[
    ("no_team", legality::no_team, true),
    ("no_scan", legality::no_scan, true),
    ("same_space", legality::same_space, true),
    ("one_dimensional", legality::one_dimensional, true),
    ("same_range", legality::same_range, true),
    ("work_index_access", legality::work_index_access, false),
];

/// Ok, or the failing invariant's name and the reason.
pub fn check(
    a: &Cand<'_>,
    b: &Cand<'_>,
    dependent: bool,
    cs: &[Conflict],
) -> Result<(), (&'static str, String)> {
    for (name, f, always) in INVARIANTS {
        if *always || dependent {
            f(a, b, cs).map_err(|why| (*name, why))?;
        }
    }
    Ok(())
}

/// Whether `name` is an engine invariant (rule files may list them; they
/// hold anyway).
pub fn is_invariant(name: &str) -> bool {
    INVARIANTS.iter().any(|(n, _, _)| *n == name)
}
