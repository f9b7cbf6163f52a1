//! Partitioning a flush into regions: launches in dependency order are taken
//! greedily into the current region while some rule fuses the newcomer with
//! every member; otherwise a new region starts and the refusal is recorded.
use super::legality::{check, conflicts, Conflict};
use super::rules::Rule;
use crate::codegen::{Pattern, Space};
use crate::lazy::access::Access;

/// Offset, extents, strides and dtype of a view: equal geometry on one
/// allocation means `v[i]` is the same element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub offset: isize,
    pub rank: u8,
    pub extent: [i64; 8],
    pub stride: [i64; 8],
    pub dtype: u8,
}

/// One view argument of a launch, as fusion sees it.
#[derive(Clone, Debug)]
pub struct ViewUse<'a> {
    pub name: &'a str,
    pub arg: usize,
    /// Allocation identity and byte range touched.
    pub alloc: usize,
    pub range: (isize, isize),
    pub geometry: Geometry,
    pub access: Access,
}

/// A launch as the planner sees it (borrowing from the pending launch).
#[derive(Clone)]
pub struct Cand<'a> {
    pub label: &'a str,
    /// Formatted only for what a report shows.
    pub site: &'a crate::lazy::Launch,
    pub pattern: Pattern,
    pub space: Space,
    pub lo: &'a [i64],
    pub hi: &'a [i64],
    pub views: Vec<ViewUse<'a>>,
    pub statements: usize,
    /// A TeamPolicy launch (never fused).
    pub team: bool,
    /// The workunit's source, to quote the access that refuses a fusion.
    pub src: std::sync::Arc<crate::frontend::source::SourceInfo>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Refusal {
    /// Positions (in the flush order) of the later and the earlier launch.
    pub launch: usize,
    pub with: usize,
    pub rule: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
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
        Pattern::Scan => "scan",
    }
}

/// Which rule fuses `b` after `a`, or why none does.
/// `cs` is scratch space for the conflicts (reused across pairs: planning a
/// flush checks every newcomer against each member of the open region).
fn pair<'r>(
    rules: &'r [Rule],
    a: &Cand<'_>,
    b: &Cand<'_>,
    cs: &mut Vec<Conflict>,
) -> Result<&'r Rule, (String, String)> {
    // Whatever the rules say: a team kernel has no work index to merge on.
    if a.team || b.team {
        return Err((
            "team_policy".into(),
            "TeamPolicy launches are never fused".into(),
        ));
    }
    conflicts(a, b, cs);
    let relation = if cs.is_empty() {
        "independent"
    } else {
        "dependent"
    };
    let mut first_failure: Option<(String, String)> = None;
    for r in rules {
        if r.relation != relation
            || !r.first.iter().any(|k| k == kind(a.pattern))
            || !r.second.iter().any(|k| k == kind(b.pattern))
        {
            continue;
        }
        match r.preds.iter().try_for_each(|p| check(*p, a, b, cs)) {
            Ok(()) => return Ok(r),
            Err(why) => {
                first_failure.get_or_insert((r.name.clone(), why));
            }
        }
    }
    Err(first_failure.unwrap_or_else(|| {
        (
            "none".into(),
            format!(
                "no active rule fuses a {relation} {} -> {} pair",
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
    for (k, c) in cands.iter().enumerate() {
        if current.is_empty() {
            current.push(k);
            continue;
        }
        let mut joined: Option<&Rule> = None;
        let mut refusal = None;
        for &m in &current {
            match pair(rules, &cands[m], c, &mut scratch) {
                Ok(rule) => {
                    // The first dependent rule names the join; else the last independent one.
                    if joined.is_none_or(|j| j.relation == "independent") {
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
    }
    if !current.is_empty() {
        plan.regions.push(current);
    }
    plan
}
