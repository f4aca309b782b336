//! The evaluator on parsed input: whatever parses is compiled for a fixed node with fixed
//! facts and a small in-memory module (no modulepath on disk, no network, no file writes; the
//! evaluator does no IO). The compile must return a catalog or diagnostics, never panic, hang
//! or exhaust memory (libFuzzer's `-timeout` and `-rss_limit_mb` watch the last two); every
//! diagnostic renders against its source and the catalog serialises.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ordo::diagnostics::{render, RenderOptions};
use ordo::eval::{compile, CompileOptions};
use ordo::span::SourceMap;
use std::sync::OnceLock;

#[path = "../eval_setup.rs"]
mod eval_setup;

fn fixed() -> &'static (eval_setup::FuzzLoader, CompileOptions) {
    static FIXED: OnceLock<(eval_setup::FuzzLoader, CompileOptions)> = OnceLock::new();
    FIXED.get_or_init(eval_setup::setup)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Only what parses reaches the evaluator (the parser has its own target).
    let mut sources = SourceMap::new();
    let id = sources.add("fuzz.pp", text);
    if ordo::parser::parse(text, id).has_errors() {
        return;
    }
    let (loader, opts) = fixed();
    let result = compile("fuzz.pp", text, loader, opts);
    for d in &result.diagnostics {
        let _ = render(d, &result.sources, RenderOptions { color: false });
    }
    if let Some(catalog) = &result.catalog {
        let _ = catalog.to_json_pretty();
    }
});
