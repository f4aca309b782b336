//! Checking ahead: new files made durable in batches.
//!
//! A plain walk fsyncs every new file before its rename, one resource after the other, so a
//! first run waits for one device flush per file. Instead, while the ready resources are
//! files whose convergence is only a new file's content (or nothing), notifies and anchors,
//! the runner checks them ahead: the content goes to a temporary file (`Provider::stage`) and
//! the vertex is deferred, with nothing of its outcome applied to the run yet. At a flush
//! (before any other resource is evaluated, after `MAX_STAGED` files, at the end of the run
//! or on a signal) every staged file is made durable at once (`atomic::sync_staged`), and then the
//! deferred vertices are evaluated in walk order exactly as the walk would have: failures of
//! their dependencies propagate (a dependent whose dependency failed is skipped, and its
//! temporary file removed), each staged file is renamed into place (or its resource fails
//! with the message a plain write gives), and its log lines and events follow; the pending
//! refreshes the batch sent are recorded once, after it. The log, the report and the events
//! are those of a plain walk.
//!
//! Checking ahead must not see anything a plain walk would not: a vertex is deferred only if
//! no dependency has failed, nothing it manages or reads can be a staged target
//! (`apply::stage`), and it has no schedule, no requisite decided at run time, no run control
//! and no noop, and none of its events are waiting (see `deferrable`).

use super::{context, Applied, Deferred, Run, MAX_STAGED};
use crate::apply::atomic::{self, Staged};
use crate::apply::providers::{file, ChangeResult, Provider};
use crate::apply::stage::StagePaths;
use crate::graph::Vertex;
use petgraph::Direction;
use std::time::Instant;

/// A resource's provider and its path, to stage on a worker thread.
type Job = (Box<dyn Provider>, String);

impl Run<'_> {
    /// Checks the batch ahead if it can be; false when it must be evaluated now (after a
    /// flush).
    pub(super) fn defer_batch(&mut self, batch: &[Vertex]) -> bool {
        let mut paths = Vec::new();
        for &v in batch {
            match self.deferrable(v) {
                Some(p) => paths.push(p),
                None => return false,
            }
        }
        // What each vertex of the batch writes, as noted in the stage set.
        let mut claimed = crate::fxhash::FxHashMap::default();
        for (&v, p) in batch.iter().zip(&paths) {
            let Some(p) = p else { continue };
            match self.staged.claim(p) {
                None => return false,
                Some(Some(written)) => {
                    claimed.insert(v, written);
                }
                Some(None) => {}
            }
        }
        let mut jobs: Vec<(Vertex, Option<Job>)> = Vec::new();
        for &v in batch {
            let provider = match v {
                Vertex::Resource(n) => self.providers.remove(&n).map(|p| (p, self.path(n))),
                _ => None,
            };
            jobs.push((v, provider));
        }
        let opts = std::sync::Arc::clone(&self.shared_opts);
        let work = move |(v, job): (Vertex, Option<Job>)| {
            let Some((mut p, path)) = job else {
                return (v, None, Some((None, None)));
            };
            let t = Instant::now();
            let mut cx = context(&opts, &path);
            let staged = p.stage(&mut cx).map(|(changes, staged)| {
                let applied = Applied {
                    outcome: Ok(changes),
                    log: std::mem::take(&mut cx.log),
                    time: t.elapsed().as_secs_f64(),
                    comments: Vec::new(),
                };
                (Some(applied), staged)
            });
            (v, Some(p), staged)
        };
        let results = self.pool.run(jobs, work);
        let mut declined = false;
        let mut deferred = Vec::new();
        for (v, p, staged) in results {
            if let (Vertex::Resource(n), Some(p)) = (v, p) {
                self.providers.insert(n, p);
            }
            match staged {
                Some((applied, staged)) => deferred.push(Deferred { v, applied, staged }),
                None => declined = true,
            }
        }
        if declined {
            // Nothing of this batch was applied: its temporary files go, and it is evaluated
            // the plain way.
            for d in deferred {
                if let Some(s) = d.staged {
                    s.discard();
                }
            }
            return false;
        }
        for d in &deferred {
            self.deferred_set.insert(d.v);
            self.deferred_staged += usize::from(d.staged.is_some());
            if let (None, Some(written)) = (&d.staged, claimed.get(&d.v)) {
                self.staged.release(written);
            }
        }
        self.deferred.extend(deferred);
        if self.deferred_staged >= MAX_STAGED {
            self.flush();
        }
        true
    }

    /// What `v` writes and reads, if it can be checked ahead (see the module's comment).
    fn deferrable(&self, v: Vertex) -> Option<Option<StagePaths>> {
        if self.queues.get(&v).is_some_and(|q| !q.is_empty()) {
            return None;
        }
        for d in self.graph.adjacent(v, Direction::Incoming) {
            if crate::apply::requisites::soft_edge(self.graph, d, v) {
                return None;
            }
            if self.deferred_set.contains(&d) {
                continue;
            }
            let st = self.status.get(&d)?;
            if st.failed || st.failed_to_restart || !st.failed_deps.is_empty() {
                return None;
            }
        }
        let Vertex::Resource(n) = v else {
            return Some(None);
        };
        let i = self.graph.nodes[n].index?;
        // A resource that --tags or --skip_tags leave out goes through the walk, which
        // skips it.
        if self.noop(v)
            || self.tag_excluded(v)
            || !self.req.plain(n)
            || crate::apply::schedule::wanted(&self.catalog.resources[i]).is_some()
        {
            return None;
        }
        self.providers
            .get(&n)?
            .stage_paths(&self.opts.modulepath)
            .map(Some)
    }

    /// Makes the staged files durable at once, then evaluates the deferred vertices in order
    /// as the walk would have (see the module's comment).
    pub(super) fn flush(&mut self) {
        self.staged.clear();
        if self.deferred.is_empty() {
            return;
        }
        let deferred = std::mem::take(&mut self.deferred);
        self.deferred_set.clear();
        self.deferred_staged = 0;
        let staged: Vec<&Staged> = deferred.iter().filter_map(|d| d.staged.as_ref()).collect();
        let mut synced = atomic::sync_staged(&staged).into_iter();
        for d in deferred {
            let sync = d
                .staged
                .as_ref()
                .map(|_| synced.next().expect("one result each"));
            let v = d.v;
            if self.req.stopped_by.is_some() {
                // failhard: the run ended before this vertex.
                if let Some(s) = d.staged {
                    s.discard();
                }
                continue;
            }
            self.propagate_failure(v);
            self.number(v);
            if !self.scheduled(v) || self.skip(v) || !self.requisites_allow(v) {
                if let Some(s) = d.staged {
                    s.discard();
                }
                continue;
            }
            let mut applied = d.applied;
            if let (Some(s), Some(sync)) = (d.staged, sync) {
                if let Err(e) = file::commit_staged(s, sync) {
                    fail_staged(applied.as_mut(), e);
                }
            }
            self.finish_apply(v, applied);
            self.process_events(v);
            self.check_failhard(v);
        }
        // Once for the batch: nothing refreshes in it (no deferred vertex is refreshable), so
        // its events only add up, and recording them once after its renames (made durable
        // first) saves a store write per file.
        self.sync_pending();
    }
}

/// The staged change did not reach the disk: it failed with `message`.
fn fail_staged(applied: Option<&mut Applied>, message: String) {
    let Some(Ok(changes)) = applied.map(|a| &mut a.outcome) else {
        return;
    };
    for c in changes {
        if matches!(c.result, ChangeResult::Synced(_)) {
            c.result = ChangeResult::Failed(message.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::apply::atomic::{FAULTS, TEMP_MARK};
    use crate::apply::{apply, ApplyOptions, RunResult};
    use serde_json::{json, Value};
    use std::fs;
    use std::path::{Path, PathBuf};

    /// A catalog of `resources` (all in Class[main]).
    fn catalog(resources: &[Value]) -> crate::catalog::Catalog {
        let mut rs = vec![
            json!({"type": "Stage", "title": "main", "parameters": {"name": "main"}}),
            json!({"type": "Class", "title": "main"}),
        ];
        let mut edges = vec![json!({"source": "Stage[main]", "target": "Class[main]"})];
        for (i, r) in resources.iter().enumerate() {
            let mut r = r.clone();
            r["line"] = json!(i + 1);
            r["file"] = json!("site.pp");
            let reference = format!(
                "{}[{}]",
                r["type"].as_str().unwrap(),
                r["title"].as_str().unwrap()
            );
            edges.push(json!({"source": "Class[main]", "target": reference}));
            rs.push(r);
        }
        let text = json!({"resources": rs, "edges": edges}).to_string();
        crate::cli::catalog_file::parse_catalog("t.json", &text).unwrap()
    }

    fn file(path: &Path, content: &str, extra: Value) -> Value {
        let mut params = json!({"ensure": "file", "content": content});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        json!({"type": "File", "title": path.to_str().unwrap(), "parameters": params})
    }

    fn run(resources: &[Value], state: &Path, noop: bool) -> RunResult {
        let opts = ApplyOptions {
            noop,
            bucket_dir: state.join("bucket"),
            ..ApplyOptions::default()
        };
        apply(&catalog(resources), &opts, &mut |_| {})
    }

    /// The log and the report's resources, without times.
    fn outcome(r: &RunResult) -> (Vec<String>, Value) {
        let log = r
            .log
            .iter()
            .map(|l| format!("{:?} {:?} {}", l.level, l.source, l.message))
            .collect();
        let mut report = serde_json::to_value(&r.report).unwrap();
        for res in report["resources"].as_array_mut().unwrap() {
            let res = res.as_object_mut().unwrap();
            res.remove("evaluation_time");
            res.remove("start_time");
        }
        (log, report["resources"].clone())
    }

    fn temp_files(dir: &Path) -> Vec<PathBuf> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains(TEMP_MARK))
            .collect()
    }

    /// f0 -> f1 -> f2 -> f3, a notify after f2, an independent f4; the fault hits f1. The
    /// same catalog with `validate_cmd` on every file (which is never staged) is the plain
    /// walk to compare with.
    fn chain_with_fault(fault: &'static str) {
        let mut outcomes = Vec::new();
        for plain in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let root = fs::canonicalize(dir.path()).unwrap();
            let f = |i: usize| root.join(format!("f{i}"));
            let extra = |req: Option<usize>| {
                let mut e = json!({});
                if plain {
                    e["validate_cmd"] = json!("/bin/true %");
                }
                if let Some(r) = req {
                    e["require"] = json!(format!("File[{}]", f(r).display()));
                }
                e
            };
            let resources = vec![
                file(&f(0), "zero\n", extra(None)),
                file(&f(1), "one\n", extra(Some(0))),
                file(&f(2), "two\n", extra(Some(1))),
                json!({"type": "Notify", "title": "after", "parameters": {"require": format!("File[{}]", f(2).display())}}),
                file(&f(3), "three\n", extra(Some(2))),
                file(&f(4), "four\n", extra(None)),
            ];
            FAULTS.lock().unwrap().push((f(1), fault));
            let r = run(&resources, &root.join("state"), false);
            FAULTS.lock().unwrap().retain(|(p, _)| p != &f(1));
            assert_eq!(fs::read_to_string(f(0)).unwrap(), "zero\n");
            assert_eq!(fs::read_to_string(f(4)).unwrap(), "four\n");
            for i in 1..4 {
                assert!(!f(i).exists(), "f{i} was written");
            }
            assert_eq!(temp_files(&root), Vec::<PathBuf>::new());
            let (log, report) = outcome(&r);
            let text = log.join("\n");
            assert!(
                text.contains("Skipping because of failed dependencies"),
                "{text}"
            );
            assert!(text.contains(&format!("injected {fault} fault")), "{text}");
            assert_eq!(r.report.summary.failed, 1);
            assert_eq!(r.report.summary.skipped, 3);
            // The paths differ between the two runs: compare them relative to the root.
            let root = root.display().to_string();
            outcomes.push((
                log.join("\n").replace(&root, "ROOT"),
                report.to_string().replace(&root, "ROOT"),
            ));
        }
        assert_eq!(outcomes[0].0, outcomes[1].0);
        assert_eq!(outcomes[0].1, outcomes[1].1);
    }

    #[test]
    fn a_rename_failure_in_a_batch_skips_its_dependents_as_the_plain_walk_does() {
        chain_with_fault("rename");
    }

    #[test]
    fn an_fsync_failure_in_a_batch_skips_its_dependents_as_the_plain_walk_does() {
        chain_with_fault("sync");
    }

    #[test]
    fn a_source_that_is_a_staged_file_is_read_after_its_write() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        // Two module directories: the first one's file is written by the run, the second
        // one's exists already. A plain walk writes the first, then `b` finds it.
        let (m1, m2) = (root.join("m1/mod/files"), root.join("m2/mod/files"));
        fs::create_dir_all(&m1).unwrap();
        fs::create_dir_all(&m2).unwrap();
        fs::write(m2.join("x"), "from m2\n").unwrap();
        let a = root.join("a");
        fs::create_dir(root.join("d")).unwrap();
        // A link to `a`, dangling until `a` is written.
        std::os::unix::fs::symlink(&a, root.join("d/link")).unwrap();
        let copy = |name: &str, source: &str| {
            json!({"type": "File", "title": root.join(name).to_str().unwrap(),
                   "parameters": {"ensure": "file", "source": source}})
        };
        // No dependency between them: only the walk's order makes the writes come first.
        let resources = vec![
            file(&m1.join("x"), "from m1\n", json!({})),
            copy("e", "puppet:///modules/mod/x"),
            file(&a, "from a\n", json!({})),
            copy("b", a.to_str().unwrap()),
            file(&root.join("f"), "f\n", json!({})),
            copy("c", root.join("d/link").to_str().unwrap()),
        ];
        let opts = ApplyOptions {
            modulepath: vec![root.join("m1"), root.join("m2")],
            bucket_dir: root.join("bucket"),
            ..ApplyOptions::default()
        };
        let r = apply(&catalog(&resources), &opts, &mut |_| {});
        assert_eq!(r.report.summary.failed, 0, "{:?}", r.log);
        for name in ["b", "c"] {
            assert_eq!(fs::read_to_string(root.join(name)).unwrap(), "from a\n");
        }
        assert_eq!(fs::read_to_string(root.join("e")).unwrap(), "from m1\n");
    }

    #[test]
    fn a_batch_records_the_refreshes_it_sent_before_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let pending = root.join("pending.json");
        // f0 notifies Exec[later]; Exec[stop] fails with failhard before Exec[later] runs.
        let resources = vec![
            file(&root.join("f0"), "x", json!({"notify": "Exec[later]"})),
            file(&root.join("f1"), "y", json!({})),
            json!({"type": "Exec", "title": "stop", "parameters": {"command": "/bin/false", "failhard": true}}),
            json!({"type": "Exec", "title": "later", "parameters": {"command": "/bin/true", "refreshonly": true}}),
        ];
        let opts = ApplyOptions {
            bucket_dir: root.join("bucket"),
            pending_file: Some(pending.clone()),
            ..ApplyOptions::default()
        };
        let r = apply(&catalog(&resources), &opts, &mut |_| {});
        assert_eq!(r.report.summary.changed, 2, "{:?}", r.log);
        let store = fs::read_to_string(&pending).unwrap();
        assert!(store.contains("Exec[later]"), "{store}");
    }

    #[test]
    fn noop_stages_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let resources: Vec<Value> = (0..5)
            .map(|i| file(&root.join(format!("f{i}")), "x", json!({})))
            .collect();
        let r = run(&resources, &root.join("state"), true);
        assert_eq!(r.report.summary.noop, 5);
        let left: Vec<_> = fs::read_dir(&root).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn more_files_than_one_flush_holds_are_all_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let n = super::MAX_STAGED * 2 + 3;
        let resources: Vec<Value> = (0..n)
            .map(|i| file(&root.join(format!("f{i}")), &format!("{i}\n"), json!({})))
            .collect();
        let r = run(&resources, &root.join("state"), false);
        assert_eq!(r.report.summary.changed, n);
        for i in 0..n {
            assert_eq!(
                fs::read_to_string(root.join(format!("f{i}"))).unwrap(),
                format!("{i}\n")
            );
        }
        assert!(temp_files(&root).is_empty());
    }
}
