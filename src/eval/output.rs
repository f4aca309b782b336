//! Turning the compiled resources into the catalog data model.

use super::catalog_ops::{flatten_values, RELATIONSHIP_PARAMS};
use super::compiler::{Compiler, Res};
use super::value::Value;
use crate::catalog::{capitalize_type, Catalog, Edge, Resource};
use crate::fxhash::FxHashMap;
use indexmap::IndexMap;
use serde_json::Value as Json;

fn included(r: &Res) -> bool {
    !r.virtual_ && !r.dropped
}

/// The namevar of each resource type, looked up once per type.
type Namevars = FxHashMap<String, Option<String>>;

/// A resource's namevar attribute (none for classes and Stage[main]).
fn namevar<'n>(namevars: &'n Namevars, r: &Res) -> Option<&'n str> {
    if r.type_name == "Stage" && r.title == "main" {
        return None;
    }
    namevars.get(&r.type_name).and_then(|n| n.as_deref())
}

impl Compiler<'_> {
    /// The namevar attribute of a resource type (`name` for defined types).
    fn namevar_of(&self, type_name: &str) -> Option<String> {
        if type_name == "Class" {
            return None;
        }
        match super::builtin_types::find(&type_name.to_lowercase()) {
            Some(b) => b.namevars.first().map(|n| n.to_string()),
            None => self.ruby_namevar(type_name).or(Some("name".into())),
        }
    }

    /// The namevars of the types of the catalog's resources.
    fn namevars(&self) -> Namevars {
        let mut out = Namevars::default();
        for r in self.resources.iter().filter(|r| included(r)) {
            if !out.contains_key(&r.type_name) {
                out.insert(r.type_name.clone(), self.namevar_of(&r.type_name));
            }
        }
        out
    }

    /// The name of the file a resource was declared in.
    fn file_name(&self, r: &Res) -> Option<String> {
        r.file
            .and_then(|f| self.sources.get(f))
            .map(|f| f.name.clone())
    }

    /// Builds the catalog, moving the parameters and tags out of the compiled resources
    /// (this is the last use of them; the compiler keeps types, titles and spans).
    pub(super) fn build_catalog(&mut self) -> Catalog {
        let mut warnings = vec![];
        let namevars = self.namevars();
        let mut cat = self.catalog_header();
        cat.resources
            .reserve(self.resources.iter().filter(|r| included(r)).count());
        for idx in 0..self.resources.len() {
            if !included(&self.resources[idx]) {
                continue;
            }
            rich_data_warnings_of(&self.resources[idx], &mut warnings);
            let file = self.file_name(&self.resources[idx]);
            let namevar = namevar(&namevars, &self.resources[idx]);
            cat.resources
                .push(catalog_resource(&mut self.resources[idx], namevar, file));
        }
        cat.edges = catalog_edges(&self.resources, &self.containment).collect();
        for w in warnings {
            self.log(super::LogLevel::Warning, w);
        }
        cat
    }

    /// The catalog without resources and edges.
    fn catalog_header(&self) -> Catalog {
        let mut cat = Catalog::new(self.opts.node.clone());
        cat.classes = self.class_list.clone();
        cat.tags = self
            .catalog_tags
            .iter()
            .map(|t| String::from(&**t))
            .collect();
        cat
    }

    /// What [`Compiler::build_catalog`] would build, handed over for writing: the
    /// resources, edges and what converting them needs, taken out of the compiler (which is
    /// done with them). Logs the warnings about parameter values now, as `build_catalog`
    /// does.
    pub(super) fn catalog_source(&mut self) -> CatalogSource {
        let mut warnings = vec![];
        for r in self.resources.iter().filter(|r| included(r)) {
            rich_data_warnings_of(r, &mut warnings);
        }
        for w in warnings {
            self.log(super::LogLevel::Warning, w);
        }
        let mut files = FxHashMap::default();
        for r in self.resources.iter().filter(|r| included(r)) {
            if let Some(f) = r.file {
                files.entry(f).or_insert_with(|| self.file_name(r));
            }
        }
        CatalogSource {
            header: self.catalog_header(),
            namevars: self.namevars(),
            files,
            resources: std::mem::take(&mut self.resources),
            containment: std::mem::take(&mut self.containment),
        }
    }
}

/// A compiled catalog not built yet: the compiler's resources, converted one at a time as
/// they are written, so that the whole catalog never sits in memory next to them (`ordo
/// compile` of a big manifest). See [`Compiler::catalog_source`].
pub struct CatalogSource {
    /// The catalog's own fields (tags, name, classes, ...).
    header: Catalog,
    namevars: Namevars,
    files: FxHashMap<crate::span::FileId, Option<String>>,
    resources: Vec<Res>,
    containment: Vec<(usize, usize)>,
}

impl CatalogSource {
    /// Writes the catalog exactly as [`Catalog::write_pretty`] writes the one
    /// `build_catalog` builds. The resources are spent: call it once.
    pub fn write_pretty(&mut self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        // Converting a resource takes its parameters; an edge reads types and titles, which
        // stay. The writer asks for every resource before the first edge.
        let resources = std::cell::RefCell::new(&mut self.resources);
        let (namevars, files) = (&self.namevars, &self.files);
        let mut next = 0;
        let converted = std::iter::from_fn(|| {
            let mut res = resources.borrow_mut();
            while next < res.len() && !included(&res[next]) {
                next += 1;
            }
            let r = res.get_mut(next)?;
            next += 1;
            let file = r.file.and_then(|f| files.get(&f).cloned().flatten());
            let namevar = namevar(namevars, r);
            Some(catalog_resource(r, namevar, file))
        });
        let mut edges = EdgeCursor::default();
        let containment = &self.containment;
        let edges = std::iter::from_fn(|| edges.next(&resources.borrow(), containment));
        self.header.write_pretty_with(w, converted, edges)
    }
}

/// Walks the containment pairs, yielding each edge between catalog resources once.
#[derive(Default)]
struct EdgeCursor {
    next: usize,
    seen: crate::fxhash::FxHashSet<(usize, usize)>,
}

impl EdgeCursor {
    fn next(&mut self, resources: &[Res], containment: &[(usize, usize)]) -> Option<Edge> {
        while let Some(&(s, t)) = containment.get(self.next) {
            self.next += 1;
            if !included(&resources[s]) || !included(&resources[t]) || !self.seen.insert((s, t)) {
                continue;
            }
            return Some(Edge {
                source: resources[s].reference(),
                target: resources[t].reference(),
            });
        }
        None
    }
}

/// The catalog's containment edges.
fn catalog_edges<'r>(
    resources: &'r [Res],
    containment: &'r [(usize, usize)],
) -> impl Iterator<Item = Edge> + 'r {
    let mut cursor = EdgeCursor::default();
    std::iter::from_fn(move || cursor.next(resources, containment))
}

/// Puppet's warnings about parameter values JSON cannot carry, for one resource, in the
/// order [`catalog_resource`] meets the parameters.
fn rich_data_warnings_of(r: &Res, out: &mut Vec<String>) {
    for (k, v) in &r.params {
        let v = match v {
            Value::Sensitive(inner) => &**inner,
            other => other,
        };
        if !RELATIONSHIP_PARAMS.contains(&k.as_str()) && has_rich_data(v) {
            rich_data_warnings(v, &format!("{}['{k}']", r.reference_shown()), out);
        }
    }
}

/// The catalog form of a compiled resource, its parameters and tags moved out (this is the
/// last use of them).
fn catalog_resource(r: &mut Res, namevar: Option<&str>, file: Option<String>) -> Resource {
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
            v.into_json()
        };
        // Puppet does not repeat the title as the namevar.
        if namevar == Some(k.as_str()) && j.as_str() == Some(r.title.as_str()) {
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
    let mut tags: Vec<std::sync::Arc<str>> = std::mem::take(&mut r.tags).iter().cloned().collect();
    // In byte order, as `sort_unstable`; most pairs differ in their first byte, which
    // spares comparing the rest.
    tags.sort_unstable_by(
        |a, b| match a.as_bytes().first().cmp(&b.as_bytes().first()) {
            std::cmp::Ordering::Equal => a.cmp(b),
            other => other,
        },
    );
    // Not read after this: free them now, for the catalog's strings to reuse.
    r.setters = Default::default();
    Resource {
        type_name: r.type_name.clone(),
        title,
        tags,
        file,
        line: r.line,
        exported: r.exported,
        kind: Some(r.kind),
        parameters: params,
        sensitive_parameters: sensitive,
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
