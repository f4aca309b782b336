//! Evaluator fixtures: `fixtures/eval/{ok,err}/NAME.pp` compiled for node `oracle-node` with
//! no facts; the log, errors and catalog are compared with `NAME.out` beside it.
//! `NAME.modules/` (if present) is the module path. `UPDATE_EXPECT=1` rewrites the `.out`
//! files; review the diff. The manifests were checked against real Puppet 7.23 when added.

use ordo::cli::compile::FsLoader;
use ordo::eval::{compile, CompileOptions};
use std::path::{Path, PathBuf};

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

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/eval")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture dir exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pp"))
        .collect();
    files.sort();
    files
}

fn check(kind: &str, want_error: bool) {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut problems = vec![];
    let files = fixtures(kind);
    assert!(!files.is_empty(), "no fixtures in {kind}");
    for f in files {
        let (got, failed) = render(&f);
        if failed != want_error {
            problems.push(format!(
                "{}: expected {}an error\n{got}",
                f.display(),
                if want_error { "" } else { "no " }
            ));
        }
        let exp = f.with_extension("out");
        if update {
            std::fs::write(&exp, &got).expect("write expectation");
            continue;
        }
        match std::fs::read_to_string(&exp) {
            Ok(want) if want == got => {}
            Ok(want) => problems.push(format!(
                "{}: output differs\n--- want\n{want}\n--- got\n{got}",
                f.display()
            )),
            Err(_) => problems.push(format!(
                "{}: missing {} (run with UPDATE_EXPECT=1)",
                f.display(),
                exp.display()
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
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
