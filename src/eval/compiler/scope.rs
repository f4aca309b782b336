//! Scopes: where variables and resource defaults live.
//!
//! Two links matter, as in Puppet: `parent` is the *dynamic* parent (the scope that declared
//! the class or define; resource defaults are looked up along it), `lookup_next` the
//! *lexical* one used for variables (an inherited class, else the node or top scope; for a
//! lambda, the scope that defined it).

use crate::eval::values::value::Value;
use crate::fxhash::{FxHashMap as HashMap, FxIndexMap};
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
    pub vars: Vars,
    /// `$0`, `$1`, ... of the last successful match in this scope.
    pub matches: Option<Vec<Value>>,
    /// Resource defaults: type name (capitalised) -> attribute -> value. Few scopes set any
    /// (and every lambda call has a scope), hence the box.
    pub defaults: Option<Box<HashMap<String, IndexMap<String, Value>>>>,
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
            vars: Vars::default(),
            matches: None,
            defaults: None,
            resource: None,
            source,
            class_name: None,
            is_function: false,
        }
    }
}

/// A scope's variables, in the order they were set. Most scopes hold a handful (a lambda's
/// parameters; a define's title, name and parameters) and live as long as the catalog, so
/// they are a vector searched in order: no hash table per scope, nothing hashed per lookup.
/// Past [`Vars::FEW`] (the top scope holds every fact) they move to a hash map that keeps
/// the same order.
#[derive(Clone, Debug)]
pub enum Vars {
    Few(Vec<(String, Value)>),
    Many(FxIndexMap<String, Value>),
}

impl Default for Vars {
    fn default() -> Vars {
        Vars::Few(Vec::new())
    }
}

impl Vars {
    /// The most variables kept in a vector.
    const FEW: usize = 12;

    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Vars::Few(list) => list.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            Vars::Many(map) => map.get(name),
        }
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        match self {
            Vars::Few(list) => list.iter_mut().find(|(k, _)| k == name).map(|(_, v)| v),
            Vars::Many(map) => map.get_mut(name),
        }
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets `name` (in its place when it is already set).
    pub fn insert(&mut self, name: String, value: Value) {
        match self {
            Vars::Few(list) => {
                if let Some(slot) = list.iter_mut().find(|(k, _)| *k == name) {
                    slot.1 = value;
                } else if list.len() < Self::FEW {
                    list.push((name, value));
                } else {
                    let mut map: FxIndexMap<String, Value> =
                        std::mem::take(list).into_iter().collect();
                    map.insert(name, value);
                    *self = Vars::Many(map);
                }
            }
            Vars::Many(map) => {
                map.insert(name, value);
            }
        }
    }

    /// Room for `n` more variables (a define's or lambda's parameters, known up front).
    pub fn reserve(&mut self, n: usize) {
        if let Vars::Few(list) = self {
            if list.len() + n <= Self::FEW {
                list.reserve_exact(n);
            }
        }
    }

    /// The variables in the order they were set.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        let (few, many) = match self {
            Vars::Few(list) => (Some(list.iter().map(|(k, v)| (k, v))), None),
            Vars::Many(map) => (None, Some(map.iter())),
        };
        few.into_iter().flatten().chain(many.into_iter().flatten())
    }
}
