//! The signatures of Puppet 7.23's own functions (the 4.x API functions in
//! `lib/puppet/functions/*.rb`): over all their dispatches, `min` and `max` arguments
//! (`None`: any number) and whether a block is required, optional or refused; and each
//! dispatch's parameters with their Puppet types, for Puppet's type check of the arguments
//! (Puppet::Pops::Functions::Dispatcher, with the messages of its TypeMismatchDescriber).
//! The table itself is generated from Puppet's source by `scripts/gen_signatures.py --write`
//! into `signatures_data.rs`; the code here reads it.

use crate::eval::types::{self, PType};
use crate::eval::values::value::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Whether a function takes a lambda.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    Required,
    Optional,
    None,
}

pub struct Signature {
    pub name: &'static str,
    pub min: usize,
    pub max: Option<usize>,
    pub block: Block,
    /// The dispatches, in Puppet's order; empty when Ordo does not check the argument types
    /// (functions with local type aliases).
    pub dispatches: &'static [Dispatch],
}

/// How a parameter takes arguments: `param`, `optional_param`, `repeated_param` (none or
/// more), `required_repeated_param` (one or more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Required,
    Optional,
    Repeated,
    RequiredRepeated,
}

pub struct Param {
    pub name: &'static str,
    /// The Puppet type, as written in Puppet's source.
    pub ty: &'static str,
    pub kind: Kind,
}

pub struct BlockParam {
    pub name: &'static str,
    pub ty: &'static str,
    pub optional: bool,
}

pub struct Dispatch {
    pub params: &'static [Param],
    pub block: Option<BlockParam>,
    /// An `argument_mismatch` handler: when it takes the arguments, the function reports
    /// its own message; it is not listed in Puppet's messages.
    pub handler: bool,
}

pub use super::signatures_data::SIGNATURES;

/// The signature of Puppet's function `name`, if it is one of Puppet's own.
pub fn find(name: &str) -> Option<&'static Signature> {
    SIGNATURES
        .binary_search_by(|s| s.name.cmp(name))
        .ok()
        .map(|i| &SIGNATURES[i])
        .or_else(|| crate::eval::functions::stdlib_more::find(name))
}

/// The names of all functions with a signature here (Puppet's and stdlib's).
pub fn names() -> impl Iterator<Item = &'static str> {
    SIGNATURES
        .iter()
        .chain(crate::eval::functions::stdlib_more::SIGNATURES)
        .map(|s| s.name)
}

/// Puppet's message when `got` arguments don't fit between `min` and `max` (no limit: None).
pub fn arity_mismatch(name: &str, min: usize, max: Option<usize>, got: usize) -> Option<String> {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let got_text = if got == 0 {
        "none".to_string()
    } else {
        got.to_string()
    };
    if got >= min && max.is_none_or(|m| got <= m) {
        return None;
    }
    Some(match max {
        Some(max) if max == min => {
            format!(
                "'{name}' expects {max} argument{}, got {got_text}",
                plural(max)
            )
        }
        Some(max) => {
            format!("'{name}' expects between {min} and {max} arguments, got {got_text}")
        }
        None => format!(
            "'{name}' expects at least {min} argument{}, got {got_text}",
            plural(min)
        ),
    })
}

/// The first dispatch of `sig` that takes the arguments (and the block or its absence).
pub fn select(sig: &Signature, values: &[Value], has_block: bool) -> Option<usize> {
    sig.dispatches.iter().position(|d| {
        let block_fits = match &d.block {
            Some(b) => has_block || b.optional,
            None => !has_block,
        };
        block_fits && d.reject(values).is_none()
    })
}

/// Puppet's message when `got` arguments (and a block or not) don't fit `sig`, if they don't.
pub fn mismatch(sig: &Signature, got: usize, has_block: bool) -> Option<String> {
    let name = sig.name;
    if let Some(m) = arity_mismatch(name, sig.min, sig.max, got) {
        return Some(m);
    }
    match (sig.block, has_block) {
        (Block::Required, false) => Some(format!("'{name}' expects a block")),
        (Block::None, true) => Some(format!("'{name}' does not expect a block")),
        _ => None,
    }
}

// ---- argument types ------------------------------------------------------------------------

/// The parsed type of a parameter in the table, by its text: `None` when Ordo does not
/// judge that type (one it cannot parse, or whose values Ordo does not have or only
/// approximates), so that any argument passes it. Each text is parsed the first time a
/// call needs it (parsing the whole table up front cost a compile ~6M instructions), and
/// kept for the process: the table is finite.
fn parsed(ty: &'static str) -> Option<&'static PType> {
    static TYPES: OnceLock<Mutex<HashMap<&'static str, Option<&'static PType>>>> = OnceLock::new();
    let mut types = TYPES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *types.entry(ty).or_insert_with(|| {
        parse_type(ty)
            .filter(|t| ty != "Any" && judged(t))
            .map(|t| &*Box::leak(Box::new(t)))
    })
}

/// Parses a type as Puppet's function signatures write it (`Variant[String, Array[String]]`,
/// `Hash[Pattern[/^\w+$/], Any]`, `Enum[clear]`); `None` for names Ordo does not know.
fn parse_type(text: &str) -> Option<PType> {
    let mut p = TypeText {
        s: text.as_bytes(),
        pos: 0,
    };
    let v = p.value()?;
    p.ws();
    match v {
        Value::Type(t) if p.pos == p.s.len() => Some(*t),
        _ => None,
    }
}

struct TypeText<'a> {
    s: &'a [u8],
    pos: usize,
}

impl TypeText<'_> {
    fn ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &str {
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(|c| f(*c)) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("")
    }

    /// Up to the closing `end` (a backslash escapes it), which is consumed.
    fn delimited(&mut self, end: u8) -> Option<String> {
        let start = self.pos;
        while let Some(&c) = self.s.get(self.pos) {
            if c == b'\\' {
                self.pos += 2;
                continue;
            }
            if c == end {
                let text = std::str::from_utf8(&self.s[start..self.pos])
                    .ok()?
                    .to_string();
                self.pos += 1;
                return Some(text);
            }
            self.pos += 1;
        }
        None
    }

    fn list(&mut self, end: u8) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        if self.eat(end) {
            return Some(out);
        }
        loop {
            out.push(self.value()?);
            if self.eat(end) {
                return Some(out);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn value(&mut self) -> Option<Value> {
        let c = self.peek()?;
        match c {
            b'0'..=b'9' | b'-' => {
                self.pos += 1;
                let digits = self.take_while(|c| c.is_ascii_digit()).to_string();
                let n: i64 = format!("{}{digits}", c as char).parse().ok()?;
                Some(Value::Int(n))
            }
            b'\'' | b'"' => {
                self.pos += 1;
                Some(Value::Str(self.delimited(c)?))
            }
            b'/' => {
                self.pos += 1;
                let src = self.delimited(b'/')?;
                Some(Value::Regex(
                    crate::eval::values::value::Regex::new(&src).ok()?,
                ))
            }
            b'{' => {
                self.pos += 1;
                let mut h = indexmap::IndexMap::new();
                if self.eat(b'}') {
                    return Some(Value::Hash(h.into()));
                }
                loop {
                    let k = self.value()?;
                    if !(self.eat(b'=') && self.eat(b'>')) {
                        return None;
                    }
                    h.insert(k, self.value()?);
                    if self.eat(b'}') {
                        return Some(Value::Hash(h.into()));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            c if c.is_ascii_alphabetic() => {
                let word = self
                    .take_while(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
                    .to_string();
                if !c.is_ascii_uppercase() {
                    return Some(if word == "default" {
                        Value::Default
                    } else {
                        Value::Str(word)
                    });
                }
                let mut t = types::builtin(&word)?;
                if self.eat(b'[') {
                    let args = self.list(b']')?;
                    // Ordo's iterables have no element type: judged by the bare type, which
                    // accepts more.
                    match (&t, args.as_slice()) {
                        (PType::Iterable, [Value::Type(e)]) => t = iterable_of(e),
                        (PType::Iterable | PType::Iterator, _) => {}
                        _ => t = t.parameterize(&args).ok()?,
                    }
                }
                Some(Value::Type(Box::new(t)))
            }
            _ => None,
        }
    }
}

/// `Iterable[e]` as the values Ordo has: arrays of `e`, hashes when `e` takes their
/// `[key, value]` pairs, strings and integers (and types, which may be integer ranges or
/// enums) when `e` takes their elements.
fn iterable_of(e: &PType) -> PType {
    let mut ts = vec![PType::Array(Box::new(e.clone()), 0, i64::MAX)];
    let pair = Value::Array(vec![Value::Str("k".into()), Value::Str("v".into())]);
    if e.is_instance(&pair) {
        ts.push(PType::Hash(
            Box::new(PType::Any),
            Box::new(PType::Any),
            0,
            i64::MAX,
        ));
    }
    if e.is_instance(&Value::Str("a".into())) {
        ts.push(PType::String(0, i64::MAX, None));
    }
    if e.is_instance(&Value::Int(0)) {
        ts.push(PType::Integer(i64::MIN, i64::MAX));
        ts.push(PType::Type(None));
    }
    // An iterator of such elements.
    ts.push(PType::IteratorOf(Box::new(e.clone())));
    PType::Variant(ts)
}

/// Whether Ordo judges arguments against `t`: not for types whose values Ordo does not
/// have or only approximates (callables, iterators, time and version values, runtime
/// objects, parameterized iterables).
fn judged(t: &PType) -> bool {
    use PType::*;
    match t {
        Runtime | SemVer | Timespan | Timestamp | Init | Callable(_) => false,
        Alias(name, inner) => name == "Deferred" || matches!(**inner, Object),
        Array(e, ..) | Optional(Some(e)) | NotUndef(Some(e)) | Sensitive(Some(e)) => judged(e),
        Hash(k, v, ..) => judged(k) && judged(v),
        Tuple(ts, ..) | Variant(ts) => ts.iter().all(judged),
        Struct(es) => es.iter().all(|(_, _, t)| judged(t)),
        _ => true,
    }
}

/// Whether a value holds a type (whose assignability Ordo approximates).
fn holds_type(v: &Value) -> bool {
    match v {
        Value::Type(_) => true,
        Value::Array(a) => a.iter().any(holds_type),
        Value::Hash(h) => h.iter().any(|(k, x)| holds_type(k) || holds_type(x)),
        _ => false,
    }
}

/// Whether `v` certainly does not match `t` (an array might be one of Puppet's iterators).
fn rejects(t: &PType, v: &Value) -> bool {
    let maybe = t.is_instance(v)
        || (holds_type(v) && may_take_type(t, v))
        || (matches!(v, Value::Array(_)) && mentions_iterator(t));
    !maybe
}

fn mentions_iterator(t: &PType) -> bool {
    use PType::*;
    match t {
        Iterator => true,
        Optional(Some(e)) | NotUndef(Some(e)) => mentions_iterator(e),
        Variant(ts) => ts.iter().any(mentions_iterator),
        _ => false,
    }
}

/// Whether `t` might take `v`, a value holding types, which Ordo's assignability only
/// approximates.
fn may_take_type(t: &PType, v: &Value) -> bool {
    use PType::*;
    match t {
        Type(_) | Resource(..) | Class(_) | CatalogEntry | Iterable | Iterator | Any | RichData => {
            true
        }
        Optional(Some(e)) | NotUndef(Some(e)) => may_take_type(e, v),
        Alias(_, e) => may_take_type(e, v),
        Variant(ts) => ts.iter().any(|t| may_take_type(t, v)),
        // A container of types: judged by Ordo only roughly.
        Array(..) | Tuple(..) => matches!(v, Value::Array(_)),
        Hash(..) | Struct(_) => matches!(v, Value::Hash(_)),
        _ => false,
    }
}

impl Dispatch {
    pub(in crate::eval) fn arity(&self) -> (usize, Option<usize>) {
        let min = self
            .params
            .iter()
            .filter(|p| matches!(p.kind, Kind::Required | Kind::RequiredRepeated))
            .count();
        let repeated = self
            .params
            .last()
            .is_some_and(|p| matches!(p.kind, Kind::Repeated | Kind::RequiredRepeated));
        (min, (!repeated).then_some(self.params.len()))
    }

    /// Why the arguments don't fit this dispatch (its block left aside), if they don't.
    fn reject<'v>(&self, values: &'v [Value]) -> Option<Rejection<'v>> {
        let (min, max) = self.arity();
        if values.len() < min || max.is_some_and(|m| values.len() > m) {
            return Some(Rejection::Count(min, max));
        }
        for (i, v) in values.iter().enumerate() {
            let p = &self.params[i.min(self.params.len() - 1)];
            if let Some(t) = parsed(p.ty) {
                if rejects(t, v) {
                    return Some(Rejection::Type(p, t, v));
                }
            }
        }
        None
    }

    /// Puppet's text of the signature: `String string_value, Callable[2, 2] block?`.
    fn text(&self) -> String {
        let (min, max) = self.arity();
        let mut parts: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut ty = type_text(p.ty);
                let indicator = if max.is_none() && i + 1 == self.params.len() {
                    if min == self.params.len() {
                        "+"
                    } else {
                        "*"
                    }
                } else if i + 1 > min {
                    if let Some(inner) = ty
                        .strip_prefix("Optional[")
                        .and_then(|t| t.strip_suffix(']'))
                    {
                        ty = inner.to_string();
                    }
                    "?"
                } else {
                    ""
                };
                format!("{ty} {}{indicator}", p.name)
            })
            .collect();
        if let Some(b) = &self.block {
            let q = if b.optional { "?" } else { "" };
            parts.push(format!("{} {}{q}", type_text(b.ty), b.name));
        }
        parts.join(", ")
    }
}

/// A type as Puppet prints it: Ordo's own printing where Ordo knows the type, else the text
/// with Puppet's spacing.
fn type_text(ty: &'static str) -> String {
    let ordo_prints = !matches!(base_name(ty), "Callable" | "Iterable" | "Iterator");
    if let Some(t) = parse_type(ty).filter(|_| ordo_prints) {
        return t.to_string();
    }
    let compact: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    compact.replace(',', ", ")
}

enum Rejection<'v> {
    /// The dispatch's argument count range.
    Count(usize, Option<usize>),
    /// A parameter and its type, and the argument that does not match it.
    Type(&'static Param, &'static PType, &'v Value),
}

/// Puppet's range text in count messages (`1`, `between 1 and 2`, `at least 1`).
fn range_text(min: usize, max: Option<usize>, zero: &str) -> String {
    match max {
        Some(m) if m == min => {
            if m == 0 {
                zero.to_string()
            } else {
                m.to_string()
            }
        }
        None if min == 0 => "unlimited".to_string(),
        Some(m) if min == 0 => format!("at most {m}"),
        None => format!("at least {min}"),
        Some(m) => format!("between {min} and {m}"),
    }
}

/// The lambda's parameter count as a block type takes it: `Callable[min, max]` (`None`
/// for other block types, which Ordo does not judge).
fn block_range(ty: &str) -> Option<(usize, usize)> {
    let inner = ty.strip_prefix("Callable[")?.strip_suffix(']')?;
    let (a, b) = inner.split_once(',')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// Puppet's message when a lambda of `n` parameters fits none of the blocks of `sig`.
fn block_mismatch(sig: &Signature, values: &[Value], n: usize) -> Option<String> {
    let dispatches: Vec<&Dispatch> = sig.dispatches.iter().filter(|d| !d.handler).collect();
    // A dispatch the arguments fit, without a block: Puppet lists every dispatch with
    // why it refused the call.
    let blockless_fits = dispatches
        .iter()
        .any(|d| d.block.is_none() && d.reject(values).is_none());
    let (mut min, mut max) = (usize::MAX, 0);
    for d in &dispatches {
        match d.block.as_ref() {
            Some(b) => {
                let (lo, hi) = block_range(b.ty)?;
                if (lo..=hi).contains(&n) && d.reject(values).is_none() {
                    return None;
                }
                min = min.min(lo);
                max = max.max(hi);
            }
            None if blockless_fits => {}
            None => return None,
        }
    }
    if !blockless_fits {
        let text = Rejection::Count(min, Some(max)).text(n);
        return Some(format!("'{}' block{text}", sig.name));
    }
    let got = values.len();
    let mut out = format!(
        "The function '{}' was called with arguments it does not accept. It expects one of:",
        sig.name
    );
    for d in &dispatches {
        let why = match (d.reject(values), d.block.as_ref()) {
            (Some(r), _) => r.text(got),
            (None, None) => " does not expect a block".to_string(),
            (None, Some(b)) => {
                let (lo, hi) = block_range(b.ty)?;
                format!(" block{}", Rejection::Count(lo, Some(hi)).text(n))
            }
        };
        out.push_str(&format!("\n  ({})\n    rejected:{why}", d.text()));
    }
    Some(out)
}

/// Functions whose local type aliases the table has substituted (a recursive one standing
/// for `Any` inside itself).
const SUBSTITUTED_ALIASES: &[&str] = &["downcase", "tree_each", "upcase"];

/// Whether a mismatch message is about something inside the value (an element, an entry,
/// a size) rather than the value's type.
fn inside(m: &str) -> bool {
    !(m.starts_with("expects a ") || m.starts_with("expects an "))
        || m.starts_with("expects a value for")
}

impl Rejection<'_> {
    fn nested_in_variant(&self) -> bool {
        match self {
            Rejection::Count(..) => false,
            Rejection::Type(p, _, v) => {
                let (_, members) = members(p.ty);
                members.len() > 1
                    && members.iter().any(|m| {
                        parse_type(m)
                            .is_some_and(|t| !t.is_instance(v) && inside(&types::mismatch(&t, v)))
                    })
            }
        }
    }

    /// Whether the mismatch is inside the argument (an element, an entry, a size), which
    /// Puppet reports at its own path and does not merge.
    fn nested(&self) -> bool {
        match self {
            Rejection::Count(..) => false,
            Rejection::Type(p, t, v) => {
                let (_, members) = members(p.ty);
                members.len() == 1 && inside(&types::mismatch(t, v))
            }
        }
    }

    /// The message after the function's name (` parameter 'x' expects ...`, ` expects 1
    /// argument, got 2`), with its leading space.
    fn text(&self, got: usize) -> String {
        match self {
            Rejection::Count(min, max) => {
                let one =
                    (*min == 1 && max.is_none_or(|m| m == 1)) || (*min == 0 && *max == Some(1));
                format!(
                    " expects {} argument{}, got {}",
                    range_text(*min, *max, "no"),
                    if one { "" } else { "s" },
                    range_text(got, Some(got), "none")
                )
            }
            Rejection::Type(p, t, v) => {
                let (optional, members) = members(p.ty);
                let text = if members.len() > 1 {
                    variant_mismatch(&members, optional, v)
                } else {
                    types::mismatch(t, v)
                };
                format!(" parameter '{}' {text}", p.name)
            }
        }
    }
}

/// The members of a parameter's type as written: whether it is `Optional`, and the types of
/// its variant (or the type itself).
fn members(ty: &'static str) -> (bool, Vec<&'static str>) {
    let (optional, inner) = match ty
        .strip_prefix("Optional[")
        .and_then(|t| t.strip_suffix(']'))
    {
        Some(inner) => (true, inner.trim()),
        None => (false, ty),
    };
    match inner
        .strip_prefix("Variant[")
        .and_then(|t| t.strip_suffix(']'))
    {
        Some(list) => (optional, split_top(list)),
        None => (optional, vec![inner]),
    }
}

/// `a, B[c, d], e` split at its top-level commas.
fn split_top(list: &'static str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(list[start..].trim());
    out
}

/// The base name of a printed type (`Array` of `Array[String]`).
fn base_name(text: &str) -> &str {
    text.split('[').next().unwrap_or(text).trim()
}

/// Puppet's short name of a type: its name, with the name of a contained type for the
/// types that have one (`Iterable[Variant]`, `Type[Regexp]`).
fn short_name(text: &str) -> String {
    let base = base_name(text);
    let contained = matches!(
        base,
        "Optional" | "NotUndef" | "Type" | "Iterable" | "Iterator" | "Sensitive"
    );
    match text[base.len()..].trim().strip_prefix('[') {
        Some(rest) if contained => {
            let inner = base_name(rest.trim_end_matches(']'));
            if inner == "Any" {
                base.to_string()
            } else {
                format!("{base}[{inner}]")
            }
        }
        _ => base.to_string(),
    }
}

/// Puppet's TypeMismatch message for a value matching none of several types: the types
/// in full when one of them is of the value's kind (or its unparameterized form would
/// take the value), else by their short names.
fn variant_mismatch(members: &[&'static str], optional: bool, v: &Value) -> String {
    // An iterator is named with its generalized element type (`Iterator[Integer]`).
    let a = match v {
        Value::Iterator(_) => types::infer_generic(v),
        _ => types::infer(v),
    };
    let a_text = a.to_string();
    let a_base = base_name(&a_text);
    let same_kind = members.iter().any(|m| {
        let b = base_name(m);
        b == a_base || (b == "Struct" && a_base == "Hash") || (b == "Tuple" && a_base == "Array")
    });
    let default_takes = members.iter().any(|m| {
        types::builtin(base_name(m)).is_some_and(|d| match d {
            PType::Variant(_) => false,
            d => d.is_instance(v),
        })
    });
    let (mut names, got): (Vec<String>, String) = if same_kind || default_takes {
        let got = if same_kind {
            a_text.clone()
        } else {
            a_base.to_string()
        };
        (members.iter().map(|m| type_text(m)).collect(), got)
    } else {
        let mut names: Vec<String> = Vec::new();
        for m in members {
            let n = short_name(m);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        (names, short_name(&a_text))
    };
    if optional {
        names.insert(0, "Undef".to_string());
    }
    let list = match names.len() {
        1 => return format!("expects {} value, got {got}", a_an(&names[0])),
        2 => format!("{} or {}", names[0], names[1]),
        n => format!("{}, or {}", names[..n - 1].join(", "), names[n - 1]),
    };
    format!("expects a value of type {list}, got {got}")
}

fn a_an(name: &str) -> String {
    let vowel = name
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c));
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// The number of parameters of a block that has no defaults and no captures-rest, as
/// [`type_mismatch`] compares it with a dispatch's `Callable`; `None` for any other block.
pub fn lambda_arity(lambda: Option<&crate::ast::Lambda>) -> Option<usize> {
    lambda
        .filter(|l| {
            l.params
                .iter()
                .all(|p| p.value.is_none() && !p.captures_rest)
        })
        .map(|l| l.params.len())
}

/// Puppet's message when the argument types fit none of the dispatches of `sig` (the
/// argument count fitting at least one), if they don't.
///
/// `lambda`: the number of parameters of the lambda given, when it has neither defaults
/// nor a captures-rest parameter. When the arguments fit a dispatch but the lambda fits
/// no dispatch's block, Puppet's block message (`'sort' block expects 2 arguments, got 1`).
pub fn type_mismatch(sig: &Signature, values: &[Value], lambda: Option<usize>) -> Option<String> {
    if sig.dispatches.is_empty() {
        return None;
    }
    let mut rejections = Vec::with_capacity(sig.dispatches.len());
    for d in sig.dispatches {
        let Some(r) = d.reject(values) else {
            return block_mismatch(sig, values, lambda?);
        };
        if !d.handler {
            rejections.push((d, r));
        }
    }
    // A value failing inside one member of a variant: Puppet lists each member's
    // failure at its own path ("variant 0 index 0 ..."), which Ordo does not describe.
    if rejections.iter().any(|(_, r)| r.nested_in_variant()) {
        return None;
    }
    let nested = rejections.iter().any(|(_, r)| r.nested());
    // Ordo cannot name the local type aliases that Puppet's nested messages show.
    if nested && SUBSTITUTED_ALIASES.contains(&sig.name) {
        return None;
    }
    let (dispatches, rejections): (Vec<&Dispatch>, Vec<Rejection>) = rejections.into_iter().unzip();
    let name = sig.name;
    let got = values.len();
    if rejections.len() == 1 {
        return Some(format!("'{name}'{}", rejections[0].text(got)));
    }
    // Puppet merges the rejections when all are of one kind at one place: counts into one
    // range, type mismatches of a same-named parameter into one list of types.
    if rejections.iter().all(|r| matches!(r, Rejection::Count(..))) {
        let mut min = usize::MAX;
        let mut max = Some(0);
        for r in &rejections {
            if let Rejection::Count(a, b) = r {
                min = min.min(*a);
                max = match (max, b) {
                    (Some(x), Some(y)) => Some(x.max(*y)),
                    _ => None,
                };
            }
        }
        return Some(format!("'{name}'{}", Rejection::Count(min, max).text(got)));
    }
    if let (false, Some(Rejection::Type(first, _, v))) = (nested, rejections.first()) {
        let mut all: Vec<&'static str> = Vec::new();
        let mut optional = false;
        let same = rejections.iter().all(|r| match r {
            Rejection::Type(p, _, _) if p.name == first.name => {
                let (o, ms) = members(p.ty);
                optional |= o;
                for m in ms {
                    if !all.contains(&m) {
                        all.push(m);
                    }
                }
                true
            }
            _ => false,
        });
        if same {
            let name_p = first.name;
            // Puppet normalizes a variant of enums into one enum.
            let enums: Option<Vec<String>> =
                all.iter()
                    .try_fold(Vec::new(), |mut acc, m| match parse_type(m)? {
                        PType::Enum(vs, false) => {
                            acc.extend(vs);
                            Some(acc)
                        }
                        _ => None,
                    });
            let text = match enums {
                Some(mut vs) if !optional => {
                    vs.sort();
                    vs.dedup();
                    types::mismatch(&PType::Enum(vs, false), v)
                }
                _ if all.len() > 1 || optional => variant_mismatch(&all, optional, v),
                _ => match rejections[0] {
                    Rejection::Type(_, t, _) => types::mismatch(t, v),
                    Rejection::Count(..) => String::new(),
                },
            };
            return Some(format!("'{name}' parameter '{name_p}' {text}"));
        }
    }
    let mut out = format!(
        "The function '{name}' was called with arguments it does not accept. It expects one of:"
    );
    for (d, r) in dispatches.iter().zip(&rejections) {
        out.push_str(&format!("\n  ({})\n    rejected:{}", d.text(), r.text(got)));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_messages_read_as_puppets() {
        assert!(SIGNATURES.windows(2).all(|w| w[0].name < w[1].name));
        let join = find("join").unwrap();
        assert_eq!(
            mismatch(join, 0, false).unwrap(),
            "'join' expects between 1 and 2 arguments, got none"
        );
        assert_eq!(mismatch(join, 2, false), None);
        let size = find("size").unwrap();
        assert_eq!(
            mismatch(size, 2, false).unwrap(),
            "'size' expects 1 argument, got 2"
        );
        let new = find("new").unwrap();
        assert_eq!(
            mismatch(new, 0, false).unwrap(),
            "'new' expects at least 1 argument, got none"
        );
        assert_eq!(
            mismatch(find("each").unwrap(), 1, false).unwrap(),
            "'each' expects a block"
        );
        assert_eq!(
            mismatch(find("upcase").unwrap(), 1, true).unwrap(),
            "'upcase' does not expect a block"
        );
    }

    #[test]
    fn argument_types_are_checked_as_puppet_does() {
        let check =
            |name: &str, values: Vec<Value>| type_mismatch(find(name).unwrap(), &values, None);
        assert_eq!(
            check("join", vec![Value::Int(1)]).unwrap(),
            "'join' parameter 'arg' expects an Array value, got Integer"
        );
        assert_eq!(
            check("join", vec![Value::Array(vec![]), Value::Str("-".into())]),
            None
        );
        assert_eq!(
            check("length", vec![Value::Int(1)]).unwrap(),
            "'length' parameter 'arg' expects a value of type Collection, String, or Binary, got Integer"
        );
        let sort = check("sort", vec![Value::Hash(Default::default())]).unwrap();
        assert!(sort.starts_with(
            "The function 'sort' was called with arguments it does not accept. It expects one of:\n  (String string_value, Callable[2, 2] block?)\n    rejected: parameter 'string_value' expects a String value, got Hash"
        ));
        assert_eq!(
            check("abs", vec![Value::Bool(true)]).unwrap(),
            "'abs' parameter 'val' expects a value of type Numeric or String, got Boolean"
        );
        // Values holding types are left to the implementation where a type might fit.
        assert_eq!(check("new", vec![Value::Type(Box::new(PType::Any))]), None);
    }
}
