//! Puppet's type system: the types, how they print, instance checks, and the mismatch
//! messages Puppet gives for typed parameters.

use super::values::value::{format_float, quote_string, regex_inspect, Regex, Value};
use crate::catalog::capitalize_type;
use crate::catalog::TrimColons;
use std::fmt;

pub(in crate::eval) mod builtin_types;
mod instance;
mod mismatch;
mod parameterize;
pub(in crate::eval) mod type_refs;
pub mod type_schema;
pub use mismatch::{class_name, mismatch, mismatches, resolved};

const MIN: i64 = i64::MIN;
const MAX: i64 = i64::MAX;

#[derive(Clone, Debug, PartialEq)]
pub enum PType {
    Any,
    Undef,
    Default,
    Boolean(Option<bool>),
    Scalar,
    ScalarData,
    Data,
    RichData,
    Numeric,
    Integer(i64, i64),
    Float(f64, f64),
    String(i64, i64, Option<String>),
    /// The values, and whether matching ignores case (`Enum['a', 'b', true]`).
    Enum(Vec<String>, bool),
    Pattern(Vec<String>),
    Regexp(Option<String>),
    Array(Box<PType>, i64, i64),
    Hash(Box<PType>, Box<PType>, i64, i64),
    Tuple(Vec<PType>, i64, i64),
    /// Entries: key, optional key, value type.
    Struct(Vec<(String, bool, PType)>),
    Variant(Vec<PType>),
    Optional(Option<Box<PType>>),
    NotUndef(Option<Box<PType>>),
    Collection(i64, i64),
    Iterable,
    Iterator,
    /// `Iterable[T]`.
    IterableOf(Box<PType>),
    /// `Iterator[T]`, also the type of an iterator value.
    IteratorOf(Box<PType>),
    /// `Callable`, or `Callable[...]` with its parameters as Puppet prints them (no value of
    /// the language is callable: only lambdas, which are not values).
    Callable(Option<std::string::String>),
    Type(Option<Box<PType>>),
    /// `Resource`, `Resource[notify]` (printed `Notify`), `Notify['x']`.
    Resource(Option<String>, Option<String>),
    Class(Option<String>),
    Sensitive(Option<Box<PType>>),
    CatalogEntry,
    Runtime,
    SemVer,
    Timespan,
    /// `Timespan[from, to]` in nanoseconds (`i64::MIN`/`MAX` unbounded); a timespan value's
    /// type has both ends at its value (`Timespan['0-00:01:00.0']`).
    TimespanRange(i64, i64),
    Timestamp,
    /// Puppet's `Error[kind, issue_code]` (either may be absent).
    Error(Option<String>, Option<String>),
    /// A byte sequence's type (Puppet's `Binary`, no parameters).
    Binary,
    Init,
    Object,
    /// `Unit`: assignable to and from every type (the element type of an empty array).
    Unit,
    /// A named alias, resolved.
    Alias(String, std::sync::Arc<PType>),
}

/// The type named by a bare capitalised word, when it is one of Puppet's own. Puppet's type
/// parser looks its own types up by the downcased name: `Semver`, `TimeStamp` and `INTEGER`
/// are SemVer, Timestamp and Integer.
pub fn builtin(name: &str) -> Option<PType> {
    // The longest name is 12 bytes: a longer word is none of them.
    let mut buf = [0u8; 12];
    let lower = buf.get_mut(..name.len())?;
    lower.copy_from_slice(name.as_bytes());
    lower.make_ascii_lowercase();
    let object = |name: &str| PType::Alias(name.to_string(), std::sync::Arc::new(PType::Object));
    Some(match std::str::from_utf8(lower).ok()? {
        "any" => PType::Any,
        "undef" => PType::Undef,
        "default" => PType::Default,
        "boolean" => PType::Boolean(None),
        "scalar" => PType::Scalar,
        "scalardata" => PType::ScalarData,
        "data" => PType::Data,
        "richdata" => PType::RichData,
        "numeric" => PType::Numeric,
        "integer" => PType::Integer(MIN, MAX),
        "float" => PType::Float(f64::NEG_INFINITY, f64::INFINITY),
        "string" => PType::String(0, MAX, None),
        "enum" => PType::Enum(vec![], false),
        "pattern" => PType::Pattern(vec![]),
        "regexp" => PType::Regexp(None),
        "array" => PType::Array(Box::new(PType::Any), 0, MAX),
        "hash" => PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, MAX),
        "tuple" => PType::Tuple(vec![], 0, MAX),
        "struct" => PType::Struct(vec![]),
        "unit" => PType::Unit,
        "variant" => PType::Variant(vec![]),
        "optional" => PType::Optional(None),
        "notundef" => PType::NotUndef(None),
        "collection" => PType::Collection(0, MAX),
        "iterable" => PType::Iterable,
        "iterator" => PType::Iterator,
        "callable" => PType::Callable(None),
        "type" => PType::Type(None),
        "resource" => PType::Resource(None, None),
        "class" => PType::Class(None),
        "sensitive" => PType::Sensitive(None),
        "catalogentry" => PType::CatalogEntry,
        "runtime" => PType::Runtime,
        "semver" => PType::SemVer,
        "timespan" => PType::Timespan,
        "timestamp" => PType::Timestamp,
        "binary" => PType::Binary,
        "init" => PType::Init,
        "object" => PType::Object,
        // Pcore object types Ordo knows by name only: no value of the language is one.
        "deferred" => deferred_type(),
        "error" => PType::Error(None, None),
        "uri" => object("URI"),
        "semverrange" => object("SemVerRange"),
        "typeset" => object("TypeSet"),
        "typealias" => object("TypeAlias"),
        _ => return None,
    })
}

/// A parameter of `Callable[...]` as Puppet prints it: types, counts, `default`, and the
/// parameter types' list in brackets.
fn callable_arg(v: &Value) -> std::string::String {
    match v {
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(callable_arg)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string_repr(),
    }
}

fn int_arg(v: &Value, default: i64) -> Result<i64, String> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Default => Ok(default),
        Value::Float(f) => Ok(*f as i64),
        other => Err(format!("expected Integer, got {}", other.type_name())),
    }
}

fn type_arg(v: &Value) -> Result<PType, String> {
    match v {
        Value::Type(t) => Ok((**t).clone()),
        Value::Str(s) => Ok(PType::Enum(vec![s.clone()], false)),
        other => Err(format!(
            "parameter expects a Type value, got {}",
            other.type_name()
        )),
    }
}

fn size_args(args: &[Value]) -> Result<(i64, i64), String> {
    // A single Integer type is the size range (`Array[T, Integer[1, 2]]`).
    if let [Value::Type(t)] = args {
        if let PType::Integer(min, max) = **t {
            return Ok((min, max));
        }
    }
    let min = args.first().map_or(Ok(0), |v| int_arg(v, 0))?;
    let max = args.get(1).map_or(Ok(MAX), |v| int_arg(v, MAX))?;
    Ok((min, max))
}

/// An error of a type's parameters: the message, and the index of the key to blame (the
/// whole access when `None`).
pub type TypeArgError = (String, Option<usize>);

/// The Ruby class Puppet names in some messages about a type's parameters.
fn ruby_class(v: &Value) -> std::string::String {
    match v {
        Value::Int(_) => "Integer".into(),
        Value::Float(_) => "Float".into(),
        Value::Str(_) => "String".into(),
        Value::Bool(true) => "TrueClass".into(),
        Value::Bool(false) => "FalseClass".into(),
        Value::Undef => "NilClass".into(),
        Value::Default => "Symbol".into(),
        Value::Array(_) => "Array".into(),
        Value::Hash(_) => "Hash".into(),
        Value::Regex(_) => "Regexp".into(),
        Value::Type(t) => {
            let shown = t.to_string();
            let base = shown.split('[').next().unwrap_or_default();
            format!("Puppet::Pops::Types::P{base}Type")
        }
        other => other.type_name(),
    }
}

/// The type of a value as Puppet names it when it cannot be used as a key (`Integer`).
fn key_type_name(v: &Value) -> std::string::String {
    match v {
        Value::Undef => "Undef".into(),
        Value::Default => "Default".into(),
        other => other.type_name(),
    }
}

/// Puppet's `Patterns::NAME` (without a leading `::`): `a::b_c`, segments starting with a
/// lowercase letter.
fn is_class_name(name: &str) -> bool {
    name.split("::").all(|seg| {
        seg.starts_with(|c: char| c.is_ascii_lowercase())
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn is_type(v: &Value) -> bool {
    matches!(v, Value::Type(_))
}

/// Flattens nested arrays of keys, as Puppet's access operator does for most types.
fn flat_keys(args: &[Value]) -> Vec<Value> {
    let mut out = vec![];
    for a in args {
        match a {
            Value::Array(items) => out.extend(flat_keys(items)),
            other => out.push(other.clone()),
        }
    }
    out
}

/// Puppet's `collection_size_t`: one Integer type, or integers and defaults.
fn check_size_keys(keys: &[Value], start: usize) -> Result<(), TypeArgError> {
    if let [Value::Type(t)] = keys {
        if matches!(**t, PType::Integer(..)) {
            return Ok(());
        }
    }
    for (i, k) in keys.iter().enumerate() {
        if !matches!(k, Value::Int(_) | Value::Default) {
            let class = ruby_class(k);
            return Err((
                format!(
                    "A Type's size constraint arguments must be a single Integer type, or 1-2 integers (or default). Got {}",
                    super::values::strings::a_an(&class)
                ),
                Some(start + i),
            ));
        }
    }
    Ok(())
}

fn arity_error(base: &str, min: usize, max: Option<usize>, actual: usize) -> std::string::String {
    match max {
        None => format!("{base}[] accepts {min} or more arguments. Got {actual}"),
        Some(max) if max != min => {
            format!("{base}[] accepts {min} to {max} arguments. Got {actual}")
        }
        Some(_) => format!(
            "{base}[] accepts {min} argument{}. Got {actual}",
            if min == 1 { "" } else { "s" }
        ),
    }
}

impl PType {
    /// Type equality for `==` (aliases resolved, class names case-insensitive).
    pub fn normalized_eq(&self, other: &PType) -> bool {
        match (self, other) {
            (PType::Alias(_, a), b) => a.normalized_eq(b),
            (a, PType::Alias(_, b)) => a.normalized_eq(b),
            (PType::Class(Some(a)), PType::Class(Some(b))) => a.eq_ignore_ascii_case(b),
            (PType::Resource(Some(a), t1), PType::Resource(Some(b), t2)) => {
                a.eq_ignore_ascii_case(b) && t1 == t2
            }
            _ => self == other,
        }
    }

    /// The type without value-specific parameters (`Integer[1, 1]` -> `Integer`).
    pub fn generalize(&self) -> PType {
        use PType::*;
        match self {
            Integer(..) => Integer(MIN, MAX),
            Float(..) => Float(f64::NEG_INFINITY, f64::INFINITY),
            String(..) => String(0, MAX, None),
            Boolean(_) => Boolean(None),
            Regexp(_) => Regexp(None),
            Tuple(..) => Tuple(vec![], 0, MAX),
            Struct(_) => Struct(vec![]),
            Array(..) => Array(Box::new(Any), 0, MAX),
            Hash(..) => Hash(Box::new(Any), Box::new(Any), 0, MAX),
            Type(_) => Type(None),
            Sensitive(_) => Sensitive(None),
            Enum(..) => String(0, MAX, None),
            IteratorOf(t) => IteratorOf(Box::new(t.puppet_generalize())),
            TimespanRange(..) => Timespan,
            Error(..) => Error(None, None),
            other => other.clone(),
        }
    }

    /// Puppet's `PAnyType#generalize`: value-specific parameters dropped throughout
    /// (`Array[Integer[1, 2], 2, 2]` -> `Array[Integer]`, `Enum['a', 'bb']` -> `String[1, 2]`),
    /// the structure (tuples, structs, variants) kept.
    pub fn puppet_generalize(&self) -> PType {
        use PType::*;
        let boxed = |t: &PType| Box::new(t.puppet_generalize());
        match self {
            Integer(..) | Float(..) | String(..) | Boolean(_) | TimespanRange(..) => {
                self.generalize()
            }
            Enum(values, _) if values.is_empty() => String(0, MAX, None),
            Enum(values, _) => {
                let sizes = values.iter().map(|v| v.chars().count() as i64);
                let (min, max) = (sizes.clone().min(), sizes.max());
                String(min.unwrap_or(0), max.unwrap_or(MAX), None)
            }
            Array(e, ..) if **e == Any => Array(Box::new(Any), 0, MAX),
            Array(e, ..) => Array(boxed(e), 0, MAX),
            Hash(_, _, 0, 0) => self.clone(),
            Hash(k, v, ..) if **k == Any && **v == Any => self.clone(),
            Hash(k, v, ..) => Hash(boxed(k), boxed(v), 0, MAX),
            Tuple(ts, min, max) => Tuple(
                ts.iter().map(PType::puppet_generalize).collect(),
                *min,
                *max,
            ),
            Struct(es) => Struct(
                es.iter()
                    .map(|(k, opt, t)| (k.clone(), *opt, t.puppet_generalize()))
                    .collect(),
            ),
            // Puppet's `PVariantType.maybe_create` of the generalized types: duplicates
            // dropped, a single one unwrapped.
            Variant(ts) => variant_of(ts.iter().map(PType::puppet_generalize)),
            Optional(Some(t)) => Optional(Some(boxed(t))),
            NotUndef(Some(t)) => NotUndef(Some(boxed(t))),
            Type(Some(t)) => Type(Some(boxed(t))),
            Sensitive(Some(t)) => Sensitive(Some(boxed(t))),
            IteratorOf(t) => IteratorOf(boxed(t)),
            IterableOf(t) => IterableOf(boxed(t)),
            other => other.clone(),
        }
    }

    /// How a type value is stored as a catalog parameter (`Notify[x]`, `Class[Foo]`).
    pub fn catalog_string(&self) -> String {
        match self {
            // Built directly: every relationship metaparameter of a catalog goes through
            // here, and `format!` costs several times the copy.
            PType::Resource(Some(t), Some(title)) => {
                let mut s = String::with_capacity(t.len() + title.len() + 2);
                s.push_str(t);
                s.push('[');
                s.push_str(title);
                s.push(']');
                s
            }
            PType::Class(Some(n)) => format!("Class[{}]", capitalize_type(n)),
            // A resource type without a title becomes a reference without one (`Notify[]`).
            PType::Resource(Some(t), None) => format!("{t}[]"),
            other => other.to_string(),
        }
    }

    /// The label used in "expects a/an X value".
    fn article_label(&self) -> String {
        let s = self.to_string();
        let article = if s.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {s} value")
    }
}

/// Puppet's `infer` (`type(x, 'reduced')`): an array or hash is an `Array` or `Hash` of the
/// common type of its elements (keys), with its size; a string keeps its value.
pub fn infer_reduced(v: &Value) -> PType {
    match v {
        Value::Str(s) => PType::String(0, MAX, Some(s.clone())),
        Value::Array(a) if a.is_empty() => PType::Array(Box::new(PType::Unit), 0, 0),
        Value::Array(a) => {
            let n = a.len() as i64;
            PType::Array(Box::new(reduce(a.iter().map(infer_reduced))), n, n)
        }
        Value::Hash(h) if h.is_empty() => {
            PType::Hash(Box::new(PType::Unit), Box::new(PType::Unit), 0, 0)
        }
        Value::Hash(h) => {
            let n = h.len() as i64;
            PType::Hash(
                Box::new(reduce(h.keys().map(infer_reduced))),
                Box::new(reduce(h.values().map(infer_reduced))),
                n,
                n,
            )
        }
        Value::Sensitive(x) => {
            PType::Sensitive(Some(Box::new(infer_reduced(x).puppet_generalize())))
        }
        other => infer(other),
    }
}

/// Puppet's `infer_generic`: [`infer_reduced`], generalized (`type(x, 'generalized')`, and
/// the type named in messages such as "Expected String, got Array[Integer]").
pub fn infer_generic(v: &Value) -> PType {
    infer_reduced(v).puppet_generalize()
}

/// Puppet's `PVariantType.maybe_create` of distinct types, a single one unwrapped.
pub fn variant_of(types: impl Iterator<Item = PType>) -> PType {
    let mut ts: Vec<PType> = Vec::new();
    for t in types {
        if !ts.contains(&t) {
            ts.push(t);
        }
    }
    if ts.len() == 1 {
        ts.remove(0)
    } else {
        PType::Variant(ts)
    }
}

/// The common type of several (Puppet's `reduce_type`); `Undef` for none.
fn reduce(types: impl Iterator<Item = PType>) -> PType {
    types.fold(PType::Undef, |a, b| common_type(&a, &b))
}

/// Puppet's `assignable?` where [`PType::is_assignable`] does not follow it: a string type
/// inferred from a value holds that value only.
fn assignable(to: &PType, from: &PType) -> bool {
    match (to, from) {
        (PType::String(_, _, Some(a)), PType::String(_, _, Some(b))) => a == b,
        (PType::String(_, _, Some(_)), _) => false,
        (PType::String(min, max, None), PType::String(_, _, Some(b))) => {
            let n = b.chars().count() as i64;
            *min <= n && n <= *max
        }
        (PType::Enum(values, false), PType::String(_, _, Some(b))) => {
            values.is_empty() || values.contains(b)
        }
        (PType::Boolean(Some(a)), PType::Boolean(b)) => b == &Some(*a),
        _ => to.is_assignable(from),
    }
}

/// Whether a type is of Puppet's `RichData` (data, `Default`, types, regexps, sensitive).
fn rich_data(t: &PType) -> bool {
    use PType::*;
    match t {
        Default | Type(_) | Regexp(_) | Sensitive(_) | Timespan | Timestamp | SemVer | Binary
        | Undef | Unit => true,
        Array(e, ..) => rich_data(e),
        Hash(k, v, ..) => rich_data(k) && rich_data(v),
        Tuple(ts, ..) => ts.iter().all(rich_data),
        Struct(es) => es.iter().all(|(_, _, t)| rich_data(t)),
        other => PType::Data.is_assignable(other) || PType::Scalar.is_assignable(other),
    }
}

/// A type parameter in quotes, or `undef`.
fn quote_opt(s: &Option<String>) -> String {
    s.as_deref()
        .map_or_else(|| "undef".to_string(), quote_string)
}

/// Puppet's `common_type`: the narrowest type both types are assignable to, by its rules.
fn common_type(t1: &PType, t2: &PType) -> PType {
    use PType::*;
    match (t1, t2) {
        (Undef | Unit, _) => return t2.clone(),
        (_, Undef | Unit) => return t1.clone(),
        _ => {}
    }
    if assignable(t1, t2) {
        return t1.clone();
    }
    if assignable(t2, t1) {
        return t2.clone();
    }
    let no_size = |min: &i64, max: &i64| *min == 0 && *max == MAX;
    match (t1, t2) {
        (Array(a, ..), Array(b, ..)) => return Array(Box::new(common_type(a, b)), 0, MAX),
        (Hash(k1, v1, ..), Hash(k2, v2, ..)) => {
            return Hash(
                Box::new(common_type(k1, k2)),
                Box::new(common_type(v1, v2)),
                0,
                MAX,
            )
        }
        (Class(_), Class(_)) => return Class(None),
        (Resource(a, _), Resource(b, _)) => {
            return match (a, b) {
                (Some(a), Some(b)) if a.eq_ignore_ascii_case(b) => Resource(Some(a.clone()), None),
                _ => Resource(None, None),
            }
        }
        (Integer(a, b), Integer(c, d)) => return Integer(*a.min(c), *b.max(d)),
        (Float(a, b), Float(c, d)) => return Float(a.min(*c), b.max(*d)),
        (String(_, _, v), Enum(values, _)) | (Enum(values, _), String(_, _, v)) => {
            return match v {
                None => Enum(vec![], false),
                Some(v) => Enum(union(values, std::slice::from_ref(v)), false),
            }
        }
        (String(a, b, v1), String(c, d, v2)) => {
            return if no_size(a, b) || no_size(c, d) {
                match (v1, v2) {
                    (Some(x), Some(y)) => Enum(vec![x.clone(), y.clone()], false),
                    _ => String(0, MAX, None),
                }
            } else {
                String(*a.min(c), *b.max(d), None)
            };
        }
        (Pattern(a), Pattern(b)) => return Pattern(union(a, b)),
        (Enum(a, _), Enum(b, _)) => return Enum(union(a, b), false),
        (Variant(a), Variant(b)) => {
            let mut ts = a.clone();
            ts.extend(b.iter().filter(|t| !a.contains(t)).cloned());
            return Variant(ts);
        }
        (Regexp(_), Regexp(_)) => return Regexp(None),
        (Callable(_), Callable(_)) => return Callable(None),
        _ => {}
    }
    let both = |t: &PType| t.is_assignable(t1) && t.is_assignable(t2);
    if both(&Numeric) {
        return Numeric;
    }
    if both(&ScalarData) {
        return ScalarData;
    }
    if both(&Scalar) {
        return Scalar;
    }
    if both(&Data) {
        return Data;
    }
    if let (Type(a), Type(b)) = (t1, t2) {
        let any = Any;
        let (a, b) = (a.as_deref().unwrap_or(&any), b.as_deref().unwrap_or(&any));
        return Type(Some(Box::new(common_type(a, b))));
    }
    if rich_data(t1) && rich_data(t2) {
        return RichData;
    }
    Any
}

/// `a` and then what of `b` it lacks.
fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = a.to_vec();
    out.extend(b.iter().filter(|x| !a.contains(x)).cloned());
    out
}

/// The `Deferred` object type (known by name; its values are [`Value::Deferred`]).
pub fn deferred_type() -> PType {
    PType::Alias("Deferred".to_string(), std::sync::Arc::new(PType::Object))
}

/// How Puppet prints the `Deferred` type: its whole Pcore definition.
const DEFERRED_SHOWN: &str = "Object[{name => 'Deferred', attributes => {'name' => Pattern[/\\A[$]?[a-z][a-z0-9_]*(?:::[a-z][a-z0-9_]*)*\\z/], 'arguments' => {type => Optional[Array], value => undef}}}]";

/// The inferred type of a value, as `type()` reports it.
pub fn infer(v: &Value) -> PType {
    match v {
        Value::Undef => PType::Undef,
        Value::Default => PType::Default,
        Value::Bool(b) => PType::Boolean(Some(*b)),
        Value::Int(i) => PType::Integer(*i, *i),
        Value::Float(f) => PType::Float(*f, *f),
        Value::Str(_) => PType::String(0, MAX, None),
        Value::Regex(r) => PType::Regexp(Some(r.source.to_string())),
        // Puppet's `infer_set`: an empty array or hash is `Array[0, 0]` / `Hash[0, 0]`
        // (named `Array` and `Hash` in type mismatch messages), not an empty tuple or struct.
        Value::Array(a) if a.is_empty() => PType::Array(Box::new(PType::Any), 0, 0),
        Value::Hash(h) if h.is_empty() => {
            PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, 0)
        }
        Value::Array(a) => {
            let n = a.len() as i64;
            PType::Tuple(a.iter().map(infer).collect(), n, n)
        }
        Value::Hash(h) => {
            if h.keys().all(|k| matches!(k, Value::Str(_))) {
                PType::Struct(
                    h.iter()
                        .map(|(k, x)| (k.as_str().unwrap_or("").to_string(), false, infer(x)))
                        .collect(),
                )
            } else {
                // Puppet's `infer_set_Hash`: the variants of the key and value types.
                let n = h.len() as i64;
                PType::Hash(
                    Box::new(variant_of(h.keys().map(infer))),
                    Box::new(variant_of(h.values().map(infer))),
                    n,
                    n,
                )
            }
        }
        Value::Type(t) => PType::Type(Some(t.clone())),
        Value::Sensitive(x) => {
            PType::Sensitive(Some(Box::new(infer_reduced(x).puppet_generalize())))
        }
        Value::Deferred(_) => deferred_type(),
        Value::Timestamp(_) => PType::Timestamp,
        Value::Iterator(it) => PType::IteratorOf(Box::new(it.elem.clone())),
        Value::Timespan(t) => PType::TimespanRange(t.0, t.0),
        Value::Binary(_) => PType::Binary,
        Value::Error(e) => PType::Error(e.kind.clone(), e.issue_code.clone()),
    }
}

/// Puppet's description of why `v` does not match `t`, without the leading subject
/// (e.g. `expects an Integer value, got String`).
fn fmt_range(f: &mut fmt::Formatter<'_>, name: &str, min: i64, max: i64, dmin: i64) -> fmt::Result {
    if min == dmin && max == MAX {
        return write!(f, "{name}");
    }
    let lo = if min == MIN {
        "default".to_string()
    } else {
        min.to_string()
    };
    if max == MAX {
        write!(f, "{name}[{lo}]")
    } else {
        write!(f, "{name}[{lo}, {max}]")
    }
}

fn join_types(ts: &[PType]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

thread_local! {
    /// How deep the type being printed is inside the one asked for, and whether that one is
    /// an alias (see `Alias` below).
    static PRINTING: std::cell::Cell<(u32, bool)> = const { std::cell::Cell::new((0, false)) };
}

impl fmt::Display for PType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (depth, expanded) = PRINTING.with(|p| p.get());
        let expanded = if depth == 0 {
            matches!(self, PType::Alias(..))
        } else {
            expanded
        };
        PRINTING.with(|p| p.set((depth + 1, expanded)));
        let r = self.fmt_inner(f);
        PRINTING.with(|p| p.set((depth, expanded)));
        r
    }
}

impl PType {
    fn fmt_inner(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PType::*;
        match self {
            Any => write!(f, "Any"),
            Undef => write!(f, "Undef"),
            Default => write!(f, "Default"),
            Boolean(None) => write!(f, "Boolean"),
            Boolean(Some(b)) => write!(f, "Boolean[{b}]"),
            Scalar => write!(f, "Scalar"),
            ScalarData => write!(f, "ScalarData"),
            Data => write!(f, "Data"),
            RichData => write!(f, "RichData"),
            Numeric => write!(f, "Numeric"),
            Integer(min, max) => fmt_range(f, "Integer", *min, *max, MIN),
            Float(min, max) => {
                if min.is_infinite() && max.is_infinite() {
                    write!(f, "Float")
                } else {
                    let lo = if min.is_infinite() {
                        "default".into()
                    } else {
                        format_float(*min)
                    };
                    if max.is_infinite() {
                        write!(f, "Float[{lo}]")
                    } else {
                        write!(f, "Float[{lo}, {}]", format_float(*max))
                    }
                }
            }
            String(min, max, _) => fmt_range(f, "String", *min, *max, 0),
            Enum(names, _) if names.is_empty() => write!(f, "Enum"),
            Enum(names, ci) => write!(
                f,
                "Enum[{}{}]",
                names
                    .iter()
                    .map(|n| quote_string(n))
                    .collect::<Vec<_>>()
                    .join(", "),
                if *ci { ", true" } else { "" }
            ),
            Pattern(p) if p.is_empty() => write!(f, "Pattern"),
            Pattern(p) => write!(
                f,
                "Pattern[{}]",
                p.iter()
                    .map(|s| regex_inspect(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Regexp(None) => write!(f, "Regexp"),
            Regexp(Some(s)) => write!(f, "Regexp[{}]", regex_inspect(s)),
            // Puppet prints any empty range so, whatever the element type.
            Array(_, 0, 0) => write!(f, "Array[0, 0]"),
            Hash(_, _, 0, 0) => write!(f, "Hash[0, 0]"),
            Array(e, min, max) => {
                if **e == Any && *min == 0 && *max == MAX {
                    return write!(f, "Array");
                }
                write!(f, "Array[{e}")?;
                if *min != 0 || *max != MAX {
                    write!(f, ", {min}")?;
                    if *max != MAX {
                        write!(f, ", {max}")?;
                    }
                }
                write!(f, "]")
            }
            Hash(k, v, min, max) => {
                if **k == Any && **v == Any && *min == 0 && *max == MAX {
                    return write!(f, "Hash");
                }
                write!(f, "Hash[{k}, {v}")?;
                if *min != 0 || *max != MAX {
                    write!(f, ", {min}")?;
                    if *max != MAX {
                        write!(f, ", {max}")?;
                    }
                }
                write!(f, "]")
            }
            Tuple(ts, _, _) if ts.is_empty() => write!(f, "Tuple"),
            Tuple(ts, min, max) => {
                write!(f, "Tuple[{}", join_types(ts))?;
                let n = ts.len() as i64;
                if *min != n || *max != n {
                    write!(f, ", {min}")?;
                    if *max != MAX {
                        write!(f, ", {max}")?;
                    }
                }
                write!(f, "]")
            }
            Struct(es) if es.is_empty() => write!(f, "Struct"),
            Struct(es) => {
                let parts: Vec<std::string::String> = es
                    .iter()
                    // Puppet's `struct_element_pair`: the key is marked where it differs from
                    // what the value type implies (optional when the value accepts undef).
                    .map(|(k, opt, t)| match (*opt, t.is_instance(&Value::Undef)) {
                        (true, false) => format!("Optional[{}] => {t}", quote_string(k)),
                        (false, true) => format!("NotUndef[{}] => {t}", quote_string(k)),
                        _ => format!("{} => {t}", quote_string(k)),
                    })
                    .collect();
                write!(f, "Struct[{{{}}}]", parts.join(", "))
            }
            Variant(ts) if ts.is_empty() => write!(f, "Variant"),
            Variant(ts) => write!(f, "Variant[{}]", join_types(ts)),
            Optional(None) => write!(f, "Optional"),
            Optional(Some(t)) => write!(f, "Optional[{t}]"),
            NotUndef(None) => write!(f, "NotUndef"),
            NotUndef(Some(t)) => write!(f, "NotUndef[{t}]"),
            Collection(min, max) => fmt_range(f, "Collection", *min, *max, 0),
            Iterable => write!(f, "Iterable"),
            Iterator => write!(f, "Iterator"),
            IterableOf(t) => write!(f, "Iterable[{t}]"),
            IteratorOf(t) => write!(f, "Iterator[{t}]"),
            Callable(None) => write!(f, "Callable"),
            Callable(Some(args)) => write!(f, "Callable[{args}]"),
            Type(None) => write!(f, "Type"),
            Type(Some(t)) => write!(f, "Type[{t}]"),
            Resource(None, _) => write!(f, "Resource"),
            Resource(Some(t), None) => write!(f, "{t}"),
            Resource(Some(t), Some(title)) => write!(f, "{t}[{}]", quote_string(title)),
            Class(None) => write!(f, "Class"),
            Class(Some(n)) => write!(f, "Class[{n}]"),
            Sensitive(None) => write!(f, "Sensitive"),
            Sensitive(Some(t)) => write!(f, "Sensitive[{t}]"),
            CatalogEntry => write!(f, "CatalogEntry"),
            Runtime => write!(f, "Runtime"),
            SemVer => write!(f, "SemVer"),
            Timespan => write!(f, "Timespan"),
            TimespanRange(a, b) => {
                let end = |n: i64| {
                    if n == i64::MIN || n == i64::MAX {
                        "default".to_string()
                    } else {
                        quote_string(&crate::eval::values::timespan::Timespan(n).to_string())
                    }
                };
                if *a == i64::MIN && *b == i64::MAX {
                    write!(f, "Timespan")
                } else if a == b || *b == i64::MAX {
                    // Puppet leaves out an unbounded upper end.
                    write!(f, "Timespan[{}]", end(*a))
                } else {
                    write!(f, "Timespan[{}, {}]", end(*a), end(*b))
                }
            }
            Timestamp => write!(f, "Timestamp"),
            Binary => write!(f, "Binary"),
            Error(None, None) => write!(f, "Error"),
            Error(kind, None) => write!(f, "Error[{}]", quote_opt(kind)),
            Error(kind, code) => write!(f, "Error[{}, {}]", quote_opt(kind), quote_opt(code)),
            Init => write!(f, "Init"),
            Object => write!(f, "Object"),
            Unit => write!(f, "Unit"),
            Alias(name, t) if name == "Deferred" && **t == Object => f.write_str(DEFERRED_SHOWN),
            // A type Ordo knows by name only prints as its name.
            Alias(name, t) if matches!(**t, Object) => write!(f, "{name}"),
            // As Puppet's TypeFormatter: printing an alias expands it (`Port = Integer[...]`)
            // and every alias inside it; inside any other type an alias is its name
            // (`Array[Port]`).
            Alias(name, t) if PRINTING.with(|p| p.get().1) => write!(f, "{name} = {t}"),
            Alias(name, _) => write!(f, "{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_like_puppet() {
        assert_eq!(infer(&Value::Int(1)).to_string(), "Integer[1, 1]");
        let t = PType::Integer(MIN, 5);
        assert_eq!(t.to_string(), "Integer[default, 5]");
        let arr = Value::Array(vec![Value::Int(1), Value::str("a")]);
        assert_eq!(infer(&arr).to_string(), "Tuple[Integer[1, 1], String]");
    }

    #[test]
    fn mismatch_messages_follow_puppet() {
        let int = PType::Integer(MIN, MAX);
        assert_eq!(
            mismatch(&int, &Value::str("a")),
            "expects an Integer value, got String"
        );
        let opt = PType::Optional(Some(Box::new(int.clone())));
        assert_eq!(
            mismatch(&opt, &Value::str("a")),
            "expects a value of type Undef or Integer, got String"
        );
        let range = PType::Integer(1, 5);
        assert_eq!(
            mismatch(&range, &Value::Int(7)),
            "expects an Integer[1, 5] value, got Integer[7, 7]"
        );
        let arr = PType::Array(Box::new(int), 0, MAX);
        assert_eq!(
            mismatch(&arr, &Value::Array(vec![Value::str("a")])),
            "index 0 expects an Integer value, got String"
        );
        assert_eq!(
            mismatch(&arr, &Value::str("a")),
            "expects an Array value, got String"
        );
    }

    /// Puppet 7.23's messages for class parameters of these variant types (the lines after
    /// `Class[C]: parameter 'p' `).
    #[test]
    fn variant_mismatches_merge_or_list_as_puppet() {
        let string = PType::String(0, MAX, None);
        let strings = PType::Array(Box::new(string.clone()), 0, MAX);
        let int = PType::Integer(MIN, MAX);
        // Members failing at the top merge into one description.
        let v = PType::Variant(vec![int.clone(), strings.clone()]);
        assert_eq!(
            mismatches(&v, &Value::str("abc")),
            ["expects a value of type Integer or Array, got String"]
        );
        let v = PType::Variant(vec![PType::Integer(1, 2), PType::Integer(5, 6)]);
        assert_eq!(
            mismatches(&v, &Value::Int(4)),
            ["expects a value of type Integer[1, 2] or Integer[5, 6], got Integer[4, 4]"]
        );
        let v = PType::Variant(vec![int.clone(), PType::String(5, MAX, None)]);
        assert_eq!(
            mismatches(&v, &Value::str("abc")),
            ["expects a value of type Integer or String[5], got String"]
        );
        // One failing inside the value: a line per member.
        let v = PType::Variant(vec![string, strings]);
        assert_eq!(
            mismatches(&v, &Value::Array(vec![Value::Int(1)])),
            [
                "variant 0 expects a String value, got Tuple",
                "variant 1 index 0 expects a String value, got Integer"
            ]
        );
    }
}
