//! Goldens of what each command prints for the manifests of `fixtures/commands/` (missing
//! relationship targets, near-miss names, a cycle, module Ruby types, Ordo's extension
//! metaparameters, control bytes), through the binary: `check` (text and `--format json`),
//! `compile` and `graph` (their errors, as text and `--format json`), `apply --noop` in Ordo's
//! and Puppet's log formats and with `--format json`, `parse` (text and `--format json`), and
//! `explain`; a catalog given to `apply` frames its validation errors at each resource's line.
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
    &["compile", "--format", "json"],
    &["graph", "--format", "json"],
    &["apply", "--noop"],
    &["apply", "--noop", "--format", "json"],
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
    // A compile's catalog and a graph's DOT are other tests' business: here, what they say
    // about errors.
    let output = !matches!(args[0], "compile" | "graph") || !out.status.success();
    if output && !out.stdout.is_empty() {
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

/// `ordo explain` names what it cannot find, as text or JSON.
#[test]
fn explain_of_a_resource_not_in_the_catalog() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/commands");
    let mut got = String::new();
    for format in ["human", "json"] {
        got.push_str(&run(
            &dir,
            &[
                "explain",
                "--format",
                format,
                "--node",
                "golden",
                "--facts",
                "facts.json",
                "cycle.pp",
                "Notify[a]",
                "Notify[nothere]",
            ],
        ));
    }
    if let Err(p) = common::compare(&dir.join("explain.expected"), &got) {
        panic!("{p}");
    }
}

/// A JSON catalog given to `ordo apply` names each resource's file and line: its validation
/// errors are framed there (the file read from the directory the catalog names it from), as
/// text and as JSON, and in Puppet's words with `--log-format puppet`.
#[test]
fn apply_of_a_catalog_frames_its_validation_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/commands");
    let work = tempfile::tempdir().unwrap();
    let catalog = work.path().join("invalid-resource.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(["compile", "--node", "golden", "--facts", "facts.json", "-o"])
        .arg(&catalog)
        .arg("invalid-resource.pp")
        .current_dir(&dir)
        .output()
        .expect("ordo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state = work.path().join("state");
    let (catalog, state) = (catalog.to_str().unwrap(), state.to_str().unwrap());
    let mut got = String::new();
    for extra in [&[][..], &["--format", "json"], &["--log-format", "puppet"]] {
        let mut args = vec!["apply", "--noop", "--state-dir", state];
        args.extend(extra);
        args.push(catalog);
        got.push_str(&run(&dir, &args).replace(work.path().to_str().unwrap(), "WORK"));
    }
    if let Err(p) = common::compare(&dir.join("invalid-resource.catalog.expected"), &got) {
        panic!("{p}");
    }
}
