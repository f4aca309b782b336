//! What the golden-file tests share: the fixture files of a folder, and comparing a rendered
//! output with its expectation file (or rewriting it under `UPDATE_EXPECT=1`; review the diff).
// Each test binary uses the part it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The files with extension `ext` in `fixtures/DIR` (DIR relative to the fixtures folder),
/// sorted; there must be at least one.
pub fn fixture_files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fixture dir {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .{ext} fixtures in {}", dir.display());
    files
}

/// Whether the goldens are to be rewritten: `UPDATE_EXPECT=1` (any other value compares).
pub fn update_expect() -> bool {
    std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1")
}

/// Compares `got` with the file `exp`; under `UPDATE_EXPECT=1` writes it instead.
/// Err names what differs, for a test that collects all the problems before failing.
pub fn compare(exp: &Path, got: &str) -> Result<(), String> {
    if update_expect() {
        std::fs::write(exp, got).expect("write expectation");
        return Ok(());
    }
    match std::fs::read_to_string(exp) {
        Ok(want) if want == got => Ok(()),
        Ok(want) => Err(format!(
            "{}: output differs\n--- want\n{want}\n--- got\n{got}",
            exp.display()
        )),
        Err(_) => Err(format!(
            "missing {} (run with UPDATE_EXPECT=1)",
            exp.display()
        )),
    }
}

/// Renders every fixture of `fixtures/DIR/*.pp` with `render` (output, whether it failed),
/// checks that it failed exactly when `want_error`, and compares the output with the file of
/// extension `exp_ext` beside it. Fails once, listing every problem.
pub fn golden_pp(
    dir: &str,
    exp_ext: &str,
    want_error: bool,
    render: impl Fn(&Path) -> (String, bool),
) {
    let mut problems = vec![];
    for f in fixture_files(dir, "pp") {
        let (got, failed) = render(&f);
        if failed != want_error {
            problems.push(format!(
                "{}: expected {}an error\n{got}",
                f.display(),
                if want_error { "" } else { "no " }
            ));
        }
        if let Err(p) = compare(&f.with_extension(exp_ext), &got) {
            problems.push(p);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Runs the `ordo` binary (no colour); returns its exit status, stdout and stderr. An
/// `apply` gets its own state directory (lock, bucket, pending refreshes) unless the caller
/// names one, so tests running at once neither wait for one another nor share state.
pub fn ordo(args: &[&str]) -> (i32, String, String) {
    let state = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = args.to_vec();
    if args.first() == Some(&"apply") && !args.contains(&"--state-dir") {
        args.push("--state-dir");
        args.push(state.path().to_str().unwrap());
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(&args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether a prerequisite of a test holds (the oracle data in `../shared`, a tool such as
/// `ruby` or `puppet`). When it does not, the test is skipped with a printed reason, except
/// under CI (`CI=true`), where a missing prerequisite is a failure.
pub fn prerequisite(present: bool, what: &str) -> bool {
    if present {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("missing prerequisite under CI: {what}");
    }
    eprintln!("skipped: {what} is not available");
    false
}

/// The shared oracle data beside the repository (`../shared`, or `$ORDO_SHARED`) with `sub`
/// below it, when present (see [`prerequisite`]).
pub fn shared(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("ORDO_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let path = root.join(sub);
    prerequisite(
        path.exists(),
        &format!("{} (the shared oracle data)", path.display()),
    )
    .then_some(path)
}

/// Whether a program is on the PATH (see [`prerequisite`]).
pub fn tool(name: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(name).is_file()));
    prerequisite(found, &format!("the program `{name}`"))
}

/// A catalog (as JSON) of the given resources, all contained in Class[main], each with a
/// file and line as a compiled catalog has.
pub fn catalog_json(resources: serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    let mut rs = vec![
        json!({"type": "Stage", "title": "main", "kind": "compilable_type", "parameters": {"name": "main"}}),
        json!({"type": "Class", "title": "main", "kind": "unknown"}),
    ];
    let mut edges = vec![json!({"source": "Stage[main]", "target": "Class[main]"})];
    for (i, r) in resources.as_array().unwrap().iter().enumerate() {
        let mut r = r.clone();
        r["kind"] = json!("compilable_type");
        r["file"] = json!("site.pp");
        r["line"] = json!(i + 1);
        edges.push(json!({"source": "Class[main]", "target": format!("{}[{}]", r["type"].as_str().unwrap(), r["title"].as_str().unwrap())}));
        rs.push(r);
    }
    json!({"resources": rs, "edges": edges})
}

/// Writes [`catalog_json`] of the resources to `dir/name` and returns its path.
pub fn write_catalog(dir: &Path, name: &str, resources: serde_json::Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, catalog_json(resources).to_string()).unwrap();
    p
}

/// Makes a FIFO at `p` (the `mkfifo` tool).
pub fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(ok.success(), "mkfifo {}", p.display());
}
