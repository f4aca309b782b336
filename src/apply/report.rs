//! The JSON report of a run (`--report FILE`).

use super::log::LogLine;
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EventReport {
    pub property: Option<String>,
    pub name: String,
    /// success, noop or failure.
    pub status: String,
    pub previous_value: Option<String>,
    pub desired_value: Option<String>,
    pub message: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ResourceReport {
    pub resource: String,
    pub path: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// changed, unchanged, noop, failed or skipped.
    pub status: String,
    pub failed_to_restart: bool,
    pub restarted: bool,
    pub events: Vec<EventReport>,
    pub evaluation_time: f64,
    /// Why the resource did or did not run (requisites and run controls), for Salt's
    /// `comment`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<String>,
    /// Evaluation order (Salt's `__run_num__`); none when never evaluated (failhard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_num: Option<usize>,
    /// When its evaluation started, in seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub total: usize,
    pub changed: usize,
    pub unchanged: usize,
    pub noop: usize,
    pub failed: usize,
    pub failed_to_restart: usize,
    pub skipped: usize,
    pub restarted: usize,
    /// Successful changes (property syncs and refreshes): decides exit code 2.
    pub changes: usize,
    pub events: usize,
    pub time: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// changed, unchanged, failed or refused.
    pub status: String,
    pub noop: bool,
    pub summary: Summary,
    pub resources: Vec<ResourceReport>,
    pub logs: Vec<LogLine>,
}

impl Report {
    pub fn refused(noop: bool) -> Report {
        Report {
            status: "refused".into(),
            noop,
            summary: Summary::default(),
            resources: Vec::new(),
            logs: Vec::new(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }
}
