//! Ordo: a Rust implementation of the Puppet language.
//!
//! The pipeline, one module per stage (see `docs/architecture.md`):
//! lexer -> parser -> AST -> evaluator -> catalog -> graph -> runner.

pub mod apply;
pub mod ast;
pub mod ast_walk;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod diagnostics;
pub mod digest;
pub mod eval;
pub mod facts;
pub mod fxhash;
pub mod graph;
pub mod input;
pub mod lexer;
pub mod parser;
pub mod pn;
pub mod ruby;
pub mod ruby_text;
pub mod serve;
pub mod span;

/// The Puppet release whose language and catalog format Ordo implements (and reports as
/// `$server_facts['serverversion']`).
pub const PUPPET_VERSION: &str = "7.23.0";
