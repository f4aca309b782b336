//! Hiera 5: hierarchies of YAML and JSON data behind `lookup()` and automatic class
//! parameter lookup, in Puppet's three layers (global `--hiera-config`, environment,
//! module), with interpolation, merge strategies and `lookup_options`.
//!
//! **Invariant:** no IO here. Files come through a [`DataSource`] with layer-qualified paths:
//! `global/<path>` (beside the `--hiera-config` file), `env/<path>` (the environment root) and
//! `module/<name>/<path>`; variables through a callback, so the evaluator stays pure.

pub mod merge;
pub mod yaml;

use crate::eval::values::value::Value;
use indexmap::IndexMap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use merge::Merge;

/// Reads a file of a layer; `Ok(None)` when it does not exist, `Err` when it exists but
/// cannot be read as text (a FIFO, a device, a directory, a link loop, no permission).
pub trait DataSource {
    fn read(&self, path: &str) -> Result<Option<Arc<str>>, String>;

    /// Where the compiles of the same code share the files they parsed, if they do.
    fn shared(&self) -> Option<&Shared> {
        None
    }
}

/// Configs and data files parsed, shared by the compiles of the same code (kept with the
/// environment's trees, dropped with them): by path, with the text parsed (a file read
/// again with another text is parsed again). Bounded by [`MAX_SHARED`] files.
#[derive(Default)]
pub struct Shared {
    configs: Mutex<HashMap<String, (Arc<str>, ConfigResult)>>,
    data: Mutex<HashMap<String, (Arc<str>, DataResult)>>,
}

type ConfigResult = Result<Arc<Config>, String>;
type DataResult = Result<Option<Arc<Value>>, String>;

/// The most files [`Shared`] keeps of each kind.
pub const MAX_SHARED: usize = 10_000;

/// The parse of `text` (file `path`) another compile made, else made and kept.
fn shared<T: Clone>(
    map: &Mutex<HashMap<String, (Arc<str>, T)>>,
    path: &str,
    text: &Arc<str>,
    parse: impl FnOnce() -> T,
) -> T {
    let lock = || map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((kept, v)) = lock().get(path) {
        if Arc::ptr_eq(kept, text) || **kept == **text {
            return v.clone();
        }
    }
    let v = parse();
    let mut m = lock();
    if m.len() < MAX_SHARED || m.contains_key(path) {
        m.insert(path.to_string(), (text.clone(), v.clone()));
    }
    v
}

/// One level of a hierarchy: its data files (layer-qualified) and backend.
#[derive(Clone, Debug)]
struct Level {
    paths: Vec<String>,
    json: bool,
}

#[derive(Clone, Debug, Default)]
struct Config {
    levels: Vec<Level>,
}

/// Parsed configs and data files, kept for the whole compile, shared by reference (a
/// lookup copies only the value it finds).
#[derive(Default)]
pub struct Cache {
    configs: HashMap<String, Option<Arc<Config>>>,
    data: HashMap<String, Option<Arc<Value>>>,
    /// Hierarchy paths that interpolate only `facts`, `trusted` and `server_facts` (which
    /// a compile cannot change), as interpolated.
    paths: HashMap<String, String>,
    /// The `lookup_options` of a set of data files (named by their paths), merged.
    options: HashMap<String, Arc<Value>>,
    /// The `lookup_options` keys that are regular expressions, compiled.
    regexes: HashMap<String, Option<regex::Regex>>,
    /// The data files a key's lookup reads, by the layers it looks in (only the global
    /// layer or all; the key's module), when every hierarchy path is constant in a compile.
    files: [HashMap<String, Arc<DataFiles>>; 2],
    /// A key's `lookup_options` entry, by layers and key, when its data files are constant.
    key_options: [HashMap<String, Option<Value>>; 2],
    /// Whether the environment has a `hiera.yaml` of its own.
    env_config: Option<bool>,
}

/// The data files of a lookup's layers, highest priority first, with whether each is JSON.
struct DataFiles {
    list: Vec<(String, bool)>,
    /// The paths, one a line: what names the set in [`Cache::options`].
    name: String,
    /// Whether the list is the same for every lookup of the compile (each hierarchy path
    /// interpolates only what a compile cannot change).
    constant: bool,
}

/// Resolves `%{...}` variables: dotted names (`facts.os.family`, `::fqdn`).
pub type Vars<'v> = dyn FnMut(&str) -> Value + 'v;

fn get_str<'j>(m: &'j serde_json::Value, k: &str) -> Option<&'j str> {
    m.get(k).and_then(|v| v.as_str())
}

impl Cache {
    /// The config of a layer (`global`, `env`, `module/<name>`), parsed once. An environment
    /// without `hiera.yaml` gets Puppet's default (`data/common.yaml`); a module without one
    /// has no data.
    fn config(
        &mut self,
        src: &dyn DataSource,
        layer: &str,
        file: &str,
    ) -> Result<Option<Arc<Config>>, String> {
        if let Some(c) = self.configs.get(layer) {
            return Ok(c.clone());
        }
        let path = format!("{layer}/{file}");
        let cfg = match src.read(&path)? {
            Some(text) => {
                let parse = || {
                    parse_config(&text, layer)
                        .map(Arc::new)
                        .map_err(|e| format!("{path}: {e}"))
                };
                Some(match src.shared() {
                    Some(s) => shared(&s.configs, &path, &text, parse),
                    None => parse(),
                }?)
            }
            None if layer == "env" => Some(Arc::new(Config {
                levels: vec![Level {
                    paths: vec![format!("{layer}/data/common.yaml")],
                    json: false,
                }],
            })),
            None => None,
        };
        self.configs.insert(layer.to_string(), cfg.clone());
        Ok(cfg)
    }

    fn data(
        &mut self,
        src: &dyn DataSource,
        path: &str,
        json: bool,
    ) -> Result<Option<Arc<Value>>, String> {
        if let Some(d) = self.data.get(path) {
            return Ok(d.clone());
        }
        let v = match src.read(path)? {
            None => None,
            Some(text) => {
                let parse = || -> DataResult {
                    let j = if json {
                        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?
                    } else {
                        yaml::parse(&text).map_err(|e| format!("Unable to parse {path}: {e}"))?
                    };
                    match j {
                        serde_json::Value::Null => Ok(None),
                        serde_json::Value::Object(_) => Ok(Some(Arc::new(Value::from_json(&j)))),
                        _ => Err(format!("{path}: data must be a hash")),
                    }
                };
                match src.shared() {
                    Some(s) => shared(&s.data, path, &text, parse),
                    None => parse(),
                }?
            }
        };
        self.data.insert(path.to_string(), v.clone());
        Ok(v)
    }
}

fn parse_config(text: &str, layer: &str) -> Result<Config, String> {
    let j = yaml::parse(text)?;
    // No `version` is Hiera 3's format, which Puppet ignores in a module (with a warning).
    let version = j.get("version").and_then(|v| v.as_i64()).unwrap_or(3);
    if version == 3 && layer.starts_with("module/") {
        return Ok(Config { levels: vec![] });
    }
    if version != 5 && version != 4 {
        return Err(format!(
            "hiera.yaml version {version} is not supported (only versions 4 and 5)"
        ));
    }
    // Version 4: a top-level `datadir`, and each level's `backend` (yaml or json).
    let defaults = if version == 4 {
        Some(&j)
    } else {
        j.get("defaults")
    };
    let default_dir = defaults
        .and_then(|d| get_str(d, "datadir"))
        .unwrap_or("data")
        .to_string();
    let default_json = defaults.and_then(|d| get_str(d, "data_hash")) == Some("json_data");
    let mut levels = vec![];
    // Without a hierarchy, Hiera 5's default: one level, `common.yaml` in the datadir.
    let hierarchy = match j.get("hierarchy") {
        Some(h) => h.as_array().cloned().unwrap_or_default(),
        None => vec![serde_json::json!({"name": "Common", "path": "common.yaml"})],
    };
    for h in hierarchy {
        let dir = get_str(&h, "datadir")
            .unwrap_or(&default_dir)
            .trim_end_matches('/')
            .to_string();
        let json = match get_str(&h, "data_hash").or_else(|| get_str(&h, "backend")) {
            Some(b) => b == "json_data" || b == "json",
            None => default_json,
        };
        if h.get("lookup_key").is_some() || h.get("data_dig").is_some() {
            // Custom backends are Ruby; they contribute nothing here.
            continue;
        }
        // A data_hash function of the level or the defaults, other than yaml_data and
        // json_data, is Ruby or Puppet code Ordo does not call here.
        let data_hash =
            get_str(&h, "data_hash").or_else(|| defaults.and_then(|d| get_str(d, "data_hash")));
        if matches!(data_hash, Some(b) if b != "json_data" && b != "yaml_data") {
            continue;
        }
        let mut paths = vec![];
        if let Some(p) = get_str(&h, "path") {
            paths.push(p.to_string());
        }
        if let Some(ps) = h.get("paths").and_then(|p| p.as_array()) {
            paths.extend(ps.iter().filter_map(|p| p.as_str().map(String::from)));
        }
        let located = ["glob", "globs", "mapped_paths"]
            .iter()
            .any(|k| h.get(*k).is_some());
        if paths.is_empty() && !located {
            if version == 4 {
                // Version 4 names the file after the level.
                let ext = if json { "json" } else { "yaml" };
                paths.push(format!("{}.{ext}", get_str(&h, "name").unwrap_or("common")));
            } else {
                let backend = if json { "json_data" } else { "yaml_data" };
                return Err(format!(
                    "'{backend}' one of 'path', 'paths' 'glob', 'globs' or 'mapped_paths' must be declared in hiera.yaml when using this data_hash function"
                ));
            }
        }
        levels.push(Level {
            paths: paths
                .into_iter()
                .map(|p| format!("{layer}/{dir}/{p}"))
                .collect(),
            json,
        });
    }
    Ok(Config { levels })
}

/// Everything one lookup needs.
pub struct Lookup<'a, 'v> {
    pub src: &'a dyn DataSource,
    pub cache: &'a mut Cache,
    pub vars: &'a mut Vars<'v>,
    /// The global layer's config file name, when `--hiera-config` was given.
    pub global: Option<String>,
    /// Only the global layer (the `hiera_*` functions when the environment has no
    /// `hiera.yaml`).
    pub global_only: bool,
    depth: usize,
}

impl<'a, 'v> Lookup<'a, 'v> {
    pub fn new(
        src: &'a dyn DataSource,
        cache: &'a mut Cache,
        vars: &'a mut Vars<'v>,
        global: Option<String>,
    ) -> Self {
        Lookup {
            src,
            cache,
            vars,
            global,
            global_only: false,
            depth: 0,
        }
    }

    /// Whether the environment has a `hiera.yaml` of its own (Puppet's environment data
    /// provider), rather than the default hierarchy.
    pub fn env_has_config(&mut self) -> bool {
        if let Some(has) = self.cache.env_config {
            return has;
        }
        // An unreadable one counts as there: reading its config then says why.
        let has = !matches!(self.src.read("env/hiera.yaml"), Ok(None));
        self.cache.env_config = Some(has);
        has
    }

    fn layers(&mut self, key: &str) -> Result<Vec<Arc<Config>>, String> {
        let mut out = vec![];
        if let Some(g) = self.global.clone() {
            if let Some(c) = self.cache.config(self.src, "global", &g)? {
                out.push(c);
            }
        }
        if self.global_only {
            return Ok(out);
        }
        if let Some(c) = self.cache.config(self.src, "env", "hiera.yaml")? {
            out.push(c);
        }
        let key = key.trim_start_matches("::");
        if let Some((module, _)) = key.split_once("::") {
            if let Some(c) =
                self.cache
                    .config(self.src, &format!("module/{module}"), "hiera.yaml")?
            {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// Every value found for `key` (segments after the first dot dig into it), highest
    /// priority first.
    fn found(&mut self, key: &str) -> Result<Vec<Value>, String> {
        let (root, dig) = split_key(key);
        let root_key = Value::str(root.clone());
        let mut out = vec![];
        let files = self.data_files(&root)?;
        for (path, json) in &files.list {
            let Some(data) = self.cache.data(self.src, path, *json)? else {
                continue;
            };
            let Value::Hash(h) = &*data else {
                continue;
            };
            let Some(mut v) = h.get(&root_key) else {
                continue;
            };
            // Dug by reference: only what is found is copied.
            let mut missing = false;
            for seg in &dig {
                let next = match v {
                    Value::Hash(h) => h.get(&Value::str(seg.as_str())),
                    Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                };
                match next {
                    Some(n) => v = n,
                    None => {
                        missing = true;
                        break;
                    }
                }
            }
            if missing || (!dig.is_empty() && v.is_undef()) {
                continue;
            }
            let v = v.clone();
            out.push(if interpolated(&v) {
                self.interpolate(v)?
            } else {
                v
            });
        }
        Ok(out)
    }

    /// The data files of the layers a key is looked up in, highest priority first, with
    /// whether each is JSON.
    fn data_files(&mut self, root: &str) -> Result<Arc<DataFiles>, String> {
        let module = module_of(root);
        let which = usize::from(self.global_only);
        if let Some(f) = self.cache.files[which].get(module) {
            return Ok(f.clone());
        }
        let mut list = vec![];
        let mut constant = true;
        for cfg in self.layers(root)? {
            for level in &cfg.levels {
                for p in &level.paths {
                    constant &= constant_path(p);
                    list.push((self.path(p)?, level.json));
                }
            }
        }
        let name: Vec<&str> = list.iter().map(|(p, _)| p.as_str()).collect();
        let name = name.join("\n");
        let files = Arc::new(DataFiles {
            list,
            name,
            constant,
        });
        if constant {
            self.cache.files[which].insert(module.to_string(), files.clone());
        }
        Ok(files)
    }

    /// A hierarchy path, interpolated: once per compile when it names only what a compile
    /// cannot change (`facts`, `trusted`, `server_facts`).
    fn path(&mut self, p: &str) -> Result<String, String> {
        if let Some(done) = self.cache.paths.get(p) {
            return Ok(done.clone());
        }
        let done = self.interpolate_str(p)?;
        if constant_path(p) {
            self.cache.paths.insert(p.to_string(), done.clone());
        }
        Ok(done)
    }

    /// The `lookup_options` entry of a key (its own name, else the first regex that
    /// matches it), merged deep over the layers.
    fn key_options(&mut self, key: &str) -> Result<Option<Value>, String> {
        if key == "lookup_options" {
            return Ok(None);
        }
        let (root, _) = split_key(key);
        let which = usize::from(self.global_only);
        if let Some(o) = self.cache.key_options[which].get(&root) {
            return Ok(o.clone());
        }
        let files = self.data_files(&root)?;
        let found = self.options_of(&root, &files)?;
        if files.constant {
            self.cache.key_options[which].insert(root, found.clone());
        }
        Ok(found)
    }

    /// The `lookup_options` entry of a key (by its root) in a set of data files.
    fn options_of(&mut self, root: &str, files: &DataFiles) -> Result<Option<Value>, String> {
        let opts = self.merged_options(files)?;
        let Value::Hash(h) = &*opts else {
            return Ok(None);
        };
        if let Some(v) = h.get(&Value::str(root)) {
            return Ok(Some(v.clone()));
        }
        for (k, v) in h.iter() {
            let Value::Str(k) = k else {
                continue;
            };
            if !k.starts_with('^') {
                continue;
            }
            let re = self
                .cache
                .regexes
                .entry(k.clone())
                .or_insert_with(|| regex::Regex::new(k).ok());
            if re.as_ref().is_some_and(|r| r.is_match(root)) {
                return Ok(Some(v.clone()));
            }
        }
        Ok(None)
    }

    /// The `lookup_options` of the data files a key is looked up in, merged deep over the
    /// layers; once per set of files.
    fn merged_options(&mut self, files: &DataFiles) -> Result<Arc<Value>, String> {
        if let Some(o) = self.cache.options.get(&files.name) {
            return Ok(o.clone());
        }
        let mut all = vec![];
        for (path, json) in &files.list {
            if let Some(data) = self.cache.data(self.src, path, *json)? {
                if let Value::Hash(h) = &*data {
                    if let Some(v) = h.get(&Value::str("lookup_options")) {
                        all.push(v.clone());
                    }
                }
            }
        }
        let mut opts = Value::Hash(Default::default());
        for o in all.into_iter().rev() {
            opts = merge::deep(opts, o);
        }
        let opts = Arc::new(opts);
        self.cache.options.insert(files.name.clone(), opts.clone());
        Ok(opts)
    }

    /// The merge strategy `lookup_options` gives a key, if any.
    fn options_merge(&mut self, key: &str) -> Result<Option<Merge>, String> {
        Ok(self.key_options(key)?.and_then(|e| match e {
            Value::Hash(eh) => eh.get(&Value::str("merge")).and_then(Merge::from_value),
            _ => None,
        }))
    }

    /// The `convert_to` of a key's `lookup_options` (a type name, or an array of the type
    /// name and the arguments of its `new`), if any.
    pub fn convert_to(&mut self, key: &str) -> Result<Option<Value>, String> {
        Ok(self.key_options(key)?.and_then(|e| match e {
            Value::Hash(eh) => eh.get(&Value::str("convert_to")).cloned(),
            _ => None,
        }))
    }

    /// `lookup(key)` with an explicit merge (else `lookup_options`, else first found).
    /// `Ok(None)`: not found.
    pub fn lookup(&mut self, key: &str, explicit: Option<Merge>) -> Result<Option<Value>, String> {
        self.depth += 1;
        if self.depth > 20 {
            return Err(format!("Recursive lookup detected in [{key}]"));
        }
        let strategy = match explicit {
            Some(m) => m,
            None => self.options_merge(key)?.unwrap_or(Merge::First),
        };
        let found = self.found(key);
        self.depth -= 1;
        strategy.combine(found?)
    }

    fn interpolate_str(&mut self, s: &str) -> Result<String, String> {
        match self.interpolate(Value::str(s))? {
            Value::Str(s) => Ok(s),
            other => Ok(other.to_display()),
        }
    }

    /// Replaces `%{...}` in strings, recursively through arrays and hashes.
    pub fn interpolate(&mut self, v: Value) -> Result<Value, String> {
        Ok(match v {
            Value::Str(s) if s.contains("%{") => self.interpolate_text(&s)?,
            Value::Array(a) => Value::Array(
                a.into_iter()
                    .map(|x| self.interpolate(x))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Hash(h) => {
                let mut out = IndexMap::new();
                for (k, x) in h {
                    out.insert(self.interpolate(k)?, self.interpolate(x)?);
                }
                Value::Hash(out.into())
            }
            other => other,
        })
    }

    fn interpolate_text(&mut self, s: &str) -> Result<Value, String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("%{") {
            out.push_str(&rest[..i]);
            let Some(end) = rest[i..].find('}') else {
                return Err(format!("Unterminated interpolation in '{s}'"));
            };
            let expr = rest[i + 2..i + end].trim();
            let whole = i == 0 && i + end + 1 == rest.len() && out.is_empty();
            rest = &rest[i + end + 1..];
            if let Some((f, arg)) = expr.split_once('(') {
                let arg = arg
                    .trim_end_matches(')')
                    .trim()
                    .trim_matches(|c| c == '\'' || c == '"');
                match f.trim() {
                    "lookup" | "hiera" => {
                        let v = self.lookup(arg, None)?.unwrap_or(Value::Undef);
                        out.push_str(&v.to_display());
                    }
                    "alias" => {
                        if !whole {
                            return Err(format!("'alias' interpolation is only permitted if the expression is equal to the entire string: '{s}'"));
                        }
                        return Ok(self.lookup(arg, None)?.unwrap_or(Value::Undef));
                    }
                    "literal" => out.push_str(arg),
                    "scope" => out.push_str(&(self.vars)(arg).to_display()),
                    other => return Err(format!("Unknown interpolation method '{other}'")),
                }
                continue;
            }
            let v = (self.vars)(expr);
            out.push_str(&match v {
                Value::Undef => String::new(),
                v => v.to_display(),
            });
        }
        out.push_str(rest);
        Ok(Value::Str(out))
    }
}

/// Whether a value holds a string to interpolate (`%{`).
fn interpolated(v: &Value) -> bool {
    match v {
        Value::Str(s) => s.contains("%{"),
        Value::Array(a) => a.iter().any(interpolated),
        Value::Hash(h) => h.iter().any(|(k, v)| interpolated(k) || interpolated(v)),
        _ => false,
    }
}

/// Whether every `%{...}` of a hierarchy path names `facts`, `trusted` or `server_facts`
/// (no function, no other variable): what a compile cannot change.
/// The module whose layer a key is looked up in (`""`: none).
fn module_of(key: &str) -> &str {
    key.trim_start_matches("::")
        .split_once("::")
        .map_or("", |(m, _)| m)
}

fn constant_path(p: &str) -> bool {
    let mut rest = p;
    while let Some(i) = rest.find("%{") {
        let Some(end) = rest[i..].find('}') else {
            return false;
        };
        let expr = rest[i + 2..i + end].trim().trim_start_matches("::");
        let first = expr.split('.').next().unwrap_or_default();
        if expr.contains('(') || !matches!(first, "facts" | "trusted" | "server_facts") {
            return false;
        }
        rest = &rest[i + end + 1..];
    }
    true
}

/// `a.b.0` -> root `a`, dig `[b, 0]`; quoted segments keep their dots.
fn split_key(key: &str) -> (String, Vec<String>) {
    if !key.contains(['.', '"', '\'']) {
        return (key.to_string(), vec![]);
    }
    let mut parts = vec![];
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in key.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '.') => parts.push(std::mem::take(&mut cur)),
            (None, c) => cur.push(c),
        }
    }
    parts.push(cur);
    let root = parts.remove(0);
    (root, parts)
}
