//! Apply safety, end to end with the real binary: a run stopped by SIGTERM leaves no partial
//! file, writes its report and keeps the refresh it owed for the next run; a second signal
//! kills a running command; one apply at a time; the bucket can be listed and restored;
//! links are not followed unless asked; file names are never shell syntax; sensitive values
//! never reach the log or the report.

use crate::common::write_catalog;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

fn apply_cmd(catalog: &Path, state: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(ORDO);
    c.arg("apply")
        .arg(catalog)
        .args(["--log-format", "puppet", "--split-streams", "--state-dir"])
        .arg(state)
        .args(extra)
        .env("NO_COLOR", "1");
    c
}

fn run(mut c: Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn wait_for(p: &Path, limit: Duration) {
    let start = Instant::now();
    while !p.exists() {
        assert!(start.elapsed() < limit, "{} never appeared", p.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

fn wait_exit(mut child: Child, limit: Duration) -> (i32, String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            let mut err = String::new();
            use std::io::Read;
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code().unwrap_or(-1), out, err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("ordo apply did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Names in a directory that look like Ordo's temporary files.
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(ordo::apply::atomic::TEMP_MARK))
        .collect()
}

#[test]
fn sigterm_stops_after_the_current_resource_and_the_refresh_survives() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state");
    let conf = d.join("conf");
    let big_old = "old line\n".repeat(100_000);
    std::fs::write(&conf, &big_old).unwrap();
    let big_new = "new line\n".repeat(200_000);
    let started = d.join("slow-started");
    let done = d.join("slow-done");
    let trace = d.join("trace");
    let after = d.join("after");
    let cat = write_catalog(
        d,
        "catalog.json",
        json!([
            {"type": "File", "title": conf.to_str().unwrap(), "parameters": {"content": big_new, "notify": "Exec[restart]"}},
            {"type": "Exec", "title": "slow", "parameters": {
                "command": format!("touch {}; sleep 4; touch {}", started.display(), done.display()),
                "provider": "shell", "creates": done.to_str().unwrap(),
                "require": format!("File[{}]", conf.display())}},
            {"type": "Exec", "title": "restart", "parameters": {
                "command": format!("echo restarted >> {}", trace.display()),
                "provider": "shell", "refreshonly": true, "require": "Exec[slow]"}},
            {"type": "File", "title": after.to_str().unwrap(), "parameters": {"content": "x", "require": "Exec[slow]"}},
        ]),
    );
    let report = d.join("report.json");
    let mut c = apply_cmd(
        &cat,
        &state,
        &["--report", report.to_str().unwrap(), "--backup"],
    );
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&started, Duration::from_secs(30));

    // While it runs, a second apply on the same machine is refused and names the holder.
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("already running (pid {};", child.id())),
        "{err}"
    );
    assert!(!out.contains("Notice:"), "{out}");

    signal(&child, "TERM");
    let (code, out, err) = wait_exit(child, Duration::from_secs(30));
    assert_eq!(code, 1, "an interrupted run is not a success\n{out}\n{err}");
    // The current resource finished; nothing after it started.
    assert!(done.exists(), "{out}");
    assert!(!after.exists(), "{out}");
    assert!(!trace.exists(), "{out}");
    assert!(
        err.contains(
            "Warning: Caught TERM; stopped after the current resource: 2 resource(s) not evaluated"
        ),
        "{err}"
    );
    // No partial file: the whole new content, no temporary file left.
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), big_new);
    assert_eq!(temp_files(d), Vec::<String>::new());
    // The report was written and says what happened.
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    let status_of = |title: &str| {
        r["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["resource"] == title)
            .map(|x| x["status"].clone())
            .unwrap()
    };
    assert_eq!(status_of("Exec[slow]"), "changed");
    assert_eq!(status_of("Exec[restart]"), "skipped");
    // The refresh Exec[restart] was owed is kept in the state directory.
    let pending: Value = serde_json::from_str(
        &std::fs::read_to_string(pending_file(&state).expect("a pending refresh is stored"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(pending["pending"][0]["resource"], "Exec[restart]");
    assert_eq!(
        pending["pending"][0]["events"][0]["name"],
        "content_changed"
    );
    // The old content is in the bucket.
    let (code, list, _) = run({
        let mut c = Command::new(ORDO);
        c.args(["bucket", "list", "--state-dir"]).arg(&state);
        c
    });
    assert_eq!(code, 0);
    assert!(list.contains(conf.to_str().unwrap()), "{list}");

    // The next run delivers it: the file is in sync, yet the subscriber refreshes, once.
    let (code, out, _) = run(apply_cmd(&cat, &state, &["--detailed-exitcodes"]));
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("Notice: /Stage[main]/Main/Exec[restart]: Triggered 'refresh' from 1 event"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "restarted\n");
    assert!(after.exists());
    assert!(pending_file(&state).is_none());
    // Delivered means cleared: a third run has nothing to do.
    let (code, out, _) = run(apply_cmd(&cat, &state, &["--detailed-exitcodes"]));
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "restarted\n");
}

#[test]
fn a_second_signal_kills_the_running_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let started = d.join("started");
    let cat = write_catalog(
        d,
        "catalog.json",
        json!([
            {"type": "Exec", "title": "long", "parameters": {
                "command": format!("touch {}; sleep 60", started.display()), "provider": "shell"}},
        ]),
    );
    let report = d.join("report.json");
    let mut c = apply_cmd(
        &cat,
        &d.join("state"),
        &["--report", report.to_str().unwrap()],
    );
    let start = Instant::now();
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&started, Duration::from_secs(30));
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "INT");
    let (code, out, err) = wait_exit(child, Duration::from_secs(30));
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("Caught INT again; killing the running command"),
        "{err}"
    );
    assert!(err.contains("Command interrupted"), "{err}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
}

#[test]
fn bucket_restore_by_path_and_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state");
    let f = d.join("motd");
    std::fs::write(&f, "first\n").unwrap();
    let cat = write_catalog(
        d,
        "c.json",
        json!([{"type": "File", "title": f.to_str().unwrap(), "parameters": {"content": "second\n"}}]),
    );
    let (code, out, _) = run(apply_cmd(&cat, &state, &["--backup"]));
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "second\n");
    let bucket = |args: &[&str]| {
        let mut c = Command::new(ORDO);
        c.arg("bucket").args(args).arg("--state-dir").arg(&state);
        run(c)
    };
    let (code, list, _) = bucket(&["list"]);
    assert_eq!(code, 0);
    let line = list.lines().next().unwrap().to_string();
    let fields: Vec<&str> = line.split(' ').collect();
    assert_eq!(fields.len(), 3, "{line}");
    assert_eq!(fields[0].len(), 64);
    assert!(fields[1].ends_with('Z'), "{line}");
    assert_eq!(fields[2], f.to_str().unwrap());
    let (code, out, err) = bucket(&["restore", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "first\n");
    // The content it replaced ("second") was kept: restore it elsewhere by checksum.
    let (_, list, _) = bucket(&["list"]);
    assert_eq!(list.lines().count(), 2, "{list}");
    let second_sum = list.lines().nth(1).unwrap().split(' ').next().unwrap();
    let want = ordo::graph::digest::hex(&ordo::graph::digest::sha256(b"second\n"));
    assert_eq!(second_sum, want, "backups are listed oldest first");
    let copy = d.join("copy");
    let (code, _, err) = bucket(&["restore", &second_sum[..10], copy.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "second\n");
    let (code, _, err) = bucket(&["restore", "/no/such/file"]);
    assert_eq!(code, 1);
    assert!(err.contains("No backup of /no/such/file"), "{err}");
}

#[test]
fn links_are_managed_not_followed_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state");
    let secret = d.join("secret");
    std::fs::write(&secret, "do not touch\n").unwrap();
    let link = d.join("link");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    // Default (links => manage): the link is replaced by a file; its target is untouched and
    // not copied into the bucket.
    let cat = write_catalog(
        d,
        "c.json",
        json!([{"type": "File", "title": link.to_str().unwrap(), "parameters": {"content": "mine\n"}}]),
    );
    let (code, out, _) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}");
    assert!(!std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&link).unwrap(), "mine\n");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "do not touch\n");
    assert!(
        !state.join("clientbucket").exists(),
        "the link's target was backed up"
    );
    // links => follow: the file the link points to is managed, the link stays.
    let target = d.join("target");
    std::fs::write(&target, "old\n").unwrap();
    let link2 = d.join("link2");
    std::os::unix::fs::symlink("target", &link2).unwrap();
    let cat = write_catalog(
        d,
        "c2.json",
        json!([{"type": "File", "title": link2.to_str().unwrap(), "parameters": {"content": "new\n", "links": "follow", "mode": "0600"}}]),
    );
    let (code, out, _) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}");
    assert!(std::fs::symlink_metadata(&link2)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // An invalid value is refused before anything runs.
    let cat = write_catalog(
        d,
        "c3.json",
        json!([{"type": "File", "title": link2.to_str().unwrap(), "parameters": {"content": "x", "links": "ignore"}}]),
    );
    let (code, _, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 1);
    assert!(
        err.contains("Invalid value \"ignore\". Valid values are follow, manage"),
        "{err}"
    );
}

#[test]
fn file_names_are_never_shell_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pwned = d.join("pwned");
    let evil = d.join(format!("a;touch {};b", pwned.display()).replace('/', "_"));
    // `validate_cmd` in argv form and in shell form: the temporary file's name (which
    // contains the managed file's name) is one argument either way.
    let cat = write_catalog(
        d,
        "c.json",
        json!([
            {"type": "File", "title": evil.to_str().unwrap(), "parameters": {"content": "x", "validate_cmd": "/usr/bin/test -s %"}},
            {"type": "File", "title": format!("{}2", evil.display()), "parameters": {"content": "x", "validate_cmd": "test -s % && true"}},
        ]),
    );
    let (code, out, _) = run(apply_cmd(&cat, &d.join("state"), &[]));
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(&evil).unwrap(), "x");
    assert!(!pwned.exists() && !Path::new("_tmp").exists());
    assert_eq!(temp_files(d), Vec::<String>::new());
}

#[test]
fn sensitive_values_never_reach_logs_or_reports() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = d.join("creds");
    std::fs::write(&f, "old-secret-content\n").unwrap();
    let cat = write_catalog(
        d,
        "c.json",
        json!([
            {"type": "File", "title": f.to_str().unwrap(), "parameters": {"content": "hunter2-new-content\n", "show_diff": true},
             "sensitive_parameters": ["content"]},
            {"type": "Exec", "title": "login", "parameters": {"command": "/bin/sh -c 'echo token=s3cr3t-token; exit 3'", "logoutput": true},
             "sensitive_parameters": ["command"]},
            {"type": "Notify", "title": "n", "parameters": {"message": "the password is pa55word"},
             "sensitive_parameters": ["message"]},
        ]),
    );
    let report = d.join("report.json");
    for noop in [true, false] {
        let mut extra = vec!["--report", report.to_str().unwrap()];
        if noop {
            extra.push("--noop");
        }
        let (_, out, err) = run(apply_cmd(&cat, &d.join("state"), &extra));
        let report_text = std::fs::read_to_string(&report).unwrap();
        for text in [&out, &err, &report_text] {
            for secret in ["hunter2", "s3cr3t", "pa55word", "echo token"] {
                assert!(
                    !text.contains(secret),
                    "{secret} leaked (noop {noop}):\n{text}"
                );
            }
        }
        if !noop {
            assert!(
                err.contains("[command redacted] returned 3 instead of one of [0]"),
                "{err}"
            );
            assert!(out.contains("[output redacted]"), "{out}");
            assert!(
                out.contains("content: changed [redacted] to [redacted]"),
                "{out}"
            );
        }
    }
}

/// The pending-refresh store of the one configuration these tests apply, if it exists.
fn pending_file(state: &std::path::Path) -> Option<std::path::PathBuf> {
    let entries = std::fs::read_dir(state.join("pending")).ok()?;
    let files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    assert!(files.len() <= 1, "one configuration, one store: {files:?}");
    files.into_iter().next()
}
