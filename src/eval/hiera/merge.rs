//! Lookup merge strategies (`Puppet::Pops::MergeStrategy`): first, unique, hash, deep.
//! Values arrive highest priority first; `merge(higher, lower)` follows Puppet's order of keys.

use crate::eval::values::value::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Merge {
    First,
    Unique,
    Hash,
    Deep(DeepOptions),
}

/// The options of the deep strategy (`{'strategy' => 'deep', 'knockout_prefix' => '--'}`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeepOptions {
    /// Array elements (and hash values) written with this prefix take the unprefixed value
    /// out of the lower levels' merge.
    pub knockout_prefix: Option<String>,
    /// Merged arrays are sorted.
    pub sort_merged_arrays: bool,
}

impl Merge {
    /// `'deep'` or `{ 'strategy' => 'deep', ... }`.
    pub fn from_value(v: &Value) -> Option<Merge> {
        let (name, opts) = match v {
            Value::Str(s) => (s.clone(), None),
            Value::Hash(h) => (h.get(&Value::str("strategy"))?.to_display(), Some(h)),
            _ => return None,
        };
        let opt = |k: &str| opts.and_then(|h| h.get(&Value::str(k)));
        Some(match name.as_str() {
            "first" => Merge::First,
            "unique" => Merge::Unique,
            "hash" => Merge::Hash,
            "deep" => Merge::Deep(DeepOptions {
                knockout_prefix: opt("knockout_prefix")
                    .filter(|v| !v.is_undef())
                    .map(Value::to_display),
                sort_merged_arrays: opt("sort_merged_arrays") == Some(&Value::Bool(true)),
            }),
            _ => return None,
        })
    }

    /// The values found (highest priority first) merged; a hash or deep merge of a value
    /// that is not a hash fails as Puppet's `checked_merge` does.
    pub fn combine(&self, found: Vec<Value>) -> Result<Option<Value>, String> {
        let mut it = found.into_iter();
        let Some(first) = it.next() else {
            return Ok(None);
        };
        Ok(Some(match self {
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
            Merge::Hash | Merge::Deep(_) => {
                let mut acc = first;
                for lower in it {
                    for (which, v) in [("first", &acc), ("second", &lower)] {
                        if !matches!(v, Value::Hash(_)) {
                            return Err(format!(
                                "The {which} element of the merge has wrong type, {}",
                                crate::eval::types::mismatch(&hash_type(), v)
                            ));
                        }
                    }
                    acc = match (self, acc, lower) {
                        (Merge::Deep(o), higher, lower) => deep_with(lower, higher, o),
                        (_, Value::Hash(h), Value::Hash(mut l)) => {
                            for (k, v) in h {
                                l.insert(k, v);
                            }
                            Value::Hash(l)
                        }
                        (_, h, _) => h,
                    };
                }
                acc
            }
        }))
    }
}

fn hash_type() -> crate::eval::types::PType {
    use crate::eval::types::PType;
    PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, i64::MAX)
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
    deep_with(lower, higher, &DeepOptions::default())
}

/// [`deep`] with the deep strategy's options.
pub fn deep_with(lower: Value, higher: Value, o: &DeepOptions) -> Value {
    let knocked = |v: &Value| -> Option<String> {
        let prefix = o.knockout_prefix.as_deref()?;
        match v {
            Value::Str(s) => s.strip_prefix(prefix).map(str::to_string),
            _ => None,
        }
    };
    match (lower, higher) {
        (Value::Hash(mut l), Value::Hash(h)) => {
            for (k, v) in h {
                // A value that is the knockout prefix alone removes the key.
                if knocked(&v).is_some_and(|rest| rest.is_empty()) {
                    l.shift_remove(&k);
                    continue;
                }
                let merged = match l.get(&k).cloned() {
                    Some(old) => deep_with(old, v, o),
                    None => v,
                };
                l.insert(k, merged);
            }
            Value::Hash(l)
        }
        (Value::Array(mut l), Value::Array(h)) => {
            for x in &h {
                if let Some(gone) = knocked(x) {
                    l.retain(|y| y.to_display() != gone);
                }
            }
            for x in h {
                if knocked(&x).is_none() && !l.contains(&x) {
                    l.push(x);
                }
            }
            if o.sort_merged_arrays {
                l.sort_by_cached_key(Value::to_display);
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
        let deep = Merge::Deep(DeepOptions::default());
        let hi = h(&[("a", Value::Int(1)), ("n", h(&[("x", Value::Int(1))]))]);
        let lo = h(&[
            ("b", Value::Int(2)),
            ("a", Value::Int(9)),
            ("n", h(&[("y", Value::Int(2))])),
        ]);
        assert_eq!(
            Merge::First.combine(vec![hi.clone(), lo.clone()]),
            Ok(Some(hi.clone()))
        );
        assert_eq!(
            Merge::Hash.combine(vec![hi.clone(), lo.clone()]),
            Ok(Some(h(&[
                ("b", Value::Int(2)),
                ("a", Value::Int(1)),
                ("n", h(&[("x", Value::Int(1))]))
            ])))
        );
        assert_eq!(
            deep.combine(vec![hi, lo]),
            Ok(Some(h(&[
                ("b", Value::Int(2)),
                ("a", Value::Int(1)),
                ("n", h(&[("y", Value::Int(2)), ("x", Value::Int(1))]))
            ])))
        );
        assert_eq!(
            Merge::Unique.combine(vec![
                Value::Array(vec![Value::str("a"), Value::str("b")]),
                Value::str("c"),
                Value::Array(vec![Value::str("b")])
            ]),
            Ok(Some(Value::Array(vec![
                Value::str("a"),
                Value::str("b"),
                Value::str("c")
            ])))
        );
        assert_eq!(deep.combine(vec![]), Ok(None));
    }

    fn strs(xs: &[&str]) -> Value {
        Value::Array(xs.iter().map(|x| Value::str(*x)).collect())
    }

    /// Puppet 7.23's results (oracle cases 1344 and 1345).
    #[test]
    fn deep_options_and_checked_merges() {
        let knockout = Merge::from_value(&h(&[
            ("strategy", Value::str("deep")),
            ("knockout_prefix", Value::str("--")),
        ]))
        .expect("deep");
        assert_eq!(
            knockout.combine(vec![
                h(&[("arr", strs(&["x", "--a"]))]),
                h(&[("arr", strs(&["a", "b"]))])
            ]),
            Ok(Some(h(&[("arr", strs(&["b", "x"]))])))
        );
        let sorted = Merge::from_value(&h(&[
            ("strategy", Value::str("deep")),
            ("sort_merged_arrays", Value::Bool(true)),
        ]))
        .expect("deep");
        assert_eq!(
            sorted.combine(vec![
                h(&[("arr", strs(&["z", "a"]))]),
                h(&[("arr", strs(&["m", "b"]))])
            ]),
            Ok(Some(h(&[("arr", strs(&["a", "b", "m", "z"]))])))
        );
        assert_eq!(
            Merge::Hash.combine(vec![Value::str("a"), h(&[("k", Value::str("b"))])]),
            Err(
                "The first element of the merge has wrong type, expects a Hash value, got String"
                    .to_string()
            )
        );
    }
}
