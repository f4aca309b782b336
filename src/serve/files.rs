//! The file server of `ordo serve`: `file_metadata`, `file_metadatas` and `file_content`
//! for the mounts Puppet's server has by default: `modules/MODULE/PATH` (the module's
//! `files/`), `plugins` (every module's `lib/`, merged) and `pluginfacts` (every module's
//! `facts.d/`). Metadata is Puppet's (`Puppet::FileServing::Metadata#to_data_hash`).

use super::envs::Env;
use serde_json::{json, Value};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The most entries a recursive listing returns.
const MAX_FILES: usize = 100_000;

/// How to describe files (from the request's parameters).
pub struct Options {
    pub recurse: bool,
    pub recurselimit: Option<usize>,
    /// `follow` or `manage`.
    pub follow_links: bool,
    pub checksum_type: String,
    pub ignore: Vec<String>,
    /// `source_permissions` is `use` (else the server's owner and mode 0644 are given).
    pub use_permissions: bool,
}

/// The folders a mount path resolves to, in order (the first holding a file wins), and the
/// path within them. `None` for an unknown mount or module.
pub fn resolve(env: &Env, mount_path: &str) -> Option<(Vec<PathBuf>, String)> {
    let mount_path = mount_path.trim_start_matches('/');
    let (mount, rest) = mount_path.split_once('/').unwrap_or((mount_path, ""));
    if rest.split('/').any(|c| c == "..") {
        return None;
    }
    let modules = || {
        env.module_dirs.iter().flat_map(|d| {
            let mut mods: Vec<PathBuf> = std::fs::read_dir(d)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            mods.sort();
            mods
        })
    };
    match mount {
        "modules" => {
            let (module, path) = rest.split_once('/').unwrap_or((rest, ""));
            let dir = env
                .module_dirs
                .iter()
                .map(|d| Path::new(d).join(module))
                .find(|p| p.is_dir())?;
            Some((vec![dir.join("files")], path.to_string()))
        }
        "plugins" | "pluginfacts" => {
            let sub = if mount == "plugins" { "lib" } else { "facts.d" };
            let dirs: Vec<PathBuf> = modules()
                .map(|m| m.join(sub))
                .filter(|p| p.is_dir())
                .collect();
            Some((dirs, rest.to_string()))
        }
        _ => None,
    }
}

/// The metadata of one file (`file_metadata`): `None` when it does not exist.
pub fn metadata(dirs: &[PathBuf], rel: &str, o: &Options) -> Option<Value> {
    dirs.iter().find_map(|d| {
        let full = join(d, rel);
        describe(&full, None, o)
    })
}

/// The metadata of a folder tree (`file_metadatas`): the base (relative path `.`) and,
/// recursing, each file under it; a path found under several folders is the first's. With
/// no folder at all (no module has plugins), the mount's root: `fallback`, not recursed.
pub fn metadatas(dirs: &[PathBuf], rel: &str, o: &Options, fallback: &Path) -> Vec<Value> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    if dirs.is_empty() && rel.is_empty() {
        if let Some(v) = describe(fallback, Some("."), o) {
            out.push(v);
        }
        return out;
    }
    for d in dirs {
        let base = join(d, rel);
        if std::fs::symlink_metadata(&base).is_err() {
            continue;
        }
        let mut rels = vec![".".to_string()];
        if o.recurse {
            list(&base, "", 0, o, &mut rels);
        }
        for r in rels {
            if out.len() >= MAX_FILES {
                break;
            }
            if seen.insert(r.clone()) {
                if let Some(v) = describe(&base, Some(&r), o) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// The content of a file (`file_content`).
pub fn content(dirs: &[PathBuf], rel: &str) -> Option<Vec<u8>> {
    dirs.iter().find_map(|d| {
        let p = join(d, rel);
        if p.is_file() {
            std::fs::read(p).ok()
        } else {
            None
        }
    })
}

fn join(d: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        d.to_path_buf()
    } else {
        d.join(rel)
    }
}

fn list(dir: &Path, prefix: &str, depth: usize, o: &Options, out: &mut Vec<String>) {
    if o.recurselimit.is_some_and(|l| depth >= l) || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !o.ignore.iter().any(|g| super::ca::glob_match(g, n)))
        .collect();
    names.sort();
    for n in names {
        let rel = if prefix.is_empty() {
            n.clone()
        } else {
            format!("{prefix}/{n}")
        };
        let p = dir.join(&n);
        out.push(rel.clone());
        let is_dir = if o.follow_links {
            p.is_dir()
        } else {
            std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir())
        };
        if is_dir {
            list(&p, &rel, depth + 1, o, out);
        }
    }
}

/// Puppet's metadata of `base`/`rel` (or of `base` alone when `rel` is `None`).
fn describe(base: &Path, rel: Option<&str>, o: &Options) -> Option<Value> {
    let full = match rel {
        Some(".") | None => base.to_path_buf(),
        Some(r) => base.join(r),
    };
    let meta = if o.follow_links {
        std::fs::metadata(&full).ok()?
    } else {
        std::fs::symlink_metadata(&full).ok()?
    };
    let ft = meta.file_type();
    let (ftype, checksum_type, checksum, destination) = if ft.is_symlink() {
        let dest = std::fs::read_link(&full)
            .ok()
            .map(|d| d.to_string_lossy().into_owned());
        let sum = file_checksum(&full, &o.checksum_type);
        ("link", o.checksum_type.clone(), sum, dest)
    } else if ft.is_dir() {
        (
            "directory",
            "ctime".to_string(),
            Some(format!("{{ctime}}{}", ruby_time(meta.ctime()))),
            None,
        )
    } else if ft.is_file() {
        let sum = file_checksum(&full, &o.checksum_type)?;
        ("file", o.checksum_type.clone(), Some(sum), None)
    } else {
        ("fifo", "none".to_string(), Some("{none}".to_string()), None)
    };
    let (owner, group, mode) = if o.use_permissions {
        (meta.uid(), meta.gid(), meta.mode() & 0o7777)
    } else {
        (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
            0o644,
        )
    };
    Some(json!({
        "path": base.to_string_lossy(),
        "relative_path": rel,
        "links": if o.follow_links { "follow" } else { "manage" },
        "owner": owner,
        "group": group,
        "mode": mode,
        "checksum": {"type": checksum_type, "value": checksum},
        "type": ftype,
        "destination": destination,
    }))
}

/// `{TYPE}VALUE` for a file.
fn file_checksum(p: &Path, kind: &str) -> Option<String> {
    let meta = std::fs::metadata(p).ok()?;
    let value = match kind {
        "mtime" => ruby_time(meta.mtime()),
        "ctime" => ruby_time(meta.ctime()),
        "sha1" => crate::digest::hex(&crate::digest::sha1(&std::fs::read(p).ok()?)),
        "md5" => crate::digest::hex(&crate::digest::md5(&std::fs::read(p).ok()?)),
        "none" => String::new(),
        _ => crate::digest::hex(&crate::digest::sha256(&std::fs::read(p).ok()?)),
    };
    let kind = match kind {
        "mtime" | "ctime" | "sha1" | "md5" | "none" => kind,
        _ => "sha256",
    };
    Some(format!("{{{kind}}}{value}"))
}

/// A time as Ruby prints one (`2026-11-28 04:22:11 +0000`), in UTC.
fn ruby_time(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S +0000").to_string())
        .unwrap_or_default()
}
