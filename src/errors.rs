//! Typed errors of every stage. Front-end errors carry a span and become Python
//! exceptions that show the user's file, line, source line and a caret.
use crate::frontend::ast::Span;
use crate::frontend::source::{Location, SourceInfo};
use std::fmt;

/// Which Python exception family a front-end error belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelErrorKind {
    /// Outside the supported subset (raised as a SyntaxError subclass).
    Unsupported,
    /// Types do not fit, unknown names, wrong index counts (TypeError subclass).
    Type,
}

/// An error found before any C++ exists, pointing at a span of the kernel source.
#[derive(Clone, Debug)]
pub struct KernelError {
    pub kind: KernelErrorKind,
    pub span: Span,
    pub message: String,
    /// The source the span points into when it is not the workunit's own
    /// (an error inside a `@pk.function` defined elsewhere).
    pub origin: Option<std::sync::Arc<SourceInfo>>,
}

pub type KResult<T> = Result<T, KernelError>;

pub fn unsupported<T>(span: Span, message: impl Into<String>) -> KResult<T> {
    Err(KernelError {
        kind: KernelErrorKind::Unsupported,
        span,
        message: message.into(),
        origin: None,
    })
}

pub fn type_error<T>(span: Span, message: impl Into<String>) -> KResult<T> {
    Err(KernelError {
        kind: KernelErrorKind::Type,
        span,
        message: message.into(),
        origin: None,
    })
}

/// A `KernelError` resolved against its source: what the user finally sees.
#[derive(Clone, Debug)]
pub struct LocatedError {
    pub kind: KernelErrorKind,
    pub loc: Location,
    pub message: String,
    pub kernel: String,
}

impl LocatedError {
    pub fn new(err: KernelError, src: &SourceInfo, kernel: &str) -> Self {
        LocatedError {
            kind: err.kind,
            loc: err.origin.as_deref().unwrap_or(src).locate(err.span),
            message: err.message,
            kernel: kernel.to_string(),
        }
    }
}

impl fmt::Display for LocatedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.loc;
        writeln!(
            f,
            "in workunit '{}': {}\n  File \"{}\", line {}, column {}",
            self.kernel, self.message, l.filename, l.line, l.column
        )?;
        writeln!(f, "    {}", l.source_line)?;
        write!(
            f,
            "    {}{}",
            " ".repeat(l.column.saturating_sub(1) as usize),
            "^".repeat(l.caret_len as usize)
        )
    }
}

/// Everything that can go wrong between a launch call and a finished kernel.
#[derive(Debug, thiserror::Error)]
pub enum PkError {
    #[error("{0}")]
    Kernel(Box<LocatedError>),
    /// The C++ compiler rejected generated code (a bug of ours, reported in full).
    #[error("C++ compilation of workunit '{kernel}' failed; generated source kept at {cpp_path}\n{excerpt}")]
    Compile {
        kernel: String,
        cpp_path: String,
        excerpt: String,
    },
    /// Wrong arguments at the call: plain sentences, no location in the kernel.
    #[error("{0}")]
    Argument(String),
    #[error("{0}")]
    Value(String),
    /// Memory could not be allocated (host or device).
    #[error("{0}")]
    Memory(String),
    /// An index or subview outside a View.
    #[error("{0}")]
    Index(String),
    /// Ctrl-C stopped the work (the program's SIGINT handler raised).
    #[error("{0}")]
    Interrupted(String),
    /// Integer division or modulo by zero in a kernel.
    #[error("{0}")]
    ZeroDivision(String),
    /// Set-up problems: Kokkos missing, no compiler, cache not writable.
    #[error("{0}")]
    Environment(String),
    /// A kernel failed while running (Kokkos threw).
    #[error("{0}")]
    Runtime(String),
    /// An exception raised by Python code the pipeline called (name resolution).
    #[error("{0}")]
    Python(pyo3::PyErr),
}

pub type PkResult<T> = Result<T, PkError>;

impl From<std::io::Error> for PkError {
    fn from(e: std::io::Error) -> Self {
        PkError::Environment(format!("file system error: {e}"))
    }
}
