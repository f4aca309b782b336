//! The `ordo` command: a thin layer over the library.

use clap::{Parser, Subcommand, ValueEnum};
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
        /// A Hiera 5 config for the global layer.
        #[arg(long)]
        hiera_config: Option<PathBuf>,
        /// Resource type schemas (JSON, as resource-type-schemas.json) for Ruby types.
        #[arg(long)]
        types: Option<PathBuf>,
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
        Command::Compile {
            manifest,
            node,
            facts,
            modulepath,
            output,
            strict_variables,
            hiera_config,
            types,
        } => {
            let code = ordo::cli::compile::run(ordo::cli::compile::CompileArgs {
                manifest,
                node,
                facts,
                modulepath,
                output,
                strict_variables,
                hiera_config,
                types,
            });
            ExitCode::from(code as u8)
        }
    }
}
