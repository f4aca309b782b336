//! A resource's tags: a small insertion-ordered set of shared strings.
//!
//! Every resource carries the tags of its containers, so tags are copied many times while a
//! catalog is built; most resources have fewer than a dozen. A vector searched linearly (by
//! pointer first: copies share their string) beats hashing at that size; an index is built
//! only for unusually large sets.

use crate::fxhash::FxHashSet;
use std::sync::Arc;

/// Past this many tags, membership is looked up in a hash set.
const INDEX_FROM: usize = 24;

#[derive(Clone, Debug, Default)]
pub struct Tags {
    /// Its own tags, in the order added; the shared ones go between `items[..split]` and
    /// `items[split..]`.
    items: Vec<Arc<str>>,
    /// The tags of a container, taken at once (see [`Tags::inherit`]): a resource shares
    /// them with the container's other resources instead of copying them. None of them is
    /// among `items`.
    shared: Option<Arc<Shared>>,
    split: usize,
    /// A bit per tag from its length and end bytes ([`sketch`]), of `items` and `shared`
    /// both: a tag whose bit is clear is not here, without a scan (most tags looked up in a
    /// set are new to it).
    sketch: u64,
    /// Of `items`, once there are many.
    index: Option<Box<FxHashSet<Arc<str>>>>,
    /// What [`Tags::inherit`] shares of this set: its tags as they are, kept until one is
    /// added.
    snapshot: Option<Arc<Shared>>,
}

/// Tags shared by several sets (see [`Tags::inherit`]).
#[derive(Debug)]
struct Shared {
    items: Box<[Arc<str>]>,
    sketch: u64,
    index: Option<FxHashSet<Arc<str>>>,
}

impl Shared {
    fn contains(&self, t: &str) -> bool {
        if self.sketch & sketch(t) == 0 {
            return false;
        }
        match &self.index {
            Some(ix) => ix.contains(t),
            None => self.items.iter().any(|x| &**x == t),
        }
    }
}

/// The bit of [`Tags::sketch`] that tag `t` sets.
fn sketch(t: &str) -> u64 {
    let b = t.as_bytes();
    let (first, last) = (
        b.first().copied().unwrap_or(0),
        b.last().copied().unwrap_or(0),
    );
    let mix = (b.len() as u32)
        .wrapping_mul(31)
        .wrapping_add(first as u32 * 7)
        .wrapping_add(last as u32);
    1 << (mix % 64)
}

impl Tags {
    pub fn contains(&self, t: &str) -> bool {
        if self.sketch & sketch(t) == 0 {
            return false;
        }
        let own = match &self.index {
            Some(ix) => ix.contains(t),
            None => self.items.iter().any(|x| &**x == t),
        };
        own || self.shared.as_ref().is_some_and(|s| s.contains(t))
    }

    fn contains_rc(&self, t: &Arc<str>) -> bool {
        if self.sketch & sketch(t) == 0 {
            return false;
        }
        let own = match &self.index {
            Some(ix) => ix.contains(&**t),
            None => self.items.iter().any(|x| Arc::ptr_eq(x, t) || **x == **t),
        };
        own || self.shared.as_ref().is_some_and(|s| s.contains(t))
    }

    fn push_new(&mut self, t: Arc<str>) {
        self.snapshot = None;
        self.sketch |= sketch(&t);
        if let Some(ix) = &mut self.index {
            ix.insert(t.clone());
        } else if self.items.len() >= INDEX_FROM {
            let mut ix: FxHashSet<Arc<str>> = self.items.iter().cloned().collect();
            ix.insert(t.clone());
            self.index = Some(Box::new(ix));
        }
        self.items.push(t);
    }

    /// A copy with room for `extra` more tags.
    pub fn with_room(&self, extra: usize) -> Tags {
        let mut items = Vec::with_capacity(self.items.len() + extra);
        items.extend(self.items.iter().cloned());
        Tags {
            items,
            shared: self.shared.clone(),
            split: self.split,
            sketch: self.sketch,
            index: self.index.clone(),
            snapshot: None,
        }
    }

    /// Adds a tag unless present; returns whether it was added.
    pub fn insert(&mut self, t: Arc<str>) -> bool {
        if self.contains_rc(&t) {
            return false;
        }
        self.push_new(t);
        true
    }

    /// Adds `t` unless present, allocating only when it is new.
    pub fn insert_str(&mut self, t: &str) -> bool {
        if self.contains(t) {
            return false;
        }
        self.push_new(Arc::from(t));
        true
    }

    /// Adds every tag of `other` that is not present, in `other`'s order.
    pub fn extend_from(&mut self, other: &Tags) {
        self.add_missing(other.iter(), other.len());
    }

    /// Adds the `n` tags of `tags` that are not present, in order.
    fn add_missing<'a>(&mut self, tags: impl Iterator<Item = &'a Arc<str>>, n: usize) {
        for (i, t) in tags.enumerate() {
            if !self.contains_rc(t) {
                if self.items.len() == self.items.capacity() {
                    // Room for the rest at once (most of them are new too).
                    self.items.reserve(n - i);
                }
                self.push_new(t.clone());
            }
        }
    }

    /// [`Tags::extend_from`] a container's tags: the same tags in the same order, but
    /// shared rather than copied when this set has none of them and has shared none yet
    /// (the usual case: a resource taking its class's or defined type's tags). A container
    /// with many resources keeps one copy of its tags for all of them until it gets
    /// another tag.
    pub fn inherit(&mut self, container: &mut Tags) {
        if container.is_empty() {
            return;
        }
        let snap = match &container.snapshot {
            Some(s) => s.clone(),
            None => {
                let items: Box<[Arc<str>]> = container.iter().cloned().collect();
                let sketch = items.iter().fold(0, |b, t| b | sketch(t));
                let index = (items.len() >= INDEX_FROM).then(|| items.iter().cloned().collect());
                let s = Arc::new(Shared {
                    items,
                    sketch,
                    index,
                });
                container.snapshot = Some(s.clone());
                s
            }
        };
        match &self.shared {
            Some(mine) if Arc::ptr_eq(mine, &snap) => {}
            None if !self.items.iter().any(|t| snap.contains(t)) => {
                self.sketch |= snap.sketch;
                self.split = self.items.len();
                self.shared = Some(snap);
            }
            _ => self.add_missing(snap.items.iter(), snap.items.len()),
        }
    }

    /// The tags, in order (for the catalog, which takes them).
    pub fn into_vec(self) -> Vec<Arc<str>> {
        match &self.shared {
            None => self.items,
            Some(_) => self.iter().cloned().collect(),
        }
    }

    pub fn iter(&self) -> TagIter<'_> {
        let shared: &[Arc<str>] = self.shared.as_deref().map_or(&[], |s| &s.items);
        let (before, after) = self.items.split_at(self.split.min(self.items.len()));
        before.iter().chain(shared.iter()).chain(after.iter())
    }

    pub fn len(&self) -> usize {
        self.items.len() + self.shared.as_ref().map_or(0, |s| s.items.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The tags of a [`Tags`], in order.
pub type TagIter<'a> = std::iter::Chain<
    std::iter::Chain<std::slice::Iter<'a, Arc<str>>, std::slice::Iter<'a, Arc<str>>>,
    std::slice::Iter<'a, Arc<str>>,
>;

impl FromIterator<Arc<str>> for Tags {
    fn from_iter<I: IntoIterator<Item = Arc<str>>>(iter: I) -> Tags {
        let mut t = Tags::default();
        for x in iter {
            t.insert(x);
        }
        t
    }
}

impl<'a> IntoIterator for &'a Tags {
    type Item = &'a Arc<str>;
    type IntoIter = TagIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_first_insertion_order_and_no_duplicates() {
        let mut t = Tags::default();
        for x in ["b", "a", "b", "c", "a"] {
            t.insert_str(x);
        }
        let got: Vec<&str> = t.iter().map(|x| &**x).collect();
        assert_eq!(got, ["b", "a", "c"]);
        let mut u: Tags = [Arc::from("c"), Arc::from("d")].into_iter().collect();
        u.extend_from(&t);
        let got: Vec<&str> = u.iter().map(|x| &**x).collect();
        assert_eq!(got, ["c", "d", "b", "a"]);
    }

    fn names(t: &Tags) -> Vec<&str> {
        t.iter().map(|x| &**x).collect()
    }

    #[test]
    fn inherited_tags_are_shared_and_read_as_copied() {
        let mut class: Tags = ["class", "web", "base"]
            .into_iter()
            .map(Arc::from)
            .collect();
        let mut file: Tags = [Arc::from("file")].into_iter().collect();
        file.inherit(&mut class);
        assert!(file.shared.is_some(), "no tag in common: shared");
        assert_eq!(names(&file), ["file", "class", "web", "base"]);
        assert_eq!(file.len(), 4);
        // Added after: last, once; one already inherited is not added again.
        assert!(file.insert_str("extra") && !file.insert_str("web"));
        assert_eq!(names(&file), ["file", "class", "web", "base", "extra"]);
        // The container's later tags are not the resource's (a copy's semantics) ...
        class.insert_str("late");
        assert!(!file.contains("late") && file.contains("base"));
        // ... until it inherits again (the finish pass): then they come after its own.
        file.inherit(&mut class);
        assert_eq!(
            names(&file),
            ["file", "class", "web", "base", "extra", "late"]
        );
        // A tag in common: copied as extend_from would, in the container's order.
        let mut site: Tags = ["web", "site"].into_iter().map(Arc::from).collect();
        site.inherit(&mut class);
        assert!(site.shared.is_none());
        assert_eq!(names(&site), ["web", "site", "class", "base", "late"]);
        assert_eq!(
            site.clone().into_vec().len(),
            5,
            "into_vec keeps every tag once"
        );
        assert_eq!(file.into_vec().len(), 6);
    }

    #[test]
    fn large_sets_stay_sets() {
        let mut t = Tags::default();
        for round in 0..2 {
            for i in 0..100 {
                assert_eq!(t.insert_str(&format!("t{i}")), round == 0);
            }
        }
        assert_eq!(t.len(), 100);
        assert!(t.contains("t99") && !t.contains("t100"));
        let mut u = Tags::default();
        u.insert_str("t5");
        u.extend_from(&t);
        assert_eq!(u.len(), 100);
        assert_eq!(u.iter().next().map(|t| &**t), Some("t5"));
    }
}
