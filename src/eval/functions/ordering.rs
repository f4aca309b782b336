//! Comparing and ordering values: `compare`, `sort`, `min`, `max`, with Ruby's
//! comparison rules and messages.

use super::*;

/// compare(a, b, [ignore_case]): -1, 0 or 1 for two numbers or two strings (case-insensitive
/// unless the third argument is false), with Puppet's compare.rb messages otherwise.
pub(super) fn f_compare(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let x = a.values.first().cloned().unwrap_or(Value::Undef);
    let y = a.values.get(1).cloned().unwrap_or(Value::Undef);
    let numeric = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    let ord = match (&x, &y, a.values.get(2)) {
        (Value::Int(i), Value::Int(j), None) => Some(i.cmp(j)),
        (Value::Str(s), Value::Str(t), None | Some(Value::Bool(true))) => Some(
            s.bytes()
                .map(|b| b.to_ascii_lowercase())
                .cmp(t.bytes().map(|b| b.to_ascii_lowercase())),
        ),
        (Value::Str(s), Value::Str(t), Some(Value::Bool(false))) => {
            Some(s.as_bytes().cmp(t.as_bytes()))
        }
        (_, _, None) => numeric(&x)
            .zip(numeric(&y))
            .and_then(|(p, q)| p.partial_cmp(&q))
            .or_else(|| crate::eval::values::timespan::compare(&x, &y)),
        _ => None,
    };
    if let Some(o) = ord {
        return Ok(Value::Int(match o {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }));
    }
    let comparable = |v: &Value| matches!(v, Value::Int(_) | Value::Float(_) | Value::Str(_));
    // Puppet's argument_mismatch messages; a value's label names an array or a hash by its
    // base type.
    let label = |v: &Value| match v {
        Value::Array(_) => "Array".to_string(),
        Value::Hash(_) => "Hash".to_string(),
        other => other.type_name(),
    };
    let msg = if !comparable(&x) || !comparable(&y) {
        format!(
            "Non comparable type. Only values of the types Numeric, String, Semver, Timestamp and Timestamp can be compared. Got {} and {}",
            label(&x),
            label(&y)
        )
    } else if a.values.len() > 2 && !(matches!(x, Value::Str(_)) && matches!(y, Value::Str(_))) {
        "The third argument (ignore case) can only be used when comparing strings".into()
    } else if a.values.len() > 3 {
        format!("Accepts at most 3 arguments, got {}", a.values.len())
    } else if let Some(v) = a.values.get(2) {
        format!(
            "The third argument (ignore case) must be a Boolean. Got {}",
            label(v)
        )
    } else {
        format!(
            "Can only compare values of the same type (or for Timestamp/Timespan also against Numeric). Got {} and {}",
            label(&x),
            label(&y)
        )
    };
    // The dispatcher's prefix, then the function's own `compare(): ...`.
    Err(Flow::Err(
        c.runtime(format!("'compare' compare(): {msg}"), a.span),
    ))
}

pub(super) fn natural_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => num_f64(a)
            .partial_cmp(&num_f64(b))
            .unwrap_or(Ordering::Equal),
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        _ => a.to_display().cmp(&b.to_display()),
    }
}

pub(super) fn f_sort(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let Value::Array(items) = v else {
        if let Value::Str(s) = v {
            let mut chars: Vec<char> = s.chars().collect();
            chars.sort();
            return Ok(Value::Str(chars.into_iter().collect()));
        }
        return Err(arg_err(c, a, "expects an Array"));
    };
    match a.lambda {
        Some(l) => {
            let mut err = None;
            let mut keyed: Vec<Value> = items.clone();
            // A simple insertion sort so that lambda errors can be reported.
            let mut sorted: Vec<Value> = vec![];
            for x in keyed.drain(..) {
                let mut pos = sorted.len();
                for (i, y) in sorted.iter().enumerate() {
                    match c.call_lambda(l, vec![x.clone(), y.clone()], a.scope, a.span) {
                        Ok(Value::Int(n)) if n < 0 => {
                            pos = i;
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                }
                if let Some(e) = err.take() {
                    return Err(e);
                }
                sorted.insert(pos, x);
            }
            Ok(Value::Array(sorted))
        }
        None => match ruby_sort(items) {
            Ok(sorted) => Ok(Value::Array(sorted)),
            Err((x, y)) => Err(Flow::Err(c.runtime(
                format!(
                    "comparison of {} with {} failed",
                    crate::eval::functions::stdlib::ruby_class(&x),
                    ruby_cmperr_name(&y)
                ),
                a.span,
            ))),
        },
    }
}

/// Ruby's `<=>` on Puppet values: numbers with numbers, strings with strings, arrays element
/// by element; anything else compares only when equal. `None` is Ruby's nil (not comparable).
pub(in crate::eval) fn ruby_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            num_f64(a).partial_cmp(&num_f64(b))
        }
        (Value::Str(x), Value::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                match ruby_cmp(p, q)? {
                    Ordering::Equal => {}
                    o => return Some(o),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => (a == b).then_some(Ordering::Equal),
    }
}

/// How Ruby's "comparison of X with Y failed" names Y: immediates and floats by `inspect`,
/// other objects by their class.
pub(super) fn ruby_cmperr_name(v: &Value) -> String {
    match v {
        Value::Undef | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Default => {
            crate::eval::functions::stdlib::inspect(v)
        }
        other => crate::eval::functions::stdlib::ruby_class(other).to_string(),
    }
}

/// Ruby's `Array#sort` as Puppet 7 runs it (Ruby's sort is the C library's merge sort: the
/// first half, then the second, then a stable merge), so that a pair that cannot be compared
/// is the same pair Puppet reports. Returns that pair as (left, right).
pub(super) fn ruby_sort(mut items: Vec<Value>) -> Result<Vec<Value>, (Value, Value)> {
    fn msort(v: &mut [Value], tmp: &mut Vec<Value>) -> Result<(), (Value, Value)> {
        let n = v.len();
        if n <= 1 {
            return Ok(());
        }
        let n1 = n / 2;
        msort(&mut v[..n1], tmp)?;
        msort(&mut v[n1..], tmp)?;
        tmp.clear();
        let (mut i, mut j) = (0, n1);
        while i < n1 && j < n {
            match ruby_cmp(&v[i], &v[j]) {
                Some(Ordering::Greater) => {
                    tmp.push(v[j].clone());
                    j += 1;
                }
                Some(_) => {
                    tmp.push(v[i].clone());
                    i += 1;
                }
                None => return Err((v[i].clone(), v[j].clone())),
            }
        }
        tmp.extend(v[i..n1].iter().cloned());
        tmp.extend(v[j..].iter().cloned());
        for (slot, x) in v.iter_mut().zip(tmp.drain(..)) {
            *slot = x;
        }
        Ok(())
    }
    let mut tmp = Vec::with_capacity(items.len());
    msort(&mut items, &mut tmp)?;
    Ok(items)
}

pub(super) fn f_min(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    min_max(c, a, false)
}

pub(super) fn f_max(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    min_max(c, a, true)
}

/// min() and max() as Puppet 7.23's dispatches do: numbers by value; strings as strings,
/// except two that both look like numbers (compared as numbers, with a deprecation
/// warning); other mixes by their string forms (another warning); with a block, by what
/// it returns. One array argument stands for its elements. Ties keep the first.
pub(super) fn min_max(c: &mut Compiler<'_>, a: &mut Args, max: bool) -> R<Value> {
    let items: Vec<Value> = match a.values.as_slice() {
        [Value::Array(x)] => x.clone(),
        other => other.to_vec(),
    };
    let Some(first) = items.first().cloned() else {
        return Err(arg_err(c, a, "Wrong number of arguments need at least one"));
    };
    let numbers = items
        .iter()
        .all(|v| matches!(v, Value::Int(_) | Value::Float(_)));
    let strings = items.iter().all(|v| matches!(v, Value::Str(_)));
    let want = if max {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let mut best = first;
    for x in items.into_iter().skip(1) {
        let ord = match a.lambda {
            Some(l) => {
                let r = c.call_lambda(l, vec![x.clone(), best.clone()], a.scope, a.span)?;
                match r {
                    Value::Int(n) => n.cmp(&0),
                    Value::Float(f) => f.partial_cmp(&0.0).unwrap_or(Ordering::Equal),
                    _ => Ordering::Equal,
                }
            }
            None if numbers => natural_cmp(&x, &best),
            None => {
                let (xs, bs) = (
                    crate::eval::values::ruby_print::ruby_to_s(&x),
                    crate::eval::values::ruby_print::ruby_to_s(&best),
                );
                match (numeric_text(&xs), numeric_text(&bs)) {
                    (Some(p), Some(q)) => {
                        deprecation(c, &a.name, "numeric_coerce_string", "String to Numeric");
                        p.partial_cmp(&q).unwrap_or(Ordering::Equal)
                    }
                    _ => {
                        if !strings {
                            deprecation(c, &a.name, "string_coerce_any", "Any to String");
                        }
                        xs.as_bytes().cmp(bs.as_bytes())
                    }
                }
            }
        };
        if ord == want {
            best = x;
        }
    }
    Ok(best)
}

/// A string min() and max() compare as a number (`-?\d+([._eE]\d+)?`), as Ruby's to_f
/// reads it.
pub(super) fn numeric_text(s: &str) -> Option<f64> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, rest) = match body.find(['.', '_', 'e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !rest.is_none_or(digits) {
        return None;
    }
    s.replace('_', "").parse().ok()
}
