//! A map from graph nodes or vertices to values, held in one vector indexed by the key.
//!
//! The graph stage and the runner look a vertex's values up at every step of the walk. A hash
//! map puts neighbouring resources in scattered buckets, so once a catalog of 100,000
//! resources no longer fits the caches every lookup is a miss; a vector keeps them in node
//! order, which is the order the walk mostly goes in.

use super::Vertex;
use std::marker::PhantomData;

/// A key with a small dense number: a node, or a vertex (three per node).
pub trait Slot: Copy {
    fn slot(self) -> usize;
    fn from_slot(slot: usize) -> Self;
}

impl Slot for usize {
    fn slot(self) -> usize {
        self
    }
    fn from_slot(slot: usize) -> usize {
        slot
    }
}

impl Slot for Vertex {
    fn slot(self) -> usize {
        match self {
            Vertex::Resource(n) => 3 * n,
            Vertex::Admissible(n) => 3 * n + 1,
            Vertex::Completed(n) => 3 * n + 2,
        }
    }
    fn from_slot(slot: usize) -> Vertex {
        let n = slot / 3;
        match slot % 3 {
            0 => Vertex::Resource(n),
            1 => Vertex::Admissible(n),
            _ => Vertex::Completed(n),
        }
    }
}

/// The subset of `HashMap`'s interface the graph and the runner use, over a vector that grows
/// to the largest key inserted.
#[derive(Clone, Debug)]
pub struct DenseMap<K, T> {
    slots: Vec<Option<T>>,
    key: PhantomData<K>,
}

impl<K, T> Default for DenseMap<K, T> {
    fn default() -> Self {
        DenseMap {
            slots: Vec::new(),
            key: PhantomData,
        }
    }
}

impl<K: Slot, T> DenseMap<K, T> {
    /// Room for the keys below `key` without growing.
    pub fn reserve_below(&mut self, key: K) {
        let n = key.slot();
        if n > self.slots.len() {
            self.slots.resize_with(n, || None);
        }
    }

    pub fn get(&self, k: &K) -> Option<&T> {
        self.slots.get(k.slot()).and_then(Option::as_ref)
    }

    pub fn contains_key(&self, k: &K) -> bool {
        self.get(k).is_some()
    }

    pub fn insert(&mut self, k: K, v: T) -> Option<T> {
        let n = k.slot();
        if n >= self.slots.len() {
            self.slots.resize_with(n + 1, || None);
        }
        self.slots[n].replace(v)
    }

    pub fn remove(&mut self, k: &K) -> Option<T> {
        self.slots.get_mut(k.slot()).and_then(Option::take)
    }

    /// The value of `k`, inserted as `T::default()` when there is none (`entry(k).or_default()`).
    pub fn or_default(&mut self, k: K) -> &mut T
    where
        T: Default,
    {
        if !self.contains_key(&k) {
            self.insert(k, T::default());
        }
        self.slots[k.slot()].as_mut().expect("inserted above")
    }

    /// The keys, in slot order.
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_some())
            .map(|(n, _)| K::from_slot(n))
    }
}

impl<K: Slot, T> std::ops::Index<&K> for DenseMap<K, T> {
    type Output = T;
    fn index(&self, k: &K) -> &T {
        self.get(k).expect("a key of the map")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_a_map() {
        let mut m: DenseMap<Vertex, u32> = DenseMap::default();
        assert!(m.get(&Vertex::Completed(7)).is_none());
        assert_eq!(m.insert(Vertex::Completed(7), 1), None);
        assert_eq!(m.insert(Vertex::Resource(2), 2), None);
        assert_eq!(m.insert(Vertex::Completed(7), 3), Some(1));
        *m.or_default(Vertex::Admissible(2)) += 5;
        *m.or_default(Vertex::Resource(2)) += 5;
        assert_eq!(m[&Vertex::Resource(2)], 7);
        assert!(!m.contains_key(&Vertex::Admissible(7)));
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            [
                Vertex::Resource(2),
                Vertex::Admissible(2),
                Vertex::Completed(7)
            ]
        );
        assert_eq!(m.remove(&Vertex::Completed(7)), Some(3));
        assert_eq!(m.remove(&Vertex::Completed(7)), None);
        assert_eq!(m.remove(&Vertex::Completed(700)), None);
        assert_eq!(m.keys().count(), 2);
        let mut byn: DenseMap<usize, &str> = DenseMap::default();
        byn.insert(4, "d");
        assert_eq!((byn.get(&4), byn.get(&3)), (Some(&"d"), None));
    }
}
