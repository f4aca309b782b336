//! The subcommands' logic, kept out of main.rs (a thin dispatcher).
//!
//! The catalog-level commands (`apply`, `check`, `graph`, `explain`) take a JSON catalog file
//! here; each also has a `*_catalog` entry point taking a `Catalog`, so that manifests can be
//! compiled first and fed in.

pub mod apply;
pub mod bucket;
pub mod catalog_file;
pub mod graph;

use crate::catalog::Catalog;
use std::path::Path;

/// Reads a Puppet JSON catalog (raw from Puppet, normalized, or Ordo's own). A malformed one
/// is refused with a rendered diagnostic naming the place of the problem (see `catalog_file`).
pub fn load_catalog(path: &Path) -> Result<Catalog, String> {
    catalog_file::read_catalog(path).map_err(|r| {
        r.render(crate::diagnostics::RenderOptions::for_stderr())
            .trim_end()
            .to_string()
    })
}

/// Is this file a catalog (JSON) rather than a manifest?
pub fn is_catalog_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
        || std::fs::read_to_string(path)
            .map(|t| t.trim_start().starts_with('{'))
            .unwrap_or(false)
}

/// Colour for people: on a terminal, and never when `NO_COLOR` is set.
pub fn stdout_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}
