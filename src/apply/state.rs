//! Ordo's state directory (`--state-dir`, default `/var/lib/ordo`): what a run leaves for the
//! next one on this machine.
//!
//! - `apply.lock`: held while a run is going on (see `lock`), with the holder's pid;
//! - `clientbucket/`: replaced and removed file content (see `bucket`; `--bucket` overrides);
//! - `pending_refreshes.json`: refresh events a subscriber has not received yet because the
//!   run failed or was interrupted first (see `pending`).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

pub const DEFAULT_STATE_DIR: &str = "/var/lib/ordo";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    pub fn new(root: impl Into<PathBuf>) -> StateDir {
        StateDir { root: root.into() }
    }

    /// Creates the directory (private: 0700) if it does not exist yet.
    pub fn create(&self) -> Result<(), String> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.root)
            .map_err(|e| {
                format!(
                    "Could not create the state directory {}: {e} (choose another with --state-dir)",
                    self.root.display()
                )
            })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn bucket_dir(&self) -> PathBuf {
        self.root.join("clientbucket")
    }

    pub fn lock_path(&self) -> PathBuf {
        self.root.join("apply.lock")
    }

    pub fn pending_path(&self) -> PathBuf {
        self.root.join("pending_refreshes.json")
    }
}

impl Default for StateDir {
    fn default() -> StateDir {
        StateDir::new(DEFAULT_STATE_DIR)
    }
}
