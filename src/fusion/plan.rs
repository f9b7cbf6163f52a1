//! Partitioning a flush into regions: launches in dependency order are taken
//! greedily into the current region while, with every member, the engine's
//! invariants hold and some rule fuses the pair; otherwise a new region starts
//! and the refusal is recorded.
use super::cand::Cand;
use super::invariants;
use super::legality::{conflicts, Conflict};
use super::rules::{Relation, Rule};
use crate::types::Pattern;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// Positions (in the flush order) of the later and the earlier launch.
    pub launch: usize,
    pub with: usize,
    /// The rule (or "engine" invariant, or "none") that refused.
    pub rule: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Plan {
    /// Positions in the flush order, per region.
    pub regions: Vec<Vec<usize>>,
    /// For each position, the rule that put it into its region (None: first of it).
    pub joined_by: Vec<Option<String>>,
    pub refusals: Vec<Refusal>,
}

fn kind(p: Pattern) -> &'static str {
    match p {
        Pattern::For => "for",
        Pattern::Reduce => "reduce",
        Pattern::Reducer(_) => "reduce (built-in reducer)",
        Pattern::Scan => "scan",
    }
}

/// Which rule fuses `b` after `a`, or (refuser, reason). `cs` is scratch space
/// for the conflicts, reused across pairs: planning checks every newcomer
/// against each member of the open region.
fn pair<'r>(
    rules: &'r [Rule],
    a: &Cand<'_>,
    b: &Cand<'_>,
    cs: &mut Vec<Conflict>,
) -> Result<&'r Rule, (String, String)> {
    conflicts(a, b, cs);
    let dependent = !cs.is_empty();
    invariants::check(a, b, dependent, cs)
        .map_err(|(name, why)| (format!("engine: {name}"), why))?;
    let relation = if dependent {
        Relation::Dependent
    } else {
        Relation::Independent
    };
    let mut first_failure: Option<(String, String)> = None;
    for r in rules {
        if r.relation != relation
            || !r.first.iter().any(|k| k.matches(a.pattern))
            || !r.second.iter().any(|k| k.matches(b.pattern))
        {
            continue;
        }
        match r.policy.iter().try_for_each(|(_, p)| p(a, b, cs)) {
            Ok(()) => return Ok(r),
            Err(why) => {
                first_failure.get_or_insert((r.name.clone(), why));
            }
        }
    }
    Err(first_failure.unwrap_or_else(|| {
        let rel = if dependent {
            "dependent"
        } else {
            "independent"
        };
        (
            "none".into(),
            format!(
                "no active rule fuses a {rel} {} -> {} pair",
                kind(a.pattern),
                kind(b.pattern)
            ),
        )
    }))
}

pub fn partition(rules: &[Rule], cands: &[Cand<'_>]) -> Plan {
    let mut plan = Plan {
        joined_by: vec![None; cands.len()],
        ..Default::default()
    };
    let mut current: Vec<usize> = Vec::new();
    let mut used_rules: Vec<&Rule> = Vec::new();
    let mut scratch = Vec::new();
    // The open region is one launch and exact repeats of it so far.
    let mut run = false;
    for (k, c) in cands.iter().enumerate() {
        if current.is_empty() {
            current.push(k);
            run = c.pattern == Pattern::For;
            continue;
        }
        // An exact repeat of a run's launch: what holds for the last pair
        // holds for every pair, and the run runs one body in a loop, so
        // neither the pairs nor the size limits need looking at again.
        if run && c.repeats_prev && current.last() == Some(&(k - 1)) {
            if let Ok(rule) = pair(rules, &cands[k - 1], c, &mut scratch) {
                plan.joined_by[k] = Some(rule.name.clone());
                current.push(k);
                continue;
            }
        }
        run = false;
        // A folded run of repeats and anything else stay apart.
        let folded = c.folded || current.iter().any(|&m| cands[m].folded);
        if folded {
            plan.refusals.push(Refusal {
                launch: k,
                with: *current.last().unwrap(),
                rule: "engine: repeats".into(),
                reason: "a run of repeated launches runs as its own looping kernel".into(),
            });
            plan.regions.push(std::mem::take(&mut current));
            used_rules.clear();
            current.push(k);
            run = c.pattern == Pattern::For;
            continue;
        }
        let mut joined: Option<&Rule> = None;
        let mut refusal = None;
        for &m in &current {
            match pair(rules, &cands[m], c, &mut scratch) {
                Ok(rule) => {
                    // The first dependent rule names the join; else the last independent one.
                    if joined.is_none_or(|j| j.relation == Relation::Independent) {
                        joined = Some(rule);
                    }
                }
                Err((rule, reason)) => {
                    refusal = Some(Refusal {
                        launch: k,
                        with: m,
                        rule,
                        reason,
                    });
                    break;
                }
            }
        }
        if refusal.is_none() {
            let rule = joined.expect("a newcomer without a refusal was joined by a rule");
            let stmts: usize =
                current.iter().map(|m| cands[*m].statements).sum::<usize>() + c.statements;
            let limits = used_rules.iter().copied().chain(std::iter::once(rule));
            let (max_l, max_s) = limits.fold((usize::MAX, usize::MAX), |(l, s), r| {
                (l.min(r.limits.max_launches), s.min(r.limits.max_statements))
            });
            if current.len() + 1 > max_l || stmts > max_s {
                refusal = Some(Refusal {
                    launch: k,
                    with: *current.last().unwrap(),
                    rule: rule.name.clone(),
                    reason: format!(
                        "profitability: the region would hold {} launches and {stmts} statements (limits {max_l} and {max_s})",
                        current.len() + 1
                    ),
                });
            } else {
                used_rules.push(rule);
                plan.joined_by[k] = Some(rule.name.clone());
                current.push(k);
                continue;
            }
        }
        plan.refusals.extend(refusal);
        plan.regions.push(std::mem::take(&mut current));
        used_rules.clear();
        current.push(k);
        run = c.pattern == Pattern::For;
    }
    if !current.is_empty() {
        plan.regions.push(current);
    }
    plan
}
