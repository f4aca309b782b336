//! The graph stage: from a catalog to the graph the runner walks.
//!
//! Puppet's model (lib/puppet/graph/relationship_graph.rb), step by step:
//! 1. every catalog resource is a vertex, in catalog (evaluation) order;
//! 2. relationship metaparameters (`require`, `subscribe`, `before`, `notify`) become edges;
//! 3. automatic relationships (file -> parent directory, ...) are added unless an explicit
//!    edge already links the pair, in either direction;
//! 4. every container (class, defined-type instance, stage) is replaced by two anchors,
//!    *admissible* and *completed*: contents come after admissible and before completed, edges
//!    into the container go to admissible and edges out of it leave from completed. This is
//!    how `Class[a] -> Class[b]` orders everything inside and how containers forward events.
//!
//! **Invariant**: the stage does no IO and is deterministic: the same catalog and ordering
//! always give the same graph, order and cycle report.

pub mod autorel;
pub mod cycles;
pub mod dense;
pub use crate::digest;
pub mod dot;
pub mod explain;
pub mod order;
pub mod placement;
pub mod refs;
pub mod requisites;

use crate::catalog::{Catalog, Resource, ResourceKind, ResourceRef};
use crate::diagnostics::Diagnostic;
use crate::fxhash::{FxHashMap as FastMap, FxHashSet as FastSet};
use dense::DenseMap;
use petgraph::stable_graph::{EdgeIndex, NodeIndex, StableDiGraph};
use petgraph::Direction;
use refs::RefIndex;

pub use order::Ordering;

/// Resource types the runner knows how to manage (Puppet's core types that Ordo implements,
/// plus stdlib's no-op `anchor`).
pub const MANAGED_TYPES: &[&str] = &[
    "notify", "file", "exec", "package", "service", "user", "group", "anchor",
];

/// Puppet's own core types: a catalog resource of one of these types without `kind` is still
/// a managed resource, not a container.
const CORE_TYPES: &[&str] = &[
    "notify",
    "file",
    "exec",
    "package",
    "service",
    "user",
    "group",
    "cron",
    "host",
    "mount",
    "tidy",
    "schedule",
    "filebucket",
    "resources",
    "ssh_authorized_key",
    "sshkey",
    "augeas",
    "stage",
    "whit",
    "component",
    "anchor",
    "yumrepo",
    "zone",
    "selboolean",
    "selmodule",
];

/// One vertex of the catalog: a managed resource or a container.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub reference: ResourceRef,
    /// Position in `Catalog::resources`; `None` for the `Class[Settings]` Puppet always has.
    pub index: Option<usize>,
    pub container: bool,
    /// Shared by the nodes of one file (a copy per node was 100,000 strings of the same
    /// name on a big manifest).
    pub file: Option<std::sync::Arc<str>>,
    pub line: Option<u32>,
}

impl Node {
    /// `(file: manifest.pp, line: 2)` as Puppet appends to resource errors, or "".
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("(file: {f}, line: {l})"),
            (Some(f), None) => format!("(file: {f})"),
            (None, Some(l)) => format!("(line: {l})"),
            (None, None) => String::new(),
        }
    }

    /// `manifest.pp:2`, for people.
    pub fn short_location(&self) -> Option<String> {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => Some(format!("{f}:{l}")),
            (None, Some(l)) => Some(format!("line {l}")),
            (Some(f), None) => Some(f.to_string()),
            _ => None,
        }
    }
}

/// Why an edge exists; kept on every edge for explanations (16 bytes: a million-edge graph
/// has a million of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A relationship metaparameter (`param`) written on node `on`.
    Metaparam { param: Param, on: usize },
    /// Anchors of a container (`contains`) around its contents.
    Containment { container: usize },
    /// An automatic relationship; `rule` says which one.
    Auto { rule: autorel::Rule },
}

pub use crate::catalog::ContainmentSeen;

/// A relationship metaparameter: its position among [`requisites::REFERENCE_PARAMS`], a
/// byte where the name would take sixteen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Param(u8);

const _: () = assert!(requisites::REFERENCE_PARAMS.len() <= u8::MAX as usize);

impl Param {
    /// The reference parameter called `name`.
    pub fn of(name: &str) -> Option<Param> {
        requisites::REFERENCE_PARAMS
            .iter()
            .position(|p| *p == name)
            .map(|i| Param(i as u8))
    }

    pub fn name(self) -> &'static str {
        requisites::REFERENCE_PARAMS[usize::from(self.0)]
    }
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An edge of the relationship graph (containers still present).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Relation {
    pub source: usize,
    pub target: usize,
    /// Notifying edge (`notify`, `subscribe`, `~>`): carries refresh events.
    pub refresh: bool,
    pub origin: Origin,
}

/// A vertex of the expanded graph: a managed resource or one of a container's two anchors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Vertex {
    Resource(usize),
    Admissible(usize),
    Completed(usize),
}

impl Vertex {
    pub fn node(self) -> usize {
        match self {
            Vertex::Resource(n) | Vertex::Admissible(n) | Vertex::Completed(n) => n,
        }
    }

    pub fn is_anchor(self) -> bool {
        !matches!(self, Vertex::Resource(_))
    }
}

/// Label of an expanded-graph edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label {
    pub refresh: bool,
    pub origin: Origin,
    /// Insertion number: Puppet's graph keeps insertion order, and so do we.
    pub seq: u32,
}

/// An error found while building the graph (the catalog cannot be applied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphError {
    /// A relationship names a resource absent from the catalog.
    MissingDependency {
        reference: String,
        resource: usize,
        param: &'static str,
    },
    /// A relationship value that is not a reference at all.
    BadReference {
        value: String,
        resource: usize,
        param: &'static str,
    },
    /// A containment edge whose end is not in the catalog.
    BadEdge { source: String, target: String },
    /// An invalid value of an Ordo metaparameter (`order`, `priority`, `retry`, ...).
    Invalid { resource: usize, message: String },
}

/// The graph of a catalog, ready to be ordered and walked.
#[derive(Debug)]
pub struct Graph {
    pub nodes: Vec<Node>,
    /// Node of each catalog resource.
    pub node_of: Vec<usize>,
    /// Relationship edges between nodes (containers included), in Puppet's order. Add them
    /// with [`Graph::add_relation`], which keeps the lookup sets below in step.
    pub relations: Vec<Relation>,
    /// Membership tests in constant time (a linear `contains` made building quadratic in the
    /// number of relationships): the first relation of each (source, target) pair, by
    /// position in `relations`, and for each relation the next one with the same pair
    /// (`u32::MAX` ends the chain). One small map instead of a set of relations and a set
    /// of pairs: a third of the memory on a million-edge graph, one hash per insertion.
    first_of_pair: FastMap<(u32, u32), u32>,
    next_of_pair: Vec<u32>,
    /// Containment: children of each node, in catalog edge order.
    pub children: Vec<Vec<usize>>,
    /// The container shown in a resource's path (`/Stage[main]/Main/...`).
    pub parent: Vec<Option<usize>>,
    /// The expanded graph: containers replaced by anchors.
    pub expanded: StableDiGraph<Vertex, Label>,
    vertex_index: DenseMap<Vertex, NodeIndex>,
    /// The edges of each expanded-graph vertex in insertion order, built once with it (see
    /// [`Adjacency`]): walking petgraph's lists and sorting them on every lookup made a run
    /// quadratic in the edges of a container's anchors.
    adjacency: Adjacency,
    /// Priority rank of each node under the chosen ordering (smaller goes first).
    pub priority: Vec<u64>,
    pub errors: Vec<GraphError>,
}

/// Is this catalog resource a container rather than something to manage?
pub fn is_container(r: &Resource) -> bool {
    let t = r.type_name.as_str();
    if ["class", "stage", "node"]
        .iter()
        .any(|c| t.eq_ignore_ascii_case(c))
    {
        return true;
    }
    match r.kind {
        Some(ResourceKind::CompilableType) => false,
        Some(_) => true,
        None => !CORE_TYPES.iter().any(|c| t.eq_ignore_ascii_case(c)),
    }
}

const RELATIONSHIP_PARAMS: [(&str, bool, bool); 4] = [
    // (name, points at a dependency (edge target -> this), refresh)
    ("require", true, false),
    ("subscribe", true, true),
    ("before", false, false),
    ("notify", false, true),
];

/// How many parameters make relationship edges: [`RELATIONSHIP_PARAMS`], then
/// [`requisites::EDGE_PARAMS`].
const EDGE_PARAM_COUNT: usize = RELATIONSHIP_PARAMS.len() + requisites::EDGE_PARAMS.len();

/// The position of a parameter among those that make edges (see [`EDGE_PARAM_COUNT`]).
fn edge_param_position(name: &str) -> Option<usize> {
    RELATIONSHIP_PARAMS
        .iter()
        .chain(requisites::EDGE_PARAMS)
        .position(|(p, _, _)| *p == name)
}

impl Graph {
    /// Builds the graph of a catalog. Problems (missing dependencies, bad edges) are collected
    /// in `errors`; the graph is still built from what could be resolved.
    pub fn build(catalog: &Catalog, ordering: Ordering) -> Graph {
        Graph::build_indexed(catalog, ordering, &RefIndex::new(&catalog.resources))
    }

    /// [`Graph::build`] with the reference index of the catalog already made.
    pub fn build_indexed(catalog: &Catalog, ordering: Ordering, index: &RefIndex) -> Graph {
        Graph::build_parts(catalog, ordering, index, || autorel::find(catalog, index))
    }

    /// [`Graph::build_indexed`], given how to get the automatic relationships.
    fn build_parts(
        catalog: &Catalog,
        ordering: Ordering,
        index: &RefIndex,
        auto: impl FnOnce() -> Vec<autorel::Found>,
    ) -> Graph {
        let (nodes, node_of) = make_nodes(catalog);
        let n = nodes.len();
        let mut g = Graph {
            nodes,
            node_of,
            relations: Vec::new(),
            first_of_pair: FastMap::default(),
            next_of_pair: Vec::new(),
            children: vec![Vec::new(); n],
            parent: vec![None; n],
            expanded: StableDiGraph::new(),
            vertex_index: DenseMap::default(),
            adjacency: Adjacency::default(),
            priority: Vec::new(),
            errors: Vec::new(),
        };
        g.add_containment(catalog, index);
        // Most resources have a relationship or two: growing the sets from empty rehashed
        // them a dozen times on a million-edge catalog.
        g.relations.reserve(n);
        g.first_of_pair.reserve(n);
        g.next_of_pair.reserve(n);
        g.add_manual_relations(catalog, index);
        autorel::add_auto_relations(&mut g, auto());
        g.expand();
        g.priority = order::priorities(&g.nodes, ordering);
        placement::adjust(&mut g, catalog, ordering);
        g
    }

    fn add_containment(&mut self, catalog: &Catalog, index: &RefIndex) {
        // Puppet always compiles an empty Class[Settings] first into Stage[main]; modelling it
        // keeps our cycle reports identical to Puppet's when a cycle runs through Stage[main].
        if let Some(settings) = self.nodes.iter().position(|n| n.index.is_none()) {
            if let Some(main) = index.find("Stage", "main") {
                self.children[self.node_of[main]].push(settings);
            }
        }
        // Duplicate edges are dropped.
        let mut seen = ContainmentSeen::default();
        for (p, kids) in self.children.iter().enumerate() {
            for &k in kids {
                seen.insert(p, k);
            }
        }
        // Consecutive edges mostly leave the same container: its reference is resolved once.
        // Their targets mostly follow each other in the catalog: each is tried as the
        // resource after the last target.
        let mut last_source: Option<(&str, Option<usize>)> = None;
        let mut last_target = None;
        for e in &catalog.edges {
            let source = match last_source {
                Some((text, found)) if text == e.source => found,
                _ => {
                    let found = index.resolve(&e.source);
                    last_source = Some((&e.source, found));
                    found
                }
            };
            let near = last_target.map_or(0, |t: usize| t + 1);
            let target = index.resolve_near(&e.target, &catalog.resources, near);
            last_target = target.or(last_target);
            match (source, target) {
                (Some(s), Some(t)) => {
                    let (s, t) = (self.node_of[s], self.node_of[t]);
                    if seen.insert(s, t) {
                        self.children[s].push(t);
                    }
                }
                _ => self.errors.push(GraphError::BadEdge {
                    source: e.source.clone(),
                    target: e.target.clone(),
                }),
            }
        }
        // The path parent: a stage when there is one (a contained class also hangs from the
        // class that contains it), else the first container.
        for (p, kids) in self.children.iter().enumerate() {
            for &k in kids {
                let current = self.parent[k];
                let is_stage = self.nodes[p].reference.type_name == "Stage";
                let current_is_stage =
                    current.is_some_and(|c| self.nodes[c].reference.type_name == "Stage");
                if current.is_none() || (is_stage && !current_is_stage) {
                    self.parent[k] = Some(p);
                }
            }
        }
    }

    fn add_manual_relations(&mut self, catalog: &Catalog, index: &RefIndex) {
        // The last reference text resolved, and what it resolved to.
        let mut last: Option<(&str, Option<usize>)> = None;
        for (i, r) in catalog.resources.iter().enumerate() {
            // One pass over the keys (a handful, most naming no resource) finds the values
            // of the relationship parameters, then taken in their fixed order.
            let mut values: [Option<&serde_json::Value>; EDGE_PARAM_COUNT] =
                [None; EDGE_PARAM_COUNT];
            let mut any = false;
            for (k, v) in &r.parameters {
                if let Some(at) = requisites::reference_param(k).and_then(edge_param_position) {
                    values[at] = Some(v);
                    any = true;
                }
            }
            if !any {
                continue;
            }
            let me = self.node_of[i];
            let params = RELATIONSHIP_PARAMS.iter().chain(requisites::EDGE_PARAMS);
            for (&(param, inward, refresh), value) in params.zip(values) {
                // Every edge parameter is a reference parameter (see the tests below).
                let (Some(value), Some(tag)) = (value, Param::of(param)) else {
                    continue;
                };
                refs::for_each_reference(value, &mut |reference| {
                    let found = match (&reference, last) {
                        // The same text as the last reference resolved (many resources
                        // notify one exec): the same answer.
                        (std::borrow::Cow::Borrowed(text), Some((was, found))) if *text == was => {
                            found
                        }
                        _ => {
                            let Some(parts) = refs::split_ref(&reference) else {
                                self.errors.push(GraphError::BadReference {
                                    value: reference.into_owned(),
                                    resource: me,
                                    param,
                                });
                                return;
                            };
                            // Split once when there is nothing to trim (the usual case).
                            let found = if reference.trim().len() == reference.len() {
                                index.resolve_split(&reference, parts)
                            } else {
                                index.resolve(&reference)
                            };
                            if let std::borrow::Cow::Borrowed(text) = reference {
                                last = Some((text, found));
                            }
                            found
                        }
                    };
                    let Some(other) = found else {
                        self.errors.push(GraphError::MissingDependency {
                            reference: display_ref(&reference),
                            resource: me,
                            param,
                        });
                        return;
                    };
                    let other = self.node_of[other];
                    let (source, target) = if inward { (other, me) } else { (me, other) };
                    let rel = Relation {
                        source,
                        target,
                        refresh,
                        origin: Origin::Metaparam { param: tag, on: me },
                    };
                    // Each reference is an edge of its own, as in Puppet: a reference given
                    // twice (`notify => [A, A]`, or a parameter and a chain that both add
                    // it) delivers two refresh events.
                    self.push_relation(rel);
                });
            }
        }
    }

    /// Adds a relationship edge unless the same one (ends, refresh and origin) is already
    /// there; returns whether it was added.
    pub fn add_relation(&mut self, rel: Relation) -> bool {
        self.insert_relation(rel, true)
    }

    /// Adds a relationship edge, even one equal to an edge already there.
    fn push_relation(&mut self, rel: Relation) {
        self.insert_relation(rel, false);
    }

    fn insert_relation(&mut self, rel: Relation, unique: bool) -> bool {
        const END: u32 = u32::MAX;
        let at = u32::try_from(self.relations.len()).expect("fewer than 4 billion relations");
        let pair = (rel.source as u32, rel.target as u32);
        match self.first_of_pair.entry(pair) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(at);
            }
            std::collections::hash_map::Entry::Occupied(o) => {
                let mut i = *o.get();
                loop {
                    if unique && self.relations[i as usize] == rel {
                        return false;
                    }
                    let next = self.next_of_pair[i as usize];
                    if next == END {
                        self.next_of_pair[i as usize] = at;
                        break;
                    }
                    i = next;
                }
            }
        }
        self.next_of_pair.push(END);
        self.relations.push(rel);
        true
    }

    /// Is there a relationship edge between the two nodes, in this direction?
    pub fn has_relation(&self, source: usize, target: usize) -> bool {
        self.first_of_pair
            .contains_key(&(source as u32, target as u32))
    }

    /// Replaces containers by their admissible/completed anchors (the six rules in
    /// relationship_graph.rb `replace_containers_with_anchors`).
    ///
    /// The rewriting happens on a plain edge list ([`Expansion`]) and the petgraph graph is
    /// built once at the end: removing edges one by one from petgraph's linked adjacency lists
    /// costs the degree of both ends, which made a container with many neighbours (every
    /// defined-type instance required by one file) quadratic. Vertices, edges and sequence
    /// numbers come out exactly as the edge-by-edge rewriting gave them.
    fn expand(&mut self) {
        let containers: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| self.nodes[n].container)
            .collect();
        // Step 1: every node is a vertex, containers included for now; then the anchors.
        let mut x = Expansion::new(self.nodes.len(), &containers);
        // Every relation, two edges per containment link and one per empty container, plus
        // the container edges moved to anchors (at most the relations again).
        let contained: usize = containers.iter().map(|&c| self.children[c].len()).sum();
        x.edges
            .reserve(2 * self.relations.len() + 2 * contained + containers.len());
        for n in 0..self.nodes.len() {
            x.vertex(Vertex::Resource(n));
        }
        for rel in &self.relations {
            x.add(
                Vertex::Resource(rel.source),
                Vertex::Resource(rel.target),
                rel.refresh,
                rel.origin,
            );
        }
        for &c in &containers {
            x.vertex(Vertex::Admissible(c));
            x.vertex(Vertex::Completed(c));
        }
        let nodes = &self.nodes;
        let admissible = |n: usize| {
            if nodes[n].container {
                Vertex::Admissible(n)
            } else {
                Vertex::Resource(n)
            }
        };
        let completed = |n: usize| {
            if nodes[n].container {
                Vertex::Completed(n)
            } else {
                Vertex::Resource(n)
            }
        };
        for &c in &containers {
            let origin = Origin::Containment { container: c };
            if self.children[c].is_empty() {
                x.add(Vertex::Admissible(c), Vertex::Completed(c), false, origin);
            }
            for &v in &self.children[c] {
                x.add(Vertex::Admissible(c), admissible(v), true, origin);
                x.add(completed(v), Vertex::Completed(c), true, origin);
            }
            for e in x.live(c, Direction::Incoming) {
                let (src, _, label) = x.take(e);
                let src = match src {
                    Vertex::Resource(s) => completed(s),
                    other => other,
                };
                x.add(src, Vertex::Admissible(c), label.refresh, label.origin);
            }
            for e in x.live(c, Direction::Outgoing) {
                let (_, dst, label) = x.take(e);
                let dst = match dst {
                    Vertex::Resource(t) => admissible(t),
                    other => other,
                };
                x.add(Vertex::Completed(c), dst, label.refresh, label.origin);
            }
        }
        // The petgraph graph, built once: same vertex order as before, container vertices
        // removed, the remaining edges in insertion order.
        let live_edges = x.edges.iter().filter(|e| e.is_some()).count();
        self.expanded.reserve_exact_nodes(x.vertices.len());
        self.expanded.reserve_exact_edges(live_edges);
        let mut slots = Vec::with_capacity(x.vertices.len());
        for v in &x.vertices {
            let ix = self.expanded.add_node(*v);
            self.vertex_index.insert(*v, ix);
            slots.push(ix);
        }
        for &c in &containers {
            if let Some(ix) = self.vertex_index.remove(&Vertex::Resource(c)) {
                self.expanded.remove_node(ix);
            }
        }
        let mut ends = Vec::with_capacity(live_edges);
        for (s, t, label) in x.edges.iter().flatten() {
            let e = self
                .expanded
                .add_edge(slots[*s as usize], slots[*t as usize], *label);
            ends.push((slots[*s as usize], slots[*t as usize], e));
        }
        self.adjacency = Adjacency::new(slots.len(), &ends);
    }

    /// Edges of a vertex in insertion order.
    fn ordered_edges(&self, v: NodeIndex, dir: Direction) -> &[EdgeIndex] {
        self.adjacency.edges(v, dir)
    }

    /// The number of edges of a vertex in one direction (parallel edges counted).
    pub fn degree(&self, v: Vertex, dir: Direction) -> usize {
        self.index_of(v)
            .map_or(0, |ix| self.ordered_edges(ix, dir).len())
    }

    /// The expanded-graph vertices, in a stable order (node order, anchors after).
    pub fn vertices(&self) -> Vec<Vertex> {
        // Slot order is node order, each node's anchors after its resource vertex.
        self.vertex_index.keys().collect()
    }

    pub fn index_of(&self, v: Vertex) -> Option<NodeIndex> {
        self.vertex_index.get(&v).copied()
    }

    /// Out-neighbours (`dir` = Outgoing) or in-neighbours of a vertex, unique, in insertion order.
    pub fn adjacent(&self, v: Vertex, dir: Direction) -> Vec<Vertex> {
        let Some(ix) = self.index_of(v) else {
            return Vec::new();
        };
        let edges = self.ordered_edges(ix, dir);
        let mut out = Vec::with_capacity(edges.len());
        // Few edges (the usual case): a linear look at what is already there; many: a set.
        let mut seen = FastSet::default();
        let few = edges.len() <= 16;
        for &e in edges {
            let (s, t) = self.expanded.edge_endpoints(e).expect("edge exists");
            let other = self.expanded[if dir == Direction::Outgoing { t } else { s }];
            let new = if few {
                !out.contains(&other)
            } else {
                seen.insert(other)
            };
            if new {
                out.push(other);
            }
        }
        out
    }

    /// Outgoing edges of a vertex in insertion order: (target, label).
    pub fn out_edges(&self, v: Vertex) -> Vec<(Vertex, &Label)> {
        let Some(ix) = self.index_of(v) else {
            return Vec::new();
        };
        self.ordered_edges(ix, Direction::Outgoing)
            .iter()
            .map(|&e| {
                let (_, t) = self.expanded.edge_endpoints(e).expect("edge exists");
                (self.expanded[t], &self.expanded[e])
            })
            .collect()
    }

    /// Incoming edges of a vertex in insertion order: (source, label).
    pub fn in_edges(&self, v: Vertex) -> Vec<(Vertex, &Label)> {
        let Some(ix) = self.index_of(v) else {
            return Vec::new();
        };
        self.ordered_edges(ix, Direction::Incoming)
            .iter()
            .map(|&e| {
                let (s, _) = self.expanded.edge_endpoints(e).expect("edge exists");
                (self.expanded[s], &self.expanded[e])
            })
            .collect()
    }

    /// Labels of the edges from `s` to `t`, in insertion order. Looked up from whichever end
    /// has fewer edges (an anchor may have thousands, each of its neighbours a few).
    pub fn labels_between(&self, s: Vertex, t: Vertex) -> Vec<&Label> {
        let (Some(si), Some(ti)) = (self.index_of(s), self.index_of(t)) else {
            return Vec::new();
        };
        let out = self.ordered_edges(si, Direction::Outgoing);
        let inc = self.ordered_edges(ti, Direction::Incoming);
        let (edges, other, want) = if out.len() <= inc.len() {
            (out, Direction::Outgoing, ti)
        } else {
            (inc, Direction::Incoming, si)
        };
        edges
            .iter()
            .filter(|&&e| {
                let (a, b) = self.expanded.edge_endpoints(e).expect("edge exists");
                (if other == Direction::Outgoing { b } else { a }) == want
            })
            .map(|&e| &self.expanded[e])
            .collect()
    }

    /// How Puppet names a vertex in messages: anchors go by their container's name.
    pub fn name(&self, v: Vertex) -> String {
        self.nodes[v.node()].reference.to_string()
    }

    /// Puppet's sort key of a vertex (`ref`): anchors are `Whit[admissible_Class[X]]`.
    pub fn sort_key(&self, v: Vertex) -> String {
        match v {
            Vertex::Resource(n) => self.nodes[n].reference.to_string(),
            Vertex::Admissible(n) => format!("Whit[admissible_{}]", self.nodes[n].reference),
            Vertex::Completed(n) => format!("Whit[completed_{}]", self.nodes[n].reference),
        }
    }

    /// Priority key of a vertex: anchors share their container's priority.
    pub fn priority_of(&self, v: Vertex) -> (u64, u8) {
        let p = self.priority[v.node()];
        match v {
            Vertex::Completed(_) => (p, 1),
            _ => (p, 0),
        }
    }

    /// The resource path Puppet logs: `/Stage[main]/Main/D[x]/Notify[a]`.
    pub fn path(&self, node: usize) -> String {
        let mut segments = Vec::new();
        let mut cur = Some(node);
        let mut guard = 0;
        while let Some(n) = cur {
            let r = &self.nodes[n].reference;
            segments.push(if r.type_name == "Class" {
                r.title.clone()
            } else {
                r.to_string()
            });
            cur = self.parent[n];
            guard += 1;
            if guard > self.nodes.len() {
                break; // containment loops are reported elsewhere; never spin
            }
        }
        segments.reverse();
        format!("/{}", segments.join("/"))
    }

    /// Looks a node up by a user-written reference (`Notify[a]`, `file[/x]`).
    pub fn find(&self, catalog: &Catalog, reference: &str) -> Option<usize> {
        RefIndex::new(&catalog.resources)
            .resolve(reference)
            .map(|i| self.node_of[i])
    }

    /// The graph errors as diagnostics, in Puppet's words.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.errors
            .iter()
            .map(|e| self.error_diagnostic(e))
            .collect()
    }

    pub fn error_message(&self, e: &GraphError) -> String {
        match e {
            GraphError::MissingDependency {
                reference,
                resource,
                param,
            } => {
                let node = &self.nodes[*resource];
                let inward = RELATIONSHIP_PARAMS
                    .iter()
                    .chain(requisites::EDGE_PARAMS)
                    .any(|(p, inward, _)| p == param && *inward)
                    || param.ends_with("_any")
                    || matches!(*param, "use" | "listen");
                let what = if inward { "dependency" } else { "dependent" };
                let loc = node.location();
                let sep = if loc.is_empty() { "" } else { " " };
                format!(
                    "Could not find {what} {reference} for {}{sep}{loc}",
                    node.reference
                )
            }
            GraphError::BadReference {
                value,
                resource,
                param,
            } => format!(
                "Invalid relationship: {} {{ {param} => '{value}' }} is not a resource reference",
                self.nodes[*resource].reference
            ),
            GraphError::BadEdge { source, target } => {
                format!("Could not find resource for containment edge {source} -> {target}")
            }
            GraphError::Invalid { resource, message } => {
                let loc = self.nodes[*resource].location();
                let sep = if loc.is_empty() { "" } else { " " };
                format!("{message}{sep}{loc}")
            }
        }
    }

    fn error_diagnostic(&self, e: &GraphError) -> Diagnostic {
        let code = match e {
            GraphError::MissingDependency { .. } => "missing-dependency",
            GraphError::BadReference { .. } => "bad-reference",
            GraphError::BadEdge { .. } => "bad-edge",
            GraphError::Invalid { .. } => "invalid-metaparameter",
        };
        Diagnostic::error(code, self.error_message(e))
    }
}

/// The expanded graph while containers are being replaced: an edge list with per-vertex
/// lists for the containers' own vertices. An edge names its ends by their position in
/// `vertices`, a `u32` (24 bytes an edge, where two [`Vertex`] values alone take 32: the
/// list of a large catalog is tens of megabytes, each page faulted in on first write).
struct Expansion {
    vertices: Vec<Vertex>,
    /// Number of nodes: `Resource(n)` is vertex `n`, container number `k`'s anchors come
    /// after them (`nodes + 2k` and `nodes + 2k + 1`), in the order [`Graph::expand`] adds them.
    nodes: usize,
    /// Rank of each node among the containers.
    rank: Vec<usize>,
    edges: Vec<Option<(u32, u32, Label)>>,
    /// Incoming and outgoing edge ids of each container's own vertex, by rank (the only
    /// vertices whose edges are looked up: they are replaced by their anchors).
    incoming: Vec<Vec<u32>>,
    outgoing: Vec<Vec<u32>>,
}

impl Expansion {
    fn new(nodes: usize, containers: &[usize]) -> Expansion {
        let mut rank = vec![usize::MAX; nodes];
        for (k, &c) in containers.iter().enumerate() {
            rank[c] = k;
        }
        let vertices = nodes + 2 * containers.len();
        Expansion {
            vertices: Vec::with_capacity(vertices),
            nodes,
            rank,
            edges: Vec::new(),
            incoming: vec![Vec::new(); containers.len()],
            outgoing: vec![Vec::new(); containers.len()],
        }
    }

    /// The position of a vertex in `vertices`. A catalog has far fewer than 2^32 vertices
    /// (and edges): each takes tens of bytes of memory.
    fn slot(&self, v: Vertex) -> u32 {
        let slot = match v {
            Vertex::Resource(n) => n,
            Vertex::Admissible(c) => self.nodes + 2 * self.rank[c],
            Vertex::Completed(c) => self.nodes + 2 * self.rank[c] + 1,
        };
        slot as u32
    }

    fn vertex(&mut self, v: Vertex) {
        debug_assert_eq!(self.slot(v) as usize, self.vertices.len());
        self.vertices.push(v);
    }

    fn add(&mut self, s: Vertex, t: Vertex, refresh: bool, origin: Origin) {
        let id = self.edges.len() as u32;
        let ends = (self.slot(s), self.slot(t));
        self.edges.push(Some((
            ends.0,
            ends.1,
            Label {
                refresh,
                origin,
                seq: id + 1,
            },
        )));
        if let Vertex::Resource(s) = s {
            if let Some(&k) = self.rank.get(s).filter(|&&k| k != usize::MAX) {
                self.outgoing[k].push(id);
            }
        }
        if let Vertex::Resource(t) = t {
            if let Some(&k) = self.rank.get(t).filter(|&&k| k != usize::MAX) {
                self.incoming[k].push(id);
            }
        }
    }

    /// Removes a live edge; gives its ends and label.
    fn take(&mut self, e: u32) -> (Vertex, Vertex, Label) {
        let (s, t, label) = self.edges[e as usize].take().expect("live edge");
        (self.vertices[s as usize], self.vertices[t as usize], label)
    }

    /// Live edges of container `c`'s own vertex, in insertion order (dead ids are dropped
    /// from the list).
    fn live(&mut self, c: usize, dir: Direction) -> Vec<u32> {
        let k = self.rank[c];
        let list = match dir {
            Direction::Incoming => &mut self.incoming[k],
            Direction::Outgoing => &mut self.outgoing[k],
        };
        let edges = &self.edges;
        list.retain(|&e| edges[e as usize].is_some());
        list.clone()
    }
}

/// The edges of every expanded-graph vertex, outgoing and incoming, each list in insertion
/// order: two compressed rows (one array of edges, one of where each vertex's part starts).
#[derive(Debug, Default)]
struct Adjacency {
    out_start: Vec<u32>,
    out: Vec<EdgeIndex>,
    in_start: Vec<u32>,
    inc: Vec<EdgeIndex>,
}

impl Adjacency {
    /// From the edges (source, target, id) in insertion order, over `bound` vertex indices.
    fn new(bound: usize, edges: &[(NodeIndex, NodeIndex, EdgeIndex)]) -> Adjacency {
        let rows = |end: fn(&(NodeIndex, NodeIndex, EdgeIndex)) -> NodeIndex| {
            let mut start = vec![0u32; bound + 1];
            for e in edges {
                start[end(e).index() + 1] += 1;
            }
            for i in 0..bound {
                start[i + 1] += start[i];
            }
            let mut next = start.clone();
            let mut list = vec![EdgeIndex::end(); edges.len()];
            for e in edges {
                let at = &mut next[end(e).index()];
                list[*at as usize] = e.2;
                *at += 1;
            }
            (start, list)
        };
        let (out_start, out) = rows(|e| e.0);
        let (in_start, inc) = rows(|e| e.1);
        Adjacency {
            out_start,
            out,
            in_start,
            inc,
        }
    }

    fn edges(&self, v: NodeIndex, dir: Direction) -> &[EdgeIndex] {
        let (start, list) = match dir {
            Direction::Outgoing => (&self.out_start, &self.out),
            Direction::Incoming => (&self.in_start, &self.inc),
        };
        match (start.get(v.index()), start.get(v.index() + 1)) {
            (Some(&a), Some(&b)) => &list[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// `Notify['a']` -> `Notify[a]`, type capitalised, as Puppet prints references.
fn display_ref(s: &str) -> String {
    ResourceRef::parse(s.trim())
        .map(|r| r.to_string())
        .unwrap_or_else(|| s.to_string())
}

fn make_nodes(catalog: &Catalog) -> (Vec<Node>, Vec<usize>) {
    // Sized once: growing a vector of 100,000 nodes by doubling copied it a dozen times.
    let mut nodes = Vec::with_capacity(catalog.resources.len() + 1);
    let mut node_of = Vec::with_capacity(catalog.resources.len());
    let has_settings = catalog.resources.iter().any(|r| {
        r.type_name.eq_ignore_ascii_case("class") && r.title.eq_ignore_ascii_case("settings")
    });
    // The file name of the last node: consecutive resources mostly come from one file.
    let mut last_file: Option<std::sync::Arc<str>> = None;
    for (i, r) in catalog.resources.iter().enumerate() {
        node_of.push(nodes.len());
        let reference = refs::canonical_ref(&r.type_name, &r.title);
        let is_main_stage = reference.type_name == "Stage" && reference.title == "main";
        let file = r.file.as_deref().map(|f| match &last_file {
            Some(last) if **last == *f => last.clone(),
            _ => {
                let shared: std::sync::Arc<str> = f.into();
                last_file = Some(shared.clone());
                shared
            }
        });
        nodes.push(Node {
            reference,
            index: Some(i),
            container: is_container(r),
            file,
            line: r.line,
        });
        if is_main_stage && !has_settings {
            nodes.push(Node {
                reference: ResourceRef::new("Class", "Settings"),
                index: None,
                container: true,
                file: None,
                line: None,
            });
        }
    }
    (nodes, node_of)
}

#[cfg(test)]
mod tests {
    /// `add_manual_relations` finds a resource's edge parameters among its reference
    /// parameters.
    #[test]
    fn edge_params_are_reference_params() {
        for (i, (p, _, _)) in super::RELATIONSHIP_PARAMS
            .iter()
            .chain(super::requisites::EDGE_PARAMS)
            .enumerate()
        {
            assert_eq!(super::requisites::reference_param(p), Some(*p));
            assert_eq!(super::edge_param_position(p), Some(i));
            assert_eq!(super::Param::of(p).map(super::Param::name), Some(*p));
        }
    }
}
