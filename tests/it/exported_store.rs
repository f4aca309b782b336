//! Exported resources across node compiles (`--storeconfigs`), through the real binary and a
//! store in a temporary state directory: node A exports, node B collects.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

struct Run {
    code: i32,
    catalog: Value,
    stderr: String,
}

fn compile(dir: &Path, manifest: &str, node: &str, extra: &[&str]) -> Run {
    let file = dir.join(format!("{node}.pp"));
    std::fs::write(&file, manifest).unwrap();
    let state = dir.join("state");
    let out = Command::new(ORDO)
        .arg("compile")
        .arg(&file)
        .args(["--node", node, "--state-dir", state.to_str().unwrap()])
        .args(extra)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        catalog: serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A compile of `node` that exports nothing.
fn exports_nothing(dir: &Path, node: &str) -> Run {
    compile(dir, "notify { 'plain': }\n", node, &["--storeconfigs"])
}

fn resource<'a>(run: &'a Run, type_name: &str, title: &str) -> Option<&'a Value> {
    run.catalog["resources"]
        .as_array()?
        .iter()
        .find(|r| r["type"] == type_name && r["title"] == title)
}

const EXPORTER: &str = r#"
@@notify { 'from-a': message => 'hello', tag => ['greeting'] }
@@notify { 'other-a': message => 'bye' }
"#;

#[test]
fn a_node_collects_what_another_exported() {
    let dir = tempfile::tempdir().unwrap();
    let a = compile(dir.path(), EXPORTER, "a.example.com", &["--storeconfigs"]);
    assert_eq!(a.code, 0, "{}", a.stderr);
    // The exporting catalog keeps exported resources out, as the agent's catalog does...
    assert!(resource(&a, "Notify", "from-a").is_none());
    // ...and the store holds them, exported, with their tags.
    let file = dir.path().join("state/exported/a.example.com.json");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let first = &kept["resources"][0];
    assert_eq!(first["title"], "from-a");
    assert_eq!(first["exported"], true);
    assert!(first["tags"]
        .as_array()
        .unwrap()
        .contains(&Value::from("greeting")));

    let b = compile(
        dir.path(),
        "class collect { Notify <<| tag == 'greeting' |>> }\ninclude collect\n",
        "b.example.com",
        &["--storeconfigs"],
    );
    assert_eq!(b.code, 0, "{}", b.stderr);
    let got = resource(&b, "Notify", "from-a").expect("A's export is in B's catalog");
    assert_eq!(got["exported"], false);
    assert_eq!(got["parameters"]["message"], "hello");
    let tags = got["tags"].as_array().unwrap();
    assert!(tags.contains(&Value::from("greeting")) && tags.contains(&Value::from("collect")));
    // Query filtering: the other export does not match.
    assert!(resource(&b, "Notify", "other-a").is_none());
    // Contained by the collecting class.
    let edges = b.catalog["edges"].as_array().unwrap();
    assert!(edges
        .iter()
        .any(|e| e["source"] == "Class[Collect]" && e["target"] == "Notify[from-a]"));
}

#[test]
fn queries_on_attributes_and_titles_filter_the_store() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        compile(dir.path(), EXPORTER, "a.example.com", &["--storeconfigs"]).code,
        0
    );
    let b = compile(
        dir.path(),
        "Notify <<| message == 'bye' or title == 'nothing' |>>\n",
        "b.example.com",
        &["--storeconfigs"],
    );
    assert_eq!(b.code, 0, "{}", b.stderr);
    assert!(resource(&b, "Notify", "other-a").is_some());
    assert!(resource(&b, "Notify", "from-a").is_none());
}

#[test]
fn recompiling_without_the_export_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        compile(dir.path(), EXPORTER, "a.example.com", &["--storeconfigs"]).code,
        0
    );
    let a2 = exports_nothing(dir.path(), "a.example.com");
    assert_eq!(a2.code, 0, "{}", a2.stderr);
    assert!(!dir
        .path()
        .join("state/exported/a.example.com.json")
        .exists());
    let b = compile(
        dir.path(),
        "Notify <<| |>>\n",
        "b.example.com",
        &["--storeconfigs"],
    );
    assert_eq!(b.code, 0, "{}", b.stderr);
    assert!(resource(&b, "Notify", "from-a").is_none());
}

#[test]
fn own_exports_are_collected_and_stay_exported() {
    let dir = tempfile::tempdir().unwrap();
    let a = compile(
        dir.path(),
        &format!("{EXPORTER}Notify <<| title == 'from-a' |>>\n"),
        "a.example.com",
        &["--storeconfigs"],
    );
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert_eq!(resource(&a, "Notify", "from-a").unwrap()["exported"], true);
    assert!(resource(&a, "Notify", "other-a").is_none());
}

#[test]
fn a_collected_title_already_in_the_catalog_is_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        compile(dir.path(), EXPORTER, "a.example.com", &["--storeconfigs"]).code,
        0
    );
    let b = compile(
        dir.path(),
        "notify { 'from-a': }\nNotify <<| |>>\n",
        "b.example.com",
        &["--storeconfigs"],
    );
    assert_eq!(b.code, 1);
    assert!(
        b.stderr.contains("A duplicate resource was found while collecting exported resources, with the type and title Notify[from-a]"),
        "{}",
        b.stderr
    );
}

#[test]
fn exported_defined_types_are_evaluated_where_collected() {
    let dir = tempfile::tempdir().unwrap();
    let def = "define monitor ($port) { notify { \"check ${title}:${port}\": } }\n";
    assert_eq!(
        compile(
            dir.path(),
            &format!("{def}@@monitor {{ 'web': port => 80 }}\n"),
            "a.example.com",
            &["--storeconfigs"]
        )
        .code,
        0
    );
    let b = compile(
        dir.path(),
        &format!("{def}Monitor <<| |>>\n"),
        "b.example.com",
        &["--storeconfigs"],
    );
    assert_eq!(b.code, 0, "{}", b.stderr);
    assert!(resource(&b, "Monitor", "web").is_some());
    assert!(resource(&b, "Notify", "check web:80").is_some());
}

#[test]
fn without_storeconfigs_exports_only_warn_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let a = compile(dir.path(), EXPORTER, "a.example.com", &[]);
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert!(a.stderr.contains(
        "You cannot collect exported resources without storeconfigs being set; the export is ignored"
    ));
    assert!(!dir.path().join("state").exists());
}
