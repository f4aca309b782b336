//! Module custom facts: the `lib/facter/*.rb` files of the modules on a modulepath (and
//! their `plugins/facter`, as Puppet searches), run by the machine's `ruby` through
//! `custom.rb`, Ordo's stand-in for Facter's Ruby API (see docs/facts.md).
//!
//! Ruby runs once per gathering, and only when some folder holds a `.rb` file: a machine
//! without module facts never starts it. It gets every fact gathered so far (core, legacy,
//! external, `FACTER_*`) and answers the value of each custom fact; a fact whose code fails
//! is a warning and absent. Without `ruby`, one warning names the package and no custom fact
//! is set.

use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};
use std::time::Duration;

const SCRIPT: &str = concat!(
    include_str!("../ruby/require.rb"),
    include_str!("custom.rb")
);

/// The longest the custom facts may take together (Facter gives each command 300 s; a
/// module fact that hangs should not hold an apply for that long).
const TIMEOUT: Duration = Duration::from_secs(120);

/// The folders of custom facts of the modules in `module_dirs`: `MODULE/lib/facter` and
/// `MODULE/plugins/facter`, modules in name order, in modulepath order.
pub fn custom_fact_dirs(module_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for m in module_dirs_of(module_dirs) {
        for sub in ["lib/facter", "plugins/facter"] {
            let d = m.join(sub);
            if d.is_dir() {
                dirs.push(d);
            }
        }
    }
    dirs
}

/// The external fact folders (`MODULE/facts.d`) of the modules in `module_dirs`.
pub fn module_external_dirs(module_dirs: &[PathBuf]) -> Vec<PathBuf> {
    module_dirs_of(module_dirs)
        .into_iter()
        .map(|m| m.join("facts.d"))
        .filter(|d| d.is_dir())
        .collect()
}

/// The modules of these modulepath folders, each folder's in name order.
fn module_dirs_of(module_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in module_dirs {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut mods: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        mods.sort();
        out.extend(mods.into_iter().filter(|m| m.is_dir()));
    }
    out
}

/// Whether a folder holds a Ruby file (what Facter would load).
fn has_ruby(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "rb") && e.path().is_file())
    })
}

/// The custom facts of these folders, given the facts gathered so far: each fact a custom
/// resolution defines, with its value (`null`: no value; the fact is then absent). Warnings
/// (a fact that raised, a file that does not load, no Ruby) are added to `warnings`.
pub fn custom_facts(
    dirs: &[PathBuf],
    core: &Map<String, Json>,
    external: &Map<String, Json>,
    env: &Map<String, Json>,
    warnings: &mut Vec<String>,
) -> Map<String, Json> {
    let dirs: Vec<&PathBuf> = dirs.iter().filter(|d| has_ruby(d)).collect();
    if dirs.is_empty() {
        return Map::new();
    }
    // The modules' lib folders, for their own `require 'facter/util/x'` and `puppet_x`.
    let text = |p: &Path| Json::String(p.to_string_lossy().into_owned());
    let lib: Vec<Json> = dirs.iter().filter_map(|d| d.parent()).map(text).collect();
    let dirs: Vec<Json> = dirs.iter().map(|d| text(d)).collect();
    let input = json!({"dirs": dirs, "lib": lib, "core": core, "external": external, "env": env});
    let input = serde_json::to_vec(&input).unwrap_or_default();
    let args = ["--disable-gems", "--disable-did_you_mean", "-e", SCRIPT];
    let out = match crate::ruby::run_once(&args, &input, TIMEOUT) {
        Ok(t) => t,
        Err(e) => {
            warnings.push(format!(
                "the modules' custom facts (lib/facter/*.rb) are not set: {e}"
            ));
            return Map::new();
        }
    };
    let answer: Json = match serde_json::from_str(out.trim_end()) {
        Ok(v) => v,
        Err(e) => {
            warnings.push(format!(
                "the modules' custom facts (lib/facter/*.rb) are not set: Ruby's answer cannot be read ({e})"
            ));
            return Map::new();
        }
    };
    if let Some(ws) = answer.get("warnings").and_then(Json::as_array) {
        warnings.extend(ws.iter().filter_map(Json::as_str).map(String::from));
    }
    match answer.get("values") {
        Some(Json::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}
