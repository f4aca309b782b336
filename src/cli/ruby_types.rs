//! The schemas of the resource types the modules ship in Ruby (`lib/puppet/type/*.rb`),
//! read by the machine's `ruby` running `src/ruby/types.rb`: a stand-in for Puppet's type
//! DSL that records each type's key attributes, parameters, properties, providers and title
//! patterns, and prints them as JSON (the format of `--types` files, see
//! `eval::type_schema`).
//!
//! Ruby runs once per process and modulepath, when a compile first asks for the schema of a
//! Ruby type; every later compile of the process (`--nodes`) reuses the answer. Without a
//! `ruby`, or when it fails, one warning is printed and the types stay unchecked, as with no
//! schema at all.

use crate::eval::type_schema::{parse_schemas, TypeSchema};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SCRIPT: &str = include_str!("../ruby/types.rb");

/// How long the types may take to load before Ordo gives up on them.
const TIMEOUT: Duration = Duration::from_secs(60);

pub type Schemas = Arc<HashMap<String, TypeSchema>>;

/// The schemas read so far in this process, by modulepath.
static READ: Mutex<Vec<(Vec<PathBuf>, Schemas)>> = Mutex::new(Vec::new());

/// The schemas of the Ruby types of the modules in `dirs` (read on first use).
pub fn schemas(dirs: &[PathBuf]) -> Schemas {
    // Held while Ruby runs: compiles on other threads wait for the one answer.
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, s)) = read.iter().find(|(d, _)| d == dirs) {
        return s.clone();
    }
    let schemas = match run(dirs).and_then(|text| parse_schemas(&text)) {
        Ok(s) => s,
        Err(why) => {
            eprintln!(
                "Warning: the modules' Ruby resource types are not checked: {why} (install ruby, or give --types FILE)"
            );
            HashMap::new()
        }
    };
    let schemas = Arc::new(schemas);
    read.push((dirs.to_vec(), schemas.clone()));
    schemas
}

/// Runs the script over the modulepath; its JSON output.
fn run(dirs: &[PathBuf]) -> Result<String, String> {
    let mut args = vec![std::ffi::OsStr::new("-")];
    args.extend(dirs.iter().map(|d| d.as_os_str()));
    crate::ruby::run_once(&args, SCRIPT.as_bytes(), TIMEOUT).map_err(|e| match e {
        crate::ruby::RunFailure::NotInstalled => "could not run ruby: it is not installed".into(),
        crate::ruby::RunFailure::Failed(why) => why,
    })
}
