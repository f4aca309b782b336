//! Puppet's own spec suite as differential cases: `../shared/semantics/run.py` runs the
//! built binary over cases from Puppet 7.23's RSpec files, judged against what real Puppet
//! did with them. Each kind of case must agree at least as often as the floor below, with no
//! crash or hang. Skipped (with the reason printed) when ../shared is absent, except under
//! `CI=true` (`common::shared`).

use std::process::Command;

/// Agreement floors per kind, in percent: what Ordo reaches now, so a regression fails.
const FLOORS: &[(&str, f64)] = &[
    ("parse (parser/validator specs, .pp)", 100.0),
    ("parse (epp parser/validator specs, .epp)", 100.0),
    ("parse (lexer2 token snippets as whole programs)", 100.0),
    (
        "eval (expression values, evaluating_parser/get/getvar specs)",
        100.0,
    ),
    (
        "catalog (manifests from function and integration/parser specs)",
        100.0,
    ),
];

#[test]
fn puppet_spec_suite_cases_agree() {
    let Some(runner) = crate::common::shared("semantics/run.py") else {
        return;
    };
    if !crate::common::tool("python3") {
        return;
    }
    let out = Command::new("python3")
        .arg(&runner)
        .arg("--ordo")
        .arg(env!("CARGO_BIN_EXE_ordo"))
        .args(["--show", "100"])
        .output()
        .expect("python3 runs the semantics runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut failures = vec![];
    for (kind, floor) in FLOORS {
        // "<kind>: N cases, agree A (P%)"
        let Some(line) = stdout.lines().find(|l| l.starts_with(&format!("{kind}: "))) else {
            failures.push(format!("no line for '{kind}'"));
            continue;
        };
        let pct: f64 = line
            .split_once("agree ")
            .and_then(|(_, r)| r.split_once('(')?.1.split_once('%'))
            .and_then(|(p, _)| p.parse().ok())
            .unwrap_or_else(|| panic!("no agreement figure in: {line}"));
        if pct < *floor {
            failures.push(format!("{kind}: {pct}% < floor {floor}%"));
        }
    }
    for (what, label) in [
        ("hangs", "Ordo hangs (over 10 s): "),
        (
            "crashes",
            "Ordo crashes (signal, panic or exit code other than 0/1): ",
        ),
    ] {
        let n: usize = stdout
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .and_then(|r| r.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no count of {what} in runner output:\n{stdout}"));
        if n > 0 {
            failures.push(format!("{n} {what}"));
        }
    }
    assert!(failures.is_empty(), "{}\n\n{stdout}", failures.join("\n"));
}
