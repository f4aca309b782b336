//! The walk over the graph: statuses, failure propagation, events and refreshes.
//!
//! Mirrors transaction.rb `eval_resource`: propagate failures from direct dependencies; skip
//! (with Puppet's messages) when any failed; otherwise apply, queue the events along
//! notifying edges, then process the events queued for this resource (refresh at most once).
//! With `--jobs N`, up to N ready resources are checked and converged at once; everything
//! else (failures, events, refreshes, logging) happens one resource at a time in priority
//! order, so the log never depends on timing.

use super::atomic::Staged;
use super::log::{Level, LogLine};
use super::pending::{PendingEvent, PendingRefresh, Tracker};
use super::providers::{self, Change, ChangeResult, Context, Provider};
use super::report::{EventReport, Report, ResourceReport, Summary};
use super::stage::StageSet;
use super::{ApplyOptions, RunResult};
use crate::catalog::Catalog;
use crate::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use crate::graph::dense::DenseMap;
use crate::graph::order::Schedule;
use crate::graph::{Graph, Vertex};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// Checking ahead and flushing staged file content (`flush`).
mod deferred;
/// Salt requisites and run controls (`apply::requisites`) hooked into this walk.
mod requisites;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventStatus {
    Success,
    Noop,
    Failure,
}

#[derive(Clone, Debug)]
struct Event {
    name: String,
    status: EventStatus,
    property: Option<String>,
    previous: Option<String>,
    desired: Option<String>,
    message: String,
}

#[derive(Default, Debug)]
struct Status {
    failed: bool,
    failed_to_restart: bool,
    skipped: bool,
    restarted: bool,
    changes: usize,
    failed_deps: Vec<usize>,
    events: Vec<Event>,
    time: f64,
}

/// A vertex evaluated ahead of a flush (see `flush`): what its provider did, and its staged
/// new content.
struct Deferred {
    v: Vertex,
    applied: Option<Applied>,
    staged: Option<Staged>,
}

/// At most this many new files wait in temporary files for one flush (one `syncfs` each:
/// on a shared machine a `syncfs` also writes what other programs left dirty, so fewer is
/// faster; a staged file holds no descriptor, so the batch is not bounded by open files).
const MAX_STAGED: usize = 4096;

/// What the parallel part of applying one resource produced.
struct Applied {
    outcome: Result<Vec<Change>, String>,
    log: Vec<LogLine>,
    time: f64,
    /// Run-control notes (onlyif/unless verdicts, attempts, check_cmd).
    comments: Vec<String>,
}

struct Run<'a> {
    catalog: &'a Catalog,
    graph: &'a Graph,
    opts: &'a ApplyOptions,
    providers: DenseMap<usize, Box<dyn Provider>>,
    status: DenseMap<Vertex, Status>,
    queues: HashMap<Vertex, Vec<Event>>,
    notified: HashSet<usize>,
    log: Vec<LogLine>,
    sink: &'a mut dyn FnMut(&LogLine),
    req: super::requisites::RunState,
    /// The pending-refresh store (see `pending`), when the run keeps one.
    pending: Option<Tracker>,
    /// Events a subscriber will not get in this run (skipped, or in noop): kept as pending.
    carried: HashMap<Vertex, Vec<Event>>,
    /// The signal that stopped the run, if one did.
    interrupted: Option<i32>,
    /// Anchors from which refresh edges lead to a resource that refreshes: only their events
    /// are worth keeping as pending.
    /// Computed when an anchor first has events to keep (`None` until then).
    relaying: Option<HashSet<Vertex>>,
    /// Whether the real events queued or carried changed since the store was last synced
    /// (a noop run queues only noop events: the store is not looked at again at every step).
    pending_dirty: bool,
    /// The catalog's schedules, when last each scheduled resource was checked, and now.
    schedules: Schedules,
    /// Vertices checked ahead, in walk order, waiting for `flush`.
    deferred: Vec<Deferred>,
    /// The vertices of `deferred`, and how many of them staged a file: looked up at every
    /// step, where a scan of `deferred` made a run of 100,000 unchanged files quadratic.
    deferred_set: HashSet<Vertex>,
    deferred_staged: usize,
    /// What the deferred vertices write (see `apply::stage`).
    staged: StageSet,
    /// The options, for jobs on the worker threads.
    shared_opts: Arc<ApplyOptions>,
    /// The worker threads (`--jobs`).
    pool: Pool,
    /// Each node's resource path, made once (a walk up its containers).
    paths: Vec<std::cell::OnceCell<String>>,
}

struct Schedules {
    known: std::collections::HashMap<String, super::schedule::Schedule>,
    checked: Option<super::schedule::Checked>,
    now: i64,
    tz: jiff::tz::TimeZone,
}

pub(super) fn run(
    catalog: &Catalog,
    graph: &Graph,
    providers: DenseMap<usize, Box<dyn Provider>>,
    opts: &ApplyOptions,
    sink: &mut dyn FnMut(&LogLine),
) -> RunResult {
    let start = Instant::now();
    let mut r = Run {
        catalog,
        graph,
        opts,
        providers,
        status: DenseMap::default(),
        queues: HashMap::default(),
        notified: HashSet::default(),
        log: Vec::new(),
        sink,
        req: super::requisites::RunState::new(catalog, graph, opts.failhard),
        pending: None,
        carried: HashMap::default(),
        pending_dirty: true,
        interrupted: None,
        relaying: None,
        schedules: Schedules {
            known: super::schedule::catalog_schedules(catalog).unwrap_or_default(),
            checked: opts
                .schedule_file
                .as_deref()
                .map(super::schedule::Checked::load),
            now: jiff::Timestamp::now().as_second(),
            tz: jiff::tz::TimeZone::system(),
        },
        deferred: Vec::new(),
        deferred_set: HashSet::default(),
        deferred_staged: 0,
        staged: StageSet::default(),
        shared_opts: Arc::new(opts.clone()),
        pool: Pool::new(opts.jobs.max(1) - 1),
        paths: vec![std::cell::OnceCell::new(); graph.nodes.len()],
    };
    r.load_pending();
    let mut schedule = Schedule::new(graph);
    let jobs = opts.jobs.max(1);
    opts.progress.start(
        graph
            .nodes
            .iter()
            .filter(|n| !n.container && n.index.is_some())
            .count(),
    );
    loop {
        if let Some(sig) = opts.stop.requested() {
            // What was checked ahead is done work: it is made final first.
            r.flush();
            r.interrupted = Some(sig);
            break;
        }
        let mut batch = Vec::new();
        while batch.len() < jobs {
            match schedule.next_ready() {
                Some(v) => batch.push(v),
                None => break,
            }
        }
        if batch.is_empty() {
            break;
        }
        r.eval_batch(&batch);
        let resources = batch
            .iter()
            .filter(|v| matches!(v, Vertex::Resource(n) if graph.nodes[*n].index.is_some()))
            .count();
        opts.progress.advance(resources);
        for v in batch {
            schedule.finish(v);
        }
        if r.deferred.is_empty() {
            r.sync_pending();
        }
        if r.req.stopped_by.is_some() {
            break;
        }
    }
    r.flush();
    if let Some(sig) = r.interrupted {
        let left = graph
            .nodes
            .iter()
            .enumerate()
            .filter(|(n, node)| {
                !node.container
                    && node.index.is_some()
                    && !r.status.contains_key(&Vertex::Resource(*n))
            })
            .count();
        r.say(
            Level::Warning,
            None,
            format!(
                "Caught {}; stopped after the current resource: {left} resource(s) not evaluated",
                super::signals::signal_name(sig)
            ),
        );
    }
    // The renames of this run are durable before it reports them (see `atomic`).
    r.sync_dirs();
    r.end_of_run();
    if let Some(c) = &r.schedules.checked {
        if let Err(e) = c.save() {
            r.say(
                Level::Warning,
                None,
                format!("Could not save the schedules' check times: {e}"),
            );
        }
    }
    let report = r.report(start.elapsed().as_secs_f64());
    RunResult {
        refused: false,
        interrupted: r.interrupted.is_some(),
        log: r.log,
        report,
    }
}

/// The context a provider works in for the resource at `path`.
fn context<'a>(opts: &'a ApplyOptions, path: &'a str) -> Context<'a> {
    Context {
        path,
        modulepath: &opts.modulepath,
        bucket_dir: &opts.bucket_dir,
        sysroot: opts.sysroot.as_deref(),
        log: Vec::new(),
    }
}

/// One resource to check and apply: its node, provider, path, whether to apply (not noop)
/// and its run controls.
type ApplyJob = (
    usize,
    Box<dyn Provider>,
    String,
    bool,
    Option<super::requisites::Controls>,
);

/// A job for a worker thread.
type Task = Box<dyn FnOnce() + Send>;

/// Worker threads kept for the whole run: with `--jobs N`, N - 1 of them (the walk's own
/// thread takes one job of each batch), so a batch of ready resources starts no thread.
struct Pool {
    tasks: Option<mpsc::Sender<Task>>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

impl Pool {
    fn new(workers: usize) -> Pool {
        if workers == 0 {
            return Pool {
                tasks: None,
                workers: Vec::new(),
            };
        }
        let (tx, rx) = mpsc::channel::<Task>();
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..workers)
            .map(|_| {
                let rx = Arc::clone(&rx);
                std::thread::spawn(move || loop {
                    let task = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    match task {
                        Ok(task) => task(),
                        Err(_) => break, // the run is over
                    }
                })
            })
            .collect();
        Pool {
            tasks: Some(tx),
            workers,
        }
    }

    /// `work` on every job, the first on this thread and the others on the workers at the
    /// same time; results in order.
    fn run<J, R>(&self, jobs: Vec<J>, work: impl Fn(J) -> R + Send + Sync + 'static) -> Vec<R>
    where
        J: Send + 'static,
        R: Send + 'static,
    {
        let Some(tasks) = self.tasks.as_ref().filter(|_| jobs.len() > 1) else {
            return jobs.into_iter().map(work).collect();
        };
        let work = Arc::new(work);
        let (done, results) = mpsc::channel();
        let mut jobs = jobs.into_iter().enumerate();
        let first = jobs.next();
        let mut sent = 0;
        for (i, job) in jobs {
            let (work, done) = (Arc::clone(&work), done.clone());
            let task: Task = Box::new(move || {
                let _ = done.send((i, work(job)));
            });
            tasks
                .send(task)
                .expect("the worker threads run until the run ends");
            sent += 1;
        }
        drop(done);
        let mut all = Vec::with_capacity(sent + 1);
        all.extend(first.map(|(i, job)| (i, work(job))));
        for _ in 0..sent {
            all.push(results.recv().expect("a provider thread panicked"));
        }
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, r)| r).collect()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.tasks = None; // the workers' `recv` fails: they end
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl Run<'_> {
    fn emit(&mut self, line: LogLine) {
        (self.sink)(&line);
        if self.opts.report_details {
            self.log.push(line);
        }
    }

    fn say(&mut self, level: Level, source: Option<String>, message: impl Into<String>) {
        self.emit(LogLine::new(level, source, message));
    }

    /// The resource path Puppet logs for a node (see `Graph::path`).
    fn path(&self, node: usize) -> String {
        self.paths[node]
            .get_or_init(|| self.graph.path(node))
            .clone()
    }

    /// The name a vertex logs under: the resource path, or the container for anchors.
    fn source_name(&self, v: Vertex) -> String {
        match v {
            Vertex::Resource(n) => self.path(n),
            _ => self.graph.name(v),
        }
    }

    fn noop(&self, v: Vertex) -> bool {
        let own = match v {
            Vertex::Resource(n) => self.graph.nodes[n]
                .index
                .and_then(|i| providers::resource_noop(&self.catalog.resources[i])),
            _ => None,
        };
        own.unwrap_or(self.opts.noop)
    }

    fn refreshable(&self, v: Vertex) -> bool {
        match v {
            Vertex::Resource(n) => self.providers.get(&n).is_some_and(|p| p.refreshable()),
            _ => true,
        }
    }

    fn eval_batch(&mut self, batch: &[Vertex]) {
        if self.defer_batch(batch) {
            return;
        }
        self.flush();
        if self.req.stopped_by.is_some() {
            return; // failhard: a flushed resource ended the run
        }
        // Decide what to skip, in order (dependency notices are once per failure per run).
        let mut to_apply = Vec::new();
        for &v in batch {
            self.propagate_failure(v);
            self.number(v);
            if self.tag_skipped(v)
                || !self.scheduled(v)
                || self.skip(v)
                || !self.requisites_allow(v)
            {
                continue;
            }
            to_apply.push(v);
        }
        // Check and converge (in parallel when allowed).
        let applied = self.apply_all(&to_apply);
        for (v, a) in to_apply.into_iter().zip(applied) {
            self.finish_apply(v, a);
            self.process_events(v);
            self.check_failhard(v);
        }
    }

    /// Whether `--skip_tags` or `--tags` leave `v` out (Puppet's `skip_tags?` and
    /// `missing_tags?`): it is skipped quietly, and its queued events are dropped.
    fn tag_skipped(&mut self, v: Vertex) -> bool {
        let out = self.tag_excluded(v);
        if out {
            self.status.or_default(v).skipped = true;
            self.take_queue(v);
        }
        out
    }

    /// Whether `--skip_tags` or `--tags` leave `v` out.
    fn tag_excluded(&self, v: Vertex) -> bool {
        if self.opts.tags.is_empty() && self.opts.skip_tags.is_empty() {
            return false;
        }
        let Vertex::Resource(n) = v else { return false };
        let Some(i) = self.graph.nodes[n].index else {
            return false;
        };
        let tags = &self.catalog.resources[i].tags;
        let has = |wanted: &[String]| {
            wanted
                .iter()
                .any(|w| tags.iter().any(|t| t.eq_ignore_ascii_case(w)))
        };
        has(&self.opts.skip_tags) || (!self.opts.tags.is_empty() && !has(&self.opts.tags))
    }

    /// Whether `v` is due under its `schedule`; one that is not is skipped quietly, as Puppet
    /// does (`Not scheduled` is a debug line). A due one is recorded as checked now.
    fn scheduled(&mut self, v: Vertex) -> bool {
        let Vertex::Resource(n) = v else { return true };
        let Some(i) = self.graph.nodes[n].index else {
            return true;
        };
        let Some(name) = super::schedule::wanted(&self.catalog.resources[i]) else {
            return true;
        };
        let Some(schedule) = self.schedules.known.get(&name) else {
            return true; // refused at validation
        };
        let reference = self.graph.nodes[n].reference.to_string();
        let s = &self.schedules;
        let last = s.checked.as_ref().map_or(0, |c| c.last(&reference));
        if !schedule.matches(last, s.now, &s.tz) {
            self.status.or_default(v).skipped = true;
            self.take_queue(v);
            return false;
        }
        let now = s.now;
        if !self.opts.noop {
            if let Some(c) = self.schedules.checked.as_mut() {
                c.record(&reference, now);
            }
        }
        true
    }

    fn propagate_failure(&mut self, v: Vertex) {
        let mut failed: Vec<usize> = Vec::new();
        // onfail and `_any` requisites are settled by `requisites_allow`.
        for d in super::requisites::hard_dependencies(self.graph, v) {
            if let Some(s) = self.status.get(&d) {
                for f in &s.failed_deps {
                    if !failed.contains(f) {
                        failed.push(*f);
                    }
                }
                if (s.failed || s.failed_to_restart) && !failed.contains(&d.node()) {
                    failed.push(d.node());
                }
            }
        }
        self.status.or_default(v).failed_deps = failed;
    }

    /// Skips `v` when a dependency failed, with Puppet's messages. Returns whether skipped.
    fn skip(&mut self, v: Vertex) -> bool {
        let failed = self.status[&v].failed_deps.clone();
        if failed.is_empty() {
            return false;
        }
        if let Vertex::Resource(n) = v {
            let path = self.path(n);
            for f in failed {
                if self.notified.insert(f) {
                    let dep = self.graph.nodes[f].reference.to_string();
                    self.say(
                        Level::Notice,
                        Some(path.clone()),
                        format!("Dependency {dep} has failures: true"),
                    );
                }
            }
            self.say(
                Level::Warning,
                Some(path),
                "Skipping because of failed dependencies",
            );
        }
        self.status.or_default(v).skipped = true;
        self.carry(v);
        if self.queues.get(&v).is_some_and(|q| !q.is_empty()) {
            let name = self.graph.name(v);
            self.say(
                Level::Info,
                Some(self.source_name(v)),
                format!("Unscheduling all events on {name}"),
            );
            self.take_queue(v);
        }
        true
    }

    fn apply_all(&mut self, vs: &[Vertex]) -> Vec<Option<Applied>> {
        let mut jobs: Vec<ApplyJob> = Vec::new();
        for &v in vs {
            if let Vertex::Resource(n) = v {
                if let Some(p) = self.providers.remove(&n) {
                    let controls = self.req.controls.get(&n).cloned();
                    jobs.push((n, p, self.path(n), !self.noop(v), controls));
                }
            }
        }
        let opts = Arc::clone(&self.shared_opts);
        let work = move |(n, mut p, path, apply, controls): ApplyJob| {
            let t = Instant::now();
            let mut cx = context(&opts, &path);
            let c = match &controls {
                Some(c) => super::requisites::controlled_apply(c, p.as_mut(), &mut cx, apply),
                None => super::requisites::Controlled {
                    outcome: p.check_apply(&mut cx, apply),
                    comments: Vec::new(),
                },
            };
            let applied = Applied {
                outcome: c.outcome,
                log: cx.log,
                time: t.elapsed().as_secs_f64(),
                comments: c.comments,
            };
            (n, p, applied)
        };
        let results = self.pool.run(jobs, work);
        let mut by_node: HashMap<usize, Applied> = HashMap::default();
        for (n, p, a) in results {
            self.providers.insert(n, p);
            by_node.insert(n, a);
        }
        vs.iter()
            .map(|v| match v {
                Vertex::Resource(n) => by_node.remove(n),
                _ => None,
            })
            .collect()
    }

    fn finish_apply(&mut self, v: Vertex, applied: Option<Applied>) {
        let Some(a) = applied else {
            return; // anchors have nothing to apply
        };
        let n = v.node();
        let path = self.path(n);
        for line in a.log {
            self.emit(line);
        }
        if !a.comments.is_empty() {
            self.req.comments.entry(n).or_default().extend(a.comments);
        }
        let mut events = Vec::new();
        let mut failed = false;
        match a.outcome {
            Err(msg) => {
                failed = true;
                self.say(
                    Level::Error,
                    Some(path.clone()),
                    format!("Could not evaluate: {msg}"),
                );
            }
            Ok(changes) => {
                let sensitive: Vec<String> = self.graph.nodes[n]
                    .index
                    .map(|i| self.catalog.resources[i].sensitive_parameters.clone())
                    .unwrap_or_default();
                // A change is logged at the resource's `loglevel` (Puppet's event log level).
                let level = self.graph.nodes[n].index.map_or(Level::Notice, |i| {
                    crate::apply::providers::notify::level_of(&self.catalog.resources[i])
                });
                for mut c in changes {
                    if sensitive.contains(&c.property) {
                        // Puppet never shows sensitive values, not even in noop or errors.
                        c.previous = "[redacted]".into();
                        c.desired = "[redacted]".into();
                        if let ChangeResult::Synced(m) = &mut c.result {
                            *m = "changed [redacted] to [redacted]".into();
                        }
                    }
                    let source = Some(format!("{path}/{}", c.property));
                    let (status, message) = match c.result {
                        ChangeResult::Synced(m) => {
                            self.say(level, source, m.clone());
                            (EventStatus::Success, m)
                        }
                        ChangeResult::Noop => {
                            let m = format!(
                                "current_value {}, should be {} (noop)",
                                c.previous, c.desired
                            );
                            self.say(level, source, m.clone());
                            (EventStatus::Noop, m)
                        }
                        ChangeResult::Failed(detail) => {
                            failed = true;
                            self.say(Level::Error, None, detail.clone());
                            let m = format!(
                                "change from {} to {} failed: {detail}",
                                c.previous, c.desired
                            );
                            self.say(Level::Error, source, m.clone());
                            (EventStatus::Failure, m)
                        }
                    };
                    events.push(Event {
                        name: c.event,
                        status,
                        property: Some(c.property),
                        previous: Some(c.previous),
                        desired: Some(c.desired),
                        message,
                    });
                }
            }
        }
        let st = self.status.or_default(v);
        st.time = a.time;
        st.failed |= failed;
        st.changes += events
            .iter()
            .filter(|e| e.status == EventStatus::Success)
            .count();
        st.events.extend(events.iter().cloned());
        if !failed {
            self.queue_events(v, &events);
        }
    }

    /// Sends events along the notifying edges out of `v`.
    fn queue_events(&mut self, v: Vertex, events: &[Event]) {
        if events.is_empty() {
            return;
        }
        // The usual resource notifies nothing: no grouping, no copies.
        let targets: Vec<Vertex> = self
            .graph
            .out_edges(v)
            .into_iter()
            .filter(|(_, l)| l.refresh)
            .map(|(t, _)| t)
            .filter(|t| self.refreshable(*t))
            .collect();
        if targets.is_empty() {
            return;
        }
        let mut groups: Vec<(&str, Vec<Event>)> = Vec::new();
        for e in events {
            match groups.iter_mut().find(|(name, _)| *name == e.name) {
                Some((_, list)) => list.push(e.clone()),
                None => groups.push((&e.name, vec![e.clone()])),
            }
        }
        let source = self.source_name(v);
        for (_, list) in groups {
            for &t in &targets {
                if !matches!(t, Vertex::Completed(_)) {
                    let name = self.graph.name(t);
                    self.say(
                        Level::Info,
                        Some(source.clone()),
                        format!("Scheduling refresh of {name}"),
                    );
                }
                self.pending_dirty |= list.iter().any(|e| e.status == EventStatus::Success);
                self.queues
                    .entry(t)
                    .or_default()
                    .extend(list.iter().cloned());
            }
        }
    }

    fn process_events(&mut self, v: Vertex) {
        let Some(queued) = self.take_queue(v) else {
            return;
        };
        if queued.is_empty() {
            return;
        }
        let n = queued.len();
        let plural = if n == 1 { "event" } else { "events" };
        let source = Some(self.source_name(v));
        if queued.iter().all(|e| e.status == EventStatus::Noop) || self.noop(v) {
            self.say(
                Level::Notice,
                source,
                format!("Would have triggered 'refresh' from {n} {plural}"),
            );
            let e = Event {
                name: "noop_restart".into(),
                status: EventStatus::Noop,
                property: None,
                previous: None,
                desired: None,
                message: String::new(),
            };
            self.queue_events(v, &[e]);
            return;
        }
        if let Vertex::Resource(node) = v {
            let path = self.path(node);
            let Some(mut p) = self.providers.remove(&node) else {
                return;
            };
            let mut cx = context(self.opts, &path);
            let result = p.refresh(&mut cx);
            let lines = std::mem::take(&mut cx.log);
            self.providers.insert(node, p);
            for l in lines {
                self.emit(l);
            }
            match result {
                Ok(()) => {
                    let message = format!("Triggered 'refresh' from {n} {plural}");
                    self.say(Level::Notice, source, message.clone());
                    let st = self.status.or_default(v);
                    st.changes += 1;
                    st.events.push(Event {
                        name: "refresh".into(),
                        status: EventStatus::Success,
                        property: None,
                        previous: None,
                        desired: None,
                        message,
                    });
                }
                Err(detail) => {
                    let message = format!("Failed to call refresh: {detail}");
                    self.say(Level::Error, source, message.clone());
                    let st = self.status.or_default(v);
                    st.failed_to_restart = true;
                    st.events.push(Event {
                        name: "refresh".into(),
                        status: EventStatus::Failure,
                        property: None,
                        previous: None,
                        desired: None,
                        message,
                    });
                    return;
                }
            }
        }
        self.status.or_default(v).restarted = true;
        let e = Event {
            name: "restarted".into(),
            status: EventStatus::Success,
            property: None,
            previous: None,
            desired: None,
            message: String::new(),
        };
        self.queue_events(v, &[e]);
    }

    /// The key a vertex's pending refreshes are stored under (see `pending`).
    fn pending_key(&self, v: Vertex) -> (String, Option<String>) {
        let reference = self.graph.nodes[v.node()].reference.to_string();
        let anchor = match v {
            Vertex::Resource(_) => None,
            Vertex::Admissible(_) => Some("admissible".to_string()),
            Vertex::Completed(_) => Some("completed".to_string()),
        };
        (reference, anchor)
    }

    fn fingerprint(&self, v: Vertex) -> String {
        self.graph.nodes[v.node()]
            .index
            .map(|i| super::pending::fingerprint(&self.catalog.resources[i]))
            .unwrap_or_default()
    }

    /// Opens the store and queues its events for their subscribers.
    fn load_pending(&mut self) {
        let Some(path) = self.opts.pending_file.clone() else {
            return;
        };
        let (tracker, deliver, warning) = Tracker::open(&path, self.opts.noop);
        self.pending = Some(tracker);
        if let Some(w) = warning {
            self.say(Level::Warning, None, w);
        }
        if deliver.is_empty() {
            self.sync_pending();
            return;
        }
        let mut keys: HashMap<(String, Option<String>), Vertex> = HashMap::default();
        for (n, node) in self.graph.nodes.iter().enumerate() {
            let vs = if node.container {
                vec![Vertex::Admissible(n), Vertex::Completed(n)]
            } else {
                vec![Vertex::Resource(n)]
            };
            for v in vs {
                keys.insert(self.pending_key(v), v);
            }
        }
        let index = crate::graph::refs::RefIndex::new(&self.catalog.resources);
        for p in deliver {
            let v = index
                .resolve(&p.resource)
                .map(|i| self.pending_key(Vertex::Resource(self.graph.node_of[i])).0)
                .and_then(|reference| keys.get(&(reference, p.anchor.clone())).copied());
            let Some(v) = v.filter(|v| self.refreshable(*v)) else {
                // An Info line: the log of the run itself stays what Puppet would print.
                self.say(
                    Level::Info,
                    None,
                    format!(
                        "Dropping {} pending refresh event(s) for {}: it is not a refreshable resource of this catalog",
                        p.events.len(),
                        p.resource
                    ),
                );
                continue;
            };
            if p.fingerprint != self.fingerprint(v) {
                self.say(
                    Level::Info,
                    None,
                    format!(
                        "Dropping {} pending refresh event(s) for {}: the resource was redefined since",
                        p.events.len(),
                        p.resource
                    ),
                );
                continue;
            }
            let name = self.graph.name(v);
            self.say(
                Level::Info,
                Some(self.source_name(v)),
                format!(
                    "Delivering {} pending refresh event(s) from an earlier run to {name}",
                    p.events.len()
                ),
            );
            let events = p.events.into_iter().map(|e| Event {
                name: e.name,
                status: EventStatus::Success,
                property: e.property,
                previous: None,
                desired: None,
                message: e.message,
            });
            self.pending_dirty = true;
            self.queues.entry(v).or_default().extend(events);
        }
        self.sync_pending();
    }

    /// Anchors whose events reach, along refresh edges, a resource that refreshes.
    fn relaying_anchors(&self) -> HashSet<Vertex> {
        let mut out = HashSet::default();
        for (n, node) in self.graph.nodes.iter().enumerate() {
            if !node.container {
                continue;
            }
            for start in [Vertex::Admissible(n), Vertex::Completed(n)] {
                let mut seen = HashSet::from_iter([start]);
                let mut stack = vec![start];
                while let Some(v) = stack.pop() {
                    for (t, l) in self.graph.out_edges(v) {
                        if !l.refresh || !seen.insert(t) {
                            continue;
                        }
                        if t.is_anchor() {
                            stack.push(t);
                        } else if self.refreshable(t) {
                            out.insert(start);
                        }
                    }
                }
            }
        }
        out
    }

    /// Takes the events queued for `v` (delivered or dropped): the store is synced again when
    /// real ones were among them.
    pub(super) fn take_queue(&mut self, v: Vertex) -> Option<Vec<Event>> {
        let q = self.queues.remove(&v)?;
        self.pending_dirty |= q.iter().any(|e| e.status == EventStatus::Success);
        Some(q)
    }

    /// Keeps the real events queued for `v` as pending: it will not take them in this run.
    fn carry(&mut self, v: Vertex) {
        if let Some(q) = self.queues.get(&v) {
            let real: Vec<Event> = q
                .iter()
                .filter(|e| e.status == EventStatus::Success)
                .cloned()
                .collect();
            self.pending_dirty |= !real.is_empty();
            self.carried.entry(v).or_default().extend(real);
        }
    }

    /// Syncs the directories whose entries this run changed (`atomic::sync_deferred_dirs`);
    /// a directory that cannot be synced is a warning: its changes are made, maybe not durable.
    fn sync_dirs(&mut self) {
        for (dir, e) in super::atomic::sync_deferred_dirs() {
            self.say(
                Level::Warning,
                None,
                format!("Could not sync directory {}: {e}", dir.display()),
            );
        }
    }

    /// Writes every real event not yet delivered (queued or carried) to the store.
    fn sync_pending(&mut self) {
        if self.pending.is_none() || !self.pending_dirty {
            return;
        }
        self.pending_dirty = false;
        // Queued and carried events of one subscriber go under one key.
        type Key = (String, Option<String>);
        let mut by_key: std::collections::BTreeMap<Key, (Vertex, Vec<PendingEvent>)> =
            std::collections::BTreeMap::new();
        let anchor_waits = |(v, q): (&Vertex, &Vec<Event>)| {
            v.is_anchor() && q.iter().any(|e| e.status == EventStatus::Success)
        };
        if self.relaying.is_none()
            && self
                .queues
                .iter()
                .chain(self.carried.iter())
                .any(anchor_waits)
        {
            self.relaying = Some(self.relaying_anchors());
        }
        for (v, q) in self.queues.iter().chain(self.carried.iter()) {
            if v.is_anchor() && !self.relaying.as_ref().is_some_and(|r| r.contains(v)) {
                continue;
            }
            for e in q.iter().filter(|e| e.status == EventStatus::Success) {
                by_key
                    .entry(self.pending_key(*v))
                    .or_insert_with(|| (*v, Vec::new()))
                    .1
                    .push(PendingEvent {
                        name: e.name.clone(),
                        property: e.property.clone(),
                        message: e.message.clone(),
                    });
            }
        }
        // The fingerprint is the definition of the resource the key names: the vertex's own
        // node (looking the reference up in the catalog again cost a pass over every
        // resource at every step of the walk).
        let now: Vec<PendingRefresh> = by_key
            .into_iter()
            .map(|((resource, anchor), (v, events))| PendingRefresh {
                fingerprint: self.fingerprint(Vertex::Resource(v.node())),
                resource,
                anchor,
                events,
            })
            .collect();
        let result = self.pending.as_mut().map(|t| t.sync(now));
        if let Some(Err(e)) = result {
            self.say(Level::Warning, None, e);
        }
    }

    /// The report of the run; takes each resource's events (the walk is over). Its `logs`
    /// stay empty: the run's log is `RunResult::log`, which a written report includes.
    fn report(&mut self, time: f64) -> Report {
        let mut summary = Summary {
            time,
            ..Summary::default()
        };
        let mut resources = Vec::new();
        for (n, node) in self.graph.nodes.iter().enumerate() {
            if node.container || node.index.is_none() {
                continue;
            }
            let v = Vertex::Resource(n);
            let st = self.status.remove(&v);
            let evaluated = st.is_some();
            let st = st.unwrap_or_default();
            let status = if st.failed || st.failed_to_restart {
                "failed"
            } else if st.skipped || (!evaluated && self.interrupted.is_some()) {
                "skipped"
            } else if st.changes > 0 {
                "changed"
            } else if st.events.iter().any(|e| e.status == EventStatus::Noop) {
                "noop"
            } else {
                "unchanged"
            };
            summary.total += 1;
            match status {
                "failed" => summary.failed += 1,
                "skipped" => summary.skipped += 1,
                "changed" => summary.changed += 1,
                "noop" => summary.noop += 1,
                _ => summary.unchanged += 1,
            }
            if st.failed_to_restart {
                summary.failed_to_restart += 1;
            }
            if st.restarted {
                summary.restarted += 1;
            }
            summary.changes += st.changes;
            summary.events += st.events.len();
            if !self.opts.report_details {
                continue;
            }
            resources.push(ResourceReport {
                resource: node.reference.to_string(),
                path: self.path(n),
                file: node.file.as_deref().map(String::from),
                line: node.line,
                status: status.into(),
                failed_to_restart: st.failed_to_restart,
                restarted: st.restarted,
                events: st
                    .events
                    .into_iter()
                    .map(|e| EventReport {
                        property: e.property,
                        name: e.name,
                        status: match e.status {
                            EventStatus::Success => "success",
                            EventStatus::Noop => "noop",
                            EventStatus::Failure => "failure",
                        }
                        .into(),
                        previous_value: e.previous,
                        desired_value: e.desired,
                        message: e.message,
                    })
                    .collect(),
                evaluation_time: st.time,
                comments: self.req.comments.get(&n).cloned().unwrap_or_default(),
                run_num: self.req.run_num.get(&n).copied(),
                start_time: self.req.started.get(&n).copied(),
            });
        }
        let status = if self.interrupted.is_some() {
            "interrupted"
        } else if summary.failed > 0 {
            "failed"
        } else if summary.changes > 0 {
            "changed"
        } else {
            "unchanged"
        };
        Report {
            status: status.into(),
            noop: self.opts.noop,
            summary,
            resources,
            logs: Vec::new(),
        }
    }
}
