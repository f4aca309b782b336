//! The attributes of a compiled resource, in the order they were set.
//!
//! A resource has a handful of attributes (mixed 10k: four on average), so this is a vector
//! searched linearly rather than a hash map: one allocation a resource instead of two (the
//! entries and the hash index), and no hashing on every lookup. The keys compare as the
//! short strings they are; a type with hundreds of attributes is still a few hundred
//! comparisons per lookup. The names are shared strings: the evaluator gives every resource
//! the same `ensure` (see `Compiler::attr_name`), not a copy each.

use crate::eval::values::value::Value;
use std::sync::Arc;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamMap(Vec<(Arc<str>, Value)>);

impl ParamMap {
    pub fn new() -> ParamMap {
        ParamMap(Vec::new())
    }

    pub fn with_capacity(n: usize) -> ParamMap {
        ParamMap(Vec::with_capacity(n))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Room for `n` more attributes.
    pub fn reserve(&mut self, n: usize) {
        self.0.reserve(n)
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|(k, _)| **k == *name)
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.position(name).map(|i| &self.0[i].1)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.position(name).map(|i| &mut self.0[i].1)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Sets `name` (in its place if it is set, else last); the value it had.
    pub fn insert<K: AsRef<str> + Into<Arc<str>>>(
        &mut self,
        name: K,
        value: Value,
    ) -> Option<Value> {
        match self.position(name.as_ref()) {
            Some(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            None => {
                self.0.push((name.into(), value));
                None
            }
        }
    }

    /// Sets `name` at position `at` (moving it there if it is set).
    pub fn shift_insert<K: AsRef<str> + Into<Arc<str>>>(
        &mut self,
        at: usize,
        name: K,
        value: Value,
    ) {
        if let Some(i) = self.position(name.as_ref()) {
            self.0.remove(i);
        }
        self.0.insert(at.min(self.0.len()), (name.into(), value));
    }

    /// Unsets `name`, keeping the order of the others; the value it had.
    pub fn shift_remove(&mut self, name: &str) -> Option<Value> {
        self.position(name).map(|i| self.0.remove(i).1)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Arc<str>, &mut Value) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v))
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Arc<str>, &Value)> + ExactSizeIterator {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Arc<str>> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }
}

impl<'a> IntoIterator for &'a ParamMap {
    type Item = (&'a Arc<str>, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Arc<str>, Value)>,
        fn(&'a (Arc<str>, Value)) -> (&'a Arc<str>, &'a Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl IntoIterator for ParamMap {
    type Item = (Arc<str>, Value);
    type IntoIter = std::vec::IntoIter<(Arc<str>, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<K: AsRef<str> + Into<Arc<str>>> FromIterator<(K, Value)> for ParamMap {
    /// Later pairs of a name set it again, in the place of the first (as a map's insert).
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(pairs: I) -> ParamMap {
        let mut map = ParamMap::new();
        map.extend(pairs);
        map
    }
}

impl<K: AsRef<str> + Into<Arc<str>>> Extend<(K, Value)> for ParamMap {
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, pairs: I) {
        for (k, v) in pairs {
            self.insert(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    #[test]
    fn keeps_the_order_of_first_setting_as_an_index_map_does() {
        let mut m = ParamMap::new();
        assert_eq!(m.insert("b", s("1")), None);
        assert_eq!(m.insert("a", s("2")), None);
        assert_eq!(m.insert("b", s("3")), Some(s("1")));
        assert_eq!(m.keys().map(|k| &**k).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(m.get("b"), Some(&s("3")));
        m.shift_insert(0, "a", s("4"));
        assert_eq!(m.keys().map(|k| &**k).collect::<Vec<_>>(), ["a", "b"]);
        m.shift_insert(5, "c", s("5"));
        assert_eq!(m.shift_remove("a"), Some(s("4")));
        assert_eq!(m.keys().map(|k| &**k).collect::<Vec<_>>(), ["b", "c"]);
        m.retain(|k, _| &**k != "b");
        assert_eq!(m.len(), 1);
        assert!(!m.contains_key("b") && m.contains_key("c"));
        let again: ParamMap = [("x", s("1")), ("x", s("2"))].into_iter().collect();
        assert_eq!(again.len(), 1);
        assert_eq!(again.get("x"), Some(&s("2")));
    }
}
