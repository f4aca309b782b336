//! Numbers: `abs`, `round`, `floor`, `ceiling`, and the numeric strings they take.

use super::*;

pub(super) fn numeric_arg(c: &Compiler<'_>, a: &Args) -> R<Value> {
    match first_arg(a) {
        v @ (Value::Int(_) | Value::Float(_)) => Ok(v),
        Value::Str(s) => parse_number(&s).ok_or_else(|| arg_err(c, a, "expects a Numeric value")),
        other => Err(arg_err(
            c,
            a,
            format!("expects a Numeric value, got {}", other.type_name()),
        )),
    }
}

/// The String dispatch of abs(), floor() and ceiling(): Puppet's deprecated conversion,
/// with its warning (once) and its messages for strings that are not numbers.
pub(super) fn numeric_from_string(c: &mut Compiler<'_>, a: &Args) -> R<Option<Value>> {
    let Some(Value::Str(s)) = a.values.first() else {
        return Ok(None);
    };
    let name = a.name.as_str();
    let target = if name == "abs" { "Numeric" } else { "Float" };
    warn_once(
        c,
        format!("{name}_function_numeric_coerce_string"),
        format!(
            "The {name}() function's auto conversion of String to {target} is deprecated - change to convert input before calling"
        ),
    );
    if name == "abs" {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let body = s.strip_prefix('-').unwrap_or(s);
        let v = match body.split_once('.') {
            Some((i, f)) if digits(i) && digits(f) => s.parse::<f64>().ok().map(Value::Float),
            None if digits(body) => s.parse::<i64>().ok().map(Value::Int),
            _ => None,
        };
        return match v {
            Some(v) => Ok(Some(v)),
            None => Err(Flow::Err(c.runtime(
                "abs(): Requires float or integer to work with - was given non decimal string",
                a.span,
            ))),
        };
    }
    match parse_number(s.trim()) {
        Some(v) => Ok(Some(v)),
        None => Err(Flow::Err(c.runtime(
            format!("{name}(): cannot convert given value to a floating point value."),
            a.span,
        ))),
    }
}

pub(super) fn f_abs(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if let Some(v) = numeric_from_string(c, a)? {
        return Ok(match v {
            Value::Int(i) => Value::Int(i.wrapping_abs()),
            Value::Float(f) => Value::Float(f.abs()),
            v => v,
        });
    }
    Ok(match numeric_arg(c, a)? {
        Value::Int(i) => Value::Int(i.wrapping_abs()),
        Value::Float(f) => Value::Float(f.abs()),
        v => v,
    })
}

pub(super) fn f_round(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match numeric_arg(c, a)? {
        Value::Float(f) => Value::Int(f.round() as i64),
        v => v,
    })
}

pub(super) fn f_floor(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = match numeric_from_string(c, a)? {
        Some(Value::Int(i)) => Value::Float(i as f64),
        Some(v) => v,
        None => numeric_arg(c, a)?,
    };
    Ok(match v {
        Value::Float(f) => Value::Int(f.floor() as i64),
        v => v,
    })
}

pub(super) fn f_ceiling(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = match numeric_from_string(c, a)? {
        Some(Value::Int(i)) => Value::Float(i as f64),
        Some(v) => v,
        None => numeric_arg(c, a)?,
    };
    Ok(match v {
        Value::Float(f) => Value::Int(f.ceil() as i64),
        v => v,
    })
}
