//! `ordo check` fixtures: `fixtures/check/{ok,err}/NAME.pp` checked for node `oracle-node`
//! with no facts; the rendered diagnostics (no colour) are compared with `NAME.expected`.
//! `NAME.modules/` (if present) is the module path. An ok fixture has no error (it may have
//! warnings); an err fixture has at least one. `UPDATE_EXPECT=1` rewrites the expectations;
//! review the diff.

use crate::common;

use ordo::check::check_manifest;
use ordo::cli::compile::FsLoader;
use ordo::diagnostics::{render, to_json, RenderOptions};
use ordo::eval::CompileOptions;
use std::path::Path;

fn report(path: &Path) -> ordo::check::Report {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    let modules = path.with_extension("modules");
    // Relative to the crate, so that the module files' names are the same on every machine.
    let rel = modules
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(&modules)
        .to_string_lossy()
        .into_owned();
    let loader = FsLoader::new(modules.is_dir().then_some(rel.as_str()));
    let opts = CompileOptions {
        node: "oracle-node".into(),
        facts: serde_json::json!({}),
        strict_variables: false,
        resolve_deferred: false,
        server: None,
    };
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    check_manifest(&name, &text, &loader, &opts)
}

fn render_all(r: &ordo::check::Report) -> String {
    let mut out = String::new();
    for d in &r.diagnostics {
        out.push_str(&render(d, &r.sources, RenderOptions { color: false }));
    }
    out.push_str(&format!(
        "{} error(s), {} warning(s)\n",
        r.errors(),
        r.warnings()
    ));
    out
}

fn check(kind: &str, want_error: bool) {
    common::golden_pp(&format!("check/{kind}"), "expected", want_error, |f| {
        let r = report(f);
        let failed = r.errors() > 0;
        (render_all(&r), failed)
    });
}

#[test]
fn ok_fixtures_have_no_error() {
    check("ok", false);
}

#[test]
fn err_fixtures_have_their_errors() {
    check("err", true);
}

/// `--format json`: every diagnostic has its place and its labels' places.
#[test]
fn json_diagnostics_carry_places() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/check/err/cycle-arrows.pp");
    let r = report(&f);
    let d = r.diagnostics.first().expect("a cycle");
    let j = to_json(d, &r.sources);
    assert_eq!(j["code"], "cycle");
    assert_eq!(j["file"], "cycle-arrows.pp");
    assert!(j["line"].as_u64().is_some_and(|l| l > 0));
    assert!(j["column"].as_u64().is_some_and(|c| c > 0));
    let labels = j["labels"].as_array().expect("labels");
    assert_eq!(labels.len(), 2, "{j}");
    for l in labels {
        assert_eq!(l["file"], "cycle-arrows.pp");
        assert!(l["line"].as_u64().is_some());
        assert!(!l["message"].as_str().unwrap_or("").is_empty());
    }
}

/// `ordo explain` on a manifest names the arrow and the `require` call behind each edge.
#[test]
fn explain_names_arrows_and_require_calls() {
    let text = "class a {\n  require b\n}\nclass b {}\ninclude a\nnotify { 'x': }\nnotify { 'y': }\nNotify['x'] -> Notify['y']\n";
    let opts = CompileOptions {
        node: "oracle-node".into(),
        facts: serde_json::json!({}),
        strict_variables: false,
        resolve_deferred: false,
        server: None,
    };
    let result = ordo::eval::compile("site.pp", text, &ordo::eval::NoModules, &opts);
    let catalog = result.catalog.clone().expect("compiles");
    let loc = ordo::check::Locator::from_provenance(result.provenance.clone());
    let explain = |a: &str, b: &str| {
        ordo::cli::graph::explain_located(
            &catalog,
            a,
            b,
            ordo::graph::Ordering::Manifest,
            &loc,
            &result.sources,
        )
        .expect("both resources exist")
        .join("\n")
    };
    assert_eq!(
        explain("Notify[x]", "Notify[y]"),
        "Notify[x] is applied before Notify[y]:\n  Notify[x] => Notify[y]: chaining arrow Notify[x] -> Notify[y] (site.pp:8)"
    );
    let lines = explain("Class[b]", "Class[a]");
    assert!(
        lines.contains("Class[B] => Class[A]: require call in Class[A] (site.pp:2)"),
        "{lines}"
    );
}
