//! The catalog: what the evaluator produces and the graph stage and runner consume.
//!
//! The data model is Puppet's JSON catalog (catalog_format 2, see
//! `../shared/reference/puppet-schemas/catalog.json`). Parameters are plain data
//! (`serde_json::Value`, insertion order kept) because that is what a catalog carries; the
//! evaluator converts its values when it stores them.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// A resource reference `Type[title]` with the type segments capitalised.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResourceRef {
    pub type_name: String,
    pub title: String,
}

impl ResourceRef {
    pub fn new(type_name: impl Into<String>, title: impl Into<String>) -> ResourceRef {
        ResourceRef {
            type_name: type_name.into(),
            title: title.into(),
        }
    }

    /// Parses `Type[title]` as written in catalogs (`File[/tmp/x]`, `Class[Foo::Bar]`).
    pub fn parse(s: &str) -> Option<ResourceRef> {
        let open = s.find('[')?;
        if !s.ends_with(']') || open == 0 {
            return None;
        }
        let type_name = &s[..open];
        let mut title = &s[open + 1..s.len() - 1];
        // Puppet writes `Class[main]` but `Notify['a']` in log messages; both reach us.
        if title.len() >= 2 && title.starts_with('\'') && title.ends_with('\'') {
            title = &title[1..title.len() - 1];
        }
        Some(ResourceRef::new(capitalize_type(type_name), title))
    }
}

impl std::fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.type_name, self.title)
    }
}

/// `foo::bar` -> `Foo::Bar`, as Puppet writes type names in references.
pub fn capitalize_type(name: &str) -> String {
    // One string built in place: this runs for every resource of a catalog.
    let mut out = String::with_capacity(name.len());
    for (i, seg) in name.trim_start_matches("::").split("::").enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        let mut c = seg.chars();
        if let Some(first) = c.next() {
            out.extend(first.to_uppercase());
            out.push_str(c.as_str());
        }
    }
    out
}

/// How Puppet classifies a catalog resource (`kind` in catalog_format 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    CompilableType,
    DefinedType,
    Class,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    #[serde(rename = "type")]
    pub type_name: String,
    pub title: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default)]
    pub exported: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ResourceKind>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub parameters: IndexMap<String, Json>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitive_parameters: Vec<String>,
}

impl Resource {
    pub fn reference(&self) -> ResourceRef {
        ResourceRef::new(self.type_name.clone(), self.title.clone())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    pub source: String,
    pub target: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: Json,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_id: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_uuid: Option<String>,
    #[serde(default = "default_format")]
    pub catalog_format: u32,
    #[serde(default)]
    pub environment: String,
    pub resources: Vec<Resource>,
    #[serde(default)]
    pub edges: Vec<Edge>,
    #[serde(default)]
    pub classes: Vec<String>,
}

fn default_format() -> u32 {
    2
}

impl Catalog {
    pub fn new(name: impl Into<String>) -> Catalog {
        Catalog {
            tags: Vec::new(),
            name: name.into(),
            version: Json::from(0),
            code_id: None,
            catalog_uuid: None,
            catalog_format: 2,
            environment: "production".into(),
            resources: Vec::new(),
            edges: Vec::new(),
            classes: Vec::new(),
        }
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("a catalog always serialises")
    }
}
