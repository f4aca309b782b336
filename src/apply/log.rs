//! Log lines of a run, and the two ways to print them.
//!
//! `puppet` prints exactly Puppet's lines (`Notice: /Stage[main]/Main/Notify[a]/message: ...`);
//! `human` is for people: short resource names, colour on a terminal, a summary at the end.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Alert,
    Critical,
    Emergency,
}

impl Level {
    pub fn puppet_name(self) -> &'static str {
        match self {
            Level::Debug => "Debug",
            Level::Info => "Info",
            Level::Notice => "Notice",
            Level::Warning => "Warning",
            Level::Error => "Error",
            Level::Alert => "Alert",
            Level::Critical => "Critical",
            Level::Emergency => "Emergency",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogLine {
    pub level: Level,
    /// What the line is about: a resource path, optionally with `/property`.
    pub source: Option<String>,
    pub message: String,
    /// For an error that refuses the catalog: its diagnostic code and the declaring
    /// resource's place, for a code frame (not in the report).
    #[serde(skip)]
    pub refusal: Option<Box<Refusal>>,
}

/// What an error that refuses a catalog is, and where the resource it is about was declared.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// One of `diagnostics::CODES`.
    pub code: &'static str,
    pub file: Option<std::sync::Arc<str>>,
    pub line: Option<u32>,
}

impl LogLine {
    pub fn new(level: Level, source: Option<String>, message: impl Into<String>) -> LogLine {
        LogLine {
            level,
            source,
            message: message.into(),
            refusal: None,
        }
    }

    /// An error that refuses the catalog, about a resource declared at `node`'s place.
    pub fn refusal(
        code: &'static str,
        message: impl Into<String>,
        node: Option<&crate::graph::Node>,
    ) -> LogLine {
        let mut l = LogLine::new(Level::Error, None, message);
        l.refusal = Some(Box::new(Refusal {
            code,
            file: node.and_then(|n| n.file.clone()),
            line: node.and_then(|n| n.line),
        }));
        l
    }

    /// `Notice: /Stage[main]/Main/Notify[a]/message: defined 'message' as 'a'`.
    /// (Without the message's last line break, as Puppet's console writes it with `puts`.)
    pub fn puppet(&self) -> String {
        let message = self.shown();
        match &self.source {
            Some(s) => format!("{}: {}: {message}", self.level.puppet_name(), s),
            None => format!("{}: {message}", self.level.puppet_name()),
        }
    }

    /// The message as a console shows it: without its last line break.
    fn shown(&self) -> &str {
        self.message.strip_suffix('\n').unwrap_or(&self.message)
    }

    /// A shorter line for people: `Notify[a] message: defined 'message' as 'a'`.
    pub fn human(&self, color: bool) -> String {
        let (tag, code) = match self.level {
            Level::Debug => ("debug", "2"),
            Level::Info => ("info", "2"),
            Level::Notice => ("notice", "36"),
            Level::Warning => ("warning", "33"),
            Level::Error => ("error", "31"),
            Level::Alert => ("alert", "31"),
            Level::Critical => ("critical", "31"),
            Level::Emergency => ("emergency", "31"),
        };
        let tag = if color {
            format!("\x1b[{code}m{tag}\x1b[0m")
        } else {
            tag.to_string()
        };
        let message = self.shown();
        match &self.source {
            Some(s) => format!("{tag}: {}: {message}", short_source(s)),
            None => format!("{tag}: {message}"),
        }
    }
}

/// `/Stage[main]/Main/D[x]/Notify[a]/message` -> `Notify[a] message`.
pub fn short_source(s: &str) -> String {
    if !s.starts_with('/') {
        return s.to_string();
    }
    // The last segment that looks like a reference, then a property if any.
    let mut depth = 0usize;
    let mut segments = Vec::new();
    let mut cur = String::new();
    for ch in s[1..].chars() {
        match ch {
            '[' => {
                depth += 1;
                cur.push(ch)
            }
            ']' => {
                depth = depth.saturating_sub(1);
                cur.push(ch)
            }
            '/' if depth == 0 => segments.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    segments.push(cur);
    match segments.as_slice() {
        [.., r, p] if r.ends_with(']') && !p.ends_with(']') => format!("{r} {p}"),
        [.., r] => r.clone(),
        [] => s.to_string(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LogFormat {
    Puppet,
    #[default]
    Human,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s {
            "puppet" => Ok(LogFormat::Puppet),
            "human" => Ok(LogFormat::Human),
            _ => Err(format!(
                "unknown log format '{s}' (expected puppet or human)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let l = LogLine::new(
            Level::Notice,
            Some("/Stage[main]/Main/D[x]/File[/a/b]/ensure".into()),
            "created",
        );
        assert_eq!(
            l.puppet(),
            "Notice: /Stage[main]/Main/D[x]/File[/a/b]/ensure: created"
        );
        assert_eq!(l.human(false), "notice: File[/a/b] ensure: created");
        assert_eq!(short_source("Class[Main]"), "Class[Main]");
        assert_eq!(short_source("/Stage[main]/Main/Exec[r]"), "Exec[r]");
    }
}
