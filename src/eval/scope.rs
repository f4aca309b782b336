//! Scopes: where variables and resource defaults live.
//!
//! Two links matter, as in Puppet: `parent` is the *dynamic* parent (the scope that declared
//! the class or define; resource defaults are looked up along it), `lookup_next` the
//! *lexical* one used for variables (an inherited class, else the node or top scope; for a
//! lambda, the scope that defined it).

use super::value::Value;
use crate::fxhash::FxHashMap as HashMap;
use indexmap::IndexMap;

pub type ScopeId = usize;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    Top,
    Node,
    Class,
    Define,
    /// Lambdas, EPP templates and function bodies.
    Local,
}

#[derive(Clone, Debug)]
pub struct Scope {
    pub kind: ScopeKind,
    pub parent: Option<ScopeId>,
    pub lookup_next: Option<ScopeId>,
    pub vars: HashMap<String, Value>,
    /// `$0`, `$1`, ... of the last successful match in this scope.
    pub matches: Option<Vec<Value>>,
    /// Resource defaults: type name (capitalised) -> attribute -> value.
    pub defaults: HashMap<String, IndexMap<String, Value>>,
    /// The catalog resource this scope evaluates (Class[main], Class[x], a define instance).
    pub resource: Option<usize>,
    /// The definition being evaluated: `""` for main, else `class foo`, `define foo`,
    /// `node x`. Overrides compare it (Puppet's `scope.source`).
    pub source: std::sync::Arc<str>,
    /// The class name for class scopes (lowercase).
    pub class_name: Option<String>,
    /// Whether this scope may not set variables (e.g. function bodies are still allowed).
    pub is_function: bool,
}

impl Scope {
    pub fn new(kind: ScopeKind, parent: Option<ScopeId>, lookup_next: Option<ScopeId>) -> Scope {
        Scope::with_source(kind, parent, lookup_next, std::sync::Arc::from(""))
    }

    /// [`Scope::new`] evaluating the definition `source`.
    pub fn with_source(
        kind: ScopeKind,
        parent: Option<ScopeId>,
        lookup_next: Option<ScopeId>,
        source: std::sync::Arc<str>,
    ) -> Scope {
        Scope {
            kind,
            parent,
            lookup_next,
            vars: HashMap::default(),
            matches: None,
            defaults: HashMap::default(),
            resource: None,
            source,
            class_name: None,
            is_function: false,
        }
    }
}
