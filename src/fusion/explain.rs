//! Explain reports: per flush, the regions, the launches in each (workunit,
//! call site) and the rule that fused them, the refusals with their reasons,
//! the dead temporaries; and the same as a Graphviz DOT graph.
use super::cand::Cand;
use super::plan::Plan;
use std::collections::{BTreeMap, BTreeSet};

/// Launches listed per region, refusals listed, regions drawn: reports of
/// flushes with thousands of launches stay readable (and cheap to build).
const SHOWN: usize = 8;
const SHOWN_REFUSALS: usize = 12;
const MAX_DOT_REGIONS: usize = 64;
const MAX_TEXT_REGIONS: usize = 24;
use std::fmt::Write;
use std::sync::Mutex;

pub struct Report {
    pub text: String,
    pub dot: String,
}

static LAST: Mutex<Option<Report>> = Mutex::new(None);
/// Reports and plan snapshots since the last `take_history` (bounded), for
/// tests and tools.
static HISTORY: Mutex<Vec<(String, PlanParts)>> = Mutex::new(Vec::new());

/// Launches a plan snapshot lists by name: larger flushes are summarized.
const SNAPSHOT_LAUNCHES: usize = 256;

/// Records (and with PK_FUSE_EXPLAIN=1 prints) the report of one flush.
/// `site(k)` is the call site of launch k ("file:line"), asked only for the
/// launches the report shows.
pub fn record(
    cands: &[Cand<'_>],
    plan: &Plan,
    dead: &[Vec<usize>],
    edges: &[(usize, usize)],
    site: &dyn Fn(usize) -> String,
) {
    let mut ids: BTreeMap<usize, usize> = BTreeMap::new();
    for c in cands {
        for v in &c.views {
            let n = ids.len();
            ids.entry(v.alloc).or_insert(n);
        }
    }
    let mut t = String::new();
    let _ = writeln!(
        t,
        "flush: {} launch(es) -> {} kernel(s)",
        cands.len(),
        plan.regions.len()
    );
    // Formatting a call site asks Python for the line: list few regions.
    if plan.regions.len() > MAX_TEXT_REGIONS {
        let _ = writeln!(
            t,
            "  ({} regions; the first {MAX_TEXT_REGIONS} follow)",
            plan.regions.len()
        );
    }
    for (r, region) in plan.regions.iter().enumerate().take(MAX_TEXT_REGIONS) {
        let names: Vec<&str> = region.iter().map(|&k| cands[k].label).collect();
        let title = if region.len() > 1 {
            format!("fused({})", names.join("+"))
        } else {
            names[0].to_string()
        };
        let title = if region.len() > SHOWN {
            format!(
                "fused({} launches: {}+...)",
                region.len(),
                names[..SHOWN].join("+")
            )
        } else {
            title
        };
        let _ = writeln!(t, "  region {r}: {title}");
        if region.len() > SHOWN {
            let _ = writeln!(
                t,
                "    ({} launches; the first {SHOWN} follow)",
                region.len()
            );
        }
        for &k in region.iter().take(SHOWN) {
            let how = plan.joined_by[k]
                .as_deref()
                .map(|x| format!("  [{x}]"))
                .unwrap_or_default();
            let _ = writeln!(t, "    {} at {}{how}", cands[k].label, site(k));
        }
        if let Some(d) = dead.get(r).filter(|d| !d.is_empty()) {
            let mut nums: Vec<usize> = d
                .iter()
                .map(|a| ids.get(a).copied().unwrap_or(usize::MAX))
                .collect();
            nums.sort_unstable();
            let list: Vec<String> = nums.iter().map(|n| format!("#{n}")).collect();
            let _ = writeln!(
                t,
                "    dead temporaries kept in registers (never allocated): {}",
                list.join(", ")
            );
        }
    }
    if plan.refusals.len() > SHOWN_REFUSALS {
        let _ = writeln!(
            t,
            "  ({} refusals; the first {SHOWN_REFUSALS} follow)",
            plan.refusals.len()
        );
    }
    for f in plan.refusals.iter().take(SHOWN_REFUSALS) {
        let (a, b) = (&cands[f.with], &cands[f.launch]);
        let _ = writeln!(
            t,
            "  not fused: {} at {} after {} at {}: rule '{}': {}",
            b.label,
            site(f.launch),
            a.label,
            site(f.with),
            f.rule,
            renumber(&f.reason, &ids)
        );
    }
    let mut d = String::from(
        "digraph flush {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    let shown: BTreeSet<usize> = plan
        .regions
        .iter()
        .take(MAX_DOT_REGIONS)
        .flat_map(|r| r.iter().take(SHOWN).copied())
        .collect();
    for (r, region) in plan.regions.iter().enumerate().take(MAX_DOT_REGIONS) {
        let _ = writeln!(
            d,
            "  subgraph cluster_{r} {{\n    label=\"region {r} ({} launches)\";",
            region.len()
        );
        for &k in region.iter().take(SHOWN) {
            let _ = writeln!(
                d,
                "    n{k} [label=\"{}\\n{}\"];",
                cands[k].label.replace('"', "'"),
                site(k).replace('"', "'")
            );
        }
        d.push_str("  }\n");
    }
    for (a, b) in edges
        .iter()
        .filter(|(a, b)| shown.contains(a) && shown.contains(b))
    {
        let _ = writeln!(d, "  n{a} -> n{b};");
    }
    for f in plan
        .refusals
        .iter()
        .filter(|f| shown.contains(&f.launch) && shown.contains(&f.with))
    {
        let _ = writeln!(
            d,
            "  n{} -> n{} [style=dashed, color=red, label=\"{}\"];",
            f.with, f.launch, f.rule
        );
    }
    d.push_str("}\n");
    if crate::config::get().explain {
        eprint!("{t}");
    }
    let snapshot = plan_snapshot(cands, plan, dead, &ids);
    {
        let mut h = HISTORY.lock().unwrap();
        if h.len() >= 256 {
            h.remove(0);
        }
        h.push((t.clone(), snapshot));
    }
    *LAST.lock().unwrap() = Some(Report { text: t, dot: d });
}

/// Buffer numbers in reasons are allocation addresses until here.
fn renumber(reason: &str, ids: &BTreeMap<usize, usize>) -> String {
    let mut out = reason.to_string();
    for (addr, n) in ids {
        out = out.replace(&format!("#{addr}"), &format!("#{n}"));
    }
    out
}

/// The last flush's report and DOT graph.
pub fn last() -> Option<(String, String)> {
    LAST.lock()
        .unwrap()
        .as_ref()
        .map(|r| (r.text.clone(), r.dot.clone()))
}

/// All (report, plan as JSON) pairs recorded since the previous call.
pub fn take_history() -> Vec<(String, String)> {
    let h = std::mem::take(&mut *HISTORY.lock().unwrap());
    h.into_iter().map(|(t, p)| (t, p.json())).collect()
}

/// What a plan snapshot shows, kept raw: flushes happen far more often than
/// anyone reads their history, so the JSON is written on demand.
struct PlanParts {
    launches: usize,
    labels: Vec<String>,
    regions: Vec<Vec<usize>>,
    joined_by: Vec<Option<String>>,
    dead: Vec<Vec<usize>>,
}

impl PlanParts {
    fn json(&self) -> String {
        if self.labels.len() < self.launches {
            return serde_json::json!({"launches": self.launches, "regions": self.regions.len()})
                .to_string();
        }
        let regions: Vec<serde_json::Value> = self
            .regions
            .iter()
            .enumerate()
            .map(|(r, region)| {
                serde_json::json!({
                    "launches": region.iter().map(|&k| serde_json::json!({
                        "workunit": self.labels[k],
                        "joined_by": self.joined_by[k],
                    })).collect::<Vec<_>>(),
                    "dead_temporaries": self.dead.get(r).cloned().unwrap_or_default(),
                })
            })
            .collect();
        serde_json::json!({"regions": regions}).to_string()
    }
}

/// The plan of one flush: regions of launch labels, the rule that joined each
/// launch, dead temporaries numbered by first use (large flushes: counts only).
fn plan_snapshot(
    cands: &[Cand<'_>],
    plan: &Plan,
    dead: &[Vec<usize>],
    ids: &BTreeMap<usize, usize>,
) -> PlanParts {
    let small = cands.len() <= SNAPSHOT_LAUNCHES;
    PlanParts {
        launches: cands.len(),
        labels: if small {
            cands.iter().map(|c| c.label.to_string()).collect()
        } else {
            Vec::new()
        },
        regions: plan.regions.clone(),
        joined_by: if small {
            plan.joined_by.clone()
        } else {
            Vec::new()
        },
        dead: dead
            .iter()
            .map(|d| {
                let mut n: Vec<usize> = d.iter().filter_map(|a| ids.get(a).copied()).collect();
                n.sort_unstable();
                n
            })
            .collect(),
    }
}
