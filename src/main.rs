//! The `ordo` command: a thin layer over the library.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ordo",
    version,
    about = "Compile, check and apply Puppet manifests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Apply a catalog to this machine.
    Apply(ordo::cli::apply::ApplyArgs),
    /// Check a catalog: missing dependencies, cycles, unsupported resources.
    Check(ordo::cli::graph::CheckArgs),
    /// Print a catalog's graph as DOT.
    Graph(ordo::cli::graph::GraphArgs),
    /// Explain why one resource is applied before another.
    Explain(ordo::cli::graph::ExplainArgs),
    /// List or restore file content that applies replaced.
    Bucket(ordo::cli::bucket::BucketArgs),
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    exit(match cli.command {
        Command::Apply(a) => ordo::cli::apply::run(&a),
        Command::Check(a) => ordo::cli::graph::check(&a),
        Command::Graph(a) => ordo::cli::graph::graph(&a),
        Command::Explain(a) => ordo::cli::graph::explain_cmd(&a),
        Command::Bucket(a) => ordo::cli::bucket::run(&a),
    })
}
