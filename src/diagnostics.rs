//! Diagnostics are data; this module is the one place that draws them.
//!
//! Every stage returns `Diagnostic`s. The CLI renders them with ariadne (colour only on a
//! terminal, and never when `NO_COLOR` is set) or prints them as JSON.

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

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A short stable code (`E0001`-style names are not used; codes read like `syntax`).
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

impl RenderOptions {
    /// Colour when stderr is a terminal and `NO_COLOR` is unset.
    pub fn for_stderr() -> RenderOptions {
        use std::io::IsTerminal;
        RenderOptions {
            color: std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal(),
        }
    }
}

/// Renders one diagnostic as text (ariadne when it has a location in a known file).
pub fn render(diag: &Diagnostic, sources: &SourceMap, opts: RenderOptions) -> String {
    use ariadne::{Config, Label as ALabel, Report, ReportKind, Source};

    let kind = match diag.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
        Severity::Note => ReportKind::Advice,
    };
    let Some((span, file)) = diag.span.and_then(|s| sources.get(s.file).map(|f| (s, f))) else {
        let mut out = format!(
            "{}: {}\n",
            match diag.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            },
            diag.message
        );
        for n in &diag.notes {
            out.push_str(&format!("  = note: {n}\n"));
        }
        if let Some(h) = &diag.help {
            out.push_str(&format!("  = help: {h}\n"));
        }
        return out;
    };
    let name = file.name.clone();
    // ariadne counts characters; convert byte offsets once.
    let to_char = |byte: u32| -> usize {
        let b = (byte as usize).min(file.text.len());
        file.text.get(..b).map_or(b, |s| s.chars().count())
    };
    let (line, col) = file.line_col(span.start as usize);
    let mut report = Report::build(kind, (name.clone(), to_char(span.start)..to_char(span.end)))
        .with_config(Config::default().with_color(opts.color))
        .with_code(diag.code)
        .with_message(format!("{} ({}:{}:{})", diag.message, name, line, col));
    let mut labels: Vec<&Label> = diag
        .labels
        .iter()
        .filter(|l| l.span.file == span.file)
        .collect();
    let main_label;
    if labels.is_empty() {
        main_label = Label {
            span,
            message: String::new(),
        };
        labels.push(&main_label);
    }
    for l in labels {
        let range = to_char(l.span.start)..to_char(l.span.end.max(l.span.start + 1));
        let mut al = ALabel::new((name.clone(), range));
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
    let _ = report
        .finish()
        .write((name.clone(), Source::from(file.text.as_str())), &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}
