//! Atomic file replacement: a temporary file in the same directory, written and fsynced, then
//! renamed over the target, then the directory fsynced.
//!
//! A reader (or a crash, or a signal) sees the old file or the new one, never a part of it.
//! The temporary file is created with `O_EXCL` (`create_new`), so a symbolic link planted at
//! its name is never followed, and with mode 0600, so nothing can read it before its final
//! mode is set.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Prefix of the temporary files (`.NAME.ordo-PID-N`), so stray ones can be recognised.
pub const TEMP_MARK: &str = ".ordo-";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a new, empty temporary file beside `path` (same directory, so the final rename is
/// atomic). Returns the open file and its path.
pub fn create_temp(path: &Path) -> io::Result<(fs::File, PathBuf)> {
    let dir = parent(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}{TEMP_MARK}{}-{n}", std::process::id()));
        match fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
        {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("could not create a temporary file")))
}

/// Renames the temporary file over `path` and fsyncs the directory, so the rename itself is
/// durable. Removes the temporary file if the rename fails.
pub fn commit(tmp: &Path, path: &Path) -> io::Result<()> {
    if let Err(e) = fs::rename(tmp, path) {
        let _ = fs::remove_file(tmp);
        return Err(e);
    }
    sync_dir(parent(path))
}

/// fsyncs a directory (its entries: creations, renames, removals).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Writes `bytes` to `path` atomically with `mode`.
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let (mut f, tmp) = create_temp(path)?;
    let written = f
        .write_all(bytes)
        .and_then(|_| f.set_permissions(fs::Permissions::from_mode(mode)))
        .and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    commit(&tmp, path)
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        Some(_) => Path::new("."),
        None => Path::new("/"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_atomically_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        fs::write(&p, "old").unwrap();
        write_file(&p, b"new", 0o640).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o640
        );
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn never_follows_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let p = dir.path().join("f");
        // Plant links at the next temporary names this process would use.
        let next = COUNTER.load(Ordering::Relaxed);
        for n in next..next + 8 {
            let tmp = dir
                .path()
                .join(format!(".f{TEMP_MARK}{}-{n}", std::process::id()));
            std::os::unix::fs::symlink(&victim, tmp).unwrap();
        }
        write_file(&p, b"new", 0o644).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
    }
}
