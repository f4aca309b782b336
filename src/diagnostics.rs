//! Diagnostics are data; this module is the one place that draws them.
//!
//! Every stage returns `Diagnostic`s. The CLI renders them with ariadne (colour only on a
//! terminal, and never when `NO_COLOR` is set) or prints them as JSON.

pub mod excerpt;

use crate::span::{SourceMap, Span};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Label {
    #[serde(skip)]
    pub span: Span,
    pub message: String,
}

/// Every diagnostic code, with its area and meaning: the index docs/diagnostics.md shows. A
/// diagnostic's code is one of these (checked when it is made, in debug builds).
pub const CODES: &[(&str, &str, &str)] = &[
    (
        "syntax",
        "Parsing",
        "the source does not parse: where, and what the grammar expected",
    ),
    (
        "not-puppet",
        "Parsing",
        "a file given to `ordo parse` is not Puppet (an ERB template)",
    ),
    (
        "unreadable",
        "Parsing",
        "a file given to `ordo parse` cannot be read",
    ),
    (
        "lexer",
        "Parsing",
        "a lexer warning Puppet also gives (an unknown escape in a string, ...)",
    ),
    (
        "validation",
        "Parsing",
        "Puppet's static checks of a parsed program (`checker4_0`): an error or a warning",
    ),
    (
        "validation-logged",
        "Compile",
        "a validation error Puppet logs before it gives up (no node named)",
    ),
    (
        "validation-giving-up",
        "Compile",
        "Puppet's \"Found N errors. Giving up\" after validation errors",
    ),
    (
        "evaluation",
        "Compile",
        "a compile error: evaluation failed, with Puppet's message",
    ),
    (
        "missing-target",
        "Compile",
        "a relationship names a resource the manifest does not declare (`check` shows every one)",
    ),
    (
        "puppet-warning",
        "Compile",
        "a warning Puppet gives while compiling",
    ),
    (
        "empty-collector",
        "check",
        "a collector that collects nothing",
    ),
    (
        "collector-realizes",
        "check",
        "a collector that realizes virtual resources (and so declares them)",
    ),
    ("catalog-read", "Input", "a catalog file cannot be read"),
    ("catalog-json", "Input", "a catalog file is not JSON"),
    (
        "catalog-shape",
        "Input",
        "a catalog file is JSON of the wrong shape (the path names where)",
    ),
    ("facts-read", "Input", "a facts file cannot be read"),
    ("facts-json", "Input", "a facts file is not valid JSON"),
    ("facts-yaml", "Input", "a facts file is not valid YAML"),
    (
        "facts-shape",
        "Input",
        "a facts file is not a hash of facts",
    ),
    (
        "missing-dependency",
        "Graph",
        "a relationship names a resource that is not in the catalog",
    ),
    (
        "bad-reference",
        "Graph",
        "a relationship value is not a resource reference",
    ),
    (
        "bad-edge",
        "Graph",
        "an edge of the catalog names a resource it does not hold",
    ),
    (
        "invalid-metaparameter",
        "Graph",
        "a metaparameter's value is not valid",
    ),
    (
        "unknown-resource",
        "explain",
        "a resource named on the command line is not in the catalog",
    ),
    (
        "cycle",
        "Graph",
        "a dependency cycle, each edge with where it comes from",
    ),
    (
        "duplicate-declaration",
        "Graph",
        "two resources with the same title or name, both declarations shown",
    ),
    (
        "invalid-catalog",
        "Graph",
        "the catalog fails the runner's validation",
    ),
    (
        "unsupported",
        "check",
        "a resource of a type Ordo cannot apply",
    ),
    (
        "cannot-apply",
        "check",
        "a note: resources of types Ordo has no provider for (`apply` refuses them), by type",
    ),
    (
        "ordo-extension",
        "check",
        "a note: Ordo extension metaparameters are used, which Puppet would reject",
    ),
    (
        "puppet-incompatible",
        "check",
        "an Ordo extension Puppet would reject (`check --puppet-compatible`)",
    ),
    (
        "refresh-ignored",
        "check",
        "a refresh sent to a resource that does nothing on refresh",
    ),
    (
        "refreshonly-unnotified",
        "check",
        "a `refreshonly` exec that nothing notifies",
    ),
];

/// Whether `code` is in [`CODES`].
pub fn is_registered(code: &str) -> bool {
    CODES.iter().any(|(c, _, _)| *c == code)
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A short stable code that reads like `syntax`, one of [`CODES`] (docs/diagnostics.md).
    pub code: &'static str,
    pub message: String,
    /// The main location, if there is one.
    #[serde(skip)]
    pub span: Option<Span>,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        debug_assert!(is_registered(code), "unregistered diagnostic code {code}");
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            span: None,
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn note(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Note,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn with_span(mut self, span: Span) -> Diagnostic {
        self.span = Some(span);
        self
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        if self.span.is_none() {
            self.span = Some(span);
        }
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `(file: x.pp, line: 3, column: 5)` as Puppet appends to its messages.
    pub fn puppet_location(&self, sources: &SourceMap) -> String {
        match self.span.and_then(|s| sources.get(s.file).map(|f| (s, f))) {
            Some((s, f)) => {
                let (line, col) = f.line_col(s.start as usize);
                format!("(file: {}, line: {}, column: {})", f.name, line, col)
            }
            None => String::new(),
        }
    }
}

/// How the CLI shows diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    pub color: bool,
}

/// Renders one diagnostic as text (ariadne when it has a location in a known file).
pub fn render(diag: &Diagnostic, sources: &SourceMap, opts: RenderOptions) -> String {
    use ariadne::{Color, Config, Label as ALabel, Report, ReportKind};

    // One headline for every command: `error[code]: message`, the place in the frame below.
    let (word, color) = match diag.severity {
        Severity::Error => ("error", Color::Red),
        Severity::Warning => ("warning", Color::Yellow),
        Severity::Note => ("note", Color::Cyan),
    };
    let headline = format!("{word}[{}]", diag.code);
    let kind = ReportKind::Custom(&headline, color);
    let message = printable(&diag.message);
    let Some((span, file)) = diag.span.and_then(|s| sources.get(s.file).map(|f| (s, f))) else {
        let mut out = if opts.color {
            format!(
                "\x1b[{}m{headline}:\x1b[0m {message}\n",
                ansi(diag.severity)
            )
        } else {
            format!("{headline}: {message}\n")
        };
        for n in &diag.notes {
            out.push_str(&format!("  = note: {n}\n"));
        }
        if let Some(h) = &diag.help {
            out.push_str(&format!("  = help: {h}\n"));
        }
        return out;
    };
    let name = file.name.clone();
    // ariadne counts characters; convert byte offsets once per label.
    let to_char = |span: Span, byte: u32| -> usize {
        let text = sources.get(span.file).map_or("", |f| f.text.as_str());
        let b = (byte as usize).min(text.len());
        text.get(..b).map_or(b, |s| s.chars().count())
    };
    let mut report = Report::build(
        kind,
        (
            name.clone(),
            to_char(span, span.start)..to_char(span, span.end),
        ),
    )
    .with_config(Config::default().with_color(opts.color))
    .with_message(message);
    // Labels may point into other files (a cycle through modules): each known file is given
    // to ariadne under its name.
    let mut labels: Vec<&Label> = diag
        .labels
        .iter()
        .filter(|l| sources.get(l.span.file).is_some())
        .collect();
    let main_label;
    if labels.is_empty() {
        main_label = Label {
            span,
            message: String::new(),
        };
        labels.push(&main_label);
    }
    let mut files: Vec<(String, String)> = vec![(name.clone(), shown_text(&file.text))];
    for (order, l) in labels.into_iter().enumerate() {
        let Some(f) = sources.get(l.span.file) else {
            continue;
        };
        if !files.iter().any(|(n, _)| *n == f.name) {
            files.push((f.name.clone(), shown_text(&f.text)));
        }
        // A label over several lines (a whole resource) is cut to its first line: ariadne
        // draws nothing for one without a message, and a box around the resource otherwise.
        let end = f
            .text
            .get(l.span.start as usize..l.span.end as usize)
            .and_then(|t| t.find('\n'))
            .map_or(l.span.end, |i| l.span.start + i as u32);
        let end = end.max(l.span.start + 1);
        let range = to_char(l.span, l.span.start)..to_char(l.span, end);
        let mut al = ALabel::new((f.name.clone(), range)).with_order(order as i32);
        if !l.message.is_empty() {
            al = al.with_message(&l.message);
        }
        report = report.with_label(al);
    }
    for n in &diag.notes {
        report = report.with_note(n);
    }
    if let Some(h) = &diag.help {
        report = report.with_help(h);
    }
    let mut buf = Vec::new();
    let _ = report.finish().write(ariadne::sources(files), &mut buf);
    let out = String::from_utf8_lossy(&buf).into_owned();
    if opts.color {
        out
    } else {
        // ariadne colours a custom kind's word whatever its config says; the text it draws
        // holds no other escape (control characters are replaced above).
        without_ansi(&out)
    }
}

/// `text` without its ANSI colour sequences (`ESC [ ... m`).
fn without_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\x1b') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        match rest.find('m') {
            Some(end) => rest = &rest[end + 1..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// The ANSI colour of a severity's word.
fn ansi(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "31",
        Severity::Warning => "33",
        Severity::Note => "36",
    }
}

/// A message with its control characters escaped (`\u{7f}`): a binary file given as a
/// manifest must not send raw control bytes to the terminal.
pub fn printable(text: &str) -> String {
    if !text.chars().any(is_raw_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if is_raw_control(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Source text as a frame shows it: each control character (but line ends and tabs) is
/// replaced by U+FFFD, one character for one, so that the labels' places stay right.
fn shown_text(text: &str) -> String {
    if !text.chars().any(is_raw_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| if is_raw_control(c) { '\u{fffd}' } else { c })
        .collect()
}

fn is_raw_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\n' | '\t' | '\r')
}

/// A diagnostic as JSON for tools: severity, code, message, and the place of the diagnostic
/// and of each label as file, line and column (1-based; columns count characters).
pub fn to_json(diag: &Diagnostic, sources: &SourceMap) -> serde_json::Value {
    use serde_json::json;
    let place = |span: Option<Span>| -> serde_json::Value {
        let Some((s, f)) = span.and_then(|s| sources.get(s.file).map(|f| (s, f))) else {
            return json!({"file": null, "line": null, "column": null, "end_line": null, "end_column": null});
        };
        let (line, column) = f.line_col(s.start as usize);
        let (end_line, end_column) = f.line_col(s.end as usize);
        json!({"file": f.name, "line": line, "column": column, "end_line": end_line, "end_column": end_column})
    };
    let mut out = json!({
        "severity": diag.severity,
        "code": diag.code,
        "message": diag.message,
    });
    let obj = out.as_object_mut().expect("an object");
    if let serde_json::Value::Object(p) = place(diag.span) {
        obj.extend(p);
    }
    let labels: Vec<serde_json::Value> = diag
        .labels
        .iter()
        .map(|l| {
            let mut v = place(Some(l.span));
            v["message"] = json!(l.message);
            v
        })
        .collect();
    obj.insert("labels".into(), json!(labels));
    obj.insert("notes".into(), json!(diag.notes));
    obj.insert("help".into(), json!(diag.help));
    out
}

/// serde_json appends ` at line L column C` to its errors; a diagnostic shows the place
/// itself.
pub fn without_json_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Byte offset of serde_json's (1-based line, byte column) in `text`. Column 0 means "before
/// the first byte of the line"; the column counts bytes already read, so it points one past
/// the offending byte.
pub fn json_byte_offset(text: &str, line: usize, column: usize) -> usize {
    let mut line_start = 0;
    for _ in 1..line.max(1) {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => break,
        }
    }
    let mut at = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The candidate nearest to `name` for a "did you mean" hint, or `None` when none is near:
/// the optimal-string-alignment distance (Damerau-Levenshtein without repeated edits of one
/// substring), case-insensitive, at most 2 and at most a third of the name's length (one
/// edit for names of three to five characters, none for shorter ones, but a difference of
/// case). Ties go to the first candidate in sorted order, so the hint does
/// not depend on the order candidates come in. `name` itself is never suggested.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower: Vec<char> = name.to_lowercase().chars().collect();
    let limit = match lower.len() {
        0..=2 => 0,
        n => (n / 3).clamp(1, 2),
    };
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || c.is_empty() {
            continue;
        }
        let other: Vec<char> = c.to_lowercase().chars().collect();
        if other.len().abs_diff(lower.len()) > limit {
            continue;
        }
        let d = edit_distance(&lower, &other);
        if d > limit {
            continue;
        }
        if best.is_none_or(|(bd, bc)| (d, c) < (bd, bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours, each costing one.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod suggestion_tests {
    use super::nearest;

    #[test]
    fn near_misses_find_their_names() {
        let types = ["file", "package", "service", "notify", "exec", "filebucket"];
        assert_eq!(nearest("fille", types), Some("file"));
        assert_eq!(nearest("Pakage", types), Some("package"));
        assert_eq!(nearest("sevrice", types), Some("service"));
        assert_eq!(
            nearest("contnet", ["content", "ensure", "mode"]),
            Some("content")
        );
        assert_eq!(nearest("ngnix", ["nginx", "apache2"]), Some("nginx"));
    }

    #[test]
    fn far_names_and_the_name_itself_are_not_suggested() {
        assert_eq!(nearest("x", ["y", "file"]), None);
        assert_eq!(nearest("ab", ["AB"]), Some("AB"));
        assert_eq!(nearest("zzzz", ["file", "exec"]), None);
        assert_eq!(nearest("file", ["file"]), None);
        assert_eq!(nearest("abcdef", ["abcxyz"]), None);
    }

    #[test]
    fn ties_are_broken_by_name() {
        assert_eq!(nearest("fie", ["fix", "fib"]), Some("fib"));
        assert_eq!(nearest("fie", ["fib", "fix"]), Some("fib"));
    }
}
