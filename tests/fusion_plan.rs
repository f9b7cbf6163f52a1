//! The fusion planner without Python: candidates built by hand, partitioned
//! by the built-in rules (or rule files given as text), the plan verified, and
//! dead temporaries found. Each case states the program it stands for.
use _native::analysis::access::Access;
use _native::frontend::source::SourceInfo;
use _native::fusion::cand::{Cand, Geometry, Life, ViewUse};
use _native::fusion::dead::dead_temporaries;
use _native::fusion::defer::{self, defer};
use _native::fusion::overwritten::overwritten;
use _native::fusion::plan::{partition, Plan};
use _native::fusion::rules::{self, Rule};
use _native::fusion::verify::verify;
use _native::types::{Pattern, Space};
use std::sync::Arc;

const N: i64 = 1000;
const LO: [i64; 1] = [0];
const HI: [i64; 1] = [N];
const HI_SHORT: [i64; 1] = [N - 1];

fn geometry() -> Geometry {
    let mut extent = [0; 8];
    let mut stride = [0; 8];
    extent[0] = N;
    stride[0] = 1;
    Geometry {
        offset: 0,
        rank: 1,
        extent,
        stride,
        dtype: 10,
    }
}

/// `v[i]` at the work index: read, written, or both.
fn at(name: &'static str, alloc: usize, read: bool, write: bool) -> ViewUse<'static> {
    ViewUse {
        name,
        arg: 0,
        alloc,
        range: (0, 8 * N as isize),
        geometry: geometry(),
        access: Access {
            read,
            write,
            at_work_index: true,
            off_index: None,
            always_written: write,
            direct: true,
        },
        // Memory that exists and no Python View of it is left.
        life: Life {
            referenced: false,
            foreign: false,
            allocated: true,
        },
    }
}

/// An access other than `v[i]` (a stencil `v[i + 1]`, a gather).
fn off(name: &'static str, alloc: usize, read: bool, write: bool) -> ViewUse<'static> {
    let mut u = at(name, alloc, read, write);
    u.access.at_work_index = false;
    u
}

fn cand(label: &'static str, pattern: Pattern, views: Vec<ViewUse<'static>>) -> Cand<'static> {
    Cand {
        label,
        pattern,
        space: Space::OpenMP,
        lo: &LO,
        hi: &HI,
        views,
        statements: 1,
        team: false,
        src: Arc::new(SourceInfo {
            text: String::new(),
            filename: "program.py".into(),
            first_line: 1,
            indent: 0,
        }),
        repeats_prev: false,
        folded: false,
    }
}

fn plan(cands: &[Cand<'static>]) -> Plan {
    partition(&rules::defaults(), cands)
}

/// The plan covers every launch once, in program order (edges: each launch
/// after the one before, the strictest order a chain can have).
fn chain_ok(p: &Plan, n: usize) {
    let edges: Vec<(usize, usize)> = (1..n).map(|k| (k - 1, k)).collect();
    verify(p, n, &edges).expect("the plan is valid");
}

#[test]
fn a_map_chain_and_its_reduction_become_one_region() {
    // t = a * x; z = t + x; total = sum(z)
    let c = vec![
        cand(
            "scale",
            Pattern::For,
            vec![at("x", 1, true, false), at("t", 2, false, true)],
        ),
        cand(
            "add",
            Pattern::For,
            vec![at("t", 2, true, false), at("z", 3, false, true)],
        ),
        cand("total", Pattern::Reduce, vec![at("z", 3, true, false)]),
    ];
    let p = plan(&c);
    assert_eq!(p.regions, vec![vec![0, 1, 2]]);
    assert_eq!(
        p.joined_by,
        vec![
            None,
            Some("vertical".into()),
            Some("reduction_epilogue".into())
        ]
    );
    chain_ok(&p, 3);
}

#[test]
fn independent_reductions_fuse_horizontally() {
    let c = vec![
        cand("sum_a", Pattern::Reduce, vec![at("a", 1, true, false)]),
        cand("sum_b", Pattern::Reduce, vec![at("b", 2, true, false)]),
    ];
    let p = plan(&c);
    assert_eq!(p.regions, vec![vec![0, 1]]);
    assert_eq!(p.joined_by[1].as_deref(), Some("horizontal"));
}

#[test]
fn a_stencil_on_a_shared_buffer_is_refused_by_the_engine() {
    // y[i] = x[i + 1] after a launch that writes x
    let c = vec![
        cand("fill", Pattern::For, vec![at("x", 1, false, true)]),
        cand(
            "shift",
            Pattern::For,
            vec![off("x", 1, true, false), at("y", 2, false, true)],
        ),
    ];
    let p = plan(&c);
    assert_eq!(p.regions, vec![vec![0], vec![1]]);
    assert_eq!(p.refusals.len(), 1);
    assert_eq!(p.refusals[0].rule, "engine: work_index_access");
    assert!(
        p.refusals[0].reason.contains("'x'"),
        "{}",
        p.refusals[0].reason
    );
}

fn permissive(relation: &str) -> Vec<Rule> {
    // A rule file that lists no predicates at all.
    let text = format!(
        "name = 'anything'\nrelation = '{relation}'\nfirst = ['for', 'reduce']\nsecond = ['for', 'reduce']\n[limits]\nmax_launches = 100\nmax_statements = 1000\n"
    );
    vec![rules::parse("anything/rule.toml", &text).unwrap()]
}

#[test]
fn invariants_hold_whatever_the_rules_say() {
    let rules = permissive("dependent");
    let stencil = vec![
        cand("fill", Pattern::For, vec![at("x", 1, false, true)]),
        cand("shift", Pattern::For, vec![off("x", 1, true, false)]),
    ];
    assert_eq!(partition(&rules, &stencil).regions.len(), 2);

    let rules = permissive("independent");
    let mut short = cand("b", Pattern::For, vec![at("y", 2, false, true)]);
    short.hi = &HI_SHORT;
    let ranges = vec![
        cand("a", Pattern::For, vec![at("x", 1, false, true)]),
        short,
    ];
    let p = partition(&rules, &ranges);
    assert_eq!(p.regions.len(), 2);
    assert_eq!(p.refusals[0].rule, "engine: same_range");

    let mut team = cand("t", Pattern::For, vec![at("y", 2, false, true)]);
    team.team = true;
    let p = partition(
        &rules,
        &[cand("a", Pattern::For, vec![at("x", 1, false, true)]), team],
    );
    assert_eq!(p.refusals[0].rule, "engine: no_team");

    let mut cuda = cand("g", Pattern::For, vec![at("y", 2, false, true)]);
    cuda.space = Space::Cuda;
    let p = partition(
        &rules,
        &[cand("a", Pattern::For, vec![at("x", 1, false, true)]), cuda],
    );
    assert_eq!(p.refusals[0].rule, "engine: same_space");

    let scan = cand("s", Pattern::Scan, vec![at("y", 2, false, true)]);
    let p = partition(
        &rules,
        &[cand("a", Pattern::For, vec![at("x", 1, false, true)]), scan],
    );
    assert_eq!(p.refusals[0].rule, "engine: no_scan");
}

#[test]
fn limits_cut_regions() {
    let text = "name = 'small'\nrelation = 'dependent'\nfirst = ['for']\nsecond = ['for']\n[limits]\nmax_launches = 2\nmax_statements = 1000\n";
    let rules = vec![rules::parse("small", text).unwrap()];
    let c: Vec<Cand> = (0..5)
        .map(|_| cand("inc", Pattern::For, vec![at("x", 1, true, true)]))
        .collect();
    let p = partition(&rules, &c);
    assert_eq!(p.regions, vec![vec![0, 1], vec![2, 3], vec![4]]);
    assert!(p
        .refusals
        .iter()
        .all(|r| r.reason.starts_with("profitability")));
    chain_ok(&p, 5);
}

#[test]
fn no_rule_means_one_region_per_launch() {
    let c = vec![
        cand("a", Pattern::For, vec![at("x", 1, false, true)]),
        cand("b", Pattern::For, vec![at("x", 1, true, false)]),
    ];
    let p = partition(&[], &c);
    assert_eq!(p.regions, vec![vec![0], vec![1]]);
    assert_eq!(p.refusals[0].rule, "none");
}

#[test]
fn dead_temporaries_are_unreferenced_written_first_and_not_used_elsewhere() {
    let region = [
        cand(
            "scale",
            Pattern::For,
            vec![at("x", 1, true, false), at("t", 2, false, true)],
        ),
        cand(
            "add",
            Pattern::For,
            vec![at("t", 2, true, false), at("z", 3, false, true)],
        ),
    ];
    let refs: Vec<&Cand> = region.iter().collect();
    let nowhere = |_| false;
    // x is read first (its values come from memory); t and z are written first.
    assert_eq!(
        dead_temporaries(&refs, &nowhere)
            .into_iter()
            .collect::<Vec<_>>(),
        vec![2, 3]
    );
    // z is still referenced by a Python View: only t stays in registers.
    let mut kept = region.clone();
    kept[1].views[1].life.referenced = true;
    let refs: Vec<&Cand> = kept.iter().collect();
    assert_eq!(
        dead_temporaries(&refs, &nowhere)
            .into_iter()
            .collect::<Vec<_>>(),
        vec![2]
    );
    // A pending launch outside the region reads t.
    let elsewhere = |a| a == 2;
    let refs: Vec<&Cand> = kept.iter().collect();
    assert!(dead_temporaries(&refs, &elsewhere).is_empty());
}

#[test]
fn a_temporary_read_before_written_stays_in_memory_once_allocated() {
    let mut region = [
        cand("acc", Pattern::For, vec![at("t", 2, true, true)]),
        cand("use", Pattern::For, vec![at("t", 2, true, false)]),
    ];
    let nowhere = |_| false;
    let refs: Vec<&Cand> = region.iter().collect();
    assert!(dead_temporaries(&refs, &nowhere).is_empty());
    // Never allocated: its zeros are a fresh local's.
    region[0].views[0].life.allocated = false;
    region[1].views[0].life.allocated = false;
    let refs: Vec<&Cand> = region.iter().collect();
    assert_eq!(dead_temporaries(&refs, &nowhere).len(), 1);
    // A stencil use keeps it in memory too.
    let stencil = [
        cand("w", Pattern::For, vec![at("t", 2, false, true)]),
        cand("r", Pattern::For, vec![off("t", 2, true, false)]),
    ];
    let refs: Vec<&Cand> = stencil.iter().collect();
    assert!(dead_temporaries(&refs, &nowhere).is_empty());
}

#[test]
fn foreign_memory_is_never_a_temporary() {
    let mut region = [
        cand("w", Pattern::For, vec![at("t", 2, false, true)]),
        cand("r", Pattern::For, vec![at("t", 2, true, false)]),
    ];
    region[0].views[0].life.foreign = true;
    let refs: Vec<&Cand> = region.iter().collect();
    assert!(dead_temporaries(&refs, &|_| false).is_empty());
}

/// The flush as the deferral pass asks about it: every launch eligible,
/// allocations in `demanded` wanted by the host.
struct Asked(Vec<usize>);

impl defer::Facts for Asked {
    fn may_defer(&self, _k: usize) -> bool {
        true
    }
    fn worth(&self, _k: usize) -> Result<(), String> {
        Ok(())
    }
    fn demanded(&self, alloc: usize) -> bool {
        self.0.contains(&alloc)
    }
}

fn referenced(mut u: ViewUse<'static>) -> ViewUse<'static> {
    u.life.referenced = true;
    u
}

#[test]
fn a_producer_read_only_by_its_region_is_deferred_unless_demanded() {
    // t = 2 * x (t alive); s = sum(t): t's values need not be stored.
    let cands = [
        cand(
            "twice",
            Pattern::For,
            vec![at("x", 1, true, false), referenced(at("t", 2, false, true))],
        ),
        cand(
            "total",
            Pattern::Reduce,
            vec![referenced(at("t", 2, true, false))],
        ),
    ];
    let regions = vec![vec![0, 1]];
    let got = defer(&cands, &regions, &[vec![]], &Asked(vec![]));
    assert_eq!(got[0].launches, vec![0]);
    assert_eq!(
        got[0].registers.iter().copied().collect::<Vec<_>>(),
        vec![2]
    );
    // The host asked for t (or for x): it runs now.
    for demanded in [2, 1] {
        let got = defer(&cands, &regions, &[vec![]], &Asked(vec![demanded]));
        assert!(got[0].launches.is_empty());
    }
}

#[test]
fn a_producer_is_not_deferred_when_its_input_or_output_changes_later() {
    // t = f(x); x = g(t); s = sum(x): deferred, it would read the new x.
    let cands = [
        cand(
            "f",
            Pattern::For,
            vec![at("x", 1, true, false), referenced(at("t", 2, false, true))],
        ),
        cand(
            "g",
            Pattern::For,
            vec![at("t", 2, true, false), referenced(at("x", 1, false, true))],
        ),
        cand("total", Pattern::Reduce, vec![at("x", 1, true, false)]),
    ];
    let got = defer(&cands, &[vec![0, 1, 2]], &[vec![]], &Asked(vec![]));
    assert!(!got[0].launches.contains(&0));
    // t read in another region (or by a stencil): it must be stored.
    let split = [vec![0], vec![1, 2]];
    assert!(defer(&cands, &split, &[vec![], vec![]], &Asked(vec![]))
        .iter()
        .all(|d| d.launches.is_empty()));
}

#[test]
fn a_deferred_reader_of_a_dead_temporary_takes_its_writer_along() {
    // u = f(x) (dead); t = g(u) (alive); s = sum(t).
    let mut cands = vec![
        cand(
            "f",
            Pattern::For,
            vec![at("x", 1, true, false), at("u", 3, false, true)],
        ),
        cand(
            "g",
            Pattern::For,
            vec![at("u", 3, true, false), referenced(at("t", 2, false, true))],
        ),
        cand(
            "total",
            Pattern::Reduce,
            vec![referenced(at("t", 2, true, false))],
        ),
    ];
    let got = defer(&cands, &[vec![0, 1, 2]], &[vec![3]], &Asked(vec![]));
    assert_eq!(got[0].launches, vec![0, 1]);
    // f writes u under a condition: it cannot stay pending, so neither can g.
    cands[0].views[1].access.always_written = false;
    let got = defer(&cands, &[vec![0, 1, 2]], &[vec![3]], &Asked(vec![]));
    assert!(got[0].launches.is_empty());
}

#[test]
fn a_launch_whose_outputs_are_all_rewritten_unread_is_overwritten() {
    let mut cands = vec![
        cand(
            "first",
            Pattern::For,
            vec![at("x", 1, true, false), referenced(at("t", 2, false, true))],
        ),
        cand(
            "again",
            Pattern::For,
            vec![at("x", 1, true, false), referenced(at("t", 2, false, true))],
        ),
    ];
    assert_eq!(
        overwritten(&cands, &|_| true)
            .into_iter()
            .collect::<Vec<_>>(),
        vec![0]
    );
    // Not if its code never built (its errors must still be reported).
    assert!(overwritten(&cands, &|_| false).is_empty());
    // Not if the rewrite covers fewer elements, or reads t first.
    cands[1].hi = &HI_SHORT;
    assert!(overwritten(&cands, &|_| true).is_empty());
    cands[1].hi = &HI;
    cands[1].views[1].access.read = true;
    assert!(overwritten(&cands, &|_| true).is_empty());
    // Not if something reads t in between.
    cands[1].views[1].access.read = false;
    cands.insert(
        1,
        cand("peek", Pattern::Reduce, vec![at("t", 2, true, false)]),
    );
    assert!(overwritten(&cands, &|_| true).is_empty());
}
