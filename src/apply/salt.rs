//! `--report-format salt`: a run as Salt's state return.
//!
//! `{"local": {"<type>_|-<title>_|-<name>_|-apply": {"__id__", "name", "result", "changes",
//! "comment", "__run_num__", "start_time", "duration"}}}`, one entry per evaluated resource in
//! evaluation order. `result` is true, false (failed, or skipped because a requisite failed)
//! or null (noop with pending changes); resources a failhard run never reached are left out,
//! as Salt does.

use super::log::Level;
use super::report::{Report, ResourceReport};
use crate::catalog::Catalog;
use crate::graph::refs::{namevar, RefIndex};
use serde_json::{json, Map, Value as Json};

/// `'absent'` -> `absent` (Puppet quotes values in messages; Salt does not).
fn unquote(s: &str) -> String {
    if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        s[1..s.len() - 1].to_string()
    } else {
        s.to_string()
    }
}

/// Time of day (UTC) as Salt prints `start_time`: `09:08:12.903000`.
fn time_of_day(epoch: f64) -> String {
    let micros = (epoch * 1_000_000.0).round() as u64 % 86_400_000_000;
    let secs = micros / 1_000_000;
    format!(
        "{:02}:{:02}:{:02}.{:06}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        micros % 1_000_000
    )
}

fn result(r: &ResourceReport) -> Json {
    match r.status.as_str() {
        "failed" | "skipped" => Json::Bool(false),
        "noop" => Json::Null,
        _ => Json::Bool(true),
    }
}

fn changes(r: &ResourceReport) -> Json {
    let mut out = Map::new();
    for e in &r.events {
        if !matches!(e.status.as_str(), "success" | "noop") {
            continue;
        }
        match &e.property {
            Some(p) => {
                out.insert(
                    p.clone(),
                    json!({
                        "old": e.previous_value.as_deref().map(unquote),
                        "new": e.desired_value.as_deref().map(unquote),
                    }),
                );
            }
            None => {
                out.insert(e.name.clone(), Json::String(e.message.clone()));
            }
        }
    }
    Json::Object(out)
}

fn comment(r: &ResourceReport, report: &Report) -> String {
    let mut lines: Vec<String> = Vec::new();
    match r.status.as_str() {
        // The requisites and run controls explain it (attempts, check_cmd, failhard...).
        _ if !r.comments.is_empty() => {}
        "failed" => lines.extend(
            report
                .logs
                .iter()
                .filter(|l| l.level == Level::Error)
                .filter(|l| {
                    l.source
                        .as_deref()
                        .is_some_and(|s| s == r.path || s.starts_with(&format!("{}/", r.path)))
                })
                .map(|l| l.message.clone()),
        ),
        "skipped" if r.comments.is_empty() => {
            lines.push("One or more requisite failed".into());
        }
        _ => {}
    }
    lines.extend(r.comments.iter().cloned());
    if lines.is_empty() {
        lines.extend(r.events.iter().map(|e| e.message.clone()));
    }
    if lines.is_empty() {
        lines.push("Already in the desired state".into());
    }
    lines.join("\n")
}

/// The Salt return of a run.
pub fn salt_return(report: &Report, catalog: &Catalog) -> Json {
    let index = RefIndex::new(&catalog.resources);
    let mut evaluated: Vec<&ResourceReport> = report
        .resources
        .iter()
        .filter(|r| r.run_num.is_some())
        .collect();
    evaluated.sort_by_key(|r| r.run_num);
    let mut states = Map::new();
    // A sensitive value never names a state (an exec's command is its name).
    let redactor = crate::apply::redact::Redactor::new(catalog);
    for r in evaluated {
        let resource = index.resolve(&r.resource).map(|i| &catalog.resources[i]);
        let (type_name, title) = match resource {
            Some(res) => (res.type_name.to_ascii_lowercase(), res.title.clone()),
            None => (r.resource.clone(), r.resource.clone()),
        };
        let name = match resource {
            Some(res)
                if res
                    .sensitive_parameters
                    .iter()
                    .any(|p| p == namevar(&res.type_name)) =>
            {
                crate::apply::redact::MARK.to_string()
            }
            _ => resource
                .and_then(|res| res.parameters.get(namevar(&res.type_name)))
                .and_then(Json::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| title.clone()),
        };
        let (title, name) = (redactor.text(&title), redactor.text(&name));
        let key = format!("{type_name}_|-{title}_|-{name}_|-apply");
        states.insert(
            key,
            json!({
                "__id__": title,
                "name": name,
                "result": result(r),
                "changes": changes(r),
                "comment": comment(r, report),
                "__run_num__": r.run_num,
                "start_time": r.start_time.map(time_of_day),
                "duration": (r.evaluation_time * 1_000_000.0).round() / 1000.0,
            }),
        );
    }
    json!({ "local": states })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(time_of_day(0.0), "00:00:00.000000");
        assert_eq!(time_of_day(86_400.0 + 3_723.5), "01:02:03.500000");
        assert_eq!(unquote("'absent'"), "absent");
        assert_eq!(unquote("['0']"), "['0']");
    }
}
