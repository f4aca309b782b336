//! Atomic file replacement: a temporary file in the same directory, written and fsynced, then
//! renamed over the target, then the directory fsynced.
//!
//! A reader (or a crash, or a signal) sees the old file or the new one, never a part of it.
//! [`commit`] syncs the directory at once (the state directory, the bucket, reports);
//! [`commit_deferred`] only notes it, and [`sync_deferred_dirs`] syncs each noted directory
//! once (the runner calls it before it records state and at the end of a run). The file's
//! data is fsynced before its rename in both cases, so deferring the directory sync can lose
//! only the rename itself, to a power failure or a kernel crash before the sync: the old
//! file (complete) is then found instead of the new one (complete), never a part of either.
//! The temporary file is created with `O_EXCL` (`create_new`), so a symbolic link planted at
//! its name is never followed, and with mode 0600, so nothing can read it before its final
//! mode is set.

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Prefix of the temporary files (`.NAME.ordo-PID-N`), so stray ones can be recognised.
pub const TEMP_MARK: &str = ".ordo-";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Directories whose entries changed (a rename, a creation, a removal) and are not synced yet.
static DEFERRED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// This process's id, asked of the kernel once.
fn pid() -> u32 {
    static PID: OnceLock<u32> = OnceLock::new();
    *PID.get_or_init(std::process::id)
}

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
        let tmp = dir.join(format!(".{name}{TEMP_MARK}{}-{n}", pid()));
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

/// Renames the temporary file over `path` and notes its directory for
/// [`sync_deferred_dirs`]. Removes the temporary file if the rename fails.
pub fn commit_deferred(tmp: &Path, path: &Path) -> io::Result<()> {
    if let Err(e) = injected(path, "rename").and_then(|_| fs::rename(tmp, path)) {
        let _ = fs::remove_file(tmp);
        return Err(e);
    }
    defer_dir_sync(parent(path));
    Ok(())
}

/// fsyncs the new content of `target` (its temporary file `f`).
pub fn sync_file(f: &fs::File, target: &Path) -> io::Result<()> {
    injected(target, "sync")?;
    f.sync_all()
}

/// Faults the unit tests inject: the fsync (`"sync"`) or the rename (`"rename"`) of new
/// content for a path fails.
#[cfg(test)]
pub static FAULTS: Mutex<Vec<(PathBuf, &'static str)>> = Mutex::new(Vec::new());

#[cfg(test)]
fn injected(target: &Path, what: &str) -> io::Result<()> {
    let faults = FAULTS.lock().unwrap_or_else(|e| e.into_inner());
    if faults.iter().any(|(p, w)| p == target && *w == what) {
        return Err(io::Error::other(format!("injected {what} fault")));
    }
    Ok(())
}

#[cfg(not(test))]
fn injected(_target: &Path, _what: &str) -> io::Result<()> {
    Ok(())
}

/// Notes that an entry of `dir` was created, renamed or removed: [`sync_deferred_dirs`]
/// makes it durable.
pub fn defer_dir_sync(dir: &Path) {
    let mut dirs = DEFERRED.lock().unwrap_or_else(|e| e.into_inner());
    if !dirs.contains(dir) {
        dirs.insert(dir.to_path_buf());
    }
}

/// Syncs every directory noted since the last call, each once: one `syncfs` per filesystem
/// holding several of them where that is durable, else an fsync each, several at once (see
/// [`sync_staged`]). Returns the directories that could not be synced, with the error (a
/// directory removed since is not an error).
pub fn sync_deferred_dirs() -> Vec<(PathBuf, io::Error)> {
    sync_deferred_dirs_with(None).0
}

/// [`sync_deferred_dirs`], syncing `also` in the same pass; returns the directories that
/// could not be synced and the result for `also`.
fn sync_deferred_dirs_with(also: Option<&fs::File>) -> (Vec<(PathBuf, io::Error)>, io::Result<()>) {
    let dirs: Vec<PathBuf> =
        std::mem::take(&mut *DEFERRED.lock().unwrap_or_else(|e| e.into_inner()))
            .into_iter()
            .collect();
    let mut failed = Vec::new();
    let mut open = Vec::with_capacity(dirs.len());
    for (i, d) in dirs.iter().enumerate() {
        match fs::File::open(d) {
            Ok(f) => open.push((i, f)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => failed.push((i, e)),
        }
    }
    let mut files: Vec<(usize, &fs::File)> = open.iter().map(|(i, f)| (*i, f)).collect();
    // `also` goes under an index past the directories'.
    files.extend(also.map(|f| (dirs.len(), f)));
    let mut also_synced = Ok(());
    for (i, r) in sync_files(&files) {
        match r {
            Err(e) if i == dirs.len() => also_synced = Err(e),
            Err(e) => failed.push((i, e)),
            Ok(()) => {}
        }
    }
    failed.sort_by_key(|(i, _)| *i);
    let failed = failed
        .into_iter()
        .map(|(i, e)| (dirs[i].clone(), e))
        .collect();
    (failed, also_synced)
}

/// Writes `bytes` to `path` atomically with `mode`, after the directories noted for
/// [`sync_deferred_dirs`] are synced: the new content and those directories are made durable
/// together (one `syncfs` where that is durable, see [`sync_staged`]), then the rename, then
/// `path`'s directory. Returns the directories that could not be synced, as
/// [`sync_deferred_dirs`] does, or the error of the write itself.
pub fn write_file_after_deferred(
    path: &Path,
    bytes: &[u8],
    mode: u32,
) -> io::Result<Vec<(PathBuf, io::Error)>> {
    let (f, tmp) = write_temp(path, bytes, mode)?;
    let (unsynced, synced) = sync_deferred_dirs_with(Some(&f));
    drop(f);
    if let Err(e) = synced {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    commit(&tmp, path)?;
    Ok(unsynced)
}

/// fsyncs a directory (its entries: creations, renames, removals).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// New content written to a temporary file beside its target and not yet synced or renamed:
/// the runner makes a batch of them durable at once ([`sync_staged`]), then commits each
/// ([`Staged::commit`]) or, when the resource must not be applied after all, discards it.
/// The file is closed once written (a batch of thousands would otherwise hold thousands of
/// descriptors): a sync goes through its filesystem (`syncfs`), or reopens it to fsync it.
pub struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    /// The filesystem the temporary file is on (`st_dev`); `None` when unknown.
    dev: Option<u64>,
    /// Whether `syncfs` on that filesystem is durable (see [`syncfs_is_durable`]).
    syncfs_durable: bool,
}

impl Staged {
    /// Takes the written temporary file `tmp` (open as `file`, closed here) for `target`.
    pub fn new(file: fs::File, tmp: PathBuf, target: PathBuf) -> Staged {
        use std::os::unix::fs::MetadataExt;
        let dev = file.metadata().ok().map(|m| m.dev());
        let syncfs_durable = dev.is_some() && syncfs_is_durable(&file);
        Staged {
            tmp,
            target,
            dev,
            syncfs_durable,
        }
    }

    /// The path the content is for.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// fsyncs the temporary file through a new descriptor (the data and the inode are the
    /// file's, whichever descriptor asks).
    fn fsync(&self) -> io::Result<()> {
        fs::File::open(&self.tmp)?.sync_all()
    }

    /// Renames the (synced) temporary file over its target, noting the directory for
    /// [`sync_deferred_dirs`]; removes the temporary file if the rename fails.
    pub fn commit(self) -> io::Result<()> {
        commit_deferred(&self.tmp, &self.target)
    }

    /// Removes the temporary file: the target is left as it was.
    pub fn discard(self) {
        let _ = fs::remove_file(&self.tmp);
    }
}

/// Makes every staged file's content durable. The results are in the order of `staged`.
///
/// Files on a filesystem whose `syncfs(2)` is known to write every dirty inode and flush the
/// device ([`syncfs_is_durable`]) are synced with one `syncfs` per filesystem when there are
/// several: each block (data, inode tables, directories) is written once and the device
/// flushed once, where an fsync per file writes its inode's table block and (on ext4 without
/// a journal) its directory again for every file and flushes the device each time. Alone on
/// its filesystem, on another filesystem, or when `syncfs` fails, each file is fsynced (the
/// fsync reports that file's own error), several at once.
pub fn sync_staged(staged: &[&Staged]) -> Vec<io::Result<()>> {
    let mut results: Vec<Option<io::Result<()>>> = staged
        .iter()
        .map(|s| injected(&s.target, "sync").err().map(Err))
        .collect();
    let mut by_dev: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut alone: Vec<usize> = Vec::new();
    for (i, s) in staged.iter().enumerate() {
        if results[i].is_some() {
            continue;
        }
        match s.dev.filter(|_| s.syncfs_durable) {
            Some(dev) => match by_dev.iter_mut().find(|(d, _)| *d == dev) {
                Some((_, group)) => group.push(i),
                None => by_dev.push((dev, vec![i])),
            },
            None => alone.push(i),
        }
    }
    for (_, group) in by_dev {
        let synced = group.len() > 1
            && fs::File::open(parent(&staged[group[0]].tmp))
                .is_ok_and(|dir| rustix::fs::syncfs(&dir).is_ok());
        if synced {
            for i in group {
                results[i] = Some(Ok(()));
            }
        } else {
            // The fsync of each file reports its own error (a failed syncfs leaves the
            // files' write errors for their fsyncs to report).
            alone.extend(group);
        }
    }
    let synced = each_at_once(&alone, |&i| staged[i].fsync());
    for (i, r) in alone.into_iter().zip(synced) {
        results[i] = Some(r);
    }
    results
        .into_iter()
        .map(|r| r.expect("one result each"))
        .collect()
}

/// At most this many fsyncs wait at once in [`each_at_once`].
const SYNC_THREADS: usize = 32;

/// Syncs the open files (each with its caller's index): one `syncfs` per filesystem holding
/// several of them when that is durable there (see [`sync_staged`]), else an fsync each.
fn sync_files<'a>(files: &[(usize, &'a fs::File)]) -> Vec<(usize, io::Result<()>)> {
    use std::os::unix::fs::MetadataExt;
    let mut by_dev: Vec<(u64, Vec<(usize, &'a fs::File)>)> = Vec::new();
    let mut alone: Vec<(usize, &'a fs::File)> = Vec::new();
    for &(i, f) in files {
        match f.metadata() {
            Ok(m) => match by_dev.iter_mut().find(|(d, _)| *d == m.dev()) {
                Some((_, group)) => group.push((i, f)),
                None => by_dev.push((m.dev(), vec![(i, f)])),
            },
            Err(_) => alone.push((i, f)),
        }
    }
    let mut done = Vec::with_capacity(files.len());
    for (_, group) in by_dev {
        let first = group[0].1;
        if group.len() > 1 && syncfs_is_durable(first) && rustix::fs::syncfs(first).is_ok() {
            done.extend(group.into_iter().map(|(i, _)| (i, Ok(()))));
        } else {
            // The fsync of each file reports its own error (a failed syncfs leaves the
            // files' write errors for their fsyncs to report).
            alone.extend(group);
        }
    }
    let synced = each_at_once(&alone, |(_, f)| f.sync_all());
    done.extend(alone.iter().map(|(i, _)| *i).zip(synced));
    done
}

/// Does `syncfs(2)` on the filesystem holding `f` write back every dirty inode and flush the
/// device cache, as an fsync of each file would? True for the local filesystems whose
/// `sync_fs` does (ext2/3/4, XFS, Btrfs) and for tmpfs (nothing to write); false elsewhere
/// (network and FUSE filesystems, where only an fsync is sure to reach the server's disk).
fn syncfs_is_durable(f: &fs::File) -> bool {
    const EXT234: u64 = 0xEF53;
    const XFS: u64 = 0x5846_5342;
    const BTRFS: u64 = 0x9123_683E;
    const TMPFS: u64 = 0x0102_1994;
    rustix::fs::fstatfs(f)
        .ok()
        .and_then(|s| u64::try_from(s.f_type).ok())
        .is_some_and(|t| [EXT234, XFS, BTRFS, TMPFS].contains(&t))
}

/// `wait` on every item, up to [`SYNC_THREADS`] at once (the calls wait on the device, not
/// on the CPU); results in the order of `items`.
fn each_at_once<T: Sync, R: Send>(items: &[T], wait: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() <= 1 {
        return items.iter().map(wait).collect();
    }
    let next = AtomicU64::new(0);
    let threads = items.len().min(SYNC_THREADS);
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        let Some(item) = items.get(i) else { break };
                        done.push((i, wait(item)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("an fsync thread panicked"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Writes `bytes` to `path` atomically with `mode`.
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (f, tmp) = write_temp(path, bytes, mode)?;
    let synced = f.sync_all();
    drop(f);
    if let Err(e) = synced {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    commit(&tmp, path)
}

/// Writes what `from` reads to `path` atomically with `mode`, in pieces (never the whole
/// content in memory).
pub fn copy_file(path: &Path, from: &mut impl io::Read, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let (mut f, tmp) = create_temp(path)?;
    let written = io::copy(from, &mut f)
        .and_then(|_| f.set_permissions(fs::Permissions::from_mode(mode)))
        .and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    commit(&tmp, path)
}

/// A temporary file beside `path` holding `bytes` with `mode` (not yet synced); removed
/// again if writing fails.
fn write_temp(path: &Path, bytes: &[u8], mode: u32) -> io::Result<(fs::File, PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    let (mut f, tmp) = create_temp(path)?;
    let written = f
        .write_all(bytes)
        .and_then(|_| f.set_permissions(fs::Permissions::from_mode(mode)));
    if let Err(e) = written {
        drop(f);
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok((f, tmp))
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
    fn deferred_commit_notes_the_directory_once_and_a_removed_one_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        for name in ["a", "b"] {
            let p = sub.join(name);
            let (mut f, tmp) = create_temp(&p).unwrap();
            f.write_all(name.as_bytes()).unwrap();
            f.sync_all().unwrap();
            commit_deferred(&tmp, &p).unwrap();
            assert_eq!(fs::read_to_string(&p).unwrap(), name);
        }
        let gone = dir.path().join("gone");
        fs::create_dir(&gone).unwrap();
        defer_dir_sync(&gone);
        fs::remove_dir(&gone).unwrap();
        // Other tests of this process may note (and sync) directories too: only ours are
        // asserted.
        let failed = sync_deferred_dirs();
        assert!(
            failed.iter().all(|(d, _)| d != &sub && d != &gone),
            "{failed:?}"
        );
        let noted = DEFERRED.lock().unwrap();
        assert!(!noted.contains(&sub) && !noted.contains(&gone));
    }

    #[test]
    fn staged_files_on_one_filesystem_are_synced_together_and_a_fault_stays_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut staged = Vec::new();
        for name in ["a", "b", "c"] {
            let p = dir.path().join(name);
            let (mut f, tmp) = create_temp(&p).unwrap();
            f.write_all(name.as_bytes()).unwrap();
            staged.push(Staged::new(f, tmp, p));
        }
        let faulty = dir.path().join("b");
        FAULTS.lock().unwrap().push((faulty.clone(), "sync"));
        let results = sync_staged(&staged.iter().collect::<Vec<_>>());
        FAULTS.lock().unwrap().retain(|(p, _)| p != &faulty);
        let ok: Vec<bool> = results.iter().map(|r| r.is_ok()).collect();
        assert_eq!(ok, [true, false, true]);
        for s in staged {
            s.commit().unwrap();
        }
        assert_eq!(fs::read_to_string(dir.path().join("c")).unwrap(), "c");
    }

    #[test]
    fn a_file_written_after_the_deferred_directories_is_complete_and_alone() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        defer_dir_sync(&sub);
        let p = dir.path().join("store.json");
        let unsynced = write_file_after_deferred(&p, b"{}", 0o600).unwrap();
        assert!(unsynced.iter().all(|(d, _)| d != &sub), "{unsynced:?}");
        assert_eq!(fs::read_to_string(&p).unwrap(), "{}");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o600
        );
        assert!(!DEFERRED.lock().unwrap().contains(&sub));
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 2);
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
