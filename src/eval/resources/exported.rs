//! Exported resources with storeconfigs (`--storeconfigs`): `@@type { ... }` and
//! `Type <<| query |>>` across node compiles, the way Puppet does with PuppetDB.
//!
//! The store itself is IO and lives with the CLI (`cli::store`); the compiler sees it through
//! [`Loader::exported_resources`](crate::eval::Loader::exported_resources). Puppet's
//! `ExportedCollector#collect`: the collector takes the matching exported resources of this
//! compile (they stay `exported: true`) and those other nodes exported (PuppetDB excludes the
//! requesting node); a foreign resource becomes an ordinary resource of this catalog
//! (`exported: false`), contained by the collecting scope, with its stored parameters and
//! tags, the collecting scope's tags and resource defaults added as `Resource#finish` does.
//! A foreign resource whose type and title is already in the catalog (declared here, or
//! collected from another node) is Puppet's `A duplicate resource was found while collecting
//! exported resources, with the type and title T[x]`.

use super::collect::Query;
use crate::catalog::{capitalize_type, Resource, ResourceKind};
use crate::eval::compiler::{Compiler, EvalError};
use crate::eval::values::value::{puppet_eq, Value};

impl Compiler<'_> {
    /// Whether exported resources are kept and collected (Puppet's `storeconfigs`).
    pub(in crate::eval) fn storeconfigs(&self) -> bool {
        self.loader.storeconfigs()
    }

    /// Brings in the resources other nodes exported that the exported collector `ci` matches;
    /// returns the new resources (the caller collects them like local matches).
    pub(in crate::eval) fn collect_from_store(
        &mut self,
        ci: usize,
    ) -> Result<Vec<usize>, EvalError> {
        let (type_name, query, scope, span) = {
            let c = &self.collectors[ci];
            (c.type_name.clone(), c.query.clone(), c.scope, c.span)
        };
        let mut found: Vec<(String, Resource)> = self
            .loader
            .exported_resources(&type_name)
            .into_iter()
            .filter(|(node, r)| {
                node != &self.opts.node
                    && capitalize_type(&r.type_name) == type_name
                    && stored_matches(&query, r)
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let mut added = vec![];
        for (node, stored) in found {
            let key = (type_name.clone(), stored.title.clone());
            if let Some(existing) = self.find_resource(&type_name, &stored.title) {
                if self.imported_exports.get(&key) == Some(&node) {
                    if !self.collectors[ci].collected_set.contains(&existing) {
                        added.push(existing);
                    }
                    continue;
                }
                return Err(self.duplicate_collected(&key, span));
            }
            // A defined type is evaluated here, in the collecting catalog, as Puppet does
            // with the unevaluated resource PuppetDB returns.
            let is_define = self.find_define(&type_name).is_some();
            let kind = if is_define {
                ResourceKind::DefinedType
            } else {
                ResourceKind::CompilableType
            };
            let idx = self.new_res(&type_name, &stored.title, scope, kind, span);
            {
                let r = &mut self.resources[idx];
                for t in &stored.tags {
                    r.tags.insert_str(t);
                }
                r.line = stored.line;
                r.is_define = is_define;
                r.evaluated = !is_define;
                r.source = std::sync::Arc::from(format!("exported by {node}"));
                for (k, v) in &stored.parameters {
                    r.params.insert(k.clone(), Value::from_json(v));
                }
            }
            if let Some(file) = &stored.file {
                let id = self.sources.add(file.clone(), String::new());
                self.resources[idx].file = Some(id);
            }
            let source = self.scopes[scope].source.clone();
            for (k, v) in self.lookup_defaults(scope, &type_name) {
                if !self.resources[idx].params.contains_key(&k) {
                    self.set_param(idx, &k, v, &source, span);
                }
            }
            self.add_to_catalog(idx)?;
            let container = self.scope_resource(scope);
            self.containment.push((container, idx));
            self.imported_exports.insert(key, node);
            added.push(idx);
        }
        Ok(added)
    }

    fn duplicate_collected(&self, key: &(String, String), span: crate::span::Span) -> EvalError {
        let loc = self.line_col_location(Some(span));
        self.plain(
            crate::eval::compiler::join_loc(
                format!(
                    "Evaluation Error: Error while evaluating an Exported Query, A duplicate resource was found while collecting exported resources, with the type and title {}[{}]",
                    key.0, key.1
                ),
                &loc,
            ),
            Some(span),
        )
    }

    /// This compile's exported resources as the store keeps them (catalog format,
    /// `exported: true`), rendered as the catalog renders resources.
    pub(in crate::eval) fn exported_for_store(&mut self) -> Vec<Resource> {
        let hidden: Vec<usize> = (0..self.resources.len())
            .filter(|&i| {
                let r = &self.resources[i];
                r.exported && r.virtual_ && !r.dropped
            })
            .collect();
        if hidden.is_empty() {
            return vec![];
        }
        for &i in &hidden {
            self.resources[i].virtual_ = false;
        }
        let logged = self.logs.len();
        let cat = self.build_catalog();
        self.logs.truncate(logged);
        for &i in &hidden {
            self.resources[i].virtual_ = true;
        }
        cat.resources.into_iter().filter(|r| r.exported).collect()
    }
}

/// A collector query over a stored resource: tags, parameters (an array matches when one
/// element does), `title`/`name` from the title when not a parameter.
fn stored_matches(q: &Query, r: &Resource) -> bool {
    match q {
        Query::All => true,
        Query::And(a, b) => stored_matches(a, r) && stored_matches(b, r),
        Query::Or(a, b) => stored_matches(a, r) || stored_matches(b, r),
        Query::Eq(attr, v) => {
            if attr == "tag" {
                let wanted: Vec<String> = super::catalog_ops::flatten_values(v)
                    .iter()
                    .map(|t| t.to_display().to_lowercase())
                    .collect();
                return r.tags.iter().any(|t| wanted.contains(&t.to_lowercase()));
            }
            match stored_attr(r, attr) {
                Value::Array(items) => items.iter().any(|x| puppet_eq(x, v)),
                other => puppet_eq(&other, v),
            }
        }
        Query::Ne(attr, v) => !puppet_eq(&stored_attr(r, attr), v),
    }
}

fn stored_attr(r: &Resource, attr: &str) -> Value {
    match r.parameters.get(attr) {
        Some(v) => Value::from_json(v),
        None if attr == "title" || attr == "name" => Value::str(r.title.clone()),
        None => Value::Undef,
    }
}
