//! The `ordo` command: a thin layer over the library.

#![allow(clippy::disallowed_methods)]

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

use ordo::cli::DiagFormat;

#[derive(Subcommand)]
enum Command {
    /// Parse Puppet files (.pp, .epp) and report syntax errors.
    Parse {
        /// Print the AST (`pn` as `puppet parser dump --format pn`, or `json`).
        #[arg(long, value_enum)]
        dump: Option<DumpFormat>,
        /// Diagnostics as text with code frames (`human`) or as one JSON array on stdout
        /// (`json`, as `ordo check --format json`).
        #[arg(long, value_enum, default_value = "human", conflicts_with = "dump")]
        format: DiagFormat,
        /// The files to parse: manifests (.pp) and EPP templates (.epp).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Compile a manifest into a Puppet JSON catalog (catalog_format 2).
    Compile(ordo::cli::compile::CompileArgs),
    /// Apply a manifest or a catalog to this machine.
    Apply(ordo::cli::apply::ApplyArgs),
    /// Check a manifest or catalog: missing dependencies, cycles, unsupported resources.
    Check(ordo::cli::graph::CheckArgs),
    /// Print the dependency graph of a manifest or catalog as DOT.
    Graph(ordo::cli::graph::GraphArgs),
    /// Explain why one resource is applied before another.
    Explain(ordo::cli::graph::ExplainArgs),
    /// List or restore file content that applies replaced.
    Bucket(ordo::cli::bucket::BucketArgs),
    /// Print this machine's facts as `facter` does (Facter 4's core facts, the legacy ones
    /// with --show-legacy, external facts).
    Facts(ordo::cli::facts::FactsArgs),
    /// Serve catalogs to Puppet agents over HTTPS, with a certificate authority.
    Serve(ordo::serve::ServeArgs),
    /// The certificate authority of `ordo serve`: list, sign, revoke, import.
    Ca(ordo::serve::CaArgs),
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// mimalloc: a compile makes many small allocations, which it serves faster than glibc's
/// malloc (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A file size limit (`ulimit -f`) must fail the write that passes it (EFBIG: an error
    // with its message, no partial output file) instead of killing the process mid-run
    // (SIGXFSZ's default). A handler, unlike ignoring it, is reset for the commands run.
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    // The command runs on a thread with a large stack: the parser bounds nesting, but
    // evaluation recurses (chains of includes, nested data) and a stack overflow is an abort,
    // not an error. The stack is only reserved: pages are used as the recursion reaches them.
    let code = std::thread::Builder::new()
        .name("ordo".into())
        .stack_size(MAIN_STACK)
        .spawn(move || dispatch(cli.command))
        .map_err(|e| eprintln!("Error: could not start: {e}"))
        .and_then(|t| t.join().map_err(|_| ()))
        .unwrap_or(101);
    // Output that could not be written (a full disk, not a reader that stopped early) fails
    // a command that would have succeeded.
    match ordo::cli::stdout_error() {
        Some(e) => {
            eprintln!("Error: Could not write to standard output: {e}");
            exit(if code == 0 { 1 } else { code })
        }
        None => exit(code),
    }
}

/// The stack of the thread that runs the command (see `main`).
const MAIN_STACK: usize = 512 << 20;

/// Runs a subcommand; returns its exit status.
fn dispatch(command: Command) -> i32 {
    match command {
        Command::Parse {
            dump,
            format,
            files,
        } => {
            let dump = dump.map(|d| match d {
                DumpFormat::Pn => ordo::cli::parse::Dump::Pn,
                DumpFormat::Json => ordo::cli::parse::Dump::Json,
            });
            if ordo::cli::parse::run(&files, dump, matches!(format, DiagFormat::Json)) {
                0
            } else {
                1
            }
        }
        Command::Compile(a) => with_format(a.format, || ordo::cli::compile::run(&a)),
        Command::Apply(a) => with_format(a.format, || ordo::cli::apply::run(&a)),
        Command::Check(a) => with_format(a.format, || ordo::cli::graph::check(&a)),
        Command::Graph(a) => with_format(a.format, || ordo::cli::graph::graph(&a)),
        Command::Explain(a) => with_format(a.format, || ordo::cli::graph::explain_cmd(&a)),
        Command::Bucket(a) => ordo::cli::bucket::run(&a),
        Command::Facts(a) => ordo::cli::facts::run(&a),
        Command::Serve(a) => ordo::serve::run(&a),
        Command::Ca(a) => ordo::serve::ca_command(&a),
    }
}

/// Runs a command whose diagnostics follow `--format` (see `ordo::cli::emit`).
fn with_format(format: ordo::cli::DiagFormat, run: impl FnOnce() -> i32) -> i32 {
    ordo::cli::set_diag_format(format);
    let code = run();
    ordo::cli::finish_json_diagnostics();
    code
}
