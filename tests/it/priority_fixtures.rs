//! Rudder priorities at compile time: `fixtures/priority/{ok,err}/NAME.pp` compiled for node
//! `oracle-node` with no facts. `NAME.out` beside each holds the log (warnings for dropped
//! declarations), the errors, the `--explain-priorities` report and a compact catalog
//! (resources with line and parameters, containment edges). A fixture whose first line is
//! `# apply: alphanumeric` is also applied by the `ordo` binary with `--ordering
//! alphanumeric`, in noop, and its notices are appended. `UPDATE_EXPECT=1 cargo test --test
//! priority_fixtures` rewrites the `.out` files; review the diff.

use ordo::catalog::Catalog;
use ordo::cli::priorities::explain;
use ordo::eval::{compile, CompileOptions, NoModules};
use std::path::{Path, PathBuf};
use std::process::Command;

fn compact(c: &Catalog) -> String {
    let mut out = String::new();
    for r in &c.resources {
        let params = serde_json::to_string(&r.parameters).unwrap();
        let line = r.line.map(|l| format!(":{l}")).unwrap_or_default();
        out.push_str(&format!("{}[{}]{line} {params}\n", r.type_name, r.title));
    }
    for e in &c.edges {
        out.push_str(&format!("{} -> {}\n", e.source, e.target));
    }
    out
}

fn applied(path: &Path) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let facts = tmp.path().join("facts.json");
    std::fs::write(&facts, "{}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .arg("apply")
        .arg(path)
        .args([
            "--ordering",
            "alphanumeric",
            "--noop",
            "--log-format",
            "puppet",
        ])
        .args(["--node", "oracle-node", "--facts"])
        .arg(&facts)
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let mut s = format!("exit {}\n", out.status.code().unwrap_or(-1));
    for l in text.lines().filter(|l| l.contains("/message: ")) {
        s.push_str(l);
        s.push('\n');
    }
    s
}

fn render(path: &Path) -> (String, bool) {
    let text = std::fs::read_to_string(path).unwrap();
    let opts = CompileOptions {
        node: "oracle-node".into(),
        facts: serde_json::json!({}),
        strict_variables: false,
        resolve_deferred: false,
        server: None,
    };
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let result = compile(&name, &text, &NoModules, &opts);
    let mut out = String::from("== log ==\n");
    for l in &result.logs {
        out.push_str(&l.render());
        out.push('\n');
    }
    out.push_str("== errors ==\n");
    let mut failed = false;
    for d in result.diagnostics.iter().filter(|d| d.is_error()) {
        failed = true;
        out.push_str(&d.message);
        out.push('\n');
    }
    if let Some(c) = &result.catalog {
        out.push_str("== explain-priorities ==\n");
        out.push_str(&explain(c, &result.priorities));
        out.push_str("== catalog ==\n");
        out.push_str(&compact(c));
    }
    if text.starts_with("# apply: alphanumeric") {
        out.push_str("== apply --ordering alphanumeric --noop ==\n");
        out.push_str(&applied(path));
    }
    (out, failed)
}

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/priority")
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pp"))
        .collect();
    v.sort();
    v
}

fn check(kind: &str, must_fail: bool) {
    let files = fixtures(kind);
    assert!(files.len() >= 4, "priority fixtures are missing");
    let update = crate::common::update_expect();
    let mut bad = vec![];
    for f in files {
        let (got, failed) = render(&f);
        assert_eq!(
            failed,
            must_fail,
            "{}: failure expected: {must_fail}\n{got}",
            f.display()
        );
        let expect = f.with_extension("out");
        if update {
            std::fs::write(&expect, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&expect).unwrap_or_default();
        if want != got {
            bad.push(format!(
                "{}:\n--- expected\n{want}\n--- got\n{got}",
                f.display()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn ok_fixtures_compile_with_their_expected_output() {
    check("ok", false);
}

#[test]
fn err_fixtures_fail_with_their_expected_error() {
    check("err", true);
}
