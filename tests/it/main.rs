//! Ordo's integration tests, one binary: each module is one area (`cargo test --test it
//! apply_cli` runs one). They run the built `ordo` binary on real files in per-test temp
//! directories; those that read the oracle data in `../shared` or need a tool (ruby,
//! puppet, facter) skip with a printed reason when it is absent, and fail instead under
//! `CI=true` (see `common::prerequisite`).

// Tests talk to the machine: the core's IO rules (clippy.toml) are not theirs.
#![allow(clippy::disallowed_methods)]

mod apply_cli;
mod apply_conformance;
mod apply_console;
mod apply_hardening;
mod apply_idempotence;
mod apply_safety;
mod apply_sandbox;
mod apply_schedules;
mod catalog_fuzz_regressions;
mod catalog_refusals;
mod check_fixtures;
mod command_output;
mod common;
mod compile_limits;
mod compile_nodes;
mod compile_output;
mod conformance_compile;
mod eval_fixtures;
mod eval_fuzz_regressions;
mod exported_store;
mod facts_custom;
mod facts_gather;
mod facts_refusals;
mod functions_registry;
mod graph_fixtures;
mod modules;
mod oracle_cases;
mod parser;
mod parser_fuzz_regressions;
mod priority_fixtures;
mod properties;
mod providers_table;
mod requisites_cli;
mod requisites_fixtures;
mod ruby_runtime;
mod semantics;
mod serve;
mod stdlib9_fixtures;
mod tidy;
