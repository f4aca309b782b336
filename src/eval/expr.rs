//! Expression evaluation: literals, variables, operators, control flow and the catalog
//! expressions (resources, defaults, overrides, collectors, relationships).

use super::compiler::scope::{ScopeId, ScopeKind};
use super::compiler::{Compiler, EvalError, Flow, Operand, Relationship, R};
use super::resources::catalog_ops::{flatten_values, Override, TypeKind};
use super::types::{self, PType};
use super::values::value::{puppet_eq, Regex, Value};
use crate::ast::*;
use crate::catalog::capitalize_type;
use crate::catalog::TrimColons;
use crate::span::Span;
use indexmap::IndexMap;
use std::cmp::Ordering;

mod access;
mod catalog;
mod operators;
use super::values::numbers::{num_f64, to_n};
use super::values::strings::a_an;

impl Compiler<'_> {
    /// Evaluates the top-level program in the top scope.
    pub(super) fn eval_top(&mut self, body: &Expr) -> R<Value> {
        let top = self.top;
        self.eval(body, top)
    }

    pub(super) fn eval(&mut self, e: &Expr, scope: ScopeId) -> R<Value> {
        self.eval_want(e, scope, true)
    }

    /// Evaluates `e` for its effects: its value is not used (it is undef). A resource
    /// expression then does not make the references to what it declared, nor does a block
    /// for its last expression.
    pub(super) fn eval_for_effect(&mut self, e: &Expr, scope: ScopeId) -> R<Value> {
        self.eval_want(e, scope, false)
    }

    /// [`Compiler::eval`], or [`Compiler::eval_for_effect`] unless `want`.
    fn eval_want(&mut self, e: &Expr, scope: ScopeId, want: bool) -> R<Value> {
        // The depth bounds compounding (a chain of includes, recursive calls, each deep in
        // expressions) could still overflow the stack: Puppet's error instead.
        if crate::stack::low() {
            return Err(Flow::Err(
                self.runtime(crate::stack::TOO_DEEP.to_string(), e.span),
            ));
        }
        let label = match &e.kind {
            ExprKind::Call(c) if c.kind == CallKind::Method => Some("Method call"),
            ExprKind::Call(_) => Some("Function Call"),
            ExprKind::Resource(_) => Some("Resource Statement"),
            ExprKind::ResourceDefaults { .. } => Some("Resource Default Statement"),
            ExprKind::ResourceOverride { .. } => Some("Resource Override Statement"),
            ExprKind::Collect(_) => Some("Collector Statement"),
            ExprKind::Relationship { .. } => Some("Relationship Statement"),
            _ => None,
        };
        let mut r = self.eval_inner(e, scope, want);
        // A match that gave up (see `take_regex_failure`) fails here, before its answer is
        // used: the expression that matched is where the error points.
        if let Some(msg) = super::values::value::take_regex_failure() {
            r = Err(Flow::Err(self.runtime(msg, e.span)));
        }
        if let Ok(Value::Str(s)) = &r {
            // Strings made here (not read from a variable) count against the compile's bound.
            let made = matches!(e.kind, ExprKind::ConcatString(_) | ExprKind::Call(_));
            if let Err(too_long) = self.check_string_len(s.len(), e.span) {
                r = Err(too_long);
            } else if made {
                if let Err(spent) = self.charge_string_at(s.len(), e.span) {
                    r = Err(spent);
                }
            }
        }
        match (r, label) {
            (Err(Flow::Err(err)), Some(label)) if !err.formatted => {
                let err = EvalError {
                    span: Some(e.span),
                    ..err
                };
                Err(Flow::Err(self.finalize_error(err, label)))
            }
            (r, _) => r,
        }
    }

    /// A string of `len` bytes may be made (see `functions::MAX_STRING_BYTES`).
    pub(super) fn check_string_len(&self, len: usize, span: Span) -> R<()> {
        if len <= super::functions::MAX_STRING_BYTES {
            return Ok(());
        }
        let msg = format!(
            "evaluation stopped: a string of {len} bytes, longer than the {} one value may have",
            super::functions::MAX_STRING_BYTES
        );
        Err(Flow::Err(self.runtime(msg, span)))
    }

    fn eval_inner(&mut self, e: &Expr, scope: ScopeId, want: bool) -> R<Value> {
        Ok(match &e.kind {
            ExprKind::Undef | ExprKind::Nop => Value::Undef,
            ExprKind::Default => Value::Default,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Integer { value, .. } => Value::Int(*value),
            ExprKind::Float(f) => Value::Float(*f),
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Regex(src) => match Regex::new(src) {
                Ok(r) => Value::Regex(r),
                Err(m) => return Err(Flow::Err(self.issue(m, e.span))),
            },
            ExprKind::QualifiedName(s) | ExprKind::ReservedWord(s) => Value::Str(s.clone()),
            ExprKind::QualifiedReference(name) => {
                Value::Type(Box::new(self.resolve_type_name(name, e.span)?))
            }
            ExprKind::ConcatString(parts) => {
                if let Some(s) = self.concat_plain(parts, scope) {
                    return Ok(Value::Str(s));
                }
                let mut out = String::new();
                for p in parts {
                    // Literal text and plain variables are written from where they are.
                    match &p.kind {
                        ExprKind::Str(s) => {
                            out.push_str(s);
                            continue;
                        }
                        ExprKind::Text(inner) => {
                            if let ExprKind::Variable(name) = &inner.kind {
                                if let Some(v) = self.local_var(name, scope) {
                                    if let Value::Str(s) = v {
                                        self.check_string_len(out.len() + s.len(), e.span)?;
                                    }
                                    v.push_display(&mut out);
                                    continue;
                                }
                            }
                        }
                        _ => {}
                    }
                    let v = self.eval(p, scope)?;
                    if let Value::Str(s) = &v {
                        self.check_string_len(out.len() + s.len(), e.span)?;
                    }
                    match v {
                        // The first part's string becomes the result (not copied).
                        Value::Str(s) if out.is_empty() => out = s,
                        v => v.push_display(&mut out),
                    }
                }
                Value::Str(out)
            }
            ExprKind::Text(inner) => self.eval(inner, scope)?,
            ExprKind::Heredoc { text, .. } => self.eval(text, scope)?,
            ExprKind::Array(items) => {
                let mut out = vec![];
                for it in items {
                    if let ExprKind::Unary {
                        op: UnaryOp::Unfold,
                        expr,
                    } = &unwind_parens(it).kind
                    {
                        out.extend(self.eval(expr, scope)?.into_unfolded())
                    } else {
                        out.push(self.eval(it, scope)?);
                    }
                }
                let v = Value::Array(out);
                self.check_value_shape(&v, e.span)?;
                v
            }
            ExprKind::Hash(entries) => {
                let mut h = IndexMap::new();
                for en in entries {
                    let k = self.eval(&en.key, scope)?;
                    let v = self.eval(&en.value, scope)?;
                    h.insert(k, v);
                }
                let v = Value::Hash(h.into());
                self.check_value_shape(&v, e.span)?;
                v
            }
            ExprKind::Variable(name) => self.lookup_var(name, scope, e.span)?,
            ExprKind::Access { left, keys } => {
                if let Some((name, name_span, title)) = reference_literal(e) {
                    let key_span = keys[0].span;
                    return self.access_reference(name, name_span, title, key_span, e.span);
                }
                if let Some(v) = self.access_chain(e, scope)? {
                    return Ok(v);
                }
                let l = self.eval(left, scope)?;
                let mut ks = vec![];
                for k in keys {
                    if let ExprKind::Unary {
                        op: UnaryOp::Unfold,
                        expr,
                    } = &unwind_parens(k).kind
                    {
                        ks.extend(self.eval(expr, scope)?.into_unfolded())
                    } else {
                        ks.push(self.eval(k, scope)?);
                    }
                }
                if matches!(l, Value::Array(_) | Value::Str(_)) {
                    self.coerce_index_keys(&l, &mut ks, keys, e.span)?;
                }
                let key_spans: Vec<Span> = if ks.len() == keys.len() {
                    keys.iter().map(|k| k.span).collect()
                } else {
                    vec![]
                };
                self.access(l, &ks, &key_spans, e.span)?
            }
            ExprKind::NamedAccess { .. } => {
                return Err(Flow::Err(self.runtime("Illegal use of '.'", e.span)))
            }
            ExprKind::Unary { op, expr } => {
                let v = self.eval(expr, scope)?;
                match op {
                    UnaryOp::Not => Value::Bool(!v.truthy()),
                    UnaryOp::Minus => match v {
                        Value::Int(i) => Value::Int(i.wrapping_neg()),
                        Value::Timespan(t) => {
                            Value::Timespan(super::values::timespan::Timespan(t.0.saturating_neg()))
                        }
                        Value::Float(f) => Value::Float(-f),
                        Value::Str(ref s) => match to_n(s) {
                            Some(n @ (Value::Int(_) | Value::Float(_))) => {
                                self.warn_at(
                                    &format!(
                                        "The string '{s}' was automatically coerced to the numerical value {}",
                                        n.to_display()
                                    ),
                                    e.span,
                                );
                                match n {
                                    Value::Int(i) => Value::Int(i.wrapping_neg()),
                                    Value::Float(f) => Value::Float(-f),
                                    _ => unreachable!("matched as a number"),
                                }
                            }
                            _ => {
                                return Err(Flow::Err(self.issue(
                                    format!("The value '{s}' cannot be converted to Numeric."),
                                    e.span,
                                )))
                            }
                        },
                        other => {
                            return Err(Flow::Err(self.issue(
                                format!(
                                    "The value '{}' cannot be converted to Numeric.",
                                    other.to_display()
                                ),
                                e.span,
                            )))
                        }
                    },
                    UnaryOp::Unfold => match v {
                        Value::Array(_) => v,
                        other => Value::Array(other.into_unfolded()),
                    },
                }
            }
            ExprKind::Binary { op, left, right } => {
                self.eval_binary(*op, left, right, scope, e.span)?
            }
            ExprKind::Relationship { .. } => {
                let ops = self.eval_relationship(e, scope, want)?;
                let vals: Vec<Value> = ops
                    .iter()
                    .filter_map(|o| match o {
                        Operand::Ref(t) => Some(Value::Type(Box::new(t.clone()))),
                        Operand::Collector(_) => None,
                    })
                    .collect();
                Value::Array(vals)
            }
            ExprKind::Assignment { op, left, right } => {
                let v = self.eval(right, scope)?;
                let at = self.operator_span(left.span, right.span, op.as_str());
                self.assign(*op, left, v, scope, at, want)?
            }
            ExprKind::Paren(inner) => self.eval(inner, scope)?,
            // A match in the test of an if, unless, case or selector sets $0..$n for that
            // construct only (Puppet's ephemeral match scope); afterwards the outer ones are back.
            ExprKind::Selector { .. }
            | ExprKind::If { .. }
            | ExprKind::Unless { .. }
            | ExprKind::Case { .. } => {
                let saved = self.scopes[scope].matches.clone();
                let result = self.eval_conditional(e, scope);
                self.scopes[scope].matches = saved;
                result?
            }
            ExprKind::Block(items) => {
                let mut last = Value::Undef;
                for (i, it) in items.iter().enumerate() {
                    last = self.eval_want(it, scope, want && i + 1 == items.len())?;
                }
                last
            }
            ExprKind::Call(call) => self.eval_call(call, scope, e.span)?,
            ExprKind::Lambda(_) => Value::Undef,
            ExprKind::Resource(r) => self.eval_resource(r, scope, e.span, want)?,
            ExprKind::ResourceDefaults { type_ref, ops, .. } => {
                let t = self.eval(type_ref, scope)?;
                let name = match &t {
                    Value::Type(t) => match &**t {
                        PType::Resource(Some(n), None) => n.clone(),
                        PType::Class(None) => {
                            return Err(Flow::Err(self.runtime(
                                "Illegal Resource Type expression, expected result to be a type name, or untitled Resource, got Type[Class]",
                                type_ref.span,
                            )))
                        }
                        _ => {
                            return Err(Flow::Err(
                                self.runtime("Illegal resource type for defaults", e.span),
                            ))
                        }
                    },
                    _ => {
                        return Err(Flow::Err(
                            self.runtime("Illegal resource type for defaults", e.span),
                        ))
                    }
                };
                // A parameter may have one default per type and scope.
                let target = self.real_scope(scope);
                let defined = self.scopes[target]
                    .defaults
                    .as_ref()
                    .and_then(|d| d.get(&name));
                let again = ops.iter().enumerate().find_map(|(i, op)| match op {
                    AttributeOp::Set { name: p, .. }
                        if defined.is_some_and(|d| d.contains_key(p))
                            || repeated_attribute(&ops[..=i]) == Some(p.as_str()) =>
                    {
                        Some(p.as_str())
                    }
                    _ => None,
                });
                if let Some(p) = again {
                    return Err(Flow::Err(self.runtime(
                        format!("Default already defined for {name} {{ {p} }}; cannot redefine"),
                        e.span,
                    )));
                }
                let attrs = self.eval_attribute_ops(ops, scope)?;
                let d = self.scopes[target]
                    .defaults
                    .get_or_insert_with(Default::default)
                    .entry(name)
                    .or_default();
                for a in attrs {
                    d.insert(a.name, a.value);
                }
                t
            }
            ExprKind::ResourceOverride { resources, ops, .. } => {
                let refs = self.eval(resources, scope)?;
                // An attribute twice in the body: Puppet's message names the (first) target.
                if let Some(name) = repeated_attribute(ops) {
                    let target = flatten_values(&refs)
                        .first()
                        .map(|r| r.to_display())
                        .unwrap_or_default();
                    return Err(Flow::Err(self.plain(
                        super::compiler::join_loc(
                            format!("Duplicate parameter '{name}' for on {target}"),
                            &self.line_location(Some(e.span.file), self.span_line(e.span)),
                        ),
                        Some(e.span),
                    )));
                }
                let attrs = self.eval_attribute_ops(ops, scope)?;
                let source = self.scopes[scope].source.clone();
                for r in flatten_values(&refs) {
                    if let Value::Type(t) = &r {
                        if matches!(**t, PType::Class(_)) {
                            return Err(Flow::Err(self.issue(
                                format!("Resource Override can only operate on resources, got: {t}-Type"),
                                e.span,
                            )));
                        }
                    }
                    let Some((t, title)) = super::resources::catalog_ops::ref_parts(&r) else {
                        return Err(Flow::Err(self.runtime("Illegal override target", e.span)));
                    };
                    self.add_override(Override {
                        type_name: t.into_owned(),
                        title: title.into_owned(),
                        params: attrs.clone(),
                        source: source.clone(),
                        span: e.span,
                        forced: false,
                    })?;
                }
                refs
            }
            ExprKind::Collect(c) => {
                self.make_collector(&c.type_expr, &c.query, &c.ops, scope, e.span)?;
                Value::Undef
            }
            ExprKind::Class(_)
            | ExprKind::Define(_)
            | ExprKind::Node(_)
            | ExprKind::Function(_)
            | ExprKind::TypeAlias { .. }
            | ExprKind::TypeDefinition(_)
            | ExprKind::TypeMapping { .. } => Value::Undef,
            ExprKind::Epp { body, .. } => self.eval(body, scope)?,
            ExprKind::RenderString(s) => {
                self.render_push(s, e.span)?;
                Value::Undef
            }
            ExprKind::Render(inner) => {
                let v = self.eval(inner, scope)?;
                match v {
                    Value::Sensitive(x) => {
                        if let Some(flag) = self.render_sensitive.last_mut() {
                            *flag = true;
                        }
                        self.render_push(&x.to_display(), e.span)?
                    }
                    v => self.render_push(&v.to_display(), e.span)?,
                }
                Value::Undef
            }
        })
    }

    /// The nearest scope that is not a lambda scope (defaults live there).
    pub(super) fn real_scope(&self, scope: ScopeId) -> ScopeId {
        let mut s = scope;
        while self.scopes[s].kind == ScopeKind::Local {
            match self.scopes[s].lookup_next {
                Some(n) => s = n,
                None => break,
            }
        }
        s
    }

    pub(super) fn resolve_type_name(&mut self, name: &str, span: Span) -> R<PType> {
        let name = name.trim_colons();
        if let Some(t) = types::builtin(name) {
            return Ok(t);
        }
        let key = super::resources::catalog_ops::capitalized(name);
        if let Some(t) = self.resolved_aliases.get(&*key) {
            return Ok(t.clone());
        }
        // Resolved by an earlier compile of the same code.
        if let Some(t) = self.loader.parse_cache().and_then(|c| c.alias(&key)) {
            self.resolved_aliases.insert(key.into_owned(), t.clone());
            return Ok(t);
        }
        if self.known_resource_refs.contains(&*key) {
            return Ok(PType::Resource(Some(key.into_owned()), None));
        }
        let mut key = key.into_owned();
        if self.known_resource_types.contains(&key.to_lowercase()) {
            self.known_resource_refs.insert(key.clone());
            return Ok(PType::Resource(Some(key), None));
        }
        if !self.type_aliases.contains_key(&key) && key.contains("::") {
            self.autoload(&key, "types");
        }
        if !self.type_aliases.contains_key(&key) {
            // Type names are case-insensitive (`Stdlib::AbsolutePath` is `Stdlib::Absolutepath`).
            if let Some(k) = self
                .type_aliases
                .keys()
                .find(|k| k.eq_ignore_ascii_case(&key))
            {
                key = k.clone();
                if let Some(t) = self.resolved_aliases.get(&key) {
                    return Ok(t.clone());
                }
            }
        }
        if let Some(expr) = self.type_aliases.get(&key).cloned() {
            // Guard against self reference while resolving.
            self.resolved_aliases.insert(key.clone(), PType::Any);
            self.type_alias_depth += 1;
            let t = self.eval(&expr, self.top);
            self.type_alias_depth -= 1;
            let t = match t? {
                Value::Type(t) => *t,
                _ => {
                    return Err(Flow::Err(
                        self.runtime(format!("Illegal type alias {key}"), span),
                    ))
                }
            };
            let t = PType::Alias(key.clone(), std::sync::Arc::new(t));
            if self.type_alias_depth == 0 {
                if let Some(cache) = self.loader.parse_cache() {
                    cache.keep_alias(&key, &t);
                }
            }
            self.resolved_aliases.insert(key, t.clone());
            return Ok(t);
        }
        self.resource_type_reference(name, key, span)
    }

    // ---- variables -------------------------------------------------------------------------

    pub(super) fn lookup_var(&mut self, name: &str, scope: ScopeId, span: Span) -> R<Value> {
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_digit()) {
            let n: usize = name.parse().unwrap_or(0);
            let mut s = Some(scope);
            while let Some(id) = s {
                if let Some(m) = &self.scopes[id].matches {
                    return Ok(m.get(n).cloned().unwrap_or(Value::Undef));
                }
                s = self.scopes[id].lookup_next;
            }
            return Ok(Value::Undef);
        }
        if let Some(rest) = name.strip_prefix("::") {
            if !super::is_qualified(rest) {
                if let Some(v) = self.scopes[self.top].vars.get(rest) {
                    return Ok(v.clone());
                }
                return self.unknown_var(name, span);
            }
            return self.lookup_qualified(rest, name, span);
        }
        if super::is_qualified(name) {
            return self.lookup_qualified(name, name, span);
        }
        let mut s = Some(scope);
        while let Some(id) = s {
            if let Some(v) = self.scopes[id].vars.get(name) {
                return Ok(v.clone());
            }
            if let Some(g) = self.param_guard.as_ref().filter(|g| g.scope == id) {
                if let Some(to) = g.names.iter().position(|n| n == name) {
                    return Err(Flow::Err(self.unevaluated_parameter(g, to)));
                }
            }
            s = self.scopes[id].lookup_next;
        }
        self.unknown_var(name, span)
    }

    /// `$var[k1][k2]...`, one key a level, into the hashes a variable holds: followed by
    /// reference, so that only the value found is copied (for `$facts['os']['family']`, not
    /// the whole `$facts` and `os` first). Evaluated in the general order (each key, then
    /// its access); a level whose container is not a hash, or a key not found, goes on the
    /// general way from there. `None`, with nothing evaluated, for another shape or a
    /// variable not plainly found (the general way then reports it).
    fn access_chain(&mut self, e: &Expr, scope: ScopeId) -> R<Option<Value>> {
        let mut levels: Vec<(&Expr, Span)> = vec![];
        let mut cur = e;
        let name = loop {
            match &cur.kind {
                ExprKind::Access { left, keys }
                    if keys.len() == 1
                        && !matches!(
                            &unwind_parens(&keys[0]).kind,
                            ExprKind::Unary {
                                op: UnaryOp::Unfold,
                                ..
                            }
                        ) =>
                {
                    levels.push((&keys[0], cur.span));
                    cur = left;
                }
                ExprKind::Variable(name) if !levels.is_empty() => break name.as_str(),
                _ => return Ok(None),
            }
        };
        levels.reverse();
        let Some((at, var)) = self.plain_var_scope(name, scope) else {
            return Ok(None);
        };
        fn held_var<'c>(c: &'c Compiler<'_>, at: ScopeId, var: &str) -> Option<&'c Value> {
            c.scopes[at].vars.get(var)
        }
        if !matches!(held_var(self, at, var), Some(Value::Hash(_))) {
            return Ok(None);
        }
        // The keys followed by reference so far; then, off that path, the value at hand.
        let mut path: Vec<Value> = Vec::with_capacity(levels.len());
        let mut held: Option<Value> = None;
        for (key, span) in levels {
            let k = self.eval(key, scope)?;
            let l = match held.take() {
                Some(l) => l,
                None => {
                    let container = held_var(self, at, var).and_then(|v| follow(v, &path));
                    match container {
                        Some(Value::Hash(h)) => {
                            if h.get(&k).is_some() {
                                path.push(k);
                            } else {
                                held = Some(Value::Undef);
                            }
                            continue;
                        }
                        Some(other) => other.clone(),
                        None => Value::Undef,
                    }
                }
            };
            let mut ks = vec![k];
            if matches!(l, Value::Array(_) | Value::Str(_)) {
                self.coerce_index_keys(&l, &mut ks, std::slice::from_ref(key), span)?;
            }
            let key_spans: Vec<Span> = if ks.len() == 1 {
                vec![key.span]
            } else {
                vec![]
            };
            held = Some(self.access(l, &ks, &key_spans, span)?);
        }
        Ok(Some(match held {
            Some(v) => v,
            None => held_var(self, at, var)
                .and_then(|v| follow(v, &path))
                .cloned()
                .unwrap_or(Value::Undef),
        }))
    }

    /// Where [`Compiler::lookup_var`] finds a plain variable (not a match variable, not
    /// qualified), and its name there; `None` when it does not plainly find it.
    fn plain_var_scope<'n>(&self, name: &'n str, scope: ScopeId) -> Option<(ScopeId, &'n str)> {
        if name.is_empty() || name.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if let Some(rest) = name.strip_prefix("::") {
            let found =
                !super::is_qualified(rest) && self.scopes[self.top].vars.get(rest).is_some();
            return found.then_some((self.top, rest));
        }
        if super::is_qualified(name) {
            return None;
        }
        let mut s = Some(scope);
        while let Some(id) = s {
            if self.scopes[id].vars.get(name).is_some() {
                return Some((id, name));
            }
            if self
                .param_guard
                .as_ref()
                .is_some_and(|g| g.scope == id && g.names.iter().any(|n| n == name))
            {
                return None;
            }
            s = self.scopes[id].lookup_next;
        }
        None
    }

    /// The bare `Class` type where a resource reference is needed (as an operand of `op`).
    pub(super) fn untitled_class(&self, op: &str, span: Span) -> Flow {
        Flow::Err(self.issue(
            format!("Error while evaluating a '{op}' expression, No title provided and \"class\" is not a valid resource reference"),
            span,
        ))
    }

    /// A parameter default read parameter `names[to]`, which has no value yet: Puppet's
    /// `ParameterScope#parameter_reference_failure`.
    fn unevaluated_parameter(&self, g: &super::compiler::ParamGuard, to: usize) -> EvalError {
        let to_name = &g.names[to];
        let msg = if to < g.from {
            format!("{}: expects a value for parameter ${to_name}", g.label)
        } else {
            format!(
                "{}: default expression for ${} tries to illegally access not yet evaluated ${to_name}",
                g.label, g.names[g.from]
            )
        };
        self.runtime(msg, g.span)
    }

    /// An interpolated string made only of literal text and plain variables that are set,
    /// made at its final size; `None` (evaluate it part by part) for any other.
    fn concat_plain(&self, parts: &[Expr], scope: ScopeId) -> Option<String> {
        // (Most strings have a few parts: no list is allocated for them.)
        let mut values: [Option<&Value>; 8] = [None; 8];
        if parts.len() > values.len() {
            return None;
        }
        let mut len = 0;
        for (i, p) in parts.iter().enumerate() {
            let v = match &p.kind {
                ExprKind::Str(s) => {
                    len += s.len();
                    continue;
                }
                ExprKind::Text(inner) => match &inner.kind {
                    ExprKind::Variable(name) => self.local_var(name, scope)?,
                    _ => return None,
                },
                _ => return None,
            };
            len += match v {
                Value::Str(s) => s.len(),
                Value::Int(i) => decimal_len(*i),
                _ => 16,
            };
            values[i] = Some(v);
        }
        if len > super::functions::MAX_STRING_BYTES {
            return None; // refused part by part
        }
        let mut out = String::with_capacity(len);
        for (p, v) in parts.iter().zip(values) {
            match (&p.kind, v) {
                (_, Some(v)) => v.push_display(&mut out),
                (ExprKind::Str(s), None) => out.push_str(s),
                _ => {}
            }
        }
        Some(out)
    }

    /// A variable of the scope chain by a plain name (no namespace, not a match group) or of
    /// the top scope (`::x`), borrowed; `None` for any other name and when it is not set (then [`Self::lookup_var`]
    /// says what happens).
    fn local_var(&self, name: &str, scope: ScopeId) -> Option<&Value> {
        if let Some(top_name) = name.strip_prefix("::") {
            // `$::x`: the top scope's.
            if top_name.contains(':') {
                return None;
            }
            return self.scopes[self.top].vars.get(top_name);
        }
        if name.as_bytes().first().is_none_or(u8::is_ascii_digit) || name.contains(':') {
            return None;
        }
        let mut s = Some(scope);
        while let Some(id) = s {
            if let Some(v) = self.scopes[id].vars.get(name) {
                return Some(v);
            }
            s = self.scopes[id].lookup_next;
        }
        None
    }

    /// `$a::b` (`name` without leading `::`; `shown` as written, for messages).
    fn lookup_qualified(&mut self, name: &str, shown: &str, span: Span) -> R<Value> {
        let (class, var) = name.rsplit_once("::").unwrap_or(("", name));
        let class = class.to_lowercase();
        if class.is_empty() {
            if let Some(v) = self.scopes[self.top].vars.get(var) {
                return Ok(v.clone());
            }
            return self.unknown_var(shown, span);
        }
        if class == "settings" {
            if let Some(v) = self.setting(var) {
                return Ok(v);
            }
        }
        match self.class_scopes.get(&class) {
            Some(&sid) => {
                let mut s = Some(sid);
                while let Some(id) = s {
                    if let Some(v) = self.scopes[id].vars.get(var) {
                        return Ok(v.clone());
                    }
                    // Inherited class scopes only, not the top scope.
                    s = self.scopes[id]
                        .lookup_next
                        .filter(|n| self.scopes[*n].kind == ScopeKind::Class);
                }
                self.unknown_var(shown, span)
            }
            None => self.unknown_var(shown, span),
        }
    }

    /// `$settings::name`: the settings a manifest may read, with the values of the
    /// Debian-packaged Puppet 7 that Ordo is compared with (its paths), for the node.
    fn setting(&self, name: &str) -> Option<Value> {
        Some(match name {
            "environment" => Value::str(
                self.opts
                    .server
                    .as_ref()
                    .map_or("production", |s| s.environment.as_str()),
            ),
            "certname" | "node_name_value" => Value::str(self.opts.node.clone()),
            "strict_variables" => Value::Bool(self.opts.strict_variables),
            "strict" => Value::str("warning"),
            "noop" | "storeconfigs" => Value::Bool(false),
            "runinterval" => Value::Int(1800),
            "server" | "user" | "group" => Value::str("puppet"),
            "confdir" => Value::str("/etc/puppet"),
            "codedir" => Value::str("/etc/puppet/code"),
            "vardir" => Value::str("/var/cache/puppet"),
            "environmentpath" => Value::str("/etc/puppet/code/environments"),
            "hiera_config" => Value::str("/etc/puppet/hiera.yaml"),
            "ssldir" => Value::str("/var/lib/puppet/ssl"),
            "rundir" => Value::str("/run/puppet"),
            "logdir" => Value::str("/var/log/puppet"),
            _ => return None,
        })
    }

    fn unknown_var(&mut self, name: &str, span: Span) -> R<Value> {
        if self.opts.strict_variables {
            return Err(Flow::Err(
                self.issue(format!("Unknown variable: '{name}'."), span),
            ));
        }
        self.warn_at(&format!("Unknown variable: '{name}'."), span);
        Ok(Value::Undef)
    }

    /// Where the operator `op` between two operands is (Puppet places an assignment's errors
    /// there); the span of both operands if the text between them does not hold it.
    pub(super) fn operator_span(&self, left: Span, right: Span, op: &str) -> Span {
        let between = self
            .sources
            .get(left.file)
            .and_then(|f| f.text.get(left.end as usize..right.start as usize));
        match between.and_then(|t| t.find(op)) {
            Some(i) => {
                let start = left.end as usize + i;
                Span::new(left.file, start, start + op.len())
            }
            None => left.to(right),
        }
    }

    /// Assigns `v` to `left`; `at` is the assignment's operator, where a reassignment is
    /// reported. The value is the assigned value, or undef unless `want` (which spares a
    /// copy).
    fn assign(
        &mut self,
        op: AssignOp,
        left: &Expr,
        v: Value,
        scope: ScopeId,
        at: Span,
        want: bool,
    ) -> R<Value> {
        match &left.kind {
            ExprKind::Variable(name) => {
                let v = match op {
                    AssignOp::Assign => v,
                    AssignOp::Append | AssignOp::Delete => {
                        let cur = self.lookup_var(name, scope, left.span)?;
                        let bop = if op == AssignOp::Append {
                            BinaryOp::Add
                        } else {
                            BinaryOp::Sub
                        };
                        self.arith(bop, cur, v, (left.span, left.span))?
                    }
                };
                if name.contains("::") || name.chars().all(|c| c.is_ascii_digit()) {
                    return Err(Flow::Err(self.issue(
                        format!("Cannot assign to a variable in another namespace '${name}'"),
                        left.span,
                    )));
                }
                // $server_facts anywhere, and $facts/$trusted where they are bound (top scope),
                // are Puppet's reserved-assignment issue; elsewhere its scope refuses them.
                let reserved = is_reserved_variable(name);
                if reserved && op == AssignOp::Assign {
                    let message = if name == "server_facts"
                        || self.scopes[scope].vars.contains_key(name)
                    {
                        format!("Attempt to assign to a reserved variable name: '${name}'")
                    } else {
                        format!("Error while evaluating a '=' expression, Attempt to assign to a reserved variable name: '{name}'")
                    };
                    return Err(Flow::Err(self.issue(message, at)));
                }
                if self.scopes[scope].vars.contains_key(name) && op == AssignOp::Assign {
                    let message = if name == "name" || name == "title" {
                        format!("Cannot reassign built in (or already assigned) variable '${name}'")
                    } else {
                        format!("Cannot reassign variable '${name}'")
                    };
                    return Err(Flow::Err(self.issue(message, at)));
                }
                if !want {
                    // Kept as long as the scope: without the spare room a built string may
                    // have (as a copy would be).
                    let mut v = v;
                    super::resources::catalog_ops::compact(&mut v);
                    self.scopes[scope].vars.insert(name.clone(), v);
                    return Ok(Value::Undef);
                }
                self.scopes[scope].vars.insert(name.clone(), v.clone());
                Ok(v)
            }
            ExprKind::Array(items) => {
                // A single value is a list of one (Puppet's assign_LiteralList).
                let v = match v {
                    Value::Array(_) | Value::Hash(_) => v,
                    Value::Type(t) if matches!(*t, PType::Class(Some(_))) => Value::Type(t),
                    single => Value::Array(vec![single]),
                };
                match &v {
                    Value::Array(vals) => {
                        if vals.len() != items.len() {
                            return Err(Flow::Err(self.issue(
                                format!(
                                    "Mismatched number of assignable entries and values, expected {}, got {}",
                                    items.len(),
                                    vals.len()
                                ),
                                left.span,
                            )));
                        }
                        for (it, val) in items.iter().zip(vals) {
                            self.assign(AssignOp::Assign, it, val.clone(), scope, at, false)?;
                        }
                    }
                    // Each entry by its name, a nested list by the list of its names.
                    Value::Hash(h) => {
                        for it in items {
                            let Some(key) = lvalue_key(it) else {
                                return Err(Flow::Err(self.issue(
                                    "Illegal attempt to assign to this expression",
                                    it.span,
                                )));
                            };
                            let Some(val) = h.get(&key).cloned() else {
                                return Err(Flow::Err(self.issue(
                                    format!(
                                        "No value for required key '{}' in assignment to variables from hash",
                                        ruby_inspect_names(&key)
                                    ),
                                    left.span,
                                )));
                            };
                            self.assign(AssignOp::Assign, it, val, scope, at, false)?;
                        }
                    }
                    // `[$a, $b] = Class[c]`: the class's variables of those names.
                    Value::Type(t) if matches!(**t, PType::Class(Some(_))) => {
                        let PType::Class(Some(class)) = &**t else {
                            unreachable!("matched as a class")
                        };
                        let class = class.trim_start_matches("::").to_lowercase();
                        let Some(&sid) = self.class_scopes.get(&class) else {
                            return Err(Flow::Err(
                                self.issue(format!("Resource not found: Class['{class}']"), at),
                            ));
                        };
                        for it in items {
                            let ExprKind::Variable(n) = &it.kind else {
                                return Err(Flow::Err(self.issue(
                                    "Illegal attempt to assign to this expression",
                                    it.span,
                                )));
                            };
                            let Some(val) = self.scopes[sid].vars.get(n.as_str()).cloned() else {
                                return Err(Flow::Err(self.issue(
                                    format!("No value for required variable '${class}::{n}' in assignment to variables from class reference"),
                                    it.span,
                                )));
                            };
                            self.assign(AssignOp::Assign, it, val, scope, at, false)?;
                        }
                    }
                    _ => {
                        return Err(Flow::Err(self.issue(
                            "Assignment of non Array/Hash value to an Array of variables",
                            left.span,
                        )))
                    }
                }
                Ok(v)
            }
            _ => Err(Flow::Err(self.issue(
                "Illegal attempt to assign to this expression",
                left.span,
            ))),
        }
    }

    // ---- access ----------------------------------------------------------------------------

    // ---- operators ---------------------------------------------------------------------------

    /// The value of an if, unless, case or selector expression.
    fn eval_conditional(&mut self, e: &Expr, scope: ScopeId) -> R<Value> {
        Ok(match &e.kind {
            ExprKind::Selector { left, entries } => {
                let v = self.eval(left, scope)?;
                let mut default = None;
                for en in entries {
                    let matching = unwind_parens(&en.matching);
                    if matches!(matching.kind, ExprKind::Default) {
                        default = Some(&en.value);
                        continue;
                    }
                    // `*[a, b] => x`: any of the unfolded values, as in a case option.
                    let candidates = match &matching.kind {
                        ExprKind::Unary {
                            op: UnaryOp::Unfold,
                            expr,
                        } => self.eval(expr, scope)?.into_unfolded(),
                        _ => vec![self.eval(matching, scope)?],
                    };
                    for m in candidates {
                        if self.case_match(&v, &m, scope, en.matching.span)? {
                            return self.eval(&en.value, scope);
                        }
                    }
                }
                match default {
                    Some(d) => self.eval(d, scope)?,
                    None => {
                        return Err(Flow::Err(self.issue(
                            format!(
                                "No matching entry for selector parameter with value '{}'",
                                v.to_display()
                            ),
                            e.span,
                        )))
                    }
                }
            }
            ExprKind::If {
                test,
                then_expr,
                else_expr,
            } => {
                if self.eval(test, scope)?.truthy() {
                    self.eval(then_expr, scope)?
                } else {
                    self.eval(else_expr, scope)?
                }
            }
            ExprKind::Unless {
                test,
                then_expr,
                else_expr,
            } => {
                if !self.eval(test, scope)?.truthy() {
                    self.eval(then_expr, scope)?
                } else {
                    self.eval(else_expr, scope)?
                }
            }
            ExprKind::Case { test, options } => {
                let v = self.eval(test, scope)?;
                let mut default = None;
                for opt in options {
                    for m in &opt.values {
                        let m = unwind_parens(m);
                        if matches!(m.kind, ExprKind::Default) {
                            default = Some(&opt.then_expr);
                            continue;
                        }
                        let candidates = if let ExprKind::Unary {
                            op: UnaryOp::Unfold,
                            expr,
                        } = &m.kind
                        {
                            self.eval(expr, scope)?.into_unfolded()
                        } else {
                            vec![self.eval(m, scope)?]
                        };
                        for c in candidates {
                            if self.case_match(&v, &c, scope, m.span)? {
                                return self.eval(&opt.then_expr, scope);
                            }
                        }
                    }
                }
                match default {
                    Some(d) => self.eval(d, scope)?,
                    None => Value::Undef,
                }
            }
            _ => unreachable!("eval_conditional is called for conditionals only"),
        })
    }

    // ---- relationships -----------------------------------------------------------------------

    // ---- resources -------------------------------------------------------------------------
}

fn merge_attrs(
    defaults: &[super::resources::catalog_ops::AttrValue],
    attrs: Vec<super::resources::catalog_ops::AttrValue>,
) -> Vec<super::resources::catalog_ops::AttrValue> {
    if defaults.is_empty() {
        return attrs;
    }
    let mut out: Vec<_> = defaults
        .iter()
        .filter(|d| !attrs.iter().any(|a| a.name == d.name))
        .cloned()
        .collect();
    out.extend(attrs);
    out
}

/// How many characters an integer prints as.
fn decimal_len(i: i64) -> usize {
    let mut n = i.unsigned_abs();
    let mut len = usize::from(i < 0) + 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// `x << n` computed exactly: the value when it is an Integer, else its magnitude in Ruby's
/// `%#x` form (the hex digits of `|x| << (n % 4)` followed by `n / 4` zeros).
fn shift_left(x: i64, n: u64) -> Result<i64, String> {
    if x == 0 {
        return Ok(0);
    }
    if n < 64 {
        let wide = i128::from(x) << n;
        if let Ok(v) = i64::try_from(wide) {
            return Ok(v);
        }
    }
    let head = u128::from(x.unsigned_abs()) << (n % 4);
    let zeros = usize::try_from(n / 4).unwrap_or(usize::MAX).min(1 << 20);
    Err(format!("{head:#x}{}", "0".repeat(zeros)))
}

fn floor_div(x: i64, y: i64) -> i64 {
    let q = x / y;
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

/// The items of a value, nested arrays flattened (moved, not copied).
fn flatten_into(v: Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(items) => items.into_iter().for_each(|i| flatten_into(i, out)),
        other => out.push(other),
    }
}

/// The range `[start, count]` selects from a sequence of `n`, as Puppet's access operator
/// computes it: a negative start counts from the end, a negative count is a length up to that
/// many from the end, and a start before the beginning shortens the count.
fn slice_bounds(start: i64, count: i64, n: i64) -> (usize, usize) {
    let mut k1 = if start < 0 {
        n.saturating_add(start)
    } else {
        start
    };
    let mut k2 = if count < 0 {
        n.saturating_sub(k1).saturating_add(count).saturating_add(1)
    } else {
        count
    };
    if k1 < 0 {
        k2 = k2.saturating_add(k1);
        k1 = 0;
    }
    if k1 >= n || k2 <= 0 {
        return (0, 0);
    }
    (k1 as usize, k1.saturating_add(k2).min(n) as usize)
}

/// The variables Puppet binds itself, which no assignment or parameter may name.
pub(super) fn is_reserved_variable(name: &str) -> bool {
    matches!(name, "facts" | "trusted" | "server_facts")
}

/// The first attribute a body of operations sets twice.
fn repeated_attribute(ops: &[AttributeOp]) -> Option<&str> {
    let mut seen: Vec<&str> = vec![];
    for op in ops {
        if let AttributeOp::Set { name, .. } = op {
            if seen.contains(&name.as_str()) {
                return Some(name);
            }
            seen.push(name);
        }
    }
    None
}

/// How a comparison error names an operand (Puppet's label: `Undef Value` for undef).
fn compared_label(v: &Value) -> String {
    match v {
        Value::Undef => "Undef Value".into(),
        other => simple_type_name(other),
    }
}

/// The type name used in operator messages: collections by their base name.
fn simple_type_name(v: &Value) -> String {
    match v {
        Value::Array(_) => "Array".into(),
        Value::Hash(_) => "Hash".into(),
        other => other.type_name(),
    }
}

/// The span of what a relationship operand stands for: in `a -> b -> c`, the left operand
/// of the second arrow is `b`.
fn operand_span(e: &Expr) -> crate::span::Span {
    match &e.kind {
        ExprKind::Relationship { right, .. } => operand_span(right),
        _ => e.span,
    }
}

/// The value at `path` in `v`, through hashes, each key found.
fn follow<'v>(mut v: &'v Value, path: &[Value]) -> Option<&'v Value> {
    for k in path {
        v = match v {
            Value::Hash(h) => h.get(k)?,
            _ => return None,
        };
    }
    Some(v)
}

/// `Name['title']`: the type name as written, its span, and the title.
fn reference_literal(e: &Expr) -> Option<(&str, Span, &str)> {
    let ExprKind::Access { left, keys } = &e.kind else {
        return None;
    };
    match (&left.kind, keys.as_slice()) {
        (
            ExprKind::QualifiedReference(name),
            [Expr {
                kind: ExprKind::Str(title),
                ..
            }],
        ) => Some((name, left.span, title)),
        _ => None,
    }
}

/// The expression inside any parentheses around `e` (Puppet's `unwind_parentheses`).
pub(super) fn unwind_parens(mut e: &Expr) -> &Expr {
    while let ExprKind::Paren(inner) = &e.kind {
        e = inner;
    }
    e
}

/// The key an assignable names in a hash it is assigned from: a variable's name, or the
/// list of the names of a nested list (Puppet's `lvalue`).
fn lvalue_key(e: &Expr) -> Option<Value> {
    match &e.kind {
        ExprKind::Variable(n) => Some(Value::str(n.clone())),
        ExprKind::Array(items) => Some(Value::Array(
            items.iter().map(lvalue_key).collect::<Option<Vec<_>>>()?,
        )),
        _ => None,
    }
}

/// A name or list of names as Ruby's `to_s` writes it in a message (`["b", "c"]`).
fn ruby_inspect_names(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter()
                .map(|x| match x {
                    Value::Str(s) => format!("{s:?}"),
                    other => ruby_inspect_names(other),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_display(),
    }
}

/// Whether `needle` occurs in `hay` (an empty needle always does).
fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}
