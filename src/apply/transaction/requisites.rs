//! The transaction's hooks for Salt requisites and run controls: numbering, the requisite
//! gate before a resource is applied, `prereq` dry runs, `failhard` and `listen` at the end
//! of the run. The decisions themselves live in `apply::requisites`.

use super::{Event, EventStatus, Run, Status};
use crate::apply::log::Level;
use crate::apply::requisites::{controlled_apply, managed_under, Controls, Decision, Outcome};
use crate::graph::Vertex;

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Run<'_> {
    /// Gives a resource its evaluation number and start time (Salt's `__run_num__`).
    pub(super) fn number(&mut self, v: Vertex) {
        if let Vertex::Resource(n) = v {
            if self.graph.nodes[n].container {
                return;
            }
            let k = self.req.run_num.len();
            self.req.run_num.entry(n).or_insert(k);
            self.req.started.entry(n).or_insert_with(now);
        }
    }

    /// How a node ended, for the requisites that point at it.
    pub(super) fn outcome(&self, node: usize) -> Outcome {
        let mut o = Outcome::default();
        for m in managed_under(self.graph, node) {
            let Some(st) = self.status.get(&Vertex::Resource(m)) else {
                continue;
            };
            o.failed |=
                st.failed || st.failed_to_restart || (st.skipped && !st.failed_deps.is_empty());
            o.changed |= st.changes > 0 || st.events.iter().any(|e| e.status == EventStatus::Noop);
        }
        o.changed &= !o.failed;
        o
    }

    /// Settles the requisites of a ready resource; false when it must not be applied.
    pub(super) fn requisites_allow(&mut self, v: Vertex) -> bool {
        let Vertex::Resource(n) = v else {
            return true;
        };
        let decision = self.req.decide(n, &|t| self.outcome(t));
        match decision {
            Decision::Run => {}
            Decision::Fail(targets) => {
                self.status.or_default(v).failed_deps = targets;
                self.skip(v);
                return false;
            }
            Decision::NotRun(comment) => {
                self.not_run(v, comment);
                return false;
            }
        }
        let Some(targets) = self.req.prereqs.get(&n).cloned() else {
            return true;
        };
        match self.prereq_would_change(&targets) {
            Ok(true) => true,
            Ok(false) => {
                self.not_run(
                    v,
                    "No changes detected in the prereq targets: not run".into(),
                );
                false
            }
            Err(e) => {
                self.not_run(
                    v,
                    format!("The dry run of a prereq target failed ({e}): not run"),
                );
                false
            }
        }
    }

    /// Leaves a resource unrun: it succeeds without changes, and drops the events it got.
    fn not_run(&mut self, v: Vertex, comment: String) {
        let n = v.node();
        let path = self.path(n);
        self.say(Level::Info, Some(path), comment.clone());
        self.req.comments.entry(n).or_default().push(comment);
        if self.take_queue(v).is_some_and(|q| !q.is_empty()) {
            let name = self.graph.name(v);
            self.say(
                Level::Info,
                Some(self.source_name(v)),
                format!("Unscheduling all events on {name}"),
            );
        }
    }

    /// Dry-runs the prereq targets: would any of them change?
    fn prereq_would_change(&mut self, targets: &[usize]) -> Result<bool, String> {
        let mut error = None;
        for &t in targets {
            for m in managed_under(self.graph, t) {
                let Some(mut p) = self.providers.remove(&m) else {
                    continue;
                };
                let path = self.path(m);
                let mut cx = super::context(self.opts, &path);
                // The target's own onlyif/unless count; retries and check_cmd do not (noop).
                let controls = self
                    .req
                    .controls
                    .get(&m)
                    .cloned()
                    .unwrap_or_else(Controls::default);
                let outcome = controlled_apply(&controls, p.as_mut(), &mut cx, false).outcome;
                self.providers.insert(m, p);
                match outcome {
                    Ok(changes) if !changes.is_empty() => return Ok(true),
                    Ok(_) => {}
                    Err(e) => error = Some(e),
                }
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(false),
        }
    }

    /// After a resource: does its failure end the run?
    pub(super) fn check_failhard(&mut self, v: Vertex) {
        let Vertex::Resource(n) = v else { return };
        let failed = self
            .status
            .get(&v)
            .is_some_and(|s| s.failed || s.failed_to_restart);
        if failed && self.req.stopped_by.is_none() && self.req.failhard(n) {
            self.req.stopped_by = Some(n);
            let name = self.graph.nodes[n].reference.to_string();
            let m = format!("{name} failed with failhard set: the run ends here");
            self.req.comments.entry(n).or_default().push(m.clone());
            self.say(Level::Error, Some(self.path(n)), m);
        }
    }

    /// After the walk: resources left by failhard are skipped; otherwise listeners refresh.
    pub(super) fn end_of_run(&mut self) {
        if let Some(by) = self.req.stopped_by {
            let name = self.graph.nodes[by].reference.to_string();
            let mut left = 0;
            for v in self.graph.vertices() {
                let Vertex::Resource(n) = v else { continue };
                if self.graph.nodes[n].container || self.status.contains_key(&v) {
                    continue;
                }
                left += 1;
                self.status.insert(
                    v,
                    Status {
                        skipped: true,
                        ..Status::default()
                    },
                );
                self.req
                    .comments
                    .entry(n)
                    .or_default()
                    .push(format!("Not run: failhard after {name} failed"));
            }
            if left > 0 {
                self.say(
                    Level::Notice,
                    None,
                    format!("Failhard: {left} resource(s) not applied after {name} failed"),
                );
            }
            return;
        }
        self.run_listeners();
    }

    /// `listen`: a refresh at the end of the run when a listened resource changed.
    fn run_listeners(&mut self) {
        for (l, targets) in self.req.listeners.clone() {
            let v = Vertex::Resource(l);
            if self.graph.nodes[l].container || !self.refreshable(v) {
                continue;
            }
            if self
                .status
                .get(&v)
                .is_some_and(|s| s.failed || s.skipped || s.failed_to_restart)
            {
                continue;
            }
            let mut events: Vec<Event> = Vec::new();
            let mut source = None;
            for &t in &targets {
                if self.outcome(t).failed {
                    continue;
                }
                for m in managed_under(self.graph, t) {
                    let Some(st) = self.status.get(&Vertex::Resource(m)) else {
                        continue;
                    };
                    let changed: Vec<Event> = st
                        .events
                        .iter()
                        .filter(|e| e.status != EventStatus::Failure)
                        .cloned()
                        .collect();
                    if !changed.is_empty() && source.is_none() {
                        source = Some(self.path(m));
                    }
                    events.extend(changed);
                }
            }
            if events.is_empty() {
                continue;
            }
            let name = self.graph.name(v);
            self.say(
                Level::Info,
                source,
                format!("Scheduling refresh of {name} at the end of the run (listen)"),
            );
            self.pending_dirty |= events.iter().any(|e| e.status == EventStatus::Success);
            self.queues.entry(v).or_default().extend(events);
            self.process_events(v);
        }
    }
}
