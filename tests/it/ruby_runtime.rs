//! The modules' Ruby run by Ruby (docs/ruby.md), through the binary: 4.x functions (dispatch,
//! Puppet's argument messages, errors, value round trips, callbacks), 3.x functions and ERB
//! templates, from the small module `fixtures/ruby/modules/rt`.
//!
//! Each `fixtures/ruby/cases/NAME.pp` is compiled with the module copied to a temporary
//! directory; Ordo's log lines (notices, warnings, the error) must equal `NAME.out`, which
//! real Puppet 7.23 wrote for the same input (`scripts/ruby_goldens.sh`; never rewritten
//! from Ordo's output). Without `ruby` the test is skipped, except under `CI=true`.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ruby")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let target = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &target);
        } else {
            std::fs::copy(&p, &target).unwrap();
        }
    }
}

/// `ordo compile site.pp` in `dir` (with its `modules` and `facts.json`), with `PATH` set
/// to `path` when given.
fn compile_in(dir: &Path, path: Option<&Path>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ordo"));
    cmd.current_dir(dir)
        .args([
            "compile",
            "site.pp",
            "--modulepath",
            "modules",
            "--node",
            "n",
        ])
        .args(["--facts", "facts.json"])
        .env("NO_COLOR", "1");
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.output().unwrap()
}

/// Compiles `site` (a case's manifest) in a fresh directory holding the fixture modules;
/// returns the log lines as the goldens keep them.
fn compile(site: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("modules"), &dir.path().join("modules"));
    std::fs::copy(site, dir.path().join("site.pp")).unwrap();
    std::fs::write(dir.path().join("facts.json"), r#"{"kernel": "Linux"}"#).unwrap();
    let out = compile_in(dir.path(), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut lines = String::new();
    for l in stderr.lines() {
        lines.push_str(l.strip_suffix(" on node n").unwrap_or(l));
        lines.push('\n');
    }
    let errored = lines.contains("Error: ");
    assert_eq!(
        out.status.success(),
        !errored,
        "{}: exit status and error lines disagree:\n{lines}",
        site.display()
    );
    lines
}

#[test]
fn ruby_functions_and_templates_run_as_under_puppet() {
    if !common::tool("ruby") {
        return;
    }
    let mut cases: Vec<PathBuf> = std::fs::read_dir(fixtures().join("cases"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pp"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "the fixture cases are missing");
    let mut problems = Vec::new();
    for site in &cases {
        let want = std::fs::read_to_string(site.with_extension("out")).unwrap();
        let got = compile(site);
        if got != want {
            problems.push(format!(
                "{}:\n--- Puppet\n{want}--- Ordo\n{got}",
                site.display()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Without Ruby, a module's Ruby function and a template beyond Ordo's ERB are refused with
/// the package to install, never run or rendered wrongly.
#[test]
fn without_ruby_the_error_names_the_package() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("modules"), &dir.path().join("modules"));
    let site = dir.path().join("site.pp");
    std::fs::write(dir.path().join("facts.json"), "{}").unwrap();
    let run = |manifest: &str| {
        std::fs::write(&site, manifest).unwrap();
        // No `ruby` on this PATH (nor `unshare`).
        let out = compile_in(dir.path(), Some(dir.path()));
        assert!(!out.status.success(), "{manifest} compiled without Ruby");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let f = run("notice(rt::pick(1))");
    assert!(
        f.contains("rt::pick") && f.contains("install the package `ruby`"),
        "{f}"
    );
    let t = run(r#"notice(inline_template("<%= [1].product([2]).inspect %>"))"#);
    assert!(
        t.contains("inline template")
            && t.contains("product")
            && t.contains("install the package `ruby`"),
        "{t}"
    );
}

/// stdlib 9's own Ruby functions (those Ordo has no native version of) run in Ruby with
/// Puppet's results: `fixtures/ruby/stdlib/stdlib9.out` is `puppet apply --noop` of the
/// manifest beside it with the forge's stdlib (`../shared/forge/modules`) on the modulepath,
/// the path of the manifest written as `site.pp` and ` on node ...` removed.
#[test]
fn stdlib_ruby_functions_run_as_under_puppet() {
    let Some(modules) = common::shared("forge/modules") else {
        return;
    };
    if !common::tool("ruby") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let case = fixtures().join("stdlib/stdlib9.pp");
    std::fs::copy(&case, dir.path().join("site.pp")).unwrap();
    std::fs::write(dir.path().join("facts.json"), r#"{"kernel": "Linux"}"#).unwrap();
    std::os::unix::fs::symlink(&modules, dir.path().join("modules")).unwrap();
    let out = compile_in(dir.path(), None);
    let got: String = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| format!("{}\n", l.strip_suffix(" on node n").unwrap_or(l)))
        .collect();
    let want = std::fs::read_to_string(case.with_extension("out")).unwrap();
    assert_eq!(got, want);
}
