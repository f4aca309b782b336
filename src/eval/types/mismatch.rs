//! Why a value does not fit a type, in Puppet's describer's words.

use super::*;

pub fn mismatch(t: &PType, v: &Value) -> String {
    use PType::*;
    let got = || short_got(v);
    match t {
        // Puppet names a callable by its base type whatever its parameters.
        Callable(Some(_)) => mismatch(&Callable(None), v),
        // A scalar alias is named with what it stands for (`a Port = Integer[1, 65535]`);
        // containers and variants are described through the aliased type.
        Alias(_, inner) => match &**inner {
            // (An enum's values are sorted when the type is made.)
            Enum(..) | Pattern(_) => no_match(t, v),
            Integer(..) | Float(..) if matches!(v, Value::Int(_) | Value::Float(_)) => {
                format!(
                    "expects {}, got {}",
                    t.article_label(),
                    numeric_got(inner, v)
                )
            }
            Integer(..) | Float(..) | String(..) | Boolean(_) => {
                format!("expects {}, got {}", t.article_label(), got())
            }
            Variant(ts) => variant_mismatch(Some(t), ts, v).unwrap_or_else(|| mismatch(inner, v)),
            _ => mismatch(inner, v),
        },
        // Puppet's pattern mismatch of an optional enum or pattern.
        Optional(Some(inner)) if matches!(**inner, Enum(..) | Pattern(_)) => {
            format!(
                "expects an undef value or {}",
                no_match(inner, v).trim_start_matches("expects ")
            )
        }
        Optional(Some(inner)) => {
            let mut names = vec!["Undef".to_string()];
            names.extend(variant_names(inner));
            if names.len() == 2 && !matches!(**inner, Variant(_)) {
                if let Some(m) = nested_mismatch(inner, v) {
                    return m;
                }
            }
            format!("expects a value of type {}, got {}", join_or(&names), got())
        }
        Variant(ts) => variant_mismatch(None, ts, v).unwrap_or_else(|| {
            let names: Vec<std::string::String> = ts.iter().map(|t| t.to_string()).collect();
            format!("expects a value of type {}, got {}", join_or(&names), got())
        }),
        Enum(..) | Pattern(_) => no_match(t, v),
        // A number of the expected kind outside the range: both in full. An Integer where
        // a Float is expected (or the reverse): both by their names (Puppet's describer
        // details only a mismatch within one kind).
        Integer(..) | Float(..) if matches!(v, Value::Int(_) | Value::Float(_)) => {
            let expected = if same_numeric_kind(t, v) {
                t.article_label()
            } else {
                t.generalize().article_label()
            };
            format!("expects {expected}, got {}", numeric_got(t, v))
        }
        _ => nested_mismatch(t, v)
            .unwrap_or_else(|| format!("expects {}, got {}", t.generalize_label(v), got())),
    }
}

/// Puppet's describer (`describe_PVariantType`) for a variant whose members all fail on
/// the value itself (none is a container the value could enter, nor a sized type of its
/// kind): the members' mismatches merge into one, of the kind of the first member's (a
/// pattern mismatch for an enum or pattern, else a type mismatch). Through an alias
/// (`alias`), the mismatch names the alias. `None` for the variants described otherwise.
pub(in crate::eval) fn variant_mismatch(
    alias: Option<&PType>,
    ts: &[PType],
    v: &Value,
) -> Option<String> {
    use PType::*;
    let got = short_got(v);
    let members: Vec<&PType> = ts.iter().map(resolved).collect();
    for m in &members {
        let simple = match m {
            Enum(..) | Pattern(_) => true,
            Integer(..) | Float(..) | String(..) => true,
            Variant(_) | Optional(_) | NotUndef(_) => false,
            m => !kind_accepts(m, v),
        };
        if !simple {
            return None;
        }
    }
    if let Some(alias) = alias {
        return Some(format!("expects {}, got {got}", alias.article_label()));
    }
    if matches!(members.first(), Some(Enum(..) | Pattern(_))) {
        return Some(no_match(&Variant(ts.to_vec()), v));
    }
    // Puppet's `report_detailed?`: a member of the value's own class (or an alias), or
    // one whose unconstrained form takes the value's kind.
    let same_class = ts
        .iter()
        .any(|m| matches!(m, Alias(..)) || same_numeric_kind(resolved(m), v));
    let detailed = same_class || members.iter().any(|m| kind_accepts(m, v));
    let (expected, actual) = if detailed {
        let actual = if members.iter().any(|m| same_numeric_kind(m, v)) {
            infer(v).to_string()
        } else {
            got
        };
        (ts.iter().map(|t| t.to_string()).collect::<Vec<_>>(), actual)
    } else {
        let mut names: Vec<std::string::String> = vec![];
        for n in ts.iter().map(class_name) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        (names, got)
    };
    Some(if expected.len() > 1 {
        format!(
            "expects a value of type {}, got {actual}",
            join_or(&expected)
        )
    } else {
        let e = expected.first().cloned().unwrap_or_default();
        let article = if e.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        };
        format!("expects {article} {e} value, got {actual}")
    })
}

/// Whether the unconstrained form of `t` (`Integer` of `Integer[1, 2]`, any string for an
/// enum) takes a value of `v`'s kind.
pub(in crate::eval) fn kind_accepts(t: &PType, v: &Value) -> bool {
    use PType::*;
    matches!(
        (t, v),
        (Integer(..) | Numeric, Value::Int(_))
            | (Float(..) | Numeric, Value::Float(_))
            | (String(..) | Enum(..) | Pattern(_), Value::Str(_))
            | (Boolean(_), Value::Bool(_))
            | (Array(..) | Tuple(..), Value::Array(_))
            | (Hash(..) | Struct(_), Value::Hash(_))
            | (Regexp(_), Value::Regex(_))
            | (Undef, Value::Undef)
    )
}

/// The type an alias stands for (through aliases of aliases); any other type itself.
pub fn resolved(t: &PType) -> &PType {
    match t {
        PType::Alias(_, inner) => resolved(inner),
        t => t,
    }
}

/// Whether a number is of the kind (Integer or Float) that `t` expects.
pub(in crate::eval) fn same_numeric_kind(t: &PType, v: &Value) -> bool {
    matches!(
        (t, v),
        (PType::Integer(..), Value::Int(_)) | (PType::Float(..), Value::Float(_))
    )
}

/// A number in a mismatch with a numeric type `t`: its exact type when of the expected kind
/// (`Integer[9, 9]`), else its kind's name (`Float`).
pub(in crate::eval) fn numeric_got(t: &PType, v: &Value) -> std::string::String {
    if same_numeric_kind(t, v) {
        infer(v).to_string()
    } else {
        class_name(&infer(v))
    }
}

/// How a mismatch names the type of `v` (Puppet's short name of its inferred type): its
/// general type, with the name of the contained type for types and sensitive values
/// (`Type[String]`, `Sensitive[String]`).
pub(in crate::eval) fn short_got(v: &Value) -> String {
    match v {
        Value::Type(t) if !matches!(**t, PType::Any) => format!("Type[{}]", class_name(t)),
        // Puppet infers a sensitive value's content without `infer_set`: arrays and
        // hashes are `Array` and `Hash`, not tuples and structs.
        Value::Sensitive(x) => match &**x {
            Value::Array(_) => "Sensitive[Array]".to_string(),
            Value::Hash(_) => "Sensitive[Hash]".to_string(),
            x => format!("Sensitive[{}]", class_name(&infer(x))),
        },
        _ => infer(v).generalize().to_string(),
    }
}

/// The name of a type's kind (`Integer` of `Integer[1, 2]`, `Resource` of `File`).
pub fn class_name(t: &PType) -> String {
    match t {
        PType::Resource(..) => "Resource".to_string(),
        PType::Class(_) => "Class".to_string(),
        PType::Alias(name, _) => name.clone(),
        t => {
            let s = t.to_string();
            s.split('[').next().unwrap_or(&s).to_string()
        }
    }
}

/// The mismatch of a value with an enum or a pattern (`shown`, as the message names it).
pub(in crate::eval) fn no_match(shown: &PType, v: &Value) -> String {
    match v {
        Value::Str(s) => format!("expects a match for {shown}, got {}", quote_string(s)),
        _ => format!("expects a match for {shown}, got {}", infer(v).generalize()),
    }
}

impl PType {
    fn generalize_label(&self, v: &Value) -> String {
        // A size-constrained container that got the right kind of value names the full
        // type; otherwise only the base type is named.
        let same_kind = std::mem::discriminant(&infer(v).generalize())
            == std::mem::discriminant(&self.generalize());
        if same_kind {
            self.article_label()
        } else {
            self.generalize().article_label()
        }
    }
}

pub(in crate::eval) fn size_range(min: i64, max: i64) -> String {
    if min == max {
        min.to_string()
    } else if min <= 0 {
        format!("at most {max}")
    } else if max == MAX {
        format!("at least {min}")
    } else {
        format!("between {min} and {max}")
    }
}

pub(in crate::eval) fn size_mismatch(min: i64, max: i64, n: usize) -> Option<String> {
    let n = n as i64;
    (n < min || n > max).then(|| format!("expects size to be {}, got {n}", size_range(min, max)))
}

pub(in crate::eval) fn nested_mismatch(t: &PType, v: &Value) -> Option<String> {
    use PType::*;
    let sized = match (t, v) {
        (Array(_, min, max), Value::Array(a)) | (Tuple(_, min, max), Value::Array(a)) => {
            size_mismatch(*min, *max, a.len())
        }
        (Hash(_, _, min, max), Value::Hash(h)) => size_mismatch(*min, *max, h.len()),
        _ => None,
    };
    if sized.is_some() {
        return sized;
    }
    match (t, v) {
        (Array(e, ..), Value::Array(a)) => a.iter().enumerate().find_map(|(i, x)| {
            (!e.is_instance(x)).then(|| format!("index {i} {}", mismatch(e, x)))
        }),
        (Tuple(ts, ..), Value::Array(a)) => a.iter().enumerate().find_map(|(i, x)| {
            let et = ts.get(i).or(ts.last())?;
            (!et.is_instance(x)).then(|| format!("index {i} {}", mismatch(et, x)))
        }),
        (Hash(_, vt, ..), Value::Hash(h)) => h.iter().find_map(|(k, x)| {
            (!vt.is_instance(x)).then(|| format!("entry '{}' {}", k.to_display(), mismatch(vt, x)))
        }),
        (Struct(es), Value::Hash(h)) => struct_problems(es, h).into_iter().next(),
        _ => None,
    }
}

/// Every way `v` does not fit `t`, as Puppet's describer lists them for a struct (its
/// entries in order, then the keys it does not know); one message for any other type.
pub fn mismatches(t: &PType, v: &Value) -> Vec<std::string::String> {
    let problems = match (t, v) {
        (PType::Struct(es), Value::Hash(h)) => struct_problems(es, h),
        // A variant whose members fail in different places (one inside the value): each
        // member's problems, by its position (Puppet's `variant N ...` lines).
        (PType::Variant(ts), _) if variant_mismatch(None, ts, v).is_none() => ts
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                mismatches(m, v)
                    .into_iter()
                    .map(move |d| format!("variant {i} {d}"))
            })
            .collect(),
        _ => vec![],
    };
    if problems.is_empty() {
        vec![mismatch(t, v)]
    } else {
        problems
    }
}

/// A hash's problems against a struct's entries: their values and the required keys in
/// the struct's order, then the keys it does not know.
pub(in crate::eval) fn struct_problems(
    es: &[(std::string::String, bool, PType)],
    h: &crate::eval::values::value::HashValue,
) -> Vec<std::string::String> {
    let mut out = Vec::new();
    for (name, optional, et) in es {
        match h.get(&Value::Str(name.clone())) {
            Some(x) if !et.is_instance(x) => {
                out.push(format!("entry '{name}' {}", mismatch(et, x)))
            }
            None if !optional => out.push(format!("expects a value for key '{name}'")),
            _ => {}
        }
    }
    for k in h.keys() {
        let ks = k.to_display();
        if !es.iter().any(|(n, _, _)| *n == ks) {
            out.push(format!("unrecognized key '{ks}'"));
        }
    }
    out
}

pub(in crate::eval) fn variant_names(t: &PType) -> Vec<String> {
    match t {
        PType::Variant(ts) => ts.iter().map(|t| t.to_string()).collect(),
        other => vec![other.to_string()],
    }
}

/// `a or b`; `a, b, or c` (Puppet's describer writes the serial comma).
pub(in crate::eval) fn join_or(names: &[String]) -> String {
    match names.len() {
        0 => String::new(),
        1 => names[0].clone(),
        2 => format!("{} or {}", names[0], names[1]),
        n => format!("{}, or {}", names[..n - 1].join(", "), names[n - 1]),
    }
}
