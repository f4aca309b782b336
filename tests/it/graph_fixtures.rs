//! Tests as data: `fixtures/apply/err/*.json` are catalogs Ordo must refuse, with the
//! expected log (Puppet's lines), exit status and `ordo check` diagnostics beside them;
//! `fixtures/graph/*.json` are catalogs whose apply order (under each ordering) and
//! relationship edges (with their origins) are written beside them.
//! `UPDATE_EXPECT=1 cargo test` rewrites the `.expected` files; review the diff.

use crate::common;

use ordo::apply::log::LogLine;
use ordo::apply::{apply, ApplyOptions};
use ordo::catalog::Catalog;
use ordo::graph::cycles::describe_origin;
use ordo::graph::{order, Graph, Ordering, Vertex};
use std::path::{Path, PathBuf};

fn fixtures(dir: &str) -> Vec<PathBuf> {
    common::fixture_files(dir, "json")
}

fn load(p: &Path) -> Catalog {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn check_expect(p: &Path, actual: &str) {
    if let Err(problem) = common::compare(&p.with_extension("expected"), actual) {
        panic!("fixture {}: {problem}", p.display());
    }
}

#[test]
fn refused_catalogs() {
    for p in fixtures("apply/err") {
        let catalog = load(&p);
        let mut lines = Vec::new();
        let opts = ApplyOptions {
            bucket_dir: std::env::temp_dir().join("ordo-test-bucket"),
            puppet_messages: true,
            ..ApplyOptions::default()
        };
        let result = apply(&catalog, &opts, &mut |l: &LogLine| lines.push(l.puppet()));
        assert!(result.refused, "{} must be refused", p.display());
        let mut out = lines.join("\n");
        out.push_str(&format!(
            "\nexit: {}\n-- check --\n",
            result.exit_code(true)
        ));
        for d in ordo::cli::graph::check_catalog(&catalog) {
            out.push_str(&format!("{:?} {}: {}\n", d.severity, d.code, d.message));
            for n in &d.notes {
                out.push_str(&format!("  note: {n}\n"));
            }
        }
        check_expect(&p, &out);
    }
}

fn names(g: &Graph, vs: &[Vertex]) -> String {
    vs.iter()
        .filter(|v| !v.is_anchor())
        .map(|v| g.name(*v))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn graphs_and_orders() {
    for p in fixtures("graph") {
        let catalog = load(&p);
        let mut out = String::new();
        for (label, ordering) in [
            ("manifest", Ordering::Manifest),
            ("title-hash", Ordering::TitleHash),
            ("random:1", Ordering::Random(1)),
        ] {
            let g = Graph::build(&catalog, ordering);
            assert!(g.errors.is_empty(), "{}: {:?}", p.display(), g.errors);
            out.push_str(&format!(
                "order {label}: {}\n",
                names(&g, &order::apply_order(&g))
            ));
        }
        let g = Graph::build(&catalog, Ordering::Manifest);
        out.push_str("relationships:\n");
        for r in &g.relations {
            let (s, t) = (Vertex::Resource(r.source), Vertex::Resource(r.target));
            out.push_str(&format!(
                "  {} -> {}{}: {}\n",
                g.name(s),
                g.name(t),
                if r.refresh { " (refresh)" } else { "" },
                describe_origin(&g, &r.origin, s, t)
            ));
        }
        out.push_str("paths:\n");
        for (n, node) in g.nodes.iter().enumerate() {
            if !node.container {
                out.push_str(&format!("  {}\n", g.path(n)));
            }
        }
        check_expect(&p, &out);
    }
}
