//! Files behind Hiera and type schemas for `ordo compile` (IO lives here, not in the
//! evaluator).
//!
//! - Hiera layers: `global/<path>` beside the `--hiera-config` file, `env/<path>` in the
//!   environment root (the manifest's folder, or its parent when the manifest sits in
//!   `manifests/`), `module/<name>/<path>` in the modulepath.
//! - Type schemas: `--types FILE`, else the modules' Ruby types as `ruby` reads them
//!   (`cli::ruby_types`), else a `resource-type-schemas.json` found beside a modulepath
//!   folder or beside the folder the modules really live in (the corpus layout).

use crate::cli::shared_files::SharedFiles;
use crate::eval::type_schema::{parse_schemas, TypeSchema};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCHEMA_FILE: &str = "resource-type-schemas.json";

#[derive(Default)]
pub struct DataDirs {
    env_root: PathBuf,
    global: Option<PathBuf>,
    types_file: Option<PathBuf>,
}

impl DataDirs {
    pub fn new(manifest: &Path, global: Option<PathBuf>, types_file: Option<PathBuf>) -> DataDirs {
        let dir = manifest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let env_root = if dir.file_name().is_some_and(|n| n == "manifests") {
            dir.parent().map(Path::to_path_buf).unwrap_or(dir)
        } else {
            dir
        };
        DataDirs {
            env_root,
            global,
            types_file,
        }
    }

    pub fn hiera_config_name(&self) -> Option<String> {
        self.global
            .as_ref()
            .and_then(|g| g.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    }

    pub fn load(
        &self,
        dirs: &[PathBuf],
        path: &str,
        files: &SharedFiles,
    ) -> Result<Option<Arc<str>>, String> {
        let Some((layer, rest)) = path.split_once('/') else {
            return Ok(None);
        };
        let file = match layer {
            "global" => match self.global.as_ref().and_then(|g| g.parent()) {
                Some(dir) => dir.join(rest),
                None => return Ok(None),
            },
            "env" => self.env_root.join(rest),
            "module" => {
                let Some((name, rel)) = rest.split_once('/') else {
                    return Ok(None);
                };
                for d in dirs {
                    if let Some(text) = files.read_data(&d.join(name).join(rel))? {
                        return Ok(Some(text));
                    }
                }
                return Ok(None);
            }
            _ => return Ok(None),
        };
        files.read_data(&file)
    }

    /// Whether the schemas come from a `--types` file (then only from it).
    pub fn has_types_file(&self) -> bool {
        self.types_file.is_some()
    }

    pub fn type_schema(
        &self,
        dirs: &[PathBuf],
        name: &str,
        files: &SharedFiles,
    ) -> Option<TypeSchema> {
        files
            .schemas
            .get_or_init(|| {
                let file = self.types_file.clone().or_else(|| discover(dirs));
                file.and_then(|f| std::fs::read_to_string(f).ok())
                    .and_then(|t| parse_schemas(&t).ok())
                    .unwrap_or_default()
            })
            .get(name)
            .cloned()
    }
}

fn discover(dirs: &[PathBuf]) -> Option<PathBuf> {
    for d in dirs {
        let mut candidates = vec![d.join(SCHEMA_FILE)];
        if let Some(p) = d.parent() {
            candidates.push(p.join(SCHEMA_FILE));
        }
        // Modules linked into the modulepath: look beside their real `modules/` folder.
        if let Some(first) = std::fs::read_dir(d)
            .ok()
            .and_then(|mut e| e.next())
            .and_then(|e| e.ok())
        {
            if let Ok(real) = std::fs::canonicalize(first.path()) {
                if let Some(p) = real.parent().and_then(Path::parent) {
                    candidates.push(p.join(SCHEMA_FILE));
                }
            }
        }
        if let Some(f) = candidates.into_iter().find(|c| c.is_file()) {
            return Some(f);
        }
    }
    None
}
