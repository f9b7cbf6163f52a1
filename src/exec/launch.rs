//! One launch with everything needed to run it, now (eager) or later (lazy).
use super::args::ArgVal;
use super::kernel::KernelKey;
use crate::codegen::KernelSpec;
use crate::errors::{PkError, PkResult};
use crate::frontend::ast::FunctionDef;
use crate::frontend::workunit::Workunit;
use crate::lower::Globals;
use crate::types::{ArgTy, Space};
use smallvec::SmallVec;
use std::sync::Arc;

/// A policy's begin or end: one number per dimension, inline up to three
/// (a launch's bounds cost no allocation; a team policy's seven spill).
pub type Bounds = SmallVec<[i64; 3]>;

/// What the core needs from the program that launched, beyond values: the
/// workunit's free names (module constants, helper functions, classtypes:
/// resolved by the host language, which may take the GIL) and the call site
/// for reports. The Python layer implements it; the core holds no Python
/// objects of its own. Eager launches borrow one; recorded launches own one.
pub trait Origin: Send + Sync {
    /// The free names of a launch whose key constants are `consts`: the
    /// numbers as they were at the launch, whatever they are now.
    fn globals(&self, consts: &[u64]) -> PkResult<Globals>;
    /// "file:line" of the launch call.
    fn site(&self) -> String;
}

pub struct Launch {
    pub wu: Arc<Workunit>,
    pub key: KernelKey,
    /// Argument names, in the order of `vals` and `key.args`.
    pub names: Arc<[String]>,
    pub vals: Vec<ArgVal>,
    pub lo: Bounds,
    pub hi: Bounds,
    /// A functor's workunit method: arguments are its members.
    pub is_method: bool,
    /// The kernel label (the workunit's name unless the launch gave one).
    pub label: Arc<str>,
}

impl Launch {
    pub fn workunit(&self) -> &Workunit {
        &self.wu
    }

    /// Its arguments' names and types, in order.
    pub fn typed_args(&self) -> Vec<(String, ArgTy)> {
        let types = self.key.args.iter().cloned();
        self.names.iter().cloned().zip(types).collect()
    }

    /// What the code generator takes to translate it (its parsed definition
    /// and resolved names given).
    pub fn spec<'a>(&self, def: &'a FunctionDef, globals: &'a Globals) -> KernelSpec<'a> {
        KernelSpec {
            def,
            src: self.wu.src.clone(),
            globals,
            pattern: self.key.pattern,
            space: self.key.space,
            rank: self.key.rank as usize,
            args: self.typed_args(),
            is_method: self.is_method,
            label: self.label.to_string(),
            repeat: false,
        }
    }

    /// The allocations of its view arguments.
    pub fn allocs(&self) -> Vec<usize> {
        self.vals
            .iter()
            .filter_map(|v| match v {
                ArgVal::View(x) => Some(x.alloc.id()),
                _ => None,
            })
            .collect()
    }

    /// Whether this launch repeats `prev` exactly: the same kernel over the
    /// same range with the same values (views: the same memory, geometry).
    pub fn repeats(&self, prev: &Launch) -> bool {
        // The cheap tests that tell launches apart first (kernels by digest,
        // then the range and the values: a chain launches one kernel on other
        // views); comparing whole keys, which only confirms, last.
        self.key.digest() == prev.key.digest()
            && self.lo == prev.lo
            && self.hi == prev.hi
            && self.is_method == prev.is_method
            && self.vals.len() == prev.vals.len()
            && self.vals.iter().zip(&prev.vals).all(|(a, b)| match (a, b) {
                (ArgVal::View(x), ArgVal::View(y)) => {
                    x.alloc.id() == y.alloc.id()
                        && x.offset == y.offset
                        && x.raw.extent == y.raw.extent
                        && x.raw.stride == y.raw.stride
                }
                (ArgVal::Int(x), ArgVal::Int(y)) => x == y,
                (ArgVal::Float(x), ArgVal::Float(y)) => x.to_bits() == y.to_bits(),
                (ArgVal::Complex(a, b), ArgVal::Complex(c, d)) => {
                    a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits()
                }
                _ => false,
            })
            && self.key == prev.key
    }

    /// Some view argument is memory Python may read or write behind the
    /// runtime's back now (`Alloc::runs_now`): lazy mode runs it at once.
    /// Asked at submission, not when the arguments were read: Python code
    /// (another thread's export) may run in between.
    pub fn runs_now(&self) -> bool {
        self.vals
            .iter()
            .any(|v| matches!(v, ArgVal::View(x) if x.alloc.runs_now()))
    }

    /// Borrowed device memory (CuPy, DLPack) is refused by host kernels.
    pub fn check_space(&self) -> PkResult<()> {
        let device_only = self
            .vals
            .iter()
            .any(|v| matches!(v, ArgVal::View(x) if x.alloc.is_device_only()));
        if self.key.space != Space::Cuda && device_only {
            return Err(PkError::Argument(format!(
                "workunit '{}': a CUDA array (it has __cuda_array_interface__) was passed to a kernel on the host; \
                 launch it in the Cuda space (pk.set_default_space(pk.Cuda) or pk.RangePolicy(pk.Cuda, ...))",
                self.workunit().name
            )));
        }
        Ok(())
    }
}
