//! The `ordo` command: a thin layer over the library.

use clap::{Parser, Subcommand, ValueEnum};
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

#[derive(Clone, Copy, ValueEnum)]
enum DumpFormat {
    Pn,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Parse Puppet files (.pp, .epp) and report syntax errors.
    Parse {
        /// Print the AST (`pn` as `puppet parser dump --format pn`, or `json`).
        #[arg(long, value_enum)]
        dump: Option<DumpFormat>,
        #[arg(required = true)]
        files: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Parse { dump, files } => {
            let dump = dump.map(|d| match d {
                DumpFormat::Pn => ordo::cli::parse::Dump::Pn,
                DumpFormat::Json => ordo::cli::parse::Dump::Json,
            });
            if ordo::cli::parse::run(&files, dump) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
