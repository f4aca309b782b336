//! Ordo's state directory (`--state-dir`, default `/var/lib/ordo`): what a run leaves for the
//! next one on this machine.
//!
//! - `apply.lock`: held while a run is going on (see `lock`), with the holder's pid;
//! - `clientbucket/`: replaced and removed file content (see `bucket`; `--bucket` overrides);
//! - `pending/<digest>.json`: refresh events a subscriber has not received yet because the
//!   run failed or was interrupted first (see `pending`), one file per configuration (the
//!   manifest or catalog that was applied), so that trying another manifest on the same
//!   machine never delivers a refresh owed by a different configuration.

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

    /// The pending-refresh store of the configuration read from `input`.
    pub fn pending_path(&self, input: &Path) -> PathBuf {
        let key = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
        let digest = crate::graph::digest::sha256(key.to_string_lossy().as_bytes());
        let name = crate::graph::digest::hex(&digest)[..16].to_string();
        self.root.join("pending").join(format!("{name}.json"))
    }
}

impl Default for StateDir {
    fn default() -> StateDir {
        StateDir::new(DEFAULT_STATE_DIR)
    }
}
