//! What free names in a kernel refer to: resolved from the Python function's
//! globals and closure when the kernel is first compiled.
use crate::frontend::ast::FunctionDef;
use crate::frontend::source::SourceInfo;
use crate::types::DType;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum Global {
    Int(i64),
    Float(f64),
    Bool(bool),
    MathModule,
    PkModule,
    NumpyModule,
    DTypeConst(DType),
    Function(Arc<FuncInfo>),
    ClassType(Arc<ClassInfo>),
}

/// A `@pk.function` with its own source and its own resolved names.
#[derive(Debug)]
pub struct FuncInfo {
    pub id: usize,
    pub def: FunctionDef,
    pub src: Arc<SourceInfo>,
    pub globals: Globals,
}

/// A `@pk.classtype`: a plain struct of scalars built by its `__init__`.
#[derive(Debug)]
pub struct ClassInfo {
    pub name: String,
    pub init: Option<Arc<FuncInfo>>,
    /// Methods other than `__init__`, callable on values: `p.norm()`.
    pub methods: BTreeMap<String, Arc<FuncInfo>>,
}

pub type Globals = BTreeMap<String, Global>;

/// `pk` is the conventional alias; any name bound to the pykokkos module counts.
pub fn is_pk_module(globals: &Globals, name: &str) -> bool {
    match globals.get(name) {
        Some(Global::PkModule) => true,
        None => name == "pk" || name == "pykokkos",
        _ => false,
    }
}

pub fn is_math_module(globals: &Globals, name: &str) -> bool {
    match globals.get(name) {
        Some(Global::MathModule) => true,
        None => name == "math",
        _ => false,
    }
}

pub fn is_numpy_module(globals: &Globals, name: &str) -> bool {
    match globals.get(name) {
        Some(Global::NumpyModule) => true,
        None => name == "np" || name == "numpy",
        _ => false,
    }
}

/// dtype names as PyKokkos (and NumPy) spell them.
pub fn dtype_by_pk_name(n: &str) -> Option<DType> {
    Some(match n {
        "int8" => DType::I8,
        "int16" => DType::I16,
        "int32" | "int" => DType::I32,
        "int64" => DType::I64,
        "uint8" => DType::U8,
        "uint16" => DType::U16,
        "uint32" => DType::U32,
        "uint64" => DType::U64,
        "float32" | "float" => DType::F32,
        "float64" | "double" | "real" => DType::F64,
        "bool" | "bool_" => DType::Bool,
        "complex64" => DType::C64,
        "complex128" | "complex_" => DType::C128,
        _ => return None,
    })
}
