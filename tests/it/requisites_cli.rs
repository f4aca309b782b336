//! Ordo's extension metaparameters end to end: the command line (`--failhard`,
//! `--report-format salt`, `--ordering alphanumeric`, `check --puppet-compatible`), refusals,
//! and the graph order of the Rudder example under both orderings.

use crate::common;
use common::ordo;

use ordo::apply::log::LogLine;
use ordo::apply::{apply, ApplyOptions};
use ordo::catalog::Catalog;
use ordo::graph::order::apply_order;
use ordo::graph::requisites;
use ordo::graph::{Ordering, Vertex};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/requisites")
        .join(name)
        .join("catalog.json")
}

/// A fixture catalog with `@DIR@` replaced, written into `dir`.
fn fixture_in(name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture(name))
        .unwrap()
        .replace("@DIR@", dir.to_str().unwrap());
    let p = dir.join("catalog.json");
    std::fs::write(&p, text).unwrap();
    p
}

fn catalog(resources: Value) -> Catalog {
    let mut rs = vec![
        json!({"type": "Stage", "title": "main"}),
        json!({"type": "Class", "title": "main"}),
    ];
    let mut edges = vec![json!({"source": "Stage[main]", "target": "Class[main]"})];
    for r in resources.as_array().unwrap() {
        edges.push(json!({"source": "Class[main]", "target": format!("{}[{}]", r["type"].as_str().unwrap(), r["title"].as_str().unwrap())}));
        rs.push(r.clone());
    }
    serde_json::from_value(json!({"resources": rs, "edges": edges})).unwrap()
}

fn run(c: &Catalog, opts: &ApplyOptions) -> (ordo::apply::RunResult, Vec<String>) {
    let mut lines = Vec::new();
    let r = apply(c, opts, &mut |l: &LogLine| lines.push(l.puppet()));
    (r, lines)
}

fn opts(dir: &Path) -> ApplyOptions {
    ApplyOptions {
        bucket_dir: dir.join(".bucket"),
        ..ApplyOptions::default()
    }
}

#[test]
fn salt_report_on_stdout_and_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture_in("onfail", dir.path());
    let bucket = dir.path().join("b");
    let (code, out, err) = ordo(&[
        "apply",
        cat.to_str().unwrap(),
        "--report-format",
        "salt",
        "--bucket-dir",
        bucket.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    // The log goes to stderr, the return to stdout.
    assert!(err.contains("Exec[backup_mount]"), "{err}");
    let ret: Value = serde_json::from_str(&out).unwrap();
    let states = ret["local"].as_object().unwrap();
    assert_eq!(states.len(), 7);
    let backup = states
        .values()
        .find(|s| s["__id__"] == "backup_mount")
        .unwrap();
    assert_eq!(backup["result"], json!(true));
    assert_eq!(backup["__run_num__"], json!(1));
    let healthy = states
        .values()
        .find(|s| s["__id__"] == "healthy_backup")
        .unwrap();
    assert_eq!(healthy["changes"], json!({}));
    assert!(healthy["comment"].as_str().unwrap().contains("onfail"));
    let report = dir.path().join("report.json");
    let (_, out, _) = ordo(&[
        "apply",
        cat.to_str().unwrap(),
        "--report-format",
        "salt",
        "--report",
        report.to_str().unwrap(),
        "--log-format",
        "puppet",
        "--bucket-dir",
        bucket.to_str().unwrap(),
    ]);
    assert!(out.contains("Notice: /Stage[main]/Main/Exec[backup_mount]/returns"));
    let ret: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let want = format!(
        "exec_|-primary_mount_|-sh -c 'echo primary >> {}/trace; exit 1'_|-apply",
        dir.path().display()
    );
    assert!(
        ret["local"].as_object().unwrap().contains_key(&want),
        "{ret}"
    );
}

#[test]
fn failhard_flag_and_alphanumeric_ordering() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture_in("failhard-global", dir.path());
    let bucket = dir.path().join("b");
    let b = bucket.to_str().unwrap();
    let (code, out, _) = ordo(&[
        "apply",
        cat.to_str().unwrap(),
        "--failhard",
        "--log-format",
        "puppet",
        "--bucket-dir",
        b,
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("Exec[fatal] failed with failhard set"),
        "{out}"
    );
    assert!(!out.contains("Exec[never]"), "{out}");
    // Without --failhard the run goes on.
    let (_, out, _) = ordo(&[
        "apply",
        cat.to_str().unwrap(),
        "--log-format",
        "puppet",
        "--bucket-dir",
        b,
    ]);
    assert!(
        out.contains("Exec[never]/returns: executed successfully"),
        "{out}"
    );
    let cat = fixture_in("rudder-worked-example", dir.path());
    let (code, out, _) = ordo(&[
        "apply",
        cat.to_str().unwrap(),
        "--ordering",
        "alphanumeric",
        "--log-format",
        "puppet",
        "--bucket-dir",
        b,
    ]);
    assert_eq!(code, 0);
    let order: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("Notice: ").filter(|m| !m.starts_with('/')))
        .filter(|m| !m.starts_with("Applied catalog in "))
        .collect();
    assert_eq!(
        order,
        ["C: C1", "C: C2", "A: A1", "A: A2", "B: B2", "B: B1"]
    );
    let (code, _, err) = ordo(&["apply", cat.to_str().unwrap(), "--ordering", "sideways"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("alphanumeric"), "{err}");
}

#[test]
fn check_puppet_compatible_flags_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture_in("puppet-relationships", dir.path());
    let (code, _, err) = ordo(&["check", cat.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = ordo(&[
        "check",
        cat.to_str().unwrap(),
        "--puppet-compatible",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let _ = err;
    let (_, out, _) = ordo(&[
        "check",
        cat.to_str().unwrap(),
        "--puppet-compatible",
        "--format",
        "json",
    ]);
    let diags: Value = serde_json::from_str(&out).unwrap();
    let messages: Vec<&str> = diags
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "puppet-incompatible")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    for p in ["watch", "onfail", "onchanges", "listen"] {
        assert!(
            messages.iter().any(|m| m.contains(&format!("'{p}'"))),
            "{p} not flagged: {messages:?}"
        );
    }
    // Puppet's own metaparameters are not flagged, nor exec's onlyif/unless.
    assert!(!messages
        .iter()
        .any(|m| m.contains("'require'") || m.contains("'before'") || m.contains("'subscribe'")));
    let (_, out, _) = ordo(&[
        "check",
        fixture_in("unless", dir.path()).to_str().unwrap(),
        "--puppet-compatible",
        "--format",
        "json",
    ]);
    let diags: Value = serde_json::from_str(&out).unwrap();
    let flagged: Vec<&str> = diags
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(flagged.len(), 2, "{flagged:?}");
    assert!(flagged.iter().all(|m| m.contains("File[")));
}

#[test]
fn rudder_example_order_under_both_orderings() {
    let c: Catalog =
        serde_json::from_str(&std::fs::read_to_string(fixture("rudder-worked-example")).unwrap())
            .unwrap();
    let order = |o: Ordering| -> Vec<String> {
        let (_, g) = requisites::build(&c, o);
        apply_order(&g)
            .into_iter()
            .filter_map(|v| match v {
                Vertex::Resource(n) if !g.nodes[n].container => {
                    Some(g.nodes[n].reference.title.clone())
                }
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        order(Ordering::Alphanumeric),
        ["C: C1", "C: C2", "A: A1", "A: A2", "B: B2", "B: B1"]
    );
    // Manifest order follows the declarations (R2 first).
    assert_eq!(
        order(Ordering::Manifest),
        ["A: A2", "B: B1", "C: C2", "A: A1", "B: B2", "C: C1"]
    );
}

#[test]
fn equal_priority_ties_and_priority_in_technique_order() {
    // One technique (Notify, plain resources); priority 0 goes first, then (class, title).
    let c = catalog(json!([
        {"type": "Notify", "title": "b"},
        {"type": "Notify", "title": "a"},
        {"type": "Notify", "title": "z", "parameters": {"priority": 0}},
        {"type": "Exec", "title": "/bin/true", "parameters": {"priority": "10"}},
    ]));
    let (_, g) = requisites::build(&c, Ordering::Alphanumeric);
    assert!(g.errors.is_empty());
    let names: Vec<String> = apply_order(&g)
        .into_iter()
        .filter(|v| !v.is_anchor() && !g.nodes[v.node()].container)
        .map(|v| g.nodes[v.node()].reference.to_string())
        .collect();
    // Techniques by (class, title) of their first directive: Exec's is (main, /bin/true),
    // Notify's (main, z) after priority sorting.
    assert_eq!(
        names,
        ["Exec[/bin/true]", "Notify[z]", "Notify[a]", "Notify[b]"]
    );
}

#[test]
fn refusals_name_the_requisite() {
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(json!([
        {"type": "Notify", "title": "a", "parameters": {"watch_in": "Service[missing]"}},
        {"type": "Notify", "title": "b", "parameters": {"onfail": "Exec[missing]"}},
        {"type": "Notify", "title": "c", "parameters": {"retry": "often", "order": "soon", "priority": 42}},
        {"type": "Notify", "title": "d", "parameters": {"use": "Notify[nope]"}},
    ]));
    let (r, lines) = run(&c, &opts(dir.path()));
    assert!(r.refused);
    let text = lines.join("\n");
    for want in [
        "Could not find dependent Service[missing] for Notify[a]",
        "Could not find dependency Exec[missing] for Notify[b]",
        "Could not find dependency Notify[nope] for Notify[d]",
        "Invalid value \"often\" for retry on Notify[c]",
        "Invalid value \"soon\" for order on Notify[c]",
        "Invalid value 42 for priority on Notify[c]",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn prereq_against_require_is_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(json!([
        {"type": "Notify", "title": "a", "parameters": {"prereq": "Notify[b]"}},
        {"type": "Notify", "title": "b", "parameters": {"before": "Notify[a]"}},
    ]));
    let (r, lines) = run(&c, &opts(dir.path()));
    assert!(r.refused);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Error: dependency cycle: Notify[")),
        "{lines:#?}"
    );
}

#[test]
fn requisites_with_parallel_jobs_give_the_same_outcome() {
    let text = std::fs::read_to_string(fixture("onfail")).unwrap();
    let mut logs = Vec::new();
    for jobs in [1, 4, 4] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let c: Catalog = serde_json::from_str(&text.replace("@DIR@", d)).unwrap();
        let (r, lines) = run(
            &c,
            &ApplyOptions {
                jobs,
                ..opts(dir.path())
            },
        );
        assert!(!r.refused);
        let trace = std::fs::read_to_string(dir.path().join("trace")).unwrap();
        let mut sorted = lines.clone();
        sorted.sort();
        logs.push((
            lines.join("\n").replace(d, "@DIR@"),
            sorted.join("\n").replace(d, "@DIR@"),
            trace.lines().count(),
        ));
    }
    // Batches change the order of independent resources, never what happens; the same jobs
    // give the same log.
    assert_eq!(logs[0].1, logs[1].1);
    assert_eq!(logs[0].2, logs[1].2);
    assert_eq!(logs[1], logs[2]);
}

#[test]
fn glob_with_no_match_is_a_missing_dependency_and_exact_titles_win() {
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(json!([
        {"type": "Notify", "title": "x*", "parameters": {}},
        {"type": "Notify", "title": "xa", "parameters": {}},
        {"type": "Notify", "title": "w", "parameters": {"require": "Notify[x*]"}},
    ]));
    let (_, g) = requisites::build(&c, Ordering::Manifest);
    assert!(g.errors.is_empty());
    let w = g.find(&c, "Notify[w]").unwrap();
    let xs = g.find(&c, "Notify[x*]").unwrap();
    let xa = g.find(&c, "Notify[xa]").unwrap();
    assert!(g.has_relation(xs, w));
    assert!(!g.has_relation(xa, w), "an exact title is not a glob");
    let c = catalog(json!([
        {"type": "Notify", "title": "w", "parameters": {"watch": "File[/nowhere/*]"}},
    ]));
    let (r, lines) = run(&c, &opts(dir.path()));
    assert!(r.refused);
    assert!(lines[0].contains("Could not find dependency File[/nowhere/*] for Notify[w]"));
}
