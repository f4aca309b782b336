//! Warnings about refresh events: sent where nothing can act on them, or awaited where
//! nothing sends them.

use super::locate::Locator;
use crate::catalog::Catalog;
use crate::diagnostics::Diagnostic;
use crate::fxhash::FxHashSet as FastSet;
use crate::graph::{Graph, Origin, Vertex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde_json::Value as Json;
use std::collections::HashSet;

/// Notifying relationships whose target cannot refresh: the events are silently dropped.
/// `refreshable` says, for each node, whether its provider refreshes (`None`: a container or
/// a resource Ordo cannot manage).
pub fn refresh_ignored(
    graph: &Graph,
    refreshable: &[Option<bool>],
    loc: &Locator,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen = FastSet::default();
    for rel in &graph.relations {
        if !rel.refresh {
            continue;
        }
        let target = &graph.nodes[rel.target];
        // Unsupported targets are reported as errors already. (Whether to warn depends on
        // the target alone: the set of pairs warned about is asked only then, not for the
        // many notifications that reach something that refreshes.)
        if target.container
            || refreshable[rel.target] != Some(false)
            || !seen.insert((rel.source, rel.target))
        {
            continue;
        }
        let source = &graph.nodes[rel.source].reference;
        let mut d = Diagnostic::warning(
            "refresh-ignored",
            format!(
                "{source} notifies {}, which does not refresh: the events are ignored",
                target.reference
            ),
        );
        if let Origin::Metaparam { on, param } = rel.origin {
            let param = param.name();
            let on_ref = &graph.nodes[on].reference;
            let other = if on == rel.source {
                &target.reference
            } else {
                source
            };
            let span = if on == rel.source && param == "notify" {
                loc.arrow(source, &target.reference, true)
            } else {
                None
            }
            .or_else(|| loc.param(on_ref, param));
            match span {
                Some(span) => d = d.with_label(span, format!("{param} => {other}")),
                None => {
                    if let Some(l) = graph.nodes[on].short_location() {
                        d = d.with_note(format!("relationship declared at {l}"));
                    }
                }
            }
        }
        out.push(d);
    }
    out
}

fn is_true(v: Option<&Json>) -> bool {
    match v {
        Some(Json::Bool(b)) => *b,
        Some(Json::String(s)) => s == "true",
        _ => false,
    }
}

/// `refreshonly` execs that no notifying relationship reaches: they never run.
///
/// Events reach a resource along notifying edges, including the ones a container forwards to
/// its contents (`~> Class[x]` refreshes the resources of `x`). Walking back from the exec over
/// notifying edges, it is notified when one of them is not containment plumbing.
pub fn refreshonly_unnotified(catalog: &Catalog, graph: &Graph, loc: &Locator) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (n, node) in graph.nodes.iter().enumerate() {
        let Some(i) = node.index else { continue };
        let r = &catalog.resources[i];
        if node.container
            || !r.type_name.eq_ignore_ascii_case("exec")
            || !is_true(r.parameters.get("refreshonly"))
        {
            continue;
        }
        if notified(graph, Vertex::Resource(n)) {
            continue;
        }
        let mut d = Diagnostic::warning(
            "refreshonly-unnotified",
            format!(
                "{} is refreshonly but nothing notifies it: it will never run",
                node.reference
            ),
        )
        .with_help(
            "add `subscribe => ...` to it, or `notify => ...` (or `~>`) on what should trigger it",
        );
        match loc
            .param(&node.reference, "refreshonly")
            .or_else(|| loc.resource(&node.reference))
        {
            Some(span) => d = d.with_label(span, "refreshonly, and no event can reach it"),
            None => {
                if let Some(l) = node.short_location() {
                    d = d.with_note(format!("declared at {l}"));
                }
            }
        }
        out.push(d);
    }
    out
}

fn notified(graph: &Graph, v: Vertex) -> bool {
    let mut seen = HashSet::from([v]);
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        let Some(ix) = graph.index_of(v) else {
            continue;
        };
        for e in graph.expanded.edges_directed(ix, Direction::Incoming) {
            if !e.weight().refresh {
                continue;
            }
            if !matches!(e.weight().origin, Origin::Containment { .. }) {
                return true;
            }
            let from = graph.expanded[e.source()];
            // Only events entering a container flow down to its contents.
            if matches!(from, Vertex::Admissible(_)) && seen.insert(from) {
                todo.push(from);
            }
        }
    }
    false
}
