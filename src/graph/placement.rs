//! Placement of resources that have no relationship between them: Salt's `order`
//! metaparameter and Rudder's alphanumeric ordering with `priority`.
//!
//! Both only change the *priority* the ready queue uses (`order::Schedule`); relationships
//! are untouched, so an explicit edge always wins.
//!
//! - `order => N | 'first' | 'last'` (Salt's `order_chunks`): `first` is 0, a number is
//!   itself, a resource without `order` gets `cap` (the largest number + 100, or 1), `last`
//!   `cap + 1000000`, a negative number counts back from `last`. A resource without its own
//!   `order` takes the one of its nearest enclosing container that has one. Ties keep the
//!   ordering's own rank (manifest order by default).
//! - `--ordering alphanumeric` (Rudder): a *directive* is a defined-type instance declared
//!   in a class (or a plain resource declared there), its *technique* is its type, its
//!   *rule* the enclosing class. The directives of a technique are sorted by (priority,
//!   class name, title); techniques come in the order of the (class name, title) of their
//!   first directive; the resources of a directive keep manifest order.
//!
//! A container takes the smallest priority of its contents, so that its anchors never hold
//! back a resource that should go first.

use super::requisites::{order_value, priority_value, OrderValue};
use super::{Graph, Ordering};
use crate::catalog::{Catalog, Resource};
use std::collections::BTreeMap;

/// Rudder's default priority.
pub const DEFAULT_PRIORITY: u8 = 5;

type Key = (i64, u64, u64, u64);

/// Re-ranks `g.priority` for `order` metaparameters and the alphanumeric ordering.
pub fn adjust(g: &mut Graph, catalog: &Catalog, ordering: Ordering) {
    let resource = |n: usize| g.nodes[n].index.map(|i| &catalog.resources[i]);
    let uses_order =
        (0..g.nodes.len()).any(|n| resource(n).is_some_and(|r| r.parameters.contains_key("order")));
    if ordering != Ordering::Alphanumeric && !uses_order {
        return;
    }
    let up = containers_above(g);
    let base: Vec<(u64, u64, u64)> = if ordering == Ordering::Alphanumeric {
        alphanumeric(g, catalog, &up)
    } else {
        g.priority.iter().map(|&p| (p, 0, 0)).collect()
    };
    let orders: Vec<Option<OrderValue>> = (0..g.nodes.len())
        .map(|n| {
            resource(n)
                .and_then(|r| r.parameters.get("order"))
                .and_then(order_value)
        })
        .collect();
    let cap = orders
        .iter()
        .filter_map(|o| match o {
            Some(OrderValue::Number(k)) if *k > 0 => Some(*k + 100),
            _ => None,
        })
        .max()
        .unwrap_or(1);
    let order_key = |o: Option<OrderValue>| match o {
        None => cap,
        Some(OrderValue::First) => 0,
        Some(OrderValue::Number(k)) if k >= 0 => k,
        Some(OrderValue::Number(k)) => cap + 1_000_000 + k,
        Some(OrderValue::Last) => cap + 1_000_000,
    };
    let n = g.nodes.len();
    let mut keys: Vec<Option<Key>> = vec![None; n];
    for m in 0..n {
        if g.nodes[m].container {
            continue;
        }
        // The nearest `order` on the resource or a container above it.
        let mut o = orders[m];
        let mut cur = m;
        while o.is_none() {
            match up[cur] {
                Some(p) => {
                    o = orders[p];
                    cur = p;
                }
                None => break,
            }
        }
        let (a, b, c) = base[m];
        keys[m] = Some((order_key(o), a, b, c));
    }
    // Containers: the smallest key of their contents (empty ones go last).
    let mut final_keys: Vec<Key> = Vec::with_capacity(n);
    for m in 0..n {
        let k = if g.nodes[m].container {
            let mut best: Option<Key> = None;
            let mut stack = vec![m];
            let mut seen = vec![false; n];
            while let Some(x) = stack.pop() {
                if std::mem::replace(&mut seen[x], true) {
                    continue;
                }
                if let Some(k) = keys[x] {
                    best = Some(best.map_or(k, |b: Key| b.min(k)));
                }
                stack.extend(g.children[x].iter().copied());
            }
            best.unwrap_or((i64::MAX, u64::MAX, u64::MAX, m as u64))
        } else {
            keys[m].expect("managed nodes have keys")
        };
        final_keys.push(k);
    }
    let mut sorted: Vec<usize> = (0..n).collect();
    sorted.sort_by_key(|&m| (final_keys[m], m));
    for (rank, m) in sorted.into_iter().enumerate() {
        g.priority[m] = rank as u64;
    }
}

/// The container directly above each node: its class or defined-type instance, else its
/// stage.
pub fn containers_above(g: &Graph) -> Vec<Option<usize>> {
    let mut up: Vec<Option<usize>> = vec![None; g.nodes.len()];
    for (p, kids) in g.children.iter().enumerate() {
        let is_stage = g.nodes[p].reference.type_name == "Stage";
        for &k in kids {
            let current_is_stage = up[k].is_some_and(|c| g.nodes[c].reference.type_name == "Stage");
            if up[k].is_none() || (current_is_stage && !is_stage) {
                up[k] = Some(p);
            }
        }
    }
    up
}

/// The directive (outermost defined-type instance below a class, or the resource itself)
/// and the enclosing class of a managed node.
pub fn directive_and_class(g: &Graph, up: &[Option<usize>], n: usize) -> (usize, Option<usize>) {
    let mut directive = n;
    let mut cur = n;
    for _ in 0..g.nodes.len() {
        let Some(p) = up[cur] else { break };
        match g.nodes[p].reference.type_name.as_str() {
            "Class" | "Node" => return (directive, Some(p)),
            "Stage" => return (directive, None),
            _ => directive = p,
        }
        cur = p;
    }
    (directive, None)
}

fn priority_of(r: Option<&Resource>) -> u8 {
    r.and_then(|r| r.parameters.get("priority"))
        .and_then(priority_value)
        .unwrap_or(DEFAULT_PRIORITY)
}

/// Rudder's (technique, directive, position) rank of every managed node.
fn alphanumeric(g: &Graph, catalog: &Catalog, up: &[Option<usize>]) -> Vec<(u64, u64, u64)> {
    let resource = |n: usize| g.nodes[n].index.map(|i| &catalog.resources[i]);
    let class_name = |c: Option<usize>| {
        c.map(|c| g.nodes[c].reference.title.to_ascii_lowercase())
            .unwrap_or_default()
    };
    // technique -> directives (priority, class, title, node)
    let mut techniques: BTreeMap<String, Vec<(u8, String, String, usize)>> = BTreeMap::new();
    let mut directive_of = vec![None; g.nodes.len()];
    for (n, slot) in directive_of.iter_mut().enumerate() {
        if g.nodes[n].container {
            continue;
        }
        let (d, class) = directive_and_class(g, up, n);
        *slot = Some(d);
        let entry = techniques
            .entry(g.nodes[d].reference.type_name.clone())
            .or_default();
        if !entry.iter().any(|x| x.3 == d) {
            entry.push((
                priority_of(resource(d)),
                class_name(class),
                g.nodes[d].reference.title.clone(),
                d,
            ));
        }
    }
    let mut order: Vec<(String, String, String, Vec<usize>)> = techniques
        .into_iter()
        .map(|(technique, mut ds)| {
            ds.sort();
            let (_, class, title, _) = ds[0].clone();
            (
                class,
                title,
                technique,
                ds.into_iter().map(|d| d.3).collect(),
            )
        })
        .collect();
    order.sort();
    let mut rank_of_directive = vec![(u64::MAX, u64::MAX); g.nodes.len()];
    for (t, (_, _, _, ds)) in order.iter().enumerate() {
        for (k, &d) in ds.iter().enumerate() {
            rank_of_directive[d] = (t as u64, k as u64);
        }
    }
    (0..g.nodes.len())
        .map(|n| match directive_of[n] {
            Some(d) => {
                let (t, k) = rank_of_directive[d];
                (t, k, g.priority[n])
            }
            None => (u64::MAX, u64::MAX, g.priority[n]),
        })
        .collect()
}
