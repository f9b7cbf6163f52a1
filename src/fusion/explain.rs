//! Explain reports: per flush, the regions, the launches in each (workunit,
//! call site) and the rule that fused them, the refusals with their reasons,
//! the dead temporaries; the same as a Graphviz DOT graph; and the plan as
//! JSON for snapshots. A flush keeps only what its report can show; the text
//! is written when someone reads it (or at once under PK_FUSE_EXPLAIN=1):
//! flushes happen far more often than reports are read.
use super::cand::Cand;
use super::defer::{Deferred, Why};
use super::plan::{Plan, Refusal};
use crate::exec::launch::Origin;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use std::sync::{Arc, Mutex};

/// Launches listed per region, refusals listed, regions drawn: reports of
/// flushes with thousands of launches stay readable (and cheap to keep).
const SHOWN: usize = 8;
const SHOWN_REFUSALS: usize = 12;
const MAX_DOT_REGIONS: usize = 64;
const MAX_TEXT_REGIONS: usize = 24;
/// Flushes up to this size keep their whole plan (snapshots); larger ones
/// are summarized.
const SNAPSHOT_LAUNCHES: usize = 256;
/// Reports kept for `take_history`.
const HISTORY_LEN: usize = 256;

/// What a report says of one launch.
struct Shown {
    label: Arc<str>,
    joined_by: Option<String>,
    origin: Arc<dyn Origin>,
}

/// One flush, as its report needs it.
pub struct Flush {
    launches: usize,
    /// The first MAX_DOT_REGIONS regions, each its first SHOWN positions (all
    /// of them when `whole`), and every region's size.
    regions: Vec<Vec<usize>>,
    sizes: Vec<usize>,
    whole: bool,
    shown: BTreeMap<usize, Shown>,
    /// Dead temporaries per kept region, numbered by first use in the flush.
    dead: Vec<Vec<usize>>,
    /// The first SHOWN_REFUSALS refusals (reasons renumbered), their count,
    /// and the refusals drawn (both launches drawn).
    refusals: Vec<Refusal>,
    refusal_count: usize,
    drawn_refusals: Vec<(usize, usize, String)>,
    /// Dependencies among drawn launches.
    edges: Vec<(usize, usize)>,
    /// Per kept region, the deferral pass's facts (launch, why), buffers
    /// already numbered as the report numbers them.
    deferred: Vec<Vec<(usize, Why)>>,
    /// Launches dropped unrun as overwritten: label and origin (call site).
    overwritten: Vec<(Arc<str>, Arc<dyn Origin>)>,
}

static LAST: Mutex<Option<Arc<Flush>>> = Mutex::new(None);
static HISTORY: Mutex<Vec<Arc<Flush>>> = Mutex::new(Vec::new());

/// Keeps the report of one flush (printing it under PK_FUSE_EXPLAIN=1).
/// `info(k)` gives launch k's label and origin (its call site), asked only
/// for launches the report can show.
pub fn record(
    cands: &[Cand<'_>],
    plan: Plan,
    dead: &[Vec<usize>],
    deferred: &[Deferred],
    overwritten: &[(Arc<str>, Arc<dyn Origin>)],
    edges: &[(usize, usize)],
    info: &dyn Fn(usize) -> (Arc<str>, Arc<dyn Origin>),
) {
    // Allocation addresses differ run to run: number them by first use.
    let mut ids: HashMap<usize, usize> = HashMap::new();
    for c in cands {
        for v in &c.views {
            let n = ids.len();
            ids.entry(v.alloc).or_insert(n);
        }
    }
    let whole = cands.len() <= SNAPSHOT_LAUNCHES;
    let kept = if whole {
        plan.regions.len()
    } else {
        MAX_DOT_REGIONS
    };
    let regions: Vec<Vec<usize>> = plan
        .regions
        .iter()
        .take(kept)
        .map(|r| r.iter().take(if whole { r.len() } else { SHOWN }).copied())
        .map(Iterator::collect)
        .collect();
    let drawn: BTreeSet<usize> = regions
        .iter()
        .take(MAX_DOT_REGIONS)
        .flat_map(|r| r.iter().take(SHOWN).copied())
        .collect();
    let refusals: Vec<Refusal> = plan
        .refusals
        .iter()
        .take(SHOWN_REFUSALS)
        .map(|f| Refusal {
            reason: renumber(&f.reason, &ids),
            ..f.clone()
        })
        .collect();
    let number = |a: usize| ids.get(&a).copied().unwrap_or(a);
    let deferred: Vec<Vec<(usize, Why)>> = deferred
        .iter()
        .take(regions.len())
        .map(|d| {
            d.why
                .iter()
                .map(|(k, w)| (*k, w.renamed(&number)))
                .collect()
        })
        .collect();
    let mut wanted: BTreeSet<usize> = regions.iter().flatten().copied().collect();
    wanted.extend(refusals.iter().flat_map(|f| [f.launch, f.with]));
    wanted.extend(deferred.iter().flatten().map(|(k, _)| *k));
    let shown = wanted
        .into_iter()
        .map(|k| {
            let (label, origin) = info(k);
            let joined_by = plan.joined_by[k].clone();
            let s = Shown {
                label,
                joined_by,
                origin,
            };
            (k, s)
        })
        .collect();
    let number = |d: &Vec<usize>| {
        let mut n: Vec<usize> = d.iter().filter_map(|a| ids.get(a).copied()).collect();
        n.sort_unstable();
        n
    };
    let flush = Arc::new(Flush {
        launches: cands.len(),
        sizes: plan.regions.iter().map(Vec::len).collect(),
        dead: dead.iter().take(regions.len()).map(number).collect(),
        regions,
        whole,
        shown,
        refusal_count: plan.refusals.len(),
        drawn_refusals: plan
            .refusals
            .iter()
            .filter(|f| drawn.contains(&f.launch) && drawn.contains(&f.with))
            .map(|f| (f.with, f.launch, f.rule.clone()))
            .collect(),
        refusals,
        edges: edges
            .iter()
            .filter(|(a, b)| drawn.contains(a) && drawn.contains(b))
            .copied()
            .collect(),
        deferred,
        overwritten: overwritten.iter().take(SHOWN).cloned().collect(),
    });
    if crate::config::get().explain {
        eprint!("{}", flush.text());
    }
    {
        let mut h = HISTORY.lock().unwrap();
        if h.len() >= HISTORY_LEN {
            h.remove(0);
        }
        h.push(flush.clone());
    }
    *LAST.lock().unwrap() = Some(flush);
}

/// Buffer numbers in reasons are allocation addresses until here.
fn renumber(reason: &str, ids: &HashMap<usize, usize>) -> String {
    let mut out = String::with_capacity(reason.len());
    let mut rest = reason;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|a| ids.get(&a))
        {
            Some(n) => out.push_str(&n.to_string()),
            None => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

impl Flush {
    fn label(&self, k: usize) -> &str {
        self.shown.get(&k).map_or("?", |s| &s.label)
    }

    fn site(&self, k: usize) -> String {
        self.shown
            .get(&k)
            .map_or_else(|| "<unknown>".into(), |s| s.origin.site())
    }

    /// The text report.
    pub fn text(&self) -> String {
        let mut t = String::new();
        let count = self.sizes.len();
        let _ = writeln!(
            t,
            "flush: {} launch(es) -> {count} kernel(s)",
            self.launches
        );
        if count > MAX_TEXT_REGIONS {
            let _ = writeln!(
                t,
                "  ({count} regions; the first {MAX_TEXT_REGIONS} follow)"
            );
        }
        for (r, region) in self.regions.iter().enumerate().take(MAX_TEXT_REGIONS) {
            let len = self.sizes[r];
            let names: Vec<&str> = region.iter().take(SHOWN).map(|&k| self.label(k)).collect();
            let title = if len > SHOWN {
                format!("fused({len} launches: {}+...)", names.join("+"))
            } else if len > 1 {
                format!("fused({})", names.join("+"))
            } else {
                names[0].to_string()
            };
            let _ = writeln!(t, "  region {r}: {title}");
            if len > SHOWN {
                let _ = writeln!(t, "    ({len} launches; the first {SHOWN} follow)");
            }
            for &k in region.iter().take(SHOWN) {
                let how = self.shown[&k]
                    .joined_by
                    .as_deref()
                    .map(|x| format!("  [{x}]"))
                    .unwrap_or_default();
                let _ = writeln!(t, "    {} at {}{how}", self.label(k), self.site(k));
            }
            if let Some(d) = self.dead.get(r).filter(|d| !d.is_empty()) {
                let list: Vec<String> = d.iter().map(|n| format!("#{n}")).collect();
                let _ = writeln!(
                    t,
                    "    dead temporaries kept in registers (never allocated): {}",
                    list.join(", ")
                );
            }
            for (k, why) in self.deferred.get(r).into_iter().flatten() {
                let why = why.text(&|n| n);
                let _ = writeln!(t, "    {} at {}: {why}", self.label(*k), self.site(*k));
            }
        }
        for (label, origin) in &self.overwritten {
            let _ = writeln!(
                t,
                "  dropped unrun: {label} at {}: nothing can read what it wrote (a later launch writes it all again, or it fed only such launches)",
                origin.site()
            );
        }
        if self.refusal_count > SHOWN_REFUSALS {
            let _ = writeln!(
                t,
                "  ({} refusals; the first {SHOWN_REFUSALS} follow)",
                self.refusal_count
            );
        }
        for f in &self.refusals {
            let _ = writeln!(
                t,
                "  not fused: {} at {} after {} at {}: rule '{}': {}",
                self.label(f.launch),
                self.site(f.launch),
                self.label(f.with),
                self.site(f.with),
                f.rule,
                f.reason
            );
        }
        t
    }

    /// The same flush as a Graphviz DOT graph.
    pub fn dot(&self) -> String {
        let mut d = String::from(
            "digraph flush {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n",
        );
        for (r, region) in self.regions.iter().enumerate().take(MAX_DOT_REGIONS) {
            let _ = writeln!(
                d,
                "  subgraph cluster_{r} {{\n    label=\"region {r} ({} launches)\";",
                self.sizes[r]
            );
            for &k in region.iter().take(SHOWN) {
                let _ = writeln!(
                    d,
                    "    n{k} [label=\"{}\\n{}\"];",
                    self.label(k).replace('"', "'"),
                    self.site(k).replace('"', "'")
                );
            }
            d.push_str("  }\n");
        }
        for (a, b) in &self.edges {
            let _ = writeln!(d, "  n{a} -> n{b};");
        }
        for (with, launch, rule) in &self.drawn_refusals {
            let _ = writeln!(
                d,
                "  n{with} -> n{launch} [style=dashed, color=red, label=\"{rule}\"];"
            );
        }
        d.push_str("}\n");
        d
    }

    /// The plan as deterministic JSON: regions of launch labels, the rule that
    /// joined each launch, dead temporaries (large flushes: counts only).
    pub fn plan_json(&self) -> String {
        if !self.whole {
            return serde_json::json!({
                "launches": self.launches,
                "regions": self.sizes.len(),
                "region_sizes": self.sizes,
            })
            .to_string();
        }
        let regions: Vec<serde_json::Value> = self
            .regions
            .iter()
            .zip(&self.dead)
            .map(|(region, dead)| {
                serde_json::json!({
                    "launches": region.iter().map(|k| serde_json::json!({
                        "workunit": self.label(*k),
                        "joined_by": self.shown[k].joined_by,
                    })).collect::<Vec<_>>(),
                    "dead_temporaries": dead,
                })
            })
            .collect();
        serde_json::json!({"regions": regions}).to_string()
    }
}

/// The last flush's report and DOT graph.
pub fn last() -> Option<(String, String)> {
    let f = LAST.lock().unwrap().clone()?;
    Some((f.text(), f.dot()))
}

/// All (report, plan as JSON) pairs recorded since the previous call.
pub fn take_history() -> Vec<(String, String)> {
    let h = std::mem::take(&mut *HISTORY.lock().unwrap());
    h.iter().map(|f| (f.text(), f.plan_json())).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn buffer_addresses_become_numbers() {
        let ids = [(140001, 0), (140777, 3)].into_iter().collect();
        assert_eq!(
            super::renumber("buffers #140777 and #140001, not #9", &ids),
            "buffers #3 and #0, not #9"
        );
    }
}
