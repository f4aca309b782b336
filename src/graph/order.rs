//! Apply order: a priority queue over the expanded graph.
//!
//! Among the resources whose dependencies are all done, the one with the smallest priority
//! goes first. With `manifest` ordering (Puppet 7's only behaviour) the priority is the
//! catalog (evaluation) order; `title-hash` sorts by SHA-1 of a salted `Type[title]` (Puppet
//! 3-5); `random:SEED` by a hash of the seed and the reference, reproducible from the seed.
//! Anchors take their container's priority.

use super::digest::{hex, sha1};
use super::{Graph, Node, Vertex};
use crate::fxhash::FxHashMap as HashMap;
use petgraph::Direction;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ordering {
    #[default]
    Manifest,
    TitleHash,
    Random(u64),
    /// Rudder's: technique by technique, directives sorted by (priority, class, title)
    /// (`placement.rs`); manifest order inside a directive.
    Alphanumeric,
}

impl std::str::FromStr for Ordering {
    type Err = String;

    fn from_str(s: &str) -> Result<Ordering, String> {
        match s {
            "manifest" => Ok(Ordering::Manifest),
            "title-hash" => Ok(Ordering::TitleHash),
            "random" => Ok(Ordering::Random(0x5eed)),
            "alphanumeric" => Ok(Ordering::Alphanumeric),
            _ => match s.strip_prefix("random:") {
                Some(seed) => seed
                    .parse()
                    .map(Ordering::Random)
                    .map_err(|_| format!("invalid random seed '{seed}' (expected an integer)")),
                None => Err(format!(
                    "invalid ordering '{s}' (expected manifest, title-hash, random[:SEED] or alphanumeric)"
                )),
            },
        }
    }
}

/// Salt Puppet 3-5 used for title-hash ordering.
const TITLE_HASH_SALT: &str = "NaCl, MgSO4 (salts) and then ";

/// A 64-bit mix (splitmix64 finaliser) for reproducible random ordering.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^ (z >> 31)
}

fn random_key(seed: u64, text: &str) -> u64 {
    text.bytes().fold(mix(seed), |h, b| mix(h ^ u64::from(b)))
}

/// Rank of every node under an ordering (0 goes first).
pub fn priorities(nodes: &[Node], ordering: Ordering) -> Vec<u64> {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    match ordering {
        Ordering::Manifest | Ordering::Alphanumeric => {}
        Ordering::TitleHash => {
            let keys: Vec<String> = nodes
                .iter()
                .map(|n| {
                    hex(&sha1(
                        format!("{TITLE_HASH_SALT}{}", n.reference).as_bytes(),
                    ))
                })
                .collect();
            order.sort_by(|a, b| keys[*a].cmp(&keys[*b]).then(a.cmp(b)));
        }
        Ordering::Random(seed) => {
            let keys: Vec<u64> = nodes
                .iter()
                .map(|n| random_key(seed, &n.reference.to_string()))
                .collect();
            order.sort_by(|a, b| keys[*a].cmp(&keys[*b]).then(a.cmp(b)));
        }
    }
    let mut rank = vec![0; nodes.len()];
    for (r, n) in order.into_iter().enumerate() {
        rank[n] = r as u64;
    }
    rank
}

/// Walks the expanded graph in dependency-then-priority order (relationship_graph.rb
/// `traverse`). The caller takes ready vertices with `next` and reports them with `finish`.
pub struct Schedule<'g> {
    graph: &'g Graph,
    blockers: HashMap<Vertex, usize>,
    ready: BTreeMap<(u64, u8, usize), Vertex>,
}

impl<'g> Schedule<'g> {
    pub fn new(graph: &'g Graph) -> Schedule<'g> {
        let mut s = Schedule {
            graph,
            blockers: HashMap::default(),
            ready: BTreeMap::new(),
        };
        for v in graph.vertices() {
            let n = graph.adjacent(v, Direction::Incoming).len();
            s.blockers.insert(v, n);
            if n == 0 {
                s.enqueue(v);
            }
        }
        s
    }

    fn enqueue(&mut self, v: Vertex) {
        let (p, sub) = self.graph.priority_of(v);
        self.ready.insert((p, sub, v.node()), v);
    }

    /// The ready vertex that goes first, if any.
    pub fn next_ready(&mut self) -> Option<Vertex> {
        self.ready.pop_first().map(|(_, v)| v)
    }

    /// Ready vertices, first ones first (without taking them).
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Marks a vertex done; its dependents whose dependencies are all done become ready.
    pub fn finish(&mut self, v: Vertex) {
        for d in self.graph.adjacent(v, Direction::Outgoing) {
            let b = self.blockers.entry(d).or_insert(1);
            *b = b.saturating_sub(1);
            if *b == 0 {
                self.enqueue(d);
            }
        }
    }
}

/// The order a run would apply the managed resources in (anchors left out), or `None` when
/// the graph has a cycle.
pub fn apply_order(graph: &Graph) -> Vec<Vertex> {
    let mut s = Schedule::new(graph);
    let mut out = Vec::new();
    while let Some(v) = s.next_ready() {
        out.push(v);
        s.finish(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_orderings() {
        assert_eq!("manifest".parse::<Ordering>(), Ok(Ordering::Manifest));
        assert_eq!("title-hash".parse::<Ordering>(), Ok(Ordering::TitleHash));
        assert_eq!("random:42".parse::<Ordering>(), Ok(Ordering::Random(42)));
        assert!("random:x".parse::<Ordering>().is_err());
        assert!("sideways".parse::<Ordering>().is_err());
    }

    #[test]
    fn random_is_reproducible_and_seeded() {
        assert_eq!(random_key(1, "Notify[a]"), random_key(1, "Notify[a]"));
        assert_ne!(random_key(1, "Notify[a]"), random_key(2, "Notify[a]"));
    }
}
