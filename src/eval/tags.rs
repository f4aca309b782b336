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
    items: Vec<Arc<str>>,
    /// A bit per tag from its length and end bytes ([`sketch`]): a tag whose bit is clear is
    /// not here, without a scan (most tags looked up in a set are new to it).
    sketch: u64,
    index: Option<Box<FxHashSet<Arc<str>>>>,
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
        match &self.index {
            Some(ix) => ix.contains(t),
            None => self.items.iter().any(|x| &**x == t),
        }
    }

    fn contains_rc(&self, t: &Arc<str>) -> bool {
        if self.sketch & sketch(t) == 0 {
            return false;
        }
        match &self.index {
            Some(ix) => ix.contains(&**t),
            None => self.items.iter().any(|x| Arc::ptr_eq(x, t) || **x == **t),
        }
    }

    fn push_new(&mut self, t: Arc<str>) {
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
            sketch: self.sketch,
            index: self.index.clone(),
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
        for (i, t) in other.items.iter().enumerate() {
            if !self.contains_rc(t) {
                if self.items.len() == self.items.capacity() {
                    // Room for the rest at once (most of them are new too).
                    self.items.reserve(other.items.len() - i);
                }
                self.push_new(t.clone());
            }
        }
    }

    /// The tags, in order (for the catalog, which takes them).
    pub fn into_vec(self) -> Vec<Arc<str>> {
        self.items
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<str>> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

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
    type IntoIter = std::slice::Iter<'a, Arc<str>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
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
