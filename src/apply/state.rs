//! Ordo's state directory (`--state-dir`, default `/var/lib/ordo`): what a run leaves for the
//! next one on this machine.
//!
//! - `apply.lock`: held while a run is going on (see `lock`), with the holder's pid;
//! - `clientbucket/`: replaced and removed file content (see `bucket`; `--bucket` overrides);
//! - `pending/<digest>.json`: refresh events a subscriber has not received yet because the
//!   run failed or was interrupted first (see `pending`), one file per configuration (the
//!   manifest or catalog that was applied), so that trying another manifest on the same
//!   machine never delivers a refresh owed by a different configuration.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
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

    /// Creates the directory (private: 0700) if it does not exist yet, and refuses one that
    /// others could write to: whoever can write there could plant a lock, a pending refresh
    /// or a backup for the next run (as sshd refuses a group- or world-writable `~/.ssh`).
    /// Temporary files an interrupted run left behind are removed (the caller holds no lock
    /// yet, so only those of processes that are gone).
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
            })?;
        let m = std::fs::metadata(&self.root).map_err(|e| {
            format!(
                "Could not read the state directory {}: {e}",
                self.root.display()
            )
        })?;
        let me = rustix::process::geteuid().as_raw();
        if m.mode() & 0o022 != 0 || (m.uid() != me && m.uid() != 0) {
            return Err(format!(
                "The state directory {} is writable by others (mode {:04o}, owner {}); refusing to use it: make it private (chmod 0700, owned by the user running ordo) or choose another with --state-dir",
                self.root.display(),
                m.mode() & 0o7777,
                m.uid()
            ));
        }
        remove_leftovers(&self.root, 3);
        Ok(())
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

/// Removes the temporary files (`atomic::TEMP_MARK`) of runs that ended before they could
/// rename them (`kill -9`, a power cut) from `dir` and its subdirectories, `depth` deep;
/// links are never followed. A file whose writer is still alive (its pid, in the name, is a
/// running process) is left alone.
fn remove_leftovers(dir: &Path, depth: u32) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(t) = e.file_type() else { continue };
        let name = e.file_name();
        let name = name.to_string_lossy();
        if t.is_dir() && depth > 0 {
            remove_leftovers(&e.path(), depth - 1);
        } else if t.is_file() && writer_is_gone(&name) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Is `name` a temporary file (`.NAME.ordo-PID-N`) whose process no longer runs?
pub fn writer_is_gone(name: &str) -> bool {
    let Some((_, rest)) = name.rsplit_once(crate::apply::atomic::TEMP_MARK) else {
        return false;
    };
    let Some((pid, n)) = rest.split_once('-') else {
        return false;
    };
    let (Ok(pid), true) = (pid.parse::<u32>(), n.bytes().all(|b| b.is_ascii_digit())) else {
        return false;
    };
    name.starts_with('.')
        && pid != std::process::id()
        && !Path::new(&format!("/proc/{pid}")).exists()
}

/// Reads a file of the state directory (or the bucket) without following a symbolic link
/// planted at its name and without blocking on a FIFO: anything but a regular file is an
/// error.
pub fn read_private(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    let mut out = Vec::new();
    f.read_to_end(&mut out)?;
    Ok(out)
}

/// [`read_private`] as text.
pub fn read_private_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_private(path)?).map_err(std::io::Error::other)
}

impl Default for StateDir {
    fn default() -> StateDir {
        StateDir::new(DEFAULT_STATE_DIR)
    }
}
