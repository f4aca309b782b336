//! The registry of built-in functions (src/eval/functions/registry.rs) has no dead entries
//! and misses no function: every entry is reachable by its name from a manifest (a module's
//! only when a module ships it), and every function of Puppet's own is in it, but those
//! listed here.

use crate::common::prerequisite;
use ordo::eval::{compile, CompileOptions, FunctionOrigin, Loader, NoModules, FUNCTIONS};
use std::collections::BTreeSet;

/// Puppet 7.23's functions that are not built in: Hiera's data providers (Ordo's Hiera
/// reads YAML, JSON and HOCON itself; no manifest calls them) and two that Ordo does not
/// have (docs/differences.md).
const NOT_BUILT_IN: &[&str] = &[
    "annotate",
    "eyaml_lookup_key",
    "hocon_data",
    "json_data",
    "scanf",
    "yaml_data",
];

/// A modulepath whose modules ship every Ruby function (but no file).
struct ShipsEverything;

impl Loader for ShipsEverything {
    fn load(&self, _module: &str, _path: &str) -> Option<(String, String)> {
        None
    }

    fn has_ruby_function(&self, _name: &str) -> bool {
        true
    }
}

/// What compiling a call of `name` without arguments says: the messages of its errors.
fn call_errors(name: &str, loader: &dyn Loader) -> String {
    let result = compile(
        "site.pp",
        &format!("$x = {name}()\n"),
        loader,
        &CompileOptions::default(),
    );
    result
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn one_entry_per_name() {
    let names: BTreeSet<&str> = FUNCTIONS.iter().map(|e| e.name).collect();
    assert!(FUNCTIONS.len() > 200, "only {} entries", FUNCTIONS.len());
    assert_eq!(names.len(), FUNCTIONS.len(), "a name has two entries");
}

#[test]
fn every_entry_is_reachable_by_its_name() {
    let mut unreachable = vec![];
    for e in FUNCTIONS {
        let shipped = call_errors(e.name, &ShipsEverything);
        if shipped.contains("Unknown function") {
            unreachable.push(format!("{}: {shipped}", e.name));
        }
        // Without modules: Puppet's own are there, a module's are not.
        let bare = call_errors(e.name, &NoModules);
        let unknown = bare.contains(&format!("Unknown function: '{}'", e.name));
        match e.origin {
            FunctionOrigin::Module if !unknown => {
                unreachable.push(format!("{}: there without its module: {bare}", e.name))
            }
            FunctionOrigin::Puppet | FunctionOrigin::ModuleOr(_) if unknown => {
                unreachable.push(format!("{}: missing without modules", e.name))
            }
            _ => {}
        }
    }
    assert!(unreachable.is_empty(), "{}", unreachable.join("\n"));
}

/// Every function Puppet itself defines (lib/puppet/functions and the 3.x
/// lib/puppet/parser/functions of the installed Puppet) is in the registry, and nothing
/// Puppet defines is listed as not built in without reason.
#[test]
fn every_puppet_function_is_registered() {
    let root = std::path::Path::new("/usr/lib/ruby/vendor_ruby/puppet");
    if !prerequisite(
        root.is_dir(),
        "Puppet's Ruby source (/usr/lib/ruby/vendor_ruby/puppet)",
    ) {
        return;
    }
    let mut puppet = BTreeSet::new();
    for dir in ["functions", "parser/functions"] {
        for f in std::fs::read_dir(root.join(dir))
            .expect("read Puppet's functions")
            .flatten()
        {
            let name = f.file_name().to_string_lossy().into_owned();
            if let Some(n) = name.strip_suffix(".rb") {
                puppet.insert(n.to_string());
            }
        }
    }
    assert!(
        puppet.len() > 90,
        "only {} Puppet functions found",
        puppet.len()
    );
    let registered: BTreeSet<String> = FUNCTIONS.iter().map(|e| e.name.to_string()).collect();
    let missing: Vec<&String> = puppet
        .iter()
        .filter(|n| !registered.contains(*n) && !NOT_BUILT_IN.contains(&n.as_str()))
        .collect();
    assert!(missing.is_empty(), "not registered: {missing:?}");
    for n in NOT_BUILT_IN {
        assert!(puppet.contains(*n), "{n} is not one of Puppet's functions");
        assert!(!registered.contains(*n), "{n} is registered");
        assert!(
            call_errors(n, &NoModules).contains("Unknown function"),
            "{n} is callable"
        );
    }
}

/// Every signature (Puppet's generated table and stdlib's) belongs to a registered function
/// (or one of Puppet's not built in): none describes a function no call reaches.
#[test]
fn every_signature_has_its_function() {
    let mut orphans = vec![];
    for name in ordo::eval::signature_names() {
        if ordo::eval::FUNCTIONS.iter().all(|e| e.name != name) && !NOT_BUILT_IN.contains(&name) {
            orphans.push(name);
        }
    }
    assert!(
        orphans.is_empty(),
        "signatures without a function: {orphans:?}"
    );
}
