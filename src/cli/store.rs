//! The exported-resources store: what stands in for PuppetDB when compiles run with
//! `--storeconfigs` (see docs/eval.md, "Exported resources").
//!
//! One file per node under `STATE_DIR/exported/`: `<node>.json`, holding
//! `{"node": NAME, "resources": [...]}` with the resources the node's last successful compile
//! exported, in the catalog's resource format (`exported: true`, tags, parameters). Each
//! compile of a node replaces its file (atomically: a temporary file renamed over it) or
//! removes it when the node exports nothing any more; collectors on any node read every
//! other node's file.

use crate::apply::atomic;
use crate::catalog::Resource;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
struct NodeExports {
    node: String,
    resources: Vec<Resource>,
}

#[derive(Clone, Debug)]
pub struct ExportStore {
    state_dir: PathBuf,
}

impl ExportStore {
    pub fn new(state_dir: &Path) -> ExportStore {
        ExportStore {
            state_dir: state_dir.to_path_buf(),
        }
    }

    pub fn dir(&self) -> PathBuf {
        self.state_dir.join("exported")
    }

    /// The file of a node: its name, with any byte outside `[A-Za-z0-9_-]` and a leading
    /// dot written `%XX`, so that every certname maps to one plain file name.
    pub fn file_for(&self, node: &str) -> PathBuf {
        let mut name = String::new();
        for (i, b) in node.bytes().enumerate() {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0) {
                name.push(b as char);
            } else {
                name.push_str(&format!("%{b:02X}"));
            }
        }
        self.dir().join(format!("{name}.json"))
    }

    /// Every node's exported resources, by node name (sorted), each with its node.
    pub fn load_all(&self) -> Result<Vec<(String, Resource)>, String> {
        let dir = self.dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(format!("Could not read the store {}: {e}", dir.display())),
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "json")
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        files.sort();
        let mut out = vec![];
        for f in files {
            let text = std::fs::read_to_string(&f)
                .map_err(|e| format!("Could not read {}: {e}", f.display()))?;
            let n: NodeExports = serde_json::from_str(&text)
                .map_err(|e| format!("Could not read {}: {e}", f.display()))?;
            out.extend(n.resources.into_iter().map(|r| (n.node.clone(), r)));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Replaces the node's exports (removes its file when it exports nothing).
    pub fn save(&self, node: &str, resources: &[Resource]) -> Result<(), String> {
        let path = self.file_for(node);
        if resources.is_empty() {
            return match std::fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(format!("Could not remove {}: {e}", path.display())),
            };
        }
        crate::apply::state::StateDir::new(&self.state_dir).create()?;
        let dir = self.dir();
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("Could not create the store {}: {e}", dir.display()))?;
        let data = NodeExports {
            node: node.to_string(),
            resources: resources.to_vec(),
        };
        let text = serde_json::to_string_pretty(&data).unwrap_or_default() + "\n";
        atomic::write_file(&path, text.as_bytes(), 0o600)
            .map_err(|e| format!("Could not write {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_map_to_plain_distinct_file_names() {
        let s = ExportStore::new(Path::new("/s"));
        assert_eq!(
            s.file_for("web1.example.com"),
            Path::new("/s/exported/web1.example.com.json")
        );
        assert_eq!(s.file_for("../x"), Path::new("/s/exported/%2E.%2Fx.json"));
        assert_ne!(s.file_for("a/b"), s.file_for("a%2Fb"));
    }
}
