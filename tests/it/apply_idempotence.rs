//! A second apply of the same manifest changes nothing, for every provider: through the real
//! binary, with real files, commands, packages, users and groups kept in temporary
//! directories (`--sysroot` for users, groups and dpkg packages, so this machine's own
//! databases are never touched).
//!
//! Each test: the first apply changes things (`--detailed-exitcodes` exit 2) and converges
//! what it describes; the second exits 0, logs no change and its report counts none.

use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

struct Run {
    code: i32,
    lines: Vec<String>,
    report: Value,
}

/// `ordo apply MANIFEST --detailed-exitcodes --log-format puppet`, with the state, bucket and
/// report in `dir`.
fn apply(dir: &Path, manifest: &Path, extra: &[&str]) -> Run {
    let report = dir.join("report.json");
    let out = Command::new(ORDO)
        .arg("apply")
        .arg(manifest)
        .args([
            "--detailed-exitcodes",
            "--log-format",
            "puppet",
            "--state-dir",
        ])
        .arg(dir.join("state"))
        .arg("--report")
        .arg(&report)
        .args(extra)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().is_empty(),
        "stderr: {stderr}\nstdout: {stdout}"
    );
    Run {
        code: out.status.code().unwrap_or(-1),
        lines: stdout.lines().map(str::to_string).collect(),
        report: serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap(),
    }
}

/// Applies `manifest` twice: the first run must change `changed` resources (exit 2), the
/// second nothing (exit 0, no change line, no changed resource in the report). Returns the
/// first run's log.
fn twice(dir: &Path, manifest: &str, changed: usize, extra: &[&str]) -> Vec<String> {
    let path = dir.join("site.pp");
    std::fs::write(&path, manifest).unwrap();
    let first = apply(dir, &path, extra);
    assert_eq!(first.code, 2, "first run: {:#?}", first.lines);
    assert_eq!(
        first.report["summary"]["changed"], changed,
        "first run: {:#?}",
        first.lines
    );
    assert_eq!(first.report["summary"]["failed"], 0, "{:#?}", first.lines);
    let second = apply(dir, &path, extra);
    assert_eq!(
        second.code, 0,
        "second run must change nothing: {:#?}",
        second.lines
    );
    // Every change (and every failure) is logged under its resource's path; nothing else
    // may be said about a resource either.
    let about_resources: Vec<_> = second
        .lines
        .iter()
        .filter(|l| l.contains("/Stage[main]/"))
        .collect();
    assert!(about_resources.is_empty(), "{about_resources:#?}");
    let s = &second.report["summary"];
    assert_eq!(
        (&s["changed"], &s["failed"], &s["changes"]),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{s}"
    );
    first.lines
}

fn changed(lines: &[String], resource: &str, what: &str) -> bool {
    lines
        .iter()
        .any(|l| l.starts_with("Notice: ") && l.contains(resource) && l.contains(what))
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok() == Some(0)
}

fn which(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
        .unwrap_or(false)
}

#[test]
fn file_every_ensure_content_source_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = d.join("root");
    std::fs::create_dir(&r).unwrap();
    // What the first run finds: a file to remove, a file with other content, a file with
    // another mode, a link pointing elsewhere, a source on disk and one in a module.
    std::fs::write(r.join("gone"), "bye\n").unwrap();
    std::fs::write(r.join("stale"), "old\n").unwrap();
    std::fs::write(r.join("loose"), "keep\n").unwrap();
    std::fs::set_permissions(r.join("loose"), std::fs::Permissions::from_mode(0o666)).unwrap();
    std::os::unix::fs::symlink("/nowhere", r.join("moved")).unwrap();
    std::fs::write(d.join("source.txt"), "from a source\n").unwrap();
    let module_files = d.join("modules/m/files");
    std::fs::create_dir_all(&module_files).unwrap();
    std::fs::write(module_files.join("conf"), "from a module\n").unwrap();
    let r_s = r.display();
    let d_s = d.display();
    let manifest = format!(
        r#"
file {{ '{r_s}/dir': ensure => directory, mode => '0750' }}
file {{ '{r_s}/dir/file': ensure => file, content => "hello\n", mode => '0640' }}
file {{ '{r_s}/present': ensure => present }}
file {{ '{r_s}/link': ensure => link, target => '{r_s}/dir/file' }}
file {{ '{r_s}/moved': ensure => link, target => '{r_s}/dir' }}
file {{ '{r_s}/gone': ensure => absent }}
file {{ '{r_s}/never': ensure => absent }}
file {{ '{r_s}/stale': content => "new\n" }}
file {{ '{r_s}/loose': mode => '0600' }}
file {{ '{r_s}/copied': source => '{d_s}/source.txt', mode => '0444' }}
file {{ '{r_s}/from-module': source => 'puppet:///modules/m/conf' }}
"#
    );
    let modulepath = d.join("modules");
    let lines = twice(
        d,
        &manifest,
        10,
        &["--modulepath", modulepath.to_str().unwrap()],
    );
    assert_eq!(mode(&r.join("dir")), 0o750);
    assert_eq!(
        std::fs::read_to_string(r.join("dir/file")).unwrap(),
        "hello\n"
    );
    assert_eq!(mode(&r.join("dir/file")), 0o640);
    assert!(r.join("present").is_file());
    assert_eq!(
        std::fs::read_link(r.join("link")).unwrap(),
        r.join("dir/file")
    );
    assert_eq!(std::fs::read_link(r.join("moved")).unwrap(), r.join("dir"));
    assert!(!r.join("gone").exists() && !r.join("never").exists());
    assert_eq!(std::fs::read_to_string(r.join("stale")).unwrap(), "new\n");
    assert_eq!(std::fs::read_to_string(r.join("loose")).unwrap(), "keep\n");
    assert_eq!(mode(&r.join("loose")), 0o600);
    assert_eq!(
        std::fs::read_to_string(r.join("copied")).unwrap(),
        "from a source\n"
    );
    assert_eq!(mode(&r.join("copied")), 0o444);
    assert_eq!(
        std::fs::read_to_string(r.join("from-module")).unwrap(),
        "from a module\n"
    );
    assert!(changed(&lines, "File[", "content changed"), "{lines:#?}");
    assert!(changed(
        &lines,
        "/loose]/mode",
        "mode changed '0666' to '0600'"
    ));
    assert!(changed(&lines, "/gone]/ensure", "removed"));
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&r)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(ordo::apply::atomic::TEMP_MARK))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn exec_creates_unless_onlyif() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.display();
    let manifest = format!(
        r#"
exec {{ 'make': command => '/bin/sh -c "echo make >> {t}/trace; touch {t}/made"', creates => '{t}/made' }}
exec {{ 'guarded': command => '/bin/sh -c "echo guarded >> {t}/trace; touch {t}/flag"', unless => '/usr/bin/test -f {t}/flag' }}
exec {{ 'once': command => '/bin/sh -c "echo once >> {t}/trace; touch {t}/done"', onlyif => '/usr/bin/test ! -f {t}/done' }}
exec {{ 'never': command => '/bin/sh -c "echo never >> {t}/trace"', onlyif => '/bin/false' }}
exec {{ 'shell': command => "echo shell >> {t}/trace && touch {t}/sh", provider => shell, unless => "test -e {t}/sh" }}
"#
    );
    let lines = twice(d, &manifest, 4, &[]);
    assert!(changed(&lines, "Exec[make]", "executed successfully"));
    // Each command ran exactly once over the two runs, and the guarded-off one never.
    assert_eq!(
        std::fs::read_to_string(d.join("trace")).unwrap(),
        "make\nguarded\nonce\nshell\n"
    );
}

#[test]
fn service_with_its_own_start_stop_and_status_commands() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.display();
    // The "services" are files in the temporary directory; `web` is stopped, `old` runs.
    std::fs::write(d.join("old.running"), "").unwrap();
    let svc = |name: &str, ensure: &str| {
        format!(
            "service {{ '{name}': ensure => {ensure}, provider => base, \
             status => 'test -f {t}/{name}.running', \
             start => 'touch {t}/{name}.running; echo start-{name} >> {t}/trace', \
             stop => 'rm -f {t}/{name}.running; echo stop-{name} >> {t}/trace', \
             restart => 'echo restart-{name} >> {t}/trace' }}\n"
        )
    };
    let manifest = svc("web", "running") + &svc("old", "stopped");
    let lines = twice(d, &manifest, 2, &[]);
    assert!(changed(
        &lines,
        "Service[web]/ensure",
        "ensure changed 'stopped' to 'running'"
    ));
    assert!(changed(
        &lines,
        "Service[old]/ensure",
        "ensure changed 'running' to 'stopped'"
    ));
    assert!(d.join("web.running").exists() && !d.join("old.running").exists());
    assert_eq!(
        std::fs::read_to_string(d.join("trace")).unwrap(),
        "start-web\nstop-old\n"
    );
}

/// A minimal system for useradd and groupadd `--root`: its own passwd, group and shadow files.
fn user_root(d: &Path) -> PathBuf {
    let root = d.join("sysroot");
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    let files = [
        (
            "passwd",
            "root:x:0:0:root:/root:/bin/sh\nold:x:4400:4400::/home/old:/bin/sh\n",
        ),
        (
            "group",
            "root:x:0:\nold:x:4400:\nstale:x:4401:\nextra:x:4402:old\n",
        ),
        (
            "shadow",
            "root:*:19000:0:99999:7:::\nold:!:19000:0:99999:7:::\n",
        ),
        ("gshadow", "root:*::\nold:!::\nstale:!::\nextra:!::old\n"),
    ];
    for (name, text) in files {
        std::fs::write(etc.join(name), text).unwrap();
    }
    std::fs::set_permissions(etc.join("shadow"), std::fs::Permissions::from_mode(0o640)).unwrap();
    root
}

#[test]
fn user_and_group_under_a_sysroot() {
    if !is_root() || !which("useradd") && !Path::new("/usr/sbin/useradd").exists() {
        eprintln!("skipped: useradd --root needs root and the shadow utilities");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = user_root(d);
    let host_passwd = std::fs::read("/etc/passwd").unwrap();
    let host_group = std::fs::read("/etc/group").unwrap();
    let manifest = r#"
group { 'ordoapp': ensure => present, gid => 4321 }
group { 'ordoextra': ensure => present }
group { 'stale': ensure => absent }
group { 'extra': ensure => present, gid => 4500 }
user { 'ordoapp':
  ensure  => present,
  uid     => 4321,
  gid     => 'ordoapp',
  groups  => ['ordoextra'],
  home    => '/srv/ordoapp',
  shell   => '/bin/false',
  comment => 'Ordo test user',
  require => [Group['ordoapp'], Group['ordoextra']],
}
user { 'old': ensure => present, shell => '/bin/false', groups => ['ordoextra'], require => Group['ordoextra'] }
user { 'gone': ensure => absent }
"#;
    let lines = twice(d, manifest, 6, &["--sysroot", root.to_str().unwrap()]);
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).unwrap();
    assert!(
        passwd.contains("ordoapp:x:4321:4321:Ordo test user:/srv/ordoapp:/bin/false"),
        "{passwd}"
    );
    assert!(
        passwd.contains("old:x:4400:4400::/home/old:/bin/false"),
        "{passwd}"
    );
    let group = std::fs::read_to_string(root.join("etc/group")).unwrap();
    assert!(group.contains("ordoapp:x:4321:"), "{group}");
    assert!(!group.contains("stale:"), "{group}");
    assert!(group.contains("extra:x:4500:old"), "{group}");
    // `membership => minimum` (the default): old stays in `extra` and joins `ordoextra`.
    let ordoextra = group.lines().find(|l| l.starts_with("ordoextra:")).unwrap();
    assert!(
        ordoextra.ends_with(":ordoapp,old") || ordoextra.ends_with(":old,ordoapp"),
        "{ordoextra}"
    );
    assert!(changed(
        &lines,
        "User[old]/shell",
        "shell changed '/bin/sh' to '/bin/false'"
    ));
    assert!(changed(
        &lines,
        "Group[extra]/gid",
        "gid changed '4402' to '4500'"
    ));
    // This machine's own databases were not touched.
    assert_eq!(std::fs::read("/etc/passwd").unwrap(), host_passwd);
    assert_eq!(std::fs::read("/etc/group").unwrap(), host_group);
}

/// Builds a `.deb` (no maintainer scripts) named `name` at `version`, shipping one file.
fn deb(d: &Path, name: &str, version: &str) -> PathBuf {
    let tree = d.join(format!("build-{name}-{version}"));
    std::fs::create_dir_all(tree.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(tree.join(format!("usr/share/{name}"))).unwrap();
    std::fs::write(
        tree.join("DEBIAN/control"),
        format!(
            "Package: {name}\nVersion: {version}\nArchitecture: all\n\
             Maintainer: Ordo <ordo@example.com>\nDescription: Ordo test package\n"
        ),
    )
    .unwrap();
    std::fs::write(tree.join(format!("usr/share/{name}/version")), version).unwrap();
    let out = d.join(format!("{name}_{version}_all.deb"));
    let ok = Command::new("dpkg-deb")
        .args(["--build", "--root-owner-group"])
        .arg(&tree)
        .arg(&out)
        .output()
        .unwrap();
    assert!(ok.status.success(), "{ok:?}");
    out
}

fn dpkg_status(root: &Path, name: &str) -> String {
    let out = Command::new("dpkg-query")
        .arg(format!("--root={}", root.display()))
        .args(["-W", "--showformat", "${Status} ${Version}", name])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn dpkg_packages_under_a_sysroot() {
    if !is_root() || !which("dpkg") || !which("dpkg-deb") {
        eprintln!("skipped: dpkg --root needs root and dpkg");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = d.join("sysroot");
    let admin = root.join("var/lib/dpkg");
    std::fs::create_dir_all(admin.join("info")).unwrap();
    std::fs::create_dir_all(admin.join("updates")).unwrap();
    std::fs::write(admin.join("status"), "").unwrap();
    let a = deb(d, "ordo-idem-a", "1.0");
    let b = deb(d, "ordo-idem-b", "2.0");
    let old = deb(d, "ordo-idem-old", "0.1");
    let purged = deb(d, "ordo-idem-purged", "0.1");
    // Installed before the run: the two the manifest removes.
    for p in [&old, &purged] {
        let ok = Command::new("dpkg")
            .arg(format!("--root={}", root.display()))
            .arg("-i")
            .arg(p)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    }
    let manifest = format!(
        r#"
package {{ 'ordo-idem-a': ensure => installed, provider => dpkg, source => '{}' }}
package {{ 'ordo-idem-b': ensure => latest, provider => dpkg, source => '{}' }}
package {{ 'ordo-idem-old': ensure => absent, provider => dpkg }}
package {{ 'ordo-idem-purged': ensure => purged, provider => dpkg }}
"#,
        a.display(),
        b.display()
    );
    let lines = twice(d, &manifest, 4, &["--sysroot", root.to_str().unwrap()]);
    assert_eq!(
        dpkg_status(&root, "ordo-idem-a"),
        "install ok installed 1.0"
    );
    assert_eq!(
        dpkg_status(&root, "ordo-idem-b"),
        "install ok installed 2.0"
    );
    assert!(!dpkg_status(&root, "ordo-idem-old").contains("ok installed"));
    assert!(dpkg_status(&root, "ordo-idem-purged").is_empty());
    assert!(root.join("usr/share/ordo-idem-a/version").is_file());
    assert!(changed(&lines, "Package[ordo-idem-a]/ensure", "created"));
    assert!(changed(&lines, "Package[ordo-idem-old]/ensure", "removed"));
    // This machine's dpkg database knows nothing of them.
    assert!(dpkg_status(Path::new("/"), "ordo-idem-a").is_empty());
}
