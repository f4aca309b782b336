//! Catalog operations: declaring resources, classes and defines, defaults, overrides,
//! relationships and the finishing passes.

use super::builtin_types;
use super::compiler::{add_tag, join_loc, Compiler, EvalError, Flow, Operand, Res, R};
use super::priority::PRIORITY;
use super::scope::{Scope, ScopeId, ScopeKind};
use super::types::PType;
use super::value::{quote_string, Value};
use crate::ast::{Expr, Parameter};
use crate::catalog::TrimColons;
use crate::catalog::{capitalize_type, ResourceKind};
use crate::span::Span;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::sync::Arc;

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
    pub(super) fn resolve_resource_type(&mut self, name: &str) -> Option<TypeKind> {
        let lower = super::compiler::lowercase(name.trim_colons());
        if lower == "class" {
            return Some(TypeKind::Class);
        }
        if !super::is_qualified(&lower) {
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
    pub(super) fn add_to_catalog(&mut self, idx: usize) -> Result<(), EvalError> {
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
    pub(super) fn insert_resource(&mut self, idx: usize) {
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
    pub(super) fn find_resource(&self, type_name: &str, title: &str) -> Option<usize> {
        let t = capitalized(type_name);
        let title = if t == "Class" {
            super::compiler::lowercase(title.trim_colons())
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
    pub(super) fn lookup_defaults(
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
    pub(super) fn scope_resource(&self, scope: ScopeId) -> usize {
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
    pub(super) fn declare_resource(
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
            self.check_attributes(idx, kind)?;
        }
        self.add_to_catalog(idx)?;
        if self.resources[idx].type_name != "Stage" {
            let container = self.scope_resource(scope);
            self.containment.push((container, idx));
        }
        Ok(idx)
    }

    /// Whether `name` is a parameter of resource `idx` (set, or one its type accepts).
    pub(super) fn is_parameter_of(&mut self, idx: usize, name: &str) -> bool {
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

    fn check_attributes(&self, idx: usize, kind: &TypeKind) -> R<()> {
        let r = &self.resources[idx];
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
            return Err(Flow::Err(self.runtime(msg, r.span)));
        }
        for k in r.params.keys() {
            if !allowed(k) {
                let loc = self.line_location(r.file, r.line);
                let msg = format!("no parameter named '{k}' {loc} on {} {loc}", r.reference());
                // At the attribute when its place is kept (`ordo check`).
                let span = self.recorder.param_span(idx, k).unwrap_or(r.span);
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
    pub(super) fn check_tags(&self, v: &Value, span: Span) -> Result<(), EvalError> {
        match invalid_tag(v) {
            Some(t) => Err(self.plain(
                join_loc(format!("Invalid tag '{t}'"), &self.span_location(span)),
                Some(span),
            )),
            None => Ok(()),
        }
    }

    pub(super) fn set_param(
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

    /// `include`/`require`/`contain` of one class: evaluates it unless it already is.
    pub(super) fn include_class(&mut self, name: &str, scope: ScopeId, span: Span) -> R<usize> {
        let lname = name.trim_colons().to_lowercase();
        if let Some(i) = self.find_resource("Class", &lname) {
            return Ok(i);
        }
        if let Some(i) = self.settle_priority_class(&lname)? {
            return Ok(i);
        }
        let Some(def) = self.find_class(&lname) else {
            self.hint_class(&lname, span);
            return Err(Flow::Err(self.runtime(
                format!("Could not find class ::{lname} for {}", self.opts.node),
                span,
            )));
        };
        self.instantiate_class(def, scope, span, None)
    }

    /// `class { 'name': params }`.
    pub(super) fn declare_class(
        &mut self,
        name: &str,
        params: &[AttrValue],
        scope: ScopeId,
        span: Span,
    ) -> R<usize> {
        let lname = name.trim_colons().to_lowercase();
        let Some(def) = self.find_class(&lname) else {
            self.hint_class(&lname, span);
            return Err(Flow::Err(
                self.runtime(format!("Could not find declared class {lname}"), span),
            ));
        };
        if let Some(idx) = self.priority_declare_class(&lname, &def, params, scope, span)? {
            return Ok(idx);
        }
        if let Some(existing) = self.find_resource("Class", &lname) {
            let e = &self.resources[existing];
            let mut msg = format!(
                "Duplicate declaration: {} is already declared",
                e.reference()
            );
            if e.file.is_some() {
                msg.push_str(&format!(" at {}", self.line_location(e.file, e.line)));
            }
            msg.push_str("; cannot redeclare");
            let msg = join_loc(msg, &self.span_location(span));
            return Err(Flow::Err(self.runtime(msg, span)));
        }
        self.instantiate_class(def, scope, span, Some(params))
    }

    pub(super) fn instantiate_class(
        &mut self,
        def: std::sync::Arc<crate::ast::ClassDef>,
        scope: ScopeId,
        span: Span,
        params: Option<&[AttrValue]>,
    ) -> R<usize> {
        // Each class declared from a class body nests the evaluation: bounded, as Ruby's
        // stack bounds Puppet's ("stack level too deep").
        if self.class_depth >= MAX_CLASS_DEPTH {
            return Err(Flow::Err(self.runtime(
                format!(
                    "stack level too deep: classes declared more than {MAX_CLASS_DEPTH} levels deep (at class {})",
                    def.name
                ),
                span,
            )));
        }
        self.class_depth += 1;
        let r = self.instantiate_class_nested(def, scope, span, params);
        self.class_depth -= 1;
        r
    }

    fn instantiate_class_nested(
        &mut self,
        def: std::sync::Arc<crate::ast::ClassDef>,
        scope: ScopeId,
        span: Span,
        params: Option<&[AttrValue]>,
    ) -> R<usize> {
        let name = def.name.clone();
        // The parent class comes first, declared from the same scope.
        let parent_scope = match &def.parent {
            Some(p) => {
                let pname = p.trim_colons().to_lowercase();
                if self.find_resource("Class", &pname).is_none()
                    && self.find_class(&pname).is_none()
                {
                    // Puppet::Resource::Type#parent_type, located at the class definition.
                    let at = self.class_spans.get(&name.to_lowercase()).copied();
                    let loc = match at {
                        Some(s) => self.line_location(Some(s.file), self.span_line(s)),
                        None => String::new(),
                    };
                    let msg = format!(
                        "Could not find parent resource type '::{}' of type hostclass in production",
                        p.trim_colons()
                    );
                    return Err(Flow::Err(self.plain(join_loc(msg, &loc), at)));
                }
                if self.find_resource("Class", &pname).is_none() {
                    let me = name.to_lowercase();
                    if pname == me || self.inheriting.contains(&pname) {
                        let mut chain = self.inheriting.clone();
                        chain.push(me);
                        chain.push(pname);
                        let msg =
                            format!("Circular class inheritance: {}", chain.join(" inherits "));
                        return Err(Flow::Err(self.runtime(msg, span)));
                    }
                    self.inheriting.push(me);
                    let r = self.include_class(&pname, scope, span);
                    self.inheriting.pop();
                    r?;
                }
                self.class_scopes.get(&pname).copied()
            }
            None => None,
        };
        let kind = if params.is_some() {
            ResourceKind::Class
        } else {
            ResourceKind::Unknown
        };
        let idx = self.new_res("Class", &name, scope, kind, span);
        if params.is_some() {
            let line = self.span_line(span);
            self.resources[idx].file = Some(span.file);
            self.resources[idx].line = line;
        }
        let label = self.resources[idx].reference();
        let source = self.scopes[scope].source.clone();
        if let Some(ps) = params {
            for a in ps {
                if !METAPARAMS.contains(&a.name.as_str())
                    && !ordo_metaparam(&a.name)
                    && !def.params.iter().any(|p| p.name == a.name)
                {
                    return Err(Flow::Err(self.runtime(
                        format!("{label}: has no parameter named '{}'", a.name),
                        span,
                    )));
                }
                if !a.value.is_undef() {
                    self.set_param(idx, &a.name, a.value.clone(), &source, a.span);
                } else {
                    // Not a value, but given: the parameter's type is checked against undef.
                    let at = (Some(a.span.file), self.span_line(a.span));
                    let key = self.attr_name(&a.name);
                    self.resources[idx].setters.set(&key, &source, Some(at));
                }
            }
        }
        self.insert_resource(idx);
        for t in &self.resources[idx].tags {
            if !self.catalog_tags.contains(t) {
                self.catalog_tags.insert(t.clone());
            }
        }
        self.resources[idx].evaluated = true;

        // Evaluate: scope, tags, parameters, stage, body.
        let declaring_res = self.scope_resource(scope);
        self.copy_tags(declaring_res, idx);
        let dyn_parent = parent_scope.unwrap_or(scope);
        let lookup_next = parent_scope.unwrap_or_else(|| self.global_scope_for(scope));
        let source = Arc::from(format!("class {name}"));
        let mut s = Scope::with_source(
            ScopeKind::Class,
            Some(dyn_parent),
            Some(lookup_next),
            source,
        );
        s.resource = Some(idx);
        s.class_name = Some(name.clone());
        s.vars.reserve(DEFINITION_VARS + def.params.len());
        let sid = self.new_scope(s);
        self.class_scopes.insert(name.clone(), sid);
        self.class_list.push(name.clone());
        self.scopes[sid]
            .vars
            .insert("title".into(), Value::str(name.clone()));
        self.scopes[sid]
            .vars
            .insert("name".into(), Value::str(name.clone()));
        let module = self.def_modules.get(&name).cloned().unwrap_or_default();
        self.scopes[sid]
            .vars
            .insert("module_name".into(), Value::str(module));
        self.set_caller_module(sid, scope);
        self.bind_parameters(idx, &def.params, sid, &label, span, true)?;

        // Stage: the class's own, else the declaring scope resource's, else main.
        let stage = self.resources[idx]
            .params
            .get("stage")
            .map(stage_name)
            .or_else(|| {
                self.resources[declaring_res]
                    .params
                    .get("stage")
                    .map(stage_name)
            })
            .unwrap_or_else(|| "main".into());
        let Some(stage_idx) = self.find_resource("Stage", &stage) else {
            return Err(Flow::Err(self.runtime(
                format!("Could not find stage {stage} specified by {label}"),
                span,
            )));
        };
        if stage != "main" && !self.resources[idx].params.contains_key("stage") {
            self.resources[idx]
                .params
                .insert("stage", Value::str(stage));
        }
        self.containment.push((stage_idx, idx));
        if let Some(body) = &def.body {
            // `return()` and `next()` end the class body (from a lambda in it too).
            match self.eval_for_effect(body, sid) {
                Ok(_) | Err(Flow::Return(..) | Flow::Next(..)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(idx)
    }

    /// `$caller_module_name`: the module of the scope that declared the class or define.
    fn set_caller_module(&mut self, sid: ScopeId, caller: ScopeId) {
        let mut s = Some(caller);
        let mut module = Value::str("");
        while let Some(id) = s {
            if let Some(m) = self.scopes[id].vars.get("module_name") {
                module = m.clone();
                break;
            }
            s = self.scopes[id].lookup_next;
        }
        self.scopes[sid]
            .vars
            .insert("caller_module_name".into(), module);
    }

    /// Whether a declaration gave parameter `name` (an `undef` included, which leaves no
    /// value but a setter).
    fn was_given(&self, idx: usize, name: &str) -> bool {
        let r = &self.resources[idx];
        r.params.contains_key(name) || r.setters.source(name).is_some()
    }

    /// Binds class/define parameters: given values, defaults, type checks.
    pub(super) fn bind_parameters(
        &mut self,
        idx: usize,
        params: &[Parameter],
        sid: ScopeId,
        label: &str,
        span: Span,
        is_class: bool,
    ) -> R<()> {
        super::functions::reserved_parameter(self, params, span)?;
        self.check_queued_param_types()?;
        let source = self.scopes[sid].source.clone();
        if is_class {
            for p in params {
                self.hiera_class_param(idx, sid, &p.name, span)?;
            }
        }
        // Every missing value is reported at once, as Puppet does. A parameter without a
        // default needs a value whatever its type (`Optional[String] $x` too); an explicit
        // `undef` is a value given: type-checked below (`expects a String value, got
        // Undef`), accepted by an untyped or optional parameter.
        let missing: Vec<String> = params
            .iter()
            .filter(|p| p.value.is_none() && !self.was_given(idx, &p.name))
            .map(|p| format!("expects a value for parameter '{}'", p.name))
            .collect();
        match missing.len() {
            0 => {}
            1 => {
                return Err(Flow::Err(
                    self.runtime(format!("{label}: {}", missing[0]), span),
                ))
            }
            _ => {
                return Err(Flow::Err(
                    self.runtime(format!("{label}:\n  {}", missing.join("\n  ")), span),
                ))
            }
        }
        // As in Puppet, the values given are there before any default is evaluated, and a
        // default may read only parameters that have a value (given, or defaulted before).
        for p in params {
            if let Some(v) = self.resources[idx].params.get(&p.name) {
                self.scopes[sid].vars.insert(p.name.clone(), v.clone());
            } else if self.was_given(idx, &p.name) {
                self.scopes[sid].vars.insert(p.name.clone(), Value::Undef);
            }
        }
        // (Made once for every default evaluated below.)
        let names: std::rc::Rc<[String]> = params.iter().map(|p| p.name.clone()).collect();
        let guard_label: std::rc::Rc<str> = label.into();
        for (at, p) in params.iter().enumerate() {
            let given = self.resources[idx].params.get(&p.name).cloned();
            let value = match given {
                Some(v) if !v.is_undef() => v,
                _ => match &p.value {
                    Some(default) => {
                        let guard = super::compiler::ParamGuard {
                            scope: sid,
                            label: guard_label.clone(),
                            from: at,
                            names: names.clone(),
                            span,
                        };
                        let outer = self.param_guard.replace(guard);
                        let v = self.eval(default, sid);
                        self.param_guard = outer;
                        let v = v?;
                        if !v.is_undef() || is_class {
                            let key = self.attr_name(&p.name);
                            self.resources[idx].setters.set(&key, &source, None);
                            self.resources[idx].params.insert(key, v.clone());
                        }
                        v
                    }
                    None => {
                        if self.was_given(idx, &p.name) {
                            Value::Undef
                        } else {
                            return Err(Flow::Err(self.runtime(
                                format!("{label}: expects a value for parameter '{}'", p.name),
                                span,
                            )));
                        }
                    }
                },
            };
            if let Some(te) = &p.type_expr {
                let t = self.eval_type(te, sid)?;
                if !t.is_instance(&value) {
                    // Several problems (a struct's) are listed one per line, as Puppet does.
                    let msg = match super::types::mismatches(&t, &value).as_slice() {
                        [one] => format!("{label}: parameter '{}' {one}", p.name),
                        many => format!(
                            "{label}:\n{}",
                            many.iter()
                                .map(|m| format!("  parameter '{}' {m}", p.name))
                                .collect::<Vec<_>>()
                                .join("\n")
                        ),
                    };
                    return Err(Flow::Err(self.runtime(msg, span)));
                }
            }
            self.scopes[sid].vars.insert(p.name.clone(), value);
        }
        self.resources[idx].params.retain(|_, v| !v.is_undef());
        Ok(())
    }

    /// Evaluates a defined type instance (called from the generators loop).
    pub(super) fn evaluate_define(&mut self, idx: usize) -> R<()> {
        self.resources[idx].evaluated = true;
        let type_name = self.resources[idx].type_name.to_lowercase();
        let Some(def) = self.find_define(&type_name) else {
            return Ok(());
        };
        if let Some(pos) = self.unchecked_virtual.iter().position(|&i| i == idx) {
            self.unchecked_virtual.swap_remove(pos);
            self.check_attributes(idx, &TypeKind::Define(def.clone()))?;
        }
        let declaring = self.resources[idx].scope;
        let declaring_res = self.scope_resource(declaring);
        if declaring_res != idx {
            self.copy_tags(declaring_res, idx);
        }
        let lookup_next = self.global_scope_for(declaring);
        // The definition's name as scopes show it, made once per defined type.
        let source = match self.define_sources.get(&def.name) {
            Some(s) => s.clone(),
            None => {
                let s: Arc<str> = Arc::from(format!("define {}", def.name));
                self.define_sources.insert(def.name.clone(), s.clone());
                s
            }
        };
        let mut s = Scope::with_source(
            ScopeKind::Define,
            Some(declaring),
            Some(lookup_next),
            source,
        );
        s.resource = Some(idx);
        s.vars.reserve(DEFINITION_VARS + def.params.len());
        let sid = self.new_scope(s);
        let title = self.resources[idx].title.clone();
        let name = self.resources[idx]
            .params
            .get("name")
            .cloned()
            .unwrap_or_else(|| Value::str(title.clone()));
        self.scopes[sid]
            .vars
            .insert("title".into(), Value::str(title));
        self.scopes[sid].vars.insert("name".into(), name);
        let module = self.def_modules.get(&def.name).cloned().unwrap_or_default();
        self.scopes[sid]
            .vars
            .insert("module_name".into(), Value::str(module));
        self.set_caller_module(sid, declaring);
        let label = self.resources[idx].reference();
        let span = self.resources[idx].span;
        self.check_stop(span)?;
        self.bind_parameters(idx, &def.params, sid, &label, span, false)?;
        if let Some(body) = &def.body {
            match self.eval_for_effect(body, sid) {
                Ok(_) | Err(Flow::Return(..) | Flow::Next(..)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    // ---- overrides -----------------------------------------------------------------------------

    pub(super) fn add_override(&mut self, o: Override) -> Result<(), EvalError> {
        match self.find_resource(&o.type_name, &o.title) {
            Some(idx) => self.merge_override(idx, &o),
            None => {
                self.pending_overrides.push(o);
                Ok(())
            }
        }
    }

    /// Whether definition `a` is `b` or inherits from it.
    fn source_child_of(&self, a: &str, b: &str) -> bool {
        let mut cur = a.to_string();
        for _ in 0..100 {
            let Some(name) = cur.strip_prefix("class ") else {
                return false;
            };
            let Some(def) = self.classes.get(name) else {
                return false;
            };
            let Some(p) = &def.parent else { return false };
            cur = format!("class {}", p.trim_colons().to_lowercase());
            if cur == b {
                return true;
            }
        }
        false
    }

    pub(super) fn merge_override(&mut self, idx: usize, o: &Override) -> Result<(), EvalError> {
        let loc = self.span_location(o.span);
        if !o.forced {
            let rsrc = self.resources[idx].source.clone();
            if *rsrc != *o.source && !self.source_child_of(&o.source, &rsrc) {
                return Err(self.plain(
                    join_loc("Only subclasses can override parameters".into(), &loc),
                    Some(o.span),
                ));
            }
        }
        for a in &o.params {
            let current = self.resources[idx].params.get(&a.name).cloned();
            let Some(current) = current else {
                if !a.value.is_undef() {
                    self.set_param(idx, &a.name, a.value.clone(), &o.source, a.span);
                }
                continue;
            };
            if !o.forced {
                let csrc = self.resources[idx]
                    .setters
                    .source(&a.name)
                    .map_or_else(String::new, |s| String::from(&**s));
                // Puppet's override_parameter: a subclass may override, and so may the
                // scope that set the value when the value is that scope's default.
                let from_default = *o.source == *csrc && {
                    let r = &self.resources[idx];
                    self.lookup_defaults(r.scope, &r.type_name)
                        .get(&a.name)
                        .is_some_and(|d| *d == current)
                };
                if !from_default && !self.source_child_of(&o.source, &csrc) {
                    let r = &self.resources[idx];
                    let (f, l) = r.setters.at(&a.name).unwrap_or((r.file, r.line));
                    let by = if csrc.is_empty() {
                        "Class[main]".to_string()
                    } else {
                        csrc
                    };
                    let msg = format!(
                        "Parameter '{}' is already set on {} by {} at {}; cannot redefine",
                        a.name,
                        r.reference(),
                        by,
                        self.line_location(f, l)
                    );
                    return Err(self.plain(join_loc(msg, &loc), Some(o.span)));
                }
            }
            let value = if a.append {
                // Puppet: `[current, value].flatten`, which keeps undef as an element.
                fn flatten_keep_undef(v: &Value, out: &mut Vec<Value>) {
                    match v {
                        Value::Array(a) => a.iter().for_each(|x| flatten_keep_undef(x, out)),
                        other => out.push(other.clone()),
                    }
                }
                let mut items = vec![];
                flatten_keep_undef(&current, &mut items);
                flatten_keep_undef(&a.value, &mut items);
                Value::Array(items)
            } else {
                a.value.clone()
            };
            if value.is_undef() {
                self.resources[idx].params.shift_remove(&a.name);
            } else {
                self.set_param(idx, &a.name, value, &o.source, a.span);
            }
        }
        // An override may set only what the type has (Puppet checks when it merges).
        if !o.params.is_empty() {
            let type_name = self.resources[idx].type_name.clone();
            if let Some(kind) = self.resolve_resource_type(&type_name) {
                if !(self.resources[idx].virtual_ && self.resources[idx].is_define) {
                    if let Err(Flow::Err(e)) = self.check_attributes(idx, &kind) {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    // ---- relationships -------------------------------------------------------------------------

    /// Checks every relationship metaparameter of the non-virtual resources.
    pub(super) fn validate_relationship_params(&mut self) -> Result<(), EvalError> {
        for idx in 0..self.resources.len() {
            let r = &self.resources[idx];
            // One look at the names first (most resources have none of these).
            if r.virtual_
                || r.dropped
                || !r.params.keys().any(|k| RELATIONSHIP_PARAMS.contains(&&**k))
            {
                continue;
            }
            for p in RELATIONSHIP_PARAMS {
                let Some(v) = r.params.get(p) else { continue };
                for item in flatten_values(v) {
                    let Some((t, title)) = ref_parts(&item) else {
                        // Puppet::Resource.new(nil, value) cannot split it into a type and a
                        // title; a type without a title (`require => Notify`) reads `Notify[]`.
                        let shown = match &item {
                            Value::Str(_) | Value::Int(_) | Value::Float(_) => {
                                Some(item.to_display())
                            }
                            Value::Type(t) => match &**t {
                                PType::Resource(Some(name), None) => Some(format!("{name}[]")),
                                _ => None,
                            },
                            _ => None,
                        };
                        if let Some(shown) = shown {
                            let (f, l) = r.setters.at(p).unwrap_or((r.file, r.line));
                            let msg = format!(
                                "No title provided and {shown:?} is not a valid resource reference"
                            );
                            let span = self.recorder.param_span(idx, p).unwrap_or(r.span);
                            let e =
                                self.plain(join_loc(msg, &self.line_location(f, l)), Some(span));
                            self.fail_or_collect(e)?;
                        }
                        continue;
                    };
                    if self.related_resource(&t, &title).is_none() {
                        let (f, l) = r.setters.at(p).unwrap_or((r.file, r.line));
                        let shown = ref_shown(&item);
                        // `Type['']` reads back as "Type[]", which names no title at all.
                        let msg = if title.is_empty() {
                            format!(
                                "No title provided and {shown:?} is not a valid resource reference"
                            )
                        } else {
                            format!("Could not find resource '{shown}' in parameter '{p}'")
                        };
                        let span = self.recorder.param_span(idx, p).unwrap_or(r.span);
                        if !title.is_empty() {
                            self.hint_reference(&t, &title, span);
                        }
                        let e = self.plain(join_loc(msg, &self.line_location(f, l)), Some(span));
                        self.fail_or_collect(e)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The resource a relationship names. The main class is not one: its catalog resource
    /// is titled `:main` in Puppet, which no reference (`Class['main']` reads `Class[Main]`)
    /// finds.
    fn related_resource(&self, ty: &str, title: &str) -> Option<usize> {
        if ty.eq_ignore_ascii_case("class")
            && title.trim_start_matches("::").eq_ignore_ascii_case("main")
        {
            return None;
        }
        self.find_resource(ty, title)
    }

    /// Chaining arrows become `before`/`notify` values on the source resources.
    pub(super) fn evaluate_relationships(&mut self) -> Result<(), EvalError> {
        let rels = std::mem::take(&mut self.relationships);
        let operands: Vec<&[Operand]> = rels
            .iter()
            .flat_map(|r| [r.source.as_slice(), r.target.as_slice()])
            .collect();
        self.collector_relationship_warnings(&operands);
        for rel in &rels {
            let sources = self.operand_refs(&rel.source, true);
            let targets = self.operand_refs(&rel.target, false);
            if let Some(r) = sources.iter().chain(&targets).find(|r| r.title.is_empty()) {
                return Err(self.plain(
                    format!(
                        "No title provided and \"{}[]\" is not a valid resource reference",
                        r.ty
                    ),
                    None,
                ));
            }
            let param = if rel.notify { "notify" } else { "before" };
            for s in &sources {
                // Found once the first target is (a missing source with no targets is no
                // error).
                let mut found_source = None;
                for t in &targets {
                    let sidx = match found_source {
                        Some(i) => i,
                        None => {
                            let Some(i) = self.related_resource(&s.ty, &s.title) else {
                                let (sshown, tshown) = (s.shown(), t.shown());
                                self.hint_reference(&s.ty, &s.title, rel.source_span);
                                let e = self.plain(
                                    format!(
                                        "Could not find resource '{sshown}' for relationship on '{tshown}'"
                                    ),
                                    Some(rel.source_span),
                                );
                                self.fail_or_collect(e)?;
                                break;
                            };
                            found_source = Some(i);
                            i
                        }
                    };
                    let Some(tidx) = self.related_resource(&t.ty, &t.title) else {
                        let (sshown, tshown) = (s.shown(), t.shown());
                        self.hint_reference(&t.ty, &t.title, rel.target_span);
                        let e = self.plain(
                            format!("Could not find resource '{tshown}' for relationship from '{sshown}'"),
                            Some(rel.target_span),
                        );
                        self.fail_or_collect(e)?;
                        continue;
                    };
                    let span = rel.source_span.to(rel.target_span);
                    self.recorder.arrow(sidx, tidx, rel.notify, span);
                    let r = &mut self.resources[sidx];
                    let mut target = String::with_capacity(t.ty.len() + t.title.len() + 2);
                    for part in [&*t.ty, "[", &*t.title, "]"] {
                        target.push_str(part);
                    }
                    let target = Value::str(target);
                    match r.params.get_mut(param) {
                        Some(Value::Array(items)) => items.push(target),
                        Some(v) => {
                            let first = std::mem::replace(v, Value::Undef);
                            *v = Value::Array(vec![first, target]);
                        }
                        None => {
                            r.params
                                .insert(param.to_string(), Value::Array(vec![target]));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The references an operand stands for; an empty collector on the left falls back to
    /// its "empty alternative" (what stood left of it in the chain).
    fn operand_refs<'o>(&self, ops: &'o [Operand], left: bool) -> Vec<ArrowEnd<'o>> {
        let mut out = vec![];
        for op in ops {
            match op {
                Operand::Ref(t) => out.push(ArrowEnd::of_type(t)),
                Operand::Collector(ci) => {
                    let c = &self.collectors[*ci];
                    if c.collected.is_empty() && left {
                        if let Some(alt) = &c.empty_alternative {
                            out.extend(self.alternative_refs(alt));
                        }
                    } else {
                        for &i in &c.collected {
                            let r = &self.resources[i];
                            out.push(ArrowEnd {
                                ty: Cow::Owned(r.type_name.clone()),
                                title: Cow::Owned(r.title.clone()),
                                kind: if r.type_name == "Class" {
                                    EndKind::Class
                                } else {
                                    EndKind::Resource
                                },
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// [`Self::operand_refs`] of a collector's empty alternative (kept by the collector).
    fn alternative_refs(&self, alt: &[Operand]) -> Vec<ArrowEnd<'static>> {
        let refs = self.operand_refs(alt, true);
        refs.into_iter().map(ArrowEnd::into_owned).collect()
    }

    /// Adds the tags of resource `from` to resource `to` (a no-op when they are the same).
    pub(super) fn copy_tags(&mut self, from: usize, to: usize) {
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

    pub(super) fn finish(&mut self) -> Result<(), EvalError> {
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
        type Patterns = Option<std::rc::Rc<Vec<(super::value::Regex, Vec<String>)>>>;
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
                                    super::value::Regex::new(re)
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
            if let Err(Flow::Err(e)) = self.check_attributes(idx, &TypeKind::Define(def)) {
                return Err(self.plain(e.msg, e.span));
            }
        }
        Ok(())
    }

    pub(super) fn fail_on_unevaluated(&mut self) -> Result<(), EvalError> {
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
    pub(super) fn eval_attribute_ops(
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
                            let got = super::types::infer_generic(&other);
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

    pub(super) fn eval_type(&mut self, e: &Expr, scope: ScopeId) -> R<PType> {
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
pub(super) fn res_type(r: &Res) -> PType {
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
pub(super) fn ref_parts(v: &Value) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
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
pub(super) fn ref_shown(v: &Value) -> String {
    match (v, ref_parts(v)) {
        (Value::Type(t), Some((_, n))) if matches!(**t, PType::Class(_)) => {
            format!("Class[{}]", capitalize_type(&n))
        }
        (_, Some((ty, title))) => format!("{ty}[{title}]"),
        (_, None) => String::new(),
    }
}

/// Drops the spare capacity of a value's strings and arrays.
pub(super) fn compact(v: &mut Value) {
    match v {
        Value::Str(s) => s.shrink_to_fit(),
        Value::Array(items) => {
            items.shrink_to_fit();
            items.iter_mut().for_each(compact);
        }
        _ => {}
    }
}

pub(super) fn flatten_values(v: &Value) -> Vec<Value> {
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
pub(super) fn capitalized(name: &str) -> Cow<'_, str> {
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
pub(super) fn invalid_tag(v: &Value) -> Option<String> {
    flatten_values(v)
        .iter()
        .map(|t| t.to_display().to_lowercase())
        .find(|t| !super::compiler::is_valid_tag(t))
}
