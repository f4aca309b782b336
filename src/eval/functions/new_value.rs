//! `T.new(...)` and `convert_to`: a value of a type made from arguments, as Puppet's
//! `new_T` functions make it (Deferred, Binary, Timespan, and the generic dispatch).

use super::*;

/// The pattern of a deferred function's name (a `$` names a variable of the agent).
pub(super) const DEFERRED_NAME: &str = r"\A[$]?[a-z][a-z0-9_]*(?:::[a-z][a-z0-9_]*)*\z";

pub(super) fn is_deferred_name(s: &str) -> bool {
    let body = s.strip_prefix('$').unwrap_or(s);
    !body.is_empty()
        && body.split("::").all(|seg| {
            let mut b = seg.bytes();
            b.next().is_some_and(|c| c.is_ascii_lowercase())
                && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
        })
}

/// `Deferred(name, arguments?)` or `Deferred({'name' => .., 'arguments' => ..})`, with
/// Puppet's `new_Deferred` dispatch errors.
pub(super) fn new_deferred(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let args = &a.values[1..];
    let fail = |c: &Compiler<'_>, msg: String| Flow::Err(c.runtime(msg, a.span));
    if args.is_empty() || args.len() > 2 {
        let got = if args.is_empty() {
            "none".to_string()
        } else {
            args.len().to_string()
        };
        return Err(fail(
            c,
            format!("'new_Deferred' expects between 1 and 2 arguments, got {got}"),
        ));
    }
    let name_ok = |v: &Value| matches!(v, Value::Str(s) if is_deferred_name(s));
    let args_ok = |v: Option<&Value>| matches!(v, None | Some(Value::Undef | Value::Array(_)));
    let build = |name: &Value, arguments: Option<&Value>| {
        Value::Deferred(Box::new(crate::eval::values::value::Deferred {
            name: name.to_display(),
            arguments: match arguments {
                Some(Value::Array(x)) => Some(x.clone()),
                _ => None,
            },
        }))
    };
    if let [Value::Hash(h)] = args {
        let name = h.get(&Value::str("name"));
        let arguments = h.get(&Value::str("arguments"));
        if name.is_some_and(name_ok)
            && args_ok(arguments)
            && h.keys()
                .all(|k| matches!(k.as_str(), Some("name" | "arguments")))
        {
            return Ok(build(name.unwrap_or(&Value::Undef), arguments));
        }
    } else if name_ok(&args[0]) && args_ok(args.get(1)) {
        return Ok(build(&args[0], args.get(1)));
    }
    let pattern = format!("Pattern[/{DEFERRED_NAME}/]");
    let hash_rejected = match args {
        [Value::Hash(_)] => "parameter 'hash' expects a Struct value, got Struct".to_string(),
        [one] => format!(
            "parameter 'hash' expects a Struct value, got {}",
            one.type_name()
        ),
        _ => format!("expects 1 argument, got {}", args.len()),
    };
    let positional_rejected = if !name_ok(&args[0]) {
        match &args[0] {
            Value::Str(s) => format!("parameter 'name' expects a match for {pattern}, got '{s}'"),
            other => format!(
                "parameter 'name' expects a match for {pattern}, got {}",
                other.type_name()
            ),
        }
    } else {
        let got = args.get(1).map(Value::type_name).unwrap_or_default();
        format!("parameter 'arguments' expects a value of type Undef or Array, got {got}")
    };
    Err(fail(
        c,
        format!(
            "The function 'new_Deferred' was called with arguments it does not accept. It expects one of:\n  \
             (Struct[{{'name' => {pattern}, 'arguments' => Optional[Array]}}] hash)\n    rejected: {hash_rejected}\n  \
             ({pattern} name, Array arguments?)\n    rejected: {positional_rejected}"
        ),
    ))
}

/// Puppet's `Binary.new`: from a string in one of the base64 formats (`%B` strict, the
/// default; `%b` relaxed, `%u` URL-safe) or as its UTF-8 bytes (`%s`, `%r`); from an array
/// of bytes; from a hash of `value` and `format`. Errors are `new_Binary`'s.
pub(super) fn new_binary(args: &[Value]) -> Result<Value, String> {
    const FORMAT: &str = "Base64Format = Enum['%B', '%b', '%r', '%s', '%u']";
    let from_string = |s: &str, format: &str| -> Result<Vec<u8>, String> {
        Ok(match format {
            "%b" => strings::ruby_decode64(&format!("{s}{}", "=".repeat(s.len() % 3))),
            "%u" => strings::ruby_urlsafe_decode64(s)?,
            "%s" | "%r" => s.as_bytes().to_vec(),
            _ => strings::ruby_strict_decode64(s)?,
        })
    };
    let is_format = |f: &str| matches!(f, "%B" | "%b" | "%r" | "%s" | "%u");
    let byte = |v: &Value| match v {
        Value::Int(i) => u8::try_from(*i).ok(),
        _ => None,
    };
    let bytes = |items: &[Value]| items.iter().map(byte).collect::<Option<Vec<u8>>>();
    let done = |b: Vec<u8>| Ok(Value::Binary(b.into()));
    match args {
        [Value::Str(s)] => return done(from_string(s, "%B")?),
        [Value::Str(s), Value::Str(f)] if is_format(f) => return done(from_string(s, f)?),
        [Value::Array(items)] => {
            if let Some(b) = bytes(items) {
                return done(b);
            }
        }
        [Value::Hash(h)] => {
            let format = h.get(&Value::str("format"));
            let keys_ok = |allowed: &[&str]| {
                h.keys()
                    .all(|k| matches!(k.as_str(), Some(k) if allowed.contains(&k)))
            };
            match (h.get(&Value::str("value")), format) {
                (Some(Value::Str(s)), None | Some(Value::Undef))
                    if keys_ok(&["value", "format"]) =>
                {
                    return done(from_string(s, "%B")?)
                }
                (Some(Value::Str(s)), Some(Value::Str(f)))
                    if is_format(f) && keys_ok(&["value", "format"]) =>
                {
                    return done(from_string(s, f)?)
                }
                (Some(Value::Array(items)), None) if keys_ok(&["value"]) => {
                    if let Some(b) = bytes(items) {
                        return done(b);
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
    if args.is_empty() || args.len() > 2 {
        let got = if args.is_empty() {
            "none".to_string()
        } else {
            args.len().to_string()
        };
        return Err(format!(
            "'new_Binary' expects between 1 and 2 arguments, got {got}"
        ));
    }
    let got = |v: &Value| v.type_name();
    let str_rejected = match args {
        [Value::Str(_), f] => match f {
            Value::Str(f) => format!("parameter 'format' expects a match for {FORMAT}, got '{f}'"),
            other => format!(
                "parameter 'format' expects a match for {FORMAT}, got {}",
                got(other)
            ),
        },
        [other, ..] => format!("parameter 'str' expects a String value, got {}", got(other)),
        [] => String::new(),
    };
    let array_rejected = match args {
        [Value::Array(items)] => {
            let (i, bad) = items
                .iter()
                .enumerate()
                .find(|(_, v)| byte(v).is_none())
                .unwrap_or((0, &Value::Undef));
            let shown = match bad {
                Value::Int(_) => types::infer(bad).to_string(),
                other => got(other),
            };
            format!("parameter 'byte_array' index {i} expects a ByteInteger = Integer[0, 255] value, got {shown}")
        }
        [other] => format!(
            "parameter 'byte_array' expects an Array value, got {}",
            got(other)
        ),
        _ => format!("expects 1 argument, got {}", args.len()),
    };
    let hash_type = format!("BinaryArgsHash = Variant[StringHash = Struct[{{'value' => String, 'format' => Optional[{FORMAT}]}}], ArrayHash = Struct[{{'value' => Array[ByteInteger = Integer[0, 255]]}}]]");
    let hash_rejected = match args {
        [other] => format!(
            "parameter 'hash_args' expects a {hash_type} value, got {}",
            got(other)
        ),
        _ => format!("expects 1 argument, got {}", args.len()),
    };
    Err(format!(
        "The function 'new_Binary' was called with arguments it does not accept. It expects one of:\n  \
         (String str, {FORMAT} format?)\n    rejected: {str_rejected}\n  \
         (Array[ByteInteger] byte_array)\n    rejected: {array_rejected}\n  \
         ({hash_type} hash_args)\n    rejected: {hash_rejected}"
    ))
}

/// Puppet's `Timespan.new`: from seconds; from a string with an optional format or array
/// of formats (the default formats otherwise); from days, hours, minutes, seconds and
/// optional milli-, micro- and nanoseconds; from a hash of those fields (and `negative`) or
/// of `string` and `format`. `None` for arguments none of these take.
pub(super) fn new_timespan(args: &[Value]) -> Result<Option<Value>, String> {
    use crate::eval::values::timespan::Timespan;
    let formats = |f: Option<&Value>| match f {
        None | Some(Value::Undef) => Some(Timespan::default_formats()),
        Some(Value::Str(s)) => Some(vec![s.clone()]),
        Some(Value::Array(a)) if !a.is_empty() => {
            a.iter().map(|x| x.as_str().map(str::to_string)).collect()
        }
        _ => None,
    };
    let int = |v: Option<&Value>| match v {
        None | Some(Value::Undef) => Some(0),
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    };
    let span = |t: Option<Timespan>| t.map(Value::Timespan).ok_or("Timespan out of range");
    Ok(Some(match args {
        [n @ (Value::Int(_) | Value::Float(_))] => span(Timespan::from_seconds(n))?,
        [Value::Timespan(t)] => Value::Timespan(*t),
        [Value::Str(s)] | [Value::Str(s), _] if !s.is_empty() => match formats(args.get(1)) {
            Some(f) => Value::Timespan(Timespan::parse(s, &f)?),
            None => return Ok(None),
        },
        [Value::Hash(h)] => {
            let get = |k: &str| h.get(&Value::str(k));
            if let Some(Value::Str(s)) = get("string") {
                match formats(get("format")) {
                    Some(f) => Value::Timespan(Timespan::parse(s, &f)?),
                    None => return Ok(None),
                }
            } else {
                let keys = [
                    "days",
                    "hours",
                    "minutes",
                    "seconds",
                    "milliseconds",
                    "microseconds",
                    "nanoseconds",
                ];
                if !h.keys().all(|k| {
                    k.as_str()
                        .is_some_and(|k| k == "negative" || keys.contains(&k))
                }) {
                    return Ok(None);
                }
                let mut f = [0i64; 7];
                for (slot, k) in f.iter_mut().zip(keys) {
                    match int(get(k)) {
                        Some(n) => *slot = n,
                        None => return Ok(None),
                    }
                }
                let negative = match get("negative") {
                    None | Some(Value::Undef) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Ok(None),
                };
                span(Timespan::from_fields(negative, f))?
            }
        }
        [_, _, _, _, ..] if args.len() <= 7 => {
            let mut f = [0i64; 7];
            for (i, slot) in f.iter_mut().enumerate() {
                match (i < 4, args.get(i)) {
                    (_, Some(Value::Int(n))) => *slot = *n,
                    (false, None) => {}
                    _ => return Ok(None),
                }
            }
            span(Timespan::from_fields(false, f))?
        }
        _ => return Ok(None),
    }))
}

/// `T.new(args) |$x| { ... }`: the new value, given to the block when there is one; an
/// argument that already is a `T` is the value, and the block is not called.
pub(super) fn f_new(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let already = match a.values.as_slice() {
        [Value::Type(t), only] => {
            let t = match &**t {
                PType::Alias(_, inner) => &**inner,
                other => other,
            };
            !matches!(t, PType::Init) && t.is_instance(only)
        }
        _ => false,
    };
    let v = new_instance(c, a)?;
    match a.lambda {
        Some(l) if !already => c.call_lambda(l, vec![v], a.scope, a.span),
        _ => Ok(v),
    }
}

pub(super) fn new_instance(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Some(Value::Type(t)) = a.values.first().cloned() else {
        return Err(arg_err(c, a, "expects a Type"));
    };
    if *t == types::deferred_type() {
        return new_deferred(c, a);
    }
    let mut args: Vec<Value> = a.values[1..].to_vec();
    let t = match *t {
        PType::Alias(_, inner) => std::sync::Arc::unwrap_or_clone(inner),
        other => other,
    };
    // The named form of the numeric types: `Integer({from => '0x10', radix => 16})`.
    if let (PType::Integer(..) | PType::Float(..) | PType::Numeric, [Value::Hash(h)]) =
        (&t, args.as_slice())
    {
        let get = |k: &str| h.get(&Value::str(k)).cloned();
        if let Some(from) = get("from") {
            let abs = get("abs").unwrap_or(Value::Bool(false));
            args = match t {
                PType::Integer(..) => vec![from, get("radix").unwrap_or(Value::Default), abs],
                _ => vec![from, abs],
            };
        }
    }
    // One argument that already is an instance: itself, and no block is called (Puppet's
    // `new_instance`).
    if let [only] = args.as_slice() {
        if !matches!(t, PType::Init) && t.is_instance(only) {
            return Ok(only.clone());
        }
    }
    let v = args.first().cloned().unwrap_or(Value::Undef);
    let res = match &t {
        // `Type.new('Integer[1]')`: the type the string names; `Type(Array)`: a type is
        // its own Type value.
        PType::Type(_) => match &v {
            Value::Str(s) => {
                let s = s.clone();
                Some(Value::Type(Box::new(c.type_from_string(&s, a.span)?)))
            }
            Value::Type(_) => Some(v.clone()),
            // Puppet's `new_type` dispatch takes only a string.
            other if args.len() == 1 => {
                return Err(Flow::Err(c.runtime(
                    format!(
                        "'new_type' parameter 'type_string' expects a String value, got {}",
                        other.type_name()
                    ),
                    a.span,
                )))
            }
            _ => None,
        },
        // `Timestamp()` is now; from seconds since the epoch or an ISO 8601 string.
        PType::Timestamp => match &v {
            Value::Undef if args.is_empty() => Some(Value::Timestamp(crate::eval::values::value::Timestamp::at(c.loader.host().now()))),
            Value::Timestamp(_) => Some(v.clone()),
            Value::Int(_) | Value::Float(_) => {
                crate::eval::values::value::Timestamp::from_seconds(&v).map(Value::Timestamp)
            }
            Value::Str(s) => match crate::eval::values::value::Timestamp::parse(s) {
                Some(ts) => Some(Value::Timestamp(ts)),
                None => {
                    return Err(Flow::Err(c.runtime(
                        format!("Unable to parse '{s}' using any of the formats %FT%T.%N %Z, %FT%T %Z, %F %T.%N %Z, %F %T %Z, %F %Z, %F"),
                        a.span,
                    )))
                }
            },
            _ => None,
        },
        PType::Error(..) => {
            Some(new_error(&args).map_err(|m| Flow::Err(c.runtime(m, a.span)))?)
        }
        PType::Binary => Some(new_binary(&args).map_err(|m| Flow::Err(c.runtime(m, a.span)))?),
        PType::Timespan | PType::TimespanRange(..) => new_timespan(&args)
            .map_err(|m| Flow::Err(c.runtime(m, a.span)))?,
        PType::Integer(..) => match &v {
            Value::Int(i) => Some(Value::Int(*i)),
            // A time value's whole seconds (Ruby's `to_i`: integer division, floored).
            Value::Timespan(t) => Some(Value::Int(t.0.div_euclid(1_000_000_000))),
            Value::Timestamp(t) => Some(Value::Int(t.to_i64())),
            Value::Float(f) => Some(Value::Int(f.trunc() as i64)),
            Value::Bool(b) => Some(Value::Int(*b as i64)),
            Value::Str(s) => {
                let radix = args.get(1).and_then(|r| {
                    if let Value::Int(r) = r {
                        Some(*r as u32)
                    } else {
                        None
                    }
                });
                // Puppet's Integer.new: the string must match `[+-]?\s*` then decimal (or
                // octal) digits, 0x hex or 0b binary; then Ruby's Integer() reads it, where a
                // leading 0 makes octal (8 and 9 being Ruby's own error).
                let (neg, rest) = match s.strip_prefix('-') {
                    Some(r) => (true, r),
                    None => (false, s.strip_prefix('+').unwrap_or(s)),
                };
                let digits = rest.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
                let signed = |n: i64| Value::Int(if neg { n.wrapping_neg() } else { n });
                let prefixed = |p: &[&str]| p.iter().find_map(|p| digits.strip_prefix(p));
                match radix {
                    // The string must first read as an integer of some radix (Puppet's
                    // INTEGER_PATTERN_LENIENT: digits, `0x` hex or `0b` binary); then Ruby's
                    // `Integer(s, radix)` takes it, a `0x`/`0b` prefix only for its radix.
                    Some(r) if ![2, 8, 10, 16].contains(&r) => {
                        let shown = args.get(1).map(Value::to_display).unwrap_or_default();
                        return Err(Flow::Err(c.runtime(
                            format!("Illegal radix: {shown}, expected 2, 8, 10, 16, or default"),
                            a.span,
                        )));
                    }
                    Some(r) => {
                        let (body, prefix_radix) = match prefixed(&["0x", "0X"]) {
                            Some(h) => (h, Some(16)),
                            None => match prefixed(&["0b", "0B"]) {
                                Some(b) => (b, Some(2)),
                                None => (digits, None),
                            },
                        };
                        let lenient = !body.is_empty()
                            && match prefix_radix {
                                Some(16) => body.bytes().all(|b| b.is_ascii_hexdigit()),
                                Some(_) => body.bytes().all(|b| b == b'0' || b == b'1'),
                                None => body.bytes().all(|b| b.is_ascii_digit()),
                            };
                        if !lenient {
                            None
                        } else {
                            match i64::from_str_radix(body, r) {
                                Ok(n) if prefix_radix.is_none_or(|p| p == r) => Some(signed(n)),
                                _ => {
                                    return Err(Flow::Err(c.runtime(
                                        format!("invalid value for Integer(): \"{s}\""),
                                        a.span,
                                    )))
                                }
                            }
                        }
                    }
                    None => {
                        if let Some(hex) = prefixed(&["0x", "0X"]) {
                            i64::from_str_radix(hex, 16).ok().map(signed)
                        } else if let Some(bin) = prefixed(&["0b", "0B"]) {
                            i64::from_str_radix(bin, 2).ok().map(signed)
                        } else if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                            None
                        } else if digits.len() > 1 && digits.starts_with('0') {
                            if digits.bytes().any(|b| b == b'8' || b == b'9') {
                                return Err(Flow::Err(c.runtime(
                                    format!("invalid value for Integer(): \"{s}\""),
                                    a.span,
                                )));
                            }
                            i64::from_str_radix(digits, 8).ok().map(signed)
                        } else {
                            digits.parse::<i64>().ok().map(signed)
                        }
                    }
                }
            }
            _ => None,
        },
        PType::Float(..) => match &v {
            Value::Timespan(t) => Some(Value::Float(t.to_f64())),
            Value::Timestamp(t) => Some(Value::Float(t.to_f64())),
            Value::Int(i) => Some(Value::Float(*i as f64)),
            Value::Float(f) => Some(Value::Float(*f)),
            Value::Bool(b) => Some(Value::Float(*b as i64 as f64)),
            Value::Str(s) => float_pattern_number(s).map(|n| Value::Float(num_f64(&n))),
            _ => None,
        },
        PType::Numeric => match &v {
            Value::Int(_) | Value::Float(_) => Some(v.clone()),
            // Ruby's `TimeData#to_f`.
            Value::Timespan(t) => Some(Value::Float(t.to_f64())),
            Value::Timestamp(t) => Some(Value::Float(t.to_f64())),
            Value::Bool(b) => Some(Value::Int(*b as i64)),
            Value::Str(s) => float_pattern_number(s),
            _ => None,
        },
        PType::String(..) | PType::Enum(..) | PType::Pattern(_) => Some(Value::Str(match args.get(1) {
            Some(Value::Str(fmt)) => strings::format_value(&v, fmt)
                .map_err(|m| Flow::Err(c.runtime(m, a.span)))?,
            _ => strings::to_string_conversion(&v),
        })),
        PType::Boolean(_) => match &v {
            Value::Bool(b) => Some(Value::Bool(*b)),
            Value::Int(i) => Some(Value::Bool(*i != 0)),
            Value::Float(f) => Some(Value::Bool(*f != 0.0)),
            Value::Str(s) => match s.to_lowercase().as_str() {
                "true" | "yes" | "y" => Some(Value::Bool(true)),
                "false" | "no" | "n" => Some(Value::Bool(false)),
                _ => None,
            },
            _ => None,
        },
        PType::Array(..) | PType::Tuple(..) => Some(match &v {
            Value::Array(x) => Value::Array(x.clone()),
            Value::Iterator(it) => Value::Array(it.items.clone()),
            // A Binary's bytes, unless wrapped.
            Value::Binary(b) if args.get(1) != Some(&Value::Bool(true)) => {
                Value::Array(b.iter().map(|x| Value::Int(i64::from(*x))).collect())
            }
            // `wrap`: anything but an array becomes its only element.
            other if args.get(1) == Some(&Value::Bool(true)) => Value::Array(vec![other.clone()]),
            Value::Hash(h) => Value::Array(
                h.iter()
                    .map(|(k, x)| Value::Array(vec![k.clone(), x.clone()]))
                    .collect(),
            ),
            Value::Str(s) if args.get(1) != Some(&Value::Bool(true)) => {
                Value::Array(s.chars().map(|ch| Value::str(ch.to_string())).collect())
            }
            Value::Int(_) | Value::Type(_) if args.get(1) != Some(&Value::Bool(true)) => {
                Value::Array(
                    iteration_items(&v)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(_, x)| x)
                        .collect(),
                )
            }
            other => Value::Array(vec![other.clone()]),
        }),
        PType::Hash(..) | PType::Struct(_) => match &v {
            Value::Hash(h) => Some(Value::Hash(h.clone())),
            Value::Array(items)
                if matches!(args.get(1), Some(Value::Str(o)) if o == "tree" || o == "hash_tree")
                    && !items.is_empty()
                    && items
                        .iter()
                        .all(|x| matches!(x, Value::Array(p) if p.len() == 2 && matches!(p[0], Value::Array(_)))) =>
            {
                let all_hashes = matches!(args.get(1), Some(Value::Str(o)) if o == "hash_tree");
                Some(hash_from_tree(items, all_hashes))
            }
            Value::Array(items) => {
                let mut h = IndexMap::new();
                if items
                    .iter()
                    .all(|x| matches!(x, Value::Array(p) if p.len() == 2))
                {
                    for x in items {
                        if let Value::Array(p) = x {
                            h.insert(p[0].clone(), p[1].clone());
                        }
                    }
                } else {
                    for ch in items.chunks(2) {
                        h.insert(ch[0].clone(), ch.get(1).cloned().unwrap_or(Value::Undef));
                    }
                }
                Some(Value::Hash(h.into()))
            }
            _ => None,
        },
        PType::Sensitive(_) => Some(Value::Sensitive(Box::new(v.clone()))),
        PType::Regexp(_) => match &v {
            Value::Str(s) => Regex::new(s).ok().map(Value::Regex),
            Value::Regex(_) => Some(v.clone()),
            _ => None,
        },
        PType::Optional(Some(inner)) | PType::NotUndef(Some(inner)) => {
            let mut a2 = Args {
                name: a.name.clone(),
                values: std::iter::once(Value::Type(inner.clone()))
                    .chain(args.iter().cloned())
                    .collect(),
                lambda: None,
                scope: a.scope,
                span: a.span,
            };
            return f_new(c, &mut a2);
        }
        PType::Variant(ts) => {
            for inner in ts {
                let mut a2 = Args {
                    name: a.name.clone(),
                    values: std::iter::once(Value::Type(Box::new(inner.clone())))
                        .chain(args.iter().cloned())
                        .collect(),
                    lambda: None,
                    scope: a.scope,
                    span: a.span,
                };
                if let Ok(v) = f_new(c, &mut a2) {
                    return Ok(v);
                }
            }
            None
        }
        _ => None,
    };
    // `abs`: Integer's third argument, Float's and Numeric's second.
    let abs = match t {
        PType::Integer(..) => args.get(2),
        PType::Float(..) | PType::Numeric => args.get(1),
        _ => None,
    } == Some(&Value::Bool(true));
    let res = match res {
        Some(Value::Int(i)) if abs => Some(Value::Int(i.wrapping_abs())),
        Some(Value::Float(f)) if abs => Some(Value::Float(f.abs())),
        r => r,
    };
    match res {
        Some(r) => {
            if !t.is_instance(&r) && !matches!(t, PType::Sensitive(_)) {
                return Err(Flow::Err(c.runtime(
                    format!(
                        "Converted value from {}.new() has wrong type, {}",
                        t,
                        types::mismatch(&t, &r)
                    ),
                    a.span,
                )));
            }
            Ok(r)
        }
        None if matches!(v, Value::Str(_))
            && matches!(
                t,
                PType::Integer(..) | PType::Float(..) | PType::Numeric | PType::Boolean(_)
            ) =>
        {
            Err(Flow::Err(c.runtime(
                format!(
                    "'{}' The string '{}' cannot be converted to {}",
                    match t {
                        PType::Float(..) => "new_float",
                        PType::Numeric => "new_numeric",
                        PType::Boolean(_) => "new_boolean",
                        _ => "new",
                    },
                    v.to_display(),
                    t.generalize()
                ),
                a.span,
            )))
        }
        None => Err(Flow::Err(c.runtime(
            format!(
                "Converted value from {}.new() has wrong type, {}",
                t.generalize(),
                types::mismatch(&t.generalize(), &v)
            ),
            a.span,
        ))),
    }
}

/// A string that Puppet's `FLOAT_PATTERN` accepts (a sign, blanks, then a decimal with an
/// optional fraction and exponent, or hex, octal or binary digits), as its number; `None`
/// for any other (leading or trailing blanks, `.5`, `1.`).
pub(super) fn float_pattern_number(s: &str) -> Option<Value> {
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let body = rest.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let signed = |v: Value| match v {
        Value::Int(i) if neg => Value::Int(i.wrapping_neg()),
        Value::Float(f) if neg => Value::Float(-f),
        v => v,
    };
    if let Some(bin) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        return i64::from_str_radix(bin, 2)
            .ok()
            .map(|i| signed(Value::Int(i)));
    }
    let is_hex = body.len() > 2
        && (body.starts_with("0x") || body.starts_with("0X"))
        && body[2..].bytes().all(|b| b.is_ascii_hexdigit());
    if !is_hex {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (mantissa, None),
        };
        let ok = digits(int)
            && frac.is_none_or(digits)
            && exponent.is_none_or(|e| digits(e.strip_prefix('-').unwrap_or(e)));
        if !ok {
            return None;
        }
    }
    parse_number(body).map(signed)
}

/// `Hash.new(array, 'tree' | 'hash_tree')`: `[path, value]` pairs built into nested hashes
/// (with `hash_tree`, array values become hashes of their indexes).
pub(super) fn hash_from_tree(items: &[Value], all_hashes: bool) -> Value {
    fn array_as_hash(v: &Value) -> Value {
        match v {
            Value::Array(a) => Value::Hash(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| (Value::Int(i as i64), array_as_hash(x)))
                    .collect(),
            ),
            v => v.clone(),
        }
    }
    fn put(node: &mut Value, path: &[Value], value: Value) {
        let Some((key, rest)) = path.split_first() else {
            return;
        };
        match node {
            Value::Hash(h) if rest.is_empty() => {
                h.insert(key.clone(), value);
            }
            Value::Hash(h) => {
                let child = h
                    .entry(key.clone())
                    .or_insert_with(|| Value::Hash(Default::default()));
                put(child, rest, value);
            }
            Value::Array(a) => {
                let index = match key {
                    Value::Int(i) => usize::try_from(*i).ok(),
                    _ => None,
                };
                if let Some(child) = index.and_then(|i| a.get_mut(i)) {
                    if rest.is_empty() {
                        *child = value;
                    } else {
                        put(child, rest, value);
                    }
                }
            }
            _ => {}
        }
    }
    let mut result = Value::Hash(Default::default());
    for item in items {
        let Value::Array(pair) = item else { continue };
        let (Value::Array(path), value) = (&pair[0], &pair[1]) else {
            continue;
        };
        let value = if all_hashes {
            array_as_hash(value)
        } else {
            value.clone()
        };
        if path.is_empty() {
            if let Value::Hash(h) = &mut result {
                match value {
                    Value::Array(a) => {
                        for (i, x) in a.into_iter().enumerate() {
                            h.insert(Value::Int(i as i64), x);
                        }
                    }
                    Value::Hash(m) => h.extend(m),
                    _ => {}
                }
            }
        } else {
            put(&mut result, path, value);
        }
    }
    result
}

// ---- strings -------------------------------------------------------------------------------------
