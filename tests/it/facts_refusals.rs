//! Malformed facts files are refused before any change, with the place of the problem.
//!
//! `fixtures/facts/refused/NAME.json|yaml` is a facts file that `ordo compile` and `ordo apply`
//! must refuse; two more cases are made by the test (`missing.json` does not exist,
//! `unreadable.json` is a directory). `NAME.expected` holds the exit status, stdout and stderr
//! of both commands run by the real binary. The manifest would write a file and print a
//! notice if it were applied: the test checks that nothing of the sort happened (and that the
//! same manifest with good facts does write it). `UPDATE_EXPECT=1 cargo test --test
//! facts_refusals` rewrites the expectations; review the diff.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/facts/refused")
}

/// A work directory holding `site.pp` (which writes `DIR/written`) and the facts file.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let manifest = format!(
        "file {{ '{}/written': content => \"${{facts['kernel']}}\\n\" }}\nnotify {{ 'applied': }}\n",
        dir.path().display()
    );
    std::fs::write(dir.path().join("site.pp"), manifest).unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(ORDO)
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn compile(dir: &Path, facts: &str) -> Output {
    run(
        dir,
        &["compile", "site.pp", "--node", "n", "--facts", facts],
    )
}

fn apply(dir: &Path, facts: &str) -> Output {
    run(
        dir,
        &[
            "apply",
            "site.pp",
            "--node",
            "n",
            "--facts",
            facts,
            "--state-dir",
            "state",
            "--report",
            "report.json",
        ],
    )
}

fn show(out: &Output) -> String {
    format!(
        "exit: {}\n-- stdout --\n{}-- stderr --\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn good_facts_are_applied() {
    // The control: with readable facts the same manifest does change the machine, so the
    // refusals below are refusals and not a manifest that never does anything.
    let dir = workdir();
    std::fs::write(dir.path().join("good.json"), "{\"kernel\": \"Linux\"}\n").unwrap();
    let out = apply(dir.path(), "good.json");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("written")).unwrap(),
        "Linux\n"
    );
    let out = compile(dir.path(), "good.json");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn malformed_facts_are_refused_with_their_location() {
    let src = fixture_dir();
    let mut cases: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "yaml"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(cases.len() >= 10, "fixtures missing");
    cases.push("missing.json".into());
    cases.push("unreadable.json".into());
    cases.sort();
    let mut failures = Vec::new();
    for name in &cases {
        let dir = workdir();
        let work = dir.path();
        match name.as_str() {
            "missing.json" => {}
            "unreadable.json" => std::fs::create_dir(work.join(name)).unwrap(),
            _ => {
                std::fs::copy(src.join(name), work.join(name)).unwrap();
            }
        }
        let c = compile(work, name);
        let a = apply(work, name);
        for (what, out) in [("compile", &c), ("apply", &a)] {
            assert_eq!(out.status.code(), Some(1), "{name} {what}: {}", show(out));
            assert!(out.stdout.is_empty(), "{name} {what}: {}", show(out));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(name.as_str()), "{name} {what}: {stderr}");
        }
        assert!(!work.join("written").exists(), "{name}: a file was written");
        assert!(
            !work.join("state/clientbucket").exists(),
            "{name} touched the bucket"
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(work.join("report.json")).unwrap())
                .unwrap();
        assert_eq!(report["status"], "refused", "{name}");
        let actual = format!("== compile\n{}== apply\n{}", show(&c), show(&a));
        if let Err(problem) = common::compare(
            &src.join(Path::new(name).with_extension("expected")),
            &actual,
        ) {
            failures.push(format!("{name}: {problem}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Facts nested 100,000 deep (YAML `[...]` lists on one line, YAML blocks, JSON) are refused
/// at once with the place (a YAML list nested that deep took minutes: each level was split
/// again), and only the bytes around the problem of a megabyte-long line are drawn.
#[test]
fn deep_facts_are_refused_with_an_excerpt() {
    let dir = workdir();
    let n = 100_000;
    let block: String = (0..200)
        .map(|i| format!("{}k:\n", "  ".repeat(i)))
        .collect();
    for (name, text, message) in [
        (
            "flow.yaml",
            format!("kernel: Linux\na: {}{}\n", "[".repeat(n), "]".repeat(n)),
            "values nested more than 128 levels deep (line 2, column 132)",
        ),
        (
            "block.yaml",
            format!("kernel: Linux\n{block}"),
            "values nested more than 128 levels deep",
        ),
        (
            "deep.json",
            format!("{{\"a\": {}{}}}", "[".repeat(n), "]".repeat(n)),
            "recursion limit exceeded (line 1, column 133)",
        ),
    ] {
        std::fs::write(dir.path().join(name), &text).unwrap();
        let start = std::time::Instant::now();
        let out = compile(dir.path(), name);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(message), "{name}: {message:?} not in {err}");
        assert!(err.len() < 2_000, "{name}: {} bytes of error", err.len());
        assert!(start.elapsed() < std::time::Duration::from_secs(30));
    }
    // 100 levels are facts.
    let ok: String = (0..100)
        .map(|i| format!("{}k:\n", "  ".repeat(i)))
        .collect();
    std::fs::write(dir.path().join("ok.yaml"), format!("kernel: Linux\n{ok}")).unwrap();
    let out = compile(dir.path(), "ok.yaml");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}
