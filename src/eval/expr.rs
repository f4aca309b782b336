//! Expression evaluation: literals, variables, operators, control flow and the catalog
//! expressions (resources, defaults, overrides, collectors, relationships).

use super::catalog_ops::{flatten_values, Override, TypeKind};
use super::compiler::{Compiler, EvalError, Flow, Operand, Relationship, R};
use super::scope::{ScopeId, ScopeKind};
use super::types::{self, PType};
use super::value::{puppet_eq, Regex, Value};
use crate::ast::*;
use crate::catalog::capitalize_type;
use crate::catalog::TrimColons;
use crate::span::Span;
use indexmap::IndexMap;
use std::cmp::Ordering;

mod numbers;
pub(super) use numbers::{parse_number, to_n};

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
        if let Some(msg) = super::value::take_regex_failure() {
            r = Err(Flow::Err(self.runtime(msg, e.span)));
        }
        if let Ok(Value::Str(s)) = &r {
            if let Err(too_long) = self.check_string_len(s.len(), e.span) {
                r = Err(too_long);
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
    fn check_string_len(&self, len: usize, span: Span) -> R<()> {
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
                Value::Array(out)
            }
            ExprKind::Hash(entries) => {
                let mut h = IndexMap::new();
                for en in entries {
                    let k = self.eval(&en.key, scope)?;
                    let v = self.eval(&en.value, scope)?;
                    h.insert(k, v);
                }
                Value::Hash(h.into())
            }
            ExprKind::Variable(name) => self.lookup_var(name, scope, e.span)?,
            ExprKind::Access { left, keys } => {
                if let Some((name, name_span, title)) = reference_literal(e) {
                    let key_span = keys[0].span;
                    return self.access_reference(name, name_span, title, key_span, e.span);
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
                            Value::Timespan(super::timespan::Timespan(t.0.saturating_neg()))
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
                    let Some((t, title)) = super::catalog_ops::ref_parts(&r) else {
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
                self.render_push(s);
                Value::Undef
            }
            ExprKind::Render(inner) => {
                let v = self.eval(inner, scope)?;
                match v {
                    Value::Sensitive(x) => {
                        if let Some(flag) = self.render_sensitive.last_mut() {
                            *flag = true;
                        }
                        self.render_push(&x.to_display())
                    }
                    v => self.render_push(&v.to_display()),
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
        let key = super::catalog_ops::capitalized(name);
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
                    super::catalog_ops::compact(&mut v);
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

    /// Index keys of `Array[]` and `String[]` as Puppet's AccessOperator coerces them: an
    /// array key goes through `coerce_numeric` (a numeric string with a warning, anything else
    /// is not convertible), a string key through `Utils.to_n` (numeric strings silently).
    /// Errors point at the offending key.
    fn coerce_index_keys(
        &mut self,
        l: &Value,
        ks: &mut Vec<Value>,
        exprs: &[Expr],
        span: Span,
    ) -> R<()> {
        let is_array = matches!(l, Value::Array(_));
        if ks.iter().any(|k| matches!(k, Value::Array(_))) {
            // `keys.flatten!`: a key that is an array gives its elements as keys.
            let mut flat = vec![];
            for k in ks.drain(..) {
                flatten_into(k, &mut flat);
            }
            *ks = flat;
        }
        let spans_match = ks.len() == exprs.len();
        for (i, k) in ks.iter_mut().enumerate() {
            let at = if spans_match { exprs[i].span } else { span };
            match &*k {
                Value::Int(_) | Value::Default => {}
                Value::Str(s) if is_array => match to_n(s) {
                    Some(n) => {
                        self.warn_at(
                            &format!(
                                "The string '{s}' was automatically coerced to the numerical value {}",
                                n.to_display()
                            ),
                            at,
                        );
                        *k = n;
                    }
                    None => {
                        return Err(Flow::Err(self.issue(
                            format!("The value '{s}' cannot be converted to Numeric."),
                            at,
                        )))
                    }
                },
                Value::Bool(_) if is_array => {
                    return Err(Flow::Err(self.issue(
                        format!(
                            "The value '{}' cannot be converted to Numeric.",
                            k.to_display()
                        ),
                        at,
                    )))
                }
                Value::Undef if is_array => {
                    return Err(Flow::Err(
                        self.issue("The value '' cannot be converted to Numeric.", at),
                    ))
                }
                Value::Float(_) if is_array => {
                    return Err(Flow::Err(self.issue(
                        "An Array[] cannot use Float where Integer is expected",
                        at,
                    )))
                }
                Value::Str(s) => match to_n(s) {
                    Some(Value::Int(n)) => *k = Value::Int(n),
                    _ => return Err(Flow::Err(self.bad_substring_key("String", at))),
                },
                Value::Undef if !is_array => {
                    return Err(Flow::Err(self.bad_substring_key("Undef", at)))
                }
                Value::Bool(_) if !is_array => {
                    return Err(Flow::Err(self.bad_substring_key("Boolean", at)))
                }
                Value::Float(_) if !is_array => {
                    return Err(Flow::Err(self.bad_substring_key("Float", at)))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn bad_substring_key(&self, type_name: &str, at: Span) -> EvalError {
        let article = if type_name.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        };
        self.issue(
            format!(
                "A substring operation does not accept {article} {type_name} as a character index. Expected an Integer"
            ),
            at,
        )
    }

    /// `Type[title][param, ...]`: the values of parameters of a declared resource, set
    /// explicitly or by a resource default in its scope (Puppet's access_PResourceType with a
    /// title). Several keys, or an array of keys, give an array.
    fn resource_param_access(
        &mut self,
        type_name: &str,
        title: &str,
        keys: &[Value],
        span: Span,
    ) -> R<Value> {
        let as_array = keys.len() > 1 || matches!(keys.first(), Some(Value::Array(_)));
        let names: Vec<Value> = keys
            .iter()
            .flat_map(flatten_values)
            .filter(|k| !matches!(k, Value::Undef))
            .collect();
        let shown = capitalize_type(type_name);
        let Some(idx) = self.find_resource(type_name, title) else {
            let msg = format!("Resource not found: {shown}['{title}']");
            return Err(Flow::Err(self.issue(msg, span)));
        };
        let mut out = Vec::with_capacity(names.len());
        for k in &names {
            let name = match k {
                Value::Str(s) if self.is_parameter_of(idx, s) => s,
                _ => {
                    let msg = format!(
                        "The resource {shown}['{title}'] does not have a parameter called '{}'",
                        k.to_display()
                    );
                    return Err(Flow::Err(self.issue(msg, span)));
                }
            };
            let r = &self.resources[idx];
            let value = match r.params.get(name.as_str()) {
                Some(v) => v.clone(),
                None => {
                    let (scope, tn) = (r.scope, r.type_name.clone());
                    self.lookup_defaults(scope, &tn)
                        .get(name.as_str())
                        .cloned()
                        .unwrap_or(Value::Undef)
                }
            };
            out.push(value);
        }
        Ok(if as_array {
            Value::Array(out)
        } else {
            out.pop().unwrap_or(Value::Undef)
        })
    }

    /// `Name['title']`, the common way to write a reference, evaluated as the generic access
    /// is (the type name resolved, then accessed with the title) without its intermediate
    /// values when the name is a resource type.
    fn access_reference(
        &mut self,
        name: &str,
        name_span: Span,
        title: &str,
        title_span: Span,
        span: Span,
    ) -> R<Value> {
        match self.resolve_type_name(name, name_span)? {
            PType::Resource(Some(t), None) => Ok(Value::Type(Box::new(PType::Resource(
                Some(t),
                Some(title.to_string()),
            )))),
            other => self.access(
                Value::Type(Box::new(other)),
                &[Value::Str(title.to_string())],
                &[title_span],
                span,
            ),
        }
    }

    /// Puppet's refusal of `[]` with more than two keys on an Array or a String.
    fn slice_arity(&self, what: &str, n: usize, span: Span) -> Flow {
        let msg = format!("{what} supports [] with one or two arguments. Got {n}");
        Flow::Err(self.issue(msg, span))
    }

    /// `l[keys]`; `key_spans` are the keys' spans when known (one each), for errors that
    /// blame a key.
    pub(super) fn access(
        &mut self,
        l: Value,
        keys: &[Value],
        key_spans: &[Span],
        span: Span,
    ) -> R<Value> {
        match l {
            Value::Array(a) => {
                let n = a.len() as i64;
                match keys {
                    [Value::Int(i)] => {
                        let i = if *i < 0 { n + i } else { *i };
                        Ok(a.get(i.max(0) as usize)
                            .filter(|_| i >= 0)
                            .cloned()
                            .unwrap_or(Value::Undef))
                    }
                    [Value::Int(start), Value::Int(count)] => {
                        let (s, end) = slice_bounds(*start, *count, n);
                        Ok(Value::Array(a[s..end].to_vec()))
                    }
                    _ if keys.len() > 2 => Err(self.slice_arity("Array", keys.len(), span)),
                    _ => Err(Flow::Err(
                        self.issue("Array access expects Integer index", span),
                    )),
                }
            }
            Value::Hash(h) => {
                if keys.len() == 1 {
                    Ok(h.get(&keys[0]).cloned().unwrap_or(Value::Undef))
                } else {
                    Ok(Value::Array(
                        keys.iter().filter_map(|k| h.get(k).cloned()).collect(),
                    ))
                }
            }
            Value::Str(s) => {
                let chars: Vec<char> = s.chars().collect();
                let n = chars.len() as i64;
                match keys {
                    // Outside the string: '' (Puppet's access_String).
                    [Value::Int(i)] => {
                        let i = if *i < 0 { n + i } else { *i };
                        Ok(Value::Str(if i >= 0 && i < n {
                            chars[i as usize].to_string()
                        } else {
                            String::new()
                        }))
                    }
                    [Value::Int(start), Value::Int(count)] => {
                        let (st, end) = slice_bounds(*start, *count, n);
                        Ok(Value::Str(chars[st..end].iter().collect()))
                    }
                    _ if keys.len() > 2 => Err(self.slice_arity("String", keys.len(), span)),
                    _ => Err(Flow::Err(
                        self.issue("String access expects Integer index", span),
                    )),
                }
            }
            // Its bytes as a string's characters (Puppet's access_Binary).
            Value::Binary(b) => {
                let n = b.len() as i64;
                match keys {
                    [Value::Int(i)] => {
                        let i = if *i < 0 { n + i } else { *i };
                        let at = usize::try_from(i).ok().filter(|i| *i < b.len());
                        Ok(Value::Binary(at.map_or(Vec::new(), |i| vec![b[i]]).into()))
                    }
                    [Value::Int(start), Value::Int(count)] => {
                        let (st, end) = slice_bounds(*start, *count, n);
                        Ok(Value::Binary(b[st..end].into()))
                    }
                    _ if keys.len() > 2 => Err(self.slice_arity("String", keys.len(), span)),
                    _ => Err(Flow::Err(
                        self.issue("String access expects Integer index", span),
                    )),
                }
            }
            Value::Type(t) => {
                // A reference to one resource: `Notify['a']['message']` reads its parameters.
                match &*t {
                    PType::Resource(Some(tn), Some(title)) => {
                        return self.resource_param_access(tn, title, keys, span);
                    }
                    PType::Class(Some(name)) if !keys.is_empty() => {
                        return self.resource_param_access("Class", name, keys, span);
                    }
                    _ => {}
                }
                let checked = t.check_args(keys).map_err(|(m, key)| {
                    let at = key.and_then(|k| key_spans.get(k)).copied().unwrap_or(span);
                    Flow::Err(self.issue(m, at))
                })?;
                let keys = checked.as_slice();
                // Resource references with several titles produce several references.
                match &*t {
                    // `Resource[Notify, 'b', 'c']`: the type, then each title.
                    PType::Resource(None, _)
                        if keys.len() > 2
                            || (keys.len() == 2 && matches!(keys[1], Value::Array(_))) =>
                    {
                        let base = t
                            .parameterize(&keys[..1])
                            .map_err(|m| Flow::Err(self.issue(m, span)))?;
                        let mut out = vec![];
                        for k in &keys[1..] {
                            for k in flatten_values(k) {
                                out.push(Value::Type(Box::new(
                                    base.parameterize(&[k])
                                        .map_err(|m| Flow::Err(self.issue(m, span)))?,
                                )));
                            }
                        }
                        return Ok(Value::Array(out));
                    }
                    // `Notify[undef]` is undef.
                    PType::Resource(Some(_), None) if matches!(keys, [Value::Undef]) => {
                        return Ok(Value::Undef);
                    }
                    PType::Resource(Some(_), None) if keys.len() > 1 => {
                        let mut out = vec![];
                        for k in keys {
                            for k in flatten_values(k) {
                                out.push(Value::Type(Box::new(
                                    t.parameterize(&[k])
                                        .map_err(|m| Flow::Err(self.issue(m, span)))?,
                                )));
                            }
                        }
                        return Ok(Value::Array(out));
                    }
                    PType::Resource(Some(_), None)
                        if matches!(keys.first(), Some(Value::Array(_))) =>
                    {
                        let mut out = vec![];
                        for k in flatten_values(&keys[0]) {
                            out.push(Value::Type(Box::new(
                                t.parameterize(&[k])
                                    .map_err(|m| Flow::Err(self.issue(m, span)))?,
                            )));
                        }
                        return Ok(Value::Array(out));
                    }
                    // Several class names, or names in arrays (flattened, undef dropped):
                    // an array of references.
                    PType::Class(None)
                        if keys.len() > 1 || matches!(keys.first(), Some(Value::Array(_))) =>
                    {
                        let mut out = vec![];
                        for k in keys {
                            for k in flatten_values(k) {
                                out.push(Value::Type(Box::new(
                                    t.parameterize(&[k])
                                        .map_err(|m| Flow::Err(self.issue(m, span)))?,
                                )));
                            }
                        }
                        return Ok(Value::Array(out));
                    }
                    _ => {}
                }
                // Puppet flattens the keys of most types (`Optional[[Integer[1]]]` is
                // `Optional[Integer[1]]`); not those of Callable, Struct, Init and Object.
                let flat: Vec<Value>;
                let keys = if matches!(
                    &*t,
                    PType::Callable(_) | PType::Struct(_) | PType::Init | PType::Object
                ) || !keys.iter().any(|k| matches!(k, Value::Array(_)))
                {
                    keys
                } else {
                    fn flatten(v: &Value, out: &mut Vec<Value>) {
                        match v {
                            Value::Array(a) => a.iter().for_each(|v| flatten(v, out)),
                            other => out.push(other.clone()),
                        }
                    }
                    let mut out = Vec::new();
                    keys.iter().for_each(|k| flatten(k, &mut out));
                    flat = out;
                    &flat[..]
                };
                let p = t.parameterize(keys).map_err(|m| {
                    // A range the type's constructor refuses is an evaluation error of the
                    // access; the rest are Puppet's validation issues.
                    if m.starts_with("'from' must be") {
                        let m = format!("Error while evaluating a '[]' expression, {m}");
                        Flow::Err(self.issue(m, span))
                    } else {
                        Flow::Err(self.issue(m, span))
                    }
                })?;
                Ok(Value::Type(Box::new(p)))
            }
            Value::Undef => Err(Flow::Err(
                self.issue("Operator '[]' is not applicable to an Undef Value.", span),
            )),
            // Puppet names an iterator by its Ruby kind of value.
            Value::Iterator(_) => Err(Flow::Err(
                self.issue("Operator '[]' is not applicable to an Object.", span),
            )),
            other => Err(Flow::Err(self.issue(
                format!(
                    "Operator '[]' is not applicable to {}.",
                    a_an(&other.type_name())
                ),
                span,
            ))),
        }
    }

    // ---- operators ---------------------------------------------------------------------------

    fn eval_binary(
        &mut self,
        op: BinaryOp,
        left: &Expr,
        right: &Expr,
        scope: ScopeId,
        span: Span,
    ) -> R<Value> {
        match op {
            BinaryOp::And => {
                let l = self.eval(left, scope)?;
                if !l.truthy() {
                    return Ok(Value::Bool(false));
                }
                return Ok(Value::Bool(self.eval(right, scope)?.truthy()));
            }
            BinaryOp::Or => {
                let l = self.eval(left, scope)?;
                if l.truthy() {
                    return Ok(Value::Bool(true));
                }
                return Ok(Value::Bool(self.eval(right, scope)?.truthy()));
            }
            _ => {}
        }
        let l = self.eval(left, scope)?;
        let r = self.eval(right, scope)?;
        match op {
            BinaryOp::Eq => Ok(Value::Bool(puppet_eq(&l, &r))),
            BinaryOp::Ne => Ok(Value::Bool(!puppet_eq(&l, &r))),
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                // A type compares only with a type (assignability); with anything else it is
                // neither smaller nor larger.
                if matches!(l, Value::Type(_)) && !matches!(r, Value::Type(_)) {
                    return Ok(Value::Bool(false));
                }
                if let (Value::Type(a), Value::Type(b)) = (&l, &r) {
                    // Types compare by assignability (evaluator_impl's
                    // eval_ComparisonExpression): unrelated types are neither < nor >.
                    return Ok(Value::Bool(match op {
                        BinaryOp::Lt => b.is_assignable(a) && !a.normalized_eq(b),
                        BinaryOp::Le => b.is_assignable(a),
                        BinaryOp::Gt => a.is_assignable(b) && !a.normalized_eq(b),
                        _ => a.is_assignable(b),
                    }));
                }
                let ord = self.compare(&l, &r, op, (left.span, right.span))?;
                Ok(Value::Bool(match op {
                    BinaryOp::Lt => ord == Ordering::Less,
                    BinaryOp::Le => ord != Ordering::Greater,
                    BinaryOp::Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                }))
            }
            BinaryOp::Match | BinaryOp::NotMatch => {
                let m = self.match_op(&l, &r, scope, span, right.span)?;
                Ok(Value::Bool(if op == BinaryOp::Match { m } else { !m }))
            }
            BinaryOp::In => Ok(Value::Bool(self.in_op(&l, &r, scope, span)?)),
            _ => self.arith(op, l, r, (left.span, right.span)),
        }
    }

    /// Compares for `<` and friends; a failure is reported at the operator between the
    /// `operands` (where Puppet locates a binary expression), found only then.
    pub(super) fn compare(
        &self,
        l: &Value,
        r: &Value,
        op: BinaryOp,
        operands: (Span, Span),
    ) -> R<Ordering> {
        let fail = |why: &str| {
            let span = self.operator_span(operands.0, operands.1, op.as_str());
            Flow::Err(self.issue(
                format!(
                    "Comparison of: {} {} {}, is not possible. Caused by '{}'.",
                    compared_label(l),
                    op.as_str(),
                    compared_label(r),
                    why
                ),
                span,
            ))
        };
        if let Some(o) = super::timespan::compare(l, r) {
            return Ok(o);
        }
        match (l, r) {
            (Value::Int(a), Value::Int(b)) => Ok(a.cmp(b)),
            (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                let a = num_f64(l);
                let b = num_f64(r);
                Ok(a.partial_cmp(&b).unwrap_or(Ordering::Equal))
            }
            (Value::Str(a), Value::Str(b)) => Ok(super::value::str_cmp_ignore_case(a, b)),
            (Value::Str(_), _) => Err(fail("A String is not comparable to a non String")),
            (Value::Int(_) | Value::Float(_), _) => {
                Err(fail("A Numeric is not comparable to non Numeric"))
            }
            _ => Err(fail(
                "Only Strings, Numbers, Timespans, Timestamps, and Versions are comparable",
            )),
        }
    }

    /// `l =~ r`; `right_at` is where the right operand is written (Puppet reports a right
    /// operand that is no pattern there).
    fn match_op(
        &mut self,
        l: &Value,
        r: &Value,
        scope: ScopeId,
        span: Span,
        right_at: Span,
    ) -> R<bool> {
        match r {
            Value::Type(t) => Ok(t.is_instance(l)),
            Value::Regex(re) => {
                let Value::Str(s) = l else {
                    return Err(self.match_not_string(l, span));
                };
                Ok(self.regex_match(re, s, scope))
            }
            Value::Str(src) => {
                let re = Regex::new(src).map_err(|m| Flow::Err(self.issue(m, span)))?;
                let Value::Str(s) = l else {
                    return Err(self.match_not_string(l, span));
                };
                Ok(self.regex_match(&re, s, scope))
            }
            // Puppet hands anything else to Ruby's Regexp.new, whose TypeError is the cause.
            other => {
                let ruby = match other {
                    Value::Undef => "nil",
                    Value::Bool(true) => "true",
                    Value::Bool(false) => "false",
                    Value::Default => "Symbol",
                    other => super::stdlib::ruby_class(other),
                };
                Err(Flow::Err(self.issue(
                    format!(
                        "Can not convert right match operand to a regular expression. Caused by 'no implicit conversion of {ruby} into String'."
                    ),
                    right_at,
                )))
            }
        }
    }

    /// Puppet's MATCH_NOT_STRING: a pattern matches Strings only (`undef =~ /x/` fails).
    fn match_not_string(&self, l: &Value, at: Span) -> Flow {
        let label = match l {
            Value::Undef => "an Undef Value".to_string(),
            Value::Default => "an Object".to_string(),
            Value::Type(t) => match &**t {
                PType::Resource(Some(_), Some(_)) => a_an(&format!("{t} Resource-Reference")),
                _ => a_an(&format!("{t}-Type")),
            },
            other => a_an(&simple_type_name(other)),
        };
        Flow::Err(self.issue(
            format!("Left match operand must result in a String value. Got {label}."),
            at,
        ))
    }

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

    /// Matches and, on success, sets `$0`..`$n` in the scope.
    pub(super) fn regex_match(&mut self, re: &Regex, s: &str, scope: ScopeId) -> bool {
        match re.captures(s) {
            Some(groups) => {
                self.scopes[scope].matches = Some(groups);
                true
            }
            None => false,
        }
    }

    fn in_op(&mut self, l: &Value, r: &Value, scope: ScopeId, _span: Span) -> R<bool> {
        Ok(match r {
            Value::Str(hay) => match l {
                Value::Str(needle) => hay.to_lowercase().contains(&needle.to_lowercase()),
                Value::Regex(re) => self.regex_match(re, &hay.clone(), scope),
                _ => false,
            },
            // Puppet's include_Binary: a byte sequence, a string's bytes or a byte value.
            Value::Binary(hay) => match l {
                Value::Binary(needle) => contains_bytes(hay, needle),
                Value::Str(needle) => contains_bytes(hay, needle.as_bytes()),
                Value::Int(i) => hay.iter().any(|b| i64::from(*b) == *i),
                Value::Float(f) => hay.iter().any(|b| f64::from(*b) == *f),
                _ => false,
            },
            // A hash: its keys (Puppet's include_Hash).
            Value::Array(items) => self.in_list(l, items, scope),
            Value::Hash(h) => {
                let keys: Vec<Value> = h.keys().cloned().collect();
                self.in_list(l, &keys, scope)
            }
            _ => false,
        })
    }

    /// Puppet's `include_Array`: a regex matches a string element; a string matches an
    /// element that is a regex (setting the captures), a type it is an instance of, or an
    /// equal string; a type contains its instances (a type value is an instance of a
    /// `Type[...]` only); anything else is compared for equality.
    fn in_list(&mut self, l: &Value, items: &[Value], scope: ScopeId) -> bool {
        match l {
            Value::Regex(re) => items
                .iter()
                .filter_map(|v| v.as_str())
                .any(|s| self.regex_match(re, s, scope)),
            Value::Str(needle) => items.iter().any(|v| match v {
                Value::Regex(re) => self.regex_match(re, needle, scope),
                Value::Type(t) => t.is_instance(l),
                v => puppet_eq(l, v),
            }),
            Value::Type(t) => items.iter().any(|v| match v {
                Value::Type(_) => matches!(**t, PType::Type(_) | PType::Any) && t.is_instance(v),
                v => t.is_instance(v),
            }),
            _ => items.iter().any(|v| puppet_eq(l, v)),
        }
    }

    /// Arithmetic and the collection operators. `operands` are where the left and right
    /// operands are written: an operand that is not a number is reported there, as Puppet's
    /// `coerce_numeric` does; other errors at the operator between them (found only then).
    pub(super) fn arith(
        &mut self,
        op: BinaryOp,
        l: Value,
        r: Value,
        operands: (Span, Span),
    ) -> R<Value> {
        // An array grows in place (the operand is ours): `reduce` building an array by
        // `$memo + [$x]` copies it once per step, not twice.
        let l = match (op, l) {
            (BinaryOp::Add, Value::Array(mut out)) => {
                match r {
                    Value::Array(b) => out.extend(b),
                    Value::Hash(h) => out.extend(
                        h.iter()
                            .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()])),
                    ),
                    other => out.push(other),
                }
                return Ok(Value::Array(out));
            }
            (_, l) => l,
        };
        match (op, &l, &r) {
            (BinaryOp::Add, Value::Hash(a), Value::Hash(b)) => {
                let mut out = a.clone();
                for (k, v) in b {
                    out.insert(k.clone(), v.clone());
                }
                return Ok(Value::Hash(out));
            }
            // Puppet's concatenate: an array of arrays is a list of pairs (`Hash[y]`), any
            // other array alternates keys and values (`Hash[*y]`).
            (BinaryOp::Add, Value::Hash(a), Value::Array(b)) => {
                let mut out = a.clone();
                if !b.is_empty() && b.iter().all(|x| matches!(x, Value::Array(_))) {
                    for p in b {
                        if let Value::Array(kv) = p {
                            match kv.as_slice() {
                                [k, v] => out.insert(k.clone(), v.clone()),
                                [k] => out.insert(k.clone(), Value::Undef),
                                _ => {
                                    return Err(Flow::Err(self.issue(
                                        format!("Error while evaluating a '+' expression, invalid number of elements ({} for 1..2)", kv.len()),
                                        self.operator_span(operands.0, operands.1, op.as_str()),
                                    )))
                                }
                            };
                        }
                    }
                } else {
                    if b.len() % 2 != 0 {
                        return Err(Flow::Err(self.issue(
                            "Error while evaluating a '+' expression, odd number of arguments for Hash",
                            self.operator_span(operands.0, operands.1, op.as_str()),
                        )));
                    }
                    for kv in b.chunks(2) {
                        out.insert(kv[0].clone(), kv[1].clone());
                    }
                }
                return Ok(Value::Hash(out));
            }
            (BinaryOp::Add, Value::Binary(a), Value::Binary(b)) => {
                return Ok(Value::Binary([&a[..], &b[..]].concat().into()));
            }
            (BinaryOp::Add, Value::Binary(_), _) => {
                return Err(Flow::Err(self.issue(
                    "Error while evaluating a '+' expression, Can only append Binary to a Binary",
                    self.operator_span(operands.0, operands.1, op.as_str()),
                )));
            }
            // Puppet's concatenate raises for anything else appended to a hash.
            (BinaryOp::Add, Value::Hash(_), _) => {
                return Err(Flow::Err(self.issue(
                    "Error while evaluating a '+' expression, Can only append Array or Hash to a Hash",
                    self.operator_span(operands.0, operands.1, op.as_str()),
                )));
            }
            (BinaryOp::Sub, Value::Array(a), Value::Array(b)) => {
                return Ok(Value::Array(
                    a.iter().filter(|x| !b.contains(x)).cloned().collect(),
                ));
            }
            // A hash's entries are `[key, value]` pairs (Puppet's `delete`).
            (BinaryOp::Sub, Value::Array(a), Value::Hash(h)) => {
                let pairs: Vec<Value> = h
                    .iter()
                    .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
                    .collect();
                return Ok(Value::Array(
                    a.iter().filter(|x| !pairs.contains(x)).cloned().collect(),
                ));
            }
            (BinaryOp::Sub, Value::Array(a), other) => {
                return Ok(Value::Array(
                    a.iter().filter(|x| *x != other).cloned().collect(),
                ));
            }
            (BinaryOp::Sub, Value::Hash(a), Value::Hash(b)) => {
                return Ok(Value::Hash(
                    a.iter()
                        .filter(|(k, _)| !b.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ));
            }
            (BinaryOp::Sub, Value::Hash(a), Value::Array(b)) => {
                return Ok(Value::Hash(
                    a.iter()
                        .filter(|(k, _)| !b.contains(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ));
            }
            (BinaryOp::Sub, Value::Hash(a), other) => {
                return Ok(Value::Hash(
                    a.iter()
                        .filter(|(k, _)| *k != other)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ));
            }
            (BinaryOp::Shl, Value::Array(a), other) => {
                let mut out = a.clone();
                out.push(other.clone());
                return Ok(Value::Array(out));
            }
            _ => {}
        }
        // A time value takes a number (or a string that is one) as seconds.
        let time = |v: &Value| matches!(v, Value::Timespan(_) | Value::Timestamp(_));
        let r = if time(&l) && !time(&r) {
            self.coerce_number(&r, operands.1)?
        } else {
            r
        };
        if let Some(res) = super::timespan::arith(op.as_str(), &l, &r) {
            let span = self.operator_span(operands.0, operands.1, op.as_str());
            return res.map_err(|m| {
                Flow::Err(self.issue(
                    format!("Error while evaluating a '{}' expression, {m}", op.as_str()),
                    span,
                ))
            });
        }
        let a = self.coerce_number(&l, operands.0)?;
        let b = self.coerce_number(&r, operands.1)?;
        // An Integer shifted by a Float: Ruby's Integer#<< takes the Float's integer part.
        let b = match (op, &a, b) {
            (BinaryOp::Shl | BinaryOp::Shr, Value::Int(_), Value::Float(f)) if f.is_finite() => {
                Value::Int(f.trunc() as i64)
            }
            (_, _, b) => b,
        };
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => {
                let v = match op {
                    BinaryOp::Add => x.checked_add(y),
                    BinaryOp::Sub => x.checked_sub(y),
                    BinaryOp::Mul => x.checked_mul(y),
                    BinaryOp::Div | BinaryOp::Mod if y == 0 => {
                        return Err(Flow::Err(self.issue("Division by 0", operands.1)))
                    }
                    BinaryOp::Div => Some(floor_div(x, y)),
                    BinaryOp::Mod => Some(x - y * floor_div(x, y)),
                    // Ruby's Integer#<< and #>>: a negative count shifts the other way;
                    // a left shift is exact (big integers) and refused when out of range.
                    BinaryOp::Shl | BinaryOp::Shr => {
                        let left = (op == BinaryOp::Shl) == (y >= 0);
                        let n = y.unsigned_abs();
                        if !left {
                            return Ok(Value::Int(x >> n.min(63)));
                        }
                        match shift_left(x, n) {
                            Ok(v) => return Ok(Value::Int(v)),
                            Err(hex) => {
                                let (bound, sign) = if x > 0 { ("max", '+') } else { ("min", '-') };
                                return Err(Flow::Err(self.issue(
                                    format!(
                                        "A '{}' expression resulted in a value outside of Puppet Integer {bound} range, got '{sign}{hex}'",
                                        op.as_str()
                                    ),
                                    self.operator_span(operands.0, operands.1, op.as_str()),
                                )));
                            }
                        }
                    }
                    _ => None,
                };
                v.map(Value::Int).ok_or_else(|| {
                    // Puppet computes in Ruby's big integers and then refuses the result,
                    // showing it in hex (`"%#+x"`).
                    let wide = match op {
                        BinaryOp::Add => i128::from(x) + i128::from(y),
                        BinaryOp::Sub => i128::from(x) - i128::from(y),
                        _ => i128::from(x) * i128::from(y),
                    };
                    let (bound, sign) = if wide > 0 { ("max", '+') } else { ("min", '-') };
                    Flow::Err(self.issue(
                        format!(
                            "A '{}' expression resulted in a value outside of Puppet Integer {bound} range, got '{sign}{:#x}'",
                            op.as_str(),
                            wide.unsigned_abs()
                        ),
                        self.operator_span(operands.0, operands.1, op.as_str()),
                    ))
                })
            }
            (x, y) => {
                let left_is_float = matches!(x, Value::Float(_));
                let (x, y) = (num_f64(&x), num_f64(&y));
                let v = match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    BinaryOp::Mul => x * y,
                    BinaryOp::Div => x / y,
                    BinaryOp::Mod if left_is_float => {
                        return Err(Flow::Err(self.issue(
                            "Operator '%' is not applicable to a Float.",
                            self.operator_span(operands.0, operands.1, op.as_str()),
                        )))
                    }
                    BinaryOp::Mod => return Err(Flow::Err(self.issue(
                        "Operator '%' is not applicable to an Integer when right side is a Float.",
                        self.operator_span(operands.0, operands.1, op.as_str()),
                    ))),
                    _ => {
                        return Err(Flow::Err(self.issue(
                            format!("Operator '{}' is not applicable to a Float.", op.as_str()),
                            self.operator_span(operands.0, operands.1, op.as_str()),
                        )))
                    }
                };
                if v.is_infinite() {
                    return Err(Flow::Err(self.issue(
                        format!("The result of the {} expression is Infinity", op.as_str()),
                        self.operator_span(operands.0, operands.1, op.as_str()),
                    )));
                }
                Ok(Value::Float(v))
            }
        }
    }

    fn coerce_number(&mut self, v: &Value, span: Span) -> R<Value> {
        match v {
            Value::Int(_) | Value::Float(_) => Ok(v.clone()),
            Value::Str(s) => match to_n(s) {
                Some(n) => {
                    self.warn_at(
                        &format!(
                            "The string '{s}' was automatically coerced to the numerical value {}",
                            n.to_display()
                        ),
                        span,
                    );
                    Ok(n)
                }
                None => Err(Flow::Err(self.issue(
                    format!("The value '{s}' cannot be converted to Numeric."),
                    span,
                ))),
            },
            // Puppet's to_n of undef is its empty-string form.
            Value::Undef => Err(Flow::Err(
                self.issue("The value '' cannot be converted to Numeric.", span),
            )),
            // Ruby's `to_s`: an array or hash in its inspect form.
            other @ (Value::Array(_) | Value::Hash(_)) => Err(Flow::Err(self.issue(
                format!(
                    "The value '{}' cannot be converted to Numeric.",
                    super::stdlib::inspect(other)
                ),
                span,
            ))),
            other => Err(Flow::Err(self.issue(
                format!(
                    "The value '{}' cannot be converted to Numeric.",
                    other.to_display()
                ),
                span,
            ))),
        }
    }

    /// Case/selector matching: regexes match (setting `$n`), types test instances, arrays
    /// and hashes compare element-wise, strings ignore case.
    pub(super) fn case_match(
        &mut self,
        v: &Value,
        m: &Value,
        scope: ScopeId,
        _span: Span,
    ) -> R<bool> {
        Ok(match m {
            Value::Regex(re) => match v {
                Value::Str(s) => self.regex_match(re, &s.clone(), scope),
                _ => false,
            },
            Value::Type(t) => match v {
                Value::Type(vt) => t.normalized_eq(vt) || t.is_instance(v),
                _ => t.is_instance(v),
            },
            Value::Array(ms) => match v {
                Value::Array(vs) => {
                    if ms.len() != vs.len() {
                        return Ok(false);
                    }
                    for (a, b) in vs.iter().zip(ms) {
                        if !self.case_match(a, b, scope, _span)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            // Every key of the pattern must match the value's entry (undef when absent);
            // keys the pattern does not name are free.
            Value::Hash(ms) => match v {
                Value::Hash(vs) => {
                    for (k, pat) in ms.iter() {
                        let entry = vs.get(k).unwrap_or(&Value::Undef);
                        if !self.case_match(entry, pat, scope, _span)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            // `default` inside an array or hash pattern matches anything.
            Value::Default => true,
            _ => puppet_eq(v, m),
        })
    }

    // ---- relationships -----------------------------------------------------------------------

    /// Evaluates `a -> b` (recording the relationship) and returns the right side's operands
    /// (or the left's when the right is empty); none unless `want` (a statement's value is
    /// not used).
    fn eval_relationship(&mut self, e: &Expr, scope: ScopeId, want: bool) -> R<Vec<Operand>> {
        let ExprKind::Relationship { op, left, right } = &e.kind else {
            return self.rel_operands(e, scope, None);
        };
        let l = self.rel_operand_expr(left, scope, *op)?;
        let r = self.rel_operand_expr(right, scope, *op)?;
        let (ls, rs) = (operand_span(left), operand_span(right));
        // The operands the chain goes on with: the right ones, unless there are none; the
        // left ones are kept as the empty alternative of a collector on the right.
        let collector_right = match r.as_slice() {
            [Operand::Collector(ci)] => Some(*ci),
            _ => None,
        };
        let (lv, rv, result) = if r.is_empty() {
            (l.clone(), r, l)
        } else if let Some(ci) = collector_right {
            let rv = r.clone();
            self.collectors[ci].empty_alternative = Some(l.clone());
            (l, rv, r)
        } else if want {
            let rv = r.clone();
            (l, rv, r)
        } else {
            (l, r, vec![])
        };
        let ((source, source_span), (target, target_span)) = match op {
            RelOp::Before | RelOp::Notify => ((lv, ls), (rv, rs)),
            RelOp::Require | RelOp::Subscribe => ((rv, rs), (lv, ls)),
        };
        self.relationships.push(Relationship {
            source,
            target,
            notify: matches!(op, RelOp::Notify | RelOp::Subscribe),
            source_span,
            target_span,
        });
        Ok(result)
    }

    fn rel_operand_expr(&mut self, e: &Expr, scope: ScopeId, op: RelOp) -> R<Vec<Operand>> {
        match &e.kind {
            ExprKind::Relationship { .. } => {
                let r = self.eval_relationship(e, scope, true);
                match r {
                    Err(Flow::Err(err)) if !err.formatted => Err(Flow::Err(
                        self.finalize_error(err, "Relationship Statement"),
                    )),
                    other => other,
                }
            }
            ExprKind::Paren(inner) => self.rel_operand_expr(inner, scope, op),
            ExprKind::Collect(c) => {
                match self.make_collector(&c.type_expr, &c.query, &c.ops, scope, e.span)? {
                    Some(ci) => Ok(vec![Operand::Collector(ci)]),
                    None => Ok(vec![]),
                }
            }
            _ => self.rel_operands(e, scope, Some(op)),
        }
    }

    /// The references an operand of `op` evaluates to. A string must be a reference; one
    /// that is not even a type name fails as Puppet's type parser does.
    fn rel_operands(&mut self, e: &Expr, scope: ScopeId, op: Option<RelOp>) -> R<Vec<Operand>> {
        let value = match self.eval(e, scope)? {
            // The common operand, one reference: no list to flatten.
            Value::Type(t)
                if matches!(
                    *t,
                    PType::Resource(Some(_), Some(_)) | PType::Class(Some(_))
                ) =>
            {
                return Ok(vec![Operand::Ref(*t)])
            }
            other => other,
        };
        let mut items = vec![];
        flatten_into(value, &mut items);
        let mut out: Vec<Operand> = vec![];
        for item in items {
            let t = match item {
                Value::Undef => {
                    return Err(Flow::Err(self.issue(
                        "Illegal relationship operand, can not form a relationship with an Undef Value. A Catalog type is required.",
                        e.span,
                    )))
                }
                Value::Type(t) => match *t {
                    PType::Resource(Some(_), Some(_)) | PType::Class(Some(_)) => *t,
                    // A type without a title is a catalog type: the relationship fails when
                    // it is made (`No title provided`).
                    PType::Resource(Some(name), None) => PType::Resource(Some(name), Some(String::new())),
                    PType::Class(None) => {
                        let op = op.map_or("->", RelOp::as_str);
                        return Err(self.untitled_class(op, e.span));
                    }
                    other => {
                        return Err(Flow::Err(self.issue(
                            format!("Illegal relationship operand, can not form a relationship with {}. A Catalog type is required.", a_an(&other.to_string())),
                            e.span,
                        )))
                    }
                },
                Value::Str(s) => match crate::catalog::ResourceRef::parse(&s)
                    .filter(|_| s.starts_with(|c: char| c.is_ascii_uppercase()))
                {
                    Some(r) if r.type_name == "Class" => PType::Class(Some(r.title.to_lowercase())),
                    Some(r) => PType::Resource(Some(r.type_name), Some(r.title)),
                    None => {
                        let msg = match op {
                            Some(op) if !s.starts_with(|c: char| c.is_ascii_uppercase()) => format!(
                                "Error while evaluating a '{}' expression, The expression <{s}> is not a valid type specification.",
                                op.as_str()
                            ),
                            _ => "Illegal relationship operand, can not form a relationship with a String. A Catalog type is required.".to_string(),
                        };
                        return Err(Flow::Err(self.issue(msg, e.span)));
                    }
                },
                other => {
                    return Err(Flow::Err(self.issue(
                        format!(
                            "Illegal relationship operand, can not form a relationship with {}. A Catalog type is required.",
                            a_an(&other.type_name())
                        ),
                        e.span,
                    )))
                }
            };
            if !out.iter().any(|o| matches!(o, Operand::Ref(x) if *x == t)) {
                out.push(Operand::Ref(t));
            }
        }
        // Relationships keep their operands to the end of the compile.
        out.shrink_to_fit();
        Ok(out)
    }

    // ---- resources -------------------------------------------------------------------------

    /// A resource expression; its value (unless `want` is false: undef) is the references
    /// to the declared resources.
    fn eval_resource(
        &mut self,
        r: &ResourceExpr,
        scope: ScopeId,
        span: Span,
        want: bool,
    ) -> R<Value> {
        let type_name = match &r.type_name.kind {
            ExprKind::QualifiedName(n) | ExprKind::QualifiedReference(n) => n.trim_colons().to_lowercase(),
            _ => match self.eval(&r.type_name, scope)? {
                Value::Type(t) => match *t {
                    PType::Resource(Some(n), None) => n.to_lowercase(),
                    PType::Class(None) => "class".into(),
                    other => {
                        return Err(Flow::Err(self.runtime(
                            format!("Illegal Resource Type expression, expected result to be a type name, or reference to a type, got {other}"),
                            r.type_name.span,
                        )))
                    }
                },
                Value::Str(s) => s.to_lowercase(),
                other => {
                    return Err(Flow::Err(self.runtime(
                        format!("Illegal Resource Type expression, got {}", other.type_name()),
                        r.type_name.span,
                    )))
                }
            },
        };
        let exported = r.form == ResourceForm::Exported;
        let virtual_ = r.form == ResourceForm::Virtual;
        if exported && !self.storeconfigs() {
            self.warn_at(
                "You cannot collect exported resources without storeconfigs being set; the export is ignored",
                span,
            );
        }
        // Titles first, then attribute operations, as Puppet does.
        let mut bodies: Vec<(Vec<String>, Vec<super::catalog_ops::AttrValue>)> =
            Vec::with_capacity(r.bodies.len());
        let mut default_attrs: Vec<super::catalog_ops::AttrValue> = vec![];
        let mut default_seen = false;
        for body in &r.bodies {
            let tv = self.eval(&body.title, scope)?;
            if tv.is_undef() {
                return Err(Flow::Err(self.issue(
                    "Missing title. The title expression resulted in undef",
                    body.title.span,
                )));
            }
            let items = match tv {
                Value::Array(a) => a
                    .into_iter()
                    .flat_map(|v| {
                        flatten_values(&v).into_iter().chain(if v.is_undef() {
                            Some(Value::Undef)
                        } else {
                            None
                        })
                    })
                    .collect::<Vec<_>>(),
                other => vec![other],
            };
            let mut titles: Vec<String> = Vec::with_capacity(items.len());
            let mut is_default = false;
            for (i, t) in items.iter().enumerate() {
                match t {
                    Value::Str(s) if s.is_empty() => {
                        return Err(Flow::Err(self.issue(
                            format!("Empty string title at {i}. Title strings must have a length greater than zero."),
                            body.title.span,
                        )))
                    }
                    Value::Str(s) => {
                        let seen = |titles: &[String]| titles.iter().any(|t| t == s);
                        if seen(&titles) || bodies.iter().any(|(titles, _)| seen(titles)) {
                            return Err(Flow::Err(self.issue(
                                format!("The title '{s}' has already been used in this resource expression"),
                                span,
                            )));
                        }
                        titles.push(s.clone());
                    }
                    Value::Default if default_seen => {
                        return Err(Flow::Err(self.issue(
                            "The title 'default' has already been used in this resource expression",
                            span,
                        )));
                    }
                    Value::Default => {
                        default_seen = true;
                        is_default = true
                    }
                    Value::Undef => {
                        return Err(Flow::Err(self.issue(
                            format!("Missing title at index {i}. The title expression resulted in an undef title"),
                            body.title.span,
                        )))
                    }
                    other => {
                        return Err(Flow::Err(self.issue(
                            format!("Illegal title type at index {i}. Expected String, got {}", types::infer_generic(other)),
                            body.title.span,
                        )))
                    }
                }
            }
            let attrs = self.eval_attribute_ops(&body.ops, scope)?;
            if is_default {
                default_attrs = attrs.clone();
            }
            bodies.push((titles, attrs));
        }
        let mut out = if want {
            Vec::with_capacity(bodies.iter().map(|(titles, _)| titles.len()).sum())
        } else {
            Vec::new()
        };
        if type_name == "class" {
            for (titles, attrs) in bodies {
                let attrs = merge_attrs(&default_attrs, attrs);
                for t in titles {
                    let idx = self.declare_class(&t, &attrs, scope, span)?;
                    if !want {
                        continue;
                    }
                    // Puppet gives the declared class as a resource reference (`Class['Foo']`).
                    out.push(Value::Type(Box::new(PType::Resource(
                        Some("Class".into()),
                        Some(capitalize_type(&self.resources[idx].title)),
                    ))));
                }
            }
            return Ok(Value::Array(out));
        }
        let Some(kind) = self.resolve_resource_type(&type_name) else {
            self.hint_type(&type_name, span);
            return Err(Flow::Err(
                self.runtime(format!("Unknown resource type: '{type_name}'"), span),
            ));
        };
        if matches!(kind, TypeKind::Class) {
            return Ok(Value::Array(out));
        }
        for (titles, attrs) in bodies {
            let attrs = merge_attrs(&default_attrs, attrs);
            let n = titles.len();
            let mut attrs = Some(attrs);
            for (i, t) in titles.into_iter().enumerate() {
                // The last title takes the attributes, the others a copy.
                let these = if i + 1 == n {
                    attrs.take().unwrap_or_default()
                } else {
                    attrs.clone().unwrap_or_default()
                };
                let idx = self.declare_resource(
                    &type_name, &kind, &t, these, scope, span, virtual_, exported,
                )?;
                if !want {
                    continue;
                }
                let r = &self.resources[idx];
                out.push(Value::Type(Box::new(PType::Resource(
                    Some(r.type_name.clone()),
                    Some(r.title.clone()),
                ))));
            }
        }
        Ok(if want {
            Value::Array(out)
        } else {
            Value::Undef
        })
    }
}

fn merge_attrs(
    defaults: &[super::catalog_ops::AttrValue],
    attrs: Vec<super::catalog_ops::AttrValue>,
) -> Vec<super::catalog_ops::AttrValue> {
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

pub(super) fn num_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => 0.0,
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

pub(super) fn a_an(word: &str) -> String {
    if word.starts_with(['A', 'E', 'I', 'O', 'U']) {
        format!("an {word}")
    } else {
        format!("a {word}")
    }
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
