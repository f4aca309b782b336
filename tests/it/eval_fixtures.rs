//! Evaluator fixtures: `fixtures/eval/{ok,err}/NAME.pp` compiled for node `oracle-node` with
//! no facts; the log, errors and catalog are compared with `NAME.out` beside it.
//! `NAME.modules/` (if present) is the module path. `UPDATE_EXPECT=1` rewrites the `.out`
//! files; review the diff. The manifests were checked against real Puppet 7.23 when added.

use crate::common;

use ordo::cli::compile::FsLoader;
use ordo::eval::{compile, CompileOptions};
use std::path::Path;

fn render(path: &Path) -> (String, bool) {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    let modules = path.with_extension("modules");
    let loader = FsLoader::new(
        modules
            .is_dir()
            .then(|| modules.to_string_lossy().into_owned())
            .as_deref(),
    );
    let opts = CompileOptions {
        node: "oracle-node".into(),
        facts: serde_json::json!({}),
        strict_variables: false,
        resolve_deferred: false,
        server: None,
    };
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let result = compile(&name, &text, &loader, &opts);
    let mut out = String::from("== log ==\n");
    for l in &result.logs {
        // Module paths differ between machines: keep the part from the fixture's own dir.
        out.push_str(
            &l.render()
                .replace(&modules.to_string_lossy().to_string(), "MODULES"),
        );
        out.push('\n');
    }
    out.push_str("== errors ==\n");
    let mut failed = false;
    for d in result.diagnostics.iter().filter(|d| d.is_error()) {
        failed = true;
        out.push_str(
            &d.message
                .replace(&modules.to_string_lossy().to_string(), "MODULES"),
        );
        out.push('\n');
    }
    if let Some(c) = &result.catalog {
        out.push_str("== catalog ==\n");
        out.push_str(
            &c.to_json_pretty()
                .replace(&modules.to_string_lossy().to_string(), "MODULES"),
        );
        out.push('\n');
    }
    (out, failed)
}

fn check(kind: &str, want_error: bool) {
    common::golden_pp(&format!("eval/{kind}"), "out", want_error, render);
}

#[test]
fn ok_fixtures_compile_as_expected() {
    check("ok", false);
}

#[test]
fn err_fixtures_fail_with_puppets_message() {
    check("err", true);
}

/// The evaluator reads modules only through its loader: an in-memory module autoloads.
#[test]
fn modules_load_from_memory() {
    let mut loader = ordo::eval::MemoryLoader::default();
    loader.files.insert(
        "app/manifests/init.pp".into(),
        "class app($port = 8080) { app::site { 'main': } }".into(),
    );
    loader.files.insert(
        "app/manifests/site.pp".into(),
        "define app::site() { notify { \"${title} on ${app::port}\": } }".into(),
    );
    let opts = CompileOptions {
        node: "n1".into(),
        facts: serde_json::json!({}),
        strict_variables: false,
        resolve_deferred: false,
        server: None,
    };
    let result = compile("site.pp", "include app", &loader, &opts);
    assert!(
        result.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        result.diagnostics
    );
    let catalog = result.catalog.expect("a catalog");
    let titles: Vec<&str> = catalog.resources.iter().map(|r| r.title.as_str()).collect();
    assert!(titles.contains(&"main on 8080"), "{titles:?}");
    assert_eq!(catalog.classes, vec!["app".to_string()]);
}
