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
pub mod stack;

/// The Puppet release whose language and catalog format Ordo implements (and reports as
/// `$server_facts['serverversion']`).
pub const PUPPET_VERSION: &str = "7.23.0";

/// The stack of every thread that compiles (the command's thread, `compile --nodes` and
/// `serve` workers). The parser bounds nesting, but evaluation recurses (chains of
/// includes, `elsif` chains, nested calls and data) and a stack overflow is an abort, not an
/// error: the bounds are sized for this stack. It is only reserved; pages are used as the
/// recursion reaches them.
pub const COMPILE_STACK: usize = 512 << 20;
