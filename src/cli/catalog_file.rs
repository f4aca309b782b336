//! Reading a catalog file, and refusing a malformed one with the place of the problem.
//!
//! A catalog is refused before anything runs when it is not UTF-8, not JSON (the message
//! names the line and column serde_json stopped at), or JSON of the wrong shape (the message
//! also names the JSON path of the value, like `resources[3].parameters`). Problems that are
//! well-formed JSON but wrong as a catalog (duplicate resources, empty titles, dangling
//! references, unknown types) are found later by `apply::validate`, which refuses the whole
//! catalog as well.

use crate::catalog::Catalog;
use crate::diagnostics::excerpt::{drawn, scrub};
use crate::diagnostics::{render, Diagnostic, RenderOptions};
use crate::span::{FileId, SourceMap, Span};
use std::path::Path;

/// A refused catalog: the diagnostic and the text it points into.
#[derive(Debug)]
pub struct CatalogRefusal {
    pub sources: SourceMap,
    pub diagnostic: Box<Diagnostic>,
}

impl CatalogRefusal {
    fn new(name: &str, text: &str, diagnostic: Diagnostic) -> CatalogRefusal {
        let mut sources = SourceMap::new();
        sources.add(name, text);
        CatalogRefusal {
            sources,
            diagnostic: Box::new(diagnostic),
        }
    }

    pub fn render(&self, opts: RenderOptions) -> String {
        render(&self.diagnostic, &self.sources, opts)
    }
}

/// Reads and parses a catalog file.
pub fn read_catalog(path: &Path) -> Result<Catalog, CatalogRefusal> {
    let name = path.display().to_string();
    let bytes = crate::input::read(path).map_err(|e| {
        CatalogRefusal::new(
            &name,
            "",
            Diagnostic::error(
                "catalog-read",
                format!("Could not read catalog {name}: {e}"),
            ),
        )
    })?;
    parse_catalog_bytes(&name, &bytes)
}

/// Parses catalog bytes (`name` is used in messages).
pub fn parse_catalog_bytes(name: &str, bytes: &[u8]) -> Result<Catalog, CatalogRefusal> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_catalog(name, text),
        Err(e) => {
            // Show the text up to the bad byte so the location can be drawn.
            let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
            let at = good.len();
            let d = Diagnostic::error(
                "catalog-json",
                format!("Could not parse catalog {name}: the file is not UTF-8 text (invalid byte at offset {at})"),
            )
            .with_label(Span::new(FileId(0), at, at), "here");
            Err(CatalogRefusal::new(name, good, d))
        }
    }
}

/// Parses catalog text (`name` is used in messages).
pub fn parse_catalog(name: &str, text: &str) -> Result<Catalog, CatalogRefusal> {
    // Puppet's CLI prints lines before the JSON (`Notice: Compiled catalog ...`); skip whole
    // lines until one starts a JSON object or array.
    let start = json_start(text);
    let body = &text[start..];
    if let Some((i, c)) = body.char_indices().find(|(_, c)| !c.is_whitespace()) {
        if c != '{' {
            let at = start + i;
            let d = Diagnostic::error(
                "catalog-shape",
                format!("Could not parse catalog {name}: wrong shape at the top level: a catalog is a JSON object, not this"),
            )
            .with_label(Span::new(FileId(0), at, next_char_end(text, at)), "here");
            return Err(CatalogRefusal::new(name, text, d));
        }
    }
    // The fast path: plain serde_json. Tracking the JSON path of every value costs a tenth
    // of reading a large catalog, so it is only done again to explain a failure.
    if let Ok(c) = serde_json::from_str::<Catalog>(body) {
        return Ok(c);
    }
    let mut de = serde_json::Deserializer::from_str(body);
    let result: Result<Catalog, _> = serde_path_to_error::deserialize(&mut de);
    let (path, inner) = match result {
        // Trailing garbage after the catalog object is as wrong as a syntax error inside it.
        Ok(c) => match de.end() {
            Ok(()) => return Ok(c),
            Err(e) => (String::new(), e),
        },
        Err(e) => (e.path().to_string(), e.into_inner()),
    };
    let offset = start + crate::diagnostics::json_byte_offset(body, inner.line(), inner.column());
    let secrets = sensitive_values(body);
    let detail = capped(
        &scrub(
            &crate::diagnostics::without_json_position(&inner.to_string()),
            &secrets,
        ),
        DETAIL_CAP,
    );
    let (code, message) = match inner.classify() {
        serde_json::error::Category::Data => (
            "catalog-shape",
            format!(
                "Could not parse catalog {name}: wrong shape at {}: {detail}",
                show_path(&path)
            ),
        ),
        _ => (
            "catalog-json",
            format!("Could not parse catalog {name}: invalid JSON: {detail}"),
        ),
    };
    // Text that is not JSON has no readable list of secrets: when it declares any, no
    // string value of it is shown (keys are, to find the place by).
    let mask = secrets.is_empty() && body.contains("\"sensitive_parameters\"");
    let (excerpt, at, place) = drawn(text, offset, &secrets, mask);
    let message = message + &place;
    let (offset, text) = (at, excerpt.as_str());
    let end = next_char_end(text, offset);
    let d = Diagnostic::error(code, message).with_label(Span::new(FileId(0), offset, end), "here");
    Err(CatalogRefusal::new(name, &excerpt, d))
}

/// At most this many bytes of serde's message (which may quote a value) are shown.
const DETAIL_CAP: usize = 200;

/// At most `cap` bytes of `s` (on a character boundary), marked when cut.
fn capped(s: &str, cap: usize) -> String {
    if s.len() <= cap {
        return s.to_string();
    }
    let mut end = cap;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The values of the sensitive parameters of a catalog that is JSON but of the wrong shape
/// (what of it can be read); none from text that is not JSON.
fn sensitive_values(body: &str) -> Vec<String> {
    use serde_json::Value;
    let Ok(doc) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let resources = doc
        .get("resources")
        .or_else(|| doc.get("data").and_then(|d| d.get("resources")))
        .and_then(Value::as_array);
    let mut out = Vec::new();
    for r in resources.into_iter().flatten() {
        let names = r.get("sensitive_parameters").and_then(Value::as_array);
        for name in names.into_iter().flatten().filter_map(Value::as_str) {
            if let Some(v) = r.get("parameters").and_then(|p| p.get(name)) {
                collect_text(v, &mut out);
            }
        }
    }
    out.retain(|s| s.len() >= crate::apply::redact::MIN_LEN);
    out.sort_by_key(|b| std::cmp::Reverse(b.len()));
    out.dedup();
    out
}

fn collect_text(v: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match v {
        // As they appear in the JSON text (escaped) and in serde's messages (not).
        Value::String(s) => {
            out.push(s.clone());
            let escaped = serde_json::to_string(s).unwrap_or_default();
            out.push(escaped.trim_matches('"').to_string());
        }
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|i| collect_text(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_text(i, out)),
        _ => {}
    }
}

/// Offset of the first line that starts (after blanks) with `{` or `[`, or 0.
fn json_start(text: &str) -> usize {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            return at + (line.len() - trimmed.len());
        }
        at += line.len();
    }
    0
}

/// `.` (the whole document) is clearer as "the top level".
fn show_path(path: &str) -> String {
    if path.is_empty() || path == "." {
        "the top level".into()
    } else {
        path.to_string()
    }
}

fn next_char_end(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(at, |c| at + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refuse(text: &str) -> String {
        let r = parse_catalog("c.json", text).expect_err("must be refused");
        let (line, col) = r
            .sources
            .get(FileId(0))
            .unwrap()
            .line_col(r.diagnostic.span.unwrap().start as usize);
        format!("{}:{}: {}", line, col, r.diagnostic.message)
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        assert_eq!(
            refuse("{\n  \"resources\": [,]\n}"),
            "2:17: Could not parse catalog c.json: invalid JSON: expected value"
        );
        assert_eq!(
            refuse("{\"resources\": []"),
            "1:16: Could not parse catalog c.json: invalid JSON: EOF while parsing an object"
        );
        assert_eq!(
            refuse("{\"resources\": []} x"),
            "1:19: Could not parse catalog c.json: invalid JSON: trailing characters"
        );
    }

    #[test]
    fn shape_errors_have_a_json_path() {
        let text = r#"{"resources": [{"type": "Notify", "title": "a"},
            {"type": "Notify", "title": "b", "parameters": "oops"}]}"#;
        let msg = refuse(text);
        assert!(
            msg.starts_with(
                "2:65: Could not parse catalog c.json: wrong shape at resources[1].parameters: invalid type: string \"oops\""
            ),
            "{msg}"
        );
        assert_eq!(
            refuse("{\"edges\": []}"),
            "1:13: Could not parse catalog c.json: wrong shape at the top level: missing field `resources`"
        );
        assert_eq!(
            refuse("[1]"),
            "1:1: Could not parse catalog c.json: wrong shape at the top level: a catalog is a JSON object, not this"
        );
    }

    #[test]
    fn a_prefix_line_is_tolerated_and_positions_stay_right() {
        let text = "Notice: Compiled catalog\n{\"resources\": 3}";
        assert_eq!(
            refuse(text),
            "2:15: Could not parse catalog c.json: wrong shape at resources: invalid type: integer `3`, expected a sequence"
        );
        assert!(parse_catalog("c", "junk\n{\"resources\": []}").is_ok());
    }

    #[test]
    fn not_utf8() {
        let r = parse_catalog_bytes("c.json", b"{\"resources\": [\xff]}").unwrap_err();
        assert_eq!(r.diagnostic.span.unwrap().start, 15);
        assert!(r.diagnostic.message.contains("not UTF-8"));
    }
}
