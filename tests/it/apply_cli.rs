//! The catalog subcommands end to end (the binary), and the graph stage over the real-world
//! catalogs Puppet compiled for the corpus.

use crate::common;
use common::ordo;

use std::path::{Path, PathBuf};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(p)
}

fn write_catalog(dir: &Path, resources: serde_json::Value) -> PathBuf {
    let mut rs = vec![
        serde_json::json!({"type": "Stage", "title": "main", "kind": "compilable_type"}),
        serde_json::json!({"type": "Class", "title": "main", "kind": "unknown"}),
    ];
    let mut edges = vec![serde_json::json!({"source": "Stage[main]", "target": "Class[main]"})];
    for r in resources.as_array().unwrap() {
        edges.push(serde_json::json!({"source": "Class[main]", "target": format!("{}[{}]", r["type"].as_str().unwrap(), r["title"].as_str().unwrap())}));
        let mut r = r.clone();
        r["kind"] = "compilable_type".into();
        rs.push(r);
    }
    let p = dir.join("catalog.json");
    std::fs::write(
        &p,
        serde_json::json!({"resources": rs, "edges": edges}).to_string(),
    )
    .unwrap();
    p
}

/// `ordo apply CATALOG --detailed-exitcodes --log-format puppet`: exit code, stdout, stderr.
fn apply_puppet_log(catalog: &str, bucket: &str) -> (i32, String, String) {
    ordo(&[
        "apply",
        catalog,
        "--detailed-exitcodes",
        "--log-format",
        "puppet",
        "--node",
        "x",
        "--bucket-dir",
        bucket,
    ])
}

#[test]
fn apply_exit_codes_and_formats() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = dir.path().join("bucket");
    let bucket = bucket.to_str().unwrap();
    let cat = write_catalog(
        dir.path(),
        serde_json::json!([{"type": "Notify", "title": "hi"}]),
    );
    let cat = cat.to_str().unwrap();
    let (code, out, _) = apply_puppet_log(cat, bucket);
    assert_eq!(code, 2);
    assert_eq!(
        out,
        "Notice: hi\nNotice: /Stage[main]/Main/Notify[hi]/message: defined 'message' as 'hi'\n"
    );
    let (code, out, _) = ordo(&[
        "apply",
        cat,
        "--noop",
        "--detailed-exitcodes",
        "--bucket-dir",
        bucket,
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("notice: Notify[hi] message: current_value 'absent', should be 'hi' (noop)"),
        "{out}"
    );
    assert!(out.contains("1 would change"), "{out}");
    let report = dir.path().join("report.json");
    let (code, _, _) = ordo(&[
        "apply",
        cat,
        "--report",
        report.to_str().unwrap(),
        "--bucket-dir",
        bucket,
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(v["summary"]["changed"], 1);
    assert_eq!(v["logs"][0]["message"], "hi");
    // A refused catalog exits 1 and applies nothing.
    let cycle = fixture("apply/err/cycle-two.json");
    let (code, out, _) = ordo(&[
        "apply",
        cycle.to_str().unwrap(),
        "--detailed-exitcodes",
        "--log-format",
        "puppet",
    ]);
    assert_eq!(code, 1);
    assert!(!out.contains("Notice:"), "{out}");
    let (code, out, _) = ordo(&["apply", "/nonexistent/catalog.json"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn check_graph_explain() {
    let dir = tempfile::tempdir().unwrap();
    let cycle = fixture("apply/err/missing-dependency.json");
    let (code, out, _) = ordo(&["check", cycle.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["code"], "missing-dependency");
    let ok = fixture("graph/priority.json");
    assert_eq!(ordo(&["check", ok.to_str().unwrap()]).0, 0);
    let warn = fixture("graph/containers.json");
    let (code, _, err) = ordo(&["check", warn.to_str().unwrap(), "--deny-warnings"]);
    assert_eq!((code, err.contains("0 warning")), (0, true), "{err}");
    let dot = dir.path().join("g.dot");
    let (code, _, _) = ordo(&[
        "graph",
        ok.to_str().unwrap(),
        "--kind",
        "expanded",
        "-o",
        dot.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&dot).unwrap();
    assert!(text.starts_with("digraph Expanded_relationships {"));
    assert!(
        text.contains("\"Notify[three]\" -> \"Notify[one]\""),
        "{text}"
    );
    assert!(
        text.contains("\"Admissible_Class[Main]\" -> \"Notify[one]\""),
        "{text}"
    );
    let (code, out, _) = ordo(&[
        "explain",
        ok.to_str().unwrap(),
        "Notify[one]",
        "notify[three]",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "Notify[three] is applied before Notify[one]:\n  Notify[three] => Notify[one]: before => Notify[one] on Notify[three] (site.pp:3)\n"
    );
    let (_, out, _) = ordo(&[
        "explain",
        ok.to_str().unwrap(),
        "Notify[two]",
        "Notify[four]",
    ]);
    assert!(
        out.starts_with(
            "no relationship orders Notify[two] and Notify[four]; Notify[two] comes first"
        ),
        "{out}"
    );
}

/// Every catalog Puppet compiled for the real-world corpus builds a graph without missing
/// dependencies, bad edges or cycles (unsupported resource types are expected there).
#[test]
fn corpus_catalogs_have_sound_graphs() {
    let Some(dir) = common::shared("corpus/compile-truth") else {
        return;
    };
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).expect("the shared corpus is present") {
        let p = e.unwrap().path().join("catalog.json");
        if !p.exists() {
            continue;
        }
        let catalog = ordo::cli::load_catalog(&p).unwrap();
        let g = ordo::graph::Graph::build(&catalog, ordo::graph::Ordering::Manifest);
        assert!(g.errors.is_empty(), "{}: {:?}", p.display(), g.errors);
        assert!(
            ordo::graph::cycles::find_cycles(&g).is_empty(),
            "{}",
            p.display()
        );
        let order = ordo::graph::order::apply_order(&g);
        assert_eq!(
            order.len(),
            g.vertices().len(),
            "{}: not every vertex is reached",
            p.display()
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} corpus catalogs found");
}

#[test]
fn services_users_groups_packages_in_safe_ways() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("trace");
    let t = t.to_str().unwrap();
    let cat = write_catalog(
        dir.path(),
        serde_json::json!([
            // Status, start and restart overrides: a fake service driven by shell commands.
            {"type": "Service", "title": "fake", "parameters": {"ensure": "running", "status": "/bin/false", "start": format!("echo start >> {t}"), "restart": format!("echo restart >> {t}"), "provider": "base"}},
            {"type": "Service", "title": "up", "parameters": {"ensure": "running", "status": "/bin/true", "restart": format!("echo restart-up >> {t}"), "provider": "base", "subscribe": "Notify[n]"}},
            {"type": "Notify", "title": "n"},
            {"type": "User", "title": "root", "parameters": {"ensure": "present", "uid": "0"}},
            {"type": "Group", "title": "root", "parameters": {"ensure": "present", "gid": "0"}},
        ]),
    );
    let (code, out, _) = ordo(&[
        "apply",
        cat.to_str().unwrap(),
        "--detailed-exitcodes",
        "--log-format",
        "puppet",
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(
            "Notice: /Stage[main]/Main/Service[fake]/ensure: ensure changed 'stopped' to 'running'"
        ),
        "{out}"
    );
    assert!(
        out.contains("Notice: /Stage[main]/Main/Service[up]: Triggered 'refresh' from 1 event"),
        "{out}"
    );
    assert!(
        !out.contains("User[root]") && !out.contains("Group[root]"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(t).unwrap(), "start\nrestart-up\n");
    // Noop only: a user, a group and a package that do not exist would be created.
    let cat = write_catalog(
        dir.path(),
        serde_json::json!([
            {"type": "User", "title": "ordo-test-no-such-user", "parameters": {"ensure": "present"}},
            {"type": "Group", "title": "ordo-test-no-such-group", "parameters": {"ensure": "present"}},
            {"type": "Package", "title": "ordo-test-no-such-package", "parameters": {"ensure": "installed"}},
        ]),
    );
    let (code, out, _) = ordo(&[
        "apply",
        cat.to_str().unwrap(),
        "--noop",
        "--detailed-exitcodes",
        "--log-format",
        "puppet",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("User[ordo-test-no-such-user]/ensure: current_value 'absent', should be 'present' (noop)"), "{out}");
    assert!(out.contains("Group[ordo-test-no-such-group]/ensure: current_value 'absent', should be 'present' (noop)"), "{out}");
    assert!(out.contains("Package[ordo-test-no-such-package]/ensure: current_value 'purged', should be 'installed' (noop)"), "{out}");
}

/// `exec { user => ... }` is resolved when the command runs, as Puppet does (the user may be
/// one the same run creates): a user that does not exist fails that exec with Puppet's
/// messages, its dependents are skipped, and the rest of the catalog is applied.
#[test]
fn exec_as_a_missing_user_fails_at_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = dir.path().join("bucket");
    let marker = dir.path().join("applied");
    let cat = write_catalog(
        dir.path(),
        serde_json::json!([
            {"type": "Exec", "title": "build",
             "parameters": {"command": "/bin/true", "user": "ordo-no-such-user-42"}},
            {"type": "Notify", "title": "after", "parameters": {"require": "Exec[build]"}},
            {"type": "File", "title": marker.to_str().unwrap(),
             "parameters": {"ensure": "file", "content": "x"}},
        ]),
    );
    let (code, out, err) = apply_puppet_log(cat.to_str().unwrap(), bucket.to_str().unwrap());
    let all = format!("{out}{err}");
    if !rustix::process::geteuid().is_root() {
        // As Puppet: only root may run commands as another user (refused before applying).
        assert_eq!(code, 1, "{all}");
        assert!(
            all.contains("Only root can execute commands as other users"),
            "{all}"
        );
        assert!(!marker.exists());
        return;
    }
    // Changes (the file) and failures: 2 | 4.
    assert_eq!(code, 6, "{all}");
    for line in [
        "Notice: /Stage[main]/Main/Exec[build]/returns: Error: Could not execute posix command: Invalid user: ordo-no-such-user-42",
        "Error: /Stage[main]/Main/Exec[build]/returns: change from 'notrun' to ['0'] failed: '/bin/true' returned 1 instead of one of [0]",
        "Notice: /Stage[main]/Main/Notify[after]: Dependency Exec[build] has failures: true",
        "Warning: /Stage[main]/Main/Notify[after]: Skipping because of failed dependencies",
    ] {
        assert!(all.contains(line), "missing {line:?} in:\n{all}");
    }
    assert!(
        marker.exists(),
        "the rest of the catalog is applied:\n{all}"
    );
}
