//! Explain reports: per flush, the regions, the launches in each (workunit,
//! call site) and the rule that fused them, the refusals with their reasons,
//! the dead temporaries; the same as a Graphviz DOT graph; and the plan as
//! JSON for snapshots. A flush keeps only what its report can show; the text
//! is written when someone reads it (or at once under PK_FUSE_EXPLAIN=1):
//! flushes happen far more often than reports are read.
mod text;

use super::cand::Cand;
use super::defer::{Deferred, Why};
use super::plan::{Plan, Refusal};
use super::renumber::renumber;
use crate::exec::launch::Origin;
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt::Write;
use std::sync::Arc;

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

/// One flush's plan as its report needs it, without the launches' call
/// sites: the same for every flush of the same shape, so a cached plan
/// keeps it (see pipeline/memo/plans.rs).
#[derive(Debug, PartialEq)]
pub struct Summary {
    launches: usize,
    /// The first MAX_DOT_REGIONS regions, each its first SHOWN positions (all
    /// of them when `whole`), and every region's size.
    regions: Vec<Vec<usize>>,
    sizes: Vec<usize>,
    whole: bool,
    /// The launches the report shows, with the rule that joined each one.
    joined: BTreeMap<usize, Option<String>>,
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
}

impl Summary {
    /// The launches (positions) whose labels and call sites the report shows.
    pub fn shown(&self) -> impl Iterator<Item = usize> + '_ {
        self.joined.keys().copied()
    }

    /// The same report but, perhaps, for the edges drawn: those come from
    /// the DAG, whose redundant edges depend on what was pending before.
    pub fn agrees(&self, o: &Summary) -> bool {
        self.launches == o.launches
            && self.regions == o.regions
            && self.sizes == o.sizes
            && self.whole == o.whole
            && self.joined == o.joined
            && self.dead == o.dead
            && self.refusals == o.refusals
            && self.refusal_count == o.refusal_count
            && self.drawn_refusals == o.drawn_refusals
            && self.deferred == o.deferred
    }
}

/// One flush: its summary, and the label and call site of each launch shown.
pub struct Flush {
    summary: Arc<Summary>,
    sites: BTreeMap<usize, (Arc<str>, Arc<dyn Origin>)>,
    /// Launches dropped unrun as overwritten: label and origin (call site).
    overwritten: Vec<(Arc<str>, Arc<dyn Origin>)>,
}

impl std::ops::Deref for Flush {
    type Target = Summary;
    fn deref(&self) -> &Summary {
        &self.summary
    }
}

static LAST: Mutex<Option<Arc<Flush>>> = Mutex::new(None);
static HISTORY: Mutex<VecDeque<Arc<Flush>>> = Mutex::new(VecDeque::new());

/// What the report of one flush says, but for call sites.
pub fn summarize(
    cands: &[Cand<'_>],
    plan: Plan,
    dead: &[Vec<usize>],
    deferred: &[Deferred],
    edges: &[(usize, usize)],
) -> Arc<Summary> {
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
    let joined = wanted
        .into_iter()
        .map(|k| (k, plan.joined_by[k].clone()))
        .collect();
    let number = |d: &Vec<usize>| {
        let mut n: Vec<usize> = d.iter().filter_map(|a| ids.get(a).copied()).collect();
        n.sort_unstable();
        n
    };
    Arc::new(Summary {
        launches: cands.len(),
        sizes: plan.regions.iter().map(Vec::len).collect(),
        dead: dead.iter().take(regions.len()).map(number).collect(),
        regions,
        whole,
        joined,
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
    })
}

/// A launch's label and origin (its call site).
pub type Site<'a> = (&'a Arc<str>, &'a Arc<dyn Origin>);
/// Keeps the report of one flush (printing it under PK_FUSE_EXPLAIN=1).
/// `info(k)`: launch k's label and origin, asked for launches the report shows;
/// `overwritten`: those of the launches dropped unrun. A loop's flushes repeat
/// a report (a replayed plan, the same call sites): the last one is kept again.
pub fn keep<'a>(
    summary: Arc<Summary>,
    overwritten: &mut dyn Iterator<Item = Site<'a>>,
    info: &dyn Fn(usize) -> Site<'a>,
) {
    let same_site = |a: Site<'_>, b: &(Arc<str>, Arc<dyn Origin>)| {
        Arc::ptr_eq(a.0, &b.0) && std::ptr::addr_eq(Arc::as_ptr(a.1), Arc::as_ptr(&b.1))
    };
    let overwritten: Vec<Site<'a>> = overwritten.take(SHOWN).collect();
    let last = LAST.lock().clone();
    let again = last.filter(|f| {
        Arc::ptr_eq(&f.summary, &summary)
            && f.sites.iter().all(|(&k, s)| same_site(info(k), s))
            && f.overwritten.len() == overwritten.len()
            && overwritten
                .iter()
                .zip(&f.overwritten)
                .all(|(&a, b)| same_site(a, b))
    });
    let flush = again.unwrap_or_else(|| {
        let own = |(l, o): Site<'_>| (l.clone(), o.clone());
        Arc::new(Flush {
            sites: summary.shown().map(|k| (k, own(info(k)))).collect(),
            summary,
            overwritten: overwritten.into_iter().map(own).collect(),
        })
    });
    if crate::config::get().explain {
        eprint!("{}", flush.brief());
    }
    let mut h = HISTORY.lock();
    if h.len() >= HISTORY_LEN {
        h.pop_front();
    }
    h.push_back(flush.clone());
    *LAST.lock() = Some(flush);
}

impl Flush {
    fn label(&self, k: usize) -> &str {
        self.sites.get(&k).map_or("?", |s| &s.0)
    }

    fn site(&self, k: usize) -> String {
        self.sites
            .get(&k)
            .map_or_else(|| "<unknown>".into(), |s| s.1.site())
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
                        "joined_by": self.joined[k],
                    })).collect::<Vec<_>>(),
                    "dead_temporaries": dead,
                })
            })
            .collect();
        serde_json::json!({"regions": regions}).to_string()
    }
}

/// The last flush's report and DOT graph.
pub fn last(verbose: bool) -> Option<(String, String)> {
    let f = LAST.lock().clone()?;
    Some((if verbose { f.text() } else { f.brief() }, f.dot()))
}

/// All (report, plan as JSON) pairs recorded since the previous call (a
/// report kept again, see `keep`, is written once); the reports list every
/// launch shown (tests read them).
pub fn take_history() -> Vec<(String, String)> {
    let h = std::mem::take(&mut *HISTORY.lock());
    let mut texts: HashMap<*const Flush, (String, String)> = HashMap::new();
    h.iter()
        .map(|f| {
            texts
                .entry(Arc::as_ptr(f))
                .or_insert_with(|| (f.text(), f.plan_json()))
                .clone()
        })
        .collect()
}
