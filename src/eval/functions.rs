//! Function calls: the built-in function registry, Puppet-language functions and lambdas.

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

mod new_value;
use new_value::*;

/// A built-in function: evaluated arguments, an optional lambda, the calling scope.
pub type Builtin = fn(&mut Compiler<'_>, &mut Args) -> R<Value>;

pub struct Args<'x> {
    pub name: String,
    pub values: Vec<Value>,
    pub lambda: Option<&'x Lambda>,
    pub scope: ScopeId,
    pub span: Span,
}

/// Functions that Puppet only has when stdlib (or another module) ships them: available
/// when the loader reports a Ruby function of that name.
const STDLIB: &[&str] = &[
    "merge",
    "concat",
    "delete",
    "member",
    "has_key",
    "is_string",
    "pick",
    "pick_default",
    "str2bool",
    "any2array",
    "range",
    "sum",
    "hash",
    "zip",
];

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
pub(super) const MAX_STRING_BYTES: usize = 256 << 20;

/// The registry: name -> implementation. Add new functions here.
pub fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "include" => f_include,
        "require" => f_require,
        "contain" => f_contain,
        "realize" => f_realize,
        "tag" => f_tag,
        "tagged" => f_tagged,
        "defined" => f_defined,
        "fail" => f_fail,
        "import" => f_import,
        "notice" | "warning" | "err" | "info" | "debug" | "alert" | "crit" | "emerg" => f_log,
        "each" => f_each,
        "map" => f_map,
        "filter" => f_filter,
        "reduce" => f_reduce,
        "slice" => f_slice,
        "with" => f_with,
        "then" => f_then,
        "lest" => f_lest,
        "assert_type" => f_assert_type,
        "type" => f_type,
        "new" => f_new,
        "split" => f_split,
        "join" => f_join,
        "sprintf" => f_sprintf,
        "versioncmp" => f_versioncmp,
        "compare" => f_compare,
        "regsubst" => f_regsubst,
        "match" => f_match,
        "size" | "length" => f_size,
        "keys" => f_keys,
        "values" => f_values,
        "flatten" => f_flatten,
        "unique" => f_unique,
        "sort" => f_sort,
        "reverse_each" => f_reverse_each,
        "partition" => f_partition,
        "group_by" => f_group_by,
        "tree_each" => f_tree_each,
        "camelcase" => f_camelcase,
        "call" => f_call,
        "file" => f_file,
        "binary_file" => f_binary_file,
        "find_file" => f_find_file,
        "upcase" | "downcase" | "capitalize" | "strip" | "lstrip" | "rstrip" | "chomp" | "chop" => {
            f_string_op
        }
        "min" => f_min,
        "max" => f_max,
        "abs" => f_abs,
        "round" => f_round,
        "floor" => f_floor,
        "ceiling" => f_ceiling,
        "empty" => f_empty,
        "create_resources" => f_create_resources,
        "inline_epp" => f_inline_epp,
        "module_directory" => f_module_directory,
        "find_template" => f_find_template,
        "epp" => f_epp,
        "lookup" => f_lookup,
        "any" => f_any,
        "all" => f_all,
        "index" => f_index,
        "step" => f_step,
        "dig" => f_dig,
        "get" => f_get,
        "sha1" | "md5" | "sha256" | "digest" => f_digest,
        "generate" => f_generate,
        "base64" => f_base64,
        "return" => f_return,
        "next" => f_next,
        "break" => f_break,
        "get_module_path" | "template" => f_unsupported,
        "delete" => f_delete,
        "merge" => f_merge,
        "concat" => f_concat,
        "member" => f_member,
        "has_key" => f_has_key,
        "is_string" => f_is_string,
        "pick" => f_pick,
        "pick_default" => f_pick_default,
        "str2bool" => f_str2bool,
        "any2array" => f_any2array,
        "range" => f_range,
        "sum" => f_sum,
        "hash" => f_hash,
        "zip" => f_zip,
        "convert_to" => f_convert_to,
        "unwrap" => f_unwrap,
        "fqdn_rand" => f_fqdn_rand,
        "shellquote" => f_shellquote,
        "strftime" => f_strftime,
        _ => return None,
    })
}

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
        self.call_function(&name, values, lambda, scope, span)
    }

    /// The built-in function `lname` names, if this compile has it: stdlib's only when a
    /// module ships them (see [`super::stdlib::builtin`]).
    pub(super) fn resolve_builtin(&self, lname: &str) -> Option<Builtin> {
        if let Some(old) = lname.strip_prefix("stdlib::") {
            // stdlib 9's namespaced names: when a module ships them, the function of that
            // name here, else the native one of the old name (stdlib 9 moved it).
            if !self.loader.has_ruby_function(lname) {
                return None;
            }
            return super::stdlib9::builtin(lname)
                .or_else(|| super::stdlib::builtin(lname))
                .or_else(|| super::stdlib::builtin(old))
                .or_else(|| builtin(old));
        }
        let mine = super::stdlib::builtin(lname).filter(|_| {
            super::stdlib::CORE.contains(&lname) || self.loader.has_ruby_function(lname)
        });
        mine.or_else(|| {
            builtin(lname)
                .filter(|_| !STDLIB.contains(&lname) || self.loader.has_ruby_function(lname))
        })
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
        if let Some(msg) = ruby3x_arity(&lname, values.len()) {
            return Err(Flow::Err(self.runtime(format!("{lname}(): {msg}"), span)));
        }
        if let Some(sig) = super::signatures::find(&lname) {
            if let Some(msg) = super::signatures::mismatch(sig, values.len(), lambda.is_some()) {
                return Err(Flow::Err(self.runtime(msg, span)));
            }
            // Puppet's dispatch by argument types, with its messages.
            let arity = super::signatures::lambda_arity(lambda);
            if let Some(msg) = super::signatures::type_mismatch(sig, &values, arity) {
                return Err(Flow::Err(self.runtime(msg, span)));
            }
        }
        let mut args = Args {
            name: super::stdlib9::native_name(lname),
            values,
            lambda,
            scope,
            span,
        };
        f(self, &mut args)
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
        if let Some(m) = super::signatures::arity_mismatch(&def.name, min, max, values.len()) {
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

    pub(super) fn render_push(&mut self, s: &str) {
        if let Some(buf) = self.render_stack.last_mut() {
            buf.push_str(s);
        }
    }
}

// ---- helpers -------------------------------------------------------------------------------------

/// Puppet's own 3.x functions (`newfunction` with an `:arity`): the arity check Puppet makes
/// before calling them, with its message. `arity: n` takes exactly n arguments,
/// `arity: -(n + 1)` at least n.
fn ruby3x_arity(name: &str, given: usize) -> Option<String> {
    let arity: i32 = match name {
        "md5" | "sha1" | "sha256" | "digest" => 1,
        "sprintf" | "fqdn_rand" | "file" | "template" | "inline_template" | "generate" => -2,
        _ => return None,
    };
    if arity >= 0 {
        let n = arity as usize;
        (given != n).then(|| format!("Wrong number of arguments given ({given} for {n})"))
    } else {
        let min = (-arity - 1) as usize;
        (given < min)
            .then(|| format!("Wrong number of arguments given ({given} for minimum {min})"))
    }
}

fn arg_err(c: &Compiler<'_>, a: &Args, msg: impl std::fmt::Display) -> Flow {
    Flow::Err(c.runtime(format!("{}(): {}", a.name, msg), a.span))
}

fn need_lambda<'x>(c: &Compiler<'_>, a: &Args<'x>) -> R<&'x Lambda> {
    let l = a.lambda.ok_or_else(|| arg_err(c, a, "expects a block"))?;
    let (min, max) = match a.name.as_str() {
        "each" | "map" | "filter" | "any" | "all" | "reverse_each" => (1, 2),
        "reduce" => (2, 2),
        "then" => (1, 1),
        "lest" => (0, 0),
        _ => return Ok(l),
    };
    let n = l.params.len();
    // Parameters with defaults may be left out: the lambda fits when it takes some count
    // in `min..=max`.
    let required = l.params.iter().filter(|p| p.value.is_none()).count();
    if l.params.iter().any(|p| p.captures_rest) || (required <= max && n >= min) {
        return Ok(l);
    }
    let expects = if min == max {
        format!("{min} argument{}", if min == 1 { "" } else { "s" })
    } else {
        format!("between {min} and {max} arguments")
    };
    Err(Flow::Err(c.runtime(
        format!("'{}' block expects {expects}, got {n}", a.name),
        a.span,
    )))
}

/// Iterates a value as Puppet's iteration functions do: arrays by element, hashes by
/// [key, value] pairs, integers as 0..n, strings by character.
/// The items of an iterable argument, or Puppet's error for anything else.
fn iterable_items(c: &Compiler<'_>, a: &Args, v: &Value) -> R<Vec<(Value, Value)>> {
    if let Some(n) = iteration_len(v).filter(|n| *n > MAX_ITEMS) {
        return Err(arg_err(
            c,
            a,
            format!("cannot iterate over {n} elements (at most {MAX_ITEMS})"),
        ));
    }
    iteration_items(v).ok_or_else(|| {
        arg_err(
            c,
            a,
            format!("expects an Iterable value, got {}", v.type_name()),
        )
    })
}

/// How many elements iterating an integer or an Integer range would produce.
fn iteration_len(v: &Value) -> Option<i128> {
    match v {
        Value::Int(n) => Some((*n).max(0) as i128),
        Value::Type(t) => match &**t {
            PType::Integer(a, b) if *b != i64::MAX && *a != i64::MIN => {
                Some((*b as i128 - *a as i128 + 1).max(0))
            }
            _ => None,
        },
        _ => None,
    }
}

/// `None` also for integer iterations too long to materialise (see [`MAX_ITEMS`]).
fn iteration_items(v: &Value) -> Option<Vec<(Value, Value)>> {
    if iteration_len(v).is_some_and(|n| n > MAX_ITEMS) {
        return None;
    }
    Some(match v {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| (Value::Int(i as i64), x.clone()))
            .collect(),
        Value::Hash(h) => h.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Value::Iterator(it) => it
            .items
            .iter()
            .enumerate()
            .map(|(i, x)| (Value::Int(i as i64), x.clone()))
            .collect(),
        Value::Int(n) => (0..*n).map(|i| (Value::Int(i), Value::Int(i))).collect(),
        Value::Str(s) => s
            .chars()
            .enumerate()
            .map(|(i, c)| (Value::Int(i as i64), Value::str(c.to_string())))
            .collect(),
        Value::Type(t) => match &**t {
            PType::Integer(a, b) if *b != i64::MAX && *a != i64::MIN => (*a..=*b)
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), Value::Int(x)))
                .collect(),
            PType::Enum(names, _) => names
                .iter()
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), Value::str(x.clone())))
                .collect(),
            _ => return None,
        },
        _ => return None,
    })
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

/// Arguments for one lambda call: `|$v|`, `|$k, $v|` / `|$i, $v|`.
fn lambda_args(l: &Lambda, is_hash: bool, k: &Value, v: &Value) -> Vec<Value> {
    // A block of one parameter that captures the rest takes as many as it can: two.
    if l.params.len() >= 2 || l.params.first().is_some_and(|p| p.captures_rest) {
        vec![k.clone(), v.clone()]
    } else if is_hash {
        vec![Value::Array(vec![k.clone(), v.clone()])]
    } else {
        vec![v.clone()]
    }
}

fn first_arg(a: &Args) -> Value {
    a.values.first().cloned().unwrap_or(Value::Undef)
}

fn class_names(c: &Compiler<'_>, a: &Args) -> R<Vec<String>> {
    let mut out = vec![];
    for x in &a.values {
        if x.is_undef() {
            return Err(Flow::Err(
                c.runtime("Cannot use undef as a class name", a.span),
            ));
        }
        for item in flatten_values(x) {
            match item {
                Value::Str(s) if s.is_empty() => {
                    return Err(Flow::Err(
                        c.runtime("Cannot use empty string as a class name", a.span),
                    ))
                }
                Value::Str(s) => out.push(s),
                Value::Type(t) => match *t {
                    PType::Class(Some(n)) => out.push(n),
                    PType::Resource(Some(ref ty), Some(ref title)) if ty == "Class" => {
                        out.push(title.clone())
                    }
                    PType::Resource(Some(n), None) => out.push(n.to_lowercase()),
                    _ => {}
                },
                _ => {}
            }
        }
    }
    Ok(out)
}

// ---- catalog functions ---------------------------------------------------------------------------

fn f_include(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for n in class_names(c, a)? {
        let idx = c.include_class(&n, a.scope, a.span)?;
        out.push(Value::Type(Box::new(res_type(&c.resources[idx]))));
    }
    Ok(Value::Array(out))
}

fn f_require(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for n in class_names(c, a)? {
        let idx = c.include_class(&n, a.scope, a.span)?;
        let t = res_type(&c.resources[idx]);
        let container = c.scope_resource(a.scope);
        c.recorder.call("require", container, idx, a.span);
        let r = &mut c.resources[container];
        let mut items = match r.params.get("require") {
            None => vec![],
            Some(Value::Array(x)) => x.clone(),
            Some(v) => vec![v.clone()],
        };
        // Puppet's require function always leaves an array (`[require].flatten << ref`).
        items.push(Value::Type(Box::new(t.clone())));
        r.params.insert("require", Value::Array(items));
        out.push(Value::Type(Box::new(t)));
    }
    Ok(Value::Array(out))
}

fn f_contain(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for n in class_names(c, a)? {
        let idx = c.include_class(&n, a.scope, a.span)?;
        let container = c.scope_resource(a.scope);
        if container != idx && !c.containment.contains(&(container, idx)) {
            c.containment.push((container, idx));
            c.recorder.call("contain", container, idx, a.span);
        }
        out.push(Value::Type(Box::new(res_type(&c.resources[idx]))));
    }
    Ok(Value::Array(out))
}

fn f_realize(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if a.values.is_empty() {
        return Err(arg_err(
            c,
            a,
            "Wrong number of arguments given (0 for minimum 1)",
        ));
    }
    let mut refs = vec![];
    for v in &a.values {
        for item in flatten_values(v) {
            match ref_parts(&item) {
                // A string keeps its type as written (Puppet's message shows `notify[a]`).
                Some((t, title)) => {
                    let t = match &item {
                        Value::Str(s) => s
                            .split_once('[')
                            .map_or(t.into_owned(), |(written, _)| written.trim().to_string()),
                        _ => t.into_owned(),
                    };
                    refs.push((t, title.into_owned()))
                }
                None => {
                    return Err(arg_err(
                        c,
                        a,
                        format!("expects a resource reference, got {}", item.type_name()),
                    ))
                }
            }
        }
    }
    c.add_realize(refs, a.scope, a.span);
    Ok(Value::Undef)
}

fn f_tag(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let container = c.scope_resource(a.scope);
    for v in &a.values {
        // The function's failure is an evaluation error of the call (with its column).
        if let Some(bad) = super::resources::catalog_ops::invalid_tag(v) {
            return Err(Flow::Err(c.runtime(format!("Invalid tag '{bad}'"), a.span)));
        }
        for t in flatten_values(v) {
            super::compiler::add_tag(&mut c.resources[container].tags, &t.to_display());
        }
    }
    Ok(Value::Undef)
}

fn f_tagged(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let container = c.scope_resource(a.scope);
    let all = a
        .values
        .iter()
        .flat_map(flatten_values)
        .all(|t| c.resource_tagged(container, &t.to_display().to_lowercase()));
    Ok(Value::Bool(all))
}

fn f_defined(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    for v in a.values.clone() {
        let found = match &v {
            Value::Str(s) if s.starts_with('$') => {
                let name = &s[1..];
                let mut sc = Some(a.scope);
                let mut found = false;
                if let Some((class, var)) = name.rsplit_once("::") {
                    // Puppet's Scope#exist?: the class's scope (and the scopes it looks in),
                    // the top scope for `$::x`; an unknown or unevaluated class has none.
                    let class = class.trim_start_matches("::").to_lowercase();
                    sc = if class.is_empty() {
                        Some(c.top)
                    } else {
                        c.class_scopes.get(&class).copied()
                    };
                    while let Some(id) = sc {
                        if c.scopes[id].vars.contains_key(var) {
                            found = true;
                            break;
                        }
                        sc = c.scopes[id].lookup_next;
                    }
                } else {
                    while let Some(id) = sc {
                        if c.scopes[id].vars.contains_key(name) {
                            found = true;
                            break;
                        }
                        sc = c.scopes[id].lookup_next;
                    }
                }
                found
            }
            Value::Str(s) => {
                let n = s.trim_colons().to_lowercase();
                // 'main' names the main class (Puppet's `find_main_class`).
                // A class or a resource type, not a function (Puppet 4+).
                n == "main" || c.find_class(&n).is_some() || c.resolve_resource_type(&n).is_some()
            }
            Value::Type(t) => match &**t {
                PType::Resource(Some(ty), Some(title)) => c
                    .find_resource(ty, title)
                    .is_some_and(|i| !c.resources[i].dropped),
                // The main class's catalog resource is titled `:main` (a symbol) in Puppet,
                // which `Class['main']` (title 'Main') never finds.
                PType::Class(Some(n)) => {
                    n.trim_colons().to_lowercase() != "main"
                        && c.find_resource("Class", n).is_some()
                }
                PType::Resource(Some(ty), None) => c.resolve_resource_type(ty).is_some(),
                PType::Class(None) | PType::Resource(None, None) => true,
                _ => true,
            },
            _ => false,
        };
        if found {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// `fail` is a 3.x function: each argument is Ruby's `to_s` of it (an array or hash in
/// Ruby's inspect form, `{"a"=>nil}`), joined by spaces.
fn f_fail(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let msg: Vec<String> = a
        .values
        .iter()
        .map(super::values::ruby_print::ruby_to_s)
        .collect();
    Err(Flow::Err(c.runtime(msg.join(" "), a.span)))
}

/// `import` was removed in Puppet 4; the function that stands in its place says so.
fn f_import(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Err(c.issue(
        "Use of 'import' has been discontinued in favor of a manifest directory. \
         See http://links.puppet.com/puppet-import-deprecation",
        a.span,
    )))
}

pub(super) fn scope_label(c: &Compiler<'_>, scope: ScopeId) -> String {
    let r = c.scope_resource(scope);
    let res = &c.resources[r];
    if res.type_name == "Class" {
        if res.title == "main" {
            "Class[main]".into()
        } else {
            format!("Class[{}]", crate::catalog::capitalize_type(&res.title))
        }
    } else {
        format!("{}[{}]", res.type_name, res.title)
    }
}

fn f_log(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let level = match a.name.as_str() {
        "notice" => LogLevel::Notice,
        "warning" => LogLevel::Warning,
        "err" => LogLevel::Err,
        "info" => LogLevel::Info,
        "debug" => LogLevel::Debug,
        "alert" => LogLevel::Alert,
        "crit" => LogLevel::Crit,
        _ => LogLevel::Emerg,
    };
    let msg: Vec<String> = a.values.iter().map(|v| v.to_display()).collect();
    let label = scope_label(c, a.scope);
    c.log(level, format!("Scope({label}): {}", msg.join(" ")));
    Ok(Value::Undef)
}

// ---- iteration -------------------------------------------------------------------------------------

fn f_each(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    let items = iterable_items(c, a, &v)?;
    let is_hash = matches!(v, Value::Hash(_));
    for (k, x) in items {
        match c.call_lambda(l, lambda_args(l, is_hash, &k, &x), a.scope, a.span) {
            Ok(_) => {}
            Err(Flow::Break(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(v)
}

/// The items of a collection as `partition`/`group_by` keep them (a hash's as `[k, v]`
/// pairs), each with the lambda's arguments: the item, or (index or key, value) for two
/// parameters.
fn keyed_items(c: &Compiler<'_>, a: &Args, l: &Lambda) -> R<Vec<(Value, Vec<Value>)>> {
    let v = first_arg(a);
    let is_hash = matches!(v, Value::Hash(_));
    if !matches!(v, Value::Array(_) | Value::Hash(_)) {
        return Err(arg_err(c, a, "expects a Collection"));
    }
    Ok(iteration_items(&v)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, x)| {
            let args = lambda_args(l, is_hash, &k, &x);
            let item = if is_hash { Value::Array(vec![k, x]) } else { x };
            (item, args)
        })
        .collect())
}

fn f_partition(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let (mut yes, mut no) = (vec![], vec![]);
    for (item, args) in keyed_items(c, a, l)? {
        if c.call_lambda(l, args, a.scope, a.span)?.truthy() {
            yes.push(item);
        } else {
            no.push(item);
        }
    }
    Ok(Value::Array(vec![Value::Array(yes), Value::Array(no)]))
}

fn f_group_by(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let mut groups: IndexMap<Value, Value> = IndexMap::new();
    for (item, args) in keyed_items(c, a, l)? {
        let key = c.call_lambda(l, args, a.scope, a.span)?;
        match groups.entry(key).or_insert_with(|| Value::Array(vec![])) {
            Value::Array(g) => g.push(item),
            _ => unreachable!("groups hold arrays"),
        }
    }
    Ok(Value::Hash(groups.into_iter().collect()))
}

/// `tree_each`: every node of a tree of arrays and hashes with its path (root included,
/// containers and values, depth first unless `order => breadth_first`).
fn f_tree_each(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let tree = first_arg(a);
    let opt = |name: &str| match a.values.get(1) {
        Some(Value::Hash(h)) => h.get(&Value::Str(name.into())).cloned(),
        _ => None,
    };
    let flag = |name: &str| !matches!(opt(name), Some(Value::Bool(false)));
    let (root, containers, values) = (
        flag("include_root"),
        flag("include_containers"),
        flag("include_values"),
    );
    if !containers && !values {
        return Err(Flow::Err(c.runtime(
            "Options 'include_containers' and 'include_values' cannot both be false",
            a.span,
        )));
    }
    let breadth = matches!(opt("order"), Some(Value::Str(o)) if o == "breadth_first");
    let mut nodes: Vec<(Vec<Value>, Value)> = vec![];
    let mut queue = std::collections::VecDeque::from([(vec![], tree.clone())]);
    while let Some((path, v)) = if breadth {
        queue.pop_front()
    } else {
        queue.pop_back()
    } {
        let is_container = matches!(v, Value::Array(_) | Value::Hash(_));
        let children = if is_container {
            iteration_items(&v).unwrap_or_default()
        } else {
            vec![]
        };
        let wanted = (root || !path.is_empty()) && if is_container { containers } else { values };
        if nodes.len() >= MAX_ITEMS as usize {
            return Err(arg_err(c, a, "the tree has too many nodes"));
        }
        let mut kids: Vec<(Vec<Value>, Value)> = children
            .into_iter()
            .map(|(k, x)| {
                let mut p = path.clone();
                p.push(k);
                (p, x)
            })
            .collect();
        if wanted {
            nodes.push((path, v));
        }
        if !breadth {
            kids.reverse();
        }
        queue.extend(kids);
    }
    // Without a block: an iterator of `[path, value]` pairs.
    let Some(l) = a.lambda else {
        return Ok(Value::Iterator(std::sync::Arc::new(
            super::values::value::IterValue {
                elem: PType::Any,
                items: nodes
                    .into_iter()
                    .map(|(p, v)| Value::Array(vec![Value::Array(p), v]))
                    .collect(),
            },
        )));
    };
    for (path, v) in nodes {
        let args = if l.params.len() >= 2 {
            vec![Value::Array(path), v]
        } else {
            vec![v]
        };
        match c.call_lambda(l, args, a.scope, a.span) {
            Ok(_) => {}
            Err(Flow::Break(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(tree)
}

/// `camelcase`: each `_`-separated word capitalized (Ruby's `capitalize`), numbers as they
/// are, arrays element by element.
fn f_camelcase(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    fn camel(v: &Value) -> Value {
        match v {
            Value::Str(s) => Value::Str(s.split('_').map(strings::ruby_capitalize).collect()),
            Value::Array(items) => Value::Array(items.iter().map(camel).collect()),
            other => other.clone(),
        }
    }
    Ok(camel(&first_arg(a)))
}

/// `call(name, args...)`: calls a function by name, with the block if one is given.
fn f_call(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if let Some(Value::Deferred(d)) = a.values.first().cloned() {
        return resolve_deferred(c, &d, a.scope, a.span);
    }
    let Some(Value::Str(name)) = a.values.first().cloned() else {
        return Err(arg_err(c, a, "expects a String function name"));
    };
    let args = a.values[1..].to_vec();
    c.call_function(&name, args, a.lambda, a.scope, a.span)
}

/// `$deferred.call()`: its function called now with its arguments (deferred ones resolved
/// first), or for a `$name`, `dig` into that variable (Puppet's `DeferredResolver`).
fn resolve_deferred(
    c: &mut Compiler<'_>,
    d: &super::values::value::Deferred,
    scope: ScopeId,
    span: Span,
) -> R<Value> {
    fn resolve(c: &mut Compiler<'_>, v: &Value, scope: ScopeId, span: Span) -> R<Value> {
        Ok(match v {
            Value::Deferred(d) => resolve_deferred(c, d, scope, span)?,
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|x| resolve(c, x, scope, span))
                    .collect::<R<_>>()?,
            ),
            Value::Hash(h) => {
                let mut out = IndexMap::new();
                for (k, x) in h.iter() {
                    out.insert(k.clone(), resolve(c, x, scope, span)?);
                }
                Value::Hash(out.into())
            }
            Value::Sensitive(x) => Value::Sensitive(Box::new(resolve(c, x, scope, span)?)),
            other => other.clone(),
        })
    }
    let mut args = vec![];
    for x in d.arguments.iter().flatten() {
        args.push(resolve(c, x, scope, span)?);
    }
    match d.name.strip_prefix('$') {
        Some(var) => {
            let value = c.lookup_var(var, scope, span)?;
            args.insert(0, value);
            c.call_function("dig", args, None, scope, span)
        }
        None => c.call_function(&d.name.clone(), args, None, scope, span),
    }
}

/// `module_directory(names)`: the directory of the first of the modules (names or arrays
/// of names) on the modulepath, else undef.
fn f_module_directory(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    for v in a.values.iter().flat_map(flatten_values) {
        if let Some(dir) = c.loader.module_dir(&v.to_display()) {
            return Ok(Value::str(dir));
        }
    }
    Ok(Value::Undef)
}

/// `find_template(paths)`: the path of the first `module/file` found in its module's
/// `templates`, else undef.
fn f_find_template(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    for v in a.values.iter().flat_map(flatten_values) {
        let name = v.to_display();
        let Some((module, file)) = name.split_once('/') else {
            continue;
        };
        let rel = format!("templates/{file}");
        if c.loader.load(module, &rel).is_some() {
            if let Some(dir) = c.loader.module_dir(module) {
                return Ok(Value::str(format!("{dir}/{rel}")));
            }
        }
    }
    Ok(Value::Undef)
}

fn f_reverse_each(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let mut items = entries(&v);
    items.reverse();
    match a.lambda {
        Some(l) => {
            each_with_lambda(c, a, l, items)?;
            // With a block, Puppet's reverse_each returns nil.
            Ok(Value::Undef)
        }
        None => Ok(iterator_of(&v, items)),
    }
}

/// The iterator `step` and `reverse_each` give without a block: Puppet's element type is
/// that of what they go through (the variant of an array's elements' types, a hash's
/// `Tuple[keys, values, 2, 2]`, `String[1, 1]` of a string's characters, `Integer[0, n-1]`
/// of an integer, the range itself of an `Integer[a, b]`, `Unit` when it is empty).
fn iterator_of(v: &Value, items: Vec<(Value, Value)>) -> Value {
    let elem = match v {
        Value::Iterator(it) => it.elem.clone(),
        Value::Array(a) if a.is_empty() => PType::Unit,
        Value::Hash(h) if h.is_empty() => PType::Unit,
        Value::Array(a) => super::types::variant_of(a.iter().map(super::types::infer)),
        Value::Hash(h) => PType::Tuple(
            vec![
                super::types::variant_of(h.keys().map(super::types::infer)),
                super::types::variant_of(h.values().map(super::types::infer)),
            ],
            2,
            2,
        ),
        Value::Str(_) => PType::String(1, 1, None),
        Value::Int(n) if *n <= 0 => PType::Unit,
        Value::Int(n) => PType::Integer(0, n - 1),
        Value::Type(t) => (**t).clone(),
        _ => PType::Any,
    };
    Value::Iterator(std::sync::Arc::new(super::values::value::IterValue {
        elem,
        items: items.into_iter().map(|(_, x)| x).collect(),
    }))
}

/// The elements `reverse_each` and `step` go through, as (index, element): a hash's are its
/// entries as `[key, value]` arrays (Puppet's Iterable of a hash).
fn entries(v: &Value) -> Vec<(Value, Value)> {
    let items = iteration_items(v).unwrap_or_default();
    if !matches!(v, Value::Hash(_)) {
        return items;
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, (k, x))| (Value::Int(i as i64), Value::Array(vec![k, x])))
        .collect()
}

/// Calls `l` with each element (one parameter), as
/// `reverse_each` and `step` do with a block; `break` ends the iteration.
fn each_with_lambda(
    c: &mut Compiler<'_>,
    a: &Args,
    l: &Lambda,
    items: Vec<(Value, Value)>,
) -> R<()> {
    for (k, x) in items {
        match c.call_lambda(l, lambda_args(l, false, &k, &x), a.scope, a.span) {
            Ok(_) => {}
            Err(Flow::Break(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn f_map(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    let items = iterable_items(c, a, &v)?;
    let is_hash = matches!(v, Value::Hash(_));
    let mut out = vec![];
    for (k, x) in items {
        match c.call_lambda(l, lambda_args(l, is_hash, &k, &x), a.scope, a.span) {
            Ok(r) => out.push(r),
            Err(Flow::Break(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(Value::Array(out))
}

fn f_filter(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    let items = iterable_items(c, a, &v)?;
    let is_hash = matches!(v, Value::Hash(_));
    let mut keep = vec![];
    for (k, x) in items {
        match c.call_lambda(l, lambda_args(l, is_hash, &k, &x), a.scope, a.span) {
            Ok(r) => {
                if r.truthy() {
                    keep.push((k, x))
                }
            }
            Err(Flow::Break(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(if is_hash {
        Value::Hash(keep.into_iter().collect())
    } else {
        Value::Array(keep.into_iter().map(|(_, x)| x).collect())
    })
}

fn f_reduce(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    let items = iterable_items(c, a, &v)?;
    let is_hash = matches!(v, Value::Hash(_));
    let elems: Vec<Value> = items
        .into_iter()
        .map(|(k, x)| if is_hash { Value::Array(vec![k, x]) } else { x })
        .collect();
    let (mut acc, rest) = match a.values.get(1) {
        Some(init) => (init.clone(), &elems[..]),
        None => match elems.split_first() {
            Some((f, r)) => (f.clone(), r),
            None => return Ok(Value::Undef),
        },
    };
    for x in rest {
        match c.call_lambda(l, vec![acc.clone(), x.clone()], a.scope, a.span) {
            Ok(r) => acc = r,
            Err(Flow::Break(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(acc)
}

fn f_slice(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let n = match a.values.get(1) {
        Some(Value::Int(n)) if *n > 0 => *n as usize,
        _ => return Err(arg_err(c, a, "expects a positive slice size")),
    };
    let is_hash = matches!(v, Value::Hash(_));
    let elems: Vec<Value> = iteration_items(&v)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, x)| if is_hash { Value::Array(vec![k, x]) } else { x })
        .collect();
    let chunks: Vec<Value> = elems
        .chunks(n)
        .map(|ch| Value::Array(ch.to_vec()))
        .collect();
    match a.lambda {
        Some(l) => {
            // Puppet serves a chunk whole to a one-parameter lambda, else spread over exactly
            // `n` parameters, a short last chunk filled with undef ([] for a hash). A lambda
            // with an optional or captures-rest parameter (a negative arity) takes `n`.
            let serving = if l
                .params
                .iter()
                .any(|p| p.captures_rest || p.value.is_some())
            {
                n
            } else {
                l.params.len()
            };
            if serving == 0 {
                return Err(arg_err(
                    c,
                    a,
                    "block must define at least one parameter. Block has 0.",
                ));
            }
            if serving != 1 && serving != n {
                let names: Vec<&str> = l.params.iter().map(|p| p.name.as_str()).collect();
                let msg = format!(
                    "block must define one parameter, or the same number of parameters as the given size of the slice ({n}). Block has {serving}; {}",
                    names.join(", ")
                );
                return Err(arg_err(c, a, &msg));
            }
            let filler = if is_hash {
                Value::Array(vec![])
            } else {
                Value::Undef
            };
            for ch in chunks {
                let args = if serving > 1 {
                    let mut items = match ch {
                        Value::Array(items) => items,
                        other => vec![other],
                    };
                    items.resize(serving, filler.clone());
                    items
                } else {
                    vec![ch]
                };
                match c.call_lambda(l, args, a.scope, a.span) {
                    Ok(_) => {}
                    Err(Flow::Break(_)) => break,
                    Err(e) => return Err(e),
                }
            }
            Ok(v)
        }
        None => Ok(Value::Array(chunks)),
    }
}

fn f_with(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    c.call_lambda(l, a.values.clone(), a.scope, a.span)
}

fn f_then(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    if v.is_undef() {
        return Ok(Value::Undef);
    }
    c.call_lambda(l, vec![v], a.scope, a.span)
}

fn f_lest(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    if !v.is_undef() {
        return Ok(v);
    }
    c.call_lambda(l, vec![], a.scope, a.span)
}

fn f_any(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    let is_hash = matches!(v, Value::Hash(_));
    for (k, x) in iteration_items(&v).unwrap_or_default() {
        if c.call_lambda(l, lambda_args(l, is_hash, &k, &x), a.scope, a.span)?
            .truthy()
        {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn f_all(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    let is_hash = matches!(v, Value::Hash(_));
    for (k, x) in iteration_items(&v).unwrap_or_default() {
        if !c
            .call_lambda(l, lambda_args(l, is_hash, &k, &x), a.scope, a.span)?
            .truthy()
        {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn f_index(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    if let (Value::Str(s), None) = (&v, a.lambda) {
        // `string_index`: Ruby's `String#index`, the character offset of the first match.
        let at = match a.values.get(1) {
            Some(Value::Str(want)) => s.find(want.as_str()),
            Some(Value::Regex(re)) => re.match_spans(s, 0, false).first().map(|m| m.0),
            _ => None,
        };
        if matches!(a.values.get(1), Some(Value::Str(_) | Value::Regex(_))) {
            return Ok(at.map_or(Value::Undef, |b| Value::Int(s[..b].chars().count() as i64)));
        }
    }
    for (k, x) in iteration_items(&v).unwrap_or_default() {
        let hit = match (a.lambda, a.values.get(1)) {
            // One parameter gets the value (of a hash entry too), two the key and value.
            (Some(l), _) => {
                let args = if l.params.len() >= 2 {
                    vec![k.clone(), x.clone()]
                } else {
                    vec![x.clone()]
                };
                c.call_lambda(l, args, a.scope, a.span)?.truthy()
            }
            (None, Some(want)) => puppet_eq(&x, want),
            _ => false,
        };
        if hit {
            return Ok(k);
        }
    }
    Ok(Value::Undef)
}

fn f_step(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let n = match a.values.get(1) {
        Some(Value::Int(n)) if *n > 0 => *n as usize,
        _ => return Err(arg_err(c, a, "expects a positive step")),
    };
    let items = entries(&v).into_iter().step_by(n);
    match a.lambda {
        // With a block, Puppet's step calls it for every n-th element and returns nil.
        Some(l) => {
            each_with_lambda(c, a, l, items.collect())?;
            Ok(Value::Undef)
        }
        None => Ok(iterator_of(&v, items.collect())),
    }
}

fn f_return(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Return(first_arg(a), a.span))
}

fn f_next(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Next(first_arg(a), a.span))
}

fn f_break(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Break(a.span))
}

// ---- types ---------------------------------------------------------------------------------------

fn f_assert_type(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let t = match a.values.first() {
        Some(Value::Type(t)) => (**t).clone(),
        Some(Value::Str(s)) => {
            let s = s.clone();
            c.type_from_string(&s, a.span)?
        }
        _ => return Err(arg_err(c, a, "expects a Type")),
    };
    let v = a.values.get(1).cloned().unwrap_or(Value::Undef);
    if t.is_instance(&v) {
        return Ok(v);
    }
    if let Some(l) = a.lambda {
        let actual = Value::Type(Box::new(types::infer(&v)));
        return c.call_lambda(l, vec![Value::Type(Box::new(t)), actual], a.scope, a.span);
    }
    match types::mismatches(&t, &v).as_slice() {
        [one] => Err(arg_err(c, a, one)),
        // Several problems (a struct's), one per line as Puppet prints them.
        many => {
            let lines: Vec<String> = many.iter().map(|m| format!("{}(): {m}", a.name)).collect();
            Err(Flow::Err(
                c.runtime(format!(" {}", lines.join("\n  ")), a.span),
            ))
        }
    }
}

fn f_type(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let t = match a.values.get(1) {
        Some(Value::Str(m)) if m == "generalized" => types::infer_generic(&v),
        Some(Value::Str(m)) if m == "reduced" => types::infer_reduced(&v),
        _ => types::infer(&v),
    };
    Ok(Value::Type(Box::new(t)))
}

/// `strftime(timestamp, format[, timezone])`, and the legacy `strftime(format)` of now.
/// Only UTC is known: another time zone fails.
fn f_strftime(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (ts, fmt, tz) = match a.values.as_slice() {
        [Value::Timestamp(t), Value::Str(f), rest @ ..] => (*t, f.clone(), rest.first().cloned()),
        // A timespan formats with Puppet's timespan directives.
        [Value::Timespan(t), Value::Str(f)] => {
            return t.format(f).map(Value::Str).map_err(|e| arg_err(c, a, e));
        }
        [Value::Str(f), rest @ ..] => {
            // Puppet warns once per compile that this signature is deprecated.
            if c.warned_deprecations.insert("legacy_strftime".to_string()) {
                let file = c.sources.get(a.span.file);
                let line = file.map(|f| f.line_col(a.span.start as usize).0 as u32);
                let at = c.line_location(Some(a.span.file), line);
                c.log(
                    LogLevel::Warning,
                    format!("The argument signature (String format, [String timezone]) is deprecated for #strftime. See #strftime documentation and Timespan type for more info\n   {at}"),
                );
            }
            (
                super::values::value::Timestamp::at(c.loader.host().now()),
                f.clone(),
                rest.first().cloned(),
            )
        }
        _ => return Err(arg_err(c, a, "expects a Timestamp and a format")),
    };
    // Puppet's `Timestamp#format`: no zone or an empty one is UTC.
    let offset = match tz {
        Some(Value::Str(tz)) if !tz.is_empty() => match super::values::timezone::utc_offset(&tz) {
            // `convert_timezone`: whole minutes (Ruby's division rounds down).
            Some(off) => Some(off.div_euclid(60) * 60),
            None => {
                return Err(Flow::Err(
                    c.runtime(format!("Illegal timezone '{tz}'"), a.span),
                ))
            }
        },
        _ => None,
    };
    ts.strftime_in(&fmt, offset)
        .map(Value::Str)
        .map_err(|e| arg_err(c, a, e))
}

fn str_arg(c: &Compiler<'_>, a: &Args, i: usize) -> R<String> {
    match a.values.get(i) {
        Some(Value::Str(s)) => Ok(s.clone()),
        Some(other) => Err(arg_err(
            c,
            a,
            format!(
                "parameter {} expects a String value, got {}",
                i + 1,
                other.type_name()
            ),
        )),
        None => Err(arg_err(c, a, "expects more arguments")),
    }
}

fn f_split(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let s = str_arg(c, a, 0)?;
    let re = match a.values.get(1) {
        Some(Value::Str(p)) => Regex::new(p).ok(),
        Some(Value::Regex(r)) => Some(r.clone()),
        Some(Value::Type(t)) => match &**t {
            PType::Regexp(Some(p)) => Regex::new(p).ok(),
            _ => None,
        },
        _ => None,
    };
    let Some(re) = re else {
        return Err(arg_err(c, a, "expects a String or Regexp separator"));
    };
    let mut parts: Vec<Value> = if re.source.is_empty() {
        s.chars().map(|ch| Value::str(ch.to_string())).collect()
    } else {
        re.split(&s).into_iter().map(Value::Str).collect()
    };
    // Ruby's split drops trailing empty strings.
    while matches!(parts.last(), Some(Value::Str(x)) if x.is_empty()) {
        parts.pop();
    }
    Ok(Value::Array(parts))
}

fn f_join(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let sep = a.values.get(1).map(|v| v.to_display()).unwrap_or_default();
    match first_arg(a) {
        // Ruby's Array#join: nested arrays are joined too, each value as Ruby's to_s.
        Value::Array(items) => {
            fn flat<'v>(items: &'v [Value], out: &mut Vec<&'v Value>) {
                for v in items {
                    match v {
                        Value::Array(inner) => flat(inner, out),
                        other => out.push(other),
                    }
                }
            }
            let mut all = vec![];
            flat(&items, &mut all);
            Ok(Value::Str(
                all.into_iter()
                    .map(super::values::ruby_print::ruby_to_s)
                    .collect::<Vec<_>>()
                    .join(&sep),
            ))
        }
        other => Ok(Value::Str(other.to_display())),
    }
}

fn f_sprintf(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    // A 3.x function: Ruby's format() refuses a format that is not a String.
    let ruby = match a.values.first() {
        Some(Value::Int(_)) => Some("Integer"),
        Some(Value::Float(_)) => Some("Float"),
        Some(Value::Bool(true)) => Some("true"),
        Some(Value::Bool(false)) => Some("false"),
        Some(Value::Undef) => Some("nil"),
        Some(Value::Array(_)) => Some("Array"),
        Some(Value::Hash(_)) => Some("Hash"),
        _ => None,
    };
    if let Some(class) = ruby {
        let msg = format!("no implicit conversion of {class} into String");
        return Err(Flow::Err(c.runtime(msg, a.span)));
    }
    let fmt = str_arg(c, a, 0)?;
    strings::sprintf(&fmt, &a.values[1..])
        .map(Value::Str)
        .map_err(|m| Flow::Err(c.runtime(m, a.span)))
}

/// compare(a, b, [ignore_case]): -1, 0 or 1 for two numbers or two strings (case-insensitive
/// unless the third argument is false), with Puppet's compare.rb messages otherwise.
fn f_compare(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let x = a.values.first().cloned().unwrap_or(Value::Undef);
    let y = a.values.get(1).cloned().unwrap_or(Value::Undef);
    let numeric = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    let ord = match (&x, &y, a.values.get(2)) {
        (Value::Int(i), Value::Int(j), None) => Some(i.cmp(j)),
        (Value::Str(s), Value::Str(t), None | Some(Value::Bool(true))) => Some(
            s.bytes()
                .map(|b| b.to_ascii_lowercase())
                .cmp(t.bytes().map(|b| b.to_ascii_lowercase())),
        ),
        (Value::Str(s), Value::Str(t), Some(Value::Bool(false))) => {
            Some(s.as_bytes().cmp(t.as_bytes()))
        }
        (_, _, None) => numeric(&x)
            .zip(numeric(&y))
            .and_then(|(p, q)| p.partial_cmp(&q))
            .or_else(|| super::values::timespan::compare(&x, &y)),
        _ => None,
    };
    if let Some(o) = ord {
        return Ok(Value::Int(match o {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }));
    }
    let comparable = |v: &Value| matches!(v, Value::Int(_) | Value::Float(_) | Value::Str(_));
    let msg = if !comparable(&x) || !comparable(&y) {
        format!(
            "compare(): Non comparable type. Only values of the types Numeric, String, Semver, Timestamp and Timestamp can be compared. Got {} and {}",
            x.type_name(),
            y.type_name()
        )
    } else if a.values.len() > 2 && !(matches!(x, Value::Str(_)) && matches!(y, Value::Str(_))) {
        "compare(): The third argument (ignore case) can only be used when comparing strings".into()
    } else if a.values.len() > 3 {
        format!(
            "compare(): Accepts at most 3 arguments, got {}",
            a.values.len()
        )
    } else if let Some(v) = a.values.get(2) {
        format!(
            "compare(): The third argument (ignore case) must be a Boolean. Got {}",
            v.type_name()
        )
    } else {
        format!(
            "compare(): Can only compare values of the same type (or for Timestamp/Timespan also against Numeric). Got {} and {}",
            x.type_name(),
            y.type_name()
        )
    };
    Err(Flow::Err(c.runtime(msg, a.span)))
}

fn f_versioncmp(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut x = str_arg(c, a, 0)?;
    let mut y = str_arg(c, a, 1)?;
    if a.values.get(2) == Some(&Value::Bool(true)) {
        x = strings::version_without_trailing_zeroes(&x);
        y = strings::version_without_trailing_zeroes(&y);
    }
    Ok(Value::Int(match strings::versioncmp(&x, &y) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}

fn f_regsubst(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let target = first_arg(a);
    let pattern = match a.values.get(1) {
        Some(Value::Str(p)) => p.clone(),
        Some(Value::Regex(r)) => r.source.to_string(),
        _ => return Err(arg_err(c, a, "expects a pattern")),
    };
    let repl = a.values.get(2).map(|v| v.to_display()).unwrap_or_default();
    let flags = a.values.get(3).map(|v| v.to_display()).unwrap_or_default();
    let mut src = pattern;
    if flags.contains('I') {
        src = format!("(?i){src}");
    }
    if flags.contains('M') {
        src = format!("(?s){src}");
    }
    if flags.contains('E') {
        src = format!("(?x){src}");
    }
    let re = Regex::new(&src).map_err(|m| arg_err(c, a, m))?;
    let global = flags.contains('G');
    let rust_repl = strings::ruby_replacement(&repl, re.has_named_groups());
    let sub = |s: &str| -> String {
        if global {
            re.replace(s, &rust_repl, true)
        } else {
            re.replace(s, &rust_repl, false)
        }
    };
    Ok(match target {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| Value::Str(sub(&v.to_display())))
                .collect(),
        ),
        other => Value::Str(sub(&other.to_display())),
    })
}

fn f_match(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let re = match a.values.get(1) {
        Some(Value::Str(p)) => Regex::new(p).map_err(|m| arg_err(c, a, m))?,
        Some(Value::Regex(r)) => r.clone(),
        Some(Value::Type(t)) => match types::resolved(t) {
            PType::Regexp(Some(p)) => Regex::new(p).map_err(|m| arg_err(c, a, m))?,
            PType::Pattern(ps) if !ps.is_empty() => {
                Regex::new(&ps[0]).map_err(|m| arg_err(c, a, m))?
            }
            _ => return Err(arg_err(c, a, "expects a pattern")),
        },
        Some(
            other @ (Value::Int(_)
            | Value::Float(_)
            | Value::Bool(_)
            | Value::Undef
            | Value::Hash(_)
            | Value::Default),
        ) => {
            let msg = format!(
                "match() expects pattern of T, where T is String, Regexp, Regexp[r], Pattern[p], or Array[T]. Got {}",
                super::stdlib::ruby_class(other)
            );
            return Err(Flow::Err(c.runtime(msg, a.span)));
        }
        Some(_) => return Err(arg_err(c, a, "expects a pattern")),
        None => return Err(arg_err(c, a, "expects a pattern")),
    };
    let one = |s: &str| -> Value {
        match re.captures(s) {
            Some(groups) => Value::Array(groups),
            None => Value::Undef,
        }
    };
    Ok(match first_arg(a) {
        Value::Array(items) => Value::Array(items.iter().map(|v| one(&v.to_display())).collect()),
        other => one(&other.to_display()),
    })
}

/// What Ruby's `strip` removes.
fn ruby_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\0')
}

fn f_string_op(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let name = a.name.clone();
    fn apply(name: &str, v: &Value) -> Value {
        match v {
            Value::Str(s) => Value::Str(match name {
                "upcase" => s.to_uppercase(),
                "downcase" => s.to_lowercase(),
                "capitalize" => strings::ruby_capitalize(s),
                // Ruby's whitespace: ASCII blanks and NUL, not Unicode spaces.
                "strip" => s.trim_matches(ruby_space).to_string(),
                "lstrip" => s.trim_start_matches(ruby_space).to_string(),
                "rstrip" => s.trim_end_matches(ruby_space).to_string(),
                "chomp" => s
                    .strip_suffix("\r\n")
                    .or_else(|| s.strip_suffix('\n'))
                    .or_else(|| s.strip_suffix('\r'))
                    .unwrap_or(s)
                    .to_string(),
                "chop" => {
                    let mut t = s.clone();
                    if t.ends_with("\r\n") {
                        t.truncate(t.len() - 2);
                    } else {
                        t.pop();
                    }
                    t
                }
                _ => s.clone(),
            }),
            Value::Array(items) => Value::Array(items.iter().map(|x| apply(name, x)).collect()),
            // An iterator's elements, into an array (Puppet's `Iterable.on(x).map`).
            Value::Iterator(it) => Value::Array(it.items.iter().map(|x| apply(name, x)).collect()),
            Value::Hash(h) if name == "upcase" || name == "downcase" => Value::Hash(
                h.iter()
                    .map(|(k, x)| (apply(name, k), apply(name, x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    Ok(apply(&name, &first_arg(a)))
}

// ---- collections ---------------------------------------------------------------------------------

fn f_size(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Int(match first_arg(a) {
        Value::Array(x) => x.len() as i64,
        Value::Hash(h) => h.len() as i64,
        Value::Str(s) => s.chars().count() as i64,
        Value::Binary(b) => b.len() as i64,
        Value::Sensitive(_) => return Err(arg_err(c, a, "expects a Collection or String")),
        other => {
            return Err(arg_err(
                c,
                a,
                format!(
                    "expects a value of type Collection or String, got {}",
                    other.type_name()
                ),
            ))
        }
    }))
}

fn f_keys(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match first_arg(a) {
        Value::Hash(h) => Value::Array(h.keys().cloned().collect()),
        _ => Value::Array(vec![]),
    })
}

fn f_values(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match first_arg(a) {
        Value::Hash(h) => Value::Array(h.values().cloned().collect()),
        _ => Value::Array(vec![]),
    })
}

fn flatten_all(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(items) => items.iter().for_each(|x| flatten_all(x, out)),
        other => out.push(other.clone()),
    }
}

fn f_flatten(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for v in &a.values {
        flatten_all(v, &mut out);
    }
    Ok(Value::Array(out))
}

fn f_unique(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    // The identity of an element: the block's value for it, or the element itself.
    let key = |c: &mut Compiler<'_>, v: &Value| -> R<Value> {
        match a.lambda {
            Some(l) => c.call_lambda(l, vec![v.clone()], a.scope, a.span),
            None => Ok(v.clone()),
        }
    };
    // An iterator's elements are made unique as an array's (Puppet's unique of an Iterable).
    let v = match first_arg(a) {
        Value::Iterator(it) => Value::Array(it.items.clone()),
        other => other,
    };
    Ok(match v {
        Value::Array(items) => {
            let mut seen: Vec<Value> = vec![];
            let mut out: Vec<Value> = vec![];
            for x in items {
                let k = key(c, &x)?;
                if !seen.contains(&k) {
                    seen.push(k);
                    out.push(x);
                }
            }
            Value::Array(out)
        }
        Value::Str(s) => {
            let mut seen: Vec<Value> = vec![];
            let mut out = String::new();
            for ch in s.chars() {
                let k = key(c, &Value::str(ch.to_string()))?;
                if !seen.contains(&k) {
                    seen.push(k);
                    out.push(ch);
                }
            }
            Value::Str(out)
        }
        // Puppet's unique of a hash: the keys whose values (or block values) are the same,
        // grouped, each group with its distinct values.
        Value::Hash(h) => {
            let mut groups: IndexMap<Value, (Vec<Value>, Vec<Value>)> = IndexMap::new();
            for (k, v) in h.iter() {
                let id = key(c, v)?;
                let g = groups.entry(id).or_default();
                g.0.push(k.clone());
                if !g.1.contains(v) {
                    g.1.push(v.clone());
                }
            }
            Value::Hash(
                groups
                    .into_values()
                    .map(|(keys, values)| (Value::Array(keys), Value::Array(values)))
                    .collect(),
            )
        }
        other => other,
    })
}

fn natural_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => num_f64(a)
            .partial_cmp(&num_f64(b))
            .unwrap_or(Ordering::Equal),
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        _ => a.to_display().cmp(&b.to_display()),
    }
}

fn f_sort(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let Value::Array(items) = v else {
        if let Value::Str(s) = v {
            let mut chars: Vec<char> = s.chars().collect();
            chars.sort();
            return Ok(Value::Str(chars.into_iter().collect()));
        }
        return Err(arg_err(c, a, "expects an Array"));
    };
    match a.lambda {
        Some(l) => {
            let mut err = None;
            let mut keyed: Vec<Value> = items.clone();
            // A simple insertion sort so that lambda errors can be reported.
            let mut sorted: Vec<Value> = vec![];
            for x in keyed.drain(..) {
                let mut pos = sorted.len();
                for (i, y) in sorted.iter().enumerate() {
                    match c.call_lambda(l, vec![x.clone(), y.clone()], a.scope, a.span) {
                        Ok(Value::Int(n)) if n < 0 => {
                            pos = i;
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                }
                if let Some(e) = err.take() {
                    return Err(e);
                }
                sorted.insert(pos, x);
            }
            Ok(Value::Array(sorted))
        }
        None => match ruby_sort(items) {
            Ok(sorted) => Ok(Value::Array(sorted)),
            Err((x, y)) => Err(Flow::Err(c.runtime(
                format!(
                    "comparison of {} with {} failed",
                    super::stdlib::ruby_class(&x),
                    ruby_cmperr_name(&y)
                ),
                a.span,
            ))),
        },
    }
}

/// Ruby's `<=>` on Puppet values: numbers with numbers, strings with strings, arrays element
/// by element; anything else compares only when equal. `None` is Ruby's nil (not comparable).
pub(super) fn ruby_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            num_f64(a).partial_cmp(&num_f64(b))
        }
        (Value::Str(x), Value::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                match ruby_cmp(p, q)? {
                    Ordering::Equal => {}
                    o => return Some(o),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => (a == b).then_some(Ordering::Equal),
    }
}

/// How Ruby's "comparison of X with Y failed" names Y: immediates and floats by `inspect`,
/// other objects by their class.
fn ruby_cmperr_name(v: &Value) -> String {
    match v {
        Value::Undef | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Default => {
            super::stdlib::inspect(v)
        }
        other => super::stdlib::ruby_class(other).to_string(),
    }
}

/// Ruby's `Array#sort` as Puppet 7 runs it (Ruby's sort is the C library's merge sort: the
/// first half, then the second, then a stable merge), so that a pair that cannot be compared
/// is the same pair Puppet reports. Returns that pair as (left, right).
fn ruby_sort(mut items: Vec<Value>) -> Result<Vec<Value>, (Value, Value)> {
    fn msort(v: &mut [Value], tmp: &mut Vec<Value>) -> Result<(), (Value, Value)> {
        let n = v.len();
        if n <= 1 {
            return Ok(());
        }
        let n1 = n / 2;
        msort(&mut v[..n1], tmp)?;
        msort(&mut v[n1..], tmp)?;
        tmp.clear();
        let (mut i, mut j) = (0, n1);
        while i < n1 && j < n {
            match ruby_cmp(&v[i], &v[j]) {
                Some(Ordering::Greater) => {
                    tmp.push(v[j].clone());
                    j += 1;
                }
                Some(_) => {
                    tmp.push(v[i].clone());
                    i += 1;
                }
                None => return Err((v[i].clone(), v[j].clone())),
            }
        }
        tmp.extend(v[i..n1].iter().cloned());
        tmp.extend(v[j..].iter().cloned());
        for (slot, x) in v.iter_mut().zip(tmp.drain(..)) {
            *slot = x;
        }
        Ok(())
    }
    let mut tmp = Vec::with_capacity(items.len());
    msort(&mut items, &mut tmp)?;
    Ok(items)
}

fn f_min(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    min_max(c, a, false)
}

fn f_max(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    min_max(c, a, true)
}

/// min() and max() as Puppet 7.23's dispatches do: numbers by value; strings as strings,
/// except two that both look like numbers (compared as numbers, with a deprecation
/// warning); other mixes by their string forms (another warning); with a block, by what
/// it returns. One array argument stands for its elements. Ties keep the first.
fn min_max(c: &mut Compiler<'_>, a: &mut Args, max: bool) -> R<Value> {
    let items: Vec<Value> = match a.values.as_slice() {
        [Value::Array(x)] => x.clone(),
        other => other.to_vec(),
    };
    let Some(first) = items.first().cloned() else {
        return Err(arg_err(c, a, "Wrong number of arguments need at least one"));
    };
    let numbers = items
        .iter()
        .all(|v| matches!(v, Value::Int(_) | Value::Float(_)));
    let strings = items.iter().all(|v| matches!(v, Value::Str(_)));
    let want = if max {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let mut best = first;
    for x in items.into_iter().skip(1) {
        let ord = match a.lambda {
            Some(l) => {
                let r = c.call_lambda(l, vec![x.clone(), best.clone()], a.scope, a.span)?;
                match r {
                    Value::Int(n) => n.cmp(&0),
                    Value::Float(f) => f.partial_cmp(&0.0).unwrap_or(Ordering::Equal),
                    _ => Ordering::Equal,
                }
            }
            None if numbers => natural_cmp(&x, &best),
            None => {
                let (xs, bs) = (
                    super::values::ruby_print::ruby_to_s(&x),
                    super::values::ruby_print::ruby_to_s(&best),
                );
                match (numeric_text(&xs), numeric_text(&bs)) {
                    (Some(p), Some(q)) => {
                        deprecation(c, &a.name, "numeric_coerce_string", "String to Numeric");
                        p.partial_cmp(&q).unwrap_or(Ordering::Equal)
                    }
                    _ => {
                        if !strings {
                            deprecation(c, &a.name, "string_coerce_any", "Any to String");
                        }
                        xs.as_bytes().cmp(bs.as_bytes())
                    }
                }
            }
        };
        if ord == want {
            best = x;
        }
    }
    Ok(best)
}

/// A string min() and max() compare as a number (`-?\d+([._eE]\d+)?`), as Ruby's to_f
/// reads it.
fn numeric_text(s: &str) -> Option<f64> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, rest) = match body.find(['.', '_', 'e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !rest.is_none_or(digits) {
        return None;
    }
    s.replace('_', "").parse().ok()
}

/// Puppet's once-per-run deprecation warning of min() and max()'s conversions.
fn deprecation(c: &mut Compiler<'_>, name: &str, key: &str, what: &str) {
    warn_once(
        c,
        format!("{name}_function_{key}"),
        format!(
            "The {name}() function's auto conversion of {what} is deprecated - change to convert input before calling, or use lambda"
        ),
    );
}

/// A deprecation warning logged once per compile (`key` as Puppet's `warn_once`), without
/// a location as Puppet logs it.
pub(super) fn warn_once(c: &mut Compiler<'_>, key: String, message: String) {
    if c.warned_deprecations.insert(key) {
        c.log(
            super::LogLevel::Warning,
            format!("{message}\n   (file & line not available)"),
        );
    }
}

fn numeric_arg(c: &Compiler<'_>, a: &Args) -> R<Value> {
    match first_arg(a) {
        v @ (Value::Int(_) | Value::Float(_)) => Ok(v),
        Value::Str(s) => parse_number(&s).ok_or_else(|| arg_err(c, a, "expects a Numeric value")),
        other => Err(arg_err(
            c,
            a,
            format!("expects a Numeric value, got {}", other.type_name()),
        )),
    }
}

/// The String dispatch of abs(), floor() and ceiling(): Puppet's deprecated conversion,
/// with its warning (once) and its messages for strings that are not numbers.
fn numeric_from_string(c: &mut Compiler<'_>, a: &Args) -> R<Option<Value>> {
    let Some(Value::Str(s)) = a.values.first() else {
        return Ok(None);
    };
    let name = a.name.as_str();
    let target = if name == "abs" { "Numeric" } else { "Float" };
    warn_once(
        c,
        format!("{name}_function_numeric_coerce_string"),
        format!(
            "The {name}() function's auto conversion of String to {target} is deprecated - change to convert input before calling"
        ),
    );
    if name == "abs" {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let body = s.strip_prefix('-').unwrap_or(s);
        let v = match body.split_once('.') {
            Some((i, f)) if digits(i) && digits(f) => s.parse::<f64>().ok().map(Value::Float),
            None if digits(body) => s.parse::<i64>().ok().map(Value::Int),
            _ => None,
        };
        return match v {
            Some(v) => Ok(Some(v)),
            None => Err(Flow::Err(c.runtime(
                "abs(): Requires float or integer to work with - was given non decimal string",
                a.span,
            ))),
        };
    }
    match parse_number(s.trim()) {
        Some(v) => Ok(Some(v)),
        None => Err(Flow::Err(c.runtime(
            format!("{name}(): cannot convert given value to a floating point value."),
            a.span,
        ))),
    }
}

fn f_abs(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if let Some(v) = numeric_from_string(c, a)? {
        return Ok(match v {
            Value::Int(i) => Value::Int(i.wrapping_abs()),
            Value::Float(f) => Value::Float(f.abs()),
            v => v,
        });
    }
    Ok(match numeric_arg(c, a)? {
        Value::Int(i) => Value::Int(i.wrapping_abs()),
        Value::Float(f) => Value::Float(f.abs()),
        v => v,
    })
}

fn f_round(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match numeric_arg(c, a)? {
        Value::Float(f) => Value::Int(f.round() as i64),
        v => v,
    })
}

fn f_floor(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = match numeric_from_string(c, a)? {
        Some(Value::Int(i)) => Value::Float(i as f64),
        Some(v) => v,
        None => numeric_arg(c, a)?,
    };
    Ok(match v {
        Value::Float(f) => Value::Int(f.floor() as i64),
        v => v,
    })
}

fn f_ceiling(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = match numeric_from_string(c, a)? {
        Some(Value::Int(i)) => Value::Float(i as f64),
        Some(v) => v,
        None => numeric_arg(c, a)?,
    };
    Ok(match v {
        Value::Float(f) => Value::Int(f.ceil() as i64),
        v => v,
    })
}

fn f_empty(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(match first_arg(a) {
        Value::Array(x) => x.is_empty(),
        Value::Hash(h) => h.is_empty(),
        Value::Str(s) => s.is_empty(),
        Value::Binary(b) => b.is_empty(),
        Value::Sensitive(inner) if matches!(*inner, Value::Str(_)) => {
            matches!(*inner, Value::Str(ref s) if s.is_empty())
        }
        Value::Undef => true,
        Value::Int(_) | Value::Float(_) => {
            // empty.rb: a deprecation warning once per call site.
            let file = c.sources.get(a.span.file);
            let line = file.map(|f| f.line_col(a.span.start as usize).0);
            if let (Some(f), Some(line)) = (file, line) {
                let key = format!("empty-from-{}-{line}", f.name);
                if c.warned_deprecations.insert(key) {
                    let at = c.line_location(Some(a.span.file), Some(line as u32));
                    c.log(
                        super::LogLevel::Warning,
                        format!(
                            "Calling function empty() with Numeric value is deprecated.\n   {at}"
                        ),
                    );
                }
            }
            false
        }
        _ => false,
    }))
}

/// `dig(data, keys...)`: undef as soon as data or a key is undef; an error on a scalar, or on
/// an array with a non-integer key (Puppet's SLICE_ERROR messages, with the path walked).
fn f_dig(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let keys = &a.values[1.min(a.values.len())..];
    dig_values(first_arg(a), keys).map_err(|e| Flow::Err(c.runtime(e.msg, a.span)))
}

/// Puppet's `dig` of `keys` into `data`; an error is Puppet's `SLICE_ERROR` with its issue
/// code, message and details.
fn dig_values(data: Value, keys: &[Value]) -> Result<Value, super::values::value::ErrorValue> {
    let slice_error = |code: &str, msg: String, walked: &[Value], (key, t): (&str, PType)| {
        let details: IndexMap<Value, Value> = [
            (Value::str("walked_path"), Value::Array(walked.to_vec())),
            (Value::str(key), Value::Type(Box::new(t))),
        ]
        .into_iter()
        .collect();
        super::values::value::ErrorValue {
            msg,
            kind: Some("SLICE_ERROR".to_string()),
            details: Some(Value::Hash(details.into())),
            issue_code: Some(code.to_string()),
        }
    };
    let mut cur = data;
    let mut walked: Vec<Value> = vec![];
    let path = |walked: &[Value]| super::ruby_inspect(&Value::Array(walked.to_vec()));
    for k in keys {
        if cur.is_undef() || k.is_undef() {
            return Ok(Value::Undef);
        }
        if !matches!(cur, Value::Array(_) | Value::Hash(_)) {
            let msg = format!(
                "The given data does not contain a Collection at {}, got '{}'",
                path(&walked),
                types::infer(&cur)
            );
            let t = ("value_type", types::infer(&cur));
            return Err(slice_error("EXPECTED_COLLECTION", msg, &walked, t));
        }
        walked.push(k.clone());
        cur = match (&cur, k) {
            (Value::Hash(h), k) => h.get(k).cloned().unwrap_or(Value::Undef),
            (Value::Array(x), Value::Int(i)) => {
                let idx = if *i < 0 { x.len() as i64 + i } else { *i };
                usize::try_from(idx)
                    .ok()
                    .and_then(|i| x.get(i).cloned())
                    .unwrap_or(Value::Undef)
            }
            (_, k) => {
                let msg = format!(
                    "The given data requires an Integer index at {}, got '{}'",
                    path(&walked),
                    types::infer(k).generalize()
                );
                let t = ("index_type", types::infer(k).generalize());
                return Err(slice_error("EXPECTED_INTEGER_INDEX", msg, &walked, t));
            }
        };
    }
    Ok(cur)
}

fn f_get(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let path = a.values.get(1).map(|v| v.to_display()).unwrap_or_default();
    let value = first_arg(a);
    let default = a.values.get(2).cloned().unwrap_or(Value::Undef);
    get_path(c, a, value, &path, default)
}

/// `get`'s navigation of a dotted `path` into `value` (`getvar`'s too): the default for
/// undef; a navigation error goes to the block as an `Error` when there is one.
fn get_path(c: &mut Compiler<'_>, a: &Args, value: Value, path: &str, default: Value) -> R<Value> {
    if value.is_undef() {
        return Ok(default);
    }
    if path.is_empty() {
        return Ok(value);
    }
    let Some(segments) = dotted_segments(path) else {
        return Err(Flow::Err(
            c.runtime("Syntax error in dotted-navigation string", a.span),
        ));
    };
    match dig_values(value, &segments) {
        Ok(v) if v.is_undef() => Ok(default),
        Ok(v) => Ok(v),
        Err(e) => match a.lambda {
            Some(l) => c.call_lambda(l, vec![Value::Error(Box::new(e))], a.scope, a.span),
            None => Err(Flow::Err(c.runtime(e.msg, a.span))),
        },
    }
}

/// Puppet's `getvar('name.path', default)`: a variable (qualified or not) read with `get`'s
/// navigation after the first dot; an unknown variable gives the default.
pub(super) fn f_getvar(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    const NAME: &str = r"\A(?:::)?(?:[a-z]\w*::)*[a-z_]\w*(?:\.|\Z)";
    let text = match a.values.first() {
        Some(Value::Str(s)) => s.clone(),
        other => {
            let got = other.map(Value::type_name).unwrap_or_default();
            return Err(Flow::Err(c.runtime(
                format!("'getvar' parameter 'get_string' expects a match for Pattern[/{NAME}/], got {got}"),
                a.span,
            )));
        }
    };
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    // `(::)?([a-z]\w*::)*[a-z_]\w*` then a dot or the end.
    let mut i = if text.starts_with("::") { 2 } else { 0 };
    let end = loop {
        let start = i;
        if !bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_lowercase() || *b == b'_')
        {
            break None;
        }
        while bytes.get(i).copied().is_some_and(word) {
            i += 1;
        }
        if text[i..].starts_with("::") && bytes[start] != b'_' {
            i += 2;
            continue;
        }
        break matches!(bytes.get(i), None | Some(b'.')).then_some(i);
    };
    let Some(end) = end else {
        return Err(Flow::Err(c.runtime(
            "'getvar' The given string does not start with a valid variable name",
            a.span,
        )));
    };
    let default = a.values.get(1).cloned().unwrap_or(Value::Undef);
    let value = c.quiet_var(&text[..end], a.scope).unwrap_or(Value::Undef);
    let path = text.get(end + 1..).unwrap_or("");
    get_path(c, a, value, path, default)
}

/// Puppet's `Error.new`: a message and optional kind, details and issue code, given in
/// that order or as a hash of `msg`, `kind`, `details`, `issue_code`.
fn new_error(args: &[Value]) -> Result<Value, String> {
    let named = match args {
        [Value::Hash(h)] => h.clone(),
        _ => ["msg", "kind", "details", "issue_code"]
            .iter()
            .zip(args)
            .map(|(k, v)| (Value::str(*k), v.clone()))
            .collect::<IndexMap<_, _>>()
            .into(),
    };
    if args.is_empty() || args.len() > 4 {
        return Err(format!(
            "'new_Error' expects between 1 and 4 arguments, got {}",
            if args.is_empty() {
                "none".to_string()
            } else {
                args.len().to_string()
            }
        ));
    }
    let text = |k: &str| {
        match named.get(&Value::str(k)) {
        None | Some(Value::Undef) => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "Error initializer has wrong type, entry '{k}' expects a value of type Undef or String, got {}",
            other.type_name()
        )),
    }
    };
    let msg = text("msg")?.ok_or_else(|| {
        "Error initializer has wrong type, expects a value for key 'msg'".to_string()
    })?;
    let details = match named.get(&Value::str("details")) {
        None | Some(Value::Undef) => None,
        Some(h @ Value::Hash(_)) => Some(h.clone()),
        Some(other) => {
            return Err(format!(
                "Error initializer has wrong type, entry 'details' expects a value of type Undef or Hash, got {}",
                other.type_name()
            ))
        }
    };
    Ok(Value::Error(Box::new(super::values::value::ErrorValue {
        msg,
        kind: text("kind")?,
        details,
        issue_code: text("issue_code")?,
    })))
}

/// Puppet's `split_key` of a dotted path: segments between dots, quoted ones (`"a.b"`,
/// `'a.b'`) taken as they are, numbers as integers; `None` for a syntax error.
fn dotted_segments(path: &str) -> Option<Vec<Value>> {
    let mut out = vec![];
    let mut rest = path;
    loop {
        let trimmed = rest.trim_start();
        let (seg, after) = match trimmed.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let close = trimmed[1..].find(q)? + 1;
                if close == 1 {
                    return None;
                }
                (
                    Value::str(&trimmed[1..close]),
                    trimmed[close + 1..].trim_start(),
                )
            }
            _ => {
                let end = trimmed.find(['.', '"', '\'']).unwrap_or(trimmed.len());
                let raw = trimmed[..end].trim();
                if raw.is_empty() {
                    return None;
                }
                let digits = raw.strip_prefix(['+', '-']).unwrap_or(raw);
                let seg = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    Value::Int(raw.parse().ok()?)
                } else {
                    Value::str(raw)
                };
                (seg, &trimmed[end..])
            }
        };
        out.push(seg);
        match after.strip_prefix('.') {
            Some(r) => rest = r,
            None if after.is_empty() => return Some(out),
            None => return None,
        }
    }
}

fn f_delete(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let what = a.values.get(1).cloned().unwrap_or(Value::Undef);
    let drop = flatten_values(&what);
    Ok(match first_arg(a) {
        Value::Array(x) => Value::Array(x.into_iter().filter(|v| !drop.contains(v)).collect()),
        Value::Hash(h) => Value::Hash(h.into_iter().filter(|(k, _)| !drop.contains(k)).collect()),
        Value::Str(s) => Value::Str(
            drop.iter()
                .fold(s, |acc, d| acc.replace(&d.to_display(), "")),
        ),
        other => other,
    })
}

fn f_merge(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if let Some(l) = a.lambda {
        return merge_with_block(c, a, l);
    }
    let mut out = IndexMap::new();
    for v in &a.values {
        if let Value::Hash(h) = v {
            for (k, x) in h {
                out.insert(k.clone(), x.clone());
            }
        }
    }
    Ok(Value::Hash(out.into()))
}

/// stdlib's `merge(iterable) |$memo, $value|` (each element) and `|$memo, $key, $value|`
/// (a hash's pairs, an array's indexes): the hashes the block returns merged in turn.
fn merge_with_block(c: &mut Compiler<'_>, a: &Args, l: &Lambda) -> R<Value> {
    let arity = l.params.len();
    if !(2..=3).contains(&arity) {
        return Err(arg_err(c, a, "expects a block with 2 or 3 parameters"));
    }
    let mut acc: IndexMap<Value, Value> = IndexMap::new();
    for it in &a.values {
        let pairs: Vec<(Value, Value)> = match it {
            Value::Hash(h) => h.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Value::Array(xs) => xs
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i64), v.clone()))
                .collect(),
            other => {
                return Err(arg_err(
                    c,
                    a,
                    format!(
                        "expects an Iterable value, got {}",
                        super::types::infer(other).generalize()
                    ),
                ))
            }
        };
        let is_hash = matches!(it, Value::Hash(_));
        for (k, v) in pairs {
            let memo = Value::Hash(acc.clone().into());
            let args = match (arity, is_hash) {
                (3, _) => vec![memo, k, v],
                (_, true) => vec![memo, Value::Array(vec![k, v])],
                _ => vec![memo, v],
            };
            if let Value::Hash(h) = c.call_lambda(l, args, a.scope, a.span)? {
                for (k, v) in h.iter() {
                    acc.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Ok(Value::Hash(acc.into()))
}

fn f_concat(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for v in &a.values {
        match v {
            Value::Array(x) => out.extend(x.iter().cloned()),
            other => out.push(other.clone()),
        }
    }
    Ok(Value::Array(out))
}

fn f_member(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let hay = first_arg(a);
    let needle = a.values.get(1).cloned().unwrap_or(Value::Undef);
    Ok(Value::Bool(match (&hay, &needle) {
        (Value::Array(x), Value::Array(n)) => n.iter().all(|v| x.contains(v)),
        (Value::Array(x), n) => x.contains(n),
        _ => false,
    }))
}

fn f_has_key(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(match (first_arg(a), a.values.get(1)) {
        (Value::Hash(h), Some(k)) => h.contains_key(k),
        _ => false,
    }))
}

fn f_is_string(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(matches!(first_arg(a), Value::Str(_))))
}

fn f_pick(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    a.values
        .iter()
        .find(|v| !v.is_undef() && !matches!(v, Value::Str(s) if s.is_empty()))
        .cloned()
        .ok_or_else(|| arg_err(c, a, "must receive at least one non empty value"))
}

fn f_pick_default(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(a.values
        .iter()
        .find(|v| !v.is_undef() && !matches!(v, Value::Str(s) if s.is_empty()))
        .cloned()
        .or_else(|| a.values.last().cloned())
        .unwrap_or(Value::Undef))
}

fn f_str2bool(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match first_arg(a) {
        Value::Bool(b) => Value::Bool(b),
        v => Value::Bool(matches!(
            v.to_display().to_lowercase().as_str(),
            "1" | "t" | "y" | "true" | "yes"
        )),
    })
}

fn f_any2array(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match a.values.as_slice() {
        [] => Value::Array(vec![]),
        [Value::Array(x)] => Value::Array(x.clone()),
        [Value::Hash(h)] => {
            Value::Array(h.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect())
        }
        other => Value::Array(other.to_vec()),
    })
}

/// stdlib's `range(start, stop[, step])` or `range('a..e')`/`'a...e'`/`'a-e'`: integers
/// when the start is all digits, else Ruby's string range (`succ`, as `'host01'` to
/// `'host04'`); every `step`-th element, at most a million.
fn f_range(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (start, stop, step, exclusive) = match a.values.as_slice() {
        [] => return Err(arg_err(c, a, "Wrong number of arguments given (0 for 1)")),
        [one] => {
            let text = one.to_display();
            let Some((x, op, y)) = split_range(&text) else {
                let msg = if text.is_empty() {
                    format!("Unknown range format: {text}")
                } else {
                    format!("Unable to compute range from the value: {text}")
                };
                return Err(arg_err(c, a, msg));
            };
            (Value::str(x), Value::str(y), 1, op == "...")
        }
        [x, y, rest @ ..] => {
            let step = match rest.first() {
                None | Some(Value::Undef) => 1,
                Some(Value::Int(i)) => i.unsigned_abs(),
                Some(Value::Float(f)) => f.trunc().abs() as u64,
                Some(v) => strings::ruby_to_i(&v.to_display()).unsigned_abs(),
            };
            if step == 0 {
                return Err(arg_err(
                    c,
                    a,
                    "3rd arg (step size) must be a non zero integer (e.g. 1 or -1)",
                ));
            }
            (x.clone(), y.clone(), step, false)
        }
    };
    let step = usize::try_from(step).unwrap_or(usize::MAX);
    let limit = MAX_ITEMS as usize;
    let (from, to) = (start.to_display(), stop.to_display());
    if !from.is_empty() && from.bytes().all(|b| b.is_ascii_digit()) {
        let (lo, hi) = (
            strings::ruby_to_i(&from) as i128,
            strings::ruby_to_i(&to) as i128,
        );
        let hi = if exclusive { hi - 1 } else { hi };
        let mut out = vec![];
        let mut i = lo;
        while i <= hi && out.len() < limit {
            out.push(Value::Int(i as i64));
            i += step as i128;
        }
        return Ok(Value::Array(out));
    }
    let all = ruby_str_upto(&from, &to, exclusive, limit.saturating_mul(step.min(limit)));
    Ok(Value::Array(
        all.into_iter()
            .step_by(step)
            .take(limit)
            .map(Value::Str)
            .collect(),
    ))
}

/// `'a..e'`, `'a...e'` or `'a-e'` (word characters around the operator).
fn split_range(s: &str) -> Option<(&str, &str, &str)> {
    let word = |t: &str| !t.is_empty() && t.chars().all(|ch| ch.is_alphanumeric() || ch == '_');
    for op in ["...", "..", "-"] {
        if let Some((x, y)) = s.split_once(op) {
            if word(x) && word(y) {
                return Some((x, op, y));
            }
        }
    }
    None
}

/// Ruby's `String#succ`: the rightmost letter or digit goes up, carrying leftwards
/// (`'az'` -> `'ba'`, `'zz'` -> `'aaa'`, `'a9'` -> `'b0'`); a string without letters or
/// digits increments its last character.
fn ruby_succ(s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let Some(mut i) = chars.iter().rposition(|ch| ch.is_ascii_alphanumeric()) else {
        let last = chars.len() - 1;
        chars[last] = char::from_u32(chars[last] as u32 + 1).unwrap_or(chars[last]);
        return chars.into_iter().collect();
    };
    loop {
        let (next, carry, first) = match chars[i] {
            'z' => ('a', true, 'a'),
            'Z' => ('A', true, 'A'),
            '9' => ('0', true, '1'),
            ch => (char::from_u32(ch as u32 + 1).unwrap_or(ch), false, ch),
        };
        chars[i] = next;
        if !carry {
            break;
        }
        // Carry into the next letter or digit to the left, else insert one.
        match chars[..i].iter().rposition(|ch| ch.is_ascii_alphanumeric()) {
            Some(j) => i = j,
            None => {
                chars.insert(i, first);
                break;
            }
        }
    }
    chars.into_iter().collect()
}

/// Ruby's `String#upto` (what a string `Range` iterates): from `from` by `succ` to `to`,
/// none when `from` sorts after `to`; stops when the string outgrows `to`. At most `limit`.
fn ruby_str_upto(from: &str, to: &str, exclusive: bool, limit: usize) -> Vec<String> {
    let mut out = vec![];
    // One character each: the characters between.
    let (mut fc, mut tc) = (from.chars(), to.chars());
    if let (Some(f), None, Some(t), None) = (fc.next(), fc.next(), tc.next(), tc.next()) {
        if f.is_ascii() && t.is_ascii() {
            let end = if exclusive { t as u32 } else { t as u32 + 1 };
            return (f as u32..end)
                .filter_map(char::from_u32)
                .take(limit)
                .map(String::from)
                .collect();
        }
    }
    if from > to || (exclusive && from == to) {
        return out;
    }
    let mut cur = from.to_string();
    while out.len() < limit {
        let next = ruby_succ(&cur);
        if exclusive && cur == to {
            break;
        }
        let done = cur == to;
        out.push(cur);
        if done || next.len() > to.len() || next.is_empty() {
            break;
        }
        cur = next;
    }
    out
}

fn f_sum(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut acc = Value::Int(0);
    if let Value::Array(items) = first_arg(a) {
        for x in items {
            acc = match (&acc, &x) {
                (Value::Int(p), Value::Int(q)) => Value::Int(p + q),
                _ => Value::Float(num_f64(&acc) + num_f64(&x)),
            };
        }
    }
    Ok(acc)
}

fn f_hash(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut h = IndexMap::new();
    if let Value::Array(items) = first_arg(a) {
        for ch in items.chunks(2) {
            h.insert(ch[0].clone(), ch.get(1).cloned().unwrap_or(Value::Undef));
        }
    }
    Ok(Value::Hash(h.into()))
}

fn f_zip(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match (first_arg(a), a.values.get(1)) {
        (Value::Array(x), Some(Value::Array(y))) => Value::Array(
            x.iter()
                .enumerate()
                .map(|(i, v)| {
                    Value::Array(vec![v.clone(), y.get(i).cloned().unwrap_or(Value::Undef)])
                })
                .collect(),
        ),
        _ => Value::Array(vec![]),
    })
}

fn f_convert_to(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let t = a.values.get(1).cloned().unwrap_or(Value::Undef);
    let mut a2 = Args {
        name: "new".into(),
        values: [t, v]
            .into_iter()
            .chain(a.values.iter().skip(2).cloned())
            .collect(),
        lambda: None,
        scope: a.scope,
        span: a.span,
    };
    let r = f_new(c, &mut a2)?;
    // The block, if any, gets the converted value (whatever `new` did).
    match a.lambda {
        Some(l) => c.call_lambda(l, vec![r], a.scope, a.span),
        None => Ok(r),
    }
}

// ---- resources -----------------------------------------------------------------------------------

fn f_create_resources(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    // `@type` declares virtual resources, `@@type` exported ones (as `@type { .. }` does).
    let (mut virtual_, mut exported) = (false, false);
    let type_name = match first_arg(a) {
        Value::Str(s) => {
            let s = if let Some(rest) = s.strip_prefix("@@") {
                (virtual_, exported) = (true, true);
                rest
            } else if let Some(rest) = s.strip_prefix('@') {
                virtual_ = true;
                rest
            } else {
                s.as_str()
            };
            s.trim_colons().to_lowercase()
        }
        Value::Type(t) => match *t {
            PType::Resource(Some(n), None) => n.to_lowercase(),
            _ => return Err(arg_err(c, a, "expects a resource type")),
        },
        _ => return Err(arg_err(c, a, "expects a resource type")),
    };
    let Some(Value::Hash(instances)) = a.values.get(1).cloned() else {
        return Err(arg_err(c, a, "expects a Hash"));
    };
    let defaults = match a.values.get(2) {
        Some(Value::Hash(h)) => h.clone(),
        _ => Default::default(),
    };
    // Each instance's parameters are merged into the defaults with Ruby's `Hash#merge`.
    if let Some(v) = instances.values().find(|v| !matches!(v, Value::Hash(_))) {
        let what = match v {
            Value::Undef => "nil",
            Value::Bool(true) => "true",
            Value::Bool(false) => "false",
            other => super::stdlib::ruby_class(other),
        };
        return Err(Flow::Err(c.runtime(
            format!("no implicit conversion of {what} into Hash"),
            a.span,
        )));
    }
    let to_attrs =
        |h: &IndexMap<Value, Value>, span: Span| -> Vec<super::resources::catalog_ops::AttrValue> {
            let mut out: Vec<super::resources::catalog_ops::AttrValue> = defaults
                .iter()
                .filter(|(k, _)| !h.contains_key(*k))
                .map(|(k, v)| super::resources::catalog_ops::AttrValue {
                    name: k.to_display(),
                    value: v.clone(),
                    append: false,
                    span,
                })
                .collect();
            out.extend(
                h.iter()
                    .map(|(k, v)| super::resources::catalog_ops::AttrValue {
                        name: k.to_display(),
                        value: v.clone(),
                        append: false,
                        span,
                    }),
            );
            out
        };
    if type_name == "class" {
        for (title, params) in &instances {
            let empty = IndexMap::new();
            let p = match params {
                Value::Hash(h) => h,
                _ => &empty,
            };
            c.declare_class(&title.to_display(), &to_attrs(p, a.span), a.scope, a.span)?;
        }
        return Ok(Value::Undef);
    }
    let Some(kind) = c.resolve_resource_type(&type_name) else {
        c.hint_type(&type_name, a.span);
        return Err(Flow::Err(
            c.runtime(format!("Unknown resource type: '{type_name}'"), a.span),
        ));
    };
    for (title, params) in &instances {
        let empty = IndexMap::new();
        let p = match params {
            Value::Hash(h) => h,
            _ => &empty,
        };
        let mut attrs = to_attrs(p, a.span);
        // A title that is not a string: Puppet's catalog then also carries the instance's
        // `name` ('5000' beside the title 5000, which it does not count as equal).
        if !matches!(title, Value::Str(_))
            && matches!(kind, super::resources::catalog_ops::TypeKind::Define(_))
            && !attrs.iter().any(|x| x.name == "name")
        {
            attrs.push(super::resources::catalog_ops::AttrValue {
                name: "name".to_string(),
                value: Value::Str(title.to_display()),
                append: false,
                span: a.span,
            });
        }
        c.untagged_title = !matches!(title, Value::Str(_));
        let declared = c.declare_resource(
            &type_name,
            &kind,
            &title.to_display(),
            attrs,
            a.scope,
            a.span,
            virtual_,
            exported,
        );
        c.untagged_title = false;
        declared?;
    }
    Ok(Value::Undef)
}

// ---- templates and data ----------------------------------------------------------------------------

/// Puppet's file search (`Puppet::Parser::Files.find_file`): an absolute path as it is,
/// `mod/path` in the module's `files/` folder. Returns the path and the text.
fn find_module_file(c: &Compiler<'_>, spec: &str) -> Option<(String, String)> {
    let host = c.loader.host();
    if spec.starts_with('/') {
        return host.read_file(spec).ok().map(|t| (spec.to_string(), t));
    }
    let (module, rest) = spec.split_once('/')?;
    let (display, text) = c.loader.load(module, &format!("files/{rest}"))?;
    let path = host.canonical_path(&display).unwrap_or(display);
    Some((path, text))
}

/// The file arguments of `file` and `find_file`: strings, or arrays of strings.
fn file_specs(a: &Args) -> Vec<String> {
    let mut out = vec![];
    for v in &a.values {
        match v {
            Value::Array(items) => out.extend(items.iter().map(Value::to_display)),
            other => out.push(other.to_display()),
        }
    }
    out
}

/// `file(spec, ...)`: the text of the first file found.
fn f_file(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let specs = file_specs(a);
    match specs.iter().find_map(|s| find_module_file(c, s)) {
        Some((_, text)) => Ok(Value::Str(text)),
        None => Err(Flow::Err(c.runtime(
            format!("Could not find any files from {}", specs.join(", ")),
            a.span,
        ))),
    }
}

/// `binary_file(path)`: an absolute file's or a module's file's (`module/file`) bytes as a
/// Binary. The loader reads text, so a file that is not UTF-8 is not found.
fn f_binary_file(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let spec = first_arg(a).to_display();
    match find_module_file(c, &spec) {
        Some((_, text)) => Ok(Value::Binary(text.into_bytes().into())),
        None => Err(Flow::Err(c.runtime(
            format!("binary_file(): The given file '{spec}' does not exist"),
            a.span,
        ))),
    }
}

/// `find_file(spec, ...)`: the path of the first file found, or undef.
fn f_find_file(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let specs = file_specs(a);
    Ok(specs
        .iter()
        .find_map(|s| find_module_file(c, s))
        .map_or(Value::Undef, |(path, _)| Value::Str(path)))
}

fn f_inline_epp(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let text = str_arg(c, a, 0)?;
    let params = a.values.get(1).cloned();
    // An inline template closes over the calling scope (Puppet's `inline_epp`);
    // a template file sees the top scope only.
    c.render_epp("inline_epp", &text, params, a.scope, a.span)
}

fn f_epp(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let path = str_arg(c, a, 0)?;
    let Some((_, text)) = c.template_file(&path) else {
        return Err(arg_err(c, a, format!("Could not find template '{path}'")));
    };
    let params = a.values.get(1).cloned();
    let top = c.top;
    c.render_epp(&path, &text, params, top, a.span)
}

fn f_lookup(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let name = a.values.first().map(|v| v.to_display()).unwrap_or_default();
    // Options hash form: lookup(name, { default_value => ... }).
    if let Some(Value::Hash(opts)) = a.values.get(1) {
        if let Some(d) = opts.get(&Value::str("default_value")) {
            return Ok(d.clone());
        }
    }
    if a.values.len() >= 4 {
        return Ok(a.values[3].clone());
    }
    if let Some(l) = a.lambda {
        return c.call_lambda(l, vec![Value::str(name)], a.scope, a.span);
    }
    Err(Flow::Err(c.runtime(
        format!("Function lookup() did not find a value for the name '{name}'"),
        a.span,
    )))
}

fn f_digest(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let s = str_arg(c, a, 0)?;
    Ok(Value::Str(match a.name.as_str() {
        "md5" => strings::md5_hex(s.as_bytes()),
        "sha1" => strings::sha1_hex(s.as_bytes()),
        // `digest`: Puppet's `digest_algorithm` setting, sha256 by default.
        _ => strings::sha256_hex(s.as_bytes()),
    }))
}

/// `generate(command, args...)`: runs a fully qualified command in its own directory when
/// the catalog is compiled and gives its output (stdout and stderr together), as Puppet's
/// 3.x function does; no shell.
fn f_generate(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let argv: Vec<String> = a.values.iter().map(Value::to_display).collect();
    let fail = |c: &Compiler<'_>, msg: String| Flow::Err(c.runtime(msg, a.span));
    let command = argv[0].as_str();
    if !command.starts_with('/') {
        return Err(fail(c, "Generators must be fully qualified".into()));
    }
    let allowed = |ch: char| ch.is_alphanumeric() || "-/_.+".contains(ch);
    if !command.chars().all(allowed) {
        return Err(fail(
            c,
            "Generators can only contain alphanumerics, file separators, and dashes".into(),
        ));
    }
    if command.contains("..") {
        return Err(fail(c, "Can not use generators with '..' in them.".into()));
    }
    let dir = std::path::Path::new(command)
        .parent()
        .map_or("/".into(), |d| d.to_string_lossy().into_owned());
    let host = c.loader.host();
    if host.path_kind(&dir) != Some(super::host::PathKind::Dir) {
        return Err(fail(
            c,
            format!("No such file or directory @ dir_chdir - {dir}"),
        ));
    }
    let failed = |c: &Compiler<'_>, code: i32, output: &str| {
        fail(
            c,
            format!(
                "Failed to execute generator {command}: Execution of '{}' returned {code}: {output}",
                argv.join(" ")
            ),
        )
    };
    let done = match host.run_command(&argv, &dir) {
        Ok(done) => done,
        Err(e) => {
            // Puppet's child reports why it could not exec, and exits 1.
            let why = match e.kind() {
                std::io::ErrorKind::PermissionDenied => "Permission denied",
                _ => "No such file or directory",
            };
            let msg = format!("Error: Could not execute posix command: {why} - {command}");
            return Err(failed(c, 1, &msg));
        }
    };
    let output = String::from_utf8_lossy(&done.output).into_owned();
    match done.code {
        Some(0) => Ok(Value::Str(output)),
        // Puppet's ExecutionFailure gives the output stripped.
        code => Err(failed(c, code.unwrap_or(1), output.trim())),
    }
}

fn f_base64(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mode = str_arg(c, a, 0)?;
    let s = str_arg(c, a, 1)?;
    match mode.as_str() {
        "encode" => Ok(Value::Str(strings::base64_encode(s.as_bytes()))),
        "decode" => strings::base64_decode(&s)
            .map(|b| Value::Str(String::from_utf8_lossy(&b).into_owned()))
            .ok_or_else(|| arg_err(c, a, "invalid base64")),
        _ => Err(arg_err(
            c,
            a,
            "the first argument must be 'encode' or 'decode'",
        )),
    }
}

fn f_unsupported(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(arg_err(c, a, "is not supported by Ordo yet"))
}

impl Compiler<'_> {
    /// Renders an EPP template with its own scope (parameters from the hash).
    pub(super) fn render_epp(
        &mut self,
        name: &str,
        text: &str,
        params: Option<Value>,
        scope: ScopeId,
        span: Span,
    ) -> R<Value> {
        let parsed = self.parse_epp_shared(name, text);
        let Some(program) = &parsed.program else {
            // Puppet's EppEvaluator: `epp(): Invalid EPP: <parse error> (file: ..)`, the
            // inline text's file named `inlined-epp-text`.
            let (func, shown) = if name == "inline_epp" {
                ("inline_epp", "inlined-epp-text")
            } else {
                ("epp", name)
            };
            let d = parsed.diagnostics.iter().find(|d| d.is_error());
            let msg = d.map(|d| d.message.clone()).unwrap_or_default();
            let at = d
                .and_then(|d| d.span)
                .and_then(|sp| Some(self.sources.get(sp.file)?.line_col(sp.start as usize)))
                .map(|(l, c)| format!(" (file: {shown}, line: {l}, column: {c})"))
                .unwrap_or_default();
            return Err(Flow::Err(
                self.runtime(format!("{func}(): Invalid EPP: {msg}{at}"), span),
            ));
        };
        let source = self.scopes[scope].source.clone();
        let mut s = Scope::with_source(ScopeKind::Local, Some(scope), Some(scope), source);
        s.resource = self.scopes[scope].resource;
        self.in_call_scope(s, |c, sid| c.run_epp(program, params, sid, span))
    }

    fn run_epp(
        &mut self,
        program: &crate::ast::Program,
        params: Option<Value>,
        sid: ScopeId,
        span: Span,
    ) -> R<Value> {
        let given = match params {
            Some(Value::Hash(h)) => h,
            _ => Default::default(),
        };
        if let ExprKind::Epp {
            params: Some(ps), ..
        } = &program.body.kind
        {
            // The template runs as a closure (`call_by_name`): Puppet's messages name it
            // `lambda`, for epp and inline_epp alike.
            // Undef arguments are not assigned (`call_by_name`): one the template does not
            // declare is no error, and a declared one with a default gets the default.
            if let Some(k) = given
                .iter()
                .filter(|(_, v)| !v.is_undef())
                .map(|(k, _)| k.to_display())
                .find(|k| !ps.iter().any(|p| p.name == *k))
            {
                return Err(Flow::Err(
                    self.runtime(format!("lambda: has no parameter named '{k}'"), span),
                ));
            }
            for p in ps {
                let v = match given.get(&Value::str(p.name.clone())) {
                    Some(v) if !v.is_undef() || p.value.is_none() => v.clone(),
                    _ => match &p.value {
                        Some(d) => self.eval(d, sid)?,
                        None => {
                            return Err(Flow::Err(self.runtime(
                                format!("lambda: expects a value for parameter '{}'", p.name),
                                span,
                            )));
                        }
                    },
                };
                if let Some(te) = &p.type_expr {
                    let t = self.eval_type(te, sid)?;
                    if !t.is_instance(&v) {
                        let m = super::types::mismatch(&t, &v);
                        return Err(Flow::Err(
                            self.runtime(format!("lambda: parameter '{}' {m}", p.name), span),
                        ));
                    }
                }
                self.scopes[sid].vars.insert(p.name.clone(), v);
            }
        } else {
            for (k, v) in given {
                self.scopes[sid].vars.insert(k.to_display(), v);
            }
        }
        self.render_stack.push(String::new());
        self.render_sensitive.push(false);
        let r = self.eval(&program.body, sid);
        let out = self.render_stack.pop().unwrap_or_default();
        let sensitive = self.render_sensitive.pop().unwrap_or(false);
        match r {
            // A template that rendered a Sensitive value is Sensitive.
            Ok(_) | Err(Flow::Return(..)) if sensitive => {
                Ok(Value::Sensitive(Box::new(Value::Str(out))))
            }
            Ok(_) | Err(Flow::Return(..)) => Ok(Value::Str(out)),
            Err(e) => Err(e),
        }
    }
}

fn f_unwrap(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    match first_arg(a) {
        Value::Sensitive(v) => match a.lambda {
            Some(l) => c.call_lambda(l, vec![*v], a.scope, a.span),
            None => Ok(*v),
        },
        other => Ok(other),
    }
}

fn f_fqdn_rand(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let max = match first_arg(a) {
        Value::Int(i) => i,
        Value::Str(s) => s.trim().parse().unwrap_or(0),
        Value::Float(f) => f as i64,
        _ => 0,
    };
    let seed = a.values.get(1).map(|v| v.to_display()).unwrap_or_default();
    let downcase = a.values.get(2).is_some_and(|v| v.truthy());
    let facts = c.scopes[c.top]
        .vars
        .get("facts")
        .cloned()
        .unwrap_or(Value::Undef);
    let fqdn = match &facts {
        Value::Hash(h) => match h.get(&Value::str("networking")) {
            Some(Value::Hash(n)) => n
                .get(&Value::str("fqdn"))
                .map(|v| v.to_display())
                .unwrap_or_default(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    let fqdn = if downcase { fqdn.to_lowercase() } else { fqdn };
    let digest = strings::md5_hex(format!("{fqdn}:{max}:{seed}").as_bytes());
    let words = strings::hex_to_words(&digest);
    Ok(Value::Int(
        strings::ruby_random_int(&words, max.max(0) as u64) as i64,
    ))
}

fn f_shellquote(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let words: Vec<String> = a
        .values
        .iter()
        .flat_map(flatten_values)
        .map(|v| v.to_display())
        .collect();
    Ok(Value::Str(strings::shellquote(&words)))
}
