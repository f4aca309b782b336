//! `notify`: logs its message every run (it is never in sync).

use super::{Change, ChangeResult, Context, Provider};
use crate::apply::atomic::Staged;
use crate::apply::log::Level;
use crate::apply::stage::StagePaths;
use crate::catalog::Resource;
use serde_json::Value as Json;

pub const ATTRIBUTES: &[&str] = &["name", "message", "withpath"];

pub struct Notify {
    message: Json,
    level: Level,
    withpath: bool,
}

/// Puppet's loglevel names to our levels.
pub fn level_of(r: &Resource) -> Level {
    match super::param_str(r, "loglevel").as_deref() {
        Some("debug") => Level::Debug,
        Some("info" | "verbose") => Level::Info,
        Some("warning") => Level::Warning,
        Some("err") => Level::Error,
        Some("alert") => Level::Alert,
        Some("crit") => Level::Critical,
        Some("emerg") => Level::Emergency,
        _ => Level::Notice,
    }
}

impl Notify {
    pub fn new(r: &Resource) -> Result<Notify, String> {
        let message = r
            .parameters
            .get("message")
            .cloned()
            .or_else(|| r.parameters.get("name").cloned())
            .unwrap_or_else(|| Json::String(r.title.clone()));
        Ok(Notify {
            message,
            level: level_of(r),
            withpath: match crate::graph::refs::param(r, "withpath") {
                None | Some(Json::Null) => false,
                Some(Json::Bool(b)) => *b,
                Some(Json::String(s)) if s == "true" || s == "false" => s == "true",
                Some(other) => {
                    let shown = match other {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let detail =
                        format!("Invalid value \"{shown}\". Valid values are true, false.");
                    return Err(super::param_failure(r, "withpath", detail));
                }
            },
        })
    }
}

/// The property's `should`: the first value of an array (`message` does not match arrays
/// as a whole); `None` when that is false or absent, which Puppet does not sync.
fn should(v: &Json) -> Option<&Json> {
    let v = match v {
        Json::Array(items) => items.first()?,
        other => other,
    };
    (!matches!(v, Json::Null | Json::Bool(false))).then_some(v)
}

/// The message as the log line shows it: Ruby's `to_s` (strings bare, other values as
/// Ruby's `inspect`: `{"k"=>"v", "n"=>2}`).
fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => crate::ruby_text::inspect_json(other),
    }
}

/// The value in the change message (`defined 'message' as ...`): Puppet's parameter format,
/// `%p` for strings and `%#p` for collections (a hash one entry per line).
fn display(v: &Json, indent: usize) -> String {
    match v {
        Json::String(s) if s.contains('\'') => format!("{s:?}"),
        Json::String(s) => format!("'{s}'"),
        Json::Null => "undef".into(),
        Json::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|x| display(x, indent))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Json::Object(map) if map.is_empty() => "{}".into(),
        Json::Object(map) => {
            let pad = "  ".repeat(indent + 1);
            let entries: Vec<String> = map
                .iter()
                .map(|(k, x)| format!("{pad}'{k}' => {}", display(x, indent + 1)))
                .collect();
            format!("{{\n{}\n{}}}", entries.join(",\n"), "  ".repeat(indent))
        }
        other => other.to_string(),
    }
}

impl Provider for Notify {
    /// A message is only a log line: nothing to stage, nothing read.
    fn stage_paths(&self, _modulepath: &[std::path::PathBuf]) -> Option<StagePaths> {
        Some(StagePaths::default())
    }

    fn stage(&mut self, cx: &mut Context) -> Option<(Vec<Change>, Option<Staged>)> {
        self.check_apply(cx, true).ok().map(|c| (c, None))
    }

    fn check_apply(&mut self, cx: &mut Context, apply: bool) -> Result<Vec<Change>, String> {
        let Some(message) = should(&self.message) else {
            return Ok(vec![]);
        };
        let desired = display(message, 0);
        let result = if apply {
            // Puppet logs the message with the path of the `message` property.
            let source = self.withpath.then(|| format!("{}/message", cx.path));
            cx.log(self.level, source, text(message));
            ChangeResult::Synced(format!("defined 'message' as {desired}"))
        } else {
            ChangeResult::Noop
        };
        Ok(vec![Change {
            property: "message".into(),
            event: "message_changed".into(),
            previous: "'absent'".into(),
            desired,
            result,
        }])
    }
}
