//! Which staged writes a resource could observe.
//!
//! The runner checks resources ahead while the new files of earlier ones wait in temporary
//! files to be made durable together (see `transaction`'s `flush`). A resource may be checked
//! ahead only if what it looks at cannot differ from what it would see in a plain walk, that
//! is if neither the path it manages nor any path it reads is, or lies under, a target whose
//! content is still staged. Paths are compared after resolving symbolic links
//! (`fs::canonicalize` of the part that exists); whatever cannot be resolved with certainty (an
//! error other than "not found", a dangling link) counts as a conflict, which only costs a
//! flush.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::ops::Bound;
use std::path::{Component, Path, PathBuf};

/// What a stageable resource writes and reads (`Provider::stage_paths`).
#[derive(Debug, Default, Clone)]
pub struct StagePaths {
    /// The file it may write (as a staged temporary file).
    pub writes: Option<PathBuf>,
    /// The files it reads (sources, with every candidate of a `puppet:///` source).
    pub reads: Vec<PathBuf>,
}

/// The targets staged since the last flush, resolved.
#[derive(Default)]
pub struct StageSet {
    targets: BTreeSet<PathBuf>,
    /// Resolved directories (None: could not be resolved), valid until the next flush: staged
    /// writes create no directory and no link.
    dirs: HashMap<PathBuf, Option<PathBuf>>,
}

impl StageSet {
    /// Forgets everything (after a flush: the staged files are in place or discarded).
    pub fn clear(&mut self) {
        self.targets.clear();
        self.dirs.clear();
    }

    /// Whether `paths` could observe a staged target (or each other, for a batch checked at
    /// once); if not, notes the written path as staged and returns false.
    pub fn conflicts(&mut self, paths: &StagePaths) -> bool {
        self.claim(paths).is_none()
    }

    /// [`StageSet::conflicts`]: `None` when `paths` could observe a staged target, else the
    /// written path as noted (to [`StageSet::release`] if nothing is staged there after all).
    pub fn claim(&mut self, paths: &StagePaths) -> Option<Option<PathBuf>> {
        let mut resolved = Vec::new();
        for p in paths.writes.iter().chain(&paths.reads) {
            match self.resolve(p) {
                Some(r) if !self.touches(&r) => resolved.push(r),
                _ => return None,
            }
        }
        let written = paths.writes.as_ref().and(resolved.into_iter().next());
        if let Some(w) = &written {
            self.targets.insert(w.clone());
        }
        Some(written)
    }

    /// Forgets a path [`StageSet::claim`] noted where nothing was staged (a file already in
    /// sync): the set holds only what waits for a flush, not every file of a no-change run.
    pub fn release(&mut self, written: &Path) {
        self.targets.remove(written);
    }

    /// Does `p` equal, lie under, or contain a staged target?
    fn touches(&self, p: &Path) -> bool {
        // Paths order component by component, and staged targets never nest: a target that
        // `p` equals or lies under is the last one at or before `p`, one inside `p` the first
        // one after it.
        let below = self
            .targets
            .range::<Path, _>((Bound::Unbounded, Bound::Included(p)))
            .next_back()
            .is_some_and(|t| p.starts_with(t));
        let above = self
            .targets
            .range::<Path, _>((Bound::Excluded(p), Bound::Unbounded))
            .next()
            .is_some_and(|t| t.starts_with(p));
        below || above
    }

    /// `p` with every symbolic link of its existing part resolved; the part that does not
    /// exist is kept as written. None when that cannot be told for sure.
    fn resolve(&mut self, p: &Path) -> Option<PathBuf> {
        if !p.is_absolute()
            || p.components()
                .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        {
            return None;
        }
        let name = p.file_name()?;
        let parent = p.parent()?;
        let dir = match self.dirs.get(parent) {
            Some(d) => d.clone(),
            None => {
                let d = match fs::canonicalize(parent) {
                    Ok(d) => Some(d),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // A missing directory: resolve its own parent, keep its name, unless
                        // it is a dangling link.
                        match fs::symlink_metadata(parent) {
                            Err(e) if e.kind() == io::ErrorKind::NotFound => self.resolve(parent),
                            _ => None,
                        }
                    }
                    Err(_) => None,
                };
                self.dirs.insert(parent.to_path_buf(), d.clone());
                d
            }
        }?;
        let joined = dir.join(name);
        match fs::symlink_metadata(&joined) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(&joined).ok(),
            Ok(_) => Some(joined),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Some(joined),
            Err(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(p: &Path) -> StagePaths {
        StagePaths {
            writes: Some(p.to_path_buf()),
            reads: Vec::new(),
        }
    }

    #[test]
    fn a_path_that_reads_or_nests_a_staged_target_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir(root.join("d")).unwrap();
        let mut set = StageSet::default();
        assert!(!set.conflicts(&writes(&root.join("a"))));
        assert!(!set.conflicts(&writes(&root.join("b"))));
        // The same target again, a path under it, its directory.
        assert!(set.conflicts(&writes(&root.join("a"))));
        assert!(set.conflicts(&writes(&root.join("a/x"))));
        assert!(set.conflicts(&writes(&root)));
        // Reading it, directly or through a link (even a dangling one: it is not there yet).
        std::os::unix::fs::symlink(root.join("a"), root.join("d/l")).unwrap();
        let reads = |p: PathBuf| StagePaths {
            writes: None,
            reads: vec![p],
        };
        assert!(set.conflicts(&reads(root.join("a"))));
        assert!(set.conflicts(&reads(root.join("d/l"))));
        // Through a linked directory.
        std::os::unix::fs::symlink(&root, root.join("d/up")).unwrap();
        assert!(set.conflicts(&reads(root.join("d/up/b"))));
        // Unrelated reads, including under missing directories, do not.
        assert!(!set.conflicts(&reads(root.join("d/other"))));
        assert!(!set.conflicts(&reads(root.join("missing/deeper/x"))));
        // A notify-like resource writes nothing: nothing is noted.
        assert!(!set.conflicts(&writes(&root.join("c"))));
        set.clear();
        assert!(!set.conflicts(&writes(&root.join("a"))));
    }
}
