//! Malformed catalogs are refused before any change, with the place of the problem.
//!
//! `fixtures/catalog/refused/NAME.json` is a catalog (or not even JSON) that `ordo apply` must
//! refuse; `NAME.expected` holds the exit status, stdout and stderr of the real binary.
//! Every fixture would print a notice and some would write a file if it were applied: the
//! test checks that nothing of the sort happened and that the report says `refused`.
//! `UPDATE_EXPECT=1 cargo test --test catalog_refusals` rewrites the expectations; review the
//! diff.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalog/refused")
}

#[test]
fn malformed_catalogs_are_refused_with_their_location() {
    let dir = fixture_dir();
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 15, "fixtures missing");
    let mut failures = Vec::new();
    for p in &fixtures {
        let name = p.file_name().unwrap().to_str().unwrap();
        let state = tempfile::tempdir().unwrap();
        let report = state.path().join("report.json");
        let out = Command::new(ORDO)
            .current_dir(&dir)
            .args([
                "apply",
                name,
                "--log-format",
                "puppet",
                "--detailed-exitcodes",
            ])
            .arg("--state-dir")
            .arg(state.path())
            .arg("--report")
            .arg(&report)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code().unwrap_or(-1);
        assert_eq!(code, 1, "{name}: {stdout}{stderr}");
        assert!(
            !stdout.contains("Notice:"),
            "{name} applied something: {stdout}"
        );
        assert!(
            !Path::new("/tmp/ordo-fixture-x").exists(),
            "{name} wrote a file"
        );
        assert!(
            !state.path().join("clientbucket").exists(),
            "{name} touched the bucket"
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["status"], "refused", "{name}");
        let actual = format!("exit: {code}\n-- stdout --\n{stdout}-- stderr --\n{stderr}");
        if let Err(problem) = common::compare(&p.with_extension("expected"), &actual) {
            failures.push(format!("{name}: {problem}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn check_refuses_them_too() {
    // `ordo check` reads catalogs the same way: the same place is named.
    let out = Command::new(ORDO)
        .current_dir(fixture_dir())
        .args(["check", "shape-parameters-not-a-map.json"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("wrong shape at resources[3].parameters"),
        "{stderr}"
    );
}
