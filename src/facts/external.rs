//! External facts: the files of `facts.d` folders, read as Facter reads them.
//!
//! - `NAME.yaml`: a YAML mapping (only `.yaml`; Facter ignores `.yml`);
//! - `NAME.json`: a JSON object;
//! - `NAME.txt`: `key=value` lines;
//! - any other executable file: run, its output read as a YAML mapping, else as `key=value`
//!   lines (what it writes on standard error is a warning).
//!
//! Fact names are lower-cased. Folders are read in the order given, the files of a folder
//! in reverse name order, and the first file to give a fact wins (Facter's order). A file
//! that cannot be read or parsed is a warning and gives no facts.

use super::util::is_executable;
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};

/// Facter's default external fact folders: the system ones for root, the user's own else.
pub fn default_external_dirs() -> Vec<PathBuf> {
    if rustix::process::geteuid().is_root() {
        [
            "/opt/puppetlabs/facter/facts.d",
            "/etc/puppetlabs/facter/facts.d",
            "/etc/facter/facts.d",
        ]
        .iter()
        .map(PathBuf::from)
        .collect()
    } else {
        match std::env::var_os("HOME") {
            Some(h) => {
                let h = PathBuf::from(h);
                vec![
                    h.join(".facter/facts.d"),
                    h.join(".puppetlabs/opt/facter/facts.d"),
                ]
            }
            None => Vec::new(),
        }
    }
}

/// `key=value` lines (the first `=` splits; lines without one are skipped).
fn key_value_lines(text: &str) -> Map<String, Json> {
    let mut m = Map::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=') {
            if !k.is_empty() && !v.is_empty() {
                m.insert(k.to_string(), Json::String(v.to_string()));
            }
        }
    }
    m
}

/// The facts of one file; `Ok(None)` for a file that is no kind of fact file.
fn file_facts(
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<Option<Map<String, Json>>, String> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let text = || std::fs::read_to_string(path).map_err(|e| e.to_string());
    let mapping = |v: Json, what: &str| match v {
        Json::Object(m) => Ok(Some(m)),
        Json::Null => Ok(Some(Map::new())),
        _ => Err(format!(
            "the {what} is not a mapping of fact names to values"
        )),
    };
    match ext.as_str() {
        "yaml" => {
            let v = crate::eval::hiera::yaml::parse(&text()?)
                .map_err(|e| format!("invalid YAML: {e}"))?;
            mapping(v, "YAML")
        }
        "json" => {
            let v: Json =
                serde_json::from_str(&text()?).map_err(|e| format!("invalid JSON: {e}"))?;
            mapping(v, "JSON")
        }
        "txt" => Ok(Some(key_value_lines(&text()?))),
        "bat" | "cmd" | "com" | "exe" | "ps1" => Ok(None),
        _ if path.is_file() && is_executable(path) => {
            let out = std::process::Command::new(path)
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("could not run it: {e}"))?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            if !stderr.trim().is_empty() {
                warnings.push(format!(
                    "Command {} completed with the following stderr message: {}",
                    path.display(),
                    stderr.trim()
                ));
            }
            let stdout = String::from_utf8_lossy(&out.stdout);
            match crate::eval::hiera::yaml::parse(&stdout) {
                Ok(Json::Object(m)) => Ok(Some(m)),
                _ => Ok(Some(key_value_lines(&stdout))),
            }
        }
        _ => Ok(None),
    }
}

/// Facts from `FACTER_NAME=value` environment variables (names lower-cased, values
/// strings), which override every other fact, as in Facter.
pub fn env_facts() -> Map<String, Json> {
    std::env::vars()
        .filter_map(|(k, v)| {
            let name = k
                .strip_prefix("FACTER_")
                .or_else(|| k.strip_prefix("facter_"))?;
            (!name.is_empty()).then(|| (name.to_lowercase(), Json::String(v)))
        })
        .collect()
}

/// The external facts of these folders (missing folders are skipped).
pub fn external_facts(dirs: &[PathBuf], warnings: &mut Vec<String>) -> Map<String, Json> {
    let mut facts = Map::new();
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect();
        files.sort();
        files.reverse();
        for f in files {
            match file_facts(&f, warnings) {
                Ok(Some(m)) => {
                    for (k, v) in m {
                        facts.entry(k.to_lowercase()).or_insert(v);
                    }
                }
                Ok(None) => {}
                Err(e) => warnings.push(format!("Could not read fact file {}: {e}", f.display())),
            }
        }
    }
    facts
}
