//! Instance checks (`=~`, typed parameters) and assignability of one type to another.

use super::*;

impl PType {
    /// Whether `v` is an instance of this type.
    pub fn is_instance(&self, v: &Value) -> bool {
        use PType::*;
        match self {
            Any => true,
            Undef => v.is_undef(),
            Default => matches!(v, Value::Default),
            Boolean(b) => matches!(v, Value::Bool(x) if b.is_none_or(|b| b == *x)),
            Scalar => matches!(
                v,
                Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Regex(_)
            ),
            ScalarData => matches!(
                v,
                Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
            ),
            Data => match v {
                Value::Undef | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => {
                    true
                }
                Value::Array(a) => a.iter().all(|x| Data.is_instance(x)),
                Value::Hash(h) => h
                    .iter()
                    .all(|(k, x)| matches!(k, Value::Str(_)) && Data.is_instance(x)),
                _ => false,
            },
            RichData => true,
            Numeric => matches!(v, Value::Int(_) | Value::Float(_)),
            Integer(min, max) => matches!(v, Value::Int(i) if i >= min && i <= max),
            Float(min, max) => matches!(v, Value::Float(f) if f >= min && f <= max),
            String(min, max, _) => match v {
                Value::Str(s) => {
                    let n = s.chars().count() as i64;
                    n >= *min && n <= *max
                }
                _ => false,
            },
            Enum(names, ci) => match v {
                Value::Str(s) => {
                    names.is_empty()
                        || names
                            .iter()
                            .any(|n| n == s || (*ci && n.to_lowercase() == s.to_lowercase()))
                }
                _ => false,
            },
            Pattern(pats) => match v {
                Value::Str(s) => {
                    pats.is_empty()
                        || pats
                            .iter()
                            .any(|p| Regex::new(p).is_ok_and(|r| r.is_match(s)))
                }
                _ => false,
            },
            Regexp(src) => match v {
                Value::Regex(r) => src.as_ref().is_none_or(|s| **s == *r.source),
                _ => false,
            },
            Array(elem, min, max) => match v {
                Value::Array(a) => {
                    let n = a.len() as i64;
                    n >= *min && n <= *max && a.iter().all(|x| elem.is_instance(x))
                }
                _ => false,
            },
            Hash(kt, vt, min, max) => match v {
                Value::Hash(h) => {
                    let n = h.len() as i64;
                    n >= *min
                        && n <= *max
                        && h.iter()
                            .all(|(k, x)| kt.is_instance(k) && vt.is_instance(x))
                }
                _ => false,
            },
            Tuple(types, min, max) => match v {
                Value::Array(a) => {
                    let n = a.len() as i64;
                    n >= *min
                        && n <= *max
                        && a.iter().enumerate().all(|(i, x)| {
                            types
                                .get(i)
                                .or(types.last())
                                .is_none_or(|t| t.is_instance(x))
                        })
                }
                _ => false,
            },
            Struct(entries) => match v {
                Value::Hash(h) => {
                    h.keys().all(|k| {
                        k.as_str()
                            .is_some_and(|k| entries.iter().any(|(n, _, _)| n == k))
                    }) && entries.iter().all(|(name, optional, t)| {
                        match h.get(&Value::Str(name.clone())) {
                            Some(x) => t.is_instance(x),
                            None => *optional,
                        }
                    })
                }
                _ => false,
            },
            Variant(types) => types.iter().any(|t| t.is_instance(v)),
            Optional(t) => v.is_undef() || t.as_ref().is_none_or(|t| t.is_instance(v)),
            NotUndef(t) => !v.is_undef() && t.as_ref().is_none_or(|t| t.is_instance(v)),
            Collection(min, max) => {
                let n = match v {
                    Value::Array(a) => a.len(),
                    Value::Hash(h) => h.len(),
                    _ => return false,
                } as i64;
                n >= *min && n <= *max
            }
            Iterable => {
                matches!(
                    v,
                    Value::Array(_)
                        | Value::Hash(_)
                        | Value::Str(_)
                        | Value::Int(_)
                        | Value::Iterator(_)
                ) || matches!(v, Value::Type(t) if matches!(**t, Integer(..) | Enum(..)))
            }
            Iterator => matches!(v, Value::Iterator(_)),
            IteratorOf(e) => matches!(v, Value::Iterator(it) if e.is_assignable(&it.elem)),
            // The elements an iterable value goes through all match `e`.
            IterableOf(e) => match v {
                Value::Iterator(it) => e.is_assignable(&it.elem),
                Value::Array(a) => a.iter().all(|x| e.is_instance(x)),
                Value::Hash(h) => h
                    .iter()
                    .all(|(k, x)| e.is_instance(&Value::Array(vec![k.clone(), x.clone()]))),
                Value::Str(s) => s.chars().all(|c| e.is_instance(&Value::str(c.to_string()))),
                Value::Int(n) => {
                    *n <= 0 || (e.is_instance(&Value::Int(0)) && e.is_instance(&Value::Int(n - 1)))
                }
                Value::Type(t) => match &**t {
                    Integer(a, b) if *a != MIN && *b != MAX => e.is_assignable(t),
                    Enum(..) => e.is_assignable(&String(0, MAX, None)) || e.is_assignable(t),
                    _ => false,
                },
                _ => false,
            },
            Callable(_) => false,
            Type(inner) => match v {
                Value::Type(t) => inner.as_ref().is_none_or(|i| i.is_assignable(t)),
                _ => false,
            },
            Resource(t, title) => match v {
                Value::Type(rt) => match &**rt {
                    Resource(Some(vt), vtitle) => {
                        t.as_ref().is_none_or(|t| t.eq_ignore_ascii_case(vt))
                            && title.as_ref().is_none_or(|x| vtitle.as_ref() == Some(x))
                    }
                    Class(_) => t.is_none(),
                    _ => false,
                },
                _ => false,
            },
            Class(name) => match v {
                Value::Type(rt) => match &**rt {
                    Class(Some(n)) => name.as_ref().is_none_or(|x| x == n),
                    _ => false,
                },
                _ => false,
            },
            Sensitive(t) => match v {
                Value::Sensitive(inner) => t.as_ref().is_none_or(|t| t.is_instance(inner)),
                _ => false,
            },
            CatalogEntry => matches!(v, Value::Type(t) if matches!(**t, Resource(..) | Class(_))),
            Alias(name, _) if name == "Deferred" => matches!(v, Value::Deferred(_)),
            Alias(_, t) => t.is_instance(v),
            Object => matches!(v, Value::Deferred(_)),
            Unit => true,
            Timestamp => matches!(v, Value::Timestamp(_)),
            Binary => matches!(v, Value::Binary(_)),
            Error(kind, code) => matches!(v, Value::Error(e)
                if kind.as_ref().is_none_or(|k| e.kind.as_ref() == Some(k))
                    && code.as_ref().is_none_or(|c| e.issue_code.as_ref() == Some(c))),
            Timespan => matches!(v, Value::Timespan(_)),
            TimespanRange(a, b) => matches!(v, Value::Timespan(t) if t.0 >= *a && t.0 <= *b),
            Runtime | SemVer | Init => false,
        }
    }

    /// Whether every instance of `other` is an instance of this type (an approximation
    /// that covers the forms manifests use).
    pub fn is_assignable(&self, other: &PType) -> bool {
        use PType::*;
        if self == other {
            return true;
        }
        match (self, other) {
            (Any | Unit, _) | (_, Unit) => true,
            (Alias(_, t), o) => t.is_assignable(o),
            (s, Alias(_, t)) => s.is_assignable(t),
            (Variant(ts), o) => ts.iter().any(|t| t.is_assignable(o)),
            (s, Variant(ts)) => !ts.is_empty() && ts.iter().all(|t| s.is_assignable(t)),
            (Optional(t), Undef) => {
                let _ = t;
                true
            }
            (Optional(t), o) => t.as_ref().is_none_or(|t| t.is_assignable(o)),
            (NotUndef(t), o) => {
                !matches!(o, Undef) && t.as_ref().is_none_or(|t| t.is_assignable(o))
            }
            (Numeric, Integer(..) | Float(..)) => true,
            // A bare `Callable` takes every callable (its parameters are kept only as
            // printed, so no other pair is compared).
            (Callable(None), Callable(_)) => true,
            (
                Scalar,
                Integer(..) | Float(..) | String(..) | Boolean(_) | Regexp(_) | Enum(..)
                | Pattern(_) | Numeric | ScalarData,
            ) => true,
            (
                ScalarData,
                Integer(..) | Float(..) | String(..) | Boolean(_) | Enum(..) | Pattern(_) | Numeric,
            ) => true,
            (
                Data | RichData,
                Integer(..) | Float(..) | String(..) | Boolean(_) | Enum(..) | Pattern(_) | Numeric
                | Undef | ScalarData | Scalar,
            ) => true,
            (Data | RichData, Array(_, 0, 0) | Hash(_, _, 0, 0)) => true,
            (RichData, Binary) => true,
            (Data | RichData, Array(e, ..)) => self.is_assignable(e),
            (Data | RichData, Hash(k, v, ..)) => {
                String(0, MAX, None).is_assignable(k) && self.is_assignable(v)
            }
            (Data | RichData, Tuple(ts, ..)) => ts.iter().all(|t| self.is_assignable(t)),
            (Integer(a, b), Integer(c, d)) => a <= c && d <= b,
            (Float(a, b), Float(c, d)) => a <= c && d <= b,
            (String(a, b, _), String(c, d, _)) => a <= c && d <= b,
            (String(..), Enum(..) | Pattern(_)) => true,
            (Enum(a, false), Enum(b, false)) => a.is_empty() || b.iter().all(|x| a.contains(x)),
            (Enum(a, true), Enum(b, _)) => {
                a.is_empty()
                    || b.iter().all(|x| {
                        let x = x.to_lowercase();
                        a.iter().any(|y| y.to_lowercase() == x)
                    })
            }
            (Enum(a, false), Enum(_, true)) => a.is_empty(),
            (Boolean(None), Boolean(_)) => true,
            // An empty range holds no elements (Puppet's `Array[Unit, 0, 0]`).
            (Array(_, min, max), Array(_, 0, 0)) => *min == 0 && *max >= 0,
            (Array(e, ..), Array(f, ..)) => e.is_assignable(f),
            (Array(e, ..), Tuple(ts, ..)) => ts.iter().all(|t| e.is_assignable(t)),
            (Hash(_, _, min, max), Hash(_, _, 0, 0)) => *min == 0 && *max >= 0,
            (Hash(k, v, ..), Hash(k2, v2, ..)) => k.is_assignable(k2) && v.is_assignable(v2),
            (Hash(_, v, ..), Struct(es)) => es.iter().all(|(_, _, t)| v.is_assignable(t)),
            (Collection(..), Array(..) | Hash(..) | Tuple(..) | Struct(_)) => true,
            (
                Iterable,
                Array(..) | Hash(..) | Tuple(..) | Struct(_) | String(..) | Enum(..) | Integer(..),
            ) => true,
            (Type(None), Type(_)) => true,
            (Type(Some(a)), Type(Some(b))) => a.is_assignable(b),
            (Resource(None, None), Resource(..) | Class(_)) => true,
            (Resource(Some(a), None), Resource(Some(b), _)) => a.eq_ignore_ascii_case(b),
            (Class(None), Class(_)) => true,
            (CatalogEntry, Resource(..) | Class(_)) => true,
            (Sensitive(None), Sensitive(_)) => true,
            _ => false,
        }
    }
}
