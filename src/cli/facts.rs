//! `ordo facts [QUERY...] [--json|--yaml] [--show-legacy]`: this machine's facts, printed
//! as `facter` prints them.

use crate::facts::{gather, Options};
use serde_json::{Map, Value as Json};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct FactsArgs {
    /// Facts to show (`os`, `os.release.major`, `processors.models.0`); all when none.
    pub query: Vec<String>,
    /// Print JSON.
    #[arg(long, conflicts_with = "yaml")]
    pub json: bool,
    /// Print YAML.
    #[arg(long)]
    pub yaml: bool,
    /// Include the legacy flat facts (`osfamily`, `ipaddress`...) when showing all facts.
    #[arg(long)]
    pub show_legacy: bool,
    /// A folder of external facts (repeatable; replaces Facter's default folders).
    #[arg(long, value_name = "DIR")]
    pub external_dir: Vec<PathBuf>,
    /// Leave out external facts.
    #[arg(long)]
    pub no_external_facts: bool,
    /// Module directories, separated with ':' (repeatable): their modules' custom facts
    /// (`lib/facter/*.rb`) and external facts (`facts.d`) are gathered too, as for a compile.
    #[arg(long)]
    pub modulepath: Vec<String>,
    /// A folder of custom facts (`*.rb`; repeatable), as facter's `--custom-dir`.
    #[arg(long, value_name = "DIR")]
    pub custom_dir: Vec<PathBuf>,
    /// Leave out custom facts.
    #[arg(long)]
    pub no_custom_facts: bool,
}

/// The value at a dotted path: a fact named so, else its parts into mappings and lists.
fn lookup<'a>(facts: &'a Map<String, Json>, query: &str) -> Option<&'a Json> {
    if let Some(v) = facts.get(query) {
        return Some(v);
    }
    let mut parts = query.split('.');
    let mut v = facts.get(parts.next()?)?;
    for p in parts {
        v = match v {
            Json::Object(m) => m.get(p)?,
            Json::Array(a) => a.get(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// Facter's own text format: `name => value`, mappings and lists indented by two, strings
/// quoted inside them but not at the top.
fn facter_text(v: &Json, indent: usize, top: bool) -> String {
    let pad = "  ".repeat(indent + 1);
    let close = "  ".repeat(indent);
    match v {
        Json::String(s) if top => s.clone(),
        Json::String(s) => serde_json::to_string(s).unwrap_or_default(),
        Json::Null => String::new(),
        Json::Object(m) if m.is_empty() => "{}".into(),
        Json::Array(a) if a.is_empty() => "[]".into(),
        Json::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{pad}{k} => {}", facter_text(v, indent + 1, false)))
                .collect();
            format!("{{\n{}\n{close}}}", items.join(",\n"))
        }
        Json::Array(a) => {
            let items: Vec<String> = a
                .iter()
                .map(|v| format!("{pad}{}", facter_text(v, indent + 1, false)))
                .collect();
            format!("[\n{}\n{close}]", items.join(",\n"))
        }
        other => other.to_string(),
    }
}

pub fn run(args: &FactsArgs) -> i32 {
    let opts = Options {
        external_dirs: (!args.external_dir.is_empty()).then(|| args.external_dir.clone()),
        no_external: args.no_external_facts,
        module_dirs: args
            .modulepath
            .iter()
            .flat_map(|p| p.split(':'))
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .collect(),
        custom_dirs: args.custom_dir.clone(),
        no_custom: args.no_custom_facts,
    };
    let gathered = gather(&opts);
    for w in &gathered.warnings {
        eprintln!("Warning: {w}");
    }
    // A query may name a legacy fact without --show-legacy, as with facter.
    let all = gathered.all(args.show_legacy || !args.query.is_empty());
    let shown: Map<String, Json> = if args.query.is_empty() {
        all
    } else {
        let mut q: Vec<&String> = args.query.iter().collect();
        q.sort();
        q.dedup();
        q.into_iter()
            .map(|k| (k.clone(), lookup(&all, k).cloned().unwrap_or(Json::Null)))
            .collect()
    };
    let single = args.query.len() == 1;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&Json::Object(shown)).unwrap_or_default()
        );
    } else if args.yaml {
        let text = crate::eval::hiera::yaml::to_yaml(&Json::Object(shown));
        out!("{}", text.strip_prefix("---\n").unwrap_or(&text));
    } else if single {
        let v = shown.values().next().cloned().unwrap_or(Json::Null);
        outln!("{}", facter_text(&v, 0, true));
    } else {
        for (k, v) in &shown {
            outln!("{k} => {}", facter_text(v, 0, true));
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn queries_and_text() {
        let f = json!({"os": {"release": {"major": "12"}}, "l": ["a", "b"], "a.b": 1});
        let m = f.as_object().unwrap();
        assert_eq!(lookup(m, "os.release.major"), Some(&json!("12")));
        assert_eq!(lookup(m, "l.1"), Some(&json!("b")));
        assert_eq!(lookup(m, "a.b"), Some(&json!(1)));
        assert_eq!(lookup(m, "os.nope"), None);
        assert_eq!(
            facter_text(&json!({"full": "12.11", "n": [1]}), 0, true),
            "{\n  full => \"12.11\",\n  n => [\n    1\n  ]\n}"
        );
    }
}
