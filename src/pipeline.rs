//! The eager compile pipeline, one named stage per line:
//! parse -> resolve names -> lower and generate C++ -> cache key -> compile -> load.
use crate::build::{cache, loader, toolchain};
use crate::codegen::{self, ArgTy, KernelAbi, Pattern, Space};
use crate::errors::{LocatedError, PkError, PkResult};
use crate::lower::Globals;
use crate::workunit::Workunit;

/// A loaded kernel: the entry point and how to fill its arguments.
pub struct Kernel {
    pub run: loader::EntryFn,
    pub error: loader::ErrorFn,
    pub abi: KernelAbi,
    pub source_key: String,
    /// Where it runs: CUDA kernels take device pointers.
    pub space: crate::codegen::Space,
    /// CUDA kernels: whether each view slot may be written (its device copy
    /// then becomes the newer one). Empty: every view counts as written.
    pub view_writes: Vec<bool>,
}

pub struct Request<'a> {
    pub wu: &'a Workunit,
    pub globals: &'a Globals,
    pub pattern: Pattern,
    pub space: Space,
    pub rank: usize,
    pub args: Vec<(String, ArgTy)>,
    pub is_method: bool,
    pub label: String,
}

/// Generates C++ for a request without compiling (used by tests and explain).
pub fn translate(req: &Request) -> PkResult<codegen::Generated> {
    let def = req.wu.def()?;
    let _span = tracing::info_span!("translate", workunit = %req.wu.name).entered();
    let spec = codegen::KernelSpec {
        def: &def,
        src: req.wu.src.clone(),
        globals: req.globals,
        pattern: req.pattern,
        space: req.space,
        rank: req.rank,
        args: req.args.clone(),
        is_method: req.is_method,
        label: req.label.clone(),
    };
    codegen::generate(&spec)
        .map_err(|e| PkError::Kernel(Box::new(LocatedError::new(e, &req.wu.src, &req.wu.name))))
}

pub fn build(req: &Request) -> PkResult<Kernel> {
    let generated = translate(req)?;
    let tc = toolchain::get()?;
    let key = cache::key(tc, &generated.source);
    let so = cache::compile(tc, &key, &generated.source, &req.wu.name)?;
    let lib = loader::open(&so)?;
    let view_writes = if req.space == codegen::Space::Cuda && !req.is_method {
        let def = req.wu.def()?;
        let acc = crate::lazy::access::view_access(&def, &req.args, None);
        generated
            .abi
            .view_slots
            .iter()
            .map(|&k| acc.get(&req.args[k].0).is_none_or(|a| a.write))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Kernel {
        run: loader::symbol(lib, "pk_run")?,
        error: loader::symbol(lib, "pk_error")?,
        abi: generated.abi,
        source_key: key,
        space: req.space,
        view_writes,
    })
}
