//! A launch as the planner sees it: pattern, space, range, and per view
//! argument its allocation, byte range, geometry, access facts and liveness.
use crate::analysis::access::Access;
use crate::exec::launch::Launch;
use crate::frontend::source::SourceInfo;
use crate::types::{Pattern, Space};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use crate::exec::facts::{Geometry, Life};

/// One view argument of a launch.
#[derive(Clone, Debug)]
pub struct ViewUse<'a> {
    pub name: &'a str,
    pub arg: usize,
    /// Allocation identity and byte range touched.
    pub alloc: usize,
    pub range: (isize, isize),
    pub geometry: Geometry,
    pub access: Access,
    pub life: Life,
}

#[derive(Clone)]
pub struct Cand<'a> {
    pub label: &'a str,
    pub pattern: Pattern,
    pub space: Space,
    pub lo: &'a [i64],
    pub hi: &'a [i64],
    pub views: Vec<ViewUse<'a>>,
    pub statements: usize,
    /// A TeamPolicy launch (never fused).
    pub team: bool,
    /// The workunit's source, to quote the access that refuses a fusion.
    pub src: Arc<SourceInfo>,
    /// A for that repeats the launch just before it exactly (see
    /// `Launch::repeats`): a run of them runs as one kernel that loops.
    pub repeats_prev: bool,
    /// It stands for several launches in a row (repeats folded into it when
    /// recorded): it fuses with nothing but more repeats of itself.
    pub folded: bool,
}

/// The candidate of a pending launch, given its per-argument access facts.
pub fn of_launch<'a>(l: &'a Launch, access: &BTreeMap<String, Access>) -> Cand<'a> {
    let wu = l.workunit();
    let mut views = Vec::new();
    for (f, alloc) in l.view_facts() {
        let name = &l.names[f.arg];
        if let Some(a) = access.get(name) {
            views.push(ViewUse {
                name,
                arg: f.arg,
                alloc: f.alloc,
                range: f.range,
                geometry: f.geometry,
                access: *a,
                life: Life::of(alloc),
            });
        }
    }
    Cand {
        label: &l.label,
        pattern: l.key.pattern,
        space: l.key.space,
        lo: &l.lo,
        hi: &l.hi,
        views,
        statements: wu.statement_count(),
        team: l.key.rank == 0,
        src: wu.src.clone(),
        repeats_prev: false,
        folded: false,
    }
}

/// Who touches each allocation in a flush: (position, view use), in program order.
pub type Users<'c, 'a> = HashMap<usize, Vec<(usize, &'c ViewUse<'a>)>>;

pub fn users<'c, 'a>(cands: &'c [Cand<'a>]) -> Users<'c, 'a> {
    let mut out: Users<'c, 'a> = HashMap::new();
    for (k, c) in cands.iter().enumerate() {
        for u in &c.views {
            out.entry(u.alloc).or_default().push((k, u));
        }
    }
    out
}
