//! What a launch touches: per view argument, read/write and work-index
//! facts (from the access analysis, cached per kernel signature), and the
//! byte ranges of allocations those become (the DAG's hazards); from them,
//! whether exact repeats of a launch may fold into one pending node.
use crate::analysis::access::{self, Access};
use crate::errors::PkResult;
use crate::exec::args::{ArgVal, ViewVal};
use crate::exec::kernel::KeyMap;
use crate::exec::launch::Launch;
use crate::lower::Globals;
use crate::types::Pattern;
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BufAccess {
    pub alloc: usize,
    pub start: isize,
    pub end: isize,
    pub read: bool,
    pub write: bool,
}

impl BufAccess {
    pub fn conflicts(&self, o: &BufAccess) -> bool {
        self.alloc == o.alloc && self.start < o.end && o.start < self.end && (self.write || o.write)
    }
}

/// A launch's buffer accesses: inline up to four (most launches take a few
/// views; recording then allocates no list for them).
pub type Accesses = smallvec::SmallVec<[BufAccess; 4]>;

/// Per-argument read/write/work-index facts of a launch (by view name).
pub type AccessMap = Arc<BTreeMap<String, Access>>;

/// Per-signature access maps, so recording does no AST work after the first.
/// With them, whether the body has effects (`has_effects`).
type AccessTable = KeyMap<(Arc<[String]>, AccessMap, bool)>;
static ACCESS: LazyLock<AccessTable> = LazyLock::new(KeyMap::default);

/// A launch's buffer accesses, its access facts, and whether it has effects.
/// `globals` is asked only when the kernel's access pattern is not known
/// yet and its body calls functions (the origin of a launch that repeats a
/// known kernel need not be made).
pub fn accesses_of(
    l: &Launch,
    globals: impl FnOnce() -> Option<Globals>,
) -> PkResult<(Accesses, AccessMap, bool)> {
    let cached = ACCESS
        .get(&l.key)
        .filter(|e| Arc::ptr_eq(&e.0, &l.names) || e.0 == l.names)
        .map(|e| (e.1.clone(), e.2));
    let (map, effects) = match cached {
        Some(m) => m,
        None => {
            let def = l.workunit().def()?;
            let args = l.typed_args();
            let index = access::work_index(&def, l.is_method, l.key.rank as usize);
            // Calls are followed into the functions they reach; names that
            // cannot be resolved now leave those calls conservative.
            let globals = access::calls_something(&def).then(globals).flatten();
            let callees = globals.as_ref().map(|g| g as &dyn access::Callees);
            let m = Arc::new(access::view_access(&def, &args, index, callees));
            let effects = access::has_effects(&def);
            ACCESS.insert(l.key.clone(), (l.names.clone(), m.clone(), effects));
            (m, effects)
        }
    };
    let mut out = Accesses::new();
    for (name, v) in l.names.iter().zip(&l.vals) {
        if let (ArgVal::View(vv), Some(a)) = (v, map.get(name)) {
            if vv.range.0 < vv.range.1 {
                out.push(BufAccess {
                    alloc: vv.alloc.id(),
                    start: vv.range.0,
                    end: vv.range.1,
                    read: a.read,
                    write: a.write,
                });
            }
        }
    }
    Ok((out, map, effects))
}

/// Whether running `l` several times in a row may be one kernel whose work
/// items loop: a 1-D for that touches what it writes only at the work index.
/// Every view argument that shares bytes with one it writes (itself
/// included) must be read and written as `v[i]` only, through the same
/// geometry, as the fusion engine's `work_index_access` asks of a pair.
pub fn loopable(l: &Launch, map: &BTreeMap<String, Access>) -> bool {
    if l.key.pattern != Pattern::For || l.lo.len() != 1 || l.key.rank != 1 {
        return false;
    }
    let views: Vec<(&ViewVal, &Access)> = l
        .names
        .iter()
        .zip(&l.vals)
        .filter_map(|(name, v)| match (v, map.get(name)) {
            (ArgVal::View(x), Some(a)) => Some((x, a)),
            _ => None,
        })
        .collect();
    views.iter().filter(|(_, a)| a.write).all(|(u, ua)| {
        views.iter().all(|(w, wa)| {
            let shared =
                u.alloc.id() == w.alloc.id() && u.range.0 < w.range.1 && w.range.0 < u.range.1;
            !shared
                || (ua.at_work_index
                    && wa.at_work_index
                    && u.offset == w.offset
                    && u.raw.extent == w.raw.extent
                    && u.raw.stride == w.raw.stride)
        })
    })
}

/// Whether running `l` twice in a row leaves what running it once does: a
/// for without effects that reads nothing it writes (no accumulation, no
/// atomics, no in-place update, through any alias).
pub fn idempotent(l: &Launch, accesses: &[BufAccess], effects: bool) -> bool {
    l.key.pattern == Pattern::For
        && !effects
        && accesses.iter().filter(|a| a.write).all(|w| {
            !w.read
                && accesses
                    .iter()
                    .all(|r| !r.read || r.alloc != w.alloc || r.end <= w.start || w.end <= r.start)
        })
}
