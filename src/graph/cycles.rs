//! Dependency cycles, found and reported as Puppet does (simple_graph.rb
//! `find_cycles_in_graph`, `paths_in_cycle`): strongly connected components, each
//! sorted by reference, the components sorted, then one shortest path (breadth first from the
//! component's first vertex) per component. Beyond Puppet, each edge of the path can be
//! explained with its origin, containment anchors folded away.

use super::{Graph, Origin, Vertex};
use crate::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use petgraph::Direction;
use std::collections::VecDeque;

/// One cycle: the vertices of a strongly connected component and a path through it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub members: Vec<Vertex>,
    /// Starts and ends with the same vertex.
    pub path: Vec<Vertex>,
}

pub fn find_cycles(g: &Graph) -> Vec<Cycle> {
    // Most graphs have no cycle: one pass over the edges shows it, without the components.
    if is_acyclic(&g.expanded) {
        return Vec::new();
    }
    // Kosaraju rather than petgraph's Tarjan: its Tarjan recurses once per vertex of a path
    // and overflowed the stack on a long dependency chain; Kosaraju's depth-first searches
    // keep their own stack. The components are the same, and sorted below anyway.
    let sccs = petgraph::algo::kosaraju_scc(&g.expanded);
    let mut comps: Vec<Vec<Vertex>> = sccs
        .into_iter()
        .filter(|c| c.len() > 1 || g.expanded.contains_edge(c[0], c[0]))
        .map(|c| {
            let mut vs: Vec<Vertex> = c.into_iter().map(|ix| g.expanded[ix]).collect();
            vs.sort_by_cached_key(|v| g.sort_key(*v));
            vs
        })
        .collect();
    comps.sort_by_cached_key(|c| c.iter().map(|v| g.sort_key(*v)).collect::<Vec<_>>());
    comps
        .into_iter()
        .map(|members| {
            let path = path_in_cycle(g, &members);
            Cycle { members, path }
        })
        .collect()
}

/// Whether the graph has no cycle (self-loops included), by Kahn's topological sort:
/// vertices without incoming edges are taken away until none is left. Linear, no recursion.
fn is_acyclic(g: &petgraph::stable_graph::StableDiGraph<Vertex, super::Label>) -> bool {
    use petgraph::visit::{EdgeRef, IntoEdgeReferences, NodeIndexable};
    let mut incoming = vec![0u32; g.node_bound()];
    for e in g.edge_references() {
        incoming[e.target().index()] += 1;
    }
    let mut ready: Vec<_> = g
        .node_indices()
        .filter(|n| incoming[n.index()] == 0)
        .collect();
    let mut taken = 0;
    while let Some(n) = ready.pop() {
        taken += 1;
        for m in g.neighbors_directed(n, Direction::Outgoing) {
            incoming[m.index()] -= 1;
            if incoming[m.index()] == 0 {
                ready.push(m);
            }
        }
    }
    taken == g.node_count()
}

/// Puppet's `paths_in_cycle`: breadth first from the first member over walks inside the
/// component, without a visited set, until a walk reaches a vertex already on it. Walks are
/// kept as parent pointers (one queue entry each) rather than copied vectors. Puppet's search
/// can take time exponential in the component's size; past a work budget we switch to
/// [`shortest_cycle_through_first`], linear in the component's edges, so that a huge
/// component (a ring of a million resources) is still reported in linear time.
fn path_in_cycle(g: &Graph, members: &[Vertex]) -> Vec<Vertex> {
    const BUDGET: usize = 4_000_000;
    let inside: HashSet<Vertex> = members.iter().copied().collect();
    let mut adjacency: HashMap<Vertex, Vec<Vertex>> = HashMap::default();
    let mut out = |v: Vertex| -> Vec<Vertex> {
        adjacency
            .entry(v)
            .or_insert_with(|| {
                g.adjacent(v, Direction::Outgoing)
                    .into_iter()
                    .filter(|w| inside.contains(w))
                    .collect()
            })
            .clone()
    };
    // Entry: (vertex, index of the previous entry on the walk).
    let mut entries: Vec<(Vertex, Option<usize>)> = vec![(members[0], None)];
    let mut next = 0;
    let mut work = 0usize;
    while next < entries.len() {
        let (v, parent) = entries[next];
        let mut on_walk = false;
        let mut cur = parent;
        while let Some(i) = cur {
            work += 1;
            if entries[i].0 == v {
                on_walk = true;
                break;
            }
            cur = entries[i].1;
        }
        if on_walk {
            let mut path = vec![v];
            let mut cur = parent;
            while let Some(i) = cur {
                path.push(entries[i].0);
                cur = entries[i].1;
            }
            path.reverse();
            return path;
        }
        let successors = out(v);
        work += successors.len();
        entries.extend(successors.into_iter().map(|to| (to, Some(next))));
        next += 1;
        if work > BUDGET {
            break;
        }
    }
    shortest_cycle_through_first(g, members, &inside)
}

/// A shortest cycle through `members[0]` (breadth first with a visited set, parent pointers):
/// linear in the component's edges. Used when Puppet's search would take too long.
fn shortest_cycle_through_first(
    g: &Graph,
    members: &[Vertex],
    inside: &HashSet<Vertex>,
) -> Vec<Vertex> {
    let first = members[0];
    let mut parent: HashMap<Vertex, Vertex> = HashMap::default();
    let mut queue = VecDeque::from([first]);
    while let Some(v) = queue.pop_front() {
        for to in g.adjacent(v, Direction::Outgoing) {
            if !inside.contains(&to) {
                continue;
            }
            if to == first {
                let mut path = vec![first, v];
                let mut cur = v;
                while cur != first {
                    cur = parent[&cur];
                    path.push(cur);
                }
                path.reverse();
                return path;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(to) {
                e.insert(v);
                queue.push_back(to);
            }
        }
    }
    members.to_vec()
}

/// Puppet's report: `Found 1 dependency cycle:` and the paths joined by a literal `\n`.
pub fn puppet_message(g: &Graph, cycles: &[Cycle]) -> String {
    let n = cycles.len();
    let mut msg = format!(
        "Found {n} dependency {}:\n",
        if n == 1 { "cycle" } else { "cycles" }
    );
    for c in cycles {
        msg.push('(');
        msg.push_str(&path_names(g, &c.path).join(" => "));
        msg.push_str(")\\n");
    }
    msg.push_str(
        "Try the '--graph' option and opening the resulting '.dot' file in OmniGraffle or GraphViz",
    );
    msg
}

pub fn path_names(g: &Graph, path: &[Vertex]) -> Vec<String> {
    path.iter().map(|v| g.name(*v)).collect()
}

/// Why `s` comes before `t`, in words, e.g. `before => Notify[b] on Notify[a] (manifest.pp:1)`.
pub fn describe_edge(g: &Graph, s: Vertex, t: Vertex) -> String {
    let labels = g.labels_between(s, t);
    let Some(label) = labels
        .iter()
        .find(|l| !matches!(l.origin, Origin::Containment { .. }))
        .or(labels.first())
    else {
        return "no edge".into();
    };
    describe_origin(g, &label.origin, s, t)
}

pub fn describe_origin(g: &Graph, origin: &Origin, s: Vertex, t: Vertex) -> String {
    match origin {
        Origin::Metaparam { param, on } => {
            let node = &g.nodes[*on];
            let other = if s.node() == *on { t.node() } else { s.node() };
            let loc = node
                .short_location()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            format!(
                "{param} => {} on {}{loc}",
                g.nodes[other].reference, node.reference
            )
        }
        Origin::Containment { container } => {
            format!("{} contains {}", g.nodes[*container].reference, {
                let other = if s.node() == *container { t } else { s };
                g.name(other)
            })
        }
        Origin::Auto { rule } => format!("automatic: {rule}"),
    }
}

/// One step of a cycle as people read it: an edge, or a run of containment edges folded into
/// one (`Stage[main] contains ... Notify[x]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Edge {
        from: Vertex,
        to: Vertex,
    },
    /// `inside`: `from` is inside `to` (the run leaves a container), else `from` contains `to`.
    Containment {
        from: Vertex,
        to: Vertex,
        inside: bool,
    },
}

fn all_containment(g: &Graph, s: Vertex, t: Vertex) -> bool {
    g.labels_between(s, t)
        .iter()
        .all(|l| matches!(l.origin, Origin::Containment { .. }))
}

/// The steps of a cycle's path; containment runs between the same node are dropped.
pub fn steps(g: &Graph, c: &Cycle) -> Vec<Step> {
    let mut out = Vec::new();
    let mut i = 0;
    let path = &c.path;
    while i + 1 < path.len() {
        let (s, t) = (path[i], path[i + 1]);
        if all_containment(g, s, t) {
            let mut j = i + 1;
            while j + 1 < path.len() && all_containment(g, path[j], path[j + 1]) {
                j += 1;
            }
            let (a, b) = (path[i], path[j]);
            if a.node() != b.node() {
                out.push(Step::Containment {
                    from: a,
                    to: b,
                    inside: matches!(b, Vertex::Completed(_)),
                });
            }
            i = j;
        } else {
            out.push(Step::Edge { from: s, to: t });
            i += 1;
        }
    }
    out
}

/// The cycle explained edge by edge; runs of containment edges are folded into one step.
pub fn explain(g: &Graph, c: &Cycle) -> Vec<String> {
    steps(g, c)
        .into_iter()
        .map(|step| match step {
            Step::Containment { from, to, inside } => {
                let (a, b) = (g.name(from), g.name(to));
                let rel = if inside { "is inside" } else { "contains" };
                format!("{a} => {b}: containment ({a} {rel} {b})")
            }
            Step::Edge { from, to } => format!(
                "{} => {}: {}",
                g.name(from),
                g.name(to),
                describe_edge(g, from, to)
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::graph::Ordering;

    /// Notify resources n0..n(k-1); `edges` (a, b): n_a requires n_b (b goes first).
    fn graph(k: usize, edges: &[(usize, usize)]) -> Graph {
        let resources: Vec<serde_json::Value> = (0..k)
            .map(|i| {
                let req: Vec<String> = edges
                    .iter()
                    .filter(|(a, _)| *a == i)
                    .map(|(_, b)| format!("Notify[n{b}]"))
                    .collect();
                serde_json::json!({"type": "Notify", "title": format!("n{i}"),
                                   "parameters": {"require": req}})
            })
            .collect();
        let c: Catalog = serde_json::from_value(serde_json::json!({
            "name": "t", "version": 1, "resources": resources, "edges": []
        }))
        .unwrap();
        Graph::build(&c, Ordering::Manifest)
    }

    fn names(g: &Graph, c: &Cycle) -> String {
        path_names(g, &c.path).join(" => ")
    }

    #[test]
    fn puppets_first_walk_that_meets_itself() {
        // n0 -> n1 -> n2 -> n1 and n2 -> n3 -> n0 (as edges of the graph: b before a).
        let g = graph(4, &[(1, 0), (2, 1), (1, 2), (3, 2), (0, 3)]);
        let cycles = find_cycles(&g);
        assert_eq!(cycles.len(), 1);
        // Breadth first from n0: the walk n0 n1 n2 n1 closes first (length 3), before the
        // cycle back through n0 (length 4).
        assert_eq!(
            names(&g, &cycles[0]),
            "Notify[n0] => Notify[n1] => Notify[n2] => Notify[n1]"
        );
    }

    #[test]
    fn acyclic_test_agrees_with_the_components() {
        let cases: &[(usize, &[(usize, usize)])] = &[
            (3, &[(1, 0), (2, 1)]),
            (3, &[(1, 0), (2, 1), (0, 2)]),
            (2, &[(1, 1)]),
            (4, &[(1, 0), (1, 0), (2, 0), (3, 1), (3, 2)]),
            (1, &[]),
        ];
        for (k, edges) in cases {
            let g = graph(*k, edges);
            let sccs = petgraph::algo::kosaraju_scc(&g.expanded);
            let cyclic = sccs
                .iter()
                .any(|c| c.len() > 1 || g.expanded.contains_edge(c[0], c[0]));
            assert_eq!(is_acyclic(&g.expanded), !cyclic, "{edges:?}");
        }
    }

    #[test]
    fn a_ring_too_big_for_puppets_search_is_still_one_path() {
        // Puppet's walk search is quadratic on a ring; past the budget the linear search
        // gives the same ring.
        let k = 5000;
        let edges: Vec<(usize, usize)> = (0..k).map(|i| ((i + 1) % k, i)).collect();
        let g = graph(k, &edges);
        let cycles = find_cycles(&g);
        assert_eq!(cycles.len(), 1);
        let p = &cycles[0].path;
        assert_eq!(p.len(), k + 1);
        assert_eq!(p.first(), p.last());
        for w in p.windows(2) {
            assert!(g.has_relation(w[0].node(), w[1].node()), "{w:?} is an edge");
        }
    }
}
