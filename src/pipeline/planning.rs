//! The flush's planning stage: a cached plan of the flush's shape, else
//! candidates -> overwritten launches dropped -> the rest settled into
//! regions (settle.rs) -> explain.
use super::memo::plans::{self, Cached, Memo};
use super::memo::program::{self, Lesson};
use super::memo::shape::{self, Shape};
use super::settle::{repeats, settle, verdicts, Settled};
use crate::errors::{PkError, PkResult};
use crate::fusion::{cand, explain, overwritten};
use crate::lazy::deferral::{self, Verdict};
use crate::lazy::graph::{Demand, Node};
use crate::lazy::unobserved;
use crate::types::Pattern;
use std::collections::BTreeSet;
use std::sync::Arc;

/// One region of a flush, in program order.
pub struct Region {
    pub seqs: Vec<u64>,
    /// Allocations its fused kernel keeps in registers: dead temporaries and
    /// the outputs of its deferred launches.
    pub registers: BTreeSet<usize>,
    /// Launches it computes but leaves pending (a subset of `seqs`).
    pub deferred: Vec<u64>,
    /// Its fused kernel, kept with a cached plan (memo/plans.rs).
    pub memo: Option<Memo>,
    pub strategy: Strategy,
}

/// How a region runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Strategy {
    /// Launches in a row that repeat one `for` launch exactly (and the
    /// repeats folded into them when recorded): one kernel that loops.
    Repeat,
    /// Several launches: one fused kernel.
    Fused,
    /// One launch: its own kernel.
    Single,
}

/// The strategy of a region of these launches, in program order.
fn strategy(nodes: &[&Arc<Node>]) -> Strategy {
    let count: usize = nodes.iter().map(|n| n.count()).sum();
    let repeated = nodes[0].launch.key.pattern == Pattern::For
        && nodes.windows(2).all(|w| w[1].launch.repeats(&w[0].launch));
    match (count > 1 && repeated, nodes.len() > 1) {
        (true, _) => Strategy::Repeat,
        (false, true) => Strategy::Fused,
        (false, false) => Strategy::Single,
    }
}

/// What a flush runs: its regions, and the launches it dropped unrun.
pub struct Planned {
    pub regions: Vec<Region>,
    pub overwritten: Vec<Arc<Node>>,
    /// The plan of an earlier flush of the same shape (memo/plans.rs).
    pub replayed: bool,
    /// What the memo learns from it, if it is one fused region of every
    /// pending launch (memo/hold.rs).
    pub lesson: Option<Lesson>,
}

/// Partitions a flush into regions (one per launch when fusion is off): a
/// cached plan of the same shape when there is one (memo/plans.rs), else
/// overwritten launches dropped -> the rest settled into regions.
pub fn plan(nodes: &[Arc<Node>], demand: &Demand<'_>) -> PkResult<Planned> {
    if super::switches::fusing_off() {
        let regions = nodes.iter().map(single).collect();
        return Ok(Planned {
            regions,
            overwritten: Vec::new(),
            replayed: false,
            lesson: None,
        });
    }
    let _span = tracing::info_span!("plan", launches = nodes.len()).entered();
    let shape = match super::switches::on().plan_cache {
        true => shape::shape(nodes, demand),
        false => None,
    };
    // Read once: settling reads it for each launch, and it may change
    // meanwhile (other threads' launches measure and decide).
    let bypass = super::cost::bypassing();
    if let Some(hit) = shape.as_ref().and_then(|s| plans::get(s, nodes)) {
        // The cost model changed its mind since (its verdicts are part of
        // the plan): planned afresh below, and cached in its place.
        if !hit.gone.is_empty() || verdicts(nodes, bypass) == hit.verdicts {
            let shape = shape.as_ref().expect("hit");
            return replay(&hit, shape, nodes, demand, bypass);
        }
    }
    let mut cands = candidates(nodes);
    let gone = overwritten_pass(&cands, nodes);
    let (kept, taken) = drop_overwritten(nodes, &gone);
    if !taken.is_empty() {
        let out: BTreeSet<u64> = taken.iter().map(|n| n.seq).collect();
        let mut k = 0;
        cands.retain(|_| {
            k += 1;
            !out.contains(&nodes[k - 1].seq)
        });
    }
    let s = settle(cands, &kept, demand, false, bypass)?;
    let retry = s.verdicts.contains(&Verdict::Retry);
    let Some(shape) = shape.filter(|_| !retry) else {
        return Ok(settled(&kept, taken, s, None));
    };
    let fresh: Vec<Memo> = s.regions.iter().map(|_| Memo::default()).collect();
    let cached = Cached {
        taken: positions(nodes, &taken),
        gone,
        repeats: s.repeats.clone(),
        verdicts: s.verdicts.clone(),
        asked: s.asked.clone(),
        regions: s.regions.clone(),
        registers: numbered(&shape, &s.registers),
        deferred: s.deferred.clone(),
        summary: s.summary.clone(),
        memos: fresh.clone(),
    };
    // Only a shape whose every register allocation has a number replays.
    let numbers_all = |(a, b): (&Vec<usize>, &BTreeSet<usize>)| a.len() == b.len();
    if !cached.registers.iter().zip(&s.registers).all(numbers_all) {
        return Ok(settled(&kept, taken, s, None));
    }
    let mut planned = settled(&kept, taken, s, Some(&fresh));
    planned.lesson = lesson(&shape, nodes, &planned);
    plans::put(shape, nodes, cached);
    Ok(planned)
}

/// What the memo learns from a plan of all of `nodes` as one fused region,
/// or as one region per launch (memo/hold.rs).
fn lesson(shape: &Shape<'_>, nodes: &[Arc<Node>], planned: &Planned) -> Option<Lesson> {
    let regions = &planned.regions[..];
    let plain = |r: &Region| r.deferred.is_empty() && r.strategy != Strategy::Repeat;
    if !planned.overwritten.is_empty() || !regions.iter().all(plain) {
        return None;
    }
    match regions {
        [region] if region.seqs.len() == nodes.len() => {
            program::lesson(shape, nodes, Some(region.memo.as_ref()?))
        }
        _ if regions.len() == nodes.len() => program::lesson(shape, nodes, None),
        _ => None,
    }
}

/// A cached plan replayed on a flush of its shape. Under `PK_VERIFY=1` the
/// flush is planned afresh as well, and the two must agree.
fn replay(
    hit: &Cached,
    shape: &Shape<'_>,
    nodes: &[Arc<Node>],
    demand: &Demand<'_>,
    bypass: bool,
) -> PkResult<Planned> {
    let verify = crate::config::get().verify;
    if verify && overwritten_pass(&candidates(nodes), nodes) != hit.gone {
        return Err(stale("the launches it drops as overwritten"));
    }
    let (kept, taken) = drop_overwritten(nodes, &hit.gone);
    if positions(nodes, &taken) != hit.taken
        || repeats(&kept) != hit.repeats
        || verdicts(&kept, bypass) != hit.verdicts
    {
        // The overwritten pass took other feeders (the DAG beyond the flush
        // differs), or the cost model changed its mind: what is left is
        // planned afresh.
        let s = settle(candidates(&kept), &kept, demand, false, bypass)?;
        return Ok(settled(&kept, taken, s, None));
    }
    if verify {
        let s = settle(candidates(&kept), &kept, demand, true, bypass)?;
        let numbered = numbered(shape, &s.registers);
        if s.regions != hit.regions
            || numbered != hit.registers
            || s.deferred != hit.deferred
            || s.asked != hit.asked
        {
            return Err(stale("its regions"));
        }
        if !s.summary.agrees(&hit.summary) {
            return Err(stale("its report"));
        }
    }
    // What planning afresh would have asked (it counts refusals).
    for &k in &hit.asked {
        // (A launch the bypass refused was not asked.)
        if hit.verdicts[k] != Verdict::Bypassed {
            let _ = deferral::worth(&kept[k].launch.key);
        }
    }
    plans::replayed();
    let registers = hit
        .registers
        .iter()
        .map(|r| r.iter().map(|&n| shape.alloc_id(n)).collect())
        .collect();
    let mut planned = finish(
        &kept,
        taken,
        &hit.regions,
        registers,
        &hit.deferred,
        hit.summary.clone(),
        Some(&hit.memos),
    );
    planned.replayed = true;
    planned.lesson = lesson(shape, nodes, &planned);
    Ok(planned)
}

/// Register allocations by their numbers in the shape, sorted.
fn numbered(shape: &Shape<'_>, registers: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    registers
        .iter()
        .map(|r| {
            let mut v: Vec<usize> = r.iter().filter_map(|&a| shape.number(a)).collect();
            v.sort_unstable();
            v
        })
        .collect()
}

fn stale(what: &str) -> PkError {
    PkError::Runtime(format!(
        "internal error: a cached fusion plan differs from planning afresh in {what}"
    ))
}

/// The planner's view of each launch.
fn candidates(nodes: &[Arc<Node>]) -> Vec<cand::Cand<'_>> {
    nodes
        .iter()
        .map(|n| cand::of_launch(&n.launch, &n.access_map))
        .collect()
}

/// Positions of launches whose every output a later one writes again, unread.
fn overwritten_pass(cands: &[cand::Cand<'_>], nodes: &[Arc<Node>]) -> Vec<usize> {
    if crate::config::get().is_disabled(overwritten::PASS) {
        return Vec::new();
    }
    overwritten::overwritten(cands, &|k| may_drop(&nodes[k]))
        .into_iter()
        .collect()
}

/// Takes the launches at `gone` out of the DAG unrun, with the launches
/// that only fed them: (the launches left, those taken).
fn drop_overwritten(nodes: &[Arc<Node>], gone: &[usize]) -> (Vec<Arc<Node>>, Vec<Arc<Node>>) {
    if gone.is_empty() {
        return (nodes.to_vec(), Vec::new());
    }
    let seqs: Vec<u64> = gone.iter().map(|&k| nodes[k].seq).collect();
    let taken = unobserved::take_overwritten(&seqs);
    let out: BTreeSet<u64> = taken.iter().map(|n| n.seq).collect();
    let kept = nodes
        .iter()
        .filter(|n| !out.contains(&n.seq))
        .cloned()
        .collect();
    (kept, taken)
}

/// Where `taken` (in program order) sat in the flush.
fn positions(nodes: &[Arc<Node>], taken: &[Arc<Node>]) -> Vec<usize> {
    taken
        .iter()
        .filter_map(|t| nodes.binary_search_by_key(&t.seq, |n| n.seq).ok())
        .collect()
}

/// A freshly settled plan in sequence numbers (see `finish`).
fn settled(
    kept: &[Arc<Node>],
    taken: Vec<Arc<Node>>,
    s: Settled,
    memos: Option<&[Memo]>,
) -> Planned {
    finish(
        kept,
        taken,
        &s.regions,
        s.registers,
        &s.deferred,
        s.summary,
        memos,
    )
}

/// The plan in sequence numbers, its report kept.
fn finish(
    kept: &[Arc<Node>],
    taken: Vec<Arc<Node>>,
    regions: &[Vec<usize>],
    registers: Vec<BTreeSet<usize>>,
    deferred: &[Vec<usize>],
    summary: Arc<explain::Summary>,
    memos: Option<&[Memo]>,
) -> Planned {
    let info = |k: usize| (&kept[k].launch.label, &kept[k].origin);
    let mut dropped = taken.iter().map(|n| (&n.launch.label, &n.origin));
    explain::keep(summary, &mut dropped, &info);
    let regions = regions
        .iter()
        .zip(registers)
        .zip(deferred)
        .enumerate()
        .map(|(i, ((r, registers), f))| Region {
            seqs: r.iter().map(|&k| kept[k].seq).collect(),
            registers,
            deferred: f.iter().map(|&k| kept[k].seq).collect(),
            memo: memos.map(|m| m[i].clone()),
            strategy: strategy(&r.iter().map(|&k| &kept[k]).collect::<Vec<_>>()),
        })
        .collect();
    Planned {
        regions,
        overwritten: taken,
        replayed: false,
        lesson: None,
    }
}

/// A region of one launch (fusion off: no repeats were folded into it).
fn single(n: &Arc<Node>) -> Region {
    Region {
        seqs: vec![n.seq],
        registers: BTreeSet::new(),
        deferred: Vec::new(),
        memo: None,
        strategy: strategy(&[n]),
    }
}

/// A pending launch nothing observes but its outputs: a for with no result,
/// no effects, whose code built before (its errors were reported).
fn may_drop(n: &Node) -> bool {
    n.launch.key.pattern == Pattern::For && n.result.is_none() && !n.effects && n.built()
}
