//! The `schedule` metaparameter through the binary: catalog schedules and Puppet's defaults,
//! the check times kept in the state directory, a missing schedule refused before any change.

use std::path::Path;
use std::process::Command;

fn apply(manifest: &Path, state: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .arg("apply")
        .arg(manifest)
        .args([
            "--node",
            "n",
            "--detailed-exitcodes",
            "--log-format",
            "puppet",
        ])
        .arg("--state-dir")
        .arg(state)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_daily_schedule_applies_once_a_day_and_never_never() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let manifest = dir.path().join("site.pp");
    std::fs::write(
        &manifest,
        format!(
            "schedule {{ 'nightly': period => daily, repeat => 1 }}\n\
             file {{ '{r}/daily': ensure => file, content => \"d\\n\", schedule => 'nightly' }}\n\
             file {{ '{r}/never': ensure => file, content => \"n\\n\", schedule => 'never' }}\n\
             file {{ '{r}/always': ensure => file, content => \"a\\n\" }}\n",
            r = root.display()
        ),
    )
    .unwrap();
    let state = dir.path().join("state");
    let (code, log) = apply(&manifest, &state);
    assert_eq!(code, 2, "{log}");
    assert!(
        root.join("daily").exists() && root.join("always").exists(),
        "{log}"
    );
    assert!(!root.join("never").exists(), "{log}");
    // The check time is kept: within the day the scheduled file is not looked at again, so
    // removing it changes nothing until tomorrow; the unscheduled one is restored.
    std::fs::remove_file(root.join("daily")).unwrap();
    std::fs::remove_file(root.join("always")).unwrap();
    let (code, log) = apply(&manifest, &state);
    assert_eq!(code, 2, "{log}");
    assert!(root.join("always").exists(), "{log}");
    assert!(!root.join("daily").exists(), "{log}");
    let times: serde_json::Value =
        serde_json::from_slice(&std::fs::read(state.join("schedules.json")).unwrap()).unwrap();
    assert!(times
        .get(format!("File[{}/daily]", root.display()))
        .is_some());
}

#[test]
fn a_missing_schedule_refuses_the_catalog_before_any_change() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("first");
    let manifest = dir.path().join("site.pp");
    std::fs::write(
        &manifest,
        format!(
            "file {{ '{}': ensure => file }}\nnotify {{ 'b': schedule => 'nope' }}\n",
            target.display()
        ),
    )
    .unwrap();
    let (code, log) = apply(&manifest, &dir.path().join("state"));
    assert_eq!(code, 1, "{log}");
    assert!(log.contains("Error: Could not find schedule nope"), "{log}");
    assert!(!target.exists());
}

#[test]
fn a_bad_schedule_is_refused_with_puppets_message() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("site.pp");
    std::fs::write(
        &manifest,
        "schedule { 's': range => '25 - 3' }\nnotify { 'x': schedule => 's' }\n",
    )
    .unwrap();
    let (code, log) = apply(&manifest, &dir.path().join("state"));
    assert_eq!(code, 1, "{log}");
    assert!(log.contains("Schedule[s]: Invalid hour '25'"), "{log}");
}
