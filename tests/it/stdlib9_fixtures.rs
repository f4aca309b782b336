//! `fixtures/stdlib9`: manifests over the Forge modules of `../shared/forge` (stdlib 9.7,
//! concat, vcsrepo, ...) compiled by real Puppet 7.23 (`fixtures/stdlib9/regen.sh`): stdlib
//! 9's namespaced functions, the modules' Ruby resource types checked without a `--types`
//! file, evaluator corners. Ordo's catalog must equal Puppet's (both normalized by the
//! shared `normalize_catalog.py`, file and line dropped) and its first error line must be
//! Puppet's. Cases with a `needs-ruby` file read Ruby types: without `ruby` they are
//! skipped, with a printed reason (a failure under `CI=true`: `common::prerequisite`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{shared, tool};

const NODE: &str = "deb12.example.com";

/// A catalog normalized by the shared normalizer, file and line dropped.
fn normalized(tools: &Path, catalog: &str) -> String {
    let script = "import sys; sys.path.insert(0, sys.argv[1]); import normalize_catalog as n; \
                  print(n.dumps(n.normalize(n.load_text(sys.stdin.read()), True)))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .arg(tools)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(catalog.as_bytes())
        .expect("catalog written");
    let out = child.wait_with_output().expect("normalizer ran");
    assert!(out.status.success(), "normalizer failed on:\n{catalog}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn stdlib9_cases_match_puppet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (Some(forge), Some(tools)) = (shared("forge"), shared("conformance/tools")) else {
        return;
    };
    let forge = forge.canonicalize().expect("forge path");
    let ruby = tool("ruby");
    let cases = root.join("fixtures/stdlib9");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cases)
        .expect("fixtures/stdlib9")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("manifest.pp").is_file())
        .collect();
    dirs.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if dir.join("needs-ruby").exists() && !ruby {
            continue;
        }
        let mut modulepath = format!("{0}/modules:{0}/vendor_modules", forge.display());
        if dir.join("modules").is_dir() {
            modulepath = format!("modules:{modulepath}");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
            .current_dir(dir)
            .args(["compile", "manifest.pp", "--node", NODE, "--facts"])
            .arg(forge.join(format!("facts/{NODE}.json")))
            .args(["--modulepath", &modulepath])
            .output()
            .expect("ordo runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Ok(want) = std::fs::read_to_string(dir.join("expected_error.txt")) {
            // Puppet's paths as regen.sh rewrote them.
            let got = stderr
                .lines()
                .find(|l| l.starts_with("Error: "))
                .unwrap_or("")
                .replace("manifest.pp", "./site.pp")
                .replace(&format!("{}/", forge.display()), "forge/");
            if out.status.success() || got.trim() != want.trim() {
                failures.push(format!(
                    "{name}: Puppet: {}\n  Ordo (exit {:?}): {got}",
                    want.trim(),
                    out.status.code()
                ));
            }
        } else {
            let want = std::fs::read_to_string(dir.join("expected.json"))
                .unwrap_or_else(|_| panic!("{name}: no expected.json or expected_error.txt"));
            if !out.status.success() {
                failures.push(format!("{name}: Puppet compiled; Ordo: {stderr}"));
            } else if normalized(&tools, &want) != normalized(&tools, &stdout) {
                failures.push(format!(
                    "{name}: catalogs differ\n--- Puppet\n{}\n--- Ordo\n{}",
                    normalized(&tools, &want),
                    normalized(&tools, &stdout)
                ));
            }
            if let Ok(want) = std::fs::read_to_string(dir.join("expected_warnings.txt")) {
                // Each warning with its location line, Ordo's paths as regen.sh rewrote
                // Puppet's.
                let got: Vec<String> = stderr
                    .lines()
                    .scan(false, |in_warning, l| {
                        let keep =
                            l.starts_with("Warning: ") || (*in_warning && l.starts_with("   ("));
                        *in_warning = l.starts_with("Warning: ");
                        Some(keep.then_some(l))
                    })
                    .flatten()
                    .map(|l| {
                        l.replace("\"manifest.pp\"", "\"./site.pp\"")
                            .replace("(file: manifest.pp,", "(file: ./site.pp,")
                            .replace("[\"modules/", "[\"./modules/")
                            .replace(&format!("{}/", forge.display()), "forge/")
                    })
                    .collect();
                if got.join("\n").trim() != want.trim() {
                    failures.push(format!(
                        "{name}: warnings differ\n--- Puppet\n{}\n--- Ordo\n{}",
                        want.trim(),
                        got.join("\n")
                    ));
                }
            }
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{checked} cases agree with Puppet");
}

/// Without a `ruby`, the Ruby types stay unchecked as before, with one warning.
#[test]
fn without_ruby_types_are_unchecked_with_a_warning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(forge) = shared("forge") else {
        return;
    };
    let dir = root.join("fixtures/stdlib9/06-ruby-type-misspelt");
    let empty = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .current_dir(&dir)
        .env("PATH", empty.path())
        .args(["compile", "manifest.pp", "--node", NODE, "--facts"])
        .arg(forge.join(format!("facts/{NODE}.json")))
        .arg("--modulepath")
        .arg(forge.join("modules"))
        .output()
        .expect("ordo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("Ruby resource types are not checked"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("file written");
}

/// A module of a type DSL type that notes each time it is loaded, and a Resource API type.
fn probe_modules(dir: &Path) {
    write(
        &dir.join("modules/probe/lib/puppet/type/counted.rb"),
        "File.write(ENV['ORDO_PROBE_LOG'], 'x', mode: 'a') if ENV['ORDO_PROBE_LOG']\n\
         Puppet::Type.newtype(:counted) do\n  newparam(:name, namevar: true)\n  newproperty(:value)\nend\n",
    );
    write(
        &dir.join("modules/probe/lib/puppet/type/api_thing.rb"),
        "require 'puppet/resource_api'\n\
         Puppet::ResourceApi.register_type(\n  name: 'api_thing',\n  docs: 'A thing.',\n  \
         title_patterns: [\n    { pattern: %r{^(?<package>.*[^-])-(?<manager>.*)$}, desc: 'both' },\n    \
         { pattern: %r{^(?<package>.*)$}, desc: 'the package' },\n  ],\n  attributes: {\n    \
         ensure: { type: 'Enum[present, absent]', desc: 'x', default: 'present' },\n    \
         package: { type: 'String', desc: 'x', behaviour: :namevar },\n    \
         manager: { type: 'String', desc: 'x', behaviour: :namevar },\n    \
         version: { type: 'Optional[String]', desc: 'x' },\n    \
         secret: { type: 'Optional[String]', desc: 'x', behaviour: :parameter },\n  },\n)\n",
    );
}

fn compile(dir: &Path, manifest: &str, log: &Path) -> std::process::Output {
    write(&dir.join("site.pp"), manifest);
    Command::new(env!("CARGO_BIN_EXE_ordo"))
        .current_dir(dir)
        .env("ORDO_PROBE_LOG", log)
        .args(["compile", "site.pp", "--node", "n", "--facts", "facts.json"])
        .args(["--modulepath", "modules"])
        .output()
        .expect("ordo runs")
}

/// Resource API types: attributes by behaviour, key attributes split from the title by
/// the named groups of the title patterns.
#[test]
fn resource_api_types_are_checked() {
    if !tool("ruby") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    probe_modules(dir.path());
    write(&dir.path().join("facts.json"), "{}");
    let log = dir.path().join("loads.txt");
    let ok = compile(
        dir.path(),
        "api_thing { 'vim-apt': version => '1', secret => 's' }\n",
        &log,
    );
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let catalog: serde_json::Value = serde_json::from_str(&stdout).expect("catalog");
    let thing = catalog["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["type"] == "Api_thing"))
        .expect("Api_thing in the catalog");
    assert_eq!(thing["parameters"]["package"], "vim");
    assert_eq!(thing["parameters"]["manager"], "apt");
    let bad = compile(dir.path(), "api_thing { 'vim': versoin => '1' }\n", &log);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        stderr.contains(
            "Error: no parameter named 'versoin' (file: site.pp, line: 1) on Api_thing[vim]"
        ),
        "{stderr}"
    );
}

/// `--nodes`: the types are read once for all the nodes of the run.
#[test]
fn ruby_types_are_read_once_per_process() {
    if !tool("ruby") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    probe_modules(dir.path());
    for n in ["a", "b", "c"] {
        write(&dir.path().join(format!("nodes/{n}.json")), "{}");
    }
    write(
        &dir.path().join("site.pp"),
        "counted { 'x': value => 1, valeu => 2 }\n",
    );
    let log = dir.path().join("loads.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .current_dir(dir.path())
        .env("ORDO_PROBE_LOG", &log)
        .args(["compile", "site.pp", "--nodes", "nodes", "--outdir", "out"])
        .args(["--modulepath", "modules", "--jobs", "2"])
        .output()
        .expect("ordo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(
        stderr.matches("no parameter named 'valeu'").count(),
        3,
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "x");
}
