//! Runtime values of the Puppet language and how Puppet prints them.

use crate::eval::types::PType;
use indexmap::IndexMap;
use serde_json::Value as Json;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A compiled regular expression with the source Puppet shows (`/^a$/`). Ruby patterns
/// that the `regex` crate cannot run (look-around, backreferences) use `fancy-regex`.
#[derive(Clone, Debug)]
pub struct Regex {
    pub source: Arc<str>,
    engine: Arc<Engine>,
}

#[derive(Debug)]
enum Engine {
    Plain(regex::Regex),
    Fancy(fancy_regex::Regex),
}

/// Backtracking steps allowed when the default limit (a million) was not enough: Ruby has
/// no such limit and answers correctly, so the match is tried again with this one before
/// giving up.
const LARGE_BACKTRACK_LIMIT: usize = 50_000_000;

/// Runs `f` with the pattern; past fancy-regex's backtracking limit, again with
/// [`LARGE_BACKTRACK_LIMIT`]. When that fails too, the failure is recorded (see
/// [`take_regex_failure`]) and `Err` returned.
fn retry_past_limit<T>(
    source: &str,
    re: &fancy_regex::Regex,
    f: impl Fn(&fancy_regex::Regex) -> fancy_regex::Result<T>,
) -> fancy_regex::Result<T> {
    let r = match f(re) {
        Err(fancy_regex::Error::RuntimeError(
            fancy_regex::RuntimeError::BacktrackLimitExceeded,
        )) => fancy_regex::RegexBuilder::new(re.as_str())
            .backtrack_limit(LARGE_BACKTRACK_LIMIT)
            .build()
            .and_then(|larger| f(&larger)),
        r => r,
    };
    if let Err(e) = &r {
        record_failure(source, e);
    }
    r
}

thread_local! {
    /// The first match on this thread that gave up since the last [`take_regex_failure`].
    static GAVE_UP: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    static ANY_GAVE_UP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn record_failure(source: &str, e: &fancy_regex::Error) {
    let why = match e {
        fancy_regex::Error::RuntimeError(fancy_regex::RuntimeError::BacktrackLimitExceeded) => {
            format!("gave up after {LARGE_BACKTRACK_LIMIT} backtracking steps")
        }
        other => format!("failed: {other}"),
    };
    let mut shown: String = source.chars().take(200).collect();
    if shown.len() < source.len() {
        shown.push_str("...");
    }
    GAVE_UP.with(|g| {
        g.borrow_mut()
            .get_or_insert_with(|| format!("Matching the regular expression /{shown}/ {why}"));
    });
    ANY_GAVE_UP.with(|a| a.set(true));
}

/// The longest string an expression may give (doubling a string by interpolation 40 times
/// would ask for terabytes).
pub const MAX_STRING_BYTES: usize = 256 << 20;

/// Every match replaced, as Ruby's `gsub` does, but a result longer than one string may be
/// (`MAX_STRING_BYTES`: a long replacement at each of many empty matches) is not
/// made: the failure is recorded as a match's is, and the subject comes back unchanged.
fn replace_all_bounded(re: &regex::Regex, s: &str, repl: &str) -> String {
    let max = MAX_STRING_BYTES;
    // Ruby's `gsub`: after a match the search goes on at its end, where an empty match is
    // taken too ("aaa" with /a*/ is two matches, the regex crate's `replace_all` one); after
    // an empty match it goes on one character later.
    let mut out = String::new();
    let (mut last, mut at) = (0, 0);
    while at <= s.len() {
        let Some(caps) = re.captures_at(s, at) else {
            break;
        };
        let Some(m) = caps.get(0) else { break };
        out.push_str(&s[last..m.start()]);
        caps.expand(repl, &mut out);
        last = m.end();
        if out.len() > max {
            break;
        }
        at = if m.end() > m.start() {
            m.end()
        } else {
            m.end() + s[m.end()..].chars().next().map_or(1, char::len_utf8)
        };
    }
    out.push_str(&s[last..]);
    if out.len() <= max {
        return out;
    }
    GAVE_UP.with(|g| {
        g.borrow_mut().get_or_insert_with(|| {
            format!("evaluation stopped: a string longer than the {max} bytes one value may have")
        });
    });
    ANY_GAVE_UP.with(|a| a.set(true));
    s.to_string()
}

/// The message of a match that could not be answered (past the backtracking limit), taken
/// once. The matching methods cannot fail (a `Pattern` type check is a plain yes or no), so
/// they answer "no match" and record the failure here; the evaluator turns it into an error
/// at the expression that matched, before its answer is used, so no wrong answer goes on.
pub fn take_regex_failure() -> Option<String> {
    if !ANY_GAVE_UP.with(std::cell::Cell::get) {
        return None;
    }
    ANY_GAVE_UP.with(|a| a.set(false));
    GAVE_UP.with(|g| g.borrow_mut().take())
}

/// Patterns compiled once per process at most this many (the rest are compiled each time).
const REGEX_CACHE_MAX: usize = 4096;

impl Regex {
    /// Compiles a Ruby-flavoured pattern; the error text is the regex crate's. A pattern is
    /// compiled once per process and shared (a `Pattern[...]` type checks its patterns at
    /// every match, and compiling one costs more than a compile's whole evaluation).
    pub fn new(source: &str) -> Result<Regex, String> {
        type Cache = std::sync::Mutex<std::collections::HashMap<Arc<str>, Regex>>;
        static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(r) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(source) {
            return Ok(r.clone());
        }
        let r = Regex::compile(source)?;
        let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() < REGEX_CACHE_MAX {
            map.insert(r.source.clone(), r.clone());
        }
        Ok(r)
    }

    fn compile(source: &str) -> Result<Regex, String> {
        let translated = translate_ruby_regex(source);
        let engine = match regex::Regex::new(&translated) {
            Ok(re) => Engine::Plain(re),
            Err(plain_err) => match fancy_regex::Regex::new(&translated) {
                Ok(re) => Engine::Fancy(re),
                Err(_) => return Err(plain_err.to_string()),
            },
        };
        Ok(Regex {
            source: Arc::from(source),
            engine: Arc::new(engine),
        })
    }

    pub fn is_match(&self, s: &str) -> bool {
        match &*self.engine {
            Engine::Plain(re) => re.is_match(s),
            Engine::Fancy(re) => {
                retry_past_limit(&self.source, re, |r| r.is_match(s)).unwrap_or(false)
            }
        }
    }

    /// The groups of the first match (`$0`, `$1`, ...), unmatched groups as undef.
    pub fn captures(&self, s: &str) -> Option<Vec<Value>> {
        let group = |g: Option<&str>| g.map_or(Value::Undef, Value::str);
        match &*self.engine {
            Engine::Plain(re) => re
                .captures(s)
                .map(|c| c.iter().map(|g| group(g.map(|m| m.as_str()))).collect()),
            Engine::Fancy(re) => retry_past_limit(&self.source, re, |r| {
                r.captures(s).map(|c| {
                    c.map(|c| {
                        c.iter()
                            .map(|g| group(g.map(|m| m.as_str())))
                            .collect::<Vec<_>>()
                    })
                })
            })
            .ok()
            .flatten(),
        }
    }

    /// The groups of the first match starting at or after byte `from` (`None` for a group
    /// that did not take part); anchors see the whole string.
    fn groups_at(&self, s: &str, from: usize) -> Option<Vec<Option<(usize, usize)>>> {
        match &*self.engine {
            Engine::Plain(re) => re
                .captures_at(s, from)
                .map(|c| c.iter().map(|g| g.map(|m| (m.start(), m.end()))).collect()),
            Engine::Fancy(re) => retry_past_limit(&self.source, re, |r| {
                r.captures_from_pos(s, from).map(|c| {
                    c.map(|c| {
                        c.iter()
                            .map(|g| g.map(|m| (m.start(), m.end())))
                            .collect::<Vec<_>>()
                    })
                })
            })
            .ok()
            .flatten(),
        }
    }

    /// The spans of the matches from byte `from` on, left to right without overlap (an
    /// empty match moves one character on); only the first when `all` is false.
    pub fn match_spans(&self, s: &str, from: usize, all: bool) -> Vec<(usize, usize)> {
        let mut out = vec![];
        let mut at = from;
        while at <= s.len() {
            let Some((m0, m1)) = self
                .groups_at(s, at)
                .and_then(|g| g.first().copied().flatten())
            else {
                break;
            };
            out.push((m0, m1));
            if !all {
                break;
            }
            at = if m1 > m0 {
                m1
            } else {
                m1 + s[m1..].chars().next().map_or(1, char::len_utf8)
            };
        }
        out
    }

    /// Ruby's `String#split` with this pattern: the captured groups of each separator are
    /// kept, an empty match splits between characters (never before the first), and
    /// trailing empty strings are dropped.
    pub fn split(&self, s: &str) -> Vec<String> {
        let mut out = Vec::new();
        if s.is_empty() {
            return out;
        }
        let next_char = |i: usize| i + s[i..].chars().next().map_or(1, char::len_utf8);
        let (mut beg, mut start, mut last_null) = (0, 0, false);
        while start <= s.len() {
            let Some(groups) = self.groups_at(s, start) else {
                break;
            };
            let Some((m0, m1)) = groups[0] else { break };
            if start == m0 && m0 == m1 {
                if last_null {
                    let end = next_char(beg).min(s.len());
                    out.push(s[beg..end].to_string());
                    beg = start;
                } else {
                    start = if start == s.len() {
                        start + 1
                    } else {
                        next_char(start)
                    };
                    last_null = true;
                    continue;
                }
            } else {
                out.push(s[beg..m0].to_string());
                beg = m1;
                start = m1;
            }
            last_null = false;
            for g in groups.iter().skip(1).flatten() {
                out.push(s[g.0..g.1].to_string());
            }
        }
        if s.len() > beg {
            out.push(s[beg..].to_string());
        }
        while out.last().is_some_and(String::is_empty) {
            out.pop();
        }
        out
    }

    /// Whether the pattern has a named group (its plain groups then do not capture).
    pub fn has_named_groups(&self) -> bool {
        has_named_group(&self.source)
    }

    /// Replaces the first (or every) match; `repl` uses `${1}` group syntax.
    pub fn replace(&self, s: &str, repl: &str, all: bool) -> String {
        match &*self.engine {
            Engine::Plain(re) if all => replace_all_bounded(re, s, repl),
            Engine::Plain(re) => re.replace(s, repl).into_owned(),
            Engine::Fancy(re) => retry_past_limit(&self.source, re, |r| {
                r.try_replacen(s, if all { 0 } else { 1 }, repl)
                    .map(|c| c.into_owned())
            })
            .unwrap_or_else(|_| s.to_string()),
        }
    }
}

/// Ruby's regular expressions in the regex crate's syntax:
/// - `^` and `$` match at line boundaries in Ruby, always: `(?m)`;
/// - Ruby's `m` flag (`(?m)`, `(?m-x:...)`) lets `.` match a newline: the crate's `s`;
/// - `\Z` (the end, or before a final newline) is a look-ahead (run by fancy-regex), `\h`
///   a hex digit, `\0` NUL.
/// - with a named group, Ruby's plain groups do not capture: `(?:`.
fn translate_ruby_regex(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 8);
    out.push_str("(?m)");
    let named = has_named_group(src);
    let mut class = 0usize;
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('Z') if class == 0 => out.push_str("(?=\\n?\\z)"),
                Some('h') if class == 0 => out.push_str("[0-9a-fA-F]"),
                Some('h') => out.push_str("0-9a-fA-F"),
                Some('0') => {
                    let mut code = 0u32;
                    for _ in 0..2 {
                        match chars.peek().and_then(|d| d.to_digit(8)) {
                            Some(d) => {
                                code = code * 8 + d;
                                chars.next();
                            }
                            None => break,
                        }
                    }
                    out.push_str(&format!("\\x{{{code:x}}}"));
                }
                Some(d) => {
                    out.push('\\');
                    out.push(d);
                }
                None => out.push('\\'),
            },
            '[' => {
                class += 1;
                out.push(c);
                // A `]` or `^]` right after the opening bracket is a literal.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            ']' if class > 0 => {
                class -= 1;
                out.push(c);
            }
            '(' if class == 0 && chars.peek() == Some(&'?') => {
                out.push_str("(?");
                chars.next();
                // Inline options: Ruby's `m` is the crate's `s`.
                let mut flags = String::new();
                while let Some(&f) = chars.peek() {
                    if matches!(f, 'i' | 'm' | 'x' | '-') {
                        flags.push(if f == 'm' { 's' } else { f });
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push_str(&flags);
            }
            '(' if class == 0 && named => out.push_str("(?:"),
            c => out.push(c),
        }
    }
    out
}

/// Whether a Ruby regex has a named group (`(?<name>...)` or `(?'name'...)`), outside
/// character classes and escapes.
fn has_named_group(src: &str) -> bool {
    let b = src.as_bytes();
    let mut class = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' => class += 1,
            b']' if class > 0 => class -= 1,
            b'(' if class == 0 && b.get(i + 1) == Some(&b'?') => {
                let name_at = match (b.get(i + 2), b.get(i + 3)) {
                    (Some(b'<' | b'\''), Some(c)) => Some(*c),
                    (Some(b'P'), Some(b'<')) => b.get(i + 4).copied(),
                    _ => None,
                };
                if name_at.is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

#[derive(Clone, Debug)]
pub enum Value {
    Undef,
    Default,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Regex(Regex),
    Array(Vec<Value>),
    Hash(HashValue),
    Type(Box<PType>),
    Sensitive(Box<Value>),
    /// A function call left for the agent (`Deferred('name', [args])`).
    Deferred(Box<Deferred>),
    /// A point in time (`Timestamp()`, `Timestamp('2020-01-02T03:04:05Z')`).
    Timestamp(Timestamp),
    /// A duration (`Timespan('1-00:00:00')`, `Timespan(3600)`).
    Timespan(super::timespan::Timespan),
    /// What `step` and `reverse_each` give without a block (Puppet's `Iterator`).
    Iterator(Arc<IterValue>),
    /// Puppet's `Error` object (what `get` and `getvar` hand their block).
    Error(Box<ErrorValue>),
    /// A byte sequence (`Binary('b25l')`, `Binary('one', '%s')`, `Binary([1, 2])`).
    Binary(Arc<[u8]>),
}

/// Puppet's `Iterator`: its element type (`Iterator[Integer]`) and the elements it goes
/// through (a hash's as `[key, value]` arrays). Puppet's iterators are used up by some
/// functions; Ordo's start over at every use.
#[derive(Clone, Debug)]
pub struct IterValue {
    pub elem: PType,
    pub items: Vec<Value>,
}

impl IterValue {
    /// How Puppet prints an iterator (`Iterator[Integer]-Value`).
    pub fn shown(&self) -> String {
        format!("Iterator[{}]-Value", self.elem.puppet_generalize())
    }
}

/// Ruby's `Integer#fdiv`: both reduced by their greatest common divisor, then divided as
/// doubles (so 1577934245250000000.fdiv(10**9) is 1577934245.25 exactly).
pub fn ruby_fdiv(x: i128, y: i128) -> f64 {
    let (mut a, mut b) = (x.unsigned_abs(), y.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let g = i128::try_from(a).unwrap_or(1).max(1);
    (x / g) as f64 / (y / g) as f64
}

/// Puppet's `Timestamp`: seconds and nanoseconds since the Unix epoch, UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    pub secs: i64,
    pub nanos: u32,
}

impl Timestamp {
    /// The time `d` after the epoch.
    pub fn at(d: std::time::Duration) -> Timestamp {
        Timestamp {
            secs: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            nanos: d.subsec_nanos(),
        }
    }

    /// Nanoseconds since the epoch.
    pub fn total_nanos(self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }

    /// Ruby's `TimeData#to_f`: the nanoseconds `fdiv` 10^9.
    pub fn to_f64(self) -> f64 {
        ruby_fdiv(self.total_nanos(), 1_000_000_000)
    }

    /// Ruby's `TimeData#to_i`: whole seconds, floored (`secs` is already the floor).
    pub fn to_i64(self) -> i64 {
        self.secs
    }

    /// Seconds since the epoch (a float keeps its fraction).
    pub fn from_seconds(v: &Value) -> Option<Timestamp> {
        match v {
            Value::Int(i) => Some(Timestamp { secs: *i, nanos: 0 }),
            Value::Float(f) if f.is_finite() => {
                let secs = f.floor();
                Some(Timestamp {
                    secs: secs as i64,
                    nanos: ((f - secs) * 1e9).round().min(999_999_999.0) as u32,
                })
            }
            _ => None,
        }
    }

    /// Puppet's default timestamp formats (ISO 8601 forms, `T` or a blank between date and
    /// time, fraction and zone optional; no zone is UTC).
    pub fn parse(s: &str) -> Option<Timestamp> {
        let t = s.trim();
        if let Ok(ts) = t.parse::<jiff::Timestamp>() {
            return Some(Self::from_jiff(ts));
        }
        let t = t.strip_suffix(" UTC").unwrap_or(t);
        if let Ok(dt) = t.replacen(' ', "T", 1).parse::<jiff::civil::DateTime>() {
            return dt
                .to_zoned(jiff::tz::TimeZone::UTC)
                .ok()
                .map(|z| Self::from_jiff(z.timestamp()));
        }
        let d = t.parse::<jiff::civil::Date>().ok()?;
        d.to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| Self::from_jiff(z.timestamp()))
    }

    fn from_jiff(ts: jiff::Timestamp) -> Timestamp {
        // jiff's seconds go toward zero (a negative fraction before the epoch): floored
        // seconds and a fraction of 0 up to 1 second here.
        let total = ts.as_nanosecond();
        Timestamp {
            secs: i64::try_from(total.div_euclid(1_000_000_000)).unwrap_or(i64::MIN),
            nanos: u32::try_from(total.rem_euclid(1_000_000_000)).unwrap_or(0),
        }
    }

    fn to_jiff(self) -> Option<jiff::Zoned> {
        let ts = jiff::Timestamp::from_nanosecond(self.total_nanos()).ok()?;
        Some(ts.to_zoned(jiff::tz::TimeZone::UTC))
    }

    /// Puppet's `strftime` of a timestamp, in UTC: Ruby's directives, `%L` milliseconds,
    /// `%N` nanoseconds (`%3N` three digits), `%Z` `UTC`.
    pub fn strftime(self, fmt: &str) -> Result<String, String> {
        self.strftime_in(fmt, None)
    }

    /// [`Timestamp::strftime`] at a fixed offset from UTC in seconds (Ruby's
    /// `Time#localtime(offset)`, whose `%Z` is empty).
    pub fn strftime_in(self, fmt: &str, offset: Option<i32>) -> Result<String, String> {
        let mut z = self.to_jiff().ok_or("timestamp out of range")?;
        if let Some(off) = offset {
            let off = jiff::tz::Offset::from_seconds(off).map_err(|e| e.to_string())?;
            z = z.with_time_zone(jiff::tz::TimeZone::fixed(off));
        }
        // jiff writes fractions with `%f`; its `%Z` of UTC is `UTC` too.
        let mut spec = String::with_capacity(fmt.len());
        let mut chars = fmt.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                spec.push(c);
                continue;
            }
            let mut flags = String::new();
            while let Some(f) = chars.peek().filter(|f| "-_0^#".contains(**f)) {
                flags.push(*f);
                chars.next();
            }
            let mut width = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                width.push(*d);
                chars.next();
            }
            // Ruby's text directives with a width (padded with spaces, `0` with zeros, `-`
            // not at all) or `#` (the case changed: `%p` and `%Z` down, the names up):
            // written here, as jiff ignores both for them.
            if let Some(&d) = chars.peek().filter(|d| "aAbBhpPZ".contains(**d)) {
                if (!width.is_empty() || flags.contains('#')) && !(d == 'Z' && offset.is_some()) {
                    chars.next();
                    let mut text = jiff::fmt::strtime::format(format!("%{d}"), &z)
                        .map_err(|e| e.to_string())?;
                    if flags.contains('^') || (flags.contains('#') && !"pZ".contains(d)) {
                        text = text.to_uppercase();
                    } else if flags.contains('#') {
                        text = text.to_lowercase();
                    }
                    let w: usize = width.parse().unwrap_or(0);
                    if !flags.contains('-') && w > text.chars().count() {
                        let pad = if flags.contains('0') { "0" } else { " " };
                        text = pad.repeat(w - text.chars().count()) + &text;
                    }
                    spec.push_str(&text.replace('%', "%%"));
                    continue;
                }
            }
            let width = flags + &width;
            match chars.next() {
                Some('L') => spec.push_str(&format!(
                    "%{}f",
                    if width.is_empty() { "3" } else { &width }
                )),
                Some('N') => spec.push_str(&format!(
                    "%{}f",
                    if width.is_empty() { "9" } else { &width }
                )),
                Some('Z') if offset.is_some() => {}
                // Ruby's composite directives where jiff's differ (its locale forms).
                Some('c') if width.is_empty() => spec.push_str("%a %b %e %H:%M:%S %Y"),
                Some('x') if width.is_empty() => spec.push_str("%m/%d/%y"),
                Some('X') if width.is_empty() => spec.push_str("%H:%M:%S"),
                Some('r') if width.is_empty() => spec.push_str("%I:%M:%S %p"),
                Some(other) => {
                    spec.push('%');
                    spec.push_str(&width);
                    spec.push(other);
                }
                None => spec.push('%'),
            }
        }
        jiff::fmt::strtime::format(&spec, &z).map_err(|e| e.to_string())
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.strftime("%FT%T.%N UTC") {
            Ok(s) => f.write_str(&s),
            Err(_) => write!(f, "{}", self.secs),
        }
    }
}

/// Puppet's `Deferred` object: a function name and its arguments (`undef` when not given),
/// called when the catalog is applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Deferred {
    pub name: String,
    pub arguments: Option<Vec<Value>>,
}

impl Deferred {
    /// Its attributes as a hash, as Puppet shows them (`{'name' => 'f', 'arguments' => []}`).
    pub fn attributes(&self) -> Value {
        let mut h: IndexMap<Value, Value> = IndexMap::new();
        h.insert(Value::str("name"), Value::str(self.name.clone()));
        if let Some(a) = &self.arguments {
            h.insert(Value::str("arguments"), Value::Array(a.clone()));
        }
        Value::Hash(h.into())
    }

    /// `Deferred({'name' => 'f', 'arguments' => [..]})`, Puppet's string form.
    pub fn shown(&self) -> String {
        format!("Deferred({})", self.attributes().to_string_repr())
    }
}

/// Puppet's `Error` object: a message, and an optional kind, details and issue code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ErrorValue {
    pub msg: String,
    pub kind: Option<String>,
    pub details: Option<Value>,
    pub issue_code: Option<String>,
}

impl ErrorValue {
    /// The attribute `name` (`msg`, `kind`, `details`, `issue_code`), if it is one.
    pub fn attribute(&self, name: &str) -> Option<Value> {
        let opt = |s: &Option<String>| s.clone().map_or(Value::Undef, Value::Str);
        Some(match name {
            "msg" => Value::str(self.msg.clone()),
            "kind" => opt(&self.kind),
            "details" => self.details.clone().unwrap_or(Value::Undef),
            "issue_code" => opt(&self.issue_code),
            _ => return None,
        })
    }

    /// `Error({'msg' => .., 'kind' => .., ..})`, Puppet's string form (attributes set only).
    pub fn shown(&self) -> String {
        let mut h: IndexMap<Value, Value> = IndexMap::new();
        h.insert(Value::str("msg"), Value::str(self.msg.clone()));
        for (k, v) in [
            ("kind", self.kind.clone().map(Value::Str)),
            ("details", self.details.clone()),
            ("issue_code", self.issue_code.clone().map(Value::Str)),
        ] {
            if let Some(v) = v {
                h.insert(Value::str(k), v);
            }
        }
        format!("Error({})", Value::Hash(h.into()).to_string_repr())
    }
}

/// The map of a hash value, boxed: a hash is rarer than a string or a number, and keeping
/// its map out of line makes every [`Value`] less than half as big (strings, arrays and
/// parameters are stored and moved by the million).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashValue(Box<IndexMap<Value, Value>>);

impl std::ops::Deref for HashValue {
    type Target = IndexMap<Value, Value>;
    fn deref(&self) -> &IndexMap<Value, Value> {
        &self.0
    }
}

impl std::ops::DerefMut for HashValue {
    fn deref_mut(&mut self) -> &mut IndexMap<Value, Value> {
        &mut self.0
    }
}

impl From<IndexMap<Value, Value>> for HashValue {
    fn from(m: IndexMap<Value, Value>) -> HashValue {
        HashValue(Box::new(m))
    }
}

impl HashValue {
    /// The map itself.
    pub fn into_inner(self) -> IndexMap<Value, Value> {
        *self.0
    }
}

impl FromIterator<(Value, Value)> for HashValue {
    fn from_iter<I: IntoIterator<Item = (Value, Value)>>(iter: I) -> HashValue {
        HashValue(Box::new(iter.into_iter().collect()))
    }
}

impl IntoIterator for HashValue {
    type Item = (Value, Value);
    type IntoIter = indexmap::map::IntoIter<Value, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a HashValue {
    type Item = (&'a Value, &'a Value);
    type IntoIter = indexmap::map::Iter<'a, Value, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut HashValue {
    type Item = (&'a Value, &'a mut Value);
    type IntoIter = indexmap::map::IterMut<'a, Value, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl PartialEq for Value {
    /// Strict structural equality (hash keys, `unique`); the `==` operator is [`puppet_eq`].
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Undef, Undef) | (Default, Default) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a.to_bits() == b.to_bits(),
            (Str(a), Str(b)) => a == b,
            (Regex(a), Regex(b)) => a.source == b.source,
            (Array(a), Array(b)) => a == b,
            (Hash(a), Hash(b)) => a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x == y),
            (Type(a), Type(b)) => a == b,
            (Sensitive(a), Sensitive(b)) => a == b,
            (Deferred(a), Deferred(b)) => a == b,
            (Timestamp(a), Timestamp(b)) => a == b,
            (Timespan(a), Timespan(b)) => a == b,
            (Binary(a), Binary(b)) => a == b,
            (Error(a), Error(b)) => a == b,
            // An iterator equals itself only (Puppet compares the objects).
            (Iterator(a), Iterator(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Bool(b) => b.hash(state),
            Value::Int(i) => i.hash(state),
            Value::Float(f) => f.to_bits().hash(state),
            Value::Str(s) => s.hash(state),
            Value::Regex(r) => r.source.hash(state),
            Value::Array(a) => a.hash(state),
            Value::Hash(h) => {
                for (k, v) in h {
                    k.hash(state);
                    v.hash(state);
                }
            }
            Value::Type(t) => t.to_string().hash(state),
            Value::Sensitive(v) => v.hash(state),
            Value::Deferred(d) => d.hash(state),
            Value::Timestamp(t) => t.hash(state),
            Value::Timespan(t) => t.hash(state),
            Value::Iterator(it) => it.items.hash(state),
            Value::Binary(b) => b.hash(state),
            Value::Error(e) => e.hash(state),
            Value::Undef | Value::Default => {}
        }
    }
}

impl Value {
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(s.into())
    }

    pub fn is_undef(&self) -> bool {
        matches!(self, Value::Undef)
    }

    /// Puppet truthiness: only `undef` and `false` are false.
    pub fn truthy(&self) -> bool {
        !matches!(self, Value::Undef | Value::Bool(false))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// What `*v` unfolds to: an array's or an iterator's elements, or the value alone.
    pub fn into_unfolded(self) -> Vec<Value> {
        match self {
            Value::Undef => vec![],
            Value::Array(a) => a,
            Value::Hash(h) => h
                .into_iter()
                .map(|(k, v)| Value::Array(vec![k, v]))
                .collect(),
            Value::Iterator(it) => it.items.clone(),
            other => vec![other],
        }
    }

    /// Whether the value is or contains an iterator, which Puppet allows in no resource
    /// attribute ("Use of an Iterator is not supported here").
    pub fn holds_iterator(&self) -> bool {
        match self {
            Value::Iterator(_) => true,
            Value::Array(a) => a.iter().any(Value::holds_iterator),
            Value::Hash(h) => h
                .iter()
                .any(|(k, v)| k.holds_iterator() || v.holds_iterator()),
            _ => false,
        }
    }

    /// The name Puppet uses for the value's type in messages (`String`, `Integer`).
    pub fn type_name(&self) -> String {
        crate::eval::types::infer(self).generalize().to_string()
    }

    /// `to_s` as used by interpolation, `notice` and string concatenation.
    pub fn to_display(&self) -> String {
        let mut out = String::new();
        self.write_display(&mut out, false);
        out
    }

    /// [`Value::to_display`] appended to `out`.
    pub fn push_display(&self, out: &mut String) {
        self.write_display(out, false)
    }

    /// How `String(v)` and nested values print: strings inside containers are quoted.
    pub fn to_string_repr(&self) -> String {
        let mut out = String::new();
        self.write_display(&mut out, true);
        out
    }

    fn write_display(&self, out: &mut String, quote: bool) {
        match self {
            Value::Undef => {
                if quote {
                    out.push_str("undef")
                }
            }
            Value::Default => out.push_str("default"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                use std::fmt::Write;
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => out.push_str(&format_float(*f)),
            Value::Str(s) => {
                if quote {
                    out.push_str(&quote_string(s))
                } else {
                    out.push_str(s)
                }
            }
            Value::Regex(r) => out.push_str(&regex_inspect(&r.source)),
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write_nested(out, quote);
                }
                out.push(']');
            }
            Value::Hash(h) => {
                out.push('{');
                for (i, (k, v)) in h.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write_nested(out, quote);
                    out.push_str(" => ");
                    v.write_nested(out, quote);
                }
                out.push('}');
            }
            Value::Type(t) => out.push_str(&t.to_string()),
            Value::Sensitive(_) => out.push_str("Sensitive [value redacted]"),
            Value::Deferred(d) => out.push_str(&d.shown()),
            Value::Error(e) => out.push_str(&e.shown()),
            Value::Timestamp(t) => out.push_str(&t.to_string()),
            Value::Timespan(t) => out.push_str(&t.to_string()),
            // `String(iterator)` lists its elements; elsewhere it prints as Puppet's `to_s`.
            Value::Iterator(it) if quote => {
                Value::Array(it.items.clone()).write_display(out, quote)
            }
            Value::Iterator(it) => out.push_str(&it.shown()),
            // Strict base64; `Binary("...")` inside a container's `String()`.
            Value::Binary(b) if quote => {
                out.push_str("Binary(\"");
                out.push_str(&super::strings::base64_encode(b));
                out.push_str("\")");
            }
            Value::Binary(b) => out.push_str(&super::strings::base64_encode(b)),
        }
    }

    fn write_nested(&self, out: &mut String, quote: bool) {
        match self {
            Value::Undef if !quote => out.push_str(""),
            // `String()` formats nested values with Ruby's `inspect`.
            Value::Sensitive(_) if quote => out.push_str("#<Sensitive [value redacted]>"),
            _ => self.write_display(out, quote),
        }
    }

    /// The catalog form of a parameter value.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Undef => Json::Null,
            Value::Default => Json::String("default".into()),
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Str(s) => Json::String(s.clone()),
            Value::Regex(r) => Json::String(regex_inspect(&r.source)),
            Value::Array(a) => Json::Array(a.iter().map(Value::to_json).collect()),
            Value::Hash(h) => Json::Object(
                h.iter()
                    .map(|(k, v)| {
                        // A key that is not a string is written as Ruby's to_s of it.
                        let key = match k {
                            Value::Str(s) => s.clone(),
                            Value::Array(_) | Value::Hash(_) => super::ruby_print::ruby_inspect(k),
                            other => other.to_display(),
                        };
                        (key, v.to_json())
                    })
                    .collect(),
            ),
            Value::Type(t) => Json::String(t.catalog_string()),
            // Without rich data Puppet puts the string form in the catalog (and warns).
            Value::Deferred(d) => Json::String(d.shown()),
            Value::Error(e) => Json::String(e.shown()),
            Value::Timestamp(t) => Json::String(t.to_string()),
            Value::Iterator(it) => Json::String(it.shown()),
            Value::Timespan(t) => Json::String(t.to_string()),
            Value::Binary(b) => Json::String(super::strings::base64_encode(b)),
            Value::Sensitive(v) => {
                let mut m = serde_json::Map::new();
                m.insert("__ptype".into(), Json::String("Sensitive".into()));
                m.insert("__pvalue".into(), v.to_json());
                Json::Object(m)
            }
        }
    }

    /// [`Value::to_json`], moving strings instead of copying them.
    pub fn into_json(self) -> Json {
        match self {
            Value::Str(s) => Json::String(s),
            Value::Array(a) => Json::Array(a.into_iter().map(Value::into_json).collect()),
            Value::Hash(h) => Json::Object(
                h.into_iter()
                    .map(|(k, v)| {
                        let key = match k {
                            Value::Str(s) => s,
                            other => other.to_display(),
                        };
                        (key, v.into_json())
                    })
                    .collect(),
            ),
            Value::Sensitive(v) => {
                let mut m = serde_json::Map::new();
                m.insert("__ptype".into(), Json::String("Sensitive".into()));
                m.insert("__pvalue".into(), v.into_json());
                Json::Object(m)
            }
            other => other.to_json(),
        }
    }

    /// Converts facts or other JSON data into a value.
    pub fn from_json(j: &Json) -> Value {
        match j {
            Json::Null => Value::Undef,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            Json::String(s) => Value::Str(s.clone()),
            Json::Array(a) => Value::Array(a.iter().map(Value::from_json).collect()),
            Json::Object(o) => Value::Hash(
                o.iter()
                    .map(|(k, v)| (Value::Str(k.clone()), Value::from_json(v)))
                    .collect(),
            ),
        }
    }
}

/// Puppet's single-quoted rendering of a string inside a container (`'a'`, or double
/// quotes when the string needs escapes).
/// An array as `[a, b]` and a hash as `{k<assoc>v, ...}`, each element written by `each`:
/// the shape Ruby's `inspect` and similar notations share. `None` for other values.
pub fn container_text(v: &Value, assoc: &str, each: &dyn Fn(&Value) -> String) -> Option<String> {
    match v {
        Value::Array(items) => Some(format!(
            "[{}]",
            items.iter().map(each).collect::<Vec<_>>().join(", ")
        )),
        Value::Hash(h) => Some(format!(
            "{{{}}}",
            h.iter()
                .map(|(k, v)| format!("{}{assoc}{}", each(k), each(v)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => None,
    }
}

/// A regexp between slashes as Ruby's `Regexp#inspect` writes it (Puppet's
/// `regexp_to_s_with_delimiters`): a `/` not already escaped gets a backslash, an escape
/// pair is kept whole, a control character other than whitespace is written `\xHH`.
pub fn regex_inspect(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 2);
    out.push('/');
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '/' => out.push_str("\\/"),
            c if c.is_ascii_control() && !c.is_ascii_whitespace() && c != '\u{b}' => {
                out.push_str(&format!("\\x{:02X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('/');
    out
}

/// Puppet's `puppet_quote`: single quotes unless the string holds a control character
/// (below U+0020), then double quotes with escapes. In single quotes a backslash is kept as
/// it is, and the character after it written as it is; a quote is escaped.
pub fn quote_string(s: &str) -> String {
    if s.chars().any(|c| (c as u32) < 0x20) {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '$' => out.push_str("\\$"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    } else {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('\'');
        let mut escaped = false;
        for c in s.chars() {
            if escaped {
                out.push('\\');
                out.push(c);
                escaped = false;
            } else if c == '\'' {
                out.push_str("\\'");
            } else if c == '\\' {
                escaped = true;
            } else {
                out.push(c);
            }
        }
        if escaped {
            out.push('\\');
        }
        out.push('\'');
        out
    }
}

/// Ruby's `Float#to_s`: shortest round-trip digits, `1.0`, `1.0e+16`, `1.0e-05`.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    // Ruby writes the exponent when the decimal point would sit more than 15 digits
    // right of the first digit or more than 4 left of it (`1.0e+15`, `1.0e-05`).
    let s = format!("{:e}", f);
    let exp10: i32 = s
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if f != 0.0 && !(-4..15).contains(&exp10) {
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = if mant.contains('.') {
            mant.to_string()
        } else {
            format!("{mant}.0")
        };
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let s = format!("{:?}", f);
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Puppet's string equality: Ruby's `casecmp`, which folds ASCII letters only (`'É'` and
/// `'é'` differ).
pub fn str_eq_ignore_case(x: &str, y: &str) -> bool {
    x.eq_ignore_ascii_case(y)
}

/// Puppet's string order: Ruby's `casecmp` (bytes, ASCII letters folded).
pub fn str_cmp_ignore_case(x: &str, y: &str) -> std::cmp::Ordering {
    let (a, b) = (x.bytes(), y.bytes());
    a.map(|c| c.to_ascii_lowercase())
        .cmp(b.map(|c| c.to_ascii_lowercase()))
}

pub fn puppet_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Str(x), Str(y)) => str_eq_ignore_case(x, y),
        (Int(x), Float(y)) | (Float(y), Int(x)) => (*x as f64) == *y,
        (Float(x), Float(y)) => x == y,
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| puppet_eq(p, q)),
        (Hash(x), Hash(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|v2| puppet_eq(v, v2)))
        }
        (Type(x), Type(y)) => x.normalized_eq(y),
        // A time value equals a number of seconds.
        (Timespan(_) | Timestamp(_), Int(_) | Float(_))
        | (Int(_) | Float(_), Timespan(_) | Timestamp(_)) => {
            super::timespan::compare(a, b) == Some(std::cmp::Ordering::Equal)
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod size_tests {
    use super::Value;

    #[test]
    fn a_value_is_four_words() {
        // Parameters, variables and arrays hold values by the million: keep them small
        // (hashes are boxed, a regex is two pointers).
        assert!(std::mem::size_of::<Value>() <= 32);
    }
}
