//! Dependency cycles as diagnostics: the path (`dependency cycle: A => B => A`)
//! and, for each edge of the cycle, where it comes from (metaparameter, chaining arrow,
//! `require` or `contain` call, automatic relationship, containment), as a note with
//! `file:line` and a label at its source. Containment plumbing (anchors) is folded away.

use super::locate::Locator;
use crate::diagnostics::Diagnostic;
use crate::graph::cycles::{describe_edge, find_cycles, path_names, Step};
use crate::graph::{Graph, Origin, Vertex};
use crate::span::{SourceMap, Span};

/// One error per cycle.
pub fn diagnostics(g: &Graph, loc: &Locator, sources: &SourceMap) -> Vec<Diagnostic> {
    let cycles = find_cycles(g);
    let n = cycles.len();
    let mut out = Vec::new();
    for (k, c) in cycles.iter().enumerate() {
        let path = path_names(g, &c.path).join(" => ");
        let message = if n == 1 {
            format!("dependency cycle: {path}")
        } else {
            format!("dependency cycle {} of {n}: {path}", k + 1)
        };
        let mut d = Diagnostic::error("cycle", message);
        for step in crate::graph::cycles::steps(g, c) {
            let (text, label) = describe(g, loc, step);
            let at = label
                .as_ref()
                .and_then(|(span, _)| short_location(sources, *span))
                .or_else(|| fallback_location(g, step))
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            d = d.with_note(format!("{text}{at}"));
            if let Some((span, message)) = label {
                d = d.with_label(span, message);
            }
        }
        d = d.with_help(
            "remove or reverse one of these relationships; `ordo explain FILE A B` shows why one resource comes before another",
        );
        out.push(d);
    }
    out
}

/// `x.pp:3`.
pub fn short_location(sources: &SourceMap, span: Span) -> Option<String> {
    let f = sources.get(span.file)?;
    Some(format!("{}:{}", f.name, f.line_of(span.start as usize)))
}

/// One edge in words with where it was written, e.g. `chaining arrow Notify[a] -> Notify[b]
/// (site.pp:3)` (for `ordo explain`).
pub fn edge_words(g: &Graph, loc: &Locator, sources: &SourceMap, s: Vertex, t: Vertex) -> String {
    let step = Step::Edge { from: s, to: t };
    let (text, label) = describe(g, loc, step);
    let at = label
        .and_then(|(span, _)| short_location(sources, span))
        .or_else(|| fallback_location(g, step))
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    // `describe` starts with `A => B: `, which `explain` already prints.
    let words = text.split_once(": ").map_or(text.as_str(), |(_, w)| w);
    format!("{words}{at}")
}

/// The `file:line` of the node an edge was written on, when no span is known.
fn fallback_location(g: &Graph, step: Step) -> Option<String> {
    let (from, to) = match step {
        Step::Edge { from, to } | Step::Containment { from, to, .. } => (from, to),
    };
    if let Step::Edge { .. } = step {
        if let Some(Origin::Metaparam { on, .. }) = first_origin(g, from, to) {
            return g.nodes[on].short_location();
        }
    }
    g.nodes[to.node()].short_location()
}

fn first_origin(g: &Graph, s: Vertex, t: Vertex) -> Option<Origin> {
    let labels = g.labels_between(s, t);
    labels
        .iter()
        .find(|l| !matches!(l.origin, Origin::Containment { .. }))
        .or(labels.first())
        .map(|l| l.origin)
}

/// The step in words (without location) and its label, when its source is known.
fn describe(g: &Graph, loc: &Locator, step: Step) -> (String, Option<(Span, String)>) {
    match step {
        Step::Containment { from, to, inside } => {
            let (a, b) = (g.name(from), g.name(to));
            let rel = if inside { "is inside" } else { "contains" };
            let text = format!("{a} => {b}: containment ({a} {rel} {b})");
            // The contained node of the run, and the container right above it.
            let (inner, outer) = if inside { (from, to) } else { (to, from) };
            let inner_ref = &g.nodes[inner.node()].reference;
            let outer_ref = &g.nodes[outer.node()].reference;
            let label = match contain_call(g, loc, outer.node(), inner.node()) {
                Some((span, from, class)) => Some((span, format!("{from} contains {class}"))),
                None => loc
                    .resource(inner_ref)
                    .map(|span| (span, format!("{inner_ref} is declared inside {outer_ref}"))),
            };
            (text, label)
        }
        Step::Edge { from, to } => {
            let (a, b) = (g.name(from), g.name(to));
            let (ra, rb) = (
                &g.nodes[from.node()].reference,
                &g.nodes[to.node()].reference,
            );
            match first_origin(g, from, to) {
                Some(Origin::Metaparam { param, on }) => {
                    let param = param.name();
                    let on_ref = &g.nodes[on].reference;
                    if on == from.node() && matches!(param, "before" | "notify") {
                        if let Some(span) = loc.arrow(ra, rb, param == "notify") {
                            let arrow = if param == "notify" { "~>" } else { "->" };
                            return (
                                format!("{a} => {b}: chaining arrow {ra} {arrow} {rb}"),
                                Some((span, format!("{ra} {arrow} {rb}"))),
                            );
                        }
                    }
                    if on == to.node() && param == "require" {
                        if let Some(span) = loc.call("require", Some(on_ref), ra) {
                            return (
                                format!("{a} => {b}: require call in {on_ref}"),
                                Some((span, format!("{on_ref} requires {ra}"))),
                            );
                        }
                    }
                    let other = if on == from.node() { rb } else { ra };
                    let text = format!("{a} => {b}: {param} => {other} on {on_ref}");
                    let label = match loc.param(on_ref, param) {
                        Some(span) => Some((span, format!("{param} => {other}"))),
                        None => loc
                            .resource(on_ref)
                            .map(|span| (span, format!("{on_ref} has {param} => {other}"))),
                    };
                    (text, label)
                }
                Some(Origin::Auto { rule }) => {
                    let text = format!("{a} => {b}: automatic relationship ({rule})");
                    let label = loc
                        .resource(rb)
                        .map(|span| (span, format!("{rb} autorequires {ra}")));
                    (text, label)
                }
                _ => (format!("{a} => {b}: {}", describe_edge(g, from, to)), None),
            }
        }
    }
}

/// Is `to` `from` or inside it (following containment down)?
fn contains(g: &Graph, from: usize, to: usize) -> bool {
    let mut seen = vec![false; g.nodes.len()];
    let mut todo = vec![from];
    while let Some(n) = todo.pop() {
        if n == to {
            return true;
        }
        if !std::mem::replace(&mut seen[n], true) {
            todo.extend(g.children[n].iter().copied());
        }
    }
    false
}

/// A `contain` call between `outer` and `inner`: it made the containment a cycle runs through.
fn contain_call(
    g: &Graph,
    loc: &Locator,
    outer: usize,
    inner: usize,
) -> Option<(Span, String, String)> {
    let node = |r: &crate::catalog::ResourceRef| g.nodes.iter().position(|n| n.reference == *r);
    loc.calls().iter().find_map(|c| {
        let (from, class) = (node(&c.from)?, node(&c.class)?);
        (c.function == "contain" && contains(g, outer, from) && contains(g, class, inner))
            .then(|| (c.span, c.from.to_string(), c.class.to_string()))
    })
}
