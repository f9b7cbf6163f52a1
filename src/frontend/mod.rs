//! The front end: captured source, the one module that imports
//! rustpython-parser (`parse.rs`), our kernel AST with spans, and the
//! workunit that parses itself once.
pub mod ast;
mod chain;
pub mod parse;
pub mod source;
pub mod workunit;
