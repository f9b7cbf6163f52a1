//! What a launch touches: per view argument, read/write and work-index
//! facts (from the access analysis, cached per kernel signature), and the
//! byte ranges of allocations those become (the DAG's hazards).
use crate::analysis::access::{self, Access};
use crate::errors::PkResult;
use crate::exec::args::ArgVal;
use crate::exec::kernel::KeyMap;
use crate::exec::launch::Launch;
use crate::frontend::ast::{walk_exprs, ExprKind, FunctionDef};
use crate::lower::Globals;
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
            let args: Vec<_> = l
                .names
                .iter()
                .cloned()
                .zip(l.key.args.iter().cloned())
                .collect();
            let index = access::work_index(&def, l.is_method, l.key.rank as usize);
            // Calls are followed into the functions they reach; names that
            // cannot be resolved now leave those calls conservative.
            let globals = calls_something(&def).then(globals).flatten();
            let callees = globals.as_ref().map(|g| g as &dyn access::Callees);
            let m = Arc::new(access::view_access(&def, &args, index, callees));
            let effects = has_effects(&def);
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

/// Whether a body calls anything (resolving its names is then worth it).
fn calls_something(def: &FunctionDef) -> bool {
    let mut any = false;
    walk_exprs(&def.body, &mut |e| {
        any |= matches!(e.kind, ExprKind::Call { .. })
    });
    any
}

/// Whether a body has effects beyond the views it writes (`pk.printf`):
/// such a launch always runs, even when nothing reads what it wrote.
fn has_effects(def: &FunctionDef) -> bool {
    let mut any = false;
    walk_exprs(&def.body, &mut |e| {
        if let ExprKind::Call { func, .. } = &e.kind {
            any |= matches!(&func.kind, ExprKind::Attr(_, f) if f == "printf")
                || matches!(&func.kind, ExprKind::Name(f) if f == "printf" || f == "print");
        }
    });
    any
}
