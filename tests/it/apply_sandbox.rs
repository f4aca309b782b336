//! The runner against real files and real processes, in temporary directories.

use ordo::apply::log::LogLine;
use ordo::apply::{apply, ApplyOptions, RunResult};
use ordo::catalog::Catalog;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A catalog of the given resources, all contained in Class[main].
fn catalog(resources: Value) -> Catalog {
    serde_json::from_value(crate::common::catalog_json(resources)).unwrap()
}

fn opts(dir: &Path) -> ApplyOptions {
    ApplyOptions {
        bucket_dir: dir.join(".bucket"),
        ..ApplyOptions::default()
    }
}

fn run(c: &Catalog, o: &ApplyOptions) -> (RunResult, Vec<String>) {
    let mut lines = Vec::new();
    let r = apply(c, o, &mut |l: &LogLine| lines.push(l.puppet()));
    (r, lines)
}

/// Everything observable in a directory: each path with its kind, mode and content.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let key = p.strip_prefix(dir).unwrap().display().to_string();
            let val = if m.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&p).unwrap().display())
            } else if m.is_dir() {
                stack.push(p.clone());
                format!("dir {:o}", m.permissions().mode())
            } else {
                format!(
                    "file {:o} {:?}",
                    m.permissions().mode(),
                    std::fs::read(&p).unwrap()
                )
            };
            out.insert(key, val);
        }
    }
    out
}

fn files_catalog(d: &Path) -> Catalog {
    let p = |s: &str| d.join(s).display().to_string();
    catalog(json!([
        {"type": "File", "title": p("conf"), "parameters": {"ensure": "directory", "mode": "0750"}},
        {"type": "File", "title": p("conf/app.ini"), "parameters": {"ensure": "file", "content": "a=1\n", "mode": "0640"}},
        {"type": "File", "title": p("link"), "parameters": {"ensure": "link", "target": p("conf/app.ini")}},
        {"type": "File", "title": p("old"), "parameters": {"ensure": "absent"}},
        {"type": "Exec", "title": "log", "parameters": {"command": format!("echo run >> {}", p("trace")), "provider": "shell", "refreshonly": true, "subscribe": format!("File[{}]", p("conf/app.ini"))}},
    ]))
}

#[test]
fn converges_then_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("old"), "bye").unwrap();
    let c = files_catalog(d);
    let (r, lines) = run(&c, &opts(d));
    assert_eq!(r.exit_code(true), 2, "{lines:#?}");
    let ini = d.join("conf/app.ini");
    assert_eq!(std::fs::read_to_string(&ini).unwrap(), "a=1\n");
    assert_eq!(
        std::fs::metadata(&ini).unwrap().permissions().mode() & 0o7777,
        0o640
    );
    assert_eq!(
        std::fs::metadata(d.join("conf"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o750
    );
    assert_eq!(std::fs::read_link(d.join("link")).unwrap(), ini);
    assert!(!d.join("old").exists());
    assert_eq!(std::fs::read_to_string(d.join("trace")).unwrap(), "run\n");
    let ini_line = format!(
        "Notice: /Stage[main]/Main/File[{}]/ensure: defined content as '{{sha256}}{}'",
        ini.display(),
        ordo::graph::digest::hex(&ordo::graph::digest::sha256(b"a=1\n"))
    );
    assert!(lines.contains(&ini_line), "{lines:#?}");
    assert!(lines.contains(
        &"Notice: /Stage[main]/Main/Exec[log]: Triggered 'refresh' from 1 event".to_string()
    ));
    // The directory is created before the file in it (auto-require), whatever the order.
    let pos = |s: &str| lines.iter().position(|l| l.contains(s)).unwrap();
    assert!(pos("conf]/ensure: created") < pos("app.ini]/ensure"));

    let before = snapshot(d);
    let (r2, lines2) = run(&c, &opts(d));
    assert_eq!(
        r2.exit_code(true),
        0,
        "second run must change nothing: {lines2:#?}"
    );
    assert!(lines2.is_empty(), "{lines2:#?}");
    assert_eq!(before, snapshot(d));
}

#[test]
fn noop_changes_nothing_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("old"), "bye").unwrap();
    let before = snapshot(d);
    let c = files_catalog(d);
    let o = ApplyOptions {
        noop: true,
        ..opts(d)
    };
    let (r, lines) = run(&c, &o);
    assert_eq!(before, snapshot(d), "noop touched the sandbox");
    assert_eq!(r.exit_code(true), 0);
    assert_eq!(r.report.summary.noop, 4, "{lines:#?}");
    assert!(lines
        .iter()
        .any(|l| l.ends_with("ensure: current_value 'absent', should be 'directory' (noop)")));
    assert!(lines
        .iter()
        .any(|l| l.ends_with("Exec[log]: Would have triggered 'refresh' from 1 event")));
}

#[test]
fn content_change_is_backed_up_and_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = d.join("f");
    std::fs::write(&f, "old\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let c = catalog(json!([
        {"type": "File", "title": f.display().to_string(), "parameters": {"content": "new\n", "backup": "puppet"}},
        {"type": "File", "title": d.join("g").display().to_string(), "parameters": {"content": "x", "backup": ".orig", "replace": false}},
        {"type": "File", "title": d.join("h").display().to_string(), "parameters": {"content": "new", "backup": ".orig"}},
    ]));
    std::fs::write(d.join("g"), "keep").unwrap();
    std::fs::write(d.join("h"), "old").unwrap();
    let (r, lines) = run(&c, &opts(d));
    assert_eq!(r.exit_code(true), 2, "{lines:#?}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
    // The mode of a replaced file is kept when the catalog does not say otherwise.
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    let sum = ordo::graph::digest::hex(&ordo::graph::digest::sha256(b"old\n"));
    assert_eq!(
        std::fs::read_to_string(d.join(".bucket").join(&sum).join("contents")).unwrap(),
        "old\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("g")).unwrap(),
        "keep",
        "replace => false"
    );
    assert_eq!(std::fs::read_to_string(d.join("h.orig")).unwrap(), "old");
    assert!(lines
        .iter()
        .any(|l| l.contains("content: content changed '{sha256}")));
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().contains(".ordo-")),
        "{names:?}"
    );
}

#[test]
fn sources_from_a_module_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("modules/web/files")).unwrap();
    std::fs::write(d.join("modules/web/files/index.html"), "hi\n").unwrap();
    let c = catalog(json!([
        {"type": "File", "title": d.join("index.html").display().to_string(), "parameters": {"ensure": "file", "source": "puppet:///modules/web/index.html"}},
        {"type": "File", "title": d.join("missing").display().to_string(), "parameters": {"ensure": "file", "source": ["puppet:///modules/web/nope", "/nonexistent/x"]}},
    ]));
    let o = ApplyOptions {
        modulepath: vec![d.join("modules")],
        ..opts(d)
    };
    let (r, lines) = run(&c, &o);
    assert_eq!(
        std::fs::read_to_string(d.join("index.html")).unwrap(),
        "hi\n"
    );
    assert_eq!(r.exit_code(true), 6);
    assert!(lines.iter().any(|l| l.ends_with(
        "Could not evaluate: Could not retrieve information from environment production source(s) puppet:///modules/web/nope, file:///nonexistent/x"
    )), "{lines:#?}");
}

#[test]
fn failures_skip_dependents_transitively() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = catalog(json!([
        {"type": "File", "title": d.join("no/such/dir/f").display().to_string(), "parameters": {"content": "x"}},
        {"type": "Notify", "title": "child", "parameters": {"require": format!("File[{}]", d.join("no/such/dir/f").display())}},
        {"type": "Notify", "title": "grandchild", "parameters": {"require": "Notify[child]"}},
        {"type": "Notify", "title": "free"},
    ]));
    let (r, lines) = run(&c, &opts(d));
    assert_eq!(r.exit_code(true), 6);
    assert_eq!(r.report.summary.skipped, 2);
    let dep = lines
        .iter()
        .filter(|l| l.contains("has failures: true"))
        .count();
    assert_eq!(
        dep, 1,
        "the dependency notice is logged once per failure: {lines:#?}"
    );
    assert!(lines.contains(
        &"Warning: /Stage[main]/Main/Notify[grandchild]: Skipping because of failed dependencies"
            .to_string()
    ));
    assert!(lines.contains(&"Notice: free".to_string()));
}

#[test]
fn exec_checks_and_behaviours() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.join("trace").display().to_string();
    std::fs::write(d.join("exists"), "").unwrap();
    let c = catalog(json!([
        {"type": "Exec", "title": "creates", "parameters": {"command": format!("echo creates >> {t}"), "provider": "shell", "creates": d.join("exists").display().to_string()}},
        {"type": "Exec", "title": "onlyif-false", "parameters": {"command": format!("echo onlyif >> {t}"), "provider": "shell", "onlyif": "/bin/false"}},
        {"type": "Exec", "title": "unless-true", "parameters": {"command": format!("echo unless >> {t}"), "provider": "shell", "unless": ["/bin/true"]}},
        {"type": "Exec", "title": "env-cwd", "parameters": {"command": format!("echo $GREETING $(pwd) >> {t}"), "provider": "shell", "environment": ["GREETING=hello"], "cwd": d.display().to_string()}},
        {"type": "Exec", "title": "argv", "parameters": {"command": "printf %s-%s a b", "path": ["/usr/bin", "/bin"], "logoutput": true}},
        {"type": "Exec", "title": "returns", "parameters": {"command": "/bin/sh -c 'exit 3'", "returns": [0, 3]}},
        {"type": "Exec", "title": "tries", "parameters": {"command": format!("echo try >> {t}; exit 1"), "provider": "shell", "tries": 3, "try_sleep": 0}},
        {"type": "Exec", "title": "timeout", "parameters": {"command": "sleep 20", "provider": "shell", "timeout": 1}},
        {"type": "Exec", "title": "umask", "parameters": {"command": format!("umask >> {t}"), "provider": "shell", "umask": "0077"}},
        {"type": "Exec", "title": "refresh-cmd", "parameters": {"command": format!("echo command >> {t}"), "refresh": format!("echo refresh >> {t}"), "provider": "shell", "refreshonly": true, "subscribe": "Exec[env-cwd]"}},
        {"type": "Exec", "title": "guarded-refresh", "parameters": {"command": format!("echo guarded >> {t}"), "provider": "shell", "refreshonly": true, "unless": "/bin/true", "subscribe": "Exec[env-cwd]"}},
    ]));
    let (r, lines) = run(&c, &opts(d));
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    assert_eq!(
        trace,
        format!(
            "hello {}\ntry\ntry\ntry\n0077\nrefresh\n",
            d.canonicalize().unwrap().display()
        ),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&"Notice: /Stage[main]/Main/Exec[argv]/returns: a-b".to_string()),
        "{lines:#?}"
    );
    assert!(lines.contains(&format!(
        "Error: 'echo try >> {t}; exit 1' returned 1 instead of one of [0]"
    )));
    assert!(
        lines.contains(&"Error: Command exceeded timeout".to_string()),
        "{lines:#?}"
    );
    assert!(lines.contains(
        &"Notice: /Stage[main]/Main/Exec[returns]/returns: executed successfully".to_string()
    ));
    // The unless guard keeps the command from running, but the refresh is still reported.
    assert!(lines.contains(
        &"Notice: /Stage[main]/Main/Exec[guarded-refresh]: Triggered 'refresh' from 1 event"
            .to_string()
    ));
    assert_eq!(r.exit_code(true), 6);
}

#[test]
fn jobs_keep_order_constraints_and_a_deterministic_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.join("trace").display().to_string();
    let mut rs = Vec::new();
    for i in 0..6 {
        rs.push(json!({"type": "Exec", "title": format!("e{i}"), "parameters": {"command": format!("sleep 0.2; echo e{i} >> {t}"), "provider": "shell"}}));
    }
    rs.push(json!({"type": "Exec", "title": "last", "parameters": {"command": format!("echo last >> {t}"), "provider": "shell", "require": ["Exec[e0]", "Exec[e5]"]}}));
    let c = catalog(Value::Array(rs));
    let o = ApplyOptions { jobs: 3, ..opts(d) };
    let start = std::time::Instant::now();
    let (r1, l1) = run(&c, &o);
    let elapsed = start.elapsed();
    assert_eq!(r1.exit_code(true), 2);
    assert!(
        elapsed.as_secs_f64() < 1.1,
        "3 jobs should overlap the sleeps: {elapsed:?}"
    );
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    assert_eq!(trace.lines().last(), Some("last"));
    std::fs::remove_file(d.join("trace")).unwrap();
    let (_, l2) = run(&c, &o);
    assert_eq!(l1, l2, "the log must not depend on timing");
}

#[test]
fn report_json_describes_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = catalog(json!([
        {"type": "Notify", "title": "hello"},
        {"type": "Exec", "title": "fail", "parameters": {"command": "/bin/false"}},
        {"type": "Notify", "title": "after", "parameters": {"require": "Exec[fail]"}},
    ]));
    let (r, _) = run(&c, &opts(d));
    let v: Value = serde_json::from_str(&r.report.to_json()).unwrap();
    assert_eq!(v["summary"]["changed"], 1);
    assert_eq!(v["summary"]["failed"], 1);
    assert_eq!(v["summary"]["skipped"], 1);
    let statuses: Vec<&str> = v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["changed", "failed", "skipped"]);
    assert_eq!(v["resources"][1]["events"][0]["status"], "failure");
}

#[test]
fn sensitive_values_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("secret");
    std::fs::write(&f, "old-secret").unwrap();
    let mut c = catalog(json!([
        {"type": "File", "title": f.display().to_string(), "parameters": {"content": "new-secret", "backup": false}},
    ]));
    c.resources[2].sensitive_parameters = vec!["content".into()];
    let (_, lines) = run(&c, &opts(dir.path()));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "new-secret");
    assert_eq!(
        lines,
        [format!(
            "Notice: /Stage[main]/Main/File[{}]/content: changed [redacted] to [redacted]",
            f.display()
        )]
    );
}
