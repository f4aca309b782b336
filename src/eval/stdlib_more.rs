//! More of puppetlabs-stdlib's Ruby functions (8.5): string helpers (`squeeze`, `swapcase`,
//! `reverse`, `dos2unix`, `unix2dos`, `shell_split`, `batch_escape`, `powershell_escape`,
//! `stdlib::start_with`, `stdlib::end_with`, `stdlib::xml_encode`), numbers (`clamp`,
//! `to_bytes`, `seeded_rand`, `fqdn_rand_string`, `fqdn_uuid`, `os_version_gte`), data
//! (`try_get_value`, `type_of`) and serializers (`to_python`, `to_ruby`, `sprintf_hash`).
//!
//! Each follows stdlib's Ruby source: same argument handling, same results, and the
//! error text Puppet users see. The 4.x functions' dispatches are in [`SIGNATURES`], so
//! that Puppet's type check of the arguments (with its messages) runs before them.

use super::compiler::{Compiler, R};
use super::functions::{Args, Builtin};
use super::signatures::{Block, BlockParam, Dispatch, Kind, Param, Signature};
use super::stdlib::{arg, fail, fail_plain, inspect, ruby_class};
use super::values::strings::{leading_size, ruby_to_i};
use super::values::value::{format_float, Value};
use super::LogLevel;

pub fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "squeeze" => f_squeeze,
        "swapcase" => f_swapcase,
        "reverse" => f_reverse,
        "clamp" => f_clamp,
        "dos2unix" => f_dos2unix,
        "unix2dos" => f_unix2dos,
        "shell_split" => f_shell_split,
        "try_get_value" => f_try_get_value,
        "to_bytes" => f_to_bytes,
        "seeded_rand" => f_seeded_rand,
        "fqdn_rand_string" => f_fqdn_rand_string,
        "fqdn_uuid" => f_fqdn_uuid,
        "stdlib::start_with" => f_start_with,
        "stdlib::end_with" => f_end_with,
        "stdlib::xml_encode" => f_xml_encode,
        "to_python" => f_to_python,
        "to_ruby" => f_to_ruby,
        "type_of" => f_type_of,
        "sprintf_hash" => f_sprintf_hash,
        "batch_escape" => f_batch_escape,
        "powershell_escape" => f_powershell_escape,
        "os_version_gte" => f_os_version_gte,
        "pw_hash" => super::stdlib_crypt::f_pw_hash,
        _ => return None,
    })
}

const fn p(name: &'static str, ty: &'static str, kind: Kind) -> Param {
    Param { name, ty, kind }
}

macro_rules! sig {
    ($name:literal, $min:literal, $max:literal, [$($param:expr),*]) => {
        Signature {
            name: $name,
            min: $min,
            max: Some($max),
            block: Block::None,
            dispatches: &[Dispatch {
                params: &[$($param),*],
                block: None,
                handler: false,
            }],
        }
    };
}

/// The dispatches of the 4.x functions here (`lib/puppet/functions`), sorted by name.
pub static SIGNATURES: &[Signature] = &[
    sig!("batch_escape", 1, 1, [p("string", "Any", Kind::Required)]),
    sig!(
        "is_a",
        2,
        2,
        [
            p("value", "Any", Kind::Required),
            p("type", "Type", Kind::Required)
        ]
    ),
    sig!(
        "os_version_gte",
        2,
        2,
        [
            p("os", "String[1]", Kind::Required),
            p("version", "String[1]", Kind::Required)
        ]
    ),
    sig!(
        "parsepson",
        1,
        2,
        [
            p("pson_string", "String[1]", Kind::Required),
            p("default", "Any", Kind::Optional)
        ]
    ),
    sig!(
        "powershell_escape",
        1,
        1,
        [p("string", "Any", Kind::Required)]
    ),
    sig!(
        "seeded_rand_string",
        2,
        3,
        [
            p("length", "Integer[1]", Kind::Required),
            p("seed", "String", Kind::Required),
            p("charset", "String[2]", Kind::Optional)
        ]
    ),
    sig!(
        "sprintf_hash",
        2,
        2,
        [
            p("format", "String", Kind::Required),
            p("arguments", "Hash", Kind::Required)
        ]
    ),
    sig!(
        "stdlib::crc32",
        1,
        1,
        [p(
            "my_data",
            "Variant[ScalarData, Sensitive[ScalarData], Binary, Sensitive[Binary]]",
            Kind::Required
        )]
    ),
    sig!(
        "stdlib::end_with",
        2,
        2,
        [
            p("test_string", "String", Kind::Required),
            p(
                "suffixes",
                "Variant[String[1],Array[String[1], 1]]",
                Kind::Required
            )
        ]
    ),
    Signature {
        name: "stdlib::ensure_packages",
        min: 1,
        max: Some(2),
        block: Block::None,
        dispatches: &[
            Dispatch {
                params: &[
                    p(
                        "packages",
                        "Variant[String[1], Array[String[1]]]",
                        Kind::Required,
                    ),
                    p("default_attributes", "Hash", Kind::Optional),
                ],
                block: None,
                handler: false,
            },
            Dispatch {
                params: &[
                    p("packages", "Hash[String[1], Any]", Kind::Required),
                    p("default_attributes", "Hash", Kind::Optional),
                ],
                block: None,
                handler: false,
            },
        ],
    },
    sig!(
        "stdlib::extname",
        1,
        1,
        [p("filename", "String", Kind::Required)]
    ),
    sig!(
        "stdlib::has_function",
        1,
        1,
        [p("function_name", "String[1]", Kind::Required)]
    ),
    sig!(
        "stdlib::ip_in_range",
        2,
        2,
        [
            p("ipaddress", "String", Kind::Required),
            p("range", "Variant[String, Array]", Kind::Required)
        ]
    ),
    sig!(
        "stdlib::nested_values",
        1,
        1,
        [p("hash", "Hash", Kind::Required)]
    ),
    sig!(
        "stdlib::sha256",
        1,
        1,
        [p(
            "my_data",
            "Variant[ScalarData, Sensitive[ScalarData], Binary, Sensitive[Binary]]",
            Kind::Required
        )]
    ),
    Signature {
        name: "stdlib::sort_by",
        min: 1,
        max: Some(1),
        block: Block::Required,
        dispatches: &[
            Dispatch {
                params: &[p("ary", "Array", Kind::Required)],
                block: Some(BlockParam {
                    name: "block",
                    ty: "Callable[1,1]",
                    optional: false,
                }),
                handler: false,
            },
            Dispatch {
                params: &[p("str", "String", Kind::Required)],
                block: Some(BlockParam {
                    name: "block",
                    ty: "Callable[1,1]",
                    optional: false,
                }),
                handler: false,
            },
            Dispatch {
                params: &[p("hsh", "Hash", Kind::Required)],
                block: Some(BlockParam {
                    name: "block",
                    ty: "Variant[Callable[1,1], Callable[2,2]]",
                    optional: false,
                }),
                handler: false,
            },
        ],
    },
    sig!(
        "stdlib::start_with",
        2,
        2,
        [
            p("test_string", "String", Kind::Required),
            p(
                "prefixes",
                "Variant[String[1],Array[String[1], 1]]",
                Kind::Required
            )
        ]
    ),
    sig!(
        "stdlib::str2resource",
        1,
        1,
        [p("res_string", "String", Kind::Required)]
    ),
    sig!(
        "stdlib::xml_encode",
        1,
        2,
        [
            p("str", "String", Kind::Required),
            p("type", "Enum['text','attr']", Kind::Optional)
        ]
    ),
    sig!("to_python", 1, 1, [p("object", "Any", Kind::Required)]),
    sig!("to_ruby", 1, 1, [p("object", "Any", Kind::Required)]),
    sig!("to_toml", 1, 1, [p("data", "Hash", Kind::Required)]),
    sig!("type_of", 1, 1, [p("value", "Any", Kind::Required)]),
];

/// The signature of a 4.x function here.
pub fn find(name: &str) -> Option<&'static Signature> {
    SIGNATURES
        .binary_search_by(|s| s.name.cmp(name))
        .ok()
        .map(|i| &SIGNATURES[i])
}

// ---- helpers -------------------------------------------------------------------------------------

/// Puppet passes an undef argument to a 3.x function as an empty string.
pub(super) fn undef_to_empty(a: &mut Args) {
    for v in a.values.iter_mut() {
        if v.is_undef() {
            *v = Value::str("");
        }
    }
}

/// Puppet's arity check of a 3.x function declared with `arity: n` (n >= 0).
pub(super) fn arity_exact(c: &Compiler<'_>, a: &Args, n: usize) -> R<()> {
    if a.values.len() != n {
        return Err(fail(
            c,
            a,
            format!(
                "Wrong number of arguments given ({} for {n})",
                a.values.len()
            ),
        ));
    }
    Ok(())
}

/// Puppet's arity check of a 3.x function declared with `arity: -(min + 1)`.
pub(super) fn arity_min(c: &Compiler<'_>, a: &Args, min: usize) -> R<()> {
    if a.values.len() < min {
        return Err(fail(
            c,
            a,
            format!(
                "Wrong number of arguments given ({} for minimum {min})",
                a.values.len()
            ),
        ));
    }
    Ok(())
}

/// Ruby's `String#inspect` (UTF-8).
pub(super) fn ruby_str_inspect(s: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            '\u{8}' => out.push_str("\\b"),
            '\u{7}' => out.push_str("\\a"),
            '\u{1b}' => out.push_str("\\e"),
            '#' if matches!(chars.peek(), Some('{' | '$' | '@')) => out.push_str("\\#"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Ruby's `inspect` of the plain data a value converts to.
pub(super) fn ruby_inspect(v: &Value) -> String {
    if let Some(text) = super::values::value::container_text(v, "=>", &ruby_inspect) {
        return text;
    }
    match v {
        Value::Str(s) => ruby_str_inspect(s),
        Value::Float(f) => format_float(*f),
        Value::Default => ":default".into(),
        other => inspect(other),
    }
}

/// Ruby's `to_s` of a value.
fn ruby_to_s(v: &Value) -> String {
    match v {
        Value::Undef => String::new(),
        Value::Str(s) => s.to_string(),
        Value::Float(f) => format_float(*f),
        Value::Array(_) | Value::Hash(_) => ruby_inspect(v),
        Value::Default => "default".into(),
        other => other.to_display(),
    }
}

pub(super) fn no_method(
    c: &Compiler<'_>,
    a: &Args,
    method: &str,
    v: &Value,
) -> super::compiler::Flow {
    fail_plain(
        c,
        a,
        format!(
            "undefined method `{method}' for {}:{}",
            ruby_inspect(v),
            ruby_class(v)
        ),
    )
}

/// A character set of Ruby's `String#squeeze`/`count`/`delete`: ranges `a-z`, a leading `^`
/// negates, a backslash escapes.
struct CharSet {
    negate: bool,
    items: Vec<(char, char)>,
}

impl CharSet {
    fn new(spec: &str) -> CharSet {
        let mut chars: Vec<char> = spec.chars().collect();
        let negate = chars.len() > 1 && chars[0] == '^';
        if negate {
            chars.remove(0);
        }
        let mut lits: Vec<char> = vec![];
        let mut i = 0;
        let mut items = vec![];
        while i < chars.len() {
            let mut ch = chars[i];
            if ch == '\\' && i + 1 < chars.len() {
                i += 1;
                ch = chars[i];
            }
            lits.push(ch);
            if i + 2 < chars.len() && chars[i + 1] == '-' {
                let hi = chars[i + 2];
                if hi >= ch {
                    items.push((ch, hi));
                }
                i += 3;
                continue;
            }
            items.push((ch, ch));
            i += 1;
        }
        CharSet { negate, items }
    }

    fn contains(&self, ch: char) -> bool {
        self.items.iter().any(|(lo, hi)| *lo <= ch && ch <= *hi) != self.negate
    }
}

fn squeeze_str(s: &str, set: Option<&CharSet>) -> String {
    let mut out = String::new();
    let mut last: Option<char> = None;
    for ch in s.chars() {
        if last == Some(ch) && set.is_none_or(|set| set.contains(ch)) {
            continue;
        }
        out.push(ch);
        last = Some(ch);
    }
    out
}

// ---- strings -------------------------------------------------------------------------------------

fn f_squeeze(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    let n = a.values.len();
    if n != 1 && n != 2 {
        return Err(fail(
            c,
            a,
            format!("Wrong number of arguments given {n} for 2 or 1"),
        ));
    }
    let set = match arg(a, 1) {
        Value::Undef => None,
        Value::Str(s) => Some(CharSet::new(&s)),
        other => {
            return Err(fail_plain(
                c,
                a,
                format!(
                    "no implicit conversion of {} into String",
                    ruby_class(&other)
                ),
            ))
        }
    };
    let one = |v: &Value| -> Result<Value, Value> {
        match v {
            Value::Str(s) => Ok(Value::str(squeeze_str(s, set.as_ref()))),
            other => Err(other.clone()),
        }
    };
    let r = match arg(a, 0) {
        Value::Array(items) => items
            .iter()
            .map(one)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        v => one(&v),
    };
    r.map_err(|v| no_method(c, a, "squeeze", &v))
}

fn swapcase_str(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_lowercase() {
            out.extend(ch.to_uppercase());
        } else if ch.is_uppercase() {
            out.extend(ch.to_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

fn f_swapcase(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    map_strings(c, a, swapcase_str)
}

/// The 3.x string-or-array functions (`swapcase`, `regexpescape`): `f` of a string, or of
/// each string of an array (other elements kept); one argument at least.
pub(super) fn map_strings(
    c: &mut Compiler<'_>,
    a: &mut Args,
    f: impl Fn(&str) -> String,
) -> R<Value> {
    undef_to_empty(a);
    if a.values.is_empty() {
        return Err(fail(c, a, "Wrong number of arguments given (0 for 1)"));
    }
    match arg(a, 0) {
        Value::Str(s) => Ok(Value::str(f(&s))),
        Value::Array(items) => Ok(Value::Array(
            items
                .into_iter()
                .map(|v| match v {
                    Value::Str(s) => Value::str(f(&s)),
                    other => other,
                })
                .collect(),
        )),
        _ => Err(fail(c, a, "Requires either array or string to work with")),
    }
}

fn f_reverse(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.is_empty() {
        return Err(fail(c, a, "Wrong number of arguments given (0 for 1)"));
    }
    match arg(a, 0) {
        Value::Str(s) => Ok(Value::str(s.chars().rev().collect::<String>())),
        Value::Array(mut items) => {
            items.reverse();
            Ok(Value::Array(items))
        }
        _ => Err(fail(c, a, "Requires either array or string to work with")),
    }
}

fn f_dos2unix(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_exact(c, a, 1)?;
    let Value::Str(s) = arg(a, 0) else {
        return Err(fail(c, a, "Requires string as argument"));
    };
    Ok(Value::str(s.replace("\r\n", "\n")))
}

fn f_unix2dos(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_exact(c, a, 1)?;
    let Value::Str(s) = arg(a, 0) else {
        return Err(fail(c, a, "Requires string as argument"));
    };
    // gsub(/\r*\n/, "\r\n")
    let mut out = String::new();
    let mut pending_cr = 0usize;
    for ch in s.chars() {
        match ch {
            '\r' => pending_cr += 1,
            '\n' => {
                pending_cr = 0;
                out.push_str("\r\n");
            }
            other => {
                out.extend(std::iter::repeat_n('\r', pending_cr));
                pending_cr = 0;
                out.push(other);
            }
        }
    }
    out.extend(std::iter::repeat_n('\r', pending_cr));
    Ok(Value::str(out))
}

/// Ruby's `Shellwords.shellsplit`; `Err` for an unmatched quote.
fn shellsplit(line: &str) -> Result<Vec<String>, ()> {
    let chars: Vec<char> = line.chars().collect();
    let mut words = vec![];
    let mut field = String::new();
    let mut i = 0;
    let n = chars.len();
    loop {
        while i < n && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= n {
            break;
        }
        let ch = chars[i];
        if ch == '\'' {
            let Some(end) = (i + 1..n).find(|&j| chars[j] == '\'') else {
                return Err(());
            };
            field.extend(&chars[i + 1..end]);
            i = end + 1;
        } else if ch == '"' {
            let mut j = i + 1;
            let mut body = String::new();
            loop {
                if j >= n {
                    return Err(());
                }
                match chars[j] {
                    '"' => break,
                    '\\' if j + 1 < n => {
                        let next = chars[j + 1];
                        if !matches!(next, '$' | '`' | '"' | '\\' | '\n') {
                            body.push('\\');
                        }
                        body.push(next);
                        j += 2;
                    }
                    '\\' => return Err(()),
                    other => {
                        body.push(other);
                        j += 1;
                    }
                }
            }
            field.push_str(&body);
            i = j + 1;
        } else if ch == '\\' {
            if i + 1 < n {
                field.push(chars[i + 1]);
                i += 2;
            } else {
                // A backslash at the end stays.
                field.push('\\');
                i += 1;
            }
        } else {
            while i < n && !chars[i].is_whitespace() && !matches!(chars[i], '\\' | '\'' | '"') {
                field.push(chars[i]);
                i += 1;
            }
        }
        // The separator: a whitespace or the end.
        if i >= n || chars[i].is_whitespace() {
            words.push(std::mem::take(&mut field));
            if i < n {
                i += 1;
            }
        }
    }
    Ok(words)
}

fn f_shell_split(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.len() != 1 {
        return Err(fail(
            c,
            a,
            format!("Wrong number of arguments given ({} for 1)", a.values.len()),
        ));
    }
    let s = ruby_to_s(&arg(a, 0));
    match shellsplit(&s) {
        Ok(words) => Ok(Value::Array(words.into_iter().map(Value::str).collect())),
        Err(()) => Err(fail_plain(
            c,
            a,
            format!("Unmatched quote: {}", ruby_str_inspect(&s)),
        )),
    }
}

fn f_batch_escape(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = String::from("\"");
    for ch in ruby_to_s(&arg(a, 0)).chars() {
        match ch {
            '"' => out.push_str("\"\""),
            '$' | '\\' => {
                out.push('\\');
                out.push(ch);
            }
            other => out.push(other),
        }
    }
    out.push('"');
    Ok(Value::str(out))
}

fn f_powershell_escape(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = String::new();
    for ch in ruby_to_s(&arg(a, 0)).chars() {
        match ch {
            ' ' | '\'' | '`' | '|' | '\n' | '$' => {
                out.push('`');
                out.push(ch);
            }
            '"' => out.push_str("\\`\""),
            other => out.push(other),
        }
    }
    Ok(Value::str(out))
}

fn affixes(v: Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().map(|x| x.to_display()).collect(),
        other => vec![other.to_display()],
    }
}

fn f_start_with(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let s = arg(a, 0).to_display();
    Ok(Value::Bool(
        affixes(arg(a, 1)).iter().any(|x| s.starts_with(x.as_str())),
    ))
}

fn f_end_with(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let s = arg(a, 0).to_display();
    Ok(Value::Bool(
        affixes(arg(a, 1)).iter().any(|x| s.ends_with(x.as_str())),
    ))
}

fn f_xml_encode(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let s = arg(a, 0).to_display();
    let attr = matches!(arg(a, 1), Value::Str(t) if t == "attr");
    let mut out = String::new();
    if attr {
        out.push('"');
    }
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            '\'' if attr => out.push_str("&apos;"),
            other => out.push(other),
        }
    }
    if attr {
        out.push('"');
    }
    Ok(Value::str(out))
}

// ---- numbers -------------------------------------------------------------------------------------

fn f_clamp(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_min(c, a, 1)?;
    fn flat(v: Value, out: &mut Vec<Value>) {
        match v {
            Value::Array(items) => items.into_iter().for_each(|x| flat(x, out)),
            other => out.push(other),
        }
    }
    let mut args = vec![];
    a.values
        .clone()
        .into_iter()
        .for_each(|v| flat(v, &mut args));
    if args.len() != 3 {
        return Err(fail(c, a, "Wrong number of arguments, need three to clamp"));
    }
    for v in &args {
        match v {
            Value::Str(s) => {
                let digits_line = s
                    .split('\n')
                    .any(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()));
                if !digits_line {
                    return Err(fail(
                        c,
                        a,
                        format!("Required explicit numeric ({s}:String)"),
                    ));
                }
            }
            Value::Hash(_) => {
                return Err(fail(
                    c,
                    a,
                    format!("The Hash type is not allowed ({})", ruby_inspect(v)),
                ))
            }
            _ => {}
        }
    }
    let mut nums = vec![];
    for v in &args {
        nums.push(match v {
            Value::Int(i) => *i,
            Value::Float(f) => f.trunc() as i64,
            Value::Str(s) => ruby_to_i(s),
            Value::Undef => 0,
            other => return Err(no_method(c, a, "to_i", other)),
        });
    }
    nums.sort();
    Ok(Value::Int(nums[1]))
}

fn f_to_bytes(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.len() != 1 {
        return Err(fail(
            c,
            a,
            format!("Wrong number of arguments given ({} for 1)", a.values.len()),
        ));
    }
    let s = match arg(a, 0) {
        v @ (Value::Int(_) | Value::Float(_)) => return Ok(v),
        Value::Str(s) => s,
        Value::Undef => return Err(no_method(c, a, "[]", &Value::Undef)),
        other => {
            return Err(fail_plain(
                c,
                a,
                format!(
                    "no implicit conversion of {} into String",
                    ruby_class(&other)
                ),
            ))
        }
    };
    let (value, prefix) = leading_size(&s);
    let shift = match prefix {
        None => 0,
        Some('k') => 10,
        Some('M') => 20,
        Some('G') => 30,
        Some('T') => 40,
        Some('P') => 50,
        Some('E') => 60,
        Some(other) => return Err(fail(c, a, format!("Unknown prefix {other}"))),
    };
    Ok(Value::Int((value * (1u64 << shift) as f64) as i64))
}

fn positive_int(v: &Value) -> Option<u64> {
    if !super::stdlib_validate::is_integer_like(v) {
        return None;
    }
    let n = match v {
        Value::Int(i) => *i,
        Value::Str(s) => ruby_to_i(s),
        _ => 0,
    };
    (n > 0).then_some(n as u64)
}

fn f_seeded_rand(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_exact(c, a, 2)?;
    let Some(max) = positive_int(&arg(a, 0)) else {
        return Err(fail(c, a, "first argument must be a positive integer"));
    };
    let Value::Str(seed) = arg(a, 1) else {
        return Err(fail(c, a, "second argument must be a string"));
    };
    Ok(Value::Int(
        super::values::ruby_random::deterministic_rand(&seed, max) as i64,
    ))
}

fn f_fqdn_rand_string(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_min(c, a, 1)?;
    let Some(length) = positive_int(&arg(a, 0)) else {
        return Err(fail(c, a, "first argument must be a positive integer"));
    };
    let charset: Vec<char> = match arg(a, 1) {
        Value::Undef => vec![],
        Value::Str(s) => s.chars().collect(),
        _ => return Err(fail(c, a, "second argument must be undef or a string")),
    };
    let charset = if charset.is_empty() {
        ('0'..='9').chain('A'..='Z').chain('a'..='z').collect()
    } else {
        charset
    };
    let rest: Vec<Value> = a.values.iter().skip(2).cloned().collect();
    let mut out = String::new();
    for current in 1..=length {
        let mut seed_args = rest.clone();
        seed_args.push(Value::str(current.to_string()));
        let mut call = vec![Value::Int(charset.len() as i64)];
        call.push(Value::str(ruby_join(&seed_args, ":")));
        let i = c.call_function("fqdn_rand", call, None, a.scope, a.span)?;
        let i = match i {
            Value::Int(i) => i,
            other => ruby_to_i(&other.to_display()),
        };
        out.push(charset[i as usize]);
    }
    Ok(Value::str(out))
}

/// Ruby's `Array#join`: nested arrays joined flat, nil as ''.
fn ruby_join(vals: &[Value], sep: &str) -> String {
    fn flat(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Array(items) => items.iter().for_each(|x| flat(x, out)),
            other => out.push(ruby_to_s(other)),
        }
    }
    let mut out = vec![];
    vals.iter().for_each(|v| flat(v, &mut out));
    out.join(sep)
}

fn f_fqdn_uuid(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.is_empty() {
        return Err(fail_plain(c, a, "fqdn_uuid: No arguments given"));
    }
    if a.values.len() != 1 {
        return Err(fail_plain(
            c,
            a,
            format!("fqdn_uuid: Too many arguments given ({})", a.values.len()),
        ));
    }
    let Value::Str(fqdn) = arg(a, 0) else {
        return Err(fail_plain(
            c,
            a,
            format!(
                "no implicit conversion of {} into String",
                ruby_class(&arg(a, 0))
            ),
        ));
    };
    let mut msg: Vec<u8> = vec![
        0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30,
        0xc8,
    ];
    msg.extend_from_slice(fqdn.as_bytes());
    let hex = super::values::strings::sha1_hex(&msg);
    let mut bytes: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect();
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hexs: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut parts = vec![];
    let mut at = 0;
    for len in [4, 2, 2, 2, 6] {
        parts.push(hexs[at..at + len].concat());
        at += len;
    }
    Ok(Value::str(parts.join("-")))
}

fn f_os_version_gte(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let facts = c.fact_value("facts").unwrap_or(Value::Undef);
    let get = |k: &str| match &facts {
        Value::Hash(h) => h.get(&Value::str(k)).cloned().unwrap_or(Value::Undef),
        _ => Value::Undef,
    };
    let os = arg(a, 0).to_display();
    let version = arg(a, 1).to_display();
    if !matches!(get("operatingsystem"), Value::Str(s) if *s == os) {
        return Ok(Value::Bool(false));
    }
    let major = get("operatingsystemmajrelease").to_display();
    Ok(Value::Bool(
        super::values::strings::versioncmp(&major, &version) != std::cmp::Ordering::Less,
    ))
}

// ---- data ----------------------------------------------------------------------------------------

fn f_try_get_value(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_min(c, a, 1)?;
    c.log(
        LogLevel::Warning,
        "try_get_value() DEPRECATED: this function is deprecated, please use dig() instead.".into(),
    );
    let data = arg(a, 0);
    let path = match arg(a, 1) {
        Value::Undef | Value::Bool(false) => Value::str(""),
        v => v,
    };
    let default = arg(a, 2);
    let or_data = |d: Value, data: Value| if d.truthy() { d } else { data };
    if !matches!(data, Value::Hash(_) | Value::Array(_))
        || matches!(&path, Value::Str(s) if s.is_empty())
    {
        return Ok(or_data(default, data));
    }
    let sep = match arg(a, 3) {
        Value::Undef | Value::Bool(false) => "/".to_string(),
        v => v.to_display(),
    };
    let Value::Str(path) = path else {
        return Err(no_method(c, a, "split", &path));
    };
    let keys: Vec<Value> = ruby_split(&path, &sep)
        .into_iter()
        .map(|k| {
            if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
                Value::Int(ruby_to_i(&k))
            } else {
                Value::str(k)
            }
        })
        .collect();
    c.call_function(
        "dig44",
        vec![data, Value::Array(keys), default],
        None,
        a.scope,
        a.span,
    )
}

/// Ruby's `String#split(sep)` with a string separator: trailing empty fields dropped.
fn ruby_split(s: &str, sep: &str) -> Vec<String> {
    let mut parts: Vec<String> = if sep == " " {
        s.split_whitespace().map(String::from).collect()
    } else if sep.is_empty() {
        s.chars().map(String::from).collect()
    } else {
        s.split(sep).map(String::from).collect()
    };
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

fn f_type_of(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Type(Box::new(super::types::infer(&arg(a, 0)))))
}

// ---- serializers ---------------------------------------------------------------------------------

/// Values that `ToDataConverter` keeps as they are: the plain data the two serializers
/// handle. Others (rich data) are refused rather than written differently from Puppet.
fn plain_data(v: &Value) -> bool {
    match v {
        Value::Undef | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => true,
        Value::Array(items) => items.iter().all(plain_data),
        Value::Hash(h) => h
            .iter()
            .all(|(k, v)| matches!(k, Value::Str(_)) && plain_data(v)),
        _ => false,
    }
}

fn to_python(v: &Value) -> String {
    if let Some(text) = super::values::value::container_text(v, ": ", &to_python) {
        return text;
    }
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Undef => "None".into(),
        other => ruby_inspect(other),
    }
}

fn to_ruby(v: &Value) -> String {
    super::values::value::container_text(v, " => ", &to_ruby).unwrap_or_else(|| ruby_inspect(v))
}

fn f_to_python(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = arg(a, 0);
    if !plain_data(&v) {
        return Err(fail(c, a, "Ordo converts plain data only (no rich data)"));
    }
    Ok(Value::str(to_python(&v)))
}

fn f_to_ruby(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = arg(a, 0);
    if !plain_data(&v) {
        return Err(fail(c, a, "Ordo converts plain data only (no rich data)"));
    }
    Ok(Value::str(to_ruby(&v)))
}

fn f_sprintf_hash(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    c.call_function(
        "deprecation",
        vec![
            Value::str("sprintf_hash"),
            Value::str(
                "This method is deprecated. From Puppet 4.10.10/5.3.4 please use the built-in sprintf instead",
            ),
        ],
        None,
        a.scope,
        a.span,
    )?;
    let fmt = arg(a, 0).to_display();
    super::values::strings::sprintf(&fmt, &[arg(a, 1)])
        .map(Value::str)
        .map_err(|e| fail_plain(c, a, e))
}
