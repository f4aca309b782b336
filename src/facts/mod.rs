//! Facts: read from a file (JSON or YAML, `file`), or gathered from this machine as Facter 4
//! gathers them on Linux: the same names, structure, types and values (`ordo facts`
//! against `facter --json --show-legacy`: scripts/facts_diff.py), with external facts
//! (`facts.d`, `FACTER_*`) and the modules' custom facts (`lib/facter/*.rb`, run by `ruby`:
//! `custom`).
//!
//! This is IO and lives outside the evaluator, which only receives facts as data. One file
//! per group of facts; a fact that cannot be gathered (a missing tool, a permission) is a
//! warning and is absent, never the end of the run.

#![allow(clippy::disallowed_methods)]

mod custom;
mod external;
mod file;
mod hardware;
mod net;
mod os;
mod system;
mod util;

pub use custom::{custom_fact_dirs, module_external_dirs};
pub use external::{default_external_dirs, env_facts, external_facts};
pub use file::{parse_facts, read_facts, FactsError, FactsRefusal};

use serde_json::{json, Map, Value as Json};
use std::path::PathBuf;

/// The Facter release whose facts Ordo gathers (reported as `facterversion`).
pub const FACTER_VERSION: &str = "4.3.0";

/// What `uname(2)` says, read once.
pub struct Uname {
    pub machine: String,
    pub release: String,
}

/// Facts being gathered: the core (structured) facts, the legacy flat ones, and what
/// could not be gathered.
pub struct Gather {
    pub core: Map<String, Json>,
    pub legacy: Map<String, Json>,
    pub warnings: Vec<String>,
    pub uname: Uname,
    /// The processor type (`uname -p`, which Facter runs): `unknown` on most Linux builds
    /// of coreutils.
    pub isa: String,
}

impl Gather {
    /// Sets a core fact (a `null` value is no fact, as in Facter).
    pub fn core(&mut self, name: &str, value: Json) {
        if !value.is_null() {
            self.core.insert(name.to_string(), value);
        }
    }

    /// Sets a legacy fact (a `null` value is no fact).
    pub fn legacy(&mut self, name: &str, value: Json) {
        if !value.is_null() {
            self.legacy.insert(name.to_string(), value);
        }
    }

    pub fn legacy_opt(&mut self, name: &str, value: Option<Json>) {
        if let Some(v) = value {
            self.legacy(name, v);
        }
    }

    /// A fact that could not be gathered: a warning, and the fact stays absent.
    pub fn warn(&mut self, fact: &str, why: impl std::fmt::Display) {
        self.warnings
            .push(format!("Fact {fact} could not be gathered: {why}"));
    }
}

/// A mapping of the pairs whose value is present (Facter leaves out `nil` values).
pub fn obj(pairs: Vec<(&str, Option<Json>)>) -> Json {
    let mut m = Map::new();
    for (k, v) in pairs {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            m.insert(k.to_string(), v);
        }
    }
    Json::Object(m)
}

/// Where and how to gather.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Folders of external facts (`facts.d`); `None`: Facter's default folders.
    pub external_dirs: Option<Vec<PathBuf>>,
    /// Leave out the facts of `facts.d` folders.
    pub no_external: bool,
    /// The modulepath: its modules' custom facts (`lib/facter/*.rb`) and external facts
    /// (`facts.d`) are gathered too, as Puppet's agent does.
    pub module_dirs: Vec<PathBuf>,
    /// More folders of custom facts (Facter's `--custom-dir`).
    pub custom_dirs: Vec<PathBuf>,
    /// Leave out custom facts.
    pub no_custom: bool,
}

/// Gathered facts: the core facts, the legacy ones, the external ones (`facts.d` files and
/// `FACTER_*` variables), the custom ones (`null`: a custom fact without a value, which
/// hides the core fact of its name), and warnings.
pub struct Gathered {
    pub core: Map<String, Json>,
    pub legacy: Map<String, Json>,
    pub external: Map<String, Json>,
    pub custom: Map<String, Json>,
    pub warnings: Vec<String>,
}

impl Gathered {
    /// All facts as one mapping, sorted by name (external facts override core ones, custom
    /// facts both, as in Facter); legacy facts included when asked.
    pub fn all(&self, with_legacy: bool) -> Map<String, Json> {
        let mut all = self.core.clone();
        if with_legacy {
            for (k, v) in &self.legacy {
                all.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        for (k, v) in &self.external {
            all.insert(k.clone(), v.clone());
        }
        for (k, v) in &self.custom {
            if v.is_null() {
                all.remove(k);
            } else {
                all.insert(k.clone(), v.clone());
            }
        }
        sorted(all)
    }
}

/// A mapping with its keys sorted, nested mappings too (lists keep their order), as
/// Facter prints them.
fn sorted(m: Map<String, Json>) -> Map<String, Json> {
    let mut pairs: Vec<(String, Json)> = m.into_iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                Json::Object(o) => Json::Object(sorted(o)),
                other => other,
            };
            (k, v)
        })
        .collect()
}

/// Gathers the facts of this machine.
pub fn gather(opts: &Options) -> Gathered {
    // The two facts that run a program wait on it beside the rest, not before it.
    let augeas = std::thread::spawn(system::augeas_version);
    let isa = std::thread::spawn(|| util::run("uname", &["-p"]));
    let uname = rustix::system::uname();
    let mut g = Gather {
        core: Map::new(),
        legacy: Map::new(),
        warnings: Vec::new(),
        uname: Uname {
            machine: uname.machine().to_string_lossy().into_owned(),
            release: uname.release().to_string_lossy().into_owned(),
        },
        isa: isa
            .join()
            .ok()
            .flatten()
            .map(|s| s.trim().rsplit('.').next().unwrap_or("").to_string())
            .unwrap_or_else(|| "unknown".into()),
    };
    os::gather(&mut g);
    net::gather(&mut g);
    hardware::gather(&mut g);
    system::gather(&mut g, augeas.join().ok().flatten());
    g.core("facterversion", json!(FACTER_VERSION));
    let mut external = Map::new();
    if !opts.no_external {
        let mut dirs = opts
            .external_dirs
            .clone()
            .unwrap_or_else(default_external_dirs);
        dirs.extend(module_external_dirs(&opts.module_dirs));
        external = external_facts(&dirs, &mut g.warnings);
    }
    let env = env_facts();
    let mut custom = Map::new();
    if !opts.no_custom {
        let mut dirs = custom_fact_dirs(&opts.module_dirs);
        dirs.extend(opts.custom_dirs.iter().cloned());
        let mut known = g.legacy.clone();
        known.extend(g.core.iter().map(|(k, v)| (k.clone(), v.clone())));
        custom = custom::custom_facts(&dirs, &known, &external, &env, &mut g.warnings);
    }
    external.extend(env);
    Gathered {
        core: g.core,
        legacy: g.legacy,
        external,
        custom,
        warnings: g.warnings,
    }
}

/// The facts a compile of this machine sees, as Puppet's agent gives them: Facter's core
/// and legacy facts, external facts, and what Puppet adds itself
/// (`Puppet::Node::Facts#add_local_facts`), with the custom and external facts of the
/// modules in `module_dirs`. Warnings are printed on standard error.
pub fn local_facts(node: &str, module_dirs: &[PathBuf]) -> Json {
    let gathered = gather(&Options {
        module_dirs: module_dirs.to_vec(),
        ..Options::default()
    });
    for w in &gathered.warnings {
        eprintln!("Warning: {w}");
    }
    let mut facts = gathered.all(true);
    facts.insert("clientcert".into(), json!(node));
    facts.insert("clientversion".into(), json!(crate::PUPPET_VERSION));
    facts.insert("clientnoop".into(), json!(false));
    Json::Object(facts)
}
