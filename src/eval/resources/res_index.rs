//! The catalog's resource index: (type, title) -> resource.
//!
//! The key of an entry is always the resource's own type and title, which never change once
//! the resource is made, so the index keeps only the hash of the pair and the resource
//! number: a lookup compares the candidates' fields (almost always one). Nothing is copied
//! to insert, and nothing is built to look up.

use crate::eval::compiler::Res;
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
    pub fn get(&self, resources: &[Box<Res>], type_name: &str, title: &str) -> Option<usize> {
        let found = |i: &usize| has_key(&resources[*i], type_name, title);
        match self.slots.get(&key_hash(type_name, title))? {
            Slot::One(i) => Some(*i).filter(found),
            Slot::Many(v) => v.iter().copied().find(found),
        }
    }

    /// Indexes resource `idx` under its type and title, in place of any resource indexed
    /// under them.
    pub fn insert(&mut self, resources: &[Box<Res>], idx: usize) {
        let _ = self.place(resources, idx, true);
    }

    /// Indexes resource `idx` under its type and title unless a resource is indexed under
    /// them: that one is the error.
    pub fn insert_new(&mut self, resources: &[Box<Res>], idx: usize) -> Result<(), usize> {
        self.place(resources, idx, false)
    }

    fn place(&mut self, resources: &[Box<Res>], idx: usize, replace: bool) -> Result<(), usize> {
        let r = &resources[idx];
        let same = |i: usize| has_key(&resources[i], &r.type_name, &r.title);
        let slot = match self.slots.entry(key_hash(&r.type_name, &r.title)) {
            Entry::Vacant(e) => {
                e.insert(Slot::One(idx));
                return Ok(());
            }
            Entry::Occupied(e) => e.into_mut(),
        };
        let found = match slot {
            Slot::One(i) if same(*i) => i,
            Slot::One(i) => {
                *slot = Slot::Many(vec![*i, idx]);
                return Ok(());
            }
            Slot::Many(v) => match v.iter_mut().find(|i| same(**i)) {
                Some(i) => i,
                None => {
                    v.push(idx);
                    return Ok(());
                }
            },
        };
        if !replace {
            return Err(*found);
        }
        *found = idx;
        Ok(())
    }

    /// Takes resource `idx` out of the index (if it is what its key finds).
    pub fn remove(&mut self, resources: &[Box<Res>], idx: usize) {
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
        if self.map.is_empty() {
            return None;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ResourceKind;

    fn res(type_name: &str, title: &str) -> Box<Res> {
        Box::new(Res {
            type_name: type_name.into(),
            title: title.into(),
            params: Default::default(),
            setters: Default::default(),
            tags: Default::default(),
            file: None,
            line: None,
            exported: false,
            virtual_: false,
            kind: ResourceKind::CompilableType,
            scope: 0,
            source: std::sync::Arc::from(""),
            evaluated: false,
            is_define: false,
            dropped: false,
            untagged_title: false,
            span: Default::default(),
        })
    }

    #[test]
    fn finds_by_type_and_title_and_refuses_duplicates() {
        let rs = vec![
            res("File", "/a"),
            res("Notify", "/a"),
            res("File", "/b"),
            res("File", "/a"),
        ];
        let mut ix = ResIndex::default();
        for i in 0..3 {
            assert_eq!(ix.insert_new(&rs, i), Ok(()));
        }
        assert_eq!(ix.insert_new(&rs, 3), Err(0));
        assert_eq!(ix.get(&rs, "File", "/a"), Some(0));
        assert_eq!(ix.get(&rs, "Notify", "/a"), Some(1));
        assert_eq!(ix.get(&rs, "File", "/c"), None);
        ix.insert(&rs, 3);
        assert_eq!(ix.get(&rs, "File", "/a"), Some(3));
        ix.remove(&rs, 0);
        assert_eq!(ix.get(&rs, "File", "/a"), Some(3));
        ix.remove(&rs, 3);
        assert_eq!(ix.get(&rs, "File", "/a"), None);
        assert_eq!(ix.get(&rs, "File", "/b"), Some(2));
    }

    #[test]
    fn a_slot_of_several_resources_is_searched() {
        let rs = vec![res("File", "/a"), res("File", "/b")];
        let mut ix = ResIndex::default();
        // As if `File[/b]` had the hash of `File[/a]`: a slot holding both.
        let h = key_hash("File", "/a");
        ix.slots.insert(h, Slot::Many(vec![1, 0]));
        assert_eq!(ix.get(&rs, "File", "/a"), Some(0));
        assert_eq!(ix.insert_new(&rs, 0), Err(0));
        ix.remove(&rs, 0);
        assert_eq!(ix.get(&rs, "File", "/a"), None);
        assert!(matches!(ix.slots.get(&h), Some(Slot::Many(v)) if v == &[1]));
        assert_eq!(ix.insert_new(&rs, 0), Ok(()));
        assert_eq!(ix.get(&rs, "File", "/a"), Some(0));
        assert!(matches!(ix.slots.get(&h), Some(Slot::Many(v)) if v == &[1, 0]));
    }
}
