//! Goldens of what each command prints for the manifests of `fixtures/commands/` (missing
//! relationship targets, near-miss names, a cycle, module Ruby types, Ordo's extension
//! metaparameters, control bytes), through the binary: `check` (text and `--format json`),
//! `compile` (its errors), `apply --noop` in Ordo's and Puppet's log formats, and `parse`
//! (text and `--format json`).
//! `UPDATE_EXPECT=1` rewrites `NAME.expected`; review the diff.

use crate::common;
use std::path::Path;
use std::process::Command;

/// The commands run on each fixture, with the arguments every compile gets.
const COMMANDS: &[&[&str]] = &[
    &["parse"],
    &["parse", "--format", "json"],
    &["check"],
    &["check", "--format", "json"],
    &["compile"],
    &["apply", "--noop"],
    &["apply", "--noop", "--log-format", "puppet"],
];

fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("ordo runs");
    let mut text = format!(
        "== ordo {} (exit {})\n",
        args.join(" "),
        out.status.code().unwrap_or(-1)
    );
    // A compile's catalog is the compile tests' business: here, what it says about errors.
    if args[0] != "compile" && !out.stdout.is_empty() {
        text.push_str("-- stdout\n");
        text.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    if !out.stderr.is_empty() {
        text.push_str("-- stderr\n");
        text.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    without_times(&text)
}

/// Durations (`in 0.13 seconds`, `in 0.02s`) as `in N`.
fn without_times(text: &str) -> String {
    let re = regex::Regex::new(r"in \d+\.\d+( seconds|s)").unwrap();
    re.replace_all(text, "in N$1").into_owned()
}

#[test]
fn each_command_prints_its_diagnostics() {
    if !common::prerequisite(common::tool("ruby"), "ruby (the module's Ruby type)") {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/commands");
    let mut problems = vec![];
    for f in common::fixture_files("commands", "pp") {
        let name = f.file_name().unwrap().to_str().unwrap();
        let state = tempfile::tempdir().unwrap();
        let mut got = String::new();
        for command in COMMANDS {
            let mut args: Vec<&str> = command.to_vec();
            if args[0] != "parse" {
                args.extend(["--node", "golden", "--facts", "facts.json"]);
                args.extend(["--modulepath", "modules"]);
            }
            if args[0] == "apply" {
                args.extend(["--state-dir", state.path().to_str().unwrap()]);
            }
            args.push(name);
            got.push_str(&run(&dir, &args).replace(state.path().to_str().unwrap(), "STATE"));
        }
        if let Err(p) = common::compare(&f.with_extension("expected"), &got) {
            problems.push(p);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn parse_of_an_erb_template_says_it_is_not_puppet() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/commands");
    let got = run(&dir, &["parse", "template.erb"]);
    if let Err(p) = common::compare(&dir.join("template.erb.expected"), &got) {
        panic!("{p}");
    }
}
