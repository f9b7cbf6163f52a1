//! The argument layout of a fused kernel: buffers passed under several names
//! (same allocation, offset, extents, strides, type) become one member, dead
//! temporaries per-work-item locals, scalars members of their own body. Also
//! the region's structural key: regions of the same workunits, argument types
//! and sharing reuse one compiled kernel.
use crate::analysis::access::Access;
use crate::codegen::Plan;
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use crate::types::{ArgTy, DType, ViewTy};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;

pub struct Layout {
    /// Per body, how each argument appears.
    pub plans: Vec<Vec<Plan>>,
    /// Per view member `pk_b{g}`: the (body, argument) supplying it, and its type.
    pub groups: Vec<(usize, usize, ViewTy)>,
    /// Per local `pk_t{t}`: its allocation and dtype.
    pub locals: Vec<(usize, DType)>,
    /// Members kept in a local `pk_c{g}` for each work item: (g, dtype).
    pub cached: Vec<(usize, DType)>,
    /// Per member: whether some body may write it (true where an access is
    /// unknown). A cached member no body writes is not stored back, and the
    /// device bookkeeping leaves its device copy as it was.
    pub written: Vec<bool>,
    /// Per member: whether the region stores every element of it and reads
    /// none (`filled`): a CUDA launch need not copy its stale device copy in
    /// (exec/kernel.rs `view_fills`; one 1-D range only).
    pub filled: Vec<bool>,
}

/// Whether the region's first access of each element of member `g` is a
/// store: every access of it is known, and the first body that uses it
/// stores `v[i]` at the work index in every work item of the one 1-D range
/// all bodies share, reading none of it. (Later bodies read what it stored:
/// legality keeps their reads on elements the region wrote before them.)
fn filled(g: usize, uses: &[(usize, usize, usize, Option<Access>)], region: &[&Launch]) -> bool {
    let one_range = region[0].key.rank == 1
        && region
            .iter()
            .all(|l| l.lo == region[0].lo && l.hi == region[0].hi);
    let mine: Vec<(usize, Option<Access>)> = uses
        .iter()
        .filter(|u| u.0 == g)
        .map(|u| (u.1, u.3))
        .collect();
    let Some(first) = mine.iter().map(|m| m.0).min() else {
        return false;
    };
    let firsts = || mine.iter().filter(|m| m.0 == first).filter_map(|m| m.1);
    one_range
        && mine.iter().all(|m| m.1.is_some())
        && firsts().all(|a| !a.read)
        && firsts().any(|a| a.write && a.at_work_index && a.always_written)
}

/// Whether member `g` may live in a local for each work item (loaded once,
/// stored back once): every access of it in the region is `v[i]` at the work
/// index in a workunit's own body (so no other work item touches element i,
/// and no code sees it but through `v[i]`: a called function would reach the
/// memory, not the local), it is no atomic view, no other member shares its
/// allocation (a write through one would not show in the other's local), and
/// some body writes it in every work item (so element i is in bounds: the
/// load and the store at the ends touch only what the program touches).
fn cacheable(g: usize, uses: &[Access], keys: &[GroupKey]) -> bool {
    let (alloc, .., vt) = keys[g];
    vt.rank == 1
        && !vt.atomic
        && keys.iter().filter(|k| k.0 == alloc).count() == 1
        && uses.iter().all(|a| a.at_work_index && a.direct)
        && uses.iter().any(|a| a.write && a.always_written)
}

/// What makes two view arguments one member: allocation, offset, extents,
/// strides and type.
type GroupKey = (usize, isize, [i64; 8], [i64; 8], ViewTy);

/// The layout of `region` (its launches in program order, with each one's
/// accesses by argument name), `dead` its dead temporaries; `cache`: whether
/// members may be kept in locals (not under bounds checks: they check at
/// each access).
pub fn layout(
    region: &[&Launch],
    accesses: &[&BTreeMap<String, Access>],
    dead: &BTreeSet<usize>,
    cache: bool,
) -> Layout {
    let mut groups: Vec<(usize, usize, ViewTy)> = Vec::new();
    let mut group_keys: Vec<GroupKey> = Vec::new();
    let mut locals: Vec<(usize, DType)> = Vec::new();
    let mut plans = Vec::new();
    let mut written: Vec<bool> = Vec::new();
    // (member, body, argument, access; None: unknown) of every view argument given a member.
    let mut uses: Vec<(usize, usize, usize, Option<Access>)> = Vec::new();
    for (b, l) in region.iter().enumerate() {
        let mut p = Vec::new();
        for (k, v) in l.vals.iter().enumerate() {
            match (v, &l.key.args[k]) {
                (ArgVal::View(x), ArgTy::View(vt)) => {
                    let id = x.alloc.id();
                    if dead.contains(&id) {
                        let t = match locals.iter().position(|(a, _)| *a == id) {
                            Some(t) => t,
                            None => {
                                locals.push((id, vt.dtype));
                                locals.len() - 1
                            }
                        };
                        p.push(Plan::Local(format!("pk_t{t}"), vt.dtype));
                        continue;
                    }
                    // Dimensions past the rank are zero in both arrays.
                    let gk = (id, x.offset, x.raw.extent, x.raw.stride, *vt);
                    let g = match group_keys.iter().position(|g| *g == gk) {
                        Some(g) => {
                            p.push(Plan::Shared(format!("pk_b{g}")));
                            g
                        }
                        None => {
                            group_keys.push(gk);
                            groups.push((b, k, *vt));
                            p.push(Plan::Member(format!("pk_b{}", groups.len() - 1)));
                            groups.len() - 1
                        }
                    };
                    let known = accesses.get(b).and_then(|m| m.get(&*l.names[k])).copied();
                    if written.len() < groups.len() {
                        written.resize(groups.len(), false);
                    }
                    written[g] |= known.is_none_or(|a| a.write);
                    uses.push((g, b, k, known));
                }
                _ => p.push(Plan::Member(format!("pk_s{b}_{k}"))),
            }
        }
        plans.push(p);
    }
    let mut cached = Vec::new();
    for (g, (_, _, vt)) in groups.iter().enumerate() {
        let mine: Vec<Access> = uses
            .iter()
            .filter(|u| u.0 == g)
            .map(|u| u.3.unwrap_or_default())
            .collect();
        if !(cache && cacheable(g, &mine, &group_keys)) {
            continue;
        }
        cached.push((g, vt.dtype));
        for &(_, b, k, _) in uses.iter().filter(|u| u.0 == g) {
            let declares = matches!(plans[b][k], Plan::Member(_));
            plans[b][k] = Plan::Cached(format!("pk_b{g}"), format!("pk_c{g}"), vt.dtype, declares);
        }
    }
    written.resize(groups.len(), false);
    let filled = (0..groups.len())
        .map(|g| filled(g, &uses, region))
        .collect();
    Layout {
        plans,
        groups,
        locals,
        cached,
        written,
        filled,
    }
}

/// Collects the bytes `std::hash::Hash` writes, for one blake3 call (a region
/// key is many tiny writes: feeding them to blake3 one by one costs more than
/// the hashing).
struct Bytes(Vec<u8>);

impl std::hash::Hasher for Bytes {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn finish(&self) -> u64 {
        unreachable!("region keys use the full blake3 digest")
    }
}

/// The structural key of a region: no data pointers or values. Hashed rather
/// than formatted: a flush of many small regions computes one key per region,
/// and blake3 makes a collision out of the question.
pub fn region_key(region: &[&Launch], plans: &[Vec<Plan>]) -> [u8; 32] {
    let mut h = Bytes(Vec::with_capacity(256));
    region[0].key.space.hash(&mut h);
    for (l, p) in region.iter().zip(plans) {
        let k = &l.key;
        (k.workunit, k.pattern, &k.args, &k.consts, l.is_method, p).hash(&mut h);
    }
    blake3::hash(&h.0).into()
}

pub fn region_label(region: &[&Launch]) -> String {
    let names: Vec<&str> = region.iter().map(|l| &*l.label).collect();
    format!("fused({})", names.join("+"))
}
