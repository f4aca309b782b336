//! The attributes of a compiled resource, in the order they were set.
//!
//! A resource has a handful of attributes (mixed 10k: four on average), so this is a vector
//! searched linearly rather than a hash map: one allocation a resource instead of two (the
//! entries and the hash index), and no hashing on every lookup. The keys compare as the
//! short strings they are; a type with hundreds of attributes is still a few hundred
//! comparisons per lookup.

use super::value::Value;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamMap(Vec<(String, Value)>);

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
        self.0.iter().position(|(k, _)| k == name)
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Sets `name` (in its place if it is set, else last); the value it had.
    pub fn insert(&mut self, name: String, value: Value) -> Option<Value> {
        match self.position(&name) {
            Some(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            None => {
                self.0.push((name, value));
                None
            }
        }
    }

    /// Sets `name` at position `at` (moving it there if it is set).
    pub fn shift_insert(&mut self, at: usize, name: String, value: Value) {
        if let Some(i) = self.position(&name) {
            self.0.remove(i);
        }
        self.0.insert(at.min(self.0.len()), (name, value));
    }

    /// Unsets `name`, keeping the order of the others; the value it had.
    pub fn shift_remove(&mut self, name: &str) -> Option<Value> {
        self.position(name).map(|i| self.0.remove(i).1)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v))
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&String, &Value)> + ExactSizeIterator {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Value)> {
        self.0.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.0.iter_mut().map(|(_, v)| v)
    }

    pub fn first(&self) -> Option<(&String, &Value)> {
        self.0.first().map(|(k, v)| (k, v))
    }
}

impl<'a> IntoIterator for &'a ParamMap {
    type Item = (&'a String, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Value)>,
        fn(&'a (String, Value)) -> (&'a String, &'a Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl IntoIterator for ParamMap {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<(String, Value)> for ParamMap {
    /// Later pairs of a name set it again, in the place of the first (as a map's insert).
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(pairs: I) -> ParamMap {
        let mut map = ParamMap::new();
        map.extend(pairs);
        map
    }
}

impl Extend<(String, Value)> for ParamMap {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, pairs: I) {
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
        assert_eq!(m.insert("b".into(), s("1")), None);
        assert_eq!(m.insert("a".into(), s("2")), None);
        assert_eq!(m.insert("b".into(), s("3")), Some(s("1")));
        assert_eq!(m.keys().map(String::as_str).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(m.get("b"), Some(&s("3")));
        m.shift_insert(0, "a".into(), s("4"));
        assert_eq!(m.keys().map(String::as_str).collect::<Vec<_>>(), ["a", "b"]);
        m.shift_insert(5, "c".into(), s("5"));
        assert_eq!(m.shift_remove("a"), Some(s("4")));
        assert_eq!(m.keys().map(String::as_str).collect::<Vec<_>>(), ["b", "c"]);
        m.retain(|k, _| k != "b");
        assert_eq!(m.len(), 1);
        assert!(!m.contains_key("b") && m.contains_key("c"));
        let again: ParamMap = [("x".to_string(), s("1")), ("x".to_string(), s("2"))]
            .into_iter()
            .collect();
        assert_eq!(again.len(), 1);
        assert_eq!(again.get("x"), Some(&s("2")));
    }
}
