//! The catalog's resource index: (type, title) -> resource.
//!
//! The key of an entry is always the resource's own type and title, which never change once
//! the resource is made, so the index keeps only the hash of the pair and the resource
//! number: a lookup compares the candidates' fields (almost always one). Nothing is copied
//! to insert, and nothing is built to look up.

use super::compiler::Res;
use crate::fxhash::{FxHashMap, FxHasher};
use std::collections::hash_map::Entry;
use std::hash::{Hash, Hasher};

#[derive(Default)]
pub struct ResIndex {
    slots: FxHashMap<u64, Slot>,
}

/// The resources whose keys have one hash: one, or (a collision) several.
enum Slot {
    One(usize),
    Many(Vec<usize>),
}

fn key_hash(type_name: &str, title: &str) -> u64 {
    let mut h = FxHasher::default();
    type_name.hash(&mut h);
    title.hash(&mut h);
    h.finish()
}

fn has_key(r: &Res, type_name: &str, title: &str) -> bool {
    r.title == title && r.type_name == type_name
}

impl ResIndex {
    /// The resource indexed under `type_name` and `title`.
    pub fn get(&self, resources: &[Res], type_name: &str, title: &str) -> Option<usize> {
        let found = |i: &usize| has_key(&resources[*i], type_name, title);
        match self.slots.get(&key_hash(type_name, title))? {
            Slot::One(i) => Some(*i).filter(found),
            Slot::Many(v) => v.iter().copied().find(found),
        }
    }

    /// Indexes resource `idx` under its type and title, in place of any resource indexed
    /// under them.
    pub fn insert(&mut self, resources: &[Res], idx: usize) {
        let r = &resources[idx];
        let same = |i: usize| has_key(&resources[i], &r.type_name, &r.title);
        match self.slots.entry(key_hash(&r.type_name, &r.title)) {
            Entry::Vacant(e) => {
                e.insert(Slot::One(idx));
            }
            Entry::Occupied(mut e) => {
                let slot = e.get_mut();
                match slot {
                    Slot::One(i) if same(*i) => *i = idx,
                    Slot::One(i) => *slot = Slot::Many(vec![*i, idx]),
                    Slot::Many(v) => match v.iter_mut().find(|i| same(**i)) {
                        Some(i) => *i = idx,
                        None => v.push(idx),
                    },
                }
            }
        }
    }

    /// Takes resource `idx` out of the index (if it is what its key finds).
    pub fn remove(&mut self, resources: &[Res], idx: usize) {
        let r = &resources[idx];
        let Entry::Occupied(mut e) = self.slots.entry(key_hash(&r.type_name, &r.title)) else {
            return;
        };
        match e.get_mut() {
            Slot::One(i) if *i == idx => {
                e.remove();
            }
            Slot::One(_) => {}
            Slot::Many(v) => {
                v.retain(|i| *i != idx);
                if v.is_empty() {
                    e.remove();
                }
            }
        }
    }
}

/// Other names of resources (namevars, `alias` values, composite keys): (type, name) ->
/// resource, looked up without building a key.
#[derive(Default)]
pub struct AliasIndex {
    map: FxHashMap<(String, String), usize>,
}

/// A (type, name) pair, owned or borrowed, hashed and compared as the owned tuple is.
trait KeyPair {
    fn parts(&self) -> (&str, &str);
}

impl KeyPair for (String, String) {
    fn parts(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl KeyPair for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        (self.0, self.1)
    }
}

impl<'a> std::borrow::Borrow<dyn KeyPair + 'a> for (String, String) {
    fn borrow(&self) -> &(dyn KeyPair + 'a) {
        self
    }
}

impl Hash for dyn KeyPair + '_ {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // As `(String, String)` hashes: each part in turn.
        let (a, b) = self.parts();
        a.hash(h);
        b.hash(h);
    }
}

impl PartialEq for dyn KeyPair + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn KeyPair + '_ {}

impl AliasIndex {
    pub fn get(&self, type_name: &str, name: &str) -> Option<usize> {
        self.map.get(&(type_name, name) as &dyn KeyPair).copied()
    }

    pub fn insert(&mut self, type_name: &str, name: String, idx: usize) {
        self.map.insert((type_name.to_string(), name), idx);
    }

    /// Drops every name of resource `idx`.
    pub fn remove_resource(&mut self, idx: usize) {
        self.map.retain(|_, v| *v != idx);
    }
}
