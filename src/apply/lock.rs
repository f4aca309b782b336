//! One apply at a time on a machine: an exclusive lock on `STATE_DIR/apply.lock`.
//!
//! The lock is the kernel's (`flock`, through std's `File::try_lock`), so it goes away with
//! the process however it ends: a crashed run never leaves a stale lock. The holder writes its
//! pid into the file so that a refused run can name it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Held for the whole run; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct ApplyLock {
    file: File,
    path: PathBuf,
}

impl ApplyLock {
    /// Takes the lock, or says who holds it.
    pub fn acquire(path: &Path) -> Result<ApplyLock, String> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            // A link planted at the lock's name is never followed (nor a FIFO waited on).
            .custom_flags(
                (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
            )
            .open(path)
            .map_err(|e| format!("Could not open the lock {}: {e}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                let holder = if pid.is_empty() {
                    "pid unknown".to_string()
                } else {
                    format!("pid {pid}")
                };
                return Err(format!(
                    "Another ordo apply is already running ({holder}; lock {}); not applying. Try again when it has finished",
                    path.display()
                ));
            }
            Err(TryLockError::Error(e)) => {
                return Err(format!("Could not lock {}: {e}", path.display()))
            }
        }
        let written = file
            .set_len(0)
            .and_then(|_| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .and_then(|_| file.sync_all());
        if let Err(e) = written {
            return Err(format!("Could not write the lock {}: {e}", path.display()));
        }
        Ok(ApplyLock {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ApplyLock {
    fn drop(&mut self) {
        // The pid of a finished run would only mislead; the lock itself goes with the file.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_with_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("apply.lock");
        let held = ApplyLock::acquire(&p).unwrap();
        let err = ApplyLock::acquire(&p).unwrap_err();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(held);
        let again = ApplyLock::acquire(&p).unwrap();
        assert_eq!(again.path(), p);
    }
}
