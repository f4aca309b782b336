//! Sensitive values never appear in logs or reports.
//!
//! Puppet redacts by structure: a change of a sensitive property logs `changed [redacted] to
//! [redacted]`, an exec with a sensitive command says `[command redacted]` and `[output
//! redacted]`; the transaction and the providers do the same. This module is the net under
//! that: every log line and every report field is scrubbed of the values of the catalog's
//! `sensitive_parameters`, whatever code wrote them (an error message quoting a value, a
//! command's output echoing it). Values shorter than `MIN_LEN` are not scrubbed: replacing
//! every `1` in a log would destroy it, and the structural redaction still covers them.

use super::log::LogLine;
use super::RunResult;
use crate::catalog::Catalog;
use serde_json::Value as Json;

pub const MIN_LEN: usize = 4;
pub const MARK: &str = crate::diagnostics::excerpt::REDACTED;

#[derive(Debug, Default)]
pub struct Redactor {
    /// Longest first, so a secret containing another is replaced whole.
    secrets: Vec<String>,
}

impl Redactor {
    pub fn new(catalog: &Catalog) -> Redactor {
        let mut secrets = Vec::new();
        for r in &catalog.resources {
            for name in &r.sensitive_parameters {
                if let Some(v) = r.parameters.get(name) {
                    collect(v, &mut secrets);
                    // A command's `environment`: the value of each `NAME=value` too, which
                    // the command may echo (Puppet only warns that it cannot redact it).
                    if name == "environment" {
                        let mut settings = Vec::new();
                        collect(v, &mut settings);
                        secrets.extend(
                            settings
                                .iter()
                                .filter_map(|s| s.split_once('=').map(|(_, v)| v.to_string())),
                        );
                    }
                }
            }
        }
        secrets.retain(|s| s.len() >= MIN_LEN);
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        secrets.dedup();
        Redactor { secrets }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    pub fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MARK);
            }
        }
        out
    }

    fn text_mut(&self, s: &mut String) {
        if self.secrets.iter().any(|x| s.contains(x.as_str())) {
            *s = self.text(s);
        }
    }

    pub fn line(&self, l: &LogLine) -> LogLine {
        let mut l = l.clone();
        self.line_mut(&mut l);
        l
    }

    fn line_mut(&self, l: &mut LogLine) {
        self.text_mut(&mut l.message);
        if let Some(s) = &mut l.source {
            self.text_mut(s);
        }
    }

    /// Scrubs the log and the report of a run.
    pub fn result(&self, r: &mut RunResult) {
        if self.is_empty() {
            return;
        }
        r.log.iter_mut().for_each(|l| self.line_mut(l));
        r.report.logs.iter_mut().for_each(|l| self.line_mut(l));
        for res in &mut r.report.resources {
            for e in &mut res.events {
                self.text_mut(&mut e.message);
                for v in [&mut e.previous_value, &mut e.desired_value]
                    .into_iter()
                    .flatten()
                {
                    self.text_mut(v);
                }
            }
        }
    }
}

/// The text forms of a value: strings, numbers, every element of arrays and hashes, and the
/// lines of a multi-line string (a line of a secret file is a secret).
fn collect(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::String(s) => {
            out.push(s.clone());
            if s.contains('\n') {
                out.extend(
                    s.lines()
                        .map(str::trim)
                        .filter(|l| l.len() >= 2 * MIN_LEN)
                        .map(str::to_string),
                );
            }
        }
        Json::Number(n) => out.push(n.to_string()),
        Json::Array(items) => items.iter().for_each(|i| collect(i, out)),
        Json::Object(map) => map.values().for_each(|i| collect(i, out)),
        Json::Bool(_) | Json::Null => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_sensitive_values_only() {
        let c: Catalog = serde_json::from_value(serde_json::json!({
            "resources": [
                {"type": "Exec", "title": "x", "parameters": {"command": "echo hunter22", "cwd": "/tmp"},
                 "sensitive_parameters": ["command"]},
                {"type": "File", "title": "/f", "parameters": {"content": "a\nline-of-secret\n", "mode": "1"},
                 "sensitive_parameters": ["content", "mode"]}
            ]
        }))
        .unwrap();
        let r = Redactor::new(&c);
        assert_eq!(
            r.text("ran 'echo hunter22' in /tmp"),
            "ran '[redacted]' in /tmp"
        );
        assert_eq!(r.text("got line-of-secret back"), "got [redacted] back");
        // Too short to scrub without destroying the log.
        assert_eq!(r.text("mode 1"), "mode 1");
    }
}
