//! Turning the compiled resources into the catalog data model.

use super::catalog_ops::{flatten_values, RELATIONSHIP_PARAMS};
use super::compiler::Compiler;
use super::value::Value;
use crate::catalog::{capitalize_type, Catalog, Edge, Resource};
use indexmap::IndexMap;
use serde_json::Value as Json;

impl Compiler<'_> {
    fn included(&self, idx: usize) -> bool {
        let r = &self.resources[idx];
        !r.virtual_ && !r.dropped
    }

    /// The namevar attribute of a resource's type (`name` for defined types).
    fn namevar_of(&self, r: &super::compiler::Res) -> Option<String> {
        if r.type_name == "Class" || (r.type_name == "Stage" && r.title == "main") {
            return None;
        }
        match super::builtin_types::find(&r.type_name.to_lowercase()) {
            Some(b) => b.namevars.first().map(|n| n.to_string()),
            None => self.ruby_namevar(&r.type_name).or(Some("name".into())),
        }
    }

    /// Builds the catalog, moving the parameters and tags out of the compiled resources
    /// (this is the last use of them; the compiler keeps types, titles and spans).
    pub(super) fn build_catalog(&mut self) -> Catalog {
        let mut warnings = vec![];
        let mut namevars: crate::fxhash::FxHashMap<String, Option<String>> = Default::default();
        let mut cat = Catalog::new(self.opts.node.clone());
        cat.resources.reserve(
            (0..self.resources.len())
                .filter(|&i| self.included(i))
                .count(),
        );
        for idx in 0..self.resources.len() {
            if !self.included(idx) {
                continue;
            }
            // One namevar per type (but for Stage[main]): look it up once.
            let tname = self.resources[idx].type_name.as_str();
            let namevar = match namevars.get(tname) {
                Some(n) if tname != "Stage" => n.clone(),
                _ => {
                    let n = self.namevar_of(&self.resources[idx]);
                    namevars.insert(self.resources[idx].type_name.clone(), n.clone());
                    n
                }
            };
            let file = self.resources[idx]
                .file
                .and_then(|f| self.sources.get(f))
                .map(|f| f.name.clone());
            let r = &mut self.resources[idx];
            let mut params: IndexMap<String, Json> = IndexMap::with_capacity(r.params.len());
            let mut sensitive = vec![];
            for (k, v) in std::mem::take(&mut r.params) {
                let v = match v {
                    Value::Sensitive(inner) => {
                        sensitive.push(k.clone());
                        *inner
                    }
                    other => other,
                };
                let j = if RELATIONSHIP_PARAMS.contains(&k.as_str()) {
                    let items: Vec<Json> = flatten_values(&v).iter().map(Value::to_json).collect();
                    match (&v, items.len()) {
                        (Value::Array(_), _) => Json::Array(items),
                        (_, 1) => items.into_iter().next().unwrap_or(Json::Null),
                        _ => Json::Array(items),
                    }
                } else {
                    if has_rich_data(&v) {
                        rich_data_warnings(
                            &v,
                            &format!("{}['{k}']", r.reference_shown()),
                            &mut warnings,
                        );
                    }
                    v.into_json()
                };
                // Puppet does not repeat the title as the namevar.
                if namevar.as_deref() == Some(k.as_str()) && j.as_str() == Some(r.title.as_str()) {
                    continue;
                }
                if !j.is_null() {
                    params.insert(k, j);
                }
            }
            let title = if r.type_name == "Class" {
                capitalize_type(&r.title)
            } else {
                r.title.clone()
            };
            let mut sorted: Vec<&std::sync::Arc<str>> = r.tags.iter().collect();
            sorted.sort_unstable();
            let tags: Vec<std::sync::Arc<str>> = sorted.into_iter().cloned().collect();
            // Not read after this: free them now, for the catalog's strings to reuse.
            r.tags = Default::default();
            r.setters = Default::default();
            cat.resources.push(Resource {
                type_name: r.type_name.clone(),
                title,
                tags,
                file,
                line: r.line,
                exported: r.exported,
                kind: Some(r.kind),
                parameters: params,
                sensitive_parameters: sensitive,
            });
        }
        let mut seen = crate::fxhash::FxHashSet::default();
        cat.edges.reserve(self.containment.len());
        for &(s, t) in &self.containment {
            if !self.included(s) || !self.included(t) || !seen.insert((s, t)) {
                continue;
            }
            cat.edges.push(Edge {
                source: self.resources[s].reference(),
                target: self.resources[t].reference(),
            });
        }
        for w in warnings {
            self.log(super::LogLevel::Warning, w);
        }
        cat.classes = self.class_list.clone();
        cat.tags = self
            .catalog_tags
            .iter()
            .map(|t| String::from(&**t))
            .collect();
        cat
    }
}

/// Whether a value holds something [`rich_data_warnings`] may warn about (a type).
fn has_rich_data(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(has_rich_data),
        Value::Hash(h) => h.values().any(has_rich_data),
        Value::Type(_) => true,
        _ => false,
    }
}

/// Puppet warns when a catalog parameter holds a value that JSON cannot carry as is.
fn rich_data_warnings(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                rich_data_warnings(x, &format!("{path}[{i}]"), out);
            }
        }
        Value::Hash(h) => {
            for (k, x) in h {
                rich_data_warnings(x, &format!("{path}['{}']", k.to_display()), out);
            }
        }
        Value::Type(t)
            if !matches!(
                **t,
                super::types::PType::Resource(Some(_), Some(_))
                    | super::types::PType::Class(Some(_))
            ) =>
        {
            let full = t.generalize().to_string();
            let name = full.split('[').next().unwrap_or(&full).to_string();
            out.push(format!(
                "{path} contains {} value. It will be converted to the String '{t}'",
                super::expr::a_an(&format!("{name}-Type"))
            ));
        }
        _ => {}
    }
}
