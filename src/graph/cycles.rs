//! Dependency cycles, found and reported as Puppet does (simple_graph.rb
//! `find_cycles_in_graph`, `paths_in_cycle`): strongly connected components (Tarjan), each
//! sorted by reference, the components sorted, then one shortest path (breadth first from the
//! component's first vertex) per component. Beyond Puppet, each edge of the path can be
//! explained with its origin, containment anchors folded away.

use super::{Graph, Origin, Vertex};
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
    let sccs = petgraph::algo::tarjan_scc(&g.expanded);
    let mut comps: Vec<Vec<Vertex>> = sccs
        .into_iter()
        .filter(|c| c.len() > 1 || g.expanded.contains_edge(c[0], c[0]))
        .map(|c| {
            let mut vs: Vec<Vertex> = c.into_iter().map(|ix| g.expanded[ix]).collect();
            vs.sort_by_key(|v| g.sort_key(*v));
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

/// Breadth-first search from the first member back to a vertex already on the path.
fn path_in_cycle(g: &Graph, members: &[Vertex]) -> Vec<Vertex> {
    let mut queue: VecDeque<(Vertex, Vec<Vertex>)> = VecDeque::new();
    queue.push_back((members[0], Vec::new()));
    while let Some((v, path)) = queue.pop_front() {
        if path.contains(&v) {
            let mut p = path;
            p.push(v);
            return p;
        }
        for to in g.adjacent(v, Direction::Outgoing) {
            if members.contains(&to) {
                let mut p = path.clone();
                p.push(v);
                queue.push_back((to, p));
            }
        }
        if queue.len() > 1_000_000 {
            break; // a pathological component: report what we have rather than exhaust memory
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
