//! Where `ordo compile` writes its catalog, through the real binary: a device that refuses
//! the catalog (a full disk) fails the command with a message; a reader that stops early
//! (`ordo compile site.pp | head`) does not.

use std::process::{Command, Stdio};

const SITE: &str = "file { '/tmp/x': ensure => file, content => 'x' }\nnotify { 'hello': }\n";

fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("site.pp"), SITE).unwrap();
    dir
}

fn ordo(dir: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ordo"));
    c.current_dir(dir).args(args);
    c
}

fn ordo_compile(dir: &std::path::Path) -> Command {
    ordo(dir, &["compile", "site.pp", "--node", "n"])
}

/// Runs `c` with standard output on /dev/full (every write fails with ENOSPC): its exit
/// code and standard error.
fn to_full_device(mut c: Command) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = c.stdout(Stdio::from(full)).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_full_standard_output_fails_the_compile() {
    let dir = site();
    let (code, stderr) = to_full_device(ordo_compile(dir.path()));
    assert_eq!(code, Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("Could not write to standard output")
            && stderr.contains("No space left on device"),
        "stderr: {stderr}"
    );
}

#[test]
fn a_full_output_file_fails_the_compile() {
    let dir = site();
    let out = ordo_compile(dir.path())
        .args(["-o", "/dev/full"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("Could not write /dev/full"),
        "stderr: {stderr}"
    );
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let dir = site();
    let mut child = ordo_compile(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reading end closes before the catalog is written: the write gets EPIPE.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("Error"), "stderr: {stderr}");
}

#[test]
fn a_written_catalog_is_complete_json() {
    let dir = site();
    let out = ordo_compile(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let catalog: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let titles: Vec<&str> = catalog["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["title"].as_str())
        .collect();
    assert!(
        titles.contains(&"/tmp/x") && titles.contains(&"hello"),
        "{titles:?}"
    );
}

#[test]
fn other_commands_fail_on_a_full_standard_output_too() {
    let dir = site();
    for args in [
        &["parse", "--dump", "pn", "site.pp"][..],
        &["graph", "site.pp", "--kind", "resources"][..],
    ] {
        let (code, stderr) = to_full_device(ordo(dir.path(), args));
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("Could not write to standard output"),
            "{args:?}: {stderr}"
        );
        // The same command writing to a pipe succeeds.
        let ok = ordo(dir.path(), args).output().unwrap();
        assert_eq!(ok.status.code(), Some(0), "{args:?}");
        assert!(!ok.stdout.is_empty(), "{args:?}");
    }
}
