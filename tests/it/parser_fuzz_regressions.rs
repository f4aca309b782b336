//! Inputs the fuzzers (`scripts/fuzz.sh lexer|parser`) found crashing, kept for ever:
//! `fixtures/parser/fuzz/NAME.pp` is parsed as a manifest and as an EPP template; neither may
//! panic, a rejected file must carry an error, every diagnostic must render; and the
//! manifest's verdict (`ok` or the rendered diagnostics) must equal `NAME.out`.
//! `UPDATE_EXPECT=1 cargo test` rewrites the `.out` files; review the diff.

use ordo::diagnostics::{render, RenderOptions};
use ordo::parser::{parse, parse_epp};
use ordo::span::SourceMap;
use std::path::Path;

#[test]
fn fuzz_regressions_parse_without_panicking() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parser/fuzz");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/parser/fuzz")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pp"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fuzz regression fixtures");
    let mut failures = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f).expect("fixture");
        // The fuzz targets skip input that is not UTF-8; so do we.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut sources = SourceMap::new();
        let id = sources.add(f.file_name().unwrap().to_string_lossy(), text.clone());
        let opts = RenderOptions { color: false };
        let mut verdict = String::new();
        for (k, parsed) in [parse(&text, id), parse_epp(&text, id)]
            .into_iter()
            .enumerate()
        {
            if parsed.program.is_none() && !parsed.has_errors() {
                failures.push(format!("{}: no tree and no error", f.display()));
            }
            let rendered: String = parsed
                .diagnostics
                .iter()
                .map(|d| render(d, &sources, opts))
                .collect();
            if k == 0 {
                verdict = if rendered.is_empty() {
                    "ok\n".into()
                } else {
                    rendered
                };
            }
        }
        let out = f.with_extension("out");
        if crate::common::update_expect() {
            std::fs::write(&out, &verdict).unwrap();
        } else if std::fs::read_to_string(&out).unwrap_or_default().trim_end() != verdict.trim_end()
        {
            failures.push(format!("{}: verdict changed:\n{verdict}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
