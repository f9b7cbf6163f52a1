//! A workunit as the core knows it: its captured source, parsed once (at
//! first need) into our kernel AST, and its size in statements.
use super::ast::{count_statements, FunctionDef};
use super::parse::parse_function;
use super::source::SourceInfo;
use crate::errors::{LocatedError, PkError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

pub struct Workunit {
    /// Unique in the process: kernel keys name workunits by it.
    pub id: usize,
    pub name: String,
    /// `name` as the default label of its launches (shared, not copied per launch).
    pub label: Arc<str>,
    pub src: Arc<SourceInfo>,
    parsed: OnceLock<Result<Arc<FunctionDef>, LocatedError>>,
    statements: OnceLock<usize>,
    digest: OnceLock<String>,
}

impl Workunit {
    pub fn new(name: String, src: SourceInfo) -> Self {
        Workunit {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            label: Arc::from(name.as_str()),
            name,
            src: Arc::new(src),
            parsed: OnceLock::new(),
            statements: OnceLock::new(),
            digest: OnceLock::new(),
        }
    }

    /// blake3 of the (dedented) source, 16 hex digits: what a trace records
    /// to notice that a workunit changed.
    pub fn source_digest(&self) -> &str {
        self.digest
            .get_or_init(|| blake3::hash(self.src.text.as_bytes()).to_hex()[..16].to_string())
    }

    /// The parsed definition (a located error when the source is outside the subset).
    pub fn def(&self) -> Result<Arc<FunctionDef>, PkError> {
        self.parsed
            .get_or_init(|| {
                let _span = tracing::info_span!("parse", workunit = %self.name).entered();
                parse_function(&self.src.text)
                    .map(Arc::new)
                    .map_err(|e| LocatedError::new(e, &self.src, &self.name))
            })
            .clone()
            .map_err(|e| PkError::Kernel(Box::new(e)))
    }

    /// Size of the body in statements (unparsable bodies count as huge).
    pub fn statement_count(&self) -> usize {
        *self.statements.get_or_init(|| {
            self.def()
                .map(|d| count_statements(&d.body))
                .unwrap_or(usize::MAX / 64)
        })
    }
}
