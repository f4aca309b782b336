//! The runner: applies a catalog to this machine (Puppet's transaction, event manager and
//! resource harness: lib/puppet/transaction*.rb).
//!
//! A run has two phases. **Validation** builds the graph and a provider for every managed
//! resource, and looks for missing dependencies, unknown types or attributes and cycles; any
//! error refuses the whole catalog before the first change (exit 1). **Application** walks
//! the graph in priority order: each resource is checked and converged by its provider, its
//! changes become events, events travel along notifying edges (containers forward them) and
//! a resource that received events refreshes once, after its own sync. A failure skips every
//! resource that depends on it, transitively.

#![allow(clippy::disallowed_methods)]

pub mod atomic;
pub mod bucket;
pub mod lock;
pub mod log;
pub mod pending;
pub mod progress;
pub mod providers;
pub mod redact;
pub mod report;
pub mod requisites;
pub mod salt;
pub mod sanity;
pub mod schedule;
pub mod signals;
pub mod stage;
pub mod state;
mod transaction;

use crate::catalog::Catalog;
use crate::graph::cycles::{explain, find_cycles, path_names, puppet_message};
use crate::graph::{Graph, Ordering};
use log::{Level, LogLine};
use std::path::PathBuf;

pub use report::Report;

#[derive(Clone, Debug)]
pub struct ApplyOptions {
    /// Global noop: report what would change, change nothing.
    pub noop: bool,
    pub ordering: Ordering,
    /// Where `puppet:///modules/MOD/PATH` sources are found (`DIR/MOD/files/PATH`).
    pub modulepath: Vec<PathBuf>,
    /// Where `backup => puppet` (the default) keeps replaced files.
    pub bucket_dir: PathBuf,
    /// How many independent resources may be applied at once.
    pub jobs: usize,
    /// Salt's global failhard: the first failure ends the run (a resource's own `failhard`
    /// metaparameter wins).
    pub failhard: bool,
    /// Where refresh events that a run could not deliver are kept for the next run (see
    /// `pending`); `None` keeps nothing.
    pub pending_file: Option<PathBuf>,
    /// When each resource with a `schedule` was last checked (see `schedule`); `None`: kept
    /// nowhere, so every schedule counts as never checked.
    pub schedule_file: Option<PathBuf>,
    /// Set (by a signal) to stop after the current resource.
    pub stop: signals::StopFlag,
    /// `user`, `group` and `package` (dpkg) manage the system installed under this directory
    /// (`useradd --root DIR`, `DIR/etc/passwd`, `dpkg --root=DIR`) instead of this one.
    pub sysroot: Option<PathBuf>,
    /// `--tags`: only resources with one of these tags are applied (none: all).
    pub tags: Vec<String>,
    /// `--skip_tags`: resources with one of these tags are not applied.
    pub skip_tags: Vec<String>,
    /// Counts the resources evaluated, for a progress line.
    pub progress: progress::Progress,
    /// Puppet's words where Ordo has its own (`--log-format puppet`): a dependency cycle is
    /// Puppet's two errors, not one error per cycle with its edges.
    pub puppet_messages: bool,
    /// Whether the result keeps each resource's report (status, events, times) and the
    /// run's log lines; false when no report is written, so that a run of 100,000 resources
    /// builds none of it (the lines are still printed; the summary, and the exit status it
    /// gives, are the same).
    pub report_details: bool,
}

impl Default for ApplyOptions {
    fn default() -> ApplyOptions {
        ApplyOptions {
            noop: false,
            ordering: Ordering::Manifest,
            modulepath: Vec::new(),
            bucket_dir: PathBuf::from("/var/lib/ordo/clientbucket"),
            jobs: 1,
            failhard: false,
            pending_file: None,
            schedule_file: None,
            stop: signals::StopFlag::new(),
            sysroot: None,
            tags: Vec::new(),
            skip_tags: Vec::new(),
            progress: progress::Progress::new(),
            puppet_messages: false,
            report_details: true,
        }
    }
}

/// The result of a run.
#[derive(Debug)]
pub struct RunResult {
    /// Validation failed: nothing was applied.
    pub refused: bool,
    /// A stop was requested (SIGINT, SIGTERM): the run ended after the current resource.
    pub interrupted: bool,
    pub log: Vec<LogLine>,
    pub report: Report,
}

impl RunResult {
    /// Exit status: with `detailed`, 0 nothing changed, 2 changes, 4 failures, 6 both; 1 when
    /// the catalog was refused. Without it, 1 on refusal or failure, else 0.
    pub fn exit_code(&self, detailed: bool) -> i32 {
        if self.refused {
            return 1;
        }
        let s = &self.report.summary;
        // An interrupted run did not converge: it counts as failed.
        let failed = s.failed > 0 || s.failed_to_restart > 0 || self.interrupted;
        if detailed {
            (if s.changes > 0 { 2 } else { 0 }) | (if failed { 4 } else { 0 })
        } else if failed {
            1
        } else {
            0
        }
    }
}

/// Checks a catalog without applying it: graph errors, unsupported types or attributes,
/// cycles. Returns the error lines (empty when the catalog can be applied): a cycle is one
/// error with its edges, or with `puppet_messages` Puppet's two lines and an info line
/// explaining each cycle.
pub fn validate(catalog: &Catalog, graph: &Graph, puppet_messages: bool) -> Vec<LogLine> {
    validate_and_build(catalog, graph, puppet_messages).0
}

/// The providers of a catalog's managed resources, by graph node.
type Providers = crate::graph::dense::DenseMap<usize, Box<dyn providers::Provider>>;

/// [`validate`], keeping the providers it builds for the run (each is built once).
fn validate_and_build(
    catalog: &Catalog,
    graph: &Graph,
    puppet_messages: bool,
) -> (Vec<LogLine>, Providers) {
    let mut built = Providers::default();
    built.reserve_below(graph.nodes.len());
    let mut out: Vec<LogLine> = sanity::check(catalog)
        .into_iter()
        .map(|m| {
            let code = if m.starts_with("Duplicate declaration") {
                "duplicate-declaration"
            } else {
                "invalid-catalog"
            };
            LogLine::refusal(code, m, None)
        })
        .collect();
    out.extend(graph.errors.iter().map(|e| {
        use crate::graph::GraphError as E;
        let (code, node) = match e {
            E::MissingDependency { resource, .. } => ("missing-dependency", Some(*resource)),
            E::BadReference { resource, .. } => ("bad-reference", Some(*resource)),
            E::BadEdge { .. } => ("bad-edge", None),
            E::Invalid { resource, .. } => ("invalid-metaparameter", Some(*resource)),
        };
        let node = node.and_then(|n| graph.nodes.get(n));
        LogLine::refusal(code, graph.error_message(e), node)
    }));
    for (n, node) in graph.nodes.iter().enumerate() {
        if node.container {
            continue;
        }
        let Some(i) = node.index else { continue };
        match providers::build(&catalog.resources[i]) {
            Ok(p) => {
                built.insert(n, p);
            }
            Err(msg) => {
                let loc = node.location();
                let sep = if loc.is_empty() { "" } else { " " };
                out.push(LogLine::refusal(
                    "unsupported",
                    format!("{msg}{sep}{loc}"),
                    Some(node),
                ));
            }
        }
    }
    match schedule::catalog_schedules(catalog) {
        Err(msg) => out.push(LogLine::refusal("invalid-catalog", msg, None)),
        Ok(known) => {
            for node in &graph.nodes {
                let Some(i) = node.index.filter(|_| !node.container) else {
                    continue;
                };
                if let Some(name) = schedule::wanted(&catalog.resources[i]) {
                    if !known.contains_key(&name) {
                        // Puppet fails the run when it reaches the resource; Ordo refuses the
                        // catalog before any change.
                        let loc = node.location();
                        let sep = if loc.is_empty() { "" } else { " " };
                        out.push(LogLine::refusal(
                            "invalid-catalog",
                            format!("Could not find schedule {name}{sep}{loc}"),
                            Some(node),
                        ));
                    }
                }
            }
        }
    }
    let cycles = find_cycles(graph);
    if !puppet_messages {
        // One error per cycle: its path, then each edge with where it comes from.
        for c in &cycles {
            let mut text = format!(
                "dependency cycle: {}",
                path_names(graph, &c.path).join(" => ")
            );
            for line in explain(graph, c) {
                text.push_str("\n    ");
                text.push_str(&line);
            }
            out.push(LogLine::refusal("cycle", text, None));
        }
    } else if !cycles.is_empty() {
        out.push(LogLine::new(
            Level::Error,
            None,
            puppet_message(graph, &cycles),
        ));
        out.push(LogLine::new(
            Level::Error,
            None,
            "Failed to apply catalog: One or more resource dependency cycles detected in graph",
        ));
        for (k, c) in cycles.iter().enumerate() {
            let mut text = format!("cycle {} explained:", k + 1);
            for line in explain(graph, c) {
                text.push_str("\n    ");
                text.push_str(&line);
            }
            // Beyond Puppet: where each edge of the cycle comes from (an Info line, so tools that
            // compare Puppet logs skip it).
            out.push(LogLine::new(Level::Info, None, text));
        }
    }
    (out, built)
}

/// Applies a catalog. Every log line is passed to `sink` as it happens (and kept in the
/// result).
///
/// Values of sensitive parameters never reach `sink`, the log or the report (see `redact`).
pub fn apply(catalog: &Catalog, opts: &ApplyOptions, sink: &mut dyn FnMut(&LogLine)) -> RunResult {
    let redactor = redact::Redactor::new(catalog);
    let mut sink = |l: &LogLine| {
        if redactor.is_empty() {
            sink(l) // nothing to scrub: no copy of every line
        } else {
            sink(&redactor.line(l))
        }
    };
    // Requisite `_in` forms, globs and `use` rewrite the catalog before the graph.
    let (prepared, graph) = crate::graph::requisites::build(catalog, opts.ordering);
    let catalog = &prepared;
    let (problems, providers) = validate_and_build(catalog, &graph, opts.puppet_messages);
    if problems.iter().any(|l| l.level == Level::Error) {
        for l in &problems {
            sink(l);
        }
        let mut result = RunResult {
            refused: true,
            interrupted: false,
            log: problems,
            report: Report::refused(opts.noop),
        };
        redactor.result(&mut result);
        return result;
    }
    let mut result = transaction::run(catalog, &graph, providers, opts, &mut sink);
    redactor.result(&mut result);
    result
}
