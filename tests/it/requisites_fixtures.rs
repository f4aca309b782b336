//! Salt requisites, run controls and Rudder ordering as data: every directory of
//! `fixtures/requisites/` holds a catalog (`catalog.json`, `@DIR@` standing for a fresh
//! temporary directory), the same in Ordo's language (`manifest.pp`, for when the evaluator
//! compiles it), optional `options.json` (`runs`, `noop`, `failhard`, `ordering`, `setup`
//! shell commands run first with `$DIR` set) and `expected.txt`: for each run the exit
//! status, Puppet's log lines and the Salt return (which resources ran, in which order, with
//! which result), then every file left in the directory.
//! `UPDATE_EXPECT=1 cargo test --test requisites_fixtures` rewrites the expectations.

use crate::common;

use ordo::apply::log::LogLine;
use ordo::apply::salt::salt_return;
use ordo::apply::{apply, ApplyOptions};
use ordo::catalog::Catalog;
use ordo::eval::{compile, CompileOptions, NoModules};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn fixture_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/requisites");
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("catalog.json").is_file())
        .collect();
    v.sort();
    assert!(v.len() >= 20, "the requisite fixtures are missing");
    v
}

/// Files under `dir` (the bucket left out): path, mode and content.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let key = p.strip_prefix(dir).unwrap().display().to_string();
            if key == ".bucket" {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
                out.insert(format!("{key}/"), "dir".into());
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                let mode = m.permissions().mode() & 0o7777;
                // Modes the umask decides are left out; modes a resource set are shown.
                let mode = if mode == 0o600 { " (0600)" } else { "" };
                out.insert(key, format!("{text:?}{mode}"));
            }
        }
    }
    out
}

/// One line per Salt state, in evaluation order.
fn salt_lines(ret: &Json, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (_, s) in ret["local"].as_object().unwrap() {
        let changes: Vec<&String> = s["changes"].as_object().unwrap().keys().collect();
        out.push(
            format!(
                "{} {} result={} changes={:?} comment={:?}",
                s["__run_num__"],
                s["__id__"].as_str().unwrap(),
                s["result"],
                changes,
                s["comment"].as_str().unwrap(),
            )
            .replace(dir, "@DIR@"),
        );
        assert!(s["start_time"].is_string() && s["duration"].is_number());
    }
    out
}

/// Where a fixture's catalog comes from.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// The hand-written `catalog.json`.
    Catalog,
    /// `manifest.pp`, compiled by the evaluator.
    Manifest,
}

fn run_fixture(fixture: &Path, source: Source) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap().to_string();
    let options: Json = std::fs::read_to_string(fixture.join("options.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Json::Null);
    for cmd in options["setup"].as_array().into_iter().flatten() {
        let ok = std::process::Command::new("/bin/sh")
            .args(["-c", cmd.as_str().unwrap()])
            .env("DIR", &dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "setup of {} failed: {cmd}", fixture.display());
    }
    let catalog: Catalog = match source {
        Source::Catalog => {
            let text = std::fs::read_to_string(fixture.join("catalog.json"))
                .unwrap()
                .replace("@DIR@", &dir);
            serde_json::from_str(&text).unwrap()
        }
        Source::Manifest => {
            let text = std::fs::read_to_string(fixture.join("manifest.pp"))
                .unwrap()
                .replace("@DIR@", &dir);
            let opts = CompileOptions {
                node: "fixture.example.com".into(),
                facts: Default::default(),
                strict_variables: false,
                resolve_deferred: false,
                server: None,
            };
            let result = compile("manifest.pp", &text, &NoModules, &opts);
            result.catalog.unwrap_or_else(|| {
                panic!(
                    "{} does not compile: {:?}",
                    fixture.display(),
                    result.diagnostics
                )
            })
        }
    };
    let opts = ApplyOptions {
        bucket_dir: tmp.path().join(".bucket"),
        noop: options["noop"].as_bool().unwrap_or(false),
        failhard: options["failhard"].as_bool().unwrap_or(false),
        ordering: options["ordering"]
            .as_str()
            .unwrap_or("manifest")
            .parse()
            .unwrap(),
        ..ApplyOptions::default()
    };
    let mut out = String::new();
    for run in 1..=options["runs"].as_u64().unwrap_or(1) {
        let mut lines = Vec::new();
        let result = apply(&catalog, &opts, &mut |l: &LogLine| lines.push(l.puppet()));
        assert!(
            !result.refused,
            "{} was refused: {lines:#?}",
            fixture.display()
        );
        out.push_str(&format!("== run {run}: exit {}\n", result.exit_code(true)));
        for l in lines {
            out.push_str(&l.replace(&dir, "@DIR@"));
            out.push('\n');
        }
        out.push_str("-- salt\n");
        let mut report = result.report.clone();
        report.logs = result.log.clone();
        for l in salt_lines(&salt_return(&report, &catalog), &dir) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out.push_str("== files\n");
    for (k, v) in files(tmp.path()) {
        out.push_str(&format!("{k}: {v}\n"));
    }
    out
}

/// The exit code lines and the final files of a fixture run.
fn outcome(run: &str) -> String {
    let files = run.split("== files\n").nth(1).unwrap_or("");
    let exits: Vec<&str> = run.lines().filter(|l| l.starts_with("== run ")).collect();
    format!("{}\n== files\n{files}", exits.join("\n"))
}

#[test]
fn requisite_fixtures() {
    let mut failures = Vec::new();
    for f in fixture_dirs() {
        assert!(
            f.join("manifest.pp").is_file(),
            "{} has no manifest.pp",
            f.display()
        );
        let actual = run_fixture(&f, Source::Catalog);
        // The same fixture written in Ordo's language, compiled, must do the same: the same
        // exit codes and the same files (log paths differ: the hand-written catalogs have
        // no containment).
        let compiled = run_fixture(&f, Source::Manifest);
        if outcome(&compiled) != outcome(&actual) {
            failures.push(format!(
                "fixture {} compiled from manifest.pp differs:\n--- from catalog.json\n{}\n--- from manifest.pp\n{}",
                f.display(),
                outcome(&actual),
                outcome(&compiled)
            ));
        }
        if let Err(problem) = common::compare(&f.join("expected.txt"), &actual) {
            failures.push(format!("{}: {problem}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
