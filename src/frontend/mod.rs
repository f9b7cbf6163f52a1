//! Front end: Python source text -> our kernel AST. Only `parse.rs` knows the
//! third-party parser; everything downstream sees `ast.rs` alone.
pub mod ast;
pub mod parse;
pub mod source;
