//! `ordo explain A B`: why (or whether) one resource is applied before another.

use super::cycles::describe_edge;
use super::{Graph, Vertex};
use petgraph::Direction;
use std::collections::{HashMap, VecDeque};

/// The vertex that stands for a node when looking for paths: containers start at their
/// admissible anchor and end at their completed anchor.
fn entry(g: &Graph, n: usize) -> Vertex {
    if g.nodes[n].container {
        Vertex::Admissible(n)
    } else {
        Vertex::Resource(n)
    }
}

fn exit(g: &Graph, n: usize) -> Vertex {
    if g.nodes[n].container {
        Vertex::Completed(n)
    } else {
        Vertex::Resource(n)
    }
}

/// Shortest path of edges from `from` to `to` in the expanded graph.
pub fn path(g: &Graph, from: Vertex, to: Vertex) -> Option<Vec<Vertex>> {
    let mut prev: HashMap<Vertex, Vertex> = HashMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(v) = queue.pop_front() {
        if v == to {
            let mut p = vec![to];
            let mut cur = to;
            while let Some(&b) = prev.get(&cur) {
                p.push(b);
                cur = b;
                if cur == from {
                    break;
                }
            }
            p.reverse();
            return Some(p);
        }
        for w in g.adjacent(v, Direction::Outgoing) {
            if w != from && !prev.contains_key(&w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    None
}

/// Lines explaining the relative order of nodes `a` and `b`.
pub fn explain(g: &Graph, a: usize, b: usize) -> Vec<String> {
    explain_with(g, a, b, &|s, t| describe_edge(g, s, t))
}

/// [`explain`] with the words for each edge given by `describe` (the checker knows more about
/// where edges come from when it has the manifest).
pub fn explain_with(
    g: &Graph,
    a: usize,
    b: usize,
    describe: &dyn Fn(Vertex, Vertex) -> String,
) -> Vec<String> {
    let (ra, rb) = (&g.nodes[a].reference, &g.nodes[b].reference);
    for (x, y, rx, ry) in [(a, b, ra, rb), (b, a, rb, ra)] {
        if let Some(p) = path(g, exit(g, x), entry(g, y)) {
            let mut lines = vec![format!("{rx} is applied before {ry}:")];
            for w in p.windows(2) {
                lines.push(format!(
                    "  {} => {}: {}",
                    g.name(w[0]),
                    g.name(w[1]),
                    describe(w[0], w[1])
                ));
            }
            return lines;
        }
    }
    let first = if g.priority[a] <= g.priority[b] {
        (ra, rb)
    } else {
        (rb, ra)
    };
    vec![format!(
        "no relationship orders {ra} and {rb}; {} comes first by priority (catalog order unless --ordering says otherwise)",
        first.0
    ), format!("  then {}", first.1)]
}
