//! Facts files (`--facts`): JSON or YAML, Facter's output or `puppet facts` output (the
//! facts document an agent sends, `{name, values, timestamp, expiration}`).

use crate::diagnostics::{render, Diagnostic, RenderOptions};
use crate::span::{FileId, SourceMap, Span};
use serde_json::Value as Json;
use std::path::Path;

/// A refused facts file: the diagnostic and the text it points into (rendered like a
/// refused catalog, with the file, line and column of the problem).
#[derive(Debug)]
pub struct FactsRefusal {
    pub sources: SourceMap,
    pub diagnostic: Box<Diagnostic>,
}

impl FactsRefusal {
    fn new(name: &str, text: &str, diagnostic: Diagnostic) -> FactsRefusal {
        let mut sources = SourceMap::new();
        sources.add(name, text);
        FactsRefusal {
            sources,
            diagnostic: Box::new(diagnostic),
        }
    }

    pub fn render(&self, opts: RenderOptions) -> String {
        render(&self.diagnostic, &self.sources, opts)
    }
}

/// A problem in facts text: what is wrong, and the byte offset where it is.
#[derive(Debug, PartialEq)]
pub struct FactsError {
    pub code: &'static str,
    pub message: String,
    pub offset: usize,
}

/// Reads a facts file (JSON or YAML), refusing anything that is not a readable mapping of
/// fact names to values.
pub fn read_facts(path: &Path) -> Result<Json, FactsRefusal> {
    let name = path.display().to_string();
    let bytes = crate::input::read(path).map_err(|e| {
        FactsRefusal::new(
            &name,
            "",
            Diagnostic::error(
                "facts-read",
                format!("Could not load facts from {name}: {e}"),
            ),
        )
    })?;
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
            let at = good.len();
            let d = Diagnostic::error(
                "facts-read",
                format!("Could not load facts from {name}: the file is not UTF-8 text (invalid byte at offset {at})"),
            )
            .with_label(Span::new(FileId(0), at, at), "here");
            return Err(FactsRefusal::new(&name, good, d));
        }
    };
    parse_facts(text).map_err(|e| {
        // Of a long line, only the bytes around the problem are drawn (it may be megabytes).
        let line_start = text[..e.offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[e.offset..]
            .find('\n')
            .map_or(text.len(), |i| e.offset + i);
        let (text, offset, place) = if line_end - line_start > 1_000 {
            crate::diagnostics::excerpt::drawn(text, e.offset, &[], false)
        } else {
            (text.to_string(), e.offset, String::new())
        };
        let end = text[offset..]
            .chars()
            .next()
            .map_or(offset, |c| offset + c.len_utf8());
        let d = Diagnostic::error(
            e.code,
            format!("Could not load facts from {name}: {}{place}", e.message),
        )
        .with_label(Span::new(FileId(0), offset, end), "here");
        FactsRefusal::new(&name, &text, d)
    })
}

/// Reads facts from JSON or YAML text (JSON when the text starts with `{` or `[`). `puppet
/// facts` output (`{name, values}`) is unwrapped. The result is always a mapping.
pub fn parse_facts(text: &str) -> Result<Json, FactsError> {
    let Some(first) = text.find(|c: char| !c.is_whitespace()) else {
        return Err(FactsError {
            code: "facts-shape",
            message: "the file is empty; facts must be a mapping of names to values".into(),
            offset: 0,
        });
    };
    let json = text[first..].starts_with(['{', '[']);
    let v: Json = if json {
        serde_json::from_str(text).map_err(|e| FactsError {
            code: "facts-json",
            message: format!(
                "invalid JSON: {}",
                crate::diagnostics::without_json_position(&e.to_string())
            ),
            offset: crate::diagnostics::json_byte_offset(text, e.line(), e.column()),
        })?
    } else {
        yaml::parse(text).map_err(|(offset, m)| FactsError {
            code: "facts-yaml",
            message: format!("invalid YAML: {m}"),
            offset,
        })?
    };
    let start = if json {
        first
    } else {
        yaml::first_content(text)
    };
    match v {
        Json::Object(mut o) if o.contains_key("values") && o.contains_key("name") => {
            match o.remove("values") {
                Some(values @ Json::Object(_)) => Ok(values),
                Some(other) => Err(FactsError {
                    code: "facts-shape",
                    message: format!(
                        "wrong shape at values: `puppet facts` output keeps the facts in a mapping under `values`, not {}",
                        kind(&other)
                    ),
                    offset: if json {
                        json_key_value(text, "values")
                    } else {
                        yaml::key_value(text, "values")
                    }
                    .unwrap_or(start),
                }),
                None => unreachable!("checked above"),
            }
        }
        v @ Json::Object(_) => Ok(v),
        other => Err(FactsError {
            code: "facts-shape",
            message: format!(
                "wrong shape at the top level: facts must be a mapping of names to values, not {}",
                kind(&other)
            ),
            offset: start,
        }),
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a mapping",
    }
}

/// Offset of the value of top-level `key` in a JSON object (text known to be valid JSON).
fn json_key_value(text: &str, key: &str) -> Option<usize> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0, 0usize);
    while i < b.len() {
        match b[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(b.len());
                if depth == 1 && text.get(start..end) == Some(key) {
                    let rest = text.get(end + 1..)?;
                    let colon = rest.trim_start();
                    if let Some(after) = colon.strip_prefix(':') {
                        let value = after.trim_start();
                        return Some(text.len() - value.len());
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A reader for the YAML that fact files use: block mappings and sequences, plain and
/// quoted scalars, `[]`/`{}` and simple flow lists. Written here because facts are the
/// only YAML Ordo reads so far; a full YAML crate is not worth its weight for that.
mod yaml {
    use serde_json::{Map, Value as Json};

    struct Line {
        indent: usize,
        text: String,
        /// Byte offset of the line's first non-blank character.
        offset: usize,
    }

    /// A problem: the byte offset where it is, and what it is.
    pub type Error = (usize, String);

    /// How deep values may nest (blocks and `[...]` lists): as deep as JSON facts may
    /// (serde_json's recursion limit). Deeper input is refused, not walked recursively.
    const MAX_DEPTH: usize = 128;

    fn too_deep(offset: usize) -> Error {
        (
            offset,
            format!("values nested more than {MAX_DEPTH} levels deep"),
        )
    }

    /// Where a line's `[` lists nest past [`MAX_DEPTH`], if they do.
    fn flow_too_deep(text: &str) -> Option<usize> {
        let mut depth = 0usize;
        for (i, c) in text.char_indices() {
            match c {
                '[' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Some(i);
                    }
                }
                ']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        None
    }

    /// The lines that carry content (not blank, not comments, not document markers).
    fn content_lines(text: &str) -> Vec<Line> {
        let mut at = 0;
        let mut lines = Vec::new();
        for raw in text.split_inclusive('\n') {
            let l = raw.trim_end_matches(['\n', '\r']);
            let t = l.trim();
            if !t.is_empty() && !t.starts_with('#') && t != "---" && t != "..." {
                let indent = l.len() - l.trim_start().len();
                lines.push(Line {
                    indent,
                    text: t.to_string(),
                    offset: at + indent,
                });
            }
            at += raw.len();
        }
        lines
    }

    /// Offset of the first content line (where the document starts), or 0.
    pub fn first_content(text: &str) -> usize {
        content_lines(text).first().map_or(0, |l| l.offset)
    }

    /// Offset of the value of top-level `key` (or of the key when the value is a block).
    pub fn key_value(text: &str, key: &str) -> Option<usize> {
        let lines = content_lines(text);
        let top = lines.first()?.indent;
        let line = lines
            .iter()
            .find(|l| l.indent == top && split_key(&l.text).is_some_and(|(k, _)| k == key))?;
        let (_, v) = split_key(&line.text)?;
        Some(if v.is_empty() {
            line.offset
        } else {
            line.offset + line.text.rfind(v.as_str()).unwrap_or(0)
        })
    }

    pub fn parse(text: &str) -> Result<Json, Error> {
        let lines = content_lines(text);
        if lines.is_empty() {
            return Ok(Json::Object(Map::new()));
        }
        if let Some((l, at)) = lines
            .iter()
            .find_map(|l| flow_too_deep(&l.text).map(|at| (l, at)))
        {
            return Err(too_deep(l.offset + at));
        }
        // A document that is one plain scalar (`42`, `hello`).
        if lines.len() == 1
            && !lines[0].text.starts_with('-')
            && split_key(&lines[0].text).is_none()
        {
            return Ok(scalar(&lines[0].text));
        }
        let mut pos = 0;
        let v = block(&lines, &mut pos, lines[0].indent, 1)?;
        if pos < lines.len() {
            return Err((
                lines[pos].offset,
                format!(
                    "unexpected content (wrong indentation?): {}",
                    lines[pos].text
                ),
            ));
        }
        Ok(v)
    }

    fn block(lines: &[Line], pos: &mut usize, indent: usize, depth: usize) -> Result<Json, Error> {
        if depth > MAX_DEPTH {
            return Err(too_deep(lines[*pos].offset));
        }
        if lines[*pos].text.starts_with("- ") || lines[*pos].text == "-" {
            let mut items = vec![];
            while *pos < lines.len()
                && lines[*pos].indent == indent
                && lines[*pos].text.starts_with('-')
            {
                let rest = lines[*pos].text[1..].trim().to_string();
                *pos += 1;
                if rest.is_empty() {
                    if *pos < lines.len() && lines[*pos].indent > indent {
                        items.push(block(lines, pos, lines[*pos].indent, depth + 1)?);
                    } else {
                        items.push(Json::Null);
                    }
                } else if let Some((k, v)) = split_key(&rest) {
                    // A mapping inside a sequence item.
                    let mut m = Map::new();
                    m.insert(k, value_or_block(v, lines, pos, indent + 2, depth + 1)?);
                    if *pos < lines.len()
                        && lines[*pos].indent == indent + 2
                        && !lines[*pos].text.starts_with('-')
                    {
                        if let Json::Object(more) = block(lines, pos, indent + 2, depth)? {
                            m.extend(more);
                        }
                    }
                    items.push(Json::Object(m));
                } else {
                    items.push(scalar(&rest));
                }
            }
            return Ok(Json::Array(items));
        }
        let mut m = Map::new();
        while *pos < lines.len() && lines[*pos].indent == indent {
            let text = lines[*pos].text.clone();
            let Some((k, v)) = split_key(&text) else {
                return Err((
                    lines[*pos].offset,
                    format!("expected 'key: value', got {text}"),
                ));
            };
            *pos += 1;
            let value = value_or_block(v, lines, pos, indent, depth + 1)?;
            m.insert(k, value);
        }
        Ok(Json::Object(m))
    }

    fn value_or_block(
        v: String,
        lines: &[Line],
        pos: &mut usize,
        indent: usize,
        depth: usize,
    ) -> Result<Json, Error> {
        if !v.is_empty() {
            return Ok(scalar(&v));
        }
        if *pos < lines.len()
            && (lines[*pos].indent > indent
                || (lines[*pos].indent == indent && lines[*pos].text.starts_with('-')))
        {
            let ind = lines[*pos].indent;
            return block(lines, pos, ind, depth);
        }
        Ok(Json::Null)
    }

    fn split_key(text: &str) -> Option<(String, String)> {
        let (k, v) = if let Some(rest) = text.strip_prefix('"') {
            let end = rest.find('"')?;
            let after = rest[end + 1..].trim_start().strip_prefix(':')?;
            (rest[..end].to_string(), after)
        } else if let Some(rest) = text.strip_prefix('\'') {
            let end = rest.find('\'')?;
            let after = rest[end + 1..].trim_start().strip_prefix(':')?;
            (rest[..end].to_string(), after)
        } else {
            let i = text
                .find(": ")
                .or_else(|| text.strip_suffix(':').map(|s| s.len()))?;
            (text[..i].to_string(), &text[(i + 1).min(text.len())..])
        };
        Some((k, v.trim().to_string()))
    }

    fn scalar(s: &str) -> Json {
        let s = s.trim();
        if let Some(q) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            return Json::String(
                q.replace("\\\"", "\"")
                    .replace("\\n", "\n")
                    .replace("\\\\", "\\"),
            );
        }
        if let Some(q) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            return Json::String(q.replace("''", "'"));
        }
        if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            if inner.trim().is_empty() {
                return Json::Array(vec![]);
            }
            return Json::Array(inner.split(',').map(scalar).collect());
        }
        if s == "{}" {
            return Json::Object(Map::new());
        }
        match s {
            "~" | "null" | "" => return Json::Null,
            "true" => return Json::Bool(true),
            "false" => return Json::Bool(false),
            _ => {}
        }
        if let Ok(i) = s.parse::<i64>() {
            return Json::from(i);
        }
        if s.contains('.') {
            if let Ok(f) = s.parse::<f64>() {
                if let Some(n) = serde_json::Number::from_f64(f) {
                    return Json::Number(n);
                }
            }
        }
        Json::String(s.to_string())
    }

    #[cfg(test)]
    mod tests {
        use super::parse;
        use serde_json::json;

        #[test]
        fn reads_fact_yaml() {
            let y = "---\nos:\n  family: Debian\n  release:\n    major: '12'\nlist:\n  - a\n  - 2\nempty: []\nflag: true\n";
            assert_eq!(
                parse(y).unwrap(),
                json!({"os": {"family": "Debian", "release": {"major": "12"}}, "list": ["a", 2], "empty": [], "flag": true})
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_facts, FactsError};
    use serde_json::json;

    fn at(text: &str) -> (usize, &'static str) {
        let FactsError { code, offset, .. } = parse_facts(text).expect_err("must be refused");
        (offset, code)
    }

    #[test]
    fn good_facts_and_the_puppet_facts_wrapper() {
        assert_eq!(parse_facts("{\"a\": 1}").unwrap(), json!({"a": 1}));
        assert_eq!(parse_facts("a: 1\n").unwrap(), json!({"a": 1}));
        assert_eq!(
            parse_facts("{\"name\": \"n\", \"values\": {\"a\": 1}}").unwrap(),
            json!({"a": 1})
        );
    }

    #[test]
    fn refusals_point_at_the_problem() {
        assert_eq!(at("{\"a\": 1,}"), (8, "facts-json"));
        assert_eq!(at("a: 1\nb\nc: 2\n"), (5, "facts-yaml"));
        assert_eq!(at("  [1]"), (2, "facts-shape"));
        assert_eq!(at("# c\n---\nhello\n"), (8, "facts-shape"));
        assert_eq!(at("{\"name\": \"n\", \"values\" : 3}"), (25, "facts-shape"));
        assert_eq!(at("name: n\nvalues: [1]\n"), (16, "facts-shape"));
        assert_eq!(at(" \n"), (0, "facts-shape"));
    }
}
