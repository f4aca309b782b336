//! `ordo apply`'s console as `puppet apply` prints it, through the binary: which lines go to
//! stdout and which to stderr, which levels show by default, with `--verbose` and `--noop`
//! (expectations: real Puppet 7.23's output, `fixtures/apply/console/README.md`), the
//! manifest from `-e` or stdin, Puppet's colours, no progress line off a terminal, and no
//! file backup unless asked.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common;

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/apply/console")
}

/// Times, the configuration version and the managed directory, as the fixtures write them.
fn normalize(text: &str, root: &Path) -> String {
    let seconds = regex::Regex::new(r" in [0-9]+\.[0-9]{2} seconds").unwrap();
    let version = regex::Regex::new(r"configuration version '[0-9]+'").unwrap();
    let text = text.replace(root.to_str().unwrap(), "@ROOT@");
    let text = seconds.replace_all(&text, " in S seconds");
    version
        .replace_all(&text, "configuration version 'V'")
        .into_owned()
}

fn run(cmd: &mut Command, stdin: Option<&str>) -> (i32, String, String) {
    let mut child = cmd
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn streams_and_levels_as_puppet_apply() {
    let template = std::fs::read_to_string(fixtures().join("streams.pp")).unwrap();
    let mut problems = Vec::new();
    for (mode, extra) in [
        ("plain", None),
        ("verbose", Some("--verbose")),
        ("noop", Some("--noop")),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let manifest = dir.path().join("streams.pp");
        std::fs::write(
            &manifest,
            template.replace("@ROOT@", root.to_str().unwrap()),
        )
        .unwrap();
        let mut cmd = Command::new(ORDO);
        cmd.arg("apply")
            .arg(&manifest)
            .args([
                "--log-format",
                "puppet",
                "--split-streams",
                "--certname",
                "golden.example",
            ])
            .arg("--state-dir")
            .arg(dir.path().join("state"))
            .args(extra);
        let (_, out, err) = run(&mut cmd, None);
        for (stream, got) in [("stdout", out), ("stderr", err)] {
            let exp = fixtures().join(format!("streams.{mode}.{stream}"));
            if let Err(p) = common::compare(&exp, &normalize(&got, &root)) {
                problems.push(p);
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A catalog Puppet refuses (a validation error, a cycle) and a run that changes nothing
/// (the second of two), line for line as `puppet apply` prints them.
#[test]
fn refusals_and_a_no_change_run_as_puppet_apply() {
    let mut problems = Vec::new();
    for (name, mode, runs) in [
        ("validation", "plain", 1),
        ("cycle", "plain", 1),
        ("nochange", "again", 2),
    ] {
        let template = std::fs::read_to_string(fixtures().join(format!("{name}.pp"))).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let manifest = dir.path().join(format!("{name}.pp"));
        std::fs::write(
            &manifest,
            template.replace("@ROOT@", root.to_str().unwrap()),
        )
        .unwrap();
        let mut got = (0, String::new(), String::new());
        for _ in 0..runs {
            let mut cmd = Command::new(ORDO);
            cmd.arg("apply")
                .arg(&manifest)
                .args(["--log-format", "puppet", "--split-streams"])
                .args(["--certname", "golden.example"])
                .arg("--state-dir")
                .arg(dir.path().join("state"));
            got = run(&mut cmd, None);
        }
        let (code, out, err) = got;
        let want = if name == "nochange" { 0 } else { 1 };
        if code != want {
            problems.push(format!("{name}: exit {code}, Puppet's is {want}\n{err}"));
        }
        for (stream, got) in [("stdout", out), ("stderr", err)] {
            let exp = fixtures().join(format!("{name}.{mode}.{stream}"));
            let got = got.replace(manifest.to_str().unwrap(), "@MANIFEST@");
            if let Err(p) = common::compare(&exp, &normalize(&got, &root)) {
                problems.push(p);
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn manifest_from_e_and_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let want = "Notice: Compiled catalog for n1 in environment production in S seconds\n\
                Notice: hi\n\
                Notice: /Stage[main]/Main/Notify[hi]/message: defined 'message' as 'hi'\n\
                Notice: Applied catalog in S seconds\n";
    let code = "notify { 'hi': }";
    let args = ["--log-format", "puppet", "--certname", "n1", "--state-dir"];
    let mut e = Command::new(ORDO);
    e.args(["apply", "-e", code]).args(args).arg(&state);
    let (status, out, err) = run(&mut e, None);
    assert_eq!((status, err.as_str()), (0, ""), "{out}");
    assert_eq!(normalize(&out, dir.path()), want);
    for file in [None, Some("-")] {
        let mut c = Command::new(ORDO);
        c.arg("apply").args(file).args(args).arg(&state);
        let (status, out, err) = run(&mut c, Some(code));
        assert_eq!((status, err.as_str()), (0, ""), "{out}");
        assert_eq!(normalize(&out, dir.path()), want);
    }
    // A syntax error in -e code is an error with a non-zero exit, nothing applied.
    let mut bad = Command::new(ORDO);
    bad.args(["apply", "-e", "notify { 'x':"])
        .args(args)
        .arg(&state);
    let (status, out, err) = run(&mut bad, None);
    assert_eq!(status, 1, "{out}{err}");
    assert!(err.contains("Error:"), "{err}");
    assert!(!out.contains("Applied catalog"), "{out}");
}

#[test]
fn puppet_colours_when_asked_and_no_progress_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Command::new(ORDO);
    c.args(["apply", "-e", "notify { 'hi': } warning('careful')"])
        .args(["--log-format", "puppet", "--color", "ansi", "--state-dir"])
        .arg(dir.path().join("state"));
    let (status, out, err) = run(&mut c, None);
    assert_eq!(status, 0, "{out}{err}");
    // As Puppet 7.23 colours them (seen here with `puppet apply`'s default `--color ansi`).
    assert!(out.contains("\x1b[mNotice: hi\x1b[0m\n"), "{out:?}");
    assert!(
        err.contains("\x1b[1;33mWarning: Scope(Class[main]): careful\x1b[0m\n"),
        "{err:?}"
    );
    // Ordo's own format, piped: no colour, no progress line, nothing on stderr.
    let mut c = Command::new(ORDO);
    c.args(["apply", "-e", "notify { 'hi': }", "--state-dir"])
        .arg(dir.path().join("state"));
    let (status, out, err) = run(&mut c, None);
    assert_eq!(status, 0, "{out}{err}");
    assert_eq!(err, "");
    assert!(!out.contains('\x1b') && !out.contains('\r'), "{out:?}");
}

#[test]
fn files_are_backed_up_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let f = dir.path().join("motd");
    let bucket_list = || {
        let mut c = Command::new(ORDO);
        c.args(["bucket", "list", "--state-dir"]).arg(&state);
        run(&mut c, None).1
    };
    for (content, extra, entries) in [("one\n", None, 0), ("two\n", Some("--backup"), 1)] {
        std::fs::write(&f, "before\n").unwrap();
        let code = format!("file {{ '{}': content => {content:?} }}", f.display());
        let mut c = Command::new(ORDO);
        c.args([
            "apply",
            "-e",
            &code,
            "--log-format",
            "puppet",
            "--state-dir",
        ])
        .arg(&state)
        .args(extra);
        let (status, out, err) = run(&mut c, None);
        assert_eq!(status, 0, "{out}{err}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), content);
        assert_eq!(bucket_list().lines().count(), entries, "{out}");
        // An info line: not shown at Puppet's default level.
        assert!(!out.contains("Filebucketed"), "{out}");
    }
}
