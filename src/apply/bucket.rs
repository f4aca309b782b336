//! The file bucket: replaced and removed file content, kept by checksum so it can be restored.
//!
//! Layout (Puppet's clientbucket, flattened): `DIR/SHA256/contents` holds the bytes,
//! `DIR/SHA256/paths` the paths it was taken from (one a line, as Puppet writes it), and
//! `DIR/SHA256/log` one line per backup: `UNIX_SECONDS.NANOS MODE PATH`, so `ordo bucket list` can
//! say when, and `restore` can bring the mode back. Everything is written atomically, and the
//! directories are private (0700): replaced content may be secret.

use super::atomic;
use crate::graph::digest::{hex, sha256};
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Creates a bucket entry's directory (private), refusing a symbolic link planted in its
/// place: the backup would be written wherever it leads.
fn make_entry_dir(entry: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(entry)?;
    if fs::symlink_metadata(entry)?.is_dir() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{} is not a directory (a symbolic link?)",
            entry.display()
        )))
    }
}

/// One backup: which content, from where, when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub sum: String,
    pub path: PathBuf,
    /// Seconds since the Unix epoch.
    pub time: u64,
    /// Nanoseconds within that second (orders backups made in the same second).
    pub nanos: u32,
    /// Permission bits of the file when it was backed up, if known.
    pub mode: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Bucket {
    dir: PathBuf,
}

impl Bucket {
    pub fn new(dir: impl Into<PathBuf>) -> Bucket {
        Bucket { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keeps `bytes`, taken from `path` (whose permission bits were `mode`). Returns the
    /// checksum (hex SHA-256).
    pub fn backup(&self, path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<String> {
        let sum = hex(&sha256(bytes));
        let entry = self.dir.join(&sum);
        make_entry_dir(&entry)?;
        let contents = entry.join("contents");
        let same = super::state::read_private(&contents).is_ok_and(|b| b == bytes);
        if !same {
            atomic::write_file(&contents, bytes, 0o600)?;
        }
        self.note(&entry, path, mode)?;
        Ok(sum)
    }

    /// Keeps the content of the open regular file `f`, taken from `path`, read in pieces
    /// (twice: its checksum names where it goes), never whole in memory. Returns the
    /// checksum (hex SHA-256).
    pub fn backup_file(&self, path: &Path, f: &fs::File, mode: Option<u32>) -> io::Result<String> {
        use io::{Read, Seek};
        let mut reader = f;
        reader.seek(io::SeekFrom::Start(0))?;
        let mut h = crate::digest::Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut len = 0u64;
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    h.update(&buf[..n]);
                    len += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let sum = hex(&h.finish());
        let entry = self.dir.join(&sum);
        make_entry_dir(&entry)?;
        let contents = entry.join("contents");
        // Content of the same SHA-256 and length is the same content.
        let kept = fs::symlink_metadata(&contents).is_ok_and(|m| m.is_file() && m.len() == len);
        if !kept {
            reader.seek(io::SeekFrom::Start(0))?;
            atomic::copy_file(&contents, &mut reader.take(len), 0o600)?;
        }
        self.note(&entry, path, mode)?;
        Ok(sum)
    }

    /// Records a backup of `path` in the bucket entry `entry` (its paths and its log).
    fn note(&self, entry: &Path, path: &Path, mode: Option<u32>) -> io::Result<()> {
        let shown = path.display().to_string();
        let paths_file = entry.join("paths");
        let mut paths = super::state::read_private_string(&paths_file).unwrap_or_default();
        if !paths.lines().any(|l| l == shown) {
            paths.push_str(&shown);
            paths.push('\n');
            atomic::write_file(&paths_file, paths.as_bytes(), 0o600)?;
        }
        let log_file = entry.join("log");
        let mut log = super::state::read_private_string(&log_file).unwrap_or_default();
        let mode = mode.map_or("-".to_string(), |m| format!("{:04o}", m & 0o7777));
        let (secs, nanos) = now();
        log.push_str(&format!("{secs}.{nanos:09} {mode} {shown}\n"));
        atomic::write_file(&log_file, log.as_bytes(), 0o600)
    }

    /// Every backup, oldest first.
    pub fn list(&self) -> io::Result<Vec<Entry>> {
        let mut out = Vec::new();
        let dir = match fs::read_dir(&self.dir) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for item in dir {
            let item = item?;
            let sum = item.file_name().to_string_lossy().into_owned();
            if !is_checksum(&sum) || !item.path().join("contents").is_file() {
                continue;
            }
            out.extend(self.entries_of(&sum));
        }
        out.sort_by(|a, b| {
            (a.time, a.nanos, &a.path, &a.sum).cmp(&(b.time, b.nanos, &b.path, &b.sum))
        });
        Ok(out)
    }

    /// The backups of one checksum: from its log, or (for buckets written by Puppet or older
    /// Ordo) its paths with the time of the contents file.
    fn entries_of(&self, sum: &str) -> Vec<Entry> {
        let entry = self.dir.join(sum);
        if let Ok(log) = fs::read_to_string(entry.join("log")) {
            let parsed: Vec<Entry> = log
                .lines()
                .filter_map(|l| {
                    let mut f = l.splitn(3, ' ');
                    let (time, nanos) = match f.next()?.split_once('.') {
                        Some((s, n)) => (s.parse().ok()?, n.parse().ok()?),
                        None => (l.split(' ').next()?.parse().ok()?, 0),
                    };
                    let mode = u32::from_str_radix(f.next()?, 8).ok();
                    let path = PathBuf::from(f.next()?);
                    Some(Entry {
                        sum: sum.to_string(),
                        path,
                        time,
                        nanos,
                        mode,
                    })
                })
                .collect();
            if !parsed.is_empty() {
                return parsed;
            }
        }
        let time = fs::metadata(entry.join("contents"))
            .map(|m| m.mtime().max(0) as u64)
            .unwrap_or(0);
        fs::read_to_string(entry.join("paths"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| Entry {
                sum: sum.to_string(),
                path: PathBuf::from(l),
                time,
                nanos: 0,
                mode: None,
            })
            .collect()
    }

    /// The content kept under a checksum.
    pub fn contents(&self, sum: &str) -> io::Result<Vec<u8>> {
        if !is_checksum(sum) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("'{sum}' is not a SHA-256 checksum"),
            ));
        }
        fs::read(self.dir.join(sum).join("contents"))
    }

    /// The backup a user means: a checksum (or a unique prefix of one), or a path (its latest
    /// backup).
    pub fn find(&self, key: &str) -> Result<Entry, String> {
        let all = self
            .list()
            .map_err(|e| format!("Could not read bucket {}: {e}", self.dir.display()))?;
        let latest = |matching: Vec<&Entry>| matching.last().map(|e| (*e).clone());
        if key.starts_with('/') {
            let key_path = Path::new(key);
            return latest(all.iter().filter(|e| e.path == key_path).collect())
                .ok_or_else(|| format!("No backup of {key} in bucket {}", self.dir.display()));
        }
        let key = key
            .strip_prefix("{sha256}")
            .unwrap_or(key)
            .to_ascii_lowercase();
        if key.len() < 6 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "'{key}' is neither an absolute path nor a checksum (at least 6 hex digits)"
            ));
        }
        let matching: Vec<&Entry> = all.iter().filter(|e| e.sum.starts_with(&key)).collect();
        let mut sums: Vec<&str> = matching.iter().map(|e| e.sum.as_str()).collect();
        sums.sort();
        sums.dedup();
        match sums.len() {
            0 => Err(format!(
                "No content with checksum {key} in bucket {}",
                self.dir.display()
            )),
            1 => Ok(latest(matching).expect("one checksum matched")),
            n => Err(format!("Checksum prefix {key} is ambiguous ({n} matches)")),
        }
    }

    /// Restores a backup (see `find`) to its own path or to `dest`. The file now at the
    /// destination, if its content differs, is backed up first, so a restore can be undone.
    /// Returns the entry restored and the destination.
    pub fn restore(&self, key: &str, dest: Option<&Path>) -> Result<(Entry, PathBuf), String> {
        let entry = self.find(key)?;
        let bytes = self
            .contents(&entry.sum)
            .map_err(|e| format!("Could not read {} from the bucket: {e}", entry.sum))?;
        let dest = dest.map_or_else(|| entry.path.clone(), Path::to_path_buf);
        let current = fs::symlink_metadata(&dest).ok();
        // Only a regular file (or nothing) is replaced: never a directory, a link (it would
        // redirect the restore) or a device, FIFO or socket (`/dev/null` made a file).
        if let Some(m) = current.as_ref().filter(|m| !m.is_file()) {
            let kind = crate::input::ftype(&m.file_type());
            return Err(format!(
                "Could not restore to {}: it is a {kind}; not replacing it",
                dest.display()
            ));
        }
        let mode = match &current {
            Some(m) if m.is_file() => {
                let old = fs::read(&dest)
                    .map_err(|e| format!("Could not read {}: {e}", dest.display()))?;
                if old != bytes {
                    self.backup(&dest, &old, Some(m.mode()))
                        .map_err(|e| format!("Could not back up {}: {e}", dest.display()))?;
                }
                m.permissions().mode() & 0o7777
            }
            _ => entry.mode.unwrap_or(0o600),
        };
        atomic::write_file(&dest, &bytes, mode)
            .map_err(|e| format!("Could not restore to {}: {e}", dest.display()))?;
        Ok((entry, dest))
    }
}

pub fn is_checksum(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn now() -> (u64, u32) {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or((0, 0), |d| (d.as_secs(), d.subsec_nanos()))
}

/// `2026-05-01T12:00:00Z` (UTC) for seconds since the epoch.
pub fn format_time(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_time(1_767_225_599), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn backup_list_find_restore() {
        let dir = tempfile::tempdir().unwrap();
        let b = Bucket::new(dir.path().join("bucket"));
        let f = dir.path().join("conf");
        fs::write(&f, "one").unwrap();
        let sum = b.backup(&f, b"one", Some(0o640)).unwrap();
        assert_eq!(sum.len(), 64);
        let mode = fs::metadata(b.dir().join(&sum))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        fs::write(&f, "two").unwrap();
        let list = b.list().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].path, f);
        assert_eq!(list[0].mode, Some(0o640));
        // By path: the latest backup; the current content is kept before it is replaced.
        let (e, dest) = b.restore(f.to_str().unwrap(), None).unwrap();
        assert_eq!(
            (e.sum.as_str(), dest.as_path()),
            (sum.as_str(), f.as_path())
        );
        assert_eq!(fs::read_to_string(&f).unwrap(), "one");
        assert_eq!(b.list().unwrap().len(), 2);
        // By checksum prefix, to another path, with the recorded mode.
        let other = dir.path().join("copy");
        b.restore(&sum[..8], Some(&other)).unwrap();
        assert_eq!(fs::read_to_string(&other).unwrap(), "one");
        assert_eq!(
            fs::metadata(&other).unwrap().permissions().mode() & 0o7777,
            0o640
        );
        assert!(b.find("zzzzzz").is_err());
        assert!(b.find("/no/such/file").is_err());
        assert!(b.restore(&sum, Some(dir.path())).is_err());
    }
}
