//! Function calls: the dispatch of built-in functions, Puppet-language functions and
//! lambdas. The built-in functions themselves are in this folder by topic.

use super::compiler::scope::{Scope, ScopeId, ScopeKind};
use super::compiler::{Compiler, Flow, R};
use super::resources::catalog_ops::{flatten_values, ref_parts, res_type};
use super::types::{self, PType};
use super::values::numbers::{num_f64, parse_number};
use super::values::strings;
use super::values::value::{puppet_eq, Regex, Value};
use super::LogLevel;
use crate::ast::{Call, CallKind, Expr, ExprKind, Lambda, Parameter};
use crate::catalog::TrimColons;
use crate::span::Span;
use indexmap::IndexMap;
use std::cmp::Ordering;

mod catalog;
mod collections;
mod control;
mod files;
pub(super) mod glob;
pub(super) mod hiera_lookup;
mod iteration;
pub(super) mod module_functions;
mod new_value;
mod numbers;
mod ordering;
pub(super) mod registry;
pub(super) mod ruby_call;
pub(super) mod signatures;
mod signatures_data;
pub(super) mod stdlib;
pub(super) mod stdlib9;
pub(super) mod stdlib_crypt;
pub(super) mod stdlib_extra;
pub(super) mod stdlib_more;
pub(super) mod stdlib_validate;
mod text;
mod typing;
use catalog::*;
use collections::*;
use control::*;
use files::*;
use iteration::*;
use new_value::*;
use numbers::*;
use ordering::*;
use text::*;
use typing::*;

pub(super) use control::{scope_label, warn_once};
pub(super) use ordering::ruby_cmp;

/// A built-in function: evaluated arguments, an optional lambda, the calling scope.
pub type Builtin = fn(&mut Compiler<'_>, &mut Args) -> R<Value>;

pub struct Args<'x> {
    pub name: String,
    pub values: Vec<Value>,
    pub lambda: Option<&'x Lambda>,
    pub scope: ScopeId,
    pub span: Span,
}

/// How deep Puppet-language functions may recurse before the compile gives up (instead of
/// overflowing the stack).
const MAX_CALL_DEPTH: usize = 200;

/// Bounds on the work one compile may do, so that no manifest hangs the compiler or exhausts
/// memory (Puppet has none and just runs out): the lambda calls of all iterations together,
/// and the elements one `range()` or integer iteration may produce.
pub(super) const MAX_LAMBDA_CALLS: u64 = 1_000_000;
pub(super) const MAX_ITEMS: i128 = 1_000_000;
/// The longest string an expression may give (doubling a string by interpolation 40 times
/// would ask for terabytes).
pub(super) const MAX_STRING_BYTES: usize = super::values::value::MAX_STRING_BYTES;

impl Compiler<'_> {
    pub(super) fn eval_call(&mut self, call: &Call, scope: ScopeId, span: Span) -> R<Value> {
        let lambda = match &call.lambda {
            Some(Expr {
                kind: ExprKind::Lambda(l),
                ..
            }) => Some(&**l),
            _ => None,
        };
        let (name, mut values) = match (&call.kind, &call.functor.kind) {
            (CallKind::Method, ExprKind::NamedAccess { left, right }) => {
                let recv = self.eval(left, scope)?;
                let name = match &right.kind {
                    ExprKind::QualifiedName(n) | ExprKind::QualifiedReference(n) => n.clone(),
                    _ => return Err(Flow::Err(self.runtime("Illegal method name", right.span))),
                };
                // An `Error`'s attributes (`$e.msg`, `$e.issue_code`).
                if let (Value::Error(e), [], None) = (&recv, call.args.as_slice(), lambda) {
                    if let Some(v) = e.attribute(&name) {
                        return Ok(v);
                    }
                }
                // `Type.new(...)`
                if let (Value::Type(_), "new") = (&recv, name.as_str()) {
                    (name, vec![recv])
                } else {
                    (name, vec![recv])
                }
            }
            (_, ExprKind::QualifiedReference(_)) | (_, ExprKind::Access { .. }) => {
                let t = self.eval(&call.functor, scope)?;
                ("new".to_string(), vec![t])
            }
            (_, ExprKind::QualifiedName(n)) => (n.clone(), vec![]),
            _ => return Err(Flow::Err(self.runtime("Illegal function call", span))),
        };
        for a in &call.args {
            if let ExprKind::Unary {
                op: crate::ast::UnaryOp::Unfold,
                expr,
            } = &a.kind
            {
                values.extend(self.eval(expr, scope)?.into_unfolded())
            } else {
                values.push(self.eval(a, scope)?);
            }
        }
        // A call from Puppet code is a frame of Puppet's stack while it runs (calls that
        // functions make are not).
        self.puppet_stack
            .push(crate::eval::compiler::StackFrame::Call(span));
        let r = self.call_function(&name, values, lambda, scope, span);
        self.puppet_stack.pop();
        r
    }

    /// The built-in function `lname` names, if this compile has it (a module's only when a
    /// module on the modulepath ships it: [`registry::resolve`]).
    pub(super) fn resolve_builtin(&self, lname: &str) -> Option<registry::Resolved> {
        registry::resolve(lname, |name| self.loader.has_ruby_function(name))
    }

    /// Whether this compile has a built-in function of that name.
    pub(super) fn has_builtin(&self, lname: &str) -> bool {
        self.resolve_builtin(lname).is_some()
    }

    pub(super) fn call_function(
        &mut self,
        name: &str,
        values: Vec<Value>,
        lambda: Option<&Lambda>,
        scope: ScopeId,
        span: Span,
    ) -> R<Value> {
        let lname = name.trim_colons().to_string();
        if let Some(def) = self.find_function(&lname) {
            return self.call_puppet_function(&def, values, span);
        }
        let f = match self.builtins.get(&lname) {
            Some(f) => *f,
            None => {
                let f = self.resolve_builtin(&lname);
                self.builtins.insert(lname.clone(), f);
                if let Some(shim) = f.and_then(|_| stdlib::shim_message(self, &lname)) {
                    self.shim_deprecations.insert(lname.clone(), shim);
                }
                f
            }
        };
        let Some(f) = f else {
            if self.has_runnable_ruby_function(&lname) {
                return self.call_ruby_function(&lname, values, lambda, scope, span);
            }
            let mut msg = format!("Unknown function: '{lname}'.");
            if self.loader.has_ruby_function(&lname) {
                // A module's Ruby function: Puppet runs it, Ordo cannot. Name the way out
                // (a Puppet-language function of the same name is loaded first).
                msg.push_str(" A module ships it in Ruby, which Ordo does not run");
                match lname.split_once("::") {
                    Some((module, rest)) => msg.push_str(&format!(
                        "; write it in the Puppet language as {module}/functions/{}.pp",
                        rest.replace("::", "/")
                    )),
                    None => msg.push('.'),
                }
            }
            return Err(Flow::Err(self.issue(msg, span)));
        };
        // Puppet's checks before the call, by the name called: `stdlib::x` running the
        // function of the old name `x` has none of them.
        let entry = f.entry;
        if entry.name == lname {
            if let Some(msg) = entry.arity_mismatch(values.len()) {
                return Err(Flow::Err(self.runtime(format!("{lname}(): {msg}"), span)));
            }
            if let Some(sig) = entry.signature() {
                if let Some(msg) = signatures::mismatch(sig, values.len(), lambda.is_some()) {
                    return Err(Flow::Err(self.runtime(msg, span)));
                }
                // Puppet's dispatch by argument types, with its messages.
                let arity = signatures::lambda_arity(lambda);
                if let Some(msg) = signatures::type_mismatch(sig, &values, arity) {
                    return Err(Flow::Err(self.runtime(msg, span)));
                }
            }
        }
        // Run natively, stdlib 9's unprefixed shim still says it is deprecated (once: the
        // warning is once per key, so the shim is forgotten once it has warned).
        if !self.shim_deprecations.is_empty() {
            if let Some((key, message)) = self.shim_deprecations.remove(&lname) {
                stdlib::deprecation_warning(self, &key, &message);
            }
        }
        let mut args = Args {
            // The natives that serve several names tell them apart by it.
            name: entry.name.to_string(),
            values,
            lambda,
            scope,
            span,
        };
        (f.run)(self, &mut args)
    }

    fn call_puppet_function(
        &mut self,
        def: &crate::ast::FunctionDef,
        values: Vec<Value>,
        span: Span,
    ) -> R<Value> {
        if self.call_depth >= MAX_CALL_DEPTH {
            return Err(Flow::Err(self.runtime(
                format!(
                    "{}(): too deep recursion (more than {MAX_CALL_DEPTH} nested calls)",
                    def.name
                ),
                span,
            )));
        }
        self.check_stop(span)?;
        self.call_depth += 1;
        let r = self.call_puppet_function_body(def, values, span);
        self.call_depth -= 1;
        r
    }

    fn call_puppet_function_body(
        &mut self,
        def: &crate::ast::FunctionDef,
        values: Vec<Value>,
        span: Span,
    ) -> R<Value> {
        let min = def
            .params
            .iter()
            .filter(|p| p.value.is_none() && !p.captures_rest)
            .count();
        let max = (!def.params.iter().any(|p| p.captures_rest)).then_some(def.params.len());
        if let Some(m) = signatures::arity_mismatch(&def.name, min, max, values.len()) {
            return Err(Flow::Err(self.runtime(m, span)));
        }
        let mut s = Scope::new(ScopeKind::Local, Some(self.top), Some(self.top));
        s.is_function = true;
        s.resource = self.scopes[self.top].resource;
        self.in_call_scope(s, |c, sid| c.run_puppet_function(def, values, sid, span))
    }

    fn run_puppet_function(
        &mut self,
        def: &crate::ast::FunctionDef,
        values: Vec<Value>,
        sid: ScopeId,
        span: Span,
    ) -> R<Value> {
        self.bind_call_params(&def.params, values, sid, &format!("'{}'", def.name), span)?;
        let v = match &def.body {
            Some(b) => match self.eval(b, sid) {
                Ok(v) => v,
                // What return() or next() gives back is not checked against the return
                // type (Puppet checks the value of the body only).
                Err(Flow::Return(v, _) | Flow::Next(v, _)) => return Ok(v),
                Err(e) => return Err(e),
            },
            None => Value::Undef,
        };
        if let Some(rt) = &def.return_type {
            self.check_return_type(rt, &v, &def.name, sid, span)?;
        }
        Ok(v)
    }

    fn bind_call_params(
        &mut self,
        params: &[Parameter],
        values: Vec<Value>,
        sid: ScopeId,
        label: &str,
        span: Span,
    ) -> R<()> {
        reserved_parameter(self, params, span)?;
        let mut values = values.into_iter();
        for p in params {
            let v = if p.captures_rest {
                let rest: Vec<Value> = values.by_ref().collect();
                match &p.value {
                    // None given: the default, as an array.
                    Some(d) if rest.is_empty() => match self.eval(d, sid)? {
                        a @ Value::Array(_) => a,
                        single => Value::Array(vec![single]),
                    },
                    _ => Value::Array(rest),
                }
            } else {
                match values.next() {
                    Some(v) => v,
                    None => match &p.value {
                        Some(d) => self.eval(d, sid)?,
                        // Puppet's closure, given fewer values than it has parameters.
                        None => {
                            return Err(Flow::Err(self.issue(
                                format!("Parameter ${} is required but no value was given", p.name),
                                p.span,
                            )))
                        }
                    },
                }
            };
            if let Some(te) = &p.type_expr {
                let t = self.eval_type(te, sid)?;
                // The value that does not fit: for a captures-rest parameter, the first of
                // its values that does not (Puppet describes that one).
                // An Array type on a captures-rest parameter gives the type of each value
                // and how many there may be.
                let (t, count) = match (p.captures_rest, t) {
                    (true, PType::Array(e, min, max)) => (*e, Some((min, max))),
                    (_, t) => (t, None),
                };
                if let (Some((min, max)), Value::Array(items)) = (count, &v) {
                    let n = items.len() as i64;
                    if n < min || n > max {
                        return Err(Flow::Err(self.runtime(
                            format!(
                                "{label} parameter '{}' expects between {min} and {} values, got {n}",
                                p.name,
                                if max == i64::MAX { "unlimited".to_string() } else { max.to_string() }
                            ),
                            span,
                        )));
                    }
                }
                let bad = if p.captures_rest {
                    match &v {
                        Value::Array(items) => items.iter().find(|x| !t.is_instance(x)),
                        other => Some(other),
                    }
                } else {
                    Some(&v).filter(|v| !t.is_instance(v))
                };
                if let Some(bad) = bad {
                    return Err(Flow::Err(self.runtime(
                        format!(
                            "{label} parameter '{}' {}",
                            p.name,
                            types::mismatch(&t, bad)
                        ),
                        span,
                    )));
                }
            }
            self.scopes[sid].vars.insert(p.name.clone(), v);
        }
        Ok(())
    }

    /// Ends the compile when its host asks (`Host::stop_requested`: a server's time limit).
    pub(super) fn check_stop(&self, span: Span) -> R<()> {
        if self.loader.host().stop_requested() {
            return Err(Flow::Err(self.runtime(
                "compilation stopped: it ran past the server's time limit",
                span,
            )));
        }
        Ok(())
    }

    /// Calls a lambda with arguments; `next` gives the lambda's value.
    pub(super) fn call_lambda(
        &mut self,
        l: &Lambda,
        values: Vec<Value>,
        scope: ScopeId,
        span: Span,
    ) -> R<Value> {
        self.lambda_calls += 1;
        self.check_stop(span)?;
        if self.lambda_calls > MAX_LAMBDA_CALLS {
            return Err(Flow::Err(self.runtime(
                format!(
                    "evaluation stopped: more than {MAX_LAMBDA_CALLS} lambda calls in one compile"
                ),
                span,
            )));
        }
        let source = self.scopes[scope].source.clone();
        let mut s = Scope::with_source(ScopeKind::Local, Some(scope), Some(scope), source);
        s.vars.reserve(l.params.len());
        self.in_call_scope(s, |c, sid| c.run_lambda(l, values, sid, span))
    }

    fn run_lambda(&mut self, l: &Lambda, values: Vec<Value>, sid: ScopeId, span: Span) -> R<Value> {
        // Puppet names a lambda's parameters `block parameter 'x'`.
        self.bind_call_params(&l.params, values, sid, "block", span)?;
        let v = match &l.body {
            Some(b) => match self.eval(b, sid) {
                Ok(v) => v,
                Err(Flow::Next(v, _)) => v,
                Err(e) => return Err(e),
            },
            None => Value::Undef,
        };
        if let Some(rt) = &l.return_type {
            self.check_return_type(rt, &v, "lambda", sid, span)?;
        }
        Ok(v)
    }

    /// Puppet's check of a function's or lambda's declared return type.
    fn check_return_type(
        &mut self,
        rt: &Expr,
        v: &Value,
        name: &str,
        scope: ScopeId,
        span: Span,
    ) -> R<()> {
        let t = self.eval_type(rt, scope)?;
        if t.is_instance(v) {
            return Ok(());
        }
        Err(Flow::Err(self.runtime(
            format!(
                "value returned from {name} has wrong type, {}",
                types::mismatch(&t, v)
            ),
            span,
        )))
    }

    /// Writes to the output of the EPP template being rendered: one string, bounded as one,
    /// and counted against the compile's bound on the bytes of its strings.
    pub(in crate::eval) fn render_push(&mut self, s: &str, span: Span) -> R<()> {
        let had = self.render_stack.last().map_or(0, String::len);
        self.check_string_len(had + s.len(), span)?;
        self.charge_string_at(s.len(), span)?;
        if let Some(buf) = self.render_stack.last_mut() {
            buf.push_str(s);
        }
        Ok(())
    }
}

fn arg_err(c: &Compiler<'_>, a: &Args, msg: impl std::fmt::Display) -> Flow {
    Flow::Err(c.runtime(format!("{}(): {}", a.name, msg), a.span))
}

/// A parameter may not be named after a reserved variable (`$facts`, `$trusted`,
/// `$server_facts`): Puppet fails when it binds it.
pub(super) fn reserved_parameter(c: &Compiler<'_>, params: &[Parameter], span: Span) -> R<()> {
    match params
        .iter()
        .find(|p| super::expr::is_reserved_variable(&p.name))
    {
        Some(p) => Err(Flow::Err(c.runtime(
            format!(
                "Attempt to assign to a reserved variable name: '{}'",
                p.name
            ),
            span,
        ))),
        None => Ok(()),
    }
}

fn first_arg(a: &Args) -> Value {
    a.values.first().cloned().unwrap_or(Value::Undef)
}
