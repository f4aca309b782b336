//! `fixtures/oracle`: cases written for Ordo with real Puppet 7.23's catalogs, errors and
//! apply traces (see its README), judged by the shared conformance runner. Every case passes.

use std::path::Path;
use std::process::Command;

#[test]
fn oracle_cases_match_puppet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runner = root.join("../shared/conformance/tools/conformance.py");
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
