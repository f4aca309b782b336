//! `notify`: logs its message every run (it is never in sync).

use super::{show, Change, ChangeResult, Context, Provider};
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
        Some("debug" | "info" | "verbose") => Level::Info,
        Some("warning") => Level::Warning,
        Some("err" | "alert" | "emerg" | "crit") => Level::Error,
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
            withpath: super::param_bool(r, "withpath", false)?,
        })
    }
}

/// A value as Puppet prints it in a log line (strings bare).
fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Array(items) => format!(
            "[{}]",
            items.iter().map(text).collect::<Vec<_>>().join(", ")
        ),
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
        let desired = show(&self.message);
        let result = if apply {
            // Puppet logs the message with the path of the `message` property.
            let source = self.withpath.then(|| format!("{}/message", cx.path));
            cx.log(self.level, source, text(&self.message));
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
