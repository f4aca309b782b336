//! The subcommands' logic, kept out of main.rs (a thin dispatcher).
//!
//! The catalog-level commands (`apply`, `check`, `graph`, `explain`) take a JSON catalog file
//! here; each also has a `*_catalog` entry point taking a `Catalog`, so that manifests can be
//! compiled first and fed in.

#![allow(clippy::disallowed_methods)]

/// `println!` that survives a closed stdout (`ordo compile x.pp | head`): the output is
/// simply dropped instead of panicking. Any other failure (a full disk) is noted for the
/// exit status (see [`note_stdout`]).
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::note_stdout(writeln!(std::io::stdout().lock(), $($t)*));
    }};
}

/// `print!` that survives a closed stdout, as [`outln!`].
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::note_stdout(write!(std::io::stdout().lock(), $($t)*));
    }};
}

/// The first failure to write standard output, other than a closed pipe.
static STDOUT_ERROR: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Notes the outcome of a write to standard output: a reader that stopped early (a closed
/// pipe) is not an error, anything else is (the output is incomplete); the command then
/// fails (see [`stdout_error`]).
pub fn note_stdout(written: std::io::Result<()>) {
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = STDOUT_ERROR.set(e.to_string());
        }
    }
}

/// The first failure to write standard output noted by [`note_stdout`], after a last flush.
pub fn stdout_error() -> Option<&'static str> {
    use std::io::Write as _;
    note_stdout(std::io::stdout().lock().flush());
    STDOUT_ERROR.get().map(String::as_str)
}

pub mod apply;
pub mod bucket;
pub mod catalog_file;
pub mod compile;
pub mod data;
pub mod facts;
pub mod graph;
pub mod host;
pub mod nodes;
mod output_file;
pub mod parse;
pub mod priorities;
pub mod ruby_types;
pub mod shared_files;
pub mod store;

use crate::catalog::Catalog;
use std::path::Path;

/// Reads a Puppet JSON catalog (raw from Puppet, normalized, or Ordo's own). A malformed one
/// is refused with a diagnostic naming the place of the problem (see `catalog_file`),
/// reported (see [`emit`]); `Err` carries the exit code.
pub fn load_catalog(path: &Path) -> Result<Catalog, i32> {
    catalog_file::read_catalog(path).map_err(|r| {
        emit(&r.diagnostic, &r.sources);
        1
    })
}

/// The catalog of a command's input: a JSON catalog is read, a manifest is compiled. Errors
/// are printed; `Err` carries the exit code.
pub fn load_input(file: &Path, inputs: &compile::CompileInputs) -> Result<Catalog, i32> {
    if is_catalog_file(file) {
        load_catalog(file)
    } else {
        compile::compile_manifest(file, inputs)
    }
}

/// Is this file a catalog (JSON) rather than a manifest?
pub fn is_catalog_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
        || crate::input::head(path, 64 * 1024).is_ok_and(|t| t.trim_ascii_start().starts_with(b"{"))
}

/// Colour for people: on a terminal, and never when `NO_COLOR` is set.
pub fn stdout_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// How diagnostics are drawn on standard error: in colour on a terminal, unless `NO_COLOR`
/// is set.
pub fn stderr_render_options() -> crate::diagnostics::RenderOptions {
    use std::io::IsTerminal;
    crate::diagnostics::RenderOptions {
        color: std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal(),
    }
}

/// `--format json`: the diagnostics of the command are kept here and printed at its end as
/// one JSON array on stdout (see [`emit`]), in place of the drawings on stderr.
static JSON_DIAGNOSTICS: std::sync::Mutex<Option<Vec<serde_json::Value>>> =
    std::sync::Mutex::new(None);

/// The diagnostics format of a command (`--format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DiagFormat {
    /// Code frames on stderr, in colour on a terminal.
    #[default]
    Human,
    /// One JSON array on stdout (the shape of `ordo parse --format json`).
    Json,
}

/// Chooses how [`emit`] reports for the rest of the process.
pub fn set_diag_format(format: DiagFormat) {
    let mut kept = JSON_DIAGNOSTICS.lock().unwrap_or_else(|e| e.into_inner());
    *kept = (format == DiagFormat::Json).then(Vec::new);
}

/// Whether diagnostics are collected as JSON (`--format json`).
pub fn json_diagnostics() -> bool {
    JSON_DIAGNOSTICS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some()
}

/// Reports a diagnostic: drawn on stderr, or kept for the JSON array (`--format json`).
pub fn emit(d: &crate::diagnostics::Diagnostic, sources: &crate::span::SourceMap) {
    let mut kept = JSON_DIAGNOSTICS.lock().unwrap_or_else(|e| e.into_inner());
    match kept.as_mut() {
        Some(all) => all.push(crate::diagnostics::to_json(d, sources)),
        None => eprint!(
            "{}",
            crate::diagnostics::render(d, sources, stderr_render_options())
        ),
    }
}

/// [`emit`] for a diagnostic without a place in any source.
pub fn emit_plain(d: &crate::diagnostics::Diagnostic) {
    emit(d, &crate::span::SourceMap::default());
}

/// At the end of a command with `--format json`: the kept diagnostics as one JSON array on
/// stdout, when there are any (a command that succeeded without one prints only its output).
pub fn finish_json_diagnostics() {
    let kept = JSON_DIAGNOSTICS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(all) = kept.filter(|a| !a.is_empty()) {
        let text = serde_json::to_string_pretty(&all).expect("diagnostics serialise");
        outln!("{text}");
    }
}
