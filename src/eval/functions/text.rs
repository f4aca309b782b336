//! Text: `split`, `join`, `sprintf`, `regsubst`, `match`, the case and whitespace
//! functions, `versioncmp`, `strftime`, digests, `base64`, `shellquote`, `str2bool`.

use super::*;

/// `camelcase`: each `_`-separated word capitalized (Ruby's `capitalize`), numbers as they
/// are, arrays element by element.
pub(super) fn f_camelcase(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    fn camel(v: &Value) -> Value {
        match v {
            Value::Str(s) => Value::Str(s.split('_').map(strings::ruby_capitalize).collect()),
            Value::Array(items) => Value::Array(items.iter().map(camel).collect()),
            other => other.clone(),
        }
    }
    Ok(camel(&first_arg(a)))
}

/// `strftime(timestamp, format[, timezone])`, and the legacy `strftime(format)` of now.
/// Only UTC is known: another time zone fails.
pub(super) fn f_strftime(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (ts, fmt, tz) = match a.values.as_slice() {
        [Value::Timestamp(t), Value::Str(f), rest @ ..] => (*t, f.clone(), rest.first().cloned()),
        // A timespan formats with Puppet's timespan directives.
        [Value::Timespan(t), Value::Str(f)] => {
            return t.format(f).map(Value::Str).map_err(|e| arg_err(c, a, e));
        }
        [Value::Str(f), rest @ ..] => {
            // Puppet warns once per compile that this signature is deprecated.
            if c.warned_deprecations.insert("legacy_strftime".to_string()) {
                let file = c.sources.get(a.span.file);
                let line = file.map(|f| f.line_col(a.span.start as usize).0 as u32);
                let at = c.line_location(Some(a.span.file), line);
                c.log(
                    LogLevel::Warning,
                    format!("The argument signature (String format, [String timezone]) is deprecated for #strftime. See #strftime documentation and Timespan type for more info\n   {at}"),
                );
            }
            (
                crate::eval::values::value::Timestamp::at(c.loader.host().now()),
                f.clone(),
                rest.first().cloned(),
            )
        }
        _ => return Err(arg_err(c, a, "expects a Timestamp and a format")),
    };
    // Puppet's `Timestamp#format`: no zone or an empty one is UTC.
    let offset = match tz {
        Some(Value::Str(tz)) if !tz.is_empty() => {
            match crate::eval::values::timezone::utc_offset(&tz) {
                // `convert_timezone`: whole minutes (Ruby's division rounds down).
                Some(off) => Some(off.div_euclid(60) * 60),
                None => {
                    return Err(Flow::Err(
                        c.runtime(format!("Illegal timezone '{tz}'"), a.span),
                    ))
                }
            }
        }
        _ => None,
    };
    ts.strftime_in(&fmt, offset)
        .map(Value::Str)
        .map_err(|e| arg_err(c, a, e))
}

pub(super) fn str_arg(c: &Compiler<'_>, a: &Args, i: usize) -> R<String> {
    match a.values.get(i) {
        Some(Value::Str(s)) => Ok(s.clone()),
        Some(other) => Err(arg_err(
            c,
            a,
            format!(
                "parameter {} expects a String value, got {}",
                i + 1,
                other.type_name()
            ),
        )),
        None => Err(arg_err(c, a, "expects more arguments")),
    }
}

pub(super) fn f_split(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let s = str_arg(c, a, 0)?;
    let re = match a.values.get(1) {
        Some(Value::Str(p)) => Regex::new(p).ok(),
        Some(Value::Regex(r)) => Some(r.clone()),
        Some(Value::Type(t)) => match &**t {
            PType::Regexp(Some(p)) => Regex::new(p).ok(),
            _ => None,
        },
        _ => None,
    };
    let Some(re) = re else {
        return Err(arg_err(c, a, "expects a String or Regexp separator"));
    };
    let mut parts: Vec<Value> = if re.source.is_empty() {
        s.chars().map(|ch| Value::str(ch.to_string())).collect()
    } else {
        re.split(&s).into_iter().map(Value::Str).collect()
    };
    // Ruby's split drops trailing empty strings.
    while matches!(parts.last(), Some(Value::Str(x)) if x.is_empty()) {
        parts.pop();
    }
    Ok(Value::Array(parts))
}

pub(super) fn f_join(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let sep = a.values.get(1).map(|v| v.to_display()).unwrap_or_default();
    match first_arg(a) {
        // Ruby's Array#join: nested arrays are joined too, each value as Ruby's to_s.
        Value::Array(items) => {
            fn flat<'v>(items: &'v [Value], out: &mut Vec<&'v Value>) {
                for v in items {
                    match v {
                        Value::Array(inner) => flat(inner, out),
                        other => out.push(other),
                    }
                }
            }
            let mut all = vec![];
            flat(&items, &mut all);
            let parts: Vec<String> = all
                .into_iter()
                .map(crate::eval::values::ruby_print::ruby_to_s)
                .collect();
            // Measured before it is made: a long separator between many elements.
            let len = parts.iter().map(String::len).sum::<usize>()
                + sep.len().saturating_mul(parts.len().saturating_sub(1));
            c.check_string_len(len, a.span)?;
            Ok(Value::Str(parts.join(&sep)))
        }
        other => Ok(Value::Str(other.to_display())),
    }
}

pub(super) fn f_sprintf(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    // A 3.x function: Ruby's format() refuses a format that is not a String.
    let ruby = match a.values.first() {
        Some(Value::Int(_)) => Some("Integer"),
        Some(Value::Float(_)) => Some("Float"),
        Some(Value::Bool(true)) => Some("true"),
        Some(Value::Bool(false)) => Some("false"),
        Some(Value::Undef) => Some("nil"),
        Some(Value::Array(_)) => Some("Array"),
        Some(Value::Hash(_)) => Some("Hash"),
        _ => None,
    };
    if let Some(class) = ruby {
        let msg = format!("no implicit conversion of {class} into String");
        return Err(Flow::Err(c.runtime(msg, a.span)));
    }
    let fmt = str_arg(c, a, 0)?;
    strings::sprintf(&fmt, &a.values[1..])
        .map(Value::Str)
        .map_err(|m| Flow::Err(c.runtime(m, a.span)))
}

pub(super) fn f_versioncmp(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut x = str_arg(c, a, 0)?;
    let mut y = str_arg(c, a, 1)?;
    if a.values.get(2) == Some(&Value::Bool(true)) {
        x = strings::version_without_trailing_zeroes(&x);
        y = strings::version_without_trailing_zeroes(&y);
    }
    Ok(Value::Int(match strings::versioncmp(&x, &y) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}

pub(super) fn f_regsubst(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let target = first_arg(a);
    let pattern = match a.values.get(1) {
        Some(Value::Str(p)) => p.clone(),
        Some(Value::Regex(r)) => r.source.to_string(),
        _ => return Err(arg_err(c, a, "expects a pattern")),
    };
    let repl = a.values.get(2).map(|v| v.to_display()).unwrap_or_default();
    let flags = a.values.get(3).map(|v| v.to_display()).unwrap_or_default();
    let mut src = pattern;
    if flags.contains('I') {
        src = format!("(?i){src}");
    }
    if flags.contains('M') {
        src = format!("(?s){src}");
    }
    if flags.contains('E') {
        src = format!("(?x){src}");
    }
    let re = Regex::new(&src).map_err(|m| arg_err(c, a, m))?;
    let global = flags.contains('G');
    let rust_repl = strings::ruby_replacement(&repl, re.has_named_groups());
    let sub = |s: &str| -> String {
        if global {
            re.replace(s, &rust_repl, true)
        } else {
            re.replace(s, &rust_repl, false)
        }
    };
    Ok(match target {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| Value::Str(sub(&v.to_display())))
                .collect(),
        ),
        other => Value::Str(sub(&other.to_display())),
    })
}

pub(super) fn f_match(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let re = match a.values.get(1) {
        Some(Value::Str(p)) => Regex::new(p).map_err(|m| arg_err(c, a, m))?,
        Some(Value::Regex(r)) => r.clone(),
        Some(Value::Type(t)) => match types::resolved(t) {
            PType::Regexp(Some(p)) => Regex::new(p).map_err(|m| arg_err(c, a, m))?,
            PType::Pattern(ps) if !ps.is_empty() => {
                Regex::new(&ps[0]).map_err(|m| arg_err(c, a, m))?
            }
            _ => return Err(arg_err(c, a, "expects a pattern")),
        },
        Some(
            other @ (Value::Int(_)
            | Value::Float(_)
            | Value::Bool(_)
            | Value::Undef
            | Value::Hash(_)
            | Value::Default),
        ) => {
            let msg = format!(
                "match() expects pattern of T, where T is String, Regexp, Regexp[r], Pattern[p], or Array[T]. Got {}",
                crate::eval::functions::stdlib::ruby_class(other)
            );
            return Err(Flow::Err(c.runtime(msg, a.span)));
        }
        Some(_) => return Err(arg_err(c, a, "expects a pattern")),
        None => return Err(arg_err(c, a, "expects a pattern")),
    };
    let one = |s: &str| -> Value {
        match re.captures(s) {
            Some(groups) => Value::Array(groups),
            None => Value::Undef,
        }
    };
    Ok(match first_arg(a) {
        Value::Array(items) => Value::Array(items.iter().map(|v| one(&v.to_display())).collect()),
        other => one(&other.to_display()),
    })
}

/// What Ruby's `strip` removes.
pub(super) fn ruby_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\0')
}

pub(super) fn f_string_op(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let name = a.name.clone();
    fn apply(name: &str, v: &Value) -> Value {
        match v {
            Value::Str(s) => Value::Str(match name {
                "upcase" => s.to_uppercase(),
                "downcase" => s.to_lowercase(),
                "capitalize" => strings::ruby_capitalize(s),
                // Ruby's whitespace: ASCII blanks and NUL, not Unicode spaces.
                "strip" => s.trim_matches(ruby_space).to_string(),
                "lstrip" => s.trim_start_matches(ruby_space).to_string(),
                "rstrip" => s.trim_end_matches(ruby_space).to_string(),
                "chomp" => s
                    .strip_suffix("\r\n")
                    .or_else(|| s.strip_suffix('\n'))
                    .or_else(|| s.strip_suffix('\r'))
                    .unwrap_or(s)
                    .to_string(),
                "chop" => {
                    let mut t = s.clone();
                    if t.ends_with("\r\n") {
                        t.truncate(t.len() - 2);
                    } else {
                        t.pop();
                    }
                    t
                }
                _ => s.clone(),
            }),
            Value::Array(items) => Value::Array(items.iter().map(|x| apply(name, x)).collect()),
            // An iterator's elements, into an array (Puppet's `Iterable.on(x).map`).
            Value::Iterator(it) => Value::Array(it.items.iter().map(|x| apply(name, x)).collect()),
            Value::Hash(h) if name == "upcase" || name == "downcase" => Value::Hash(
                h.iter()
                    .map(|(k, x)| (apply(name, k), apply(name, x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    Ok(apply(&name, &first_arg(a)))
}

pub(super) fn f_str2bool(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match first_arg(a) {
        Value::Bool(b) => Value::Bool(b),
        v => Value::Bool(matches!(
            v.to_display().to_lowercase().as_str(),
            "1" | "t" | "y" | "true" | "yes"
        )),
    })
}

pub(super) fn f_digest(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let s = str_arg(c, a, 0)?;
    Ok(Value::Str(match a.name.as_str() {
        "md5" => strings::md5_hex(s.as_bytes()),
        "sha1" => strings::sha1_hex(s.as_bytes()),
        // `digest`: Puppet's `digest_algorithm` setting, sha256 by default.
        _ => strings::sha256_hex(s.as_bytes()),
    }))
}

pub(super) fn f_base64(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mode = str_arg(c, a, 0)?;
    let s = str_arg(c, a, 1)?;
    match mode.as_str() {
        "encode" => Ok(Value::Str(strings::base64_encode(s.as_bytes()))),
        "decode" => strings::base64_decode(&s)
            .map(|b| Value::Str(String::from_utf8_lossy(&b).into_owned()))
            .ok_or_else(|| arg_err(c, a, "invalid base64")),
        _ => Err(arg_err(
            c,
            a,
            "the first argument must be 'encode' or 'decode'",
        )),
    }
}

pub(super) fn f_shellquote(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let words: Vec<String> = a
        .values
        .iter()
        .flat_map(flatten_values)
        .map(|v| v.to_display())
        .collect();
    Ok(Value::Str(strings::shellquote(&words)))
}
