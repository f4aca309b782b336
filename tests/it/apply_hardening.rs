//! Hostile inputs and faults, end to end with the real binary: paths Ordo writes without
//! managing them (reports), special files at managed paths and as sources, bounded memory
//! for file content and command output, sensitive values in refusals and Salt returns,
//! inputs that are FIFOs or devices, state directory hygiene, path identity, validation
//! gaps, and commands run as another user. Puppet 7.23's behaviour, where it is the
//! reference, is quoted in each test.

use crate::common::{mkfifo, write_catalog};
use serde_json::{json, Value};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

fn apply_cmd(catalog: &Path, state: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(ORDO);
    c.arg("apply")
        .arg(catalog)
        .args(["--log-format", "puppet", "--state-dir"])
        .arg(state)
        .args(extra)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    c
}

/// Runs with a time limit (a hang is a failure, not a stuck test); returns status, stdout,
/// stderr.
fn run(mut c: Command) -> (i32, String, String) {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ordo did not finish within 60 s (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn file(title: &str, params: Value) -> Value {
    json!({"type": "File", "title": title, "parameters": params})
}

// ---- paths Ordo writes without managing them ------------------------------------------------

#[test]
fn report_to_a_device_is_written_through_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let cat = write_catalog(dir.path(), "c.json", json!([]));
    let (code, _, err) = run(apply_cmd(&cat, &state, &["--report", "/dev/null"]));
    assert_eq!(code, 0, "{err}");
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
}

#[test]
fn report_to_a_fifo_is_written_through_and_one_without_reader_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let cat = write_catalog(dir.path(), "c.json", json!([]));
    let fifo = dir.path().join("report.fifo");
    mkfifo(&fifo);
    // A reader: the report goes through the FIFO.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    std::thread::sleep(Duration::from_millis(100));
    let (code, _, err) = run(apply_cmd(
        &cat,
        &state,
        &["--report", fifo.to_str().unwrap()],
    ));
    assert_eq!(code, 0, "{err}");
    let text = reader.join().unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["status"], "unchanged");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // No reader: refused at once (not waited on), and the run fails.
    let (code, _, err) = run(apply_cmd(
        &cat,
        &state,
        &["--report", fifo.to_str().unwrap()],
    ));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("a FIFO with no reader"), "{err}");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn report_through_a_planted_link_is_refused_and_the_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let cat = write_catalog(dir.path(), "c.json", json!([]));
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("report.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let (code, _, err) = run(apply_cmd(
        &cat,
        &state,
        &["--report", link.to_str().unwrap()],
    ));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // With --detailed-exitcodes too: a run with changes whose report is lost is a failure.
    let target = dir.path().join("made");
    let cat = write_catalog(
        dir.path(),
        "c2.json",
        json!([file(
            target.to_str().unwrap(),
            json!({"ensure": "file", "content": "x"})
        )]),
    );
    let missing_dir = dir.path().join("no/such/dir/report.json");
    let (code, _, err) = run(apply_cmd(
        &cat,
        &state,
        &[
            "--detailed-exitcodes",
            "--report",
            missing_dir.to_str().unwrap(),
        ],
    ));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Could not write the report"), "{err}");
}

#[test]
fn reports_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let cat = write_catalog(dir.path(), "c.json", json!([]));
    let report = dir.path().join("r.json");
    let (code, _, err) = run(apply_cmd(
        &cat,
        &state,
        &["--report", report.to_str().unwrap()],
    ));
    assert_eq!(code, 0, "{err}");
    let mode = std::fs::metadata(&report).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
}

// ---- special files at managed paths -----------------------------------------------------------

#[test]
fn a_fifo_at_a_managed_path_is_replaced_never_opened() {
    // Puppet: `ensure => file` (or content alone) replaces a FIFO: "defined content as ...";
    // `ensure => present` keeps it with a warning.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (f1, f2, f3) = (
        dir.path().join("f1"),
        dir.path().join("f2"),
        dir.path().join("f3"),
    );
    for f in [&f1, &f2, &f3] {
        mkfifo(f);
    }
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([
            file(
                f1.to_str().unwrap(),
                json!({"ensure": "file", "content": "hi\n"})
            ),
            file(f2.to_str().unwrap(), json!({"content": "hi\n"})),
            file(
                f3.to_str().unwrap(),
                json!({"ensure": "present", "content": "hi\n"})
            ),
        ]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    let sum = "{sha256}98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4";
    assert!(
        out.contains(&format!(
            "File[{}]/ensure: defined content as '{sum}'",
            f1.display()
        )),
        "{out}"
    );
    assert!(out.contains(&format!(
        "File[{}]/ensure: defined content as",
        f2.display()
    )));
    assert!(
        out.contains(&format!(
            "File[{}]: Ensure set to :present but file type is fifo so no content will be synced",
            f3.display()
        )),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&f1).unwrap(), "hi\n");
    assert_eq!(std::fs::read_to_string(&f2).unwrap(), "hi\n");
    assert!(std::fs::symlink_metadata(&f3)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_device_at_a_managed_path_is_never_removed() {
    // Puppet: "change from 'characterSpecial' to 'file' failed: Could not remove files of
    // type characterSpecial". A link to /dev/null stands in for a device node only where
    // mknod is not allowed: the device itself is needed, so the test needs root.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let dev = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: mknod is not allowed here");
        return;
    }
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([file(
            dev.to_str().unwrap(),
            json!({"ensure": "file", "content": "x"})
        )]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &["--detailed-exitcodes"]));
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        out.contains("change from 'characterSpecial' to 'file' failed: Could not remove files of type characterSpecial"),
        "{out}"
    );
    assert!(std::fs::symlink_metadata(&dev)
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn a_fifo_or_device_as_source_is_refused() {
    // Puppet: "Could not retrieve file metadata for file:///dev/null: Cannot manage files of
    // type characterSpecial".
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let fifo = dir.path().join("src.fifo");
    mkfifo(&fifo);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([
            file(
                a.to_str().unwrap(),
                json!({"ensure": "file", "source": "/dev/null"})
            ),
            file(
                b.to_str().unwrap(),
                json!({"ensure": "file", "source": fifo.to_str().unwrap()})
            ),
        ]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &["--detailed-exitcodes"]));
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        out.contains("Could not retrieve file metadata for file:///dev/null: Cannot manage files of type characterSpecial"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "Could not retrieve file metadata for file://{}: Cannot manage files of type fifo",
            fifo.display()
        )),
        "{out}"
    );
    assert!(!a.exists() && !b.exists());
}

// ---- bounded memory ---------------------------------------------------------------------------

/// Peak resident memory of a finished child, from `/usr/bin/time`-free means: the kernel's
/// rusage of waited-for children, read from /proc/self/status is not per child, so the
/// test runs ordo under `sh -c 'ordo ...; cat /proc/$$/status'`-free measurement instead:
/// the child's VmHWM sampled while it runs.
fn peak_rss_kib(mut c: Command) -> (i32, u64, String) {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(&status_path) {
            if let Some(v) = s
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
            {
                peak = peak.max(v);
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "ordo did not finish"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), peak, text)
}

#[test]
fn a_large_managed_file_is_compared_and_backed_up_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // What a run needs without any file content (the allocator's arenas, the binary).
    let empty = write_catalog(dir.path(), "empty.json", json!([]));
    let (code, baseline, text) = peak_rss_kib(apply_cmd(&empty, &state, &[]));
    assert_eq!(code, 0, "{text}");
    // 24 MiB, sparse (its checksum is computed by a debug build too, hence not larger):
    // read whole, it would add its size to the peak.
    let big = dir.path().join("big");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(24 << 20).unwrap();
    drop(f);
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([file(big.to_str().unwrap(), json!({"content": "small\n"}))]),
    );
    let (code, peak, text) = peak_rss_kib(apply_cmd(&cat, &state, &["--backup", "--verbose"]));
    assert_eq!(code, 0, "{text}");
    // The checksum of 24 MiB of zeros, as `sha256sum` gives it.
    let zeros = "95aeaae03b56c171cf88753c821630a3c24f1fcf406cec3e17d56781aa3f8369";
    assert!(
        text.contains(&format!("content changed '{{sha256}}{zeros}'")),
        "{text}"
    );
    assert!(text.contains("Filebucketed"), "{text}");
    assert_eq!(std::fs::read_to_string(&big).unwrap(), "small\n");
    assert!(
        peak < baseline + 12 * 1024,
        "peak RSS {peak} KiB for a 24 MiB file (without: {baseline} KiB)"
    );
    // The backup holds the old content, whole.
    let kept = state.join("clientbucket").join(zeros).join("contents");
    assert_eq!(std::fs::metadata(&kept).unwrap().len(), 24 << 20);
    // Same size, one byte different at the end: compared piece by piece.
    let mid = dir.path().join("mid");
    let mut content = vec![b'a'; 1 << 20];
    std::fs::write(&mid, &content).unwrap();
    *content.last_mut().unwrap() = b'b';
    let want = String::from_utf8(content).unwrap();
    let cat = write_catalog(
        dir.path(),
        "c2.json",
        json!([file(mid.to_str().unwrap(), json!({"content": want}))]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("content changed"), "{out}");
    assert_eq!(std::fs::read(&mid).unwrap().last(), Some(&b'b'));
    let (code, out, _) = run(apply_cmd(&cat, &state, &["--detailed-exitcodes"]));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn command_output_is_kept_as_a_bounded_tail() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // 256 MiB of output, then a last line: the log shows the end, memory stays small.
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([{"type": "Exec", "title": "loud", "parameters": {
            "command": "head -c 268435456 /dev/zero | tr '\\0' x; echo; echo last line",
            "path": "/usr/bin:/bin",
            "logoutput": true
        }}]),
    );
    let (code, peak, text) = peak_rss_kib(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{}", &text[text.len().saturating_sub(2000)..]);
    assert!(
        text.contains("returns: last line"),
        "{}",
        &text[text.len().saturating_sub(2000)..]
    );
    assert!(text.contains("bytes of earlier output omitted]"));
    assert!(
        peak < 150 * 1024,
        "peak RSS {peak} KiB for 256 MiB of output"
    );
}

// ---- sensitive values -------------------------------------------------------------------------

#[test]
fn a_refused_catalog_shows_a_short_excerpt_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let secret = "s3cr3t-passw0rd-value";
    // One line, as Puppet writes catalogs; the shape error (a title that is a number) lies
    // far from the secret, and the line is long.
    let filler = "y".repeat(100_000);
    let text = json!({"resources": [
        {"type": "File", "title": "/tmp/a", "parameters": {"content": secret, "owner": filler}, "sensitive_parameters": ["content"]},
        {"type": "File", "title": 5, "parameters": {}}
    ]})
    .to_string();
    let cat = dir.path().join("c.json");
    std::fs::write(&cat, &text).unwrap();
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("wrong shape"), "{err}");
    assert!(!err.contains(secret), "{err}");
    assert!(err.len() < 4000, "{} bytes of error", err.len());
    assert!(err.contains("line 1, column"), "{err}");
    // A secret next to the problem is redacted in the excerpt.
    let text = json!({"resources": [
        {"type": "File", "title": "/tmp/a", "parameters": {"content": secret}, "sensitive_parameters": ["content"], "line": "x"}
    ]})
    .to_string();
    std::fs::write(&cat, &text).unwrap();
    let (code, _, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains(secret), "{err}");
}

#[test]
fn sensitive_content_of_a_new_file_is_not_checksummed_in_the_log() {
    // Puppet: "File[/tmp/s1]/ensure: changed [redacted] to [redacted]".
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let target = dir.path().join("s1");
    let mut r = file(target.to_str().unwrap(), json!({"content": "topsecret"}));
    r["sensitive_parameters"] = json!(["content"]);
    let cat = write_catalog(dir.path(), "c.json", json!([r]));
    let report = dir.path().join("r.json");
    let (code, out, err) = run(apply_cmd(
        &cat,
        &state,
        &["--report", report.to_str().unwrap()],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "File[{}]/ensure: changed [redacted] to [redacted]",
            target.display()
        )),
        "{out}"
    );
    let sum = "{sha256}";
    assert!(!out.contains(sum), "{out}");
    assert!(!std::fs::read_to_string(&report).unwrap().contains(sum));
}

#[test]
fn salt_states_are_not_named_by_a_sensitive_command() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let secret = "/bin/echo hush-hush-token";
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([{"type": "Exec", "title": "x", "parameters": {"command": secret}, "sensitive_parameters": ["command"]}]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &["--report-format", "salt"]));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("hush-hush-token"), "{out}");
    let ret: Value = serde_json::from_str(&out).unwrap();
    let (key, state) = ret["local"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(key, "exec_|-x_|-[redacted]_|-apply");
    assert_eq!(state["name"], "[redacted]");
}

// ---- inputs that are not regular files --------------------------------------------------------

#[test]
fn a_sensitive_environment_value_echoed_by_its_command_is_redacted() {
    // Puppet warns "Unable to mark 'environment' as sensitive" and logs the command's output
    // as it is; Ordo scrubs the value of each sensitive `NAME=value` from the log and report.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let report = dir.path().join("r.json");
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([{"type": "Exec", "title": "show", "sensitive_parameters": ["environment"],
            "parameters": {"command": "/bin/sh -c 'echo \"pw is $PW\"'", "logoutput": true,
                "environment": ["PW=envsecret3141"]}}]),
    );
    for format in ["ordo", "salt"] {
        let (code, out, err) = run(apply_cmd(
            &cat,
            &state,
            &[
                "--report",
                report.to_str().unwrap(),
                "--report-format",
                format,
            ],
        ));
        let written = std::fs::read_to_string(&report).unwrap();
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("returns: pw is [redacted]"), "{out}");
        for text in [&out, &err, &written] {
            assert!(!text.contains("envsecret3141"), "{format}: {text}");
        }
    }
}

#[test]
fn a_fifo_or_device_as_input_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let fifo = dir.path().join("in.pp");
    mkfifo(&fifo);
    for input in [fifo.to_str().unwrap(), "/dev/zero"] {
        let (code, _, err) = run(apply_cmd(Path::new(input), &state, &[]));
        assert_eq!(code, 1, "{input}: {err}");
        assert!(err.contains("not a regular file"), "{input}: {err}");
        let (code, _, err) = run({
            let mut c = Command::new(ORDO);
            c.args(["compile", input]).stdin(Stdio::null());
            c
        });
        assert_ne!(code, 0, "{input}");
        assert!(err.contains("not a regular file"), "{input}: {err}");
    }
    // As facts and as file()'s argument.
    let pp = dir.path().join("x.pp");
    std::fs::write(&pp, "notice(file('/dev/zero'))\n").unwrap();
    let (code, _, err) = run({
        let mut c = Command::new(ORDO);
        c.arg("compile").arg(&pp).stdin(Stdio::null());
        c
    });
    assert_ne!(code, 0);
    assert!(err.contains("/dev/zero"), "{err}");
    std::fs::write(&pp, "notice(1)\n").unwrap();
    let (code, _, err) = run({
        let mut c = Command::new(ORDO);
        c.arg("compile")
            .arg(&pp)
            .args(["--facts", "/dev/zero"])
            .stdin(Stdio::null());
        c
    });
    assert_ne!(code, 0);
    assert!(err.contains("not a regular file"), "{err}");
}

// ---- state directory ---------------------------------------------------------------------------

#[test]
fn a_state_directory_others_can_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = dir.path().join("t");
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([file(target.to_str().unwrap(), json!({"content": "x"}))]),
    );
    let (code, _, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("writable by others"), "{err}");
    assert!(!target.exists());
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (code, _, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn state_files_are_not_followed_and_leftovers_are_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, state.join("apply.lock")).unwrap();
    let cat = write_catalog(dir.path(), "c.json", json!([]));
    let (code, _, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("apply.lock"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    std::fs::remove_file(state.join("apply.lock")).unwrap();
    // A temporary file of a run killed before its rename (a pid that is no process).
    let bucket = state.join("clientbucket");
    std::fs::create_dir_all(&bucket).unwrap();
    let dead = u32::MAX - 7;
    let leftover = bucket.join(format!(".contents.ordo-{dead}-0"));
    std::fs::write(&leftover, "half").unwrap();
    let ours = state.join(format!(".pending.ordo-{}-0", std::process::id()));
    std::fs::write(&ours, "live").unwrap();
    let (code, _, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{err}");
    assert!(!leftover.exists(), "a leftover temporary file was kept");
    assert!(ours.exists(), "a live writer's temporary file was removed");
}

// ---- path identity ---------------------------------------------------------------------------

#[test]
fn spellings_of_one_path_are_one_file() {
    // Puppet: "Cannot alias File[/tmp/pt/x/y/../d] to ["/tmp/pt/x/d"] ...; resource
    // ["File", "/tmp/pt/x/d"] already declared".
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let base = dir.path().to_str().unwrap();
    for other in [
        format!("{base}/x/y/../d"),
        format!("{base}/x/d/"),
        format!("{base}/x/./d"),
    ] {
        let cat = write_catalog(
            dir.path(),
            "c.json",
            json!([
                file(&format!("{base}/x//d"), json!({"ensure": "file"})),
                file(&other, json!({"ensure": "file"})),
            ]),
        );
        let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
        assert_eq!(code, 1, "{other}: {out}{err}");
        let all = out + &err;
        assert!(
            all.contains(&format!(
                "Cannot alias File[{other}] to [\"{base}/x/d\"]; resource [\"File\", \"{base}/x/d\"] already declared"
            )),
            "{all}"
        );
    }
    // One spelling alone manages the expanded path.
    std::fs::create_dir(dir.path().join("x")).unwrap();
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([file(
            &format!("{base}/x/y/..//d"),
            json!({"content": "one"})
        )]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("x/d")).unwrap(),
        "one"
    );
}

// ---- validation gaps ----------------------------------------------------------------------------

#[test]
fn invalid_file_attributes_are_refused_before_any_change() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let t = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let cases = [
        (
            file(&t("l"), json!({"ensure": "link", "target": "/tmp", "content": "x"})),
            "You cannot specify more than one of content, source, target",
        ),
        (
            file(&t("n"), json!({"content": 5})),
            "Munging failed for value 5 in class content: no implicit conversion of Integer into String",
        ),
        (
            file(&t("c"), json!({"content": "x", "checksum": "foo"})),
            "Parameter checksum failed on File[",
        ),
    ];
    for (r, msg) in cases {
        refused_before_any_change(dir.path(), r, msg);
    }
    // Puppet keeps the last value of an array content.
    let a = t("a");
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([file(&a, json!({"content": ["a", "b"]}))]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "b");
}

#[test]
fn values_puppet_refuses_are_refused_for_every_type_before_any_change() {
    // Each message is Puppet 7.23's (`puppet apply` of the same resource), except the
    // "takes one value" refusals, where Puppet fails the resource (`Got a nil value for
    // should`) or, for a package's `ensure => []`, does nothing: an array must never be
    // read as "not given" (a package would be installed).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let f = f.to_str().unwrap();
    let r = |t: &str, title: &str, params: Value| json!({"type": t, "title": title, "parameters": params});
    let cases = [
        (r("File", f, json!({"ensure": "file", "show_diff": "maybe"})),
            "Parameter show_diff failed on File[F]: Invalid value \"maybe\". Valid values are true, false, yes, no."),
        (r("File", f, json!({"ensure": "file", "purge": "maybe"})),
            "Parameter purge failed on File[F]: Invalid value \"maybe\". Valid values are true, false, yes, no."),
        (r("File", f, json!({"ensure": "file", "selinux_ignore_defaults": "maybe"})),
            "Parameter selinux_ignore_defaults failed on File[F]: Invalid value \"maybe\". Valid values are true, false."),
        (r("File", f, json!({"ensure": "file", "source_permissions": "bogus"})),
            "Parameter source_permissions failed on File[F]: Invalid value \"bogus\". Valid values are use, use_when_creating, ignore."),
        (r("File", f, json!({"ensure": "directory", "recurselimit": -1})),
            "Parameter recurselimit failed on File[F]: Invalid value -1. Valid values match /^[0-9]+$/."),
        (r("File", f, json!({"ensure": "file", "checksum_value": "abc"})),
            "Validation of File[F] failed: Checksum value 'abc' is not a valid checksum type sha256"),
        (r("File", f, json!({"ensure": "file", "backup": []})),
            "Parameter backup failed on File[F]: Invalid backup type nil"),
        (r("File", f, json!({"ensure": "file", "owner": []})),
            "Parameter owner failed on File[F]: Invalid value []: owner takes one value"),
        (r("File", f, json!({"ensure": "file", "group": {"a": 1}})),
            "Parameter group failed on File[F]: Invalid value {\"a\":1}: group takes one value"),
        (r("Exec", "/bin/true", json!({"user": []})),
            "Parameter user failed on Exec[/bin/true]: Invalid value []: user takes one value"),
        (r("Exec", "/bin/true", json!({"path": {"a": 1}})),
            "Parameter path failed on Exec[/bin/true]: path must be a string or an array of strings"),
        (r("Service", "ordo-none", json!({"hasstatus": "maybe"})),
            "Parameter hasstatus failed on Service[ordo-none]: Invalid value \"maybe\". Valid values are true, false."),
        (r("Service", "ordo-none", json!({"hasrestart": "maybe"})),
            "Parameter hasrestart failed on Service[ordo-none]: Invalid value \"maybe\". Valid values are true, false."),
        (r("Package", "ordo-none", json!({"ensure": []})),
            "Parameter ensure failed on Package[ordo-none]: Invalid value []: ensure takes one value"),
        (r("Package", "ordo-none", json!({"ensure": "absent", "allow_virtual": "maybe"})),
            "Parameter allow_virtual failed on Package[ordo-none]: Invalid value \"maybe\". Valid values are true, false, yes, no."),
        (r("Group", "ordonone", json!({"ensure": "absent", "gid": "abc"})),
            "Parameter gid failed on Group[ordonone]: Invalid GID abc"),
        (r("User", "ordonone", json!({"ensure": "absent", "groups": ["a,b"]})),
            "Parameter groups failed on User[ordonone]: Group names must be provided as an array, not a comma-separated list."),
        (r("User", "ordonone", json!({"ensure": "absent", "password": "x:y"})),
            "Parameter password failed on User[ordonone]: Passwords cannot include ':'"),
    ];
    for (res, msg) in cases {
        refused_before_any_change(
            dir.path(),
            res,
            &msg.replace("File[F]", &format!("File[{f}]")),
        );
    }
}

/// Applies `res` after a new file in a catalog: the run must be refused with `msg`, and the
/// file not made.
fn refused_before_any_change(dir: &Path, res: Value, msg: &str) {
    let marker = dir.join("marker");
    let cat = write_catalog(
        dir,
        "c.json",
        json!([file(marker.to_str().unwrap(), json!({"content": "m"})), res]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &dir.join("state"), &[]));
    let all = out + &err;
    assert_eq!(code, 1, "{all}");
    assert!(all.contains(msg), "{msg}: {all}");
    assert!(
        !marker.exists(),
        "a change was made before the refusal: {all}"
    );
}

#[test]
fn exec_path_search_passes_over_a_file_that_is_not_executable() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    std::fs::create_dir(&first).unwrap();
    std::fs::create_dir(&second).unwrap();
    std::fs::write(first.join("tool"), "#!/bin/sh\necho wrong\n").unwrap();
    std::fs::write(second.join("tool"), "#!/bin/sh\necho right\n").unwrap();
    std::fs::set_permissions(second.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", first.display(), second.display());
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([{"type": "Exec", "title": "t", "parameters": {"command": "tool", "path": path, "logoutput": true}}]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("returns: right"), "{out}");
}

// ---- exec as another user ------------------------------------------------------------------------

/// A user (name, uid) who is a member of a group other than their primary one, from
/// /etc/passwd and /etc/group; the group's gid.
fn user_with_supplementary_group() -> Option<(String, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let group = std::fs::read_to_string("/etc/group").ok()?;
    for g in group.lines() {
        let f: Vec<&str> = g.split(':').collect();
        let (Some(gid), Some(members)) = (f.get(2).and_then(|x| x.parse::<u32>().ok()), f.get(3))
        else {
            continue;
        };
        for m in members.split(',').filter(|m| !m.is_empty()) {
            let known = passwd.lines().any(|l| {
                let p: Vec<&str> = l.split(':').collect();
                p.first() == Some(&m) && p.get(3).and_then(|x| x.parse::<u32>().ok()) != Some(gid)
            });
            if known {
                return Some((m.to_string(), gid));
            }
        }
    }
    None
}

#[test]
fn exec_as_another_user_has_the_users_groups_and_no_inherited_home() {
    let root = std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false);
    let Some((user, gid)) = user_with_supplementary_group().filter(|_| root) else {
        eprintln!("skipped: needs root and a user with a supplementary group");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([{"type": "Exec", "title": "ids", "parameters": {
            "command": "/bin/sh -c 'echo groups=$(id -G); echo home=${HOME:-unset} user=${USER:-unset}'",
            "user": user,
            "cwd": "/",
            "logoutput": true
        }}]),
    );
    let (code, out, err) = run({
        let mut c = apply_cmd(&cat, &state, &[]);
        c.env("HOME", "/root").env("USER", "root");
        c
    });
    assert_eq!(code, 0, "{out}{err}");
    let groups = out
        .lines()
        .find_map(|l| l.split("groups=").nth(1))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        groups.split_whitespace().any(|g| g == gid.to_string()),
        "{user} lacks group {gid}: {out}"
    );
    // Puppet unsets HOME, USER and LOGNAME for every command.
    assert!(out.contains("home=unset user=unset"), "{out}");
}

// ---- no stack overflow ------------------------------------------------------------------------

fn compile(dir: &Path, text: &str, extra: &[&str]) -> (i32, String, String) {
    let pp = dir.join("deep.pp");
    std::fs::write(&pp, text).unwrap();
    run({
        let mut c = Command::new(ORDO);
        c.arg("compile").arg(&pp).args(extra).stdin(Stdio::null());
        c
    })
}

#[test]
fn deep_programs_and_data_fail_cleanly_or_work_never_abort() {
    let dir = tempfile::tempdir().unwrap();
    // Puppet: "stack level too deep" for each of these; Ordo: a clear error, exit 1.
    let chained_maps = format!("$b = [1]{}\nnotice($b)\n", ".map |$x| { $x }".repeat(5000));
    let chained_access = format!("$b = [1]{}\nnotice($b)\n", "[0]".repeat(5000));
    let includes: String = (0..2000)
        .map(|i| format!("class c{i} {{ include c{} }}\n", i + 1))
        .collect::<String>()
        + "class c2000 {}\ninclude c0\n";
    for (what, text, says) in [
        ("maps", chained_maps, "levels deep are not supported"),
        ("accesses", chained_access, "levels deep are not supported"),
        ("includes", includes, "stack level too deep"),
    ] {
        let (code, _, err) = compile(dir.path(), &text, &[]);
        assert_eq!(code, 1, "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
    }
    // 5,000 elsif branches and YAML facts nested 12,000 deep: fine.
    let mut elsif = String::from("$x = 4999\nif $x == 0 { notice(0) }\n");
    for i in 1..5000 {
        elsif.push_str(&format!("elsif $x == {i} {{ notice('branch {i}') }}\n"));
    }
    let (code, _, err) = compile(dir.path(), &elsif, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("branch 4999"), "{err}");
    let facts = dir.path().join("facts.yaml");
    std::fs::write(
        &facts,
        format!("a: {}{}\n", "[".repeat(12000), "]".repeat(12000)),
    )
    .unwrap();
    let (code, _, err) = compile(
        dir.path(),
        "notice(1)\n",
        &["--facts", facts.to_str().unwrap()],
    );
    assert!(code == 0 || code == 1, "{code}: {err}");
    assert!(!err.contains("overflow"), "{err}");
}

// ---- regex limits ---------------------------------------------------------------------------

#[test]
fn a_match_past_the_backtracking_limit_is_still_answered() {
    // Ruby: ("a" * 21 + "y") =~ /^(?:(a|a)+\1x|a+y)/ is 0, a match, after some two million
    // backtracking steps (fancy-regex gives up after one million by default).
    let dir = tempfile::tempdir().unwrap();
    let text = format!("notice(\"{}y\" =~ /^(?:(a|a)+\\1x|a+y)/)\n", "a".repeat(21));
    let (code, _, err) = compile(dir.path(), &text, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Notice: Scope(Class[main]): true"), "{err}");
}

#[test]
fn a_match_that_gives_up_fails_with_the_pattern_and_where() {
    // Exponential backtracking with a backreference (fancy-regex): past the larger limit the
    // answer is unknown, so the compile fails there instead of taking "no match".
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "$x = 1\nif \"{}y\" =~ /^(a|a)+\\1x/ {{ notice(yes) }} else {{ notice(no) }}\n",
        "a".repeat(40)
    );
    let (code, _, err) = compile(dir.path(), &text, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/^(a|a)+\\1x/"), "{err}");
    assert!(err.contains("backtracking"), "{err}");
    assert!(err.contains("line: 2, column: 4"), "{err}");
    assert!(!err.contains("Notice"), "{err}");
}

// ---- compile memory and bounds ----------------------------------------------------------------

#[test]
fn lambda_scopes_are_freed_when_their_calls_return() {
    // Puppet 7.23: 71 MB for the first. Each call's scope held its own copy of the 1 MB
    // value until the end of the compile (5 GB).
    let dir = tempfile::tempdir().unwrap();
    let pp = dir.path().join("loop.pp");
    std::fs::write(
        &pp,
        "$big = sprintf('%1000000s', 'x')\n\
         5000.each |$i| { $y = \"${big}\" }\n\
         $r = 20000.reduce('') |$m, $x| { sprintf('%100000s', $x) }\n\
         notice(length($r))\n",
    )
    .unwrap();
    let mut c = Command::new(ORDO);
    c.arg("compile").arg(&pp).stdin(Stdio::null());
    let (code, peak, text) = peak_rss_kib(c);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("Notice: Scope(Class[main]): 100000"),
        "{text}"
    );
    assert!(peak < 300 * 1024, "peak RSS {peak} KiB");
}

#[test]
fn template_loops_count_against_the_compiles_iteration_bound() {
    let dir = tempfile::tempdir().unwrap();
    // A range is walked, never made, in Ordo's ERB and without falling back to Ruby: the
    // compile's bound on block calls stops it.
    let (code, _, err) = compile(
        dir.path(),
        "notice(inline_template('<% (1..1000000000000).each do |i| %>x<% end %>'))\n",
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("more than 1000000 lambda and block calls"),
        "{err}"
    );
    // The bound is the compile's: 600,000 lambda calls, then 600,000 block calls.
    let (code, _, err) = compile(
        dir.path(),
        "600000.each |$x| { }\nnotice(inline_template('<% 600000.times do |i| %><% end %>done'))\n",
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("more than 1000000 lambda and block calls"),
        "{err}"
    );
    assert!(err.contains("line: 2"), "{err}");
}

#[test]
fn a_refused_catalog_that_is_not_json_shows_no_string_values() {
    // Not JSON: which values are secret cannot be read, so none is shown (keys are).
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let secret = "s3cr3t-passw0rd-value";
    let good = json!({"resources": [
        {"type": "File", "title": "/tmp/a", "parameters": {"content": secret, "owner": "y".repeat(100_000)}, "sensitive_parameters": ["content"]}
    ]})
    .to_string();
    let cat = dir.path().join("c.json");
    for bad in [
        good.replacen("\"owner\"", "\"owner\" x", 1),
        good.replacen(secret, &format!("{secret}\u{1}"), 1),
        good.replacen(&format!("{secret}\""), &format!("{secret}\" oops"), 1),
        format!("{}{}", &good[..good.len() - 1], ",}"),
    ] {
        std::fs::write(&cat, &bad).unwrap();
        let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains("invalid JSON"), "{err}");
        assert!(!err.contains(secret), "{err}");
        assert!(!err.contains("yyyy"), "{err}");
        assert!(err.len() < 2000, "{} bytes of error", err.len());
    }
}

#[test]
fn a_large_source_is_copied_and_compared_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let empty = write_catalog(dir.path(), "empty.json", json!([]));
    let (code, baseline, text) = peak_rss_kib(apply_cmd(&empty, &state, &[]));
    assert_eq!(code, 0, "{text}");
    let src = dir.path().join("src");
    let f = std::fs::File::create(&src).unwrap();
    f.set_len(24 << 20).unwrap();
    drop(f);
    let dest = dir.path().join("dest");
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([file(
            dest.to_str().unwrap(),
            json!({"source": src.to_str().unwrap()})
        )]),
    );
    let zeros = "95aeaae03b56c171cf88753c821630a3c24f1fcf406cec3e17d56781aa3f8369";
    // New, then changed at its end, then in sync: each within a bounded peak.
    for (step, want) in [
        (0, "defined content as '{sha256}"),
        (1, "content changed"),
        (2, ""),
    ] {
        if step == 1 {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&dest)
                .unwrap();
            f.write_all(b"tail").unwrap();
        }
        let (code, peak, text) = peak_rss_kib(apply_cmd(&cat, &state, &["--verbose"]));
        assert_eq!(code, 0, "{text}");
        if want.is_empty() {
            assert!(!text.contains("content"), "{text}");
        } else {
            assert!(text.contains(want), "{text}");
            assert!(text.contains(zeros), "{text}");
        }
        assert_eq!(std::fs::metadata(&dest).unwrap().len(), 24 << 20);
        assert!(
            peak < baseline + 12 * 1024,
            "step {step}: peak RSS {peak} KiB for a 24 MiB source (without: {baseline} KiB)"
        );
    }
}

#[test]
fn a_string_doubled_past_the_bound_is_refused_not_aborted() {
    // Forty doublings would ask for 16 TiB: the compile stops at the bound with the place.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("$a0 = 'xxxxxxxxxxxxxxxx'\n");
    for i in 1..40 {
        text.push_str(&format!("$a{i} = \"${{a{}}}${{a{}}}\"\n", i - 1, i - 1));
    }
    let (code, _, err) = compile(dir.path(), &text, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("longer than the 268435456 one value may have"),
        "{err}"
    );
    assert!(err.contains("line: 26"), "{err}");
}

// ---- every output path: compile --output, compile --outdir, graph --output ---------------------

/// `ordo compile`/`ordo graph` of a one-file manifest with `args`.
fn ordo_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut c = Command::new(ORDO);
    c.current_dir(dir).args(args).stdin(Stdio::null());
    run(c)
}

#[test]
fn compile_and_graph_outputs_are_never_written_through_a_link_or_blocked_on_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.pp"), "file { '/tmp/x': content => 'y' }\n").unwrap();
    std::fs::write(d.join("victim"), "precious").unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("link")).unwrap();
    mkfifo(&d.join("fifo"));
    let kind = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();
    for (cmd, flag) in [("compile", "--output"), ("graph", "--output")] {
        let attempt = |out: &str, want: i32, msg: &str| {
            let (code, _, err) = ordo_in(d, &[cmd, "m.pp", "--node", "n", flag, out]);
            assert_eq!(code, want, "{cmd} {out}: {err}");
            assert!(err.contains(msg), "{cmd} {out}: {err}");
        };
        // A link to a regular file: refused, the file and the link untouched.
        attempt(
            "link",
            1,
            "Could not write link: it is a symbolic link to a regular file",
        );
        assert_eq!(
            std::fs::read_to_string(d.join("victim")).unwrap(),
            "precious"
        );
        assert!(kind(&d.join("link")).is_symlink());
        // A FIFO without a reader: refused at once (the run helper fails on a hang).
        attempt("fifo", 1, "Could not write fifo: a FIFO with no reader");
        assert!(kind(&d.join("fifo")).is_fifo());
        // A device is written through, never replaced; a failing one fails the command.
        attempt("/dev/null", 0, "");
        assert!(kind(Path::new("/dev/null")).is_char_device());
        attempt("/dev/full", 1, "No space left on device");
        // A new file: complete and private, no temporary file beside it.
        let out = format!("{cmd}.out");
        let (code, _, err) = ordo_in(d, &[cmd, "m.pp", "--node", "n", flag, &out]);
        assert_eq!(code, 0, "{cmd}: {err}");
        let m = std::fs::metadata(d.join(&out)).unwrap();
        assert_eq!(m.permissions().mode() & 0o7777, 0o600, "{cmd}");
        assert!(std::fs::read_to_string(d.join(&out))
            .unwrap()
            .contains("/tmp/x"));
    }
    // --outdir: a planted link at a node's catalog is refused for that node only.
    std::fs::create_dir(d.join("nodes")).unwrap();
    std::fs::write(d.join("nodes/n1.json"), "{}").unwrap();
    std::fs::write(d.join("nodes/n2.json"), "{}").unwrap();
    std::fs::create_dir(d.join("out")).unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("out/n1.json")).unwrap();
    let (code, _, err) = ordo_in(
        d,
        &["compile", "m.pp", "--nodes", "nodes", "--outdir", "out"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("symbolic link to a regular file") && err.contains("(node n1)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("victim")).unwrap(),
        "precious"
    );
    assert!(std::fs::read_to_string(d.join("out/n2.json"))
        .unwrap()
        .contains("/tmp/x"));
    let names: Vec<String> = std::fs::read_dir(d.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".ordo-")), "{names:?}");
}

/// Mounts a tmpfs of `kib` KiB on `dir`; false (with the reason printed) where that is not
/// allowed (not root, no mount namespace), except under CI.
fn small_tmpfs(dir: &Path, kib: u32) -> bool {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    crate::common::prerequisite(ok, "mounting a small tmpfs (root)")
}

fn unmount(dir: &Path) {
    let _ = Command::new("umount").arg(dir).status();
}

#[test]
fn an_output_on_a_full_disk_fails_and_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let small = d.join("small");
    std::fs::create_dir(&small).unwrap();
    if !small_tmpfs(&small, 16) {
        return;
    }
    std::fs::write(small.join("out.json"), "old").unwrap();
    std::fs::write(small.join("fill"), vec![0u8; 12 * 1024]).unwrap();
    // A catalog far larger than the room left.
    let big = format!("file {{ '/tmp/x': content => '{}' }}\n", "a".repeat(20_000));
    std::fs::write(d.join("m.pp"), big).unwrap();
    let out = small.join("out.json");
    let (code, _, err) = ordo_in(
        d,
        &[
            "compile",
            "m.pp",
            "--node",
            "n",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    // The report of a run, too (the disk has no page left).
    let state = d.join("state");
    let msg = "m".repeat(100);
    let cat = write_catalog(
        d,
        "c.json",
        json!([{"type": "Notify", "title": "n", "parameters": {"message": msg}}]),
    );
    let (acode, _, aerr) = run(apply_cmd(
        &cat,
        &state,
        &["--report", out.to_str().unwrap()],
    ));
    let left: Vec<String> = std::fs::read_dir(&small)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let kept = std::fs::read_to_string(&out).unwrap();
    unmount(&small);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(acode, 1, "{aerr}");
    assert!(aerr.contains("Could not write the report"), "{aerr}");
    assert_eq!(kept, "old", "the old file is whole");
    assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
}

#[test]
fn a_directory_source_makes_a_directory() {
    // Puppet (`copy_source_values`): the file takes the source's type unless it is absent;
    // a directory source without `recurse` makes an empty directory, even over a file.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("inner"), "x").unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    std::fs::write(&c, "old").unwrap();
    let s = src.to_str().unwrap();
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([
            file(a.to_str().unwrap(), json!({"source": s})),
            file(
                b.to_str().unwrap(),
                json!({"ensure": "file", "source": s, "mode": "0700"})
            ),
            file(
                c.to_str().unwrap(),
                json!({"source": ["/nonexistent/ordo", s]})
            ),
        ]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("File[{}]/ensure: created", a.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "File[{}]/ensure: ensure changed 'file' to 'directory'",
            c.display()
        )),
        "{out}"
    );
    for p in [&a, &b, &c] {
        assert!(
            std::fs::symlink_metadata(p).unwrap().is_dir(),
            "{}",
            p.display()
        );
        assert_eq!(std::fs::read_dir(p).unwrap().count(), 0);
    }
    assert_eq!(
        std::fs::metadata(&b).unwrap().permissions().mode() & 0o7777,
        0o700
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &["--detailed-exitcodes"]));
    assert_eq!(code, 0, "a second run changes nothing: {out}{err}");
}

#[test]
fn a_socket_as_an_output_is_named_a_socket() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let sock = dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let cat = write_catalog(dir.path(), "c.json", json!([]));
    let (code, _, err) = run(apply_cmd(
        &cat,
        &state,
        &["--report", sock.to_str().unwrap()],
    ));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("it is a socket, which cannot be opened for writing"),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(&sock)
        .unwrap()
        .file_type()
        .is_socket());
}

#[test]
fn what_an_ensure_change_replaces_is_backed_up_first() {
    // Puppet 7.23 (`remove_existing`), same catalog: a file replaced by a directory or a link
    // is kept as `.bak`; a FIFO cannot be kept: "Could not back up file of type fifo".
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (d, l, f) = (
        dir.path().join("d"),
        dir.path().join("l"),
        dir.path().join("f"),
    );
    std::fs::write(&d, "keep d").unwrap();
    std::fs::write(&l, "keep l").unwrap();
    mkfifo(&f);
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([
            file(
                d.to_str().unwrap(),
                json!({"ensure": "directory", "backup": ".bak"})
            ),
            file(
                l.to_str().unwrap(),
                json!({"ensure": "link", "target": "/tmp", "backup": ".bak"})
            ),
            file(
                f.to_str().unwrap(),
                json!({"ensure": "file", "content": "x", "backup": ".bak"})
            ),
        ]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d.bak")).unwrap(),
        "keep d"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("l.bak")).unwrap(),
        "keep l"
    );
    assert!(std::fs::symlink_metadata(&d).unwrap().is_dir());
    assert!(std::fs::symlink_metadata(&l)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        out.contains(&format!(
            "File[{}]: Could not back up file of type fifo",
            f.display()
        )),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "x");
    assert!(!dir.path().join("f.bak").exists());
}

#[test]
fn a_file_size_limit_fails_the_write_not_the_process() {
    // `ulimit -f`: SIGXFSZ would kill ordo mid-run (leaving a temporary file); the write
    // that passes the limit fails with EFBIG instead, and the command fails cleanly.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = "m".repeat(3000);
    let managed = d.join("managed");
    std::fs::write(
        d.join("m.pp"),
        format!("notify {{ 'n': message => '{big}' }}\n"),
    )
    .unwrap();
    write_catalog(
        d,
        "c.json",
        json!([file(managed.to_str().unwrap(), json!({"content": big}))]),
    );
    let limited = |args: &str| {
        let mut c = Command::new("sh");
        c.current_dir(d)
            .arg("-c")
            .arg(format!("ulimit -f 1; exec \"$0\" {args}"))
            .arg(ORDO)
            .stdin(Stdio::null());
        run(c)
    };
    let (code, _, err) = limited("compile m.pp --node n -o c.out");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("Could not write c.out: File too large"),
        "{err}"
    );
    let (code, out, err) =
        limited("apply c.json --state-dir state --report r.json --detailed-exitcodes");
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        err.contains(&format!(
            "Could not write {}: File too large",
            managed.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("Could not write the report: Could not write r.json: File too large"),
        "{err}"
    );
    assert!(!managed.exists());
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.contains(".ordo-") && n != "c.out" && n != "r.json"),
        "{names:?}"
    );
}

#[test]
fn a_killed_writes_temporary_file_is_removed_by_the_next_write_of_that_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cat = write_catalog(d, "c.json", json!([]));
    // A dead writer's (no pid is that high), a live one's (pid 1), another path's.
    for n in [
        ".r.json.ordo-999999999-0",
        ".r.json.ordo-1-0",
        ".other.ordo-999999999-0",
    ] {
        std::fs::write(d.join(n), "partial").unwrap();
    }
    let (code, _, err) = run(apply_cmd(
        &cat,
        &d.join("state"),
        &["--report", d.join("r.json").to_str().unwrap()],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(!d.join(".r.json.ordo-999999999-0").exists());
    assert!(d.join(".r.json.ordo-1-0").exists());
    assert!(d.join(".other.ordo-999999999-0").exists());
}

#[test]
fn a_signal_ends_a_run_blocked_on_writing_its_report() {
    // A FIFO whose reader never reads: the report write blocks once the pipe is full. The
    // walk is over, so SIGTERM ends the process at once (exit by the signal), as it would
    // end `puppet apply > fifo`.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.fifo");
    mkfifo(&fifo);
    let big = "m".repeat(200_000);
    let cat = write_catalog(
        dir.path(),
        "c.json",
        json!([{"type": "Notify", "title": "n", "parameters": {"message": big}}]),
    );
    // Read-write, so opening does not wait for a writer; never read.
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let mut c = apply_cmd(
        &cat,
        &dir.path().join("state"),
        &["--report", fifo.to_str().unwrap()],
    );
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the report write should be blocked"
    );
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("SIGTERM did not end a run blocked on its report");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(child.wait().unwrap().signal(), Some(15));
}

#[test]
fn a_restore_never_replaces_a_link_or_a_special_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state");
    let f = d.join("f");
    std::fs::write(&f, "old").unwrap();
    let cat = write_catalog(
        d,
        "c.json",
        json!([file(
            f.to_str().unwrap(),
            json!({"content": "new", "backup": "puppet"})
        )]),
    );
    let (code, out, err) = run(apply_cmd(&cat, &state, &[]));
    assert_eq!(code, 0, "{out}{err}");
    std::fs::write(d.join("victim"), "precious").unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("link")).unwrap();
    mkfifo(&d.join("fifo"));
    let restore = |dest: &str| {
        let mut c = Command::new(ORDO);
        c.args(["bucket", "--state-dir", state.to_str().unwrap(), "restore"])
            .arg(&f)
            .arg(d.join(dest));
        run(c)
    };
    for (dest, kind) in [("link", "link"), ("fifo", "fifo")] {
        let (code, _, err) = restore(dest);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(&format!("it is a {kind}; not replacing it")),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("victim")).unwrap(),
        "precious"
    );
    assert!(std::fs::symlink_metadata(d.join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::symlink_metadata(d.join("fifo"))
        .unwrap()
        .file_type()
        .is_fifo());
    let (code, _, err) = restore("new");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(d.join("new")).unwrap(), "old");
}

#[test]
fn signals_end_a_run_whose_stdout_and_stderr_are_stuck() {
    // Both streams a FIFO nobody reads: the walk blocks on its log. The note of each signal
    // must not block the signal thread on that same stderr (it did: the second and third
    // signals were never seen, and the run hung for ever); the third signal ends the run.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    let notes: Vec<_> = (0..200)
        .map(|i| json!({"type": "Notify", "title": format!("n{i}"), "parameters": {"message": "m".repeat(10_000)}}))
        .collect();
    let cat = write_catalog(dir.path(), "c.json", json!(notes));
    let stuck = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let mut c = apply_cmd(&cat, &dir.path().join("state"), &[]);
    let mut child = c
        .stdout(stuck.try_clone().unwrap())
        .stderr(stuck)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the log should be blocked"
    );
    for _ in 0..3 {
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        std::thread::sleep(Duration::from_millis(300));
    }
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("three SIGTERMs did not end a run blocked on its log");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(child.wait().unwrap().signal(), Some(15));
}
