//! `ordo compile --explain-priorities`: the conflicts the evaluator resolved by `priority`
//! and the merged order of every multi-instance technique (defined type), as
//! `--ordering alphanumeric` will apply them. Pure: catalog and conflicts in, text out.

use crate::catalog::{Catalog, ResourceKind};
use crate::eval::priority::{reason, PriorityConflict, DEFAULT_PRIORITY};
use crate::graph::placement::{containers_above, directive_and_class};
use crate::graph::requisites::priority_value;
use crate::graph::{Graph, Ordering};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One directive of a technique: (priority, class, title, location).
type Directive = (u8, String, String, String);

/// The report, one section after the other.
pub fn explain(catalog: &Catalog, conflicts: &[PriorityConflict]) -> String {
    let mut out = String::new();
    out.push_str("Conflicts resolved by priority (unique techniques: classes and resources):\n");
    if conflicts.is_empty() {
        out.push_str("  none\n");
    }
    for c in conflicts {
        let _ = writeln!(out, "  {}: kept {}", c.reference, c.winner.describe());
        for l in &c.losers {
            let _ = writeln!(
                out,
                "    dropped {}: {}",
                l.describe(),
                reason(&c.winner, l)
            );
        }
    }
    let techniques = merged_order(catalog);
    out.push_str(
        "Merged order of each multi-instance technique (defined type), by (priority, class, title):\n",
    );
    if techniques.is_empty() {
        out.push_str("  none\n");
    }
    let mut order: Vec<(&String, &String, &String)> = vec![];
    for (technique, directives) in &techniques {
        let shown: Vec<String> = directives
            .iter()
            .map(|(p, class, title, loc)| format!("{title} (priority {p}, class {class}, {loc})"))
            .collect();
        let _ = writeln!(out, "  {technique}: {}", shown.join(", "));
        let first = &directives[0];
        order.push((&first.1, &first.2, technique));
    }
    order.sort();
    if !order.is_empty() {
        out.push_str(
            "Technique order with --ordering alphanumeric (class, title of the first directive):\n",
        );
        for (k, (class, title, technique)) in order.iter().enumerate() {
            let _ = writeln!(out, "  {}. {technique} ({class}, {title})", k + 1);
        }
    }
    out
}

/// Every defined type's outermost instances, sorted as the runtime sorts them.
fn merged_order(catalog: &Catalog) -> BTreeMap<String, Vec<Directive>> {
    let g = Graph::build(catalog, Ordering::Alphanumeric);
    let up = containers_above(&g);
    let mut out: BTreeMap<String, Vec<Directive>> = BTreeMap::new();
    for (i, r) in catalog.resources.iter().enumerate() {
        if r.kind != Some(ResourceKind::DefinedType) {
            continue;
        }
        let n = g.node_of[i];
        let (directive, class) = directive_and_class(&g, &up, n);
        if directive != n {
            continue;
        }
        let class = class
            .map(|c| g.nodes[c].reference.title.to_ascii_lowercase())
            .unwrap_or_default();
        let priority = r
            .parameters
            .get("priority")
            .and_then(priority_value)
            .unwrap_or(DEFAULT_PRIORITY);
        let loc = g.nodes[n].short_location().unwrap_or_default();
        out.entry(r.type_name.clone())
            .or_default()
            .push((priority, class, r.title.clone(), loc));
    }
    for ds in out.values_mut() {
        ds.sort();
    }
    out
}
