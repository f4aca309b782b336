//! Static catalogs: when the agent asks for one (`static_catalog=true`), the metadata of
//! the `File` resources' `puppet:///modules/...` sources is put into the catalog, as
//! puppetserver does (`Puppet::Resource::Catalog::Compiler#inline_metadata`): the agent
//! then asks no `file_metadata(s)` for them and fetches their content from
//! `static_file_content` by the inlined `content_uri`.
//!
//! Only files of the environment's own modules are inlined (`ENV/DIR/MODULE/files/...`);
//! a source from the base modulepath outside the environment is left to the agent, as
//! puppetserver leaves it.

use super::envs::Env;
use super::files::{self, Options};
use crate::catalog::{Catalog, Resource};
use serde_json::{Map, Value};
use std::path::Path;

/// The checksum types the server computes, in Puppet's order of preference
/// (`Puppet::Util::Checksums#known_checksum_types`, those Ordo has).
const KNOWN: &[&str] = &["sha256", "md5", "sha1", "mtime", "ctime", "none"];

/// The first of the agent's checksum types (`sha256.sha1.md5`) the server knows.
pub fn common_checksum_type(agent: &str) -> Option<&'static str> {
    agent
        .split('.')
        .find_map(|t| KNOWN.iter().find(|k| **k == t).copied())
}

/// The inlined metadata: `metadata` (title -> metadata) and `recursive_metadata`
/// (title -> source -> [metadata]), each empty when nothing was inlined.
#[derive(Default)]
pub struct Inlined {
    pub metadata: Map<String, Value>,
    pub recursive: Map<String, Value>,
}

impl Inlined {
    /// The catalog's JSON text with the inlined metadata added (Puppet writes the keys only
    /// when they hold something).
    pub fn add_to(&self, mut text: Vec<u8>) -> Vec<u8> {
        if self.metadata.is_empty() && self.recursive.is_empty() {
            return text;
        }
        while text.last().is_some_and(|b| b.is_ascii_whitespace()) {
            text.pop();
        }
        if text.pop() != Some(b'}') {
            return text;
        }
        for (key, map) in [
            ("metadata", &self.metadata),
            ("recursive_metadata", &self.recursive),
        ] {
            if !map.is_empty() {
                text.extend_from_slice(format!(",\"{key}\":").as_bytes());
                text.extend_from_slice(Value::Object(map.clone()).to_string().as_bytes());
            }
        }
        text.extend_from_slice(b"}\n");
        text
    }
}

/// The metadata of the catalog's file sources that can be inlined.
pub fn inline(catalog: &Catalog, env: &Env, checksum_type: &str) -> Inlined {
    let mut out = Inlined::default();
    for r in catalog.resources.iter().filter(|r| r.type_name == "File") {
        let sources = sources(r);
        if !inlineable(r, &sources) {
            continue;
        }
        let param = |k: &str| r.parameters.get(k).and_then(Value::as_str);
        let mut o = Options {
            recurse: false,
            recurselimit: None,
            follow_links: param("links") == Some("follow"),
            checksum_type: param("checksum").unwrap_or(checksum_type).to_string(),
            ignore: Vec::new(),
            use_permissions: param("source_permissions") == Some("use"),
        };
        let recurse = match r.parameters.get("recurse") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s == "true" || s == "remote",
            _ => false,
        };
        if recurse {
            o.recurse = true;
            o.recurselimit = r.parameters.get("recurselimit").and_then(|v| match v {
                Value::Number(n) => n.as_u64().map(|n| n as usize),
                Value::String(s) => s.parse().ok(),
                _ => None,
            });
            o.ignore = match r.parameters.get("ignore") {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
                _ => Vec::new(),
            };
            let first_only = param("sourceselect").is_none_or(|s| s == "first");
            let mut by_source = Map::new();
            let mut in_env = true;
            for source in &sources {
                let Some(path) = module_path(source) else {
                    continue;
                };
                let Some((dirs, rel)) = files::resolve(env, path) else {
                    continue;
                };
                let fallback = env.dir.clone();
                let mut list = files::metadatas(&dirs, &rel, &o, &fallback);
                let Some(base) = list
                    .iter()
                    .find(|m| m["relative_path"] == ".")
                    .and_then(|m| m["path"].as_str())
                    .map(String::from)
                else {
                    continue;
                };
                let Some(base_uri) = content_uri(env, source, &base) else {
                    in_env = false;
                    break;
                };
                for m in &mut list {
                    let uri = match m["relative_path"].as_str() {
                        Some(".") | None => base_uri.clone(),
                        Some(rel) => format!("{base_uri}/{rel}"),
                    };
                    m["content_uri"] = Value::String(uri);
                }
                by_source.insert(source.clone(), Value::Array(list));
                if first_only {
                    break;
                }
            }
            if in_env && !by_source.is_empty() {
                out.recursive
                    .insert(r.title.clone(), Value::Object(by_source));
            }
        } else {
            // The first source that exists (Puppet fails the compile when none does; the
            // agent reports it the same way when asking itself, so Ordo leaves it to it).
            let found = sources.iter().find_map(|source| {
                let (dirs, rel) = files::resolve(env, module_path(source)?)?;
                Some((source, files::metadata(&dirs, &rel, &o)?))
            });
            let Some((source, mut m)) = found else {
                continue;
            };
            let Some(full) = m["path"].as_str().map(String::from) else {
                continue;
            };
            if let Some(uri) = content_uri(env, source, &full) {
                m["content_uri"] = Value::String(uri);
                m["source"] = Value::String(source.clone());
                out.metadata.insert(r.title.clone(), m);
            }
        }
    }
    out
}

/// The resource's sources, as strings (trailing slashes removed, as the `source`
/// parameter normalizes them).
fn sources(r: &Resource) -> Vec<String> {
    let norm = |s: &str| {
        let t = s.trim_end_matches('/');
        if t.is_empty() { s } else { t }.to_string()
    };
    match r.parameters.get("source") {
        Some(Value::String(s)) => vec![norm(s)],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(norm).collect(),
        _ => Vec::new(),
    }
}

/// Puppet's `inlineable?`: present, with sources, all of them `puppet:`.
fn inlineable(r: &Resource, sources: &[String]) -> bool {
    r.parameters.get("ensure").and_then(Value::as_str) != Some("absent")
        && !sources.is_empty()
        && sources.iter().all(|s| s.starts_with("puppet:"))
}

/// The mount path of a `puppet://[SERVER]/modules/...` source (`modules/...`); `None` for
/// another mount (only module files are inlined).
fn module_path(source: &str) -> Option<&str> {
    let rest = source.strip_prefix("puppet://")?;
    let (_, path) = rest.split_once('/')?;
    path.starts_with("modules/").then_some(path)
}

/// Puppet's `content_uri`: `puppet://[SERVER]/` and the file's path within the environment
/// directory, when that path is `DIR/MODULE/files/...` (Puppet's `inlineable_metadata?`).
fn content_uri(env: &Env, source: &str, full_path: &str) -> Option<String> {
    let rel = Path::new(full_path).strip_prefix(&env.dir).ok()?;
    let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
    if parts.len() < 4 || parts[2] != "files" {
        return None;
    }
    let authority = source
        .strip_prefix("puppet://")
        .and_then(|r| r.split_once('/'))
        .map_or("", |(a, _)| a);
    Some(format!("puppet://{authority}/{}", parts.join("/")))
}

/// The file a `static_file_content` path names: `DIR/MODULE/files/...` in the environment
/// directory. `None` for any other path.
pub fn static_file(env: &Env, path: &str) -> Option<std::path::PathBuf> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if parts.len() < 4
        || parts[2] != "files"
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return None;
    }
    let p = env.dir.join(parts.join("/"));
    p.is_file().then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_type_is_the_agents_first_known() {
        assert_eq!(
            common_checksum_type("sha256.sha1.sha224.sha384.sha512.md5"),
            Some("sha256")
        );
        assert_eq!(common_checksum_type("sha512.md5"), Some("md5"));
        assert_eq!(common_checksum_type("sha512"), None);
    }

    #[test]
    fn module_sources_only() {
        assert_eq!(module_path("puppet:///modules/m/f"), Some("modules/m/f"));
        assert_eq!(
            module_path("puppet://srv:8140/modules/m/f"),
            Some("modules/m/f")
        );
        assert_eq!(module_path("puppet:///mount/f"), None);
        assert_eq!(module_path("https://x/modules/m/f"), None);
    }
}
