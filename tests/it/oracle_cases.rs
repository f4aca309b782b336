//! `fixtures/oracle`: cases written for Ordo with real Puppet 7.23's catalogs, errors and
//! apply traces (see its README), judged by the shared conformance runner. Every case passes.

use std::path::Path;
use std::process::Command;

#[test]
fn oracle_cases_match_puppet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The cases are Ordo's own; the judge is the shared conformance runner.
    let Some(runner) = crate::common::shared("conformance/tools/conformance.py") else {
        return;
    };
    let cases = root.join("fixtures/oracle");
    let out = Command::new("python3")
        .arg(&runner)
        .arg("--ordo")
        .arg(env!("CARGO_BIN_EXE_ordo"))
        .arg("--cases")
        .arg(&cases)
        .args(["--show", "200"])
        .output()
        .expect("python3 runs the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("conformance: "))
        .unwrap_or_else(|| panic!("no summary line in runner output:\n{stdout}"));
    // "compile P/T, apply P/T": every part complete.
    let parts: Vec<(usize, usize)> = summary
        .split(", ")
        .map(|p| {
            let (p, t) = p.rsplit_once(' ').unwrap().1.split_once('/').unwrap();
            (p.parse().unwrap(), t.parse().unwrap())
        })
        .collect();
    assert!(
        parts.len() == 2 && parts.iter().all(|(p, t)| p == t && *t > 0),
        "oracle cases: {summary}\n{stdout}"
    );
}

/// Cases whose compile logs Ordo does not reproduce, with why (docs/differences.md).
const LOGS_KNOWN_DIFFERENT: &[(&str, &str)] = &[
    (
        "1350-hiera-version3-module",
        "no hiera.yaml version 3 deprecation warnings",
    ),
    (
        "1351-hiera-version4-module",
        "no hiera.yaml version 4 deprecation warning",
    ),
];

/// The log of a compile as the oracle's `regen.py` keeps it in `expected.compile.txt`:
/// entries (a line with a level, then its continuation lines) other than the closing
/// "Compiled catalog" notice, `Info` lines not about a resource, `Debug` lines, and, when
/// the compile failed, its errors.
fn kept_log(stderr: &str, failed: bool) -> Vec<String> {
    const LEVELS: &[&str] = &[
        "Debug: ",
        "Info: ",
        "Notice: ",
        "Warning: ",
        "Error: ",
        "Critical: ",
        "Alert: ",
        "Emergency: ",
    ];
    let mut entries: Vec<Vec<&str>> = Vec::new();
    for line in stderr.lines() {
        match entries.last_mut() {
            Some(e) if !LEVELS.iter().any(|l| line.starts_with(l)) => e.push(line),
            _ => entries.push(vec![line]),
        }
    }
    let about_a_resource = |rest: &str| {
        let rest = rest.strip_prefix("::").unwrap_or(rest);
        rest.starts_with('/')
            || rest.split_once('[').is_some_and(|(t, _)| {
                t.starts_with(|c: char| c.is_ascii_uppercase())
                    && t.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
            })
    };
    entries
        .into_iter()
        .filter(|e| {
            let first = e[0];
            !(first.starts_with("Notice: Compiled catalog for ")
                || first.starts_with("Debug: ")
                || first
                    .strip_prefix("Info: ")
                    .is_some_and(|rest| !about_a_resource(rest))
                || (failed && first.starts_with("Error: ")))
        })
        .flatten()
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// The log lines of each compile (notices of `notice()`, warnings) against Puppet's: the
/// shared runner compares catalogs and errors only.
#[test]
fn oracle_compile_logs_match_puppet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oracle");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .expect("fixtures/oracle")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.join("expected.compile.txt").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() > 100, "only {} cases with logs", cases.len());
    let mut differ = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        if LOGS_KNOWN_DIFFERENT.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ordo"));
        cmd.current_dir(case)
            .args(["compile", "manifest.pp", "--node", "oracle-node"]);
        if case.join("modules").is_dir() {
            cmd.args(["--modulepath", "modules"]);
        }
        if let Ok(extra) = std::fs::read_to_string(case.join("compile.args")) {
            cmd.args(extra.split_whitespace());
        }
        let out = cmd.output().expect("ordo runs");
        let got = kept_log(&String::from_utf8_lossy(&out.stderr), !out.status.success());
        let want: Vec<String> = std::fs::read_to_string(case.join("expected.compile.txt"))
            .expect("expected.compile.txt")
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect();
        if got != want {
            differ.push(format!("{name}:\n  puppet: {want:?}\n  ordo:   {got:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} compile logs differ:\n{}",
        differ.len(),
        cases.len(),
        differ.join("\n")
    );
}
