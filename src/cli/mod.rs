//! Subcommand logic for the `ordo` binary (which only dispatches here).

pub mod compile;
pub mod data;
pub mod parse;
