//! Collections: sizes, keys and values, `flatten`, `unique`, `empty`, navigation (`dig`,
//! `get`, `getvar`), and the array and hash functions (`merge`, `concat`, `delete`,
//! `member`, `pick`, `range`, `zip`...).

use super::*;

pub(super) fn f_size(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Int(match first_arg(a) {
        Value::Array(x) => x.len() as i64,
        Value::Hash(h) => h.len() as i64,
        Value::Str(s) => s.chars().count() as i64,
        Value::Binary(b) => b.len() as i64,
        Value::Sensitive(_) => return Err(arg_err(c, a, "expects a Collection or String")),
        other => {
            return Err(arg_err(
                c,
                a,
                format!(
                    "expects a value of type Collection or String, got {}",
                    other.type_name()
                ),
            ))
        }
    }))
}

pub(super) fn f_keys(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match first_arg(a) {
        Value::Hash(h) => Value::Array(h.keys().cloned().collect()),
        _ => Value::Array(vec![]),
    })
}

pub(super) fn f_values(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match first_arg(a) {
        Value::Hash(h) => Value::Array(h.values().cloned().collect()),
        _ => Value::Array(vec![]),
    })
}

pub(super) fn flatten_all(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(items) => items.iter().for_each(|x| flatten_all(x, out)),
        other => out.push(other.clone()),
    }
}

pub(super) fn f_flatten(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for v in &a.values {
        flatten_all(v, &mut out);
    }
    Ok(Value::Array(out))
}

pub(super) fn f_unique(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    // The identity of an element: the block's value for it, or the element itself.
    let key = |c: &mut Compiler<'_>, v: &Value| -> R<Value> {
        match a.lambda {
            Some(l) => c.call_lambda(l, vec![v.clone()], a.scope, a.span),
            None => Ok(v.clone()),
        }
    };
    // An iterator's elements are made unique as an array's (Puppet's unique of an Iterable).
    let v = match first_arg(a) {
        Value::Iterator(it) => Value::Array(it.items.clone()),
        other => other,
    };
    Ok(match v {
        Value::Array(items) => {
            let mut seen: Vec<Value> = vec![];
            let mut out: Vec<Value> = vec![];
            for x in items {
                let k = key(c, &x)?;
                if !seen.contains(&k) {
                    seen.push(k);
                    out.push(x);
                }
            }
            Value::Array(out)
        }
        Value::Str(s) => {
            let mut seen: Vec<Value> = vec![];
            let mut out = String::new();
            for ch in s.chars() {
                let k = key(c, &Value::str(ch.to_string()))?;
                if !seen.contains(&k) {
                    seen.push(k);
                    out.push(ch);
                }
            }
            Value::Str(out)
        }
        // Puppet's unique of a hash: the keys whose values (or block values) are the same,
        // grouped, each group with its distinct values.
        Value::Hash(h) => {
            let mut groups: IndexMap<Value, (Vec<Value>, Vec<Value>)> = IndexMap::new();
            for (k, v) in h.iter() {
                let id = key(c, v)?;
                let g = groups.entry(id).or_default();
                g.0.push(k.clone());
                if !g.1.contains(v) {
                    g.1.push(v.clone());
                }
            }
            Value::Hash(
                groups
                    .into_values()
                    .map(|(keys, values)| (Value::Array(keys), Value::Array(values)))
                    .collect(),
            )
        }
        other => other,
    })
}

pub(super) fn f_empty(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(match first_arg(a) {
        Value::Array(x) => x.is_empty(),
        Value::Hash(h) => h.is_empty(),
        Value::Str(s) => s.is_empty(),
        Value::Binary(b) => b.is_empty(),
        Value::Sensitive(inner) if matches!(*inner, Value::Str(_)) => {
            matches!(*inner, Value::Str(ref s) if s.is_empty())
        }
        Value::Undef => true,
        Value::Int(_) | Value::Float(_) => {
            // empty.rb: a deprecation warning once per call site.
            let file = c.sources.get(a.span.file);
            let line = file.map(|f| f.line_col(a.span.start as usize).0);
            if let (Some(f), Some(line)) = (file, line) {
                let key = format!("empty-from-{}-{line}", f.name);
                if c.warned_deprecations.insert(key) {
                    let at = c.line_location(Some(a.span.file), Some(line as u32));
                    c.log(
                        super::LogLevel::Warning,
                        format!(
                            "Calling function empty() with Numeric value is deprecated.\n   {at}"
                        ),
                    );
                }
            }
            false
        }
        _ => false,
    }))
}

/// `dig(data, keys...)`: undef as soon as data or a key is undef; an error on a scalar, or on
/// an array with a non-integer key (Puppet's SLICE_ERROR messages, with the path walked).
pub(super) fn f_dig(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let keys = &a.values[1.min(a.values.len())..];
    dig_values(first_arg(a), keys).map_err(|e| Flow::Err(c.runtime(e.msg, a.span)))
}

/// Puppet's `dig` of `keys` into `data`; an error is Puppet's `SLICE_ERROR` with its issue
/// code, message and details.
pub(super) fn dig_values(
    data: Value,
    keys: &[Value],
) -> Result<Value, crate::eval::values::value::ErrorValue> {
    let slice_error = |code: &str, msg: String, walked: &[Value], (key, t): (&str, PType)| {
        let details: IndexMap<Value, Value> = [
            (Value::str("walked_path"), Value::Array(walked.to_vec())),
            (Value::str(key), Value::Type(Box::new(t))),
        ]
        .into_iter()
        .collect();
        crate::eval::values::value::ErrorValue {
            msg,
            kind: Some("SLICE_ERROR".to_string()),
            details: Some(Value::Hash(details.into())),
            issue_code: Some(code.to_string()),
        }
    };
    let mut cur = data;
    let mut walked: Vec<Value> = vec![];
    let path = |walked: &[Value]| crate::eval::ruby_inspect(&Value::Array(walked.to_vec()));
    for k in keys {
        if cur.is_undef() || k.is_undef() {
            return Ok(Value::Undef);
        }
        if !matches!(cur, Value::Array(_) | Value::Hash(_)) {
            let msg = format!(
                "The given data does not contain a Collection at {}, got '{}'",
                path(&walked),
                types::infer(&cur)
            );
            let t = ("value_type", types::infer(&cur));
            return Err(slice_error("EXPECTED_COLLECTION", msg, &walked, t));
        }
        walked.push(k.clone());
        cur = match (&cur, k) {
            (Value::Hash(h), k) => h.get(k).cloned().unwrap_or(Value::Undef),
            (Value::Array(x), Value::Int(i)) => {
                let idx = if *i < 0 { x.len() as i64 + i } else { *i };
                usize::try_from(idx)
                    .ok()
                    .and_then(|i| x.get(i).cloned())
                    .unwrap_or(Value::Undef)
            }
            (_, k) => {
                let msg = format!(
                    "The given data requires an Integer index at {}, got '{}'",
                    path(&walked),
                    types::infer(k).generalize()
                );
                let t = ("index_type", types::infer(k).generalize());
                return Err(slice_error("EXPECTED_INTEGER_INDEX", msg, &walked, t));
            }
        };
    }
    Ok(cur)
}

pub(super) fn f_get(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let path = a.values.get(1).map(|v| v.to_display()).unwrap_or_default();
    let value = first_arg(a);
    let default = a.values.get(2).cloned().unwrap_or(Value::Undef);
    get_path(c, a, value, &path, default)
}

/// `get`'s navigation of a dotted `path` into `value` (`getvar`'s too): the default for
/// undef; a navigation error goes to the block as an `Error` when there is one.
pub(super) fn get_path(
    c: &mut Compiler<'_>,
    a: &Args,
    value: Value,
    path: &str,
    default: Value,
) -> R<Value> {
    if value.is_undef() {
        return Ok(default);
    }
    if path.is_empty() {
        return Ok(value);
    }
    let Some(segments) = dotted_segments(path) else {
        return Err(Flow::Err(
            c.runtime("Syntax error in dotted-navigation string", a.span),
        ));
    };
    match dig_values(value, &segments) {
        Ok(v) if v.is_undef() => Ok(default),
        Ok(v) => Ok(v),
        Err(e) => match a.lambda {
            Some(l) => c.call_lambda(l, vec![Value::Error(Box::new(e))], a.scope, a.span),
            None => Err(Flow::Err(c.runtime(e.msg, a.span))),
        },
    }
}

/// Puppet's `getvar('name.path', default)`: a variable (qualified or not) read with `get`'s
/// navigation after the first dot; an unknown variable gives the default.
pub(in crate::eval) fn f_getvar(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    const NAME: &str = r"\A(?:::)?(?:[a-z]\w*::)*[a-z_]\w*(?:\.|\Z)";
    let text = match a.values.first() {
        Some(Value::Str(s)) => s.clone(),
        other => {
            let got = other.map(Value::type_name).unwrap_or_default();
            return Err(Flow::Err(c.runtime(
                format!("'getvar' parameter 'get_string' expects a match for Pattern[/{NAME}/], got {got}"),
                a.span,
            )));
        }
    };
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    // `(::)?([a-z]\w*::)*[a-z_]\w*` then a dot or the end.
    let mut i = if text.starts_with("::") { 2 } else { 0 };
    let end = loop {
        let start = i;
        if !bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_lowercase() || *b == b'_')
        {
            break None;
        }
        while bytes.get(i).copied().is_some_and(word) {
            i += 1;
        }
        if text[i..].starts_with("::") && bytes[start] != b'_' {
            i += 2;
            continue;
        }
        break matches!(bytes.get(i), None | Some(b'.')).then_some(i);
    };
    let Some(end) = end else {
        return Err(Flow::Err(c.runtime(
            "'getvar' The given string does not start with a valid variable name",
            a.span,
        )));
    };
    let default = a.values.get(1).cloned().unwrap_or(Value::Undef);
    let value = c.quiet_var(&text[..end], a.scope).unwrap_or(Value::Undef);
    let path = text.get(end + 1..).unwrap_or("");
    get_path(c, a, value, path, default)
}

/// Puppet's `split_key` of a dotted path: segments between dots, quoted ones (`"a.b"`,
/// `'a.b'`) taken as they are, numbers as integers; `None` for a syntax error.
pub(super) fn dotted_segments(path: &str) -> Option<Vec<Value>> {
    let mut out = vec![];
    let mut rest = path;
    loop {
        let trimmed = rest.trim_start();
        let (seg, after) = match trimmed.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let close = trimmed[1..].find(q)? + 1;
                if close == 1 {
                    return None;
                }
                (
                    Value::str(&trimmed[1..close]),
                    trimmed[close + 1..].trim_start(),
                )
            }
            _ => {
                let end = trimmed.find(['.', '"', '\'']).unwrap_or(trimmed.len());
                let raw = trimmed[..end].trim();
                if raw.is_empty() {
                    return None;
                }
                let digits = raw.strip_prefix(['+', '-']).unwrap_or(raw);
                let seg = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    Value::Int(raw.parse().ok()?)
                } else {
                    Value::str(raw)
                };
                (seg, &trimmed[end..])
            }
        };
        out.push(seg);
        match after.strip_prefix('.') {
            Some(r) => rest = r,
            None if after.is_empty() => return Some(out),
            None => return None,
        }
    }
}

pub(super) fn f_delete(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let what = a.values.get(1).cloned().unwrap_or(Value::Undef);
    let drop = flatten_values(&what);
    Ok(match first_arg(a) {
        Value::Array(x) => Value::Array(x.into_iter().filter(|v| !drop.contains(v)).collect()),
        Value::Hash(h) => Value::Hash(h.into_iter().filter(|(k, _)| !drop.contains(k)).collect()),
        Value::Str(s) => Value::Str(
            drop.iter()
                .fold(s, |acc, d| acc.replace(&d.to_display(), "")),
        ),
        other => other,
    })
}

pub(super) fn f_merge(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if let Some(l) = a.lambda {
        return merge_with_block(c, a, l);
    }
    let mut out = IndexMap::new();
    for v in &a.values {
        if let Value::Hash(h) = v {
            for (k, x) in h {
                out.insert(k.clone(), x.clone());
            }
        }
    }
    Ok(Value::Hash(out.into()))
}

/// stdlib's `merge(iterable) |$memo, $value|` (each element) and `|$memo, $key, $value|`
/// (a hash's pairs, an array's indexes): the hashes the block returns merged in turn.
pub(super) fn merge_with_block(c: &mut Compiler<'_>, a: &Args, l: &Lambda) -> R<Value> {
    let arity = l.params.len();
    if !(2..=3).contains(&arity) {
        return Err(arg_err(c, a, "expects a block with 2 or 3 parameters"));
    }
    let mut acc: IndexMap<Value, Value> = IndexMap::new();
    for it in &a.values {
        let pairs: Vec<(Value, Value)> = match it {
            Value::Hash(h) => h.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Value::Array(xs) => xs
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i64), v.clone()))
                .collect(),
            other => {
                return Err(arg_err(
                    c,
                    a,
                    format!(
                        "expects an Iterable value, got {}",
                        crate::eval::types::infer(other).generalize()
                    ),
                ))
            }
        };
        let is_hash = matches!(it, Value::Hash(_));
        for (k, v) in pairs {
            let memo = Value::Hash(acc.clone().into());
            let args = match (arity, is_hash) {
                (3, _) => vec![memo, k, v],
                (_, true) => vec![memo, Value::Array(vec![k, v])],
                _ => vec![memo, v],
            };
            if let Value::Hash(h) = c.call_lambda(l, args, a.scope, a.span)? {
                for (k, v) in h.iter() {
                    acc.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Ok(Value::Hash(acc.into()))
}

pub(super) fn f_concat(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for v in &a.values {
        match v {
            Value::Array(x) => out.extend(x.iter().cloned()),
            other => out.push(other.clone()),
        }
    }
    Ok(Value::Array(out))
}

pub(super) fn f_member(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let hay = first_arg(a);
    let needle = a.values.get(1).cloned().unwrap_or(Value::Undef);
    Ok(Value::Bool(match (&hay, &needle) {
        (Value::Array(x), Value::Array(n)) => n.iter().all(|v| x.contains(v)),
        (Value::Array(x), n) => x.contains(n),
        _ => false,
    }))
}

pub(super) fn f_has_key(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(match (first_arg(a), a.values.get(1)) {
        (Value::Hash(h), Some(k)) => h.contains_key(k),
        _ => false,
    }))
}

pub(super) fn f_pick(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    a.values
        .iter()
        .find(|v| !v.is_undef() && !matches!(v, Value::Str(s) if s.is_empty()))
        .cloned()
        .ok_or_else(|| arg_err(c, a, "must receive at least one non empty value"))
}

pub(super) fn f_pick_default(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(a.values
        .iter()
        .find(|v| !v.is_undef() && !matches!(v, Value::Str(s) if s.is_empty()))
        .cloned()
        .or_else(|| a.values.last().cloned())
        .unwrap_or(Value::Undef))
}

pub(super) fn f_any2array(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match a.values.as_slice() {
        [] => Value::Array(vec![]),
        [Value::Array(x)] => Value::Array(x.clone()),
        [Value::Hash(h)] => {
            Value::Array(h.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect())
        }
        other => Value::Array(other.to_vec()),
    })
}

/// stdlib's `range(start, stop[, step])` or `range('a..e')`/`'a...e'`/`'a-e'`: integers
/// when the start is all digits, else Ruby's string range (`succ`, as `'host01'` to
/// `'host04'`); every `step`-th element, at most a million.
pub(super) fn f_range(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (start, stop, step, exclusive) = match a.values.as_slice() {
        [] => return Err(arg_err(c, a, "Wrong number of arguments given (0 for 1)")),
        [one] => {
            let text = one.to_display();
            let Some((x, op, y)) = split_range(&text) else {
                let msg = if text.is_empty() {
                    format!("Unknown range format: {text}")
                } else {
                    format!("Unable to compute range from the value: {text}")
                };
                return Err(arg_err(c, a, msg));
            };
            (Value::str(x), Value::str(y), 1, op == "...")
        }
        [x, y, rest @ ..] => {
            let step = match rest.first() {
                None | Some(Value::Undef) => 1,
                Some(Value::Int(i)) => i.unsigned_abs(),
                Some(Value::Float(f)) => f.trunc().abs() as u64,
                Some(v) => strings::ruby_to_i(&v.to_display()).unsigned_abs(),
            };
            if step == 0 {
                return Err(arg_err(
                    c,
                    a,
                    "3rd arg (step size) must be a non zero integer (e.g. 1 or -1)",
                ));
            }
            (x.clone(), y.clone(), step, false)
        }
    };
    let step = usize::try_from(step).unwrap_or(usize::MAX);
    let limit = MAX_ITEMS as usize;
    let (from, to) = (start.to_display(), stop.to_display());
    if !from.is_empty() && from.bytes().all(|b| b.is_ascii_digit()) {
        let (lo, hi) = (
            strings::ruby_to_i(&from) as i128,
            strings::ruby_to_i(&to) as i128,
        );
        let hi = if exclusive { hi - 1 } else { hi };
        let mut out = vec![];
        let mut i = lo;
        while i <= hi && out.len() < limit {
            out.push(Value::Int(i as i64));
            i += step as i128;
        }
        return Ok(Value::Array(out));
    }
    let all = ruby_str_upto(&from, &to, exclusive, limit.saturating_mul(step.min(limit)));
    Ok(Value::Array(
        all.into_iter()
            .step_by(step)
            .take(limit)
            .map(Value::Str)
            .collect(),
    ))
}

/// `'a..e'`, `'a...e'` or `'a-e'` (word characters around the operator).
pub(super) fn split_range(s: &str) -> Option<(&str, &str, &str)> {
    let word = |t: &str| !t.is_empty() && t.chars().all(|ch| ch.is_alphanumeric() || ch == '_');
    for op in ["...", "..", "-"] {
        if let Some((x, y)) = s.split_once(op) {
            if word(x) && word(y) {
                return Some((x, op, y));
            }
        }
    }
    None
}

/// Ruby's `String#succ`: the rightmost letter or digit goes up, carrying leftwards
/// (`'az'` -> `'ba'`, `'zz'` -> `'aaa'`, `'a9'` -> `'b0'`); a string without letters or
/// digits increments its last character.
pub(super) fn ruby_succ(s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let Some(mut i) = chars.iter().rposition(|ch| ch.is_ascii_alphanumeric()) else {
        let last = chars.len() - 1;
        chars[last] = char::from_u32(chars[last] as u32 + 1).unwrap_or(chars[last]);
        return chars.into_iter().collect();
    };
    loop {
        let (next, carry, first) = match chars[i] {
            'z' => ('a', true, 'a'),
            'Z' => ('A', true, 'A'),
            '9' => ('0', true, '1'),
            ch => (char::from_u32(ch as u32 + 1).unwrap_or(ch), false, ch),
        };
        chars[i] = next;
        if !carry {
            break;
        }
        // Carry into the next letter or digit to the left, else insert one.
        match chars[..i].iter().rposition(|ch| ch.is_ascii_alphanumeric()) {
            Some(j) => i = j,
            None => {
                chars.insert(i, first);
                break;
            }
        }
    }
    chars.into_iter().collect()
}

/// Ruby's `String#upto` (what a string `Range` iterates): from `from` by `succ` to `to`,
/// none when `from` sorts after `to`; stops when the string outgrows `to`. At most `limit`.
pub(super) fn ruby_str_upto(from: &str, to: &str, exclusive: bool, limit: usize) -> Vec<String> {
    let mut out = vec![];
    // One character each: the characters between.
    let (mut fc, mut tc) = (from.chars(), to.chars());
    if let (Some(f), None, Some(t), None) = (fc.next(), fc.next(), tc.next(), tc.next()) {
        if f.is_ascii() && t.is_ascii() {
            let end = if exclusive { t as u32 } else { t as u32 + 1 };
            return (f as u32..end)
                .filter_map(char::from_u32)
                .take(limit)
                .map(String::from)
                .collect();
        }
    }
    if from > to || (exclusive && from == to) {
        return out;
    }
    let mut cur = from.to_string();
    while out.len() < limit {
        let next = ruby_succ(&cur);
        if exclusive && cur == to {
            break;
        }
        let done = cur == to;
        out.push(cur);
        if done || next.len() > to.len() || next.is_empty() {
            break;
        }
        cur = next;
    }
    out
}

pub(super) fn f_sum(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut acc = Value::Int(0);
    if let Value::Array(items) = first_arg(a) {
        for x in items {
            acc = match (&acc, &x) {
                (Value::Int(p), Value::Int(q)) => Value::Int(p + q),
                _ => Value::Float(num_f64(&acc) + num_f64(&x)),
            };
        }
    }
    Ok(acc)
}

pub(super) fn f_hash(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut h = IndexMap::new();
    if let Value::Array(items) = first_arg(a) {
        for ch in items.chunks(2) {
            h.insert(ch[0].clone(), ch.get(1).cloned().unwrap_or(Value::Undef));
        }
    }
    Ok(Value::Hash(h.into()))
}

pub(super) fn f_zip(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match (first_arg(a), a.values.get(1)) {
        (Value::Array(x), Some(Value::Array(y))) => Value::Array(
            x.iter()
                .enumerate()
                .map(|(i, v)| {
                    Value::Array(vec![v.clone(), y.get(i).cloned().unwrap_or(Value::Undef)])
                })
                .collect(),
        ),
        _ => Value::Array(vec![]),
    })
}
