//! `ordo parse FILE...`: parse files, print diagnostics, optionally dump the tree.

use crate::diagnostics::{render, Diagnostic};
use crate::parser::{parse, parse_epp};
use crate::span::SourceMap;
use std::io::Write;

/// What `--dump` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dump {
    Pn,
    Json,
}

/// Parses every file; returns whether all parsed without error. With `json`, the
/// diagnostics of every file are one JSON array on stdout (as `ordo check --format json`).
pub fn run(files: &[String], dump: Option<Dump>, json: bool) -> bool {
    let mut sources = SourceMap::new();
    let opts = crate::cli::stderr_render_options();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr().lock();
    let mut ok = true;
    let mut all: Vec<serde_json::Value> = Vec::new();
    let mut report = |d: &Diagnostic, sources: &SourceMap, err: &mut dyn Write| {
        if json {
            all.push(crate::diagnostics::to_json(d, sources));
        } else {
            let _ = write!(err, "{}", render(d, sources, opts));
        }
    };
    let last = files.len().saturating_sub(1);
    for (i, path) in files.iter().enumerate() {
        if path.ends_with(".erb") {
            // Ruby's template language: what a manifest renders with `template()`, not Puppet.
            let d = crate::diagnostics::Diagnostic::error(
                "not-puppet",
                format!("{path} is an ERB template, not a Puppet manifest"),
            )
            .with_help("ERB is checked when a manifest renders it with template(); `ordo parse` reads .pp manifests and .epp templates");
            report(&d, &sources, &mut err);
            ok = false;
            continue;
        }
        let text = match crate::input::read(std::path::Path::new(path)) {
            // Valid UTF-8 (the usual case) is taken as is, without a lossy copy.
            Ok(bytes) => String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            Err(e) => {
                let d = Diagnostic::error("unreadable", format!("cannot read {path}: {e}"));
                report(&d, &sources, &mut err);
                ok = false;
                continue;
            }
        };
        let id = sources.add(path.clone(), text);
        let text = &sources.get(id).expect("just added").text;
        let parsed = if path.ends_with(".epp") {
            parse_epp(text, id)
        } else {
            parse(text, id)
        };
        for d in &parsed.diagnostics {
            report(d, &sources, &mut err);
        }
        if parsed.has_errors() {
            ok = false;
        }
        if let (Some(program), Some(kind)) = (&parsed.program, dump) {
            let text = match kind {
                Dump::Pn => crate::pn::to_pn(program),
                Dump::Json => crate::pn::to_json(program),
            };
            super::note_stdout(writeln!(out, "{text}"));
        }
        if i == last {
            // The process exits right after the last file: freeing its tree (millions of
            // nodes for a big manifest) would only cost time, so it is leaked on purpose.
            std::mem::forget(parsed);
        }
    }
    if json {
        let text = serde_json::to_string_pretty(&all).expect("diagnostics serialise");
        super::note_stdout(writeln!(out, "{text}"));
    }
    // Likewise the source texts and their line tables.
    std::mem::forget(sources);
    ok
}
