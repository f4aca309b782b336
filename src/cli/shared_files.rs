//! What the compiles of one version of the code share of its files (`ordo serve`'s
//! environments, `ordo compile --nodes`): file texts read, the scans of the modules'
//! `lib/` folders, the type schemas. Each is read once and kept while the files stay as they
//! were: `ordo serve` drops the whole cache with its environment when a file changes. A
//! single compile has a cache of its own, which lives as long as it does.
//!
//! Bounded: at most [`MAX_BYTES`] of text and [`MAX_ENTRIES`] files (found or not) are kept;
//! past that, files are read at each use.

use crate::eval::type_schema::TypeSchema;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The most file text kept.
pub const MAX_BYTES: usize = 64 << 20;
/// The most files (found or missing) kept.
pub const MAX_ENTRIES: usize = 100_000;

/// What the compiles of the same code share: the trees, and the files.
pub type Shared = (Arc<crate::eval::parse_cache::ParseCache>, Arc<SharedFiles>);

#[derive(Default)]
pub struct SharedFiles {
    texts: Mutex<Texts>,
    /// Ruby resource types the modules ship: every name, and those that are `.rb` files.
    pub(crate) ruby_types: OnceLock<(HashSet<String>, HashSet<String>)>,
    pub(crate) ruby_functions: OnceLock<HashSet<String>>,
    pub(crate) ruby_schemas: OnceLock<crate::cli::ruby_types::Schemas>,
    pub(crate) schemas: OnceLock<HashMap<String, TypeSchema>>,
    /// Module folders by name (`None`: no such module).
    pub(crate) module_dirs: Mutex<HashMap<String, Option<String>>>,
    /// The namevar of a Ruby type read from its source, by type name.
    pub(crate) namevars: Mutex<HashMap<String, Option<String>>>,
    /// `lib` folders of the modules.
    pub(crate) lib_dirs: OnceLock<Vec<String>>,
}

#[derive(Default)]
struct Texts {
    files: HashMap<PathBuf, Result<Option<Arc<str>>, String>>,
    bytes: usize,
}

impl SharedFiles {
    pub fn new() -> SharedFiles {
        SharedFiles::default()
    }

    /// The text of a file (`None`: missing, unreadable or not UTF-8), read once.
    pub fn read(&self, path: &Path) -> Option<Arc<str>> {
        self.read_data(path).ok().flatten()
    }

    /// [`Self::read`] for data a compile needs whole: `Ok(None)` when there is no such file,
    /// `Err` when one is there but cannot be read as text: a FIFO, a device, a directory, a
    /// link loop, no permission, not UTF-8. Read once, the answer kept either way.
    pub fn read_data(&self, path: &Path) -> Result<Option<Arc<str>>, String> {
        if let Some(t) = self.lock().files.get(path) {
            return t.clone();
        }
        let text: Result<Option<Arc<str>>, String> = match crate::input::read_to_string(path) {
            Ok(text) => Ok(Some(Arc::from(text))),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(format!("Unable to read {}: {e}", path.display())),
        };
        let mut texts = self.lock();
        let size = match &text {
            Ok(Some(t)) => t.len(),
            _ => 0,
        };
        if texts.files.len() < MAX_ENTRIES && texts.bytes + size <= MAX_BYTES {
            texts.bytes += size;
            texts.files.insert(path.to_path_buf(), text.clone());
        }
        text
    }

    /// How many files are kept, and their bytes.
    pub fn kept(&self) -> (usize, usize) {
        let t = self.lock();
        (t.files.len(), t.bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Texts> {
        self.texts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A value of a map of the cache, computed once (`make` runs without the lock held).
pub(crate) fn memo<T: Clone>(
    map: &Mutex<HashMap<String, T>>,
    key: &str,
    make: impl FnOnce() -> T,
) -> T {
    if let Some(v) = map.lock().unwrap_or_else(|e| e.into_inner()).get(key) {
        return v.clone();
    }
    let v = make();
    let mut m = map.lock().unwrap_or_else(|e| e.into_inner());
    if m.len() < MAX_ENTRIES {
        m.insert(key.to_string(), v.clone());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_once_and_missing_files_are_remembered() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("a.pp");
        std::fs::write(&f, "notice(1)").unwrap();
        let c = SharedFiles::new();
        assert_eq!(c.read(&f).as_deref(), Some("notice(1)"));
        // Kept: the file's new text is not seen (the owner drops the cache on a change).
        std::fs::write(&f, "notice(2)").unwrap();
        assert_eq!(c.read(&f).as_deref(), Some("notice(1)"));
        assert_eq!(c.read(&tmp.path().join("none.pp")), None);
        assert_eq!(c.kept(), (2, 9));
    }

    #[test]
    fn past_the_bound_files_are_read_at_each_use() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("big");
        std::fs::write(&f, "x").unwrap();
        let c = SharedFiles::new();
        c.lock().bytes = MAX_BYTES;
        assert_eq!(c.read(&f).as_deref(), Some("x"));
        std::fs::write(&f, "y").unwrap();
        assert_eq!(c.read(&f).as_deref(), Some("y"));
        assert_eq!(c.kept(), (0, MAX_BYTES));
    }
}
