//! Pending refreshes: refresh events that survive a failed or interrupted run.
//!
//! When a resource changes, its events are queued for the resources that subscribe to it;
//! they refresh when the walk reaches them. If the run stops first (a signal, a crash, a
//! failed dependency that skips the subscriber), the change has happened but the refresh has
//! not, and the next run would see nothing to do: the service would keep running with the old
//! configuration. So the queued events are written to `STATE_DIR/pending/<digest>.json` (one
//! store per applied configuration, see `state`)
//! after every step of the walk, keyed by the subscriber's reference (`Service[nginx]`, or a
//! container's anchor), and the next run delivers them as refresh events when it evaluates
//! that resource. An entry is cleared once its refresh ran (whether the refresh succeeded or
//! not, as Puppet does for events of the same run). A noop run delivers nothing and clears
//! nothing. Entries whose resource is no longer in the catalog are dropped with a warning.

use super::atomic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One event waiting for its subscriber.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingEvent {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    #[serde(default)]
    pub message: String,
}

/// The events waiting for one subscriber.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRefresh {
    /// The subscriber's reference, `Type[title]`.
    pub resource: String,
    /// For a container: which of its anchors (`admissible` or `completed`) had the events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// The subscriber's definition (see `fingerprint`): events are delivered only to the same
    /// resource, not to another that happens to have the same reference.
    #[serde(default)]
    pub fingerprint: String,
    pub events: Vec<PendingEvent>,
}

/// A digest of a resource's definition: type, title and parameters other than relationships
/// (adding or removing a `notify` does not make it another resource).
pub fn fingerprint(r: &crate::catalog::Resource) -> String {
    let params: Vec<(&String, &serde_json::Value)> = r
        .parameters
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "before" | "require" | "notify" | "subscribe"))
        .collect();
    let text = serde_json::to_string(&(r.type_name.to_ascii_lowercase(), &r.title, params))
        .expect("parameters serialise");
    crate::graph::digest::hex(&crate::graph::digest::sha256(text.as_bytes()))[..16].to_string()
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingStore {
    pub version: u32,
    pub pending: Vec<PendingRefresh>,
}

/// Reads the store. A missing file is an empty store; an unreadable one is moved aside (and
/// the returned warning says where), so that it cannot block every later run.
pub fn load(path: &Path) -> (PendingStore, Option<String>) {
    let text = match super::state::read_private_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (PendingStore::default(), None)
        }
        Err(e) => {
            return (
                PendingStore::default(),
                Some(format!(
                    "Could not read pending refreshes {}: {e}",
                    path.display()
                )),
            )
        }
    };
    match serde_json::from_str::<PendingStore>(&text) {
        Ok(s) => (s, None),
        Err(e) => {
            let aside = path.with_extension("json.corrupt");
            let _ = std::fs::rename(path, &aside);
            (
                PendingStore::default(),
                Some(format!(
                    "Ignoring unreadable pending refreshes {} ({e}); moved to {}",
                    path.display(),
                    aside.display()
                )),
            )
        }
    }
}

/// Writes the store atomically (removes the file when nothing is pending), after the
/// directories whose entries the run changed are synced (what the store describes is durable
/// before it; the store's content is synced in the same pass, see
/// `atomic::write_file_after_deferred`). Returns the directories that could not be synced.
///
/// A removal (every refresh delivered) is only noted for the run's directory syncs: a power
/// failure before them can bring the delivered entries back, and the next run delivers them
/// once more, as it sends the events of a change such a failure undid once more.
fn save(path: &Path, store: &PendingStore) -> std::io::Result<Vec<(PathBuf, std::io::Error)>> {
    if store.pending.is_empty() {
        let unsynced = atomic::sync_deferred_dirs();
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => {
                if let Some(dir) = path.parent() {
                    atomic::defer_dir_sync(dir);
                }
                Ok(unsynced)
            }
        };
    }
    let text = serde_json::to_string_pretty(store).expect("pending refreshes serialise");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    atomic::write_file_after_deferred(path, text.as_bytes(), 0o600)
}

/// The store of one run: what was loaded, and what was last written.
#[derive(Debug)]
pub struct Tracker {
    path: PathBuf,
    /// A noop run reads but never writes.
    read_only: bool,
    written: PendingStore,
}

impl Tracker {
    /// Opens the store; returns the tracker, the refreshes to deliver and a warning, if any.
    pub fn open(path: &Path, read_only: bool) -> (Tracker, Vec<PendingRefresh>, Option<String>) {
        let (store, warning) = load(path);
        let deliver = store.pending.clone();
        (
            Tracker {
                path: path.to_path_buf(),
                read_only,
                written: store,
            },
            deliver,
            warning,
        )
    }

    /// Makes the store hold exactly `now` (in a stable order). Writes only when it changed.
    pub fn sync(&mut self, mut now: Vec<PendingRefresh>) -> Result<(), String> {
        if self.read_only {
            return Ok(());
        }
        now.retain(|p| !p.events.is_empty());
        now.sort_by(|a, b| (&a.resource, &a.anchor).cmp(&(&b.resource, &b.anchor)));
        let store = PendingStore {
            version: 1,
            pending: now,
        };
        if store.pending == self.written.pending {
            return Ok(());
        }
        // What the store describes (the changes that sent the events) is durable before it.
        let unsynced = save(&self.path, &store).map_err(|e| {
            format!(
                "Could not write pending refreshes {}: {e}",
                self.path.display()
            )
        })?;
        self.written = store;
        match unsynced.first() {
            Some((dir, e)) => Err(format!("Could not sync directory {}: {e}", dir.display())),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refresh(r: &str) -> PendingRefresh {
        PendingRefresh {
            resource: r.into(),
            anchor: None,
            fingerprint: String::new(),
            events: vec![PendingEvent {
                name: "content_changed".into(),
                property: Some("content".into()),
                message: "content changed".into(),
            }],
        }
    }

    #[test]
    fn store_round_trip_and_clear() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pending_refreshes.json");
        let (mut t, deliver, warn) = Tracker::open(&p, false);
        assert!(deliver.is_empty() && warn.is_none());
        t.sync(vec![refresh("Service[b]"), refresh("Exec[a]")])
            .unwrap();
        let (_, deliver, _) = Tracker::open(&p, false);
        let names: Vec<_> = deliver.iter().map(|d| d.resource.as_str()).collect();
        assert_eq!(names, ["Exec[a]", "Service[b]"]);
        t.sync(Vec::new()).unwrap();
        assert!(!p.exists());
    }

    #[test]
    fn read_only_never_writes_and_corrupt_is_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pending_refreshes.json");
        let (mut t, _, _) = Tracker::open(&p, true);
        t.sync(vec![refresh("Exec[a]")]).unwrap();
        assert!(!p.exists());
        std::fs::write(&p, "{not json").unwrap();
        let (_, deliver, warn) = Tracker::open(&p, false);
        assert!(deliver.is_empty());
        assert!(warn.unwrap().contains("moved to"));
        assert!(p.with_extension("json.corrupt").exists());
    }
}
