//! Catalog operations: declaring resources, classes and defines, defaults, overrides,
//! relationships and the finishing passes.

use super::priority::PRIORITY;
use crate::ast::{Expr, Parameter};
use crate::catalog::TrimColons;
use crate::catalog::{capitalize_type, ResourceKind};
use crate::eval::compiler::scope::{Scope, ScopeId, ScopeKind};
use crate::eval::compiler::{add_tag, join_loc, Compiler, EvalError, Flow, Operand, Res, R};
use crate::eval::types::builtin_types;
use crate::eval::types::PType;
use crate::eval::values::value::{quote_string, Value};
use crate::span::Span;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::sync::Arc;
mod classes;
mod relationships;

/// Ordo's own metaparameters, valid on every resource and class declaration: Salt's
/// requisites and run controls and Rudder's `priority` (docs/extensions.md). The runner gives
/// them their meaning; the evaluator passes them through to the catalog.
fn ordo_metaparam(name: &str) -> bool {
    name == PRIORITY || crate::catalog::metaparams::is_extension_metaparam(name)
}

pub use crate::catalog::metaparams::{METAPARAMS, RELATIONSHIP_PARAMS};

/// A reference override (`Notify['a'] { ... }`) or a collector's override.
#[derive(Clone, Debug)]
pub struct Override {
    pub type_name: String,
    pub title: String,
    pub params: Vec<AttrValue>,
    pub source: Arc<str>,
    pub span: Span,
    /// Collector overrides replace values without the source checks.
    pub forced: bool,
}

/// An evaluated attribute operation.
#[derive(Clone, Debug)]
pub struct AttrValue {
    pub name: String,
    pub value: Value,
    pub append: bool,
    pub span: Span,
}

/// What kind of thing a resource type name denotes.
pub enum TypeKind {
    Builtin(&'static builtin_types::BuiltinType),
    Define(std::sync::Arc<crate::ast::DefineDef>),
    Class,
    /// A Ruby type shipped by a module: accepted without attribute checks.
    Ruby,
}

/// Variables of a class or define scope besides its parameters: `$title`, `$name`,
/// `$module_name`, `$caller_module_name`, and room for two set in the body.
const DEFINITION_VARS: usize = 6;

/// Classes declared from class bodies nest at most this deep (see `instantiate_class`).
const MAX_CLASS_DEPTH: usize = 1000;

impl Compiler<'_> {
    pub(in crate::eval) fn resolve_resource_type(&mut self, name: &str) -> Option<TypeKind> {
        let lower = crate::eval::compiler::lowercase(name.trim_colons());
        if lower == "class" {
            return Some(TypeKind::Class);
        }
        if !crate::eval::is_qualified(&lower) {
            if let Some(b) = builtin_types::find(&lower) {
                return Some(TypeKind::Builtin(b));
            }
        }
        if let Some(d) = self.find_define(&lower) {
            return Some(TypeKind::Define(d));
        }
        if self.loader.has_ruby_type(&lower) {
            return Some(TypeKind::Ruby);
        }
        None
    }

    /// The resource a key names, by title or by another name.
    fn indexed(&self, type_name: &str, title: &str) -> Option<usize> {
        self.index
            .get(&self.resources, type_name, title)
            .or_else(|| self.aliases.get(type_name, title))
    }

    /// Registers a resource in the catalog index, with Puppet's duplicate and alias checks.
    pub(in crate::eval) fn add_to_catalog(&mut self, idx: usize) -> Result<(), EvalError> {
        let r = &self.resources[idx];
        let builtin = builtin_types::find_any_case(&r.type_name);
        let duplicate = match self.index.insert_new(&self.resources, idx) {
            Err(existing) => Some(existing),
            Ok(()) => {
                let existing = self.aliases.get(&r.type_name, &r.title);
                if existing.is_some() {
                    self.index.remove(&self.resources, idx);
                }
                existing
            }
        };
        if let Some(existing) = duplicate {
            let first = self.resources[existing].span;
            self.recorder.error_label(first, "first declared here");
            return Err(self.duplicate_error(idx, existing));
        }
        let r = &self.resources[idx];
        if let Some(nv) = namevar_value(r, builtin) {
            if *nv != r.title {
                if let Some(existing) = self.indexed(&r.type_name, &nv) {
                    if existing != idx {
                        let nv = nv.into_owned();
                        self.index.remove(&self.resources, idx);
                        let first = self.resources[existing].span;
                        self.recorder.error_label(first, "already declared here");
                        return Err(self.alias_error(
                            idx,
                            existing,
                            &format!("[{}]", json_str(&nv)),
                            &json_str(&nv),
                        ));
                    }
                }
                let nv = nv.into_owned();
                self.aliases.insert(&self.resources[idx].type_name, nv, idx);
            }
        }
        let r = &self.resources[idx];
        if let Some(parts) = composite_key(r, builtin) {
            let joined = parts.join(", ");
            let name = format!("[{joined}]");
            if let Some(existing) = self.aliases.get(&r.type_name, &name) {
                if existing != idx {
                    self.index.remove(&self.resources, idx);
                    return Err(self.alias_error(idx, existing, &name, &joined));
                }
            }
            self.aliases.insert(&r.type_name, name, idx);
        }
        let alias_values: Vec<String> = match self.resources[idx].params.get("alias") {
            Some(Value::Array(a)) => a.iter().map(|v| v.to_display()).collect(),
            Some(v) => vec![v.to_display()],
            None => vec![],
        };
        for a in alias_values {
            let r = &self.resources[idx];
            if let Some(existing) = self.indexed(&r.type_name, &a) {
                if existing != idx {
                    self.index.remove(&self.resources, idx);
                    let first = self.resources[existing].span;
                    self.recorder.error_label(first, "already declared here");
                    return Err(self.alias_error(idx, existing, &json_str(&a), &json_str(&a)));
                }
            }
            self.aliases.insert(&r.type_name, a, idx);
        }
        Ok(())
    }

    /// Inserts without checks (resources the compiler makes itself).
    pub(in crate::eval) fn insert_resource(&mut self, idx: usize) {
        self.index.insert(&self.resources, idx);
    }

    fn duplicate_error(&self, new: usize, existing: usize) -> EvalError {
        let n = &self.resources[new];
        let e = &self.resources[existing];
        let mut msg = format!(
            "Duplicate declaration: {} is already declared",
            n.reference()
        );
        if e.file.is_some() || e.line.is_some() {
            msg.push_str(&format!(" at {}", self.line_location(e.file, e.line)));
        }
        msg.push_str("; cannot redeclare");
        let msg = join_loc(msg, &self.line_location(n.file, n.line));
        self.runtime(msg, n.span)
    }

    fn alias_error(&self, new: usize, existing: usize, shown: &str, key: &str) -> EvalError {
        let n = &self.resources[new];
        let e = &self.resources[existing];
        let msg = format!(
            "Cannot alias {} to {} at {}; resource [{}, {}] already declared",
            n.reference(),
            shown,
            self.line_location(n.file, n.line),
            json_str(&n.type_name),
            key
        );
        self.runtime(join_loc(msg, &self.line_location(e.file, e.line)), n.span)
    }

    /// Finds a resource by type and title (or namevar/alias).
    pub(in crate::eval) fn find_resource(&self, type_name: &str, title: &str) -> Option<usize> {
        let t = capitalized(type_name);
        let title = if t == "Class" {
            crate::eval::compiler::lowercase(title.trim_colons())
        } else {
            Cow::Borrowed(title)
        };
        if let Some(i) = self.indexed(&t, &title) {
            return Some(i);
        }
        if t == "File" && title.len() > 1 && title.ends_with('/') {
            return self.indexed(&t, title.trim_end_matches('/'));
        }
        None
    }

    /// Resource defaults for a type, looked up along the dynamic scope chain.
    pub(in crate::eval) fn lookup_defaults(
        &self,
        scope: ScopeId,
        type_name: &str,
    ) -> IndexMap<String, Value> {
        // Only the scopes that set defaults for the type (most set none: then nothing is
        // gathered), outermost first.
        let mut chain = vec![];
        let mut s = Some(scope);
        while let Some(id) = s {
            if let Some(d) = self.scopes[id]
                .defaults
                .as_ref()
                .and_then(|d| d.get(type_name))
            {
                chain.push(d);
            }
            s = self.scopes[id].parent;
        }
        let mut out = IndexMap::new();
        for d in chain.into_iter().rev() {
            for (k, v) in d {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }

    /// The resource a scope evaluates for (its container).
    pub(in crate::eval) fn scope_resource(&self, scope: ScopeId) -> usize {
        let mut s = Some(scope);
        while let Some(id) = s {
            if let Some(r) = self.scopes[id].resource {
                return r;
            }
            s = self.scopes[id].lookup_next.or(self.scopes[id].parent);
        }
        0
    }

    /// Declares one resource of a built-in or defined type (the `create_resources` of
    /// Puppet's runtime support). Returns the resource index.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::eval) fn declare_resource(
        &mut self,
        type_name: &str,
        kind: &TypeKind,
        title: &str,
        mut params: Vec<AttrValue>,
        scope: ScopeId,
        span: Span,
        virtual_: bool,
        exported: bool,
    ) -> R<usize> {
        let rkind = match kind {
            TypeKind::Define(_) => ResourceKind::DefinedType,
            _ => ResourceKind::CompilableType,
        };
        self.check_resource_count(span)?;
        let idx = self.new_res(capitalize_type(type_name), title, scope, rkind, span);
        {
            let line = self.span_line(span);
            let r = &mut self.resources[idx];
            r.file = Some(span.file);
            r.line = line;
            r.virtual_ = virtual_ || exported;
            r.exported = exported;
            // Without storeconfigs the export is ignored (Puppet warns), but the resource is
            // still virtual: `realize` and `<| |>` bring it into the catalog, marked exported.
            r.is_define = matches!(kind, TypeKind::Define(_));
        }
        let source = self.scopes[scope].source.clone();
        self.resources[idx].params.reserve(params.len());
        self.resources[idx].setters.reserve(params.len());
        // The values move into the resource; the names and spans stay for the checks below.
        for a in &mut params {
            if a.name == "tag" {
                self.check_tags(&a.value, span)?;
            }
            let mut value = std::mem::replace(&mut a.value, Value::Undef);
            // Kept for the whole compile: without the spare room a built string may have
            // (as a copy would be).
            compact(&mut value);
            self.set_param(idx, &a.name, value, &source, a.span);
        }
        for (k, v) in self.lookup_defaults(scope, &self.resources[idx].type_name) {
            if !self.resources[idx].params.contains_key(&k) {
                self.set_param(idx, &k, v, &source, span);
            }
        }
        // Attributes that are undef are not set at all.
        self.resources[idx].params.retain(|_, v| !v.is_undef());
        if self.resources[idx].params.contains_key("stage")
            && self.resources[idx].type_name != "Class"
        {
            let r = self.resources[idx].reference();
            return Err(Flow::Err(self.runtime(
                format!("Only classes can set 'stage'; normal resources like {r} cannot change run stage"),
                span,
            )));
        }
        if let Some(kept) = self.priority_on_declare(idx, kind, &params, span)? {
            return Ok(kept);
        }
        // A virtual defined-type instance is checked only if realized (when evaluated), as
        // Puppet does: an exported one that nothing collects is never checked.
        if self.resources[idx].virtual_ && self.resources[idx].is_define {
            self.unchecked_virtual.push(idx);
        } else {
            self.check_attributes(idx, kind, &params)?;
        }
        self.add_to_catalog(idx)?;
        if self.resources[idx].type_name != "Stage" {
            let container = self.scope_resource(scope);
            self.containment.push((container, idx));
        }
        Ok(idx)
    }

    /// Whether `name` is a parameter of resource `idx` (set, or one its type accepts).
    pub(in crate::eval) fn is_parameter_of(&mut self, idx: usize, name: &str) -> bool {
        let r = &self.resources[idx];
        if r.params.contains_key(name) || METAPARAMS.contains(&name) || ordo_metaparam(name) {
            return true;
        }
        let type_name = r.type_name.clone();
        match self.resolve_resource_type(&type_name) {
            Some(TypeKind::Builtin(b)) => builtin_types::has_attribute(b, name),
            Some(TypeKind::Define(d)) => name == "name" || d.params.iter().any(|p| p.name == name),
            Some(TypeKind::Ruby) => match self.loader.type_schema(&type_name.to_lowercase()) {
                Some(s) => name == "name" || s.attributes.iter().any(|a| a == name),
                None => true,
            },
            Some(TypeKind::Class) | None => false,
        }
    }

    /// Refuses attributes the resource's type does not have. `written` are the attributes
    /// as the code being evaluated wrote them (a declaration's or an override's): an error
    /// points at the attribute itself when it is among them.
    fn check_attributes(&self, idx: usize, kind: &TypeKind, written: &[AttrValue]) -> R<()> {
        let r = &self.resources[idx];
        let span_of = |k: &str| {
            self.recorder
                .param_span(idx, k)
                .or_else(|| written.iter().rev().find(|a| a.name == k).map(|a| a.span))
                .filter(|s| !s.is_synthetic())
                .unwrap_or(r.span)
        };
        let schema;
        let allowed = |n: &str| -> bool {
            let own = match kind {
                TypeKind::Builtin(b) => builtin_types::has_attribute(b, n),
                TypeKind::Define(d) => n == "name" || d.params.iter().any(|p| p.name == n),
                _ => true,
            };
            own || METAPARAMS.contains(&n) || ordo_metaparam(n)
        };
        let allowed: &dyn Fn(&str) -> bool = match kind {
            TypeKind::Builtin(_) | TypeKind::Define(_) => &allowed,
            TypeKind::Ruby => match self.loader.type_schema(&r.type_name.to_lowercase()) {
                Some(s) => {
                    schema = s;
                    // Puppet's `Type.validattr?`: `name` is always an attribute.
                    &|n: &str| {
                        n == "name"
                            || schema.attributes.iter().any(|a| a == n)
                            || METAPARAMS.contains(&n)
                            || ordo_metaparam(n)
                    }
                }
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        if let TypeKind::Define(_) = kind {
            // Every unknown name, as Puppet's validate_parameters lists them.
            let unknown: Vec<&str> = r
                .params
                .keys()
                .map(|k| &**k)
                .filter(|k| !allowed(k))
                .collect();
            if let (Some(k), TypeKind::Define(d)) = (unknown.first(), kind) {
                let names = d.params.iter().map(|p| p.name.as_str());
                self.hint_attribute(k, names.chain(["name"]), r.span);
            }
            let msg = match unknown.as_slice() {
                [] => return Ok(()),
                [k] => format!("{}: has no parameter named '{k}'", r.reference()),
                many => {
                    let lines: Vec<String> = many
                        .iter()
                        .map(|k| format!("  has no parameter named '{k}'"))
                        .collect();
                    format!("{}:\n{}", r.reference(), lines.join("\n"))
                }
            };
            // Puppet's wrapping of this error places it at the resource statement.
            return Err(Flow::Err(self.runtime(msg, r.span)));
        }
        for k in r.params.keys() {
            if !allowed(k) {
                let loc = self.line_location(r.file, r.line);
                let msg = format!("no parameter named '{k}' {loc} on {} {loc}", r.reference());
                let span = span_of(k);
                let names: Vec<String> = match kind {
                    TypeKind::Builtin(b) => b.attributes.iter().map(|a| a.to_string()).collect(),
                    _ => self
                        .loader
                        .type_schema(&r.type_name.to_lowercase())
                        .map(|s| s.attributes.clone())
                        .unwrap_or_default(),
                };
                self.hint_attribute(k, names.iter().map(String::as_str), span);
                return Err(Flow::Err(self.plain(msg, Some(span))));
            }
        }
        Ok(())
    }

    /// Puppet refuses tags that are not tag-shaped (`Invalid tag 'in foo'`).
    pub(in crate::eval) fn check_tags(&self, v: &Value, span: Span) -> Result<(), EvalError> {
        match invalid_tag(v) {
            Some(t) => Err(self.plain(
                join_loc(format!("Invalid tag '{t}'"), &self.span_location(span)),
                Some(span),
            )),
            None => Ok(()),
        }
    }

    pub(in crate::eval) fn set_param(
        &mut self,
        idx: usize,
        name: &str,
        value: Value,
        source: &Arc<str>,
        span: Span,
    ) {
        let line = self.span_line(span);
        let key = self.attr_name(name);
        let r = &mut self.resources[idx];
        if name == "tag" {
            for t in flatten_values(&value) {
                add_tag(&mut r.tags, &t.to_display());
            }
        }
        r.setters.set(&key, source, Some((Some(span.file), line)));
        r.params.insert(key, value);
        self.recorder.param(idx, name, span);
    }

    // ---- classes ---------------------------------------------------------------------------

    // ---- overrides -----------------------------------------------------------------------------

    // ---- relationships -------------------------------------------------------------------------

    /// Adds the tags of resource `from` to resource `to` (a no-op when they are the same).
    pub(in crate::eval) fn copy_tags(&mut self, from: usize, to: usize) {
        if from == to {
            return;
        }
        let (src, dst) = if from < to {
            let (l, r) = self.resources.split_at_mut(to);
            (&mut l[from], &mut r[0])
        } else {
            let (l, r) = self.resources.split_at_mut(from);
            (&mut r[0], &mut l[to])
        };
        dst.tags.inherit(&mut src.tags);
    }

    // ---- finishing -----------------------------------------------------------------------------

    pub(in crate::eval) fn finish(&mut self) -> Result<(), EvalError> {
        self.evaluate_relationships()?;
        let pending = std::mem::take(&mut self.pending_overrides);
        let mut remaining = vec![];
        for o in pending {
            match self.find_resource(&o.type_name, &o.title) {
                Some(idx) => self.merge_override(idx, &o)?,
                None => remaining.push(o),
            }
        }
        self.pending_overrides = remaining;
        // Scope tags for resources that were never evaluated themselves.
        for idx in 0..self.resources.len() {
            let r = &self.resources[idx];
            if r.type_name == "Class"
                || r.type_name == "Node"
                || (r.type_name == "Stage" && r.title == "main")
            {
                continue;
            }
            let scope_res = self.scope_resource(r.scope);
            if scope_res != idx {
                self.copy_tags(scope_res, idx);
            }
        }
        self.check_unrealized_defines()?;
        self.add_resource_metaparams();
        self.file_paths_from_titles();
        self.params_from_title_patterns()
    }

    /// Ruby types whose titles name several attributes (`sshkey { 'host@ssh-rsa': }`,
    /// `keystone_endpoint { 'RegionOne/keystone::identity': }`): Puppet's catalog holds what
    /// the first matching title pattern captures (`Puppet::Resource#to_hash`), before the
    /// resource's own parameters, which win. A title that no pattern matches fails.
    fn params_from_title_patterns(&mut self) -> Result<(), EvalError> {
        type Patterns = Option<std::rc::Rc<Vec<(crate::eval::values::value::Regex, Vec<String>)>>>;
        let mut by_type: crate::fxhash::FxHashMap<String, Patterns> = Default::default();
        for idx in 0..self.resources.len() {
            let r = &self.resources[idx];
            if r.virtual_ || r.dropped || r.type_name == "Class" {
                continue;
            }
            let patterns = match by_type.get(&r.type_name) {
                Some(p) => p.clone(),
                None => {
                    let name = r.type_name.to_lowercase();
                    let compiled = self
                        .loader
                        .type_schema(&name)
                        .filter(|s| !s.title_patterns.is_empty())
                        .and_then(|s| {
                            s.title_patterns
                                .iter()
                                .map(|(re, attrs)| {
                                    crate::eval::values::value::Regex::new(re)
                                        .ok()
                                        .map(|re| (re, attrs.clone()))
                                })
                                .collect::<Option<Vec<_>>>()
                        })
                        .map(std::rc::Rc::new);
                    by_type.insert(r.type_name.clone(), compiled.clone());
                    compiled
                }
            };
            let Some(patterns) = patterns else { continue };
            let captured = patterns.iter().find_map(|(re, attrs)| {
                let groups = re.captures(&r.title)?;
                Some(
                    attrs
                        .iter()
                        .zip(groups.into_iter().skip(1))
                        .map(|(a, v)| (a.clone(), v))
                        .collect::<Vec<_>>(),
                )
            });
            let Some(captured) = captured else {
                let msg = format!(
                    "No set of title patterns matched the title \"{}\".",
                    r.title
                );
                return Err(self.plain(msg, Some(r.span)));
            };
            let r = &mut self.resources[idx];
            let own = std::mem::take(&mut r.params);
            let mut params = super::params::ParamMap::with_capacity(own.len() + captured.len());
            params.extend(captured.into_iter().filter(|(_, v)| !v.is_undef()));
            for (k, v) in own {
                params.insert(k, v);
            }
            r.params = params;
        }
        Ok(())
    }

    /// The file type's title pattern (`/^(.*?)\/*\Z/`) takes trailing slashes off the title
    /// to make the path: a `File['/d/']` without its own `path` gets `path => '/d'` in the
    /// catalog, first among its parameters, as Puppet writes it.
    fn file_paths_from_titles(&mut self) {
        for r in self.resources.iter_mut() {
            if r.type_name != "File" || !r.title.ends_with('/') || r.params.contains_key("path") {
                continue;
            }
            let path = r.title.trim_end_matches('/');
            if path.is_empty() {
                continue;
            }
            let path = Value::Str(path.to_string());
            r.params.shift_insert(0, "path".to_string(), path);
        }
    }

    /// Virtual defined-type instances never realized are still validated at the end, as
    /// Puppet's `Resource#finish` does (an error without location), exported ones too.
    fn check_unrealized_defines(&mut self) -> Result<(), EvalError> {
        for idx in std::mem::take(&mut self.unchecked_virtual) {
            let type_name = self.resources[idx].type_name.to_lowercase();
            let Some(def) = self.find_define(&type_name) else {
                continue;
            };
            if let Err(Flow::Err(e)) = self.check_attributes(idx, &TypeKind::Define(def), &[]) {
                return Err(self.plain(e.msg, e.span));
            }
        }
        Ok(())
    }

    pub(in crate::eval) fn fail_on_unevaluated(&mut self) -> Result<(), EvalError> {
        if !self.pending_overrides.is_empty() {
            let refs: Vec<String> = self
                .pending_overrides
                .iter()
                .map(|o| format!("{}[{}]", capitalize_type(&o.type_name), o.title))
                .collect();
            return Err(self.plain(
                format!(
                    "Could not find resource(s) {} for overriding",
                    refs.join(", ")
                ),
                None,
            ));
        }
        let mut missing = vec![];
        for c in &self.collectors {
            for (t, title) in &c.unresolved {
                if self.find_resource(t, title).is_none() {
                    // As written (`notify[a]` from a string stays so); a class by its
                    // capitalised name.
                    missing.push(if t.eq_ignore_ascii_case("class") {
                        format!("Class[{}]", capitalize_type(title))
                    } else {
                        format!("{t}[{title}]")
                    });
                }
            }
        }
        if !missing.is_empty() {
            return Err(self.plain(
                format!("Failed to realize virtual resources {}", missing.join(", ")),
                None,
            ));
        }
        Ok(())
    }

    /// Copies non-relationship metaparameters and tags along containment edges, walking out
    /// from Class[main] only (Puppet's `add_resource_metaparams`).
    fn add_resource_metaparams(&mut self) {
        let names: Vec<&str> = METAPARAMS
            .iter()
            .copied()
            .filter(|n| !RELATIONSHIP_PARAMS.contains(n))
            .collect();
        let Some(main) = self.find_resource("Class", "main") else {
            return;
        };
        // By resource index: the contained resources, and the metaparameters that flow on.
        let n = self.resources.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(s, t) in &self.containment {
            children[s].push(t);
        }
        // Kept for the containers still to walk only (a few in a hundred resources).
        let mut data: crate::fxhash::FxHashMap<usize, IndexMap<String, Value>> = Default::default();
        let mut seen = vec![false; n];
        let mut stack = vec![main];
        seen[main] = true;
        while let Some(src) = stack.pop() {
            // Each resource is pushed once, so its children are walked once.
            let kids = std::mem::take(&mut children[src]);
            for t in kids {
                let source_data = match data.get(&src) {
                    Some(d) => d.clone(),
                    None => self.metaparams_of(src, &names),
                };
                for (k, v) in &source_data {
                    if !self.resources[t].params.contains_key(k) {
                        self.resources[t].params.insert(k.clone(), v.clone());
                    }
                }
                // What flows on from `t` is read only when its children are walked (not
                // at all once they have been: its list is then empty).
                if !children[t].is_empty() {
                    let mut merged = source_data.clone();
                    merged.extend(self.metaparams_of(t, &names));
                    data.insert(t, merged);
                }
                data.insert(src, source_data);
                self.copy_tags(src, t);
                if !seen[t] {
                    seen[t] = true;
                    stack.push(t);
                }
            }
        }
    }

    fn metaparams_of(&self, idx: usize, names: &[&str]) -> IndexMap<String, Value> {
        let mut out = IndexMap::new();
        // One look at the names first (most resources have none of these).
        let params = &self.resources[idx].params;
        if !params.keys().any(|k| names.contains(&&**k)) {
            return out;
        }
        for n in names {
            if let Some(v) = self.resources[idx].params.get(n) {
                out.insert(n.to_string(), v.clone());
            }
        }
        out
    }

    /// Evaluates parameter lists given as `name => value` operations.
    pub(in crate::eval) fn eval_attribute_ops(
        &mut self,
        ops: &[crate::ast::AttributeOp],
        scope: ScopeId,
    ) -> R<Vec<AttrValue>> {
        let mut out: Vec<AttrValue> = Vec::with_capacity(ops.len());
        for op in ops {
            match op {
                crate::ast::AttributeOp::Set {
                    name,
                    append,
                    value,
                    span,
                } => {
                    let v = self.eval(value, scope)?;
                    // The bare `Class` type is no value a resource can hold (Puppet turns
                    // it into a reference without a title).
                    if matches!(&v, Value::Type(t) if matches!(**t, PType::Class(None))) {
                        return Err(self.untitled_class("=>", *span));
                    }
                    if v.holds_iterator() {
                        return Err(Flow::Err(self.issue(
                            "Error while evaluating a '=>' expression, Use of an Iterator is not supported here",
                            *span,
                        )));
                    }
                    if out.iter().any(|a| a.name == *name) {
                        return Err(Flow::Err(self.runtime(
                            format!("The attribute '{name}' has already been set"),
                            *span,
                        )));
                    }
                    out.push(AttrValue {
                        name: name.clone(),
                        value: v,
                        append: *append,
                        span: *span,
                    });
                }
                crate::ast::AttributeOp::Splat { expr, span } => {
                    let v = self.eval(expr, scope)?;
                    match v {
                        Value::Hash(h) => {
                            for (k, v) in h {
                                let name = k.to_display();
                                if out.iter().any(|a| a.name == name) {
                                    return Err(Flow::Err(self.runtime(
                                        format!("The attribute '{name}' has already been set"),
                                        *span,
                                    )));
                                }
                                out.push(AttrValue {
                                    name,
                                    value: v,
                                    append: false,
                                    span: *span,
                                });
                            }
                        }
                        other => {
                            let got = crate::eval::types::infer_generic(&other);
                            return Err(Flow::Err(self.issue(
                                format!("Expected value of type Hash, got {got}"),
                                expr.span,
                            )));
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    pub(in crate::eval) fn eval_type(&mut self, e: &Expr, scope: ScopeId) -> R<PType> {
        match self.eval(e, scope)? {
            Value::Type(t) => Ok(*t),
            other => Err(Flow::Err(self.runtime(
                format!("expected a type, got {}", other.type_name()),
                e.span,
            ))),
        }
    }
}

/// The resource type value of a catalog resource.
pub(in crate::eval) fn res_type(r: &Res) -> PType {
    if r.type_name == "Class" {
        PType::Class(Some(r.title.clone()))
    } else {
        PType::Resource(Some(r.type_name.clone()), Some(r.title.clone()))
    }
}

/// One end of a chaining arrow: the type and title of a reference (what [`ref_parts`] gives
/// for its value), borrowed from the operand when it is a written reference.
struct ArrowEnd<'a> {
    ty: Cow<'a, str>,
    title: Cow<'a, str>,
    kind: EndKind,
}

enum EndKind {
    Class,
    Resource,
    /// Not a reference to a resource (never found; shown as nothing).
    Other,
}

impl<'a> ArrowEnd<'a> {
    fn of_type(t: &'a PType) -> ArrowEnd<'a> {
        let (ty, title, kind) = match t {
            PType::Resource(Some(ty), Some(title)) => {
                (ty.as_str(), title.as_str(), EndKind::Resource)
            }
            PType::Class(Some(n)) => ("Class", n.as_str(), EndKind::Class),
            _ => ("", "", EndKind::Other),
        };
        ArrowEnd {
            ty: Cow::Borrowed(ty),
            title: Cow::Borrowed(title),
            kind,
        }
    }

    fn into_owned(self) -> ArrowEnd<'static> {
        ArrowEnd {
            ty: Cow::Owned(self.ty.into_owned()),
            title: Cow::Owned(self.title.into_owned()),
            kind: self.kind,
        }
    }

    /// As [`ref_shown`] shows the reference's value.
    fn shown(&self) -> String {
        match self.kind {
            EndKind::Class => format!("Class[{}]", capitalize_type(&self.title)),
            EndKind::Resource => format!("{}[{}]", self.ty, self.title),
            EndKind::Other => String::new(),
        }
    }
}

/// (type, title, as shown in messages) of a reference value.
pub(in crate::eval) fn ref_parts(v: &Value) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    match v {
        Value::Type(t) => match &**t {
            PType::Resource(Some(ty), Some(title)) => {
                Some((Cow::Borrowed(ty.as_str()), Cow::Borrowed(title.as_str())))
            }
            PType::Class(Some(n)) => Some((Cow::Borrowed("Class"), Cow::Borrowed(n.as_str()))),
            _ => None,
        },
        Value::Str(s) => {
            let r = crate::catalog::ResourceRef::parse(s)?;
            Some((Cow::Owned(r.type_name), Cow::Owned(r.title)))
        }
        _ => None,
    }
}

/// How a reference [`ref_parts`] splits is shown in messages (empty if it is none).
pub(in crate::eval) fn ref_shown(v: &Value) -> String {
    match (v, ref_parts(v)) {
        (Value::Type(t), Some((_, n))) if matches!(**t, PType::Class(_)) => {
            format!("Class[{}]", capitalize_type(&n))
        }
        (_, Some((ty, title))) => format!("{ty}[{title}]"),
        (_, None) => String::new(),
    }
}

/// Drops the spare capacity of a value's strings and arrays.
pub(in crate::eval) fn compact(v: &mut Value) {
    match v {
        Value::Str(s) => s.shrink_to_fit(),
        Value::Array(items) => {
            items.shrink_to_fit();
            items.iter_mut().for_each(compact);
        }
        _ => {}
    }
}

pub(in crate::eval) fn flatten_values(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.iter().flat_map(flatten_values).collect(),
        Value::Undef => vec![],
        other => vec![other.clone()],
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| quote_string(s))
}

/// The value of a resource's namevar (its title if unset; a file's without trailing
/// slashes), for the types whose namevar is an alias.
fn namevar_value<'r>(
    r: &'r Res,
    b: Option<&'static builtin_types::BuiltinType>,
) -> Option<Cow<'r, str>> {
    let b = b?;
    // Non-isomorphic types never alias their namevar.
    if b.name == "exec" || b.name == "tidy" {
        return None;
    }
    if b.namevars.len() > 1 {
        return None;
    }
    let nv = *b.namevars.first()?;
    if let Some(v) = r.params.get(nv) {
        return Some(Cow::Owned(v.to_display()));
    }
    if b.name == "file" {
        let t = r.title.trim_end_matches('/');
        return Some(Cow::Borrowed(if t.is_empty() { "/" } else { t }));
    }
    None
}

/// The uniqueness key of a type with several key attributes (`package`: command, name,
/// provider), rendered as Puppet inspects it: `nil, "x", nil`.
fn composite_key(r: &Res, b: Option<&'static builtin_types::BuiltinType>) -> Option<Vec<String>> {
    let b = b?;
    if b.namevars.len() < 2 {
        return None;
    }
    let mut attrs: Vec<&str> = b.namevars.to_vec();
    attrs.sort();
    Some(
        attrs
            .iter()
            .map(|a| match r.params.get(a) {
                Some(v) => json_str(&v.to_display()),
                None if *a == b.namevars[0] => json_str(&r.title),
                None => "nil".to_string(),
            })
            .collect(),
    )
}

/// [`capitalize_type`], borrowed when the name already is (as references mostly are).
pub(in crate::eval) fn capitalized(name: &str) -> Cow<'_, str> {
    // `capitalize_type` trims leading `::` and upper-cases the first byte of each `::`
    // segment (pairs of colons taken from the left).
    let b = name.as_bytes();
    let lower_at = |i: usize| b.get(i).is_some_and(u8::is_ascii_lowercase);
    let mut changes = !name.is_ascii() || name.starts_with("::") || lower_at(0);
    let mut i = 0;
    while !changes && i + 1 < b.len() {
        if b[i] == b':' && b[i + 1] == b':' {
            changes = lower_at(i + 2);
            i += 2;
        } else {
            i += 1;
        }
    }
    if changes {
        Cow::Owned(capitalize_type(name))
    } else {
        Cow::Borrowed(name)
    }
}

/// A `stage` parameter's value as the stage's name: a reference (`Stage['main']`) reads as
/// the catalog writes it (`Stage[main]`), which names no stage.
fn stage_name(v: &Value) -> String {
    match v {
        Value::Type(t) => t.catalog_string(),
        v => v.to_display(),
    }
}

/// The first of the tags `v` holds that is not tag-shaped, lowercased (Puppet lowercases a
/// tag before checking it, and names it so).
pub(in crate::eval) fn invalid_tag(v: &Value) -> Option<String> {
    flatten_values(v)
        .iter()
        .map(|t| t.to_display().to_lowercase())
        .find(|t| !crate::eval::compiler::is_valid_tag(t))
}
