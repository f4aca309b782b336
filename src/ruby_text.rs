//! How Ruby writes values (`Float#to_s`, `String#inspect`, `Hash#inspect`): Puppet's log
//! lines, PN dumps and templates show values as Ruby does.

use serde_json::Value as Json;

/// Ruby's `Float#to_s`.
pub fn ruby_float(f: f64) -> String {
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
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Shortest round-trip digits, then Ruby's choice of notation.
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let decpt = exp + 1;
    let sign = if neg { "-" } else { "" };
    if !(-3..=15).contains(&decpt) {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        let e = decpt - 1;
        format!(
            "{sign}{first}.{rest}e{}{:02}",
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    } else if decpt <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt as usize >= digits.len() {
        format!(
            "{sign}{digits}{}.0",
            "0".repeat(decpt as usize - digits.len())
        )
    } else {
        let (a, b) = digits.split_at(decpt as usize);
        format!("{sign}{a}.{b}")
    }
}

/// Ruby's `String#inspect`.
pub fn inspect_str(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Ruby's `inspect` of a catalog value (`{"k"=>"v", "n"=>2}`; null is `nil`).
pub fn inspect_json(v: &Json) -> String {
    match v {
        Json::Null => "nil".into(),
        Json::String(s) => inspect_str(s),
        Json::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => ruby_float(f),
            _ => n.to_string(),
        },
        Json::Bool(b) => b.to_string(),
        Json::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(inspect_json)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Json::Object(h) => format!(
            "{{{}}}",
            h.iter()
                .map(|(k, v)| format!("{}=>{}", inspect_str(k), inspect_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspect_as_ruby() {
        let v = serde_json::json!({"k": "a\"b", "n": [2, 1.5, null, true]});
        assert_eq!(
            inspect_json(&v),
            r#"{"k"=>"a\"b", "n"=>[2, 1.5, nil, true]}"#
        );
    }
}
