//! Puppet's numeric strings: the coercion of a string operand of arithmetic (`to_n`) and
//! number literals (`parse_number`); numbers as floats (`num_f64`).

use super::value::Value;

/// Puppet's numeric string syntax: decimal, `0x` hex, `0` octal, floats.
/// Puppet's `Utils.to_n`, the coercion of a string operand of arithmetic or an index:
/// blanks (spaces, tabs) around the number and between its sign and digits; a hex integer,
/// or a decimal one (octal when it has a leading zero, an error when that has an 8 or 9), or
/// a float with a fraction or an exponent (`e-` only, no `e+`; a zero mantissa before an
/// exponent is no number).
pub(in crate::eval) fn to_n(s: &str) -> Option<Value> {
    let blank = |c: char| c == ' ' || c == '\t';
    let t = s.strip_prefix("::").unwrap_or(s).trim_matches(blank);
    let (neg, body) = match t.strip_prefix(['-', '+']) {
        Some(rest) => (t.starts_with('-'), rest.trim_start_matches(blank)),
        None => (false, t),
    };
    let sign = |v: Value| match v {
        Value::Int(i) if neg => Value::Int(i.wrapping_neg()),
        Value::Float(f) if neg => Value::Float(-f),
        v => v,
    };
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        return i64::from_str_radix(h, 16).ok().map(Value::Int).map(sign);
    }
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let int_end = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let (int, rest) = body.split_at(int_end);
    if !digits(int) {
        return None;
    }
    // Ruby's Integer(): a leading zero is octal, where 8 and 9 are no digits.
    let int_value = |d: &str| {
        if d.len() > 1 && d.starts_with('0') {
            if d.bytes().any(|b| b > b'7') {
                return None;
            }
            i64::from_str_radix(d, 8).ok()
        } else {
            d.parse::<i64>().ok()
        }
    };
    if rest.is_empty() {
        return int_value(int).map(Value::Int).map(sign);
    }
    let (frac, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let frac_ok = frac.is_empty() || frac.strip_prefix('.').is_some_and(digits);
    let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix('-').unwrap_or(e)));
    if !frac_ok || !exp_ok {
        return None;
    }
    let whole = int_value(int)?;
    if whole == 0 && exp.is_some() && frac.trim_start_matches('.').bytes().all(|b| b == b'0') {
        return None;
    }
    match body.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(sign(Value::Float(f))),
        _ => None,
    }
}

pub(in crate::eval) fn parse_number(s: &str) -> Option<Value> {
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let int = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else if body.len() > 1 && body.starts_with('0') && body.chars().all(|c| c.is_ascii_digit()) {
        i64::from_str_radix(&body[1..], 8).ok()
    } else if !body.is_empty() && body.chars().all(|c| c.is_ascii_digit()) {
        body.parse().ok()
    } else {
        None
    };
    if let Some(i) = int {
        return Some(Value::Int(if neg { -i } else { i }));
    }
    if body.chars().next().is_some_and(|c| c.is_ascii_digit())
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
    {
        if let Ok(f) = body.parse::<f64>() {
            return Some(Value::Float(if neg { -f } else { f }));
        }
    }
    None
}

/// A number's value as a float (0 for what is not a number).
pub(in crate::eval) fn num_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => 0.0,
    }
}
