//! Salt's requisites and run controls in the runner (see `graph::requisites` for the catalog
//! part and docs/extensions.md for the semantics).
//!
//! The transaction asks this module three things about a resource:
//! - before applying it, whether its requisites let it run ([`RunState::decide`]): a
//!   failed `_any` group skips it like a failed dependency; an unmet `onfail`/`onchanges`
//!   leaves it unrun (result true, no changes); `prereq` is settled by a dry run of the
//!   targets ([`RunState::prereqs`]);
//! - how to apply it ([`controlled_apply`]): `onlyif`/`unless` first (not on exec, where
//!   the provider keeps Puppet's meaning), then up to `retry.attempts` attempts, each
//!   judged by its own result or by `check_cmd`;
//! - after it, whether a failure ends the run (`failhard`).
//!
//! `listen` is settled at the end of the run by the transaction.

use super::providers::command::{self, RunSpec};
use super::providers::{param_bool, Change, ChangeResult, Context, Provider};
use crate::apply::log::Level;
use crate::catalog::{Catalog, Resource};
use crate::fxhash::FxHashMap as HashMap;
use crate::graph::refs::RefIndex;
use crate::graph::requisites::{resolve, SOFT_PARAMS};
use crate::graph::{Graph, Origin, Vertex};
use serde_json::Value as Json;
use std::time::Duration;

/// `retry => { attempts, until, interval, splay }` (Salt's defaults: 2, true, 30, 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Retry {
    pub attempts: u32,
    pub until: bool,
    pub interval: f64,
    pub splay: f64,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            attempts: 2,
            until: true,
            interval: 30.0,
            splay: 0.0,
        }
    }
}

/// The run controls of one resource.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Controls {
    /// Salt's `onlyif` (every command must succeed); empty on exec.
    pub onlyif: Vec<String>,
    /// Salt's `unless` (skipped when every command succeeds); empty on exec.
    pub unless: Vec<String>,
    pub check_cmd: Vec<String>,
    pub retry: Option<Retry>,
    pub failhard: Option<bool>,
}

fn commands(r: &Resource, name: &str) -> Vec<String> {
    match r.parameters.get(name) {
        Some(Json::String(s)) => vec![s.clone()],
        Some(Json::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// A number of a retry hash; an invalid value falls back to the default, as in Salt.
fn number(map: &serde_json::Map<String, Json>, key: &str, default: f64) -> f64 {
    match map.get(key) {
        Some(Json::Number(n)) => n.as_f64().filter(|x| *x >= 0.0).unwrap_or(default),
        Some(Json::String(s)) => s
            .parse()
            .ok()
            .filter(|x: &f64| *x >= 0.0)
            .unwrap_or(default),
        _ => default,
    }
}

impl Controls {
    pub fn of(r: &Resource) -> Controls {
        let exec = r.type_name.eq_ignore_ascii_case("exec");
        let retry = match r.parameters.get("retry") {
            Some(Json::Bool(true)) => Some(Retry::default()),
            Some(Json::Object(map)) => {
                let d = Retry::default();
                let attempts = number(map, "attempts", f64::from(d.attempts));
                Some(Retry {
                    attempts: if attempts >= 1.0 {
                        attempts as u32
                    } else {
                        d.attempts
                    },
                    until: match map.get("until") {
                        Some(Json::Bool(b)) => *b,
                        _ => d.until,
                    },
                    interval: number(map, "interval", d.interval),
                    splay: number(map, "splay", d.splay),
                })
            }
            _ => None,
        };
        Controls {
            onlyif: if exec {
                Vec::new()
            } else {
                commands(r, "onlyif")
            },
            unless: if exec {
                Vec::new()
            } else {
                commands(r, "unless")
            },
            check_cmd: commands(r, "check_cmd"),
            retry,
            failhard: r
                .parameters
                .contains_key("failhard")
                .then(|| param_bool(r, "failhard", false).unwrap_or(false)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.onlyif.is_empty()
            && self.unless.is_empty()
            && self.check_cmd.is_empty()
            && self.retry.is_none()
    }
}

/// What applying a resource under its controls produced.
pub struct Controlled {
    pub outcome: Result<Vec<Change>, String>,
    /// Lines for the Salt `comment` (onlyif/unless verdicts, attempts, check_cmd).
    pub comments: Vec<String>,
}

/// Runs a check command through `/bin/sh -c` (as Salt's `cmd.retcode` with
/// `python_shell=True`): success is exit status 0.
fn succeeds(cmd: &str) -> bool {
    command::run(&RunSpec {
        argv: command::shell_argv(cmd),
        timeout: Some(Duration::from_secs(300)),
        ..RunSpec::default()
    })
    .is_ok_and(|o| o.code == 0)
}

/// The result of one attempt: no error and no failed change.
fn attempt_result(outcome: &Result<Vec<Change>, String>) -> bool {
    match outcome {
        Ok(changes) => !changes
            .iter()
            .any(|c| matches!(c.result, ChangeResult::Failed(_))),
        Err(_) => false,
    }
}

/// A one-line comment for an attempt's outcome.
fn describe(outcome: &Result<Vec<Change>, String>) -> String {
    match outcome {
        Err(e) => e.clone(),
        Ok(changes) if changes.is_empty() => "No changes".into(),
        Ok(changes) => changes
            .iter()
            .map(|c| match &c.result {
                ChangeResult::Synced(m) => format!("{}: {m}", c.property),
                ChangeResult::Noop => format!("{}: would change", c.property),
                ChangeResult::Failed(m) => format!("{}: {m}", c.property),
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// A pseudo-random fraction in [0, 1) for splay (no dependency for one number).
fn jitter() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    f64::from(nanos % 1_000_000) / 1_000_000.0
}

/// Applies (or checks, when `apply` is false) one resource under its run controls.
pub fn controlled_apply(
    c: &Controls,
    p: &mut dyn Provider,
    cx: &mut Context,
    apply: bool,
) -> Controlled {
    let mut comments = Vec::new();
    if let Some(cmd) = c.onlyif.iter().find(|cmd| !succeeds(cmd)) {
        let m = format!("onlyif condition is false: '{cmd}' failed; not run");
        cx.log(Level::Info, Some(cx.path.to_string()), m.clone());
        comments.push(m);
        return Controlled {
            outcome: Ok(Vec::new()),
            comments,
        };
    }
    if !c.unless.is_empty() && c.unless.iter().all(|cmd| succeeds(cmd)) {
        let m = "unless condition is true: every command succeeded; not run".to_string();
        cx.log(Level::Info, Some(cx.path.to_string()), m.clone());
        comments.push(m);
        return Controlled {
            outcome: Ok(Vec::new()),
            comments,
        };
    }
    let retry = c.retry.clone().filter(|_| apply);
    let attempts = retry.as_ref().map_or(1, |r| r.attempts.max(1));
    let mut attempt_notes = Vec::new();
    let mut k = 1;
    loop {
        let mut outcome = p.check_apply(cx, apply);
        let mut check_note = None;
        if apply && !c.check_cmd.is_empty() {
            let ok = c.check_cmd.iter().all(|cmd| succeeds(cmd));
            outcome = judge_by_check_cmd(outcome, ok, cx);
            check_note = Some(if ok {
                "check_cmd determined the state succeeded"
            } else {
                "check_cmd determined the state failed"
            });
        }
        let result = attempt_result(&outcome);
        let note = match check_note {
            Some(n) => n.to_string(),
            None => describe(&outcome),
        };
        let Some(r) = retry.as_ref().filter(|r| result != r.until && k < attempts) else {
            // The comment tells what the controls did: every attempt when there were
            // several, the check_cmd verdict; otherwise the changes speak for themselves.
            if k > 1 || check_note.is_some() {
                comments.append(&mut attempt_notes);
                comments.push(note);
            }
            return Controlled { outcome, comments };
        };
        let m = format!(
            "Attempt {k}: Returned a result of \"{}\", with the following comment: \"{note}\"",
            if result { "True" } else { "False" }
        );
        cx.log(
            Level::Notice,
            Some(cx.path.to_string()),
            format!("{m}; retrying (attempt {} of {attempts})", k + 1),
        );
        attempt_notes.push(m);
        let wait = r.interval + r.splay * jitter();
        if let Ok(pause) = Duration::try_from_secs_f64(wait) {
            std::thread::sleep(pause);
        }
        k += 1;
    }
}

/// `check_cmd` decides the result. On success, failed changes (and an evaluation error) are
/// forgotten. On failure the resource fails (and sends no events); the changes it made are
/// still logged.
fn judge_by_check_cmd(
    outcome: Result<Vec<Change>, String>,
    ok: bool,
    cx: &mut Context,
) -> Result<Vec<Change>, String> {
    match (outcome, ok) {
        (Ok(mut changes), true) => {
            changes.retain(|c| !matches!(c.result, ChangeResult::Failed(_)));
            Ok(changes)
        }
        (Err(_), true) => Ok(Vec::new()),
        (Ok(changes), false) => {
            for c in changes {
                if let ChangeResult::Synced(m) = c.result {
                    cx.log(
                        Level::Notice,
                        Some(format!("{}/{}", cx.path, c.property)),
                        m,
                    );
                }
            }
            Err("check_cmd determined the state failed".into())
        }
        (Err(e), false) => Err(format!("{e}; check_cmd determined the state failed")),
    }
}

/// How a requisite target ended (containers aggregate their contents).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Failed, or skipped because a dependency failed (Salt's `result: False`).
    pub failed: bool,
    /// Succeeded with changes (or would have, in noop).
    pub changed: bool,
}

/// What the requisites say about a resource that is ready.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Run,
    /// Skip as if these dependencies failed (every target of an `_any` group failed).
    Fail(Vec<usize>),
    /// Do not run; the resource succeeds without changes (comment says why).
    NotRun(String),
}

/// Requisites and controls of every node, and what the run learnt about them.
#[derive(Debug, Default)]
pub struct RunState {
    /// node -> (requisite, target nodes) for the requisites the runner decides on.
    requisites: HashMap<usize, Vec<(&'static str, Vec<usize>)>>,
    /// node -> prereq targets.
    pub prereqs: HashMap<usize, Vec<usize>>,
    /// (listener, targets), in catalog order.
    pub listeners: Vec<(usize, Vec<usize>)>,
    pub controls: HashMap<usize, Controls>,
    pub failhard_global: bool,
    /// Comments per node (for the Salt return).
    pub comments: HashMap<usize, Vec<String>>,
    /// Evaluation order number and start time (seconds since the epoch) per node.
    pub run_num: HashMap<usize, usize>,
    pub started: HashMap<usize, f64>,
    /// The resource whose failure ended the run (failhard).
    pub stopped_by: Option<usize>,
}

const DECIDED: &[&str] = &[
    "require_any",
    "watch_any",
    "onchanges",
    "onchanges_any",
    "onfail",
    "onfail_any",
    "onfail_all",
];

impl RunState {
    pub fn new(catalog: &Catalog, graph: &Graph, failhard: bool) -> RunState {
        let mut s = RunState {
            failhard_global: failhard,
            ..RunState::default()
        };
        for rel in &graph.relations {
            let Origin::Metaparam { param, on } = rel.origin else {
                continue;
            };
            let param = param.name();
            let (holder, target) = if param == "prereq" {
                (rel.source, rel.target)
            } else {
                (rel.target, rel.source)
            };
            if holder != on {
                continue;
            }
            if param == "prereq" {
                push_unique(s.prereqs.entry(holder).or_default(), target);
            } else if DECIDED.contains(&param) {
                let groups = s.requisites.entry(holder).or_default();
                match groups.iter_mut().find(|(p, _)| *p == param) {
                    Some((_, ts)) => push_unique(ts, target),
                    None => groups.push((param, vec![target])),
                }
            }
        }
        let index = RefIndex::new(&catalog.resources);
        for (n, node) in graph.nodes.iter().enumerate() {
            let Some(i) = node.index else { continue };
            let r = &catalog.resources[i];
            if !node.container {
                let c = Controls::of(r);
                if !c.is_empty() || c.failhard.is_some() {
                    s.controls.insert(n, c);
                }
            }
            if let Some(v) = r.parameters.get("listen") {
                let targets: Vec<usize> = crate::graph::refs::reference_strings(v)
                    .iter()
                    .flat_map(|x| resolve(&catalog.resources, &index, x, i))
                    .map(|t| graph.node_of[t])
                    .collect();
                if !targets.is_empty() {
                    s.listeners.push((n, targets));
                }
            }
        }
        s
    }

    /// Does a failure of this node end the run?
    pub fn failhard(&self, node: usize) -> bool {
        self.controls
            .get(&node)
            .and_then(|c| c.failhard)
            .unwrap_or(self.failhard_global)
    }

    /// Settles the decided requisites of a ready node, given how each target ended.
    /// Whether nothing of this module acts on the node: no requisite decided at run time, no
    /// prereq, no run control.
    pub fn plain(&self, node: usize) -> bool {
        !self.requisites.contains_key(&node)
            && !self.prereqs.contains_key(&node)
            && !self.controls.contains_key(&node)
    }

    pub fn decide(&self, node: usize, outcome: &dyn Fn(usize) -> Outcome) -> Decision {
        let Some(groups) = self.requisites.get(&node) else {
            return Decision::Run;
        };
        // A failure first: an `_any` group whose targets all failed.
        for (param, targets) in groups {
            if matches!(*param, "require_any" | "watch_any" | "onchanges_any")
                && targets.iter().all(|&t| outcome(t).failed)
            {
                return Decision::Fail(targets.clone());
            }
        }
        for (param, targets) in groups {
            let failed = targets.iter().filter(|&&t| outcome(t).failed).count();
            let met = match *param {
                "onfail" | "onfail_any" => failed > 0,
                "onfail_all" => failed == targets.len(),
                "onchanges" | "onchanges_any" => targets.iter().any(|&t| {
                    let o = outcome(t);
                    o.changed && !o.failed
                }),
                _ => true,
            };
            if !met {
                return Decision::NotRun(
                    match *param {
                        "onfail_all" => "State was not run because not all onfail_all reqs failed",
                        p if p.starts_with("onfail") => {
                            "State was not run because onfail req did not change"
                        }
                        _ => "State was not run because none of the onchanges reqs changed",
                    }
                    .into(),
                );
            }
        }
        Decision::Run
    }
}

fn push_unique(v: &mut Vec<usize>, x: usize) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// Is the edge `d -> v` made of soft requisites only (its target's failure does not skip)?
pub fn soft_edge(graph: &Graph, d: Vertex, v: Vertex) -> bool {
    let labels = graph.labels_between(d, v);
    !labels.is_empty() && labels.iter().all(|l| soft(l))
}

fn soft(l: &crate::graph::Label) -> bool {
    matches!(l.origin, Origin::Metaparam { param, .. } if SOFT_PARAMS.contains(&param.name()))
}

/// The direct dependencies of `v` whose failure skips it: its in-neighbours, once each, in
/// insertion order, without those linked only by soft requisites. One pass over the edges
/// into `v` (asking [`soft_edge`] of each neighbour looked at every edge out of it: an anchor
/// has thousands).
pub fn hard_dependencies(graph: &Graph, v: Vertex) -> Vec<Vertex> {
    let edges = graph.in_edges(v);
    // (neighbour, has a hard edge), in order of first edge.
    let mut found: Vec<(Vertex, bool)> = Vec::with_capacity(edges.len());
    let mut at: crate::fxhash::FxHashMap<Vertex, usize> = Default::default();
    let few = edges.len() <= 16;
    for (d, l) in edges {
        let hard = !soft(l);
        let slot = if few {
            found.iter().position(|(x, _)| *x == d)
        } else {
            at.get(&d).copied()
        };
        match slot {
            Some(i) => found[i].1 |= hard,
            None => {
                if !few {
                    at.insert(d, found.len());
                }
                found.push((d, hard));
            }
        }
    }
    found
        .into_iter()
        .filter(|(_, hard)| *hard)
        .map(|(d, _)| d)
        .collect()
}

/// Managed nodes a node stands for: itself, or every managed resource inside a container.
pub fn managed_under(graph: &Graph, node: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    // A set, not a flag per node: this runs for each requisite target, and a vector of every
    // node's flag made that a pass over the whole catalog each time.
    let mut seen = crate::fxhash::FxHashSet::default();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if graph.nodes[x].container {
            stack.extend(graph.children[x].iter().rev().copied());
        } else {
            out.push(x);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(params: Json) -> Resource {
        serde_json::from_value(json!({"type": "File", "title": "/x", "parameters": params}))
            .unwrap()
    }

    #[test]
    fn retry_defaults_and_invalid_values() {
        assert_eq!(
            Controls::of(&res(json!({"retry": true}))).retry,
            Some(Retry::default())
        );
        let r = Controls::of(&res(
            json!({"retry": {"attempts": 5, "interval": "x", "until": false}}),
        ))
        .retry
        .unwrap();
        assert_eq!(
            (r.attempts, r.until, r.interval, r.splay),
            (5, false, 30.0, 0.0)
        );
        assert_eq!(Controls::of(&res(json!({"retry": false}))).retry, None);
    }

    #[test]
    fn exec_keeps_its_own_onlyif_and_unless() {
        let r: Resource = serde_json::from_value(json!({"type": "Exec", "title": "/bin/true",
            "parameters": {"onlyif": "/bin/false", "unless": ["a", "b"], "check_cmd": "c"}}))
        .unwrap();
        let c = Controls::of(&r);
        assert!(c.onlyif.is_empty() && c.unless.is_empty());
        assert_eq!(c.check_cmd, vec!["c".to_string()]);
    }

    #[test]
    fn decisions() {
        let mut s = RunState::default();
        s.requisites.insert(9, vec![("onfail", vec![1, 2])]);
        s.requisites.insert(8, vec![("onfail_all", vec![1, 2])]);
        s.requisites.insert(7, vec![("require_any", vec![1, 2])]);
        s.requisites.insert(6, vec![("onchanges", vec![1, 3])]);
        let failed = Outcome {
            failed: true,
            changed: false,
        };
        let changed = Outcome {
            failed: false,
            changed: true,
        };
        let one_failed = |t: usize| if t == 1 { failed } else { Outcome::default() };
        assert_eq!(s.decide(9, &one_failed), Decision::Run);
        assert!(matches!(s.decide(8, &one_failed), Decision::NotRun(_)));
        assert_eq!(s.decide(7, &one_failed), Decision::Run);
        assert_eq!(s.decide(7, &|_| failed), Decision::Fail(vec![1, 2]));
        assert!(matches!(s.decide(6, &one_failed), Decision::NotRun(_)));
        assert_eq!(
            s.decide(6, &|t| if t == 3 { changed } else { Outcome::default() }),
            Decision::Run
        );
        assert_eq!(s.decide(5, &one_failed), Decision::Run);
    }
}
