//! The argument layout of a fused kernel: buffers passed under several names
//! (same allocation, offset, extents, strides, type) become one member, dead
//! temporaries per-work-item locals, scalars members of their own body. Also
//! the region's structural key: regions of the same workunits, argument types
//! and sharing reuse one compiled kernel.
use crate::codegen::Plan;
use crate::exec::args::ArgVal;
use crate::exec::launch::Launch;
use crate::types::{ArgTy, DType, ViewTy};
use std::collections::BTreeSet;
use std::hash::Hash;

pub struct Layout {
    /// Per body, how each argument appears.
    pub plans: Vec<Vec<Plan>>,
    /// Per view member `pk_b{g}`: the (body, argument) supplying it, and its type.
    pub groups: Vec<(usize, usize, ViewTy)>,
    /// Per local `pk_t{t}`: its allocation and dtype.
    pub locals: Vec<(usize, DType)>,
}

/// What makes two view arguments one member: allocation, offset, extents,
/// strides and type.
type GroupKey = (usize, isize, [i64; 8], [i64; 8], ViewTy);

pub fn layout(region: &[&Launch], dead: &BTreeSet<usize>) -> Layout {
    let mut groups: Vec<(usize, usize, ViewTy)> = Vec::new();
    let mut group_keys: Vec<GroupKey> = Vec::new();
    let mut locals: Vec<(usize, DType)> = Vec::new();
    let mut plans = Vec::new();
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
                    match group_keys.iter().position(|g| *g == gk) {
                        Some(g) => p.push(Plan::Shared(format!("pk_b{g}"))),
                        None => {
                            group_keys.push(gk);
                            groups.push((b, k, *vt));
                            p.push(Plan::Member(format!("pk_b{}", groups.len() - 1)));
                        }
                    }
                }
                _ => p.push(Plan::Member(format!("pk_s{b}_{k}"))),
            }
        }
        plans.push(p);
    }
    Layout {
        plans,
        groups,
        locals,
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
