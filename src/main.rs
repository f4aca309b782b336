//! The `ordo` command: a thin layer over the library.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
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
    /// Compile a manifest into a Puppet JSON catalog.
    Compile {
        /// The main manifest (default: site.pp).
        manifest: Option<PathBuf>,
        /// The node name (certname).
        #[arg(long)]
        node: Option<String>,
        /// Facts as JSON or YAML (default: gathered from this machine).
        #[arg(long)]
        facts: Option<PathBuf>,
        /// Colon-separated module directories.
        #[arg(long)]
        modulepath: Option<String>,
        /// Write the catalog here instead of stdout.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// Unknown variables are errors.
        #[arg(long)]
        strict_variables: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Compile {
            manifest,
            node,
            facts,
            modulepath,
            output,
            strict_variables,
        } => ordo::cli::compile::run(ordo::cli::compile::CompileArgs {
            manifest,
            node,
            facts,
            modulepath,
            output,
            strict_variables,
        }),
    };
    ExitCode::from(code as u8)
}
