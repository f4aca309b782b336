//! Lookup merge strategies (`Puppet::Pops::MergeStrategy`): first, unique, hash, deep.
//! Values arrive highest priority first; `merge(higher, lower)` follows Puppet's order of keys.

use crate::eval::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    First,
    Unique,
    Hash,
    Deep,
}

impl Merge {
    /// `'deep'` or `{ 'strategy' => 'deep', ... }`.
    pub fn from_value(v: &Value) -> Option<Merge> {
        let name = match v {
            Value::Str(s) => s.clone(),
            Value::Hash(h) => h.get(&Value::str("strategy"))?.to_display(),
            _ => return None,
        };
        Some(match name.as_str() {
            "first" => Merge::First,
            "unique" => Merge::Unique,
            "hash" => Merge::Hash,
            "deep" => Merge::Deep,
            _ => return None,
        })
    }

    pub fn combine(self, found: Vec<Value>) -> Option<Value> {
        let mut it = found.into_iter();
        let first = it.next()?;
        Some(match self {
            Merge::First => first,
            Merge::Unique => {
                let mut acc = flat(first);
                for v in it {
                    for x in flat(v) {
                        if !acc.contains(&x) {
                            acc.push(x);
                        }
                    }
                }
                let mut uniq: Vec<Value> = vec![];
                for x in acc {
                    if !uniq.contains(&x) {
                        uniq.push(x);
                    }
                }
                Value::Array(uniq)
            }
            Merge::Hash => it.fold(first, |higher, lower| match (higher, lower) {
                (Value::Hash(h), Value::Hash(mut l)) => {
                    for (k, v) in h {
                        l.insert(k, v);
                    }
                    Value::Hash(l)
                }
                (h, _) => h,
            }),
            Merge::Deep => it.fold(first, |higher, lower| deep(lower, higher)),
        })
    }
}

fn flat(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a
            .into_iter()
            .flat_map(|x| match x {
                Value::Array(_) => flat(x),
                other => vec![other],
            })
            .collect(),
        other => vec![other],
    }
}

/// `DeepMerge.deep_merge!(source = higher, dest = lower)`: hashes merge recursively with the
/// lower's keys first, arrays are unioned (lower first), other values: the higher wins.
pub fn deep(lower: Value, higher: Value) -> Value {
    match (lower, higher) {
        (Value::Hash(mut l), Value::Hash(h)) => {
            for (k, v) in h {
                let merged = match l.get(&k).cloned() {
                    Some(old) => deep(old, v),
                    None => v,
                };
                l.insert(k, merged);
            }
            Value::Hash(l)
        }
        (Value::Array(mut l), Value::Array(h)) => {
            for x in h {
                if !l.contains(&x) {
                    l.push(x);
                }
            }
            Value::Array(l)
        }
        (_, h) => h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, Value)]) -> Value {
        Value::Hash(
            pairs
                .iter()
                .map(|(k, v)| (Value::str(*k), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn strategies() {
        let hi = h(&[("a", Value::Int(1)), ("n", h(&[("x", Value::Int(1))]))]);
        let lo = h(&[
            ("b", Value::Int(2)),
            ("a", Value::Int(9)),
            ("n", h(&[("y", Value::Int(2))])),
        ]);
        assert_eq!(
            Merge::First.combine(vec![hi.clone(), lo.clone()]),
            Some(hi.clone())
        );
        assert_eq!(
            Merge::Hash.combine(vec![hi.clone(), lo.clone()]),
            Some(h(&[
                ("b", Value::Int(2)),
                ("a", Value::Int(1)),
                ("n", h(&[("x", Value::Int(1))]))
            ]))
        );
        assert_eq!(
            Merge::Deep.combine(vec![hi, lo]),
            Some(h(&[
                ("b", Value::Int(2)),
                ("a", Value::Int(1)),
                ("n", h(&[("y", Value::Int(2)), ("x", Value::Int(1))]))
            ]))
        );
        assert_eq!(
            Merge::Unique.combine(vec![
                Value::Array(vec![Value::str("a"), Value::str("b")]),
                Value::str("c"),
                Value::Array(vec![Value::str("b")])
            ]),
            Some(Value::Array(vec![
                Value::str("a"),
                Value::str("b"),
                Value::str("c")
            ]))
        );
        assert_eq!(Merge::Deep.combine(vec![]), None);
    }
}
