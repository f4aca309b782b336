//! The compile part of the shared conformance cases (`../shared/conformance`), judged by the
//! shared runner against real Puppet 7.23's catalogs and error messages. The floor only goes
//! up: raise it when more cases pass.

use std::process::Command;

/// Public compile cases that must pass (of 193).
const FLOOR: usize = 193;

#[test]
fn conformance_compile_cases_pass() {
    let Some(runner) = crate::common::shared("conformance/tools/conformance.py") else {
        return;
    };
    let out = Command::new("python3")
        .arg(&runner)
        .args([
            "--ordo",
            env!("CARGO_BIN_EXE_ordo"),
            "--part",
            "compile",
            "--show",
            "200",
        ])
        .output()
        .expect("python3 runs the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("conformance: compile "))
        .unwrap_or_else(|| panic!("no summary line in runner output:\n{stdout}"));
    let (passed, _) = summary.split_once('/').expect("P/T");
    let passed: usize = passed.trim().parse().expect("a number");
    assert!(
        passed >= FLOOR,
        "conformance compile {passed} passed, floor is {FLOOR}:\n{stdout}"
    );
}
