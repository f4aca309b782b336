//! Environments of `ordo serve`: `CODEDIR/environments/NAME/{manifests,modules,hiera.yaml,
//! environment.conf}`. Each environment's code is read once and its parsed files shared by
//! every compile ([`ParseCache`]); when a file under it changes, the next request gets a
//! fresh environment and compiles in flight finish with the one they started with. A
//! watcher thread looks at the loaded environments' files once a second, so that no
//! request waits for that walk.

use crate::cli::shared_files::SharedFiles;
use crate::eval::parse_cache::ParseCache;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How often an environment's files are looked at for changes.
const CHECK_EVERY: Duration = Duration::from_secs(1);

pub struct Env {
    pub name: String,
    pub dir: PathBuf,
    /// The main manifest (a file; or the first file of the `manifests` folder).
    pub manifest: PathBuf,
    /// The main manifest's text (the files of the `manifests` folder, in order).
    pub text: String,
    /// The modulepath, in order.
    pub module_dirs: Vec<String>,
    pub hiera_config: Option<PathBuf>,
    pub cache: Arc<ParseCache>,
    /// File texts and scans shared by the compiles (dropped with the environment).
    pub files: Arc<SharedFiles>,
    /// Names this version of the code (the catalog's `code_id`; asked back by
    /// `static_file_content`): a digest of the environment's name and files' stamp.
    pub code_id: String,
    stamp: Stamp,
}

/// What says an environment's files changed: how many, their total size, the latest time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Stamp {
    files: u64,
    bytes: u64,
    latest: Option<SystemTime>,
}

type Slots = Mutex<HashMap<String, Arc<Env>>>;

pub struct Envs {
    pub codedir: PathBuf,
    slots: Arc<Slots>,
}

/// A name Puppet accepts for an environment.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Envs {
    /// The environments of `codedir`, and their watcher (which stops with them).
    pub fn new(codedir: &Path) -> Envs {
        let envs = Envs {
            codedir: codedir.to_path_buf(),
            slots: Arc::new(Mutex::new(HashMap::new())),
        };
        let slots = Arc::downgrade(&envs.slots);
        let codedir = envs.codedir.clone();
        let _ = std::thread::Builder::new()
            .name("ordo-envs".into())
            .spawn(move || loop {
                std::thread::sleep(CHECK_EVERY);
                let Some(slots) = slots.upgrade() else {
                    return;
                };
                Envs {
                    codedir: codedir.clone(),
                    slots,
                }
                .check();
            });
        envs
    }

    /// Looks at each loaded environment's files; one that changed is read again (the
    /// requests after get it), one that is gone or unreadable is forgotten (the next
    /// request for it is answered as if new).
    fn check(&self) {
        let loaded: Vec<Arc<Env>> = self.lock().values().cloned().collect();
        for env in loaded {
            let stamp = stamp_of(&self.watched(&env.name));
            if stamp == env.stamp {
                continue;
            }
            let fresh = if self.dir(&env.name).is_dir() {
                self.load(&env.name, stamp).ok().map(Arc::new)
            } else {
                None
            };
            let mut slots = self.lock();
            // Unless a SIGHUP or a request replaced it meanwhile.
            if slots.get(&env.name).is_some_and(|e| Arc::ptr_eq(e, &env)) {
                match fresh {
                    Some(f) => slots.insert(env.name.clone(), f),
                    None => slots.remove(&env.name),
                };
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Env>>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn dir(&self, name: &str) -> PathBuf {
        self.codedir.join("environments").join(name)
    }

    /// The environments there are.
    pub fn names(&self) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(self.codedir.join("environments"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| valid_name(n))
            .collect();
        out.sort();
        out
    }

    /// Forgets every environment: the next request reads its code again (SIGHUP).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// The environment `name`, as the watcher last saw its files. `Err` when there is none.
    pub fn get(&self, name: &str) -> Result<Arc<Env>, String> {
        if let Some(env) = self.lock().get(name) {
            return Ok(env.clone());
        }
        if !valid_name(name) || !self.dir(name).is_dir() {
            return Err(format!("Could not find environment '{name}'"));
        }
        // Read without holding the lock (a big tree takes a while); two first requests
        // may both read it, the first one kept.
        let stamp = stamp_of(&self.watched(name));
        let env = Arc::new(self.load(name, stamp)?);
        Ok(self.lock().entry(name.to_string()).or_insert(env).clone())
    }

    /// The folders whose files make an environment.
    fn watched(&self, name: &str) -> Vec<PathBuf> {
        let dir = self.dir(name);
        let mut out = vec![dir.clone()];
        for m in self.module_dirs(&dir) {
            let m = PathBuf::from(m);
            if !m.starts_with(&dir) {
                out.push(m);
            }
        }
        out.push(self.codedir.join("hiera.yaml"));
        out
    }

    /// `modulepath` from `environment.conf` (`$basemodulepath` and relative folders
    /// resolved), else `modules` in the environment, then `CODEDIR/modules`.
    fn module_dirs(&self, dir: &Path) -> Vec<String> {
        let base = self.codedir.join("modules").to_string_lossy().into_owned();
        let conf = std::fs::read_to_string(dir.join("environment.conf")).unwrap_or_default();
        let setting = conf.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "modulepath").then(|| v.trim().trim_matches('"').to_string())
        });
        let path = setting.unwrap_or_else(|| "modules:$basemodulepath".to_string());
        path.split(':')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let p = p.replace("$basemodulepath", &base);
                if Path::new(&p).is_absolute() {
                    p
                } else {
                    dir.join(p).to_string_lossy().into_owned()
                }
            })
            .collect()
    }

    fn load(&self, name: &str, stamp: Stamp) -> Result<Env, String> {
        let dir = self.dir(name);
        let manifests = dir.join("manifests");
        let (manifest, text) = if manifests.is_file() {
            let t = std::fs::read_to_string(&manifests)
                .map_err(|e| format!("Could not read {}: {e}", manifests.display()))?;
            (manifests, t)
        } else {
            let mut files = Vec::new();
            pp_files(&manifests, &mut files);
            files.sort();
            let mut text = String::new();
            for f in &files {
                let t = std::fs::read_to_string(f)
                    .map_err(|e| format!("Could not read {}: {e}", f.display()))?;
                text.push_str(&t);
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            let first = files
                .first()
                .cloned()
                .unwrap_or_else(|| manifests.join("site.pp"));
            (first, text)
        };
        let global = self.codedir.join("hiera.yaml");
        Ok(Env {
            name: name.to_string(),
            module_dirs: self.module_dirs(&dir),
            dir,
            manifest,
            text,
            hiera_config: global.is_file().then_some(global),
            cache: Arc::new(ParseCache::new()),
            files: Arc::new(SharedFiles::new()),
            code_id: code_id(name, &stamp),
            stamp,
        })
    }
}

fn code_id(name: &str, s: &Stamp) -> String {
    let latest = s
        .latest
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let text = format!("{name} {} {} {latest}", s.files, s.bytes);
    crate::digest::hex(&crate::digest::sha256(text.as_bytes()))[..16].to_string()
}

fn pp_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            pp_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "pp") {
            out.push(p);
        }
    }
}

fn stamp_of(paths: &[PathBuf]) -> Stamp {
    let mut s = Stamp::default();
    for p in paths {
        walk(p, &mut s, 0);
    }
    s
}

fn walk(p: &Path, s: &mut Stamp, depth: usize) {
    let Ok(meta) = std::fs::metadata(p) else {
        return;
    };
    let t = meta.modified().ok();
    if t > s.latest {
        s.latest = t;
    }
    if meta.is_dir() {
        if depth > 32 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(p) else {
            return;
        };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            walk(&e.path(), s, depth + 1);
        }
    } else {
        s.files += 1;
        s.bytes += meta.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_until_a_file_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let env = tmp.path().join("environments/production");
        std::fs::create_dir_all(env.join("manifests")).unwrap();
        std::fs::create_dir_all(env.join("modules/m/manifests")).unwrap();
        std::fs::write(env.join("manifests/b.pp"), "notice(b)").unwrap();
        std::fs::write(env.join("manifests/a.pp"), "notice(a)\n").unwrap();
        let envs = Envs::new(tmp.path());
        let first = envs.get("production").unwrap();
        assert_eq!(first.text, "notice(a)\nnotice(b)\n");
        assert!(first.manifest.ends_with("manifests/a.pp"));
        assert_eq!(first.module_dirs[0], env.join("modules").to_string_lossy());
        assert!(Arc::ptr_eq(&first, &envs.get("production").unwrap()));
        std::thread::sleep(CHECK_EVERY + Duration::from_millis(100));
        // Unchanged files: the same environment, trees and all.
        assert!(Arc::ptr_eq(&first, &envs.get("production").unwrap()));
        std::fs::write(env.join("modules/m/manifests/init.pp"), "class m {}").unwrap();
        // Seen by the watcher within a second or so (a loaded machine: a few).
        let mut second = envs.get("production").unwrap();
        for _ in 0..100 {
            if !Arc::ptr_eq(&first, &second) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            second = envs.get("production").unwrap();
        }
        assert!(!Arc::ptr_eq(&first, &second));
        // Gone: forgotten, then unknown.
        std::fs::remove_dir_all(&env).unwrap();
        for _ in 0..100 {
            if envs.get("production").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(envs.get("production").is_err());
        assert!(envs.get("nosuch").is_err());
        assert!(envs.get("../production").is_err());
        assert!(envs.names().is_empty());
    }
}
