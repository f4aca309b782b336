//! YAML in and out, as Hiera and stdlib's `parseyaml`/`to_yaml` need it.
//!
//! Parsing uses `yaml-rust2` (pure Rust, keeps mapping order); documents become JSON values,
//! which is what Puppet data is. Emitting follows Ruby's Psych layout (`---` header,
//! sequences inside mappings not indented, strings quoted only when they would read back as
//! something else) because `to_yaml` output lands in catalogs.

use serde_json::{Map, Value as Json};
use yaml_rust2::{Yaml, YamlLoader};

/// Parses the first document; an empty text is `null` (Hiera treats it as no data).
pub fn parse(text: &str) -> Result<Json, String> {
    // The loader copies what an alias names: count first what the copies would make
    // ("billion laughs": ten lines that expand to 10^9 values).
    let mut count = Expanded::default();
    yaml_rust2::parser::Parser::new_from_str(text)
        .load(&mut count, false)
        .map_err(|e| e.to_string())?;
    if count.too_many {
        return Err(format!(
            "YAML whose aliases expand to more than {MAX_NODES} values is not supported"
        ));
    }
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    let Some(doc) = docs.first() else {
        return Ok(Json::Null);
    };
    if depth(doc) > MAX_DEPTH {
        return Err(format!(
            "stack level too deep: YAML nested more than {MAX_DEPTH} levels deep is not supported"
        ));
    }
    Ok(to_json(doc))
}

/// Data nested deeper than this is refused (later stages walk values recursively).
pub const MAX_DEPTH: usize = 1000;

/// Values (scalars, sequences, mappings) a document may hold once its aliases are expanded,
/// as the compile's bound on one array or hash (`limits::MAX_VALUE_NODES`).
const MAX_NODES: u64 = 1_000_000;

/// Counts the values of the first document with its aliases expanded, from the parser's
/// events, without making them.
#[derive(Default)]
struct Expanded {
    /// The expanded size of each anchored node (by anchor id).
    sizes: std::collections::HashMap<usize, u64>,
    /// The open sequences and mappings: their anchor and the size of what they hold so far.
    open: Vec<(usize, u64)>,
    total: u64,
    too_many: bool,
}

impl Expanded {
    fn add(&mut self, n: u64) {
        let into = match self.open.last_mut() {
            Some((_, held)) => held,
            None => &mut self.total,
        };
        *into = into.saturating_add(n);
        self.too_many |= *into > MAX_NODES;
    }
}

impl yaml_rust2::parser::MarkedEventReceiver for Expanded {
    fn on_event(&mut self, ev: yaml_rust2::Event, _mark: yaml_rust2::scanner::Marker) {
        use yaml_rust2::Event;
        if self.too_many {
            return;
        }
        match ev {
            Event::Scalar(_, _, anchor, _) => {
                if anchor > 0 {
                    self.sizes.insert(anchor, 1);
                }
                self.add(1);
            }
            Event::Alias(id) => self.add(self.sizes.get(&id).copied().unwrap_or(1)),
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                self.open.push((anchor, 1));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, size)) = self.open.pop() {
                    if anchor > 0 {
                        self.sizes.insert(anchor, size);
                    }
                    self.add(size);
                }
            }
            _ => {}
        }
    }
}

/// How deeply a document nests, measured without recursion.
fn depth(doc: &Yaml) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(doc, 1usize)];
    while let Some((y, d)) = stack.pop() {
        deepest = deepest.max(d);
        if d > MAX_DEPTH {
            break;
        }
        match y {
            Yaml::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Yaml::Hash(h) => stack.extend(h.iter().flat_map(|(k, v)| [(k, d + 1), (v, d + 1)])),
            _ => {}
        }
    }
    deepest
}

fn to_json(y: &Yaml) -> Json {
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(s.clone())),
        Yaml::Integer(i) => Json::from(*i),
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Boolean(b) => Json::Bool(*b),
        Yaml::Array(a) => Json::Array(a.iter().map(to_json).collect()),
        Yaml::Hash(h) => {
            let mut m = Map::new();
            for (k, v) in h {
                let key = match k {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Null => String::new(),
                    other => format!("{other:?}"),
                };
                m.insert(key, to_json(v));
            }
            Json::Object(m)
        }
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Json::Null,
    }
}

/// Whether a plain scalar would read back as something other than this string.
fn needs_quotes(s: &str) -> bool {
    if s.is_empty() || s.trim() != s {
        return true;
    }
    let lower = s.to_lowercase();
    if matches!(
        lower.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    ) || s.parse::<f64>().is_ok()
        || s.starts_with(|c: char| "!&*-?:,[]{}#|>@`\"'%".contains(c))
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
    {
        return true;
    }
    s.chars().any(|c| c.is_control())
}

fn scalar(s: &str) -> String {
    if s.contains('\n') || s.chars().any(|c| c.is_control() && c != '\n') {
        return serde_json::to_string(s).unwrap_or_default();
    }
    // Psych's visit_String: `y`/`n` and strings that start with a non-word character and
    // hold no `"` are double-quoted; then what would read back as another type is
    // single-quoted (libyaml also single-quotes what cannot be plain).
    let word = |c: char| c.is_alphanumeric() || c == '_';
    if matches!(s, "y" | "Y" | "n" | "N") || (s.starts_with(|c: char| !word(c)) && !s.contains('"'))
    {
        return format!("\"{}\"", s.replace('\\', "\\\\"));
    }
    if needs_quotes(s) {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        s.to_string()
    }
}

fn emit(v: &Json, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Json::Object(m) if !m.is_empty() => {
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(&pad);
                }
                out.push_str(&scalar(k));
                out.push(':');
                match x {
                    Json::Object(inner) if !inner.is_empty() => {
                        out.push('\n');
                        out.push_str(&" ".repeat(indent + 2));
                        emit(x, indent + 2, out);
                    }
                    Json::Array(inner) if !inner.is_empty() => {
                        out.push('\n');
                        out.push_str(&pad);
                        emit(x, indent, out);
                    }
                    // Psych writes a null as nothing, with no blank after the `:`.
                    Json::Null => out.push('\n'),
                    _ => {
                        out.push(' ');
                        emit(x, indent, out);
                    }
                }
            }
        }
        Json::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(&pad);
                }
                if x.is_null() {
                    out.push_str("-\n");
                    continue;
                }
                out.push_str("- ");
                emit(x, indent + 2, out);
            }
        }
        Json::Object(_) => out.push_str("{}\n"),
        Json::Array(_) => out.push_str("[]\n"),
        Json::Null => out.push('\n'),
        Json::Bool(b) => {
            out.push_str(&b.to_string());
            out.push('\n');
        }
        Json::Number(n) => {
            out.push_str(&n.to_string());
            out.push('\n');
        }
        Json::String(s) => {
            out.push_str(&scalar(s));
            out.push('\n');
        }
    }
}

/// Ruby's `value.to_yaml`.
pub fn to_yaml(v: &Json) -> String {
    let mut out = String::from("---");
    match v {
        Json::Object(m) if !m.is_empty() => out.push('\n'),
        Json::Array(a) if !a.is_empty() => out.push('\n'),
        Json::Null => {}
        _ => out.push(' '),
    }
    emit(v, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn psych_layout() {
        // `ruby -ryaml -e 'puts({"a"=>[1,true],"b"=>{"c"=>"x y","d"=>"1"}}.to_yaml)'`
        assert_eq!(
            to_yaml(&json!({"a": [1, true], "b": {"c": "x y", "d": "1"}})),
            "---\na:\n- 1\n- true\nb:\n  c: x y\n  d: '1'\n"
        );
        assert_eq!(to_yaml(&json!("x")), "--- x\n");
        assert_eq!(to_yaml(&json!([{"a": 1, "b": 2}])), "---\n- a: 1\n  b: 2\n");
    }

    #[test]
    fn parses_in_order() {
        let v = parse("b: 1\na: [x, 2.5]\nc: ~\n").unwrap_or_default();
        assert_eq!(v, json!({"b": 1, "a": ["x", 2.5], "c": null}));
        assert_eq!(
            v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["b".to_string(), "a".into(), "c".into()])
        );
    }
}
