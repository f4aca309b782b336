//! How Ruby prints Puppet values: `to_s` and `inspect`, as ERB templates, `sprintf`'s `%p`
//! and the values Puppet hands to Ruby show them.

use super::value::{format_float, Value};

/// Ruby's `to_s`.
pub fn ruby_to_s(v: &Value) -> String {
    match v {
        Value::Undef => String::new(),
        Value::Str(s) => s.clone(),
        Value::Float(f) => ruby_float(*f),
        Value::Array(_) | Value::Hash(_) => ruby_inspect(v),
        other => other.to_display(),
    }
}

/// Ruby's `Float#to_s`.
fn ruby_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{f:.1}")
    } else {
        format_float(f)
    }
}

/// Ruby's `inspect` (also `Array#to_s` and `Hash#to_s`).
pub fn ruby_inspect(v: &Value) -> String {
    if let Some(text) = super::value::container_text(v, "=>", &ruby_inspect) {
        return text;
    }
    match v {
        Value::Undef => "nil".into(),
        Value::Str(s) => crate::ruby_text::inspect_str(s),
        Value::Float(f) => ruby_float(*f),
        other => other.to_display(),
    }
}
