//! The modules' Ruby, run by the loader's [`RubyRuntime`](super::RubyRuntime): their
//! functions of both of Puppet's APIs, and the ERB templates Ordo's own ERB does not know.
//!
//! Ordo keeps what Puppet's compiler does around a Ruby function: the argument count and
//! type checks of a 4.x function's dispatches (with Puppet's messages, `signatures`), the
//! choice of the dispatch, the 3.x argument conversion (undef as `''`, a regexp as its
//! source). Ruby runs the body; its callbacks (a Puppet function, a variable, the lambda)
//! are answered here, in the calling scope. The protocol is described in `src/ruby/host.rb`.

use super::compiler::scope::ScopeId;
use super::compiler::{Compiler, Flow, R};
use super::signatures::{self, Block, BlockParam, Dispatch, Kind, Param, Signature};
use super::types::PType;
use super::values::value::{Regex, Value};
use super::LogLevel;
use crate::ast::Lambda;
use crate::span::Span;
use indexmap::IndexMap;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// What a compile knows of the modules' Ruby functions.
#[derive(Default)]
pub struct RubyState {
    functions: HashMap<String, RubyFn>,
    /// Whether Ruby was told the modules' `lib` directories.
    lib_dirs_sent: bool,
    /// Templates being rendered by Ruby: a template they render is Ruby's too (what it
    /// defines, `def`, is seen by the template that called it, as in Puppet).
    pub(super) erb_depth: usize,
}

#[derive(Clone, Copy)]
enum RubyFn {
    /// The 4.x API: the dispatches as a signature, and the local type aliases (name,
    /// definition) their types were written with.
    Modern(&'static Signature, &'static [(String, String)]),
    /// The 3.x API: whether it returns a value (`:type => :rvalue`).
    Legacy { rvalue: bool },
}

/// The signatures of the 4.x functions described so far, by file and name: kept for the
/// process (a `--nodes` run describes each function once), as `signatures` keeps its table.
type Described = (&'static Signature, &'static [(String, String)]);

fn described() -> &'static Mutex<HashMap<String, Described>> {
    static SIGS: OnceLock<Mutex<HashMap<String, Described>>> = OnceLock::new();
    SIGS.get_or_init(Default::default)
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// A signature from Ruby's description of a function's dispatches.
fn signature(name: &str, desc: &Json) -> Result<Signature, String> {
    let mut dispatches = Vec::new();
    for d in desc["dispatches"].as_array().into_iter().flatten() {
        let mut params = Vec::new();
        for p in d["params"].as_array().into_iter().flatten() {
            let kind = match p["kind"].as_str() {
                Some("optional") => Kind::Optional,
                Some("repeated") => Kind::Repeated,
                Some("required_repeated") => Kind::RequiredRepeated,
                _ => Kind::Required,
            };
            params.push(Param {
                name: leak(p["name"].as_str().unwrap_or("arg")),
                ty: leak(p["type"].as_str().unwrap_or("Any")),
                kind,
            });
        }
        let block = d["block"].as_object().map(|b| BlockParam {
            name: leak(b.get("name").and_then(Json::as_str).unwrap_or("block")),
            ty: leak(b.get("type").and_then(Json::as_str).unwrap_or("Callable")),
            optional: b.get("optional").and_then(Json::as_bool).unwrap_or(false),
        });
        dispatches.push(Dispatch {
            params: Box::leak(params.into_boxed_slice()),
            block,
            handler: d["handler"].as_bool().unwrap_or(false),
        });
    }
    if dispatches.is_empty() {
        return Err(format!("the Ruby function '{name}' has no dispatch"));
    }
    Ok(from_dispatches(
        leak(name),
        Box::leak(dispatches.into_boxed_slice()),
    ))
}

/// The signature of a function with these dispatches (a module's Ruby function): its
/// argument counts and block over all of them.
fn from_dispatches(name: &'static str, dispatches: &'static [Dispatch]) -> Signature {
    let mut min = usize::MAX;
    let mut max = Some(0);
    for d in dispatches.iter().filter(|d| !d.handler) {
        let (lo, hi) = d.arity();
        min = min.min(lo);
        max = match (max, hi) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    let with_block = |f: fn(&BlockParam) -> bool| {
        dispatches
            .iter()
            .filter(|d| !d.handler)
            .all(|d| d.block.as_ref().is_some_and(f))
    };
    let block = if with_block(|b| !b.optional) {
        Block::Required
    } else if dispatches.iter().any(|d| d.block.is_some()) {
        Block::Optional
    } else {
        Block::None
    };
    Signature {
        name,
        min: if min == usize::MAX { 0 } else { min },
        max,
        block,
        dispatches,
    }
}

/// What a request in progress answers Ruby's callbacks with.
struct Call<'l> {
    lambda: Option<&'l Lambda>,
    scope: ScopeId,
    span: Span,
    /// The error of a callback, reported when Ruby gives up because of it.
    pending: Option<Flow>,
    /// Values Ruby only carries back (deferred values).
    opaque: Vec<Value>,
}

/// The package that brings Ruby, for the messages of a machine without it.
pub const RUBY_PACKAGE: &str = "ruby";

impl Compiler<'_> {
    /// Whether a module ships `name` in Ruby and this compile can run Ruby.
    pub(super) fn has_runnable_ruby_function(&self, name: &str) -> bool {
        self.loader.ruby().is_some() && self.loader.ruby_function_file(name).is_some()
    }

    /// Calls a module's Ruby function.
    pub(super) fn call_ruby_function(
        &mut self,
        name: &str,
        values: Vec<Value>,
        lambda: Option<&Lambda>,
        scope: ScopeId,
        span: Span,
    ) -> R<Value> {
        let f = self.ruby_function(name, span)?;
        let mut call = Call {
            lambda,
            scope,
            span,
            pending: None,
            opaque: Vec::new(),
        };
        let request = match f {
            RubyFn::Modern(sig, aliases) => {
                if let Some(msg) = signatures::mismatch(sig, values.len(), lambda.is_some()) {
                    return Err(Flow::Err(self.runtime(msg, span)));
                }
                let arity = signatures::lambda_arity(lambda);
                if let Some(msg) = signatures::type_mismatch(sig, &values, arity) {
                    return Err(Flow::Err(self.runtime(name_aliases(msg, aliases), span)));
                }
                let dispatch = signatures::select(sig, &values, lambda.is_some()).unwrap_or(0);
                let args: Vec<Json> = values.iter().map(|v| encode(v, &mut call)).collect();
                json!({"op": "call4", "name": name, "dispatch": dispatch, "args": args,
                       "block": lambda.is_some()})
            }
            RubyFn::Legacy { .. } => {
                let args: Vec<Json> = values
                    .iter()
                    .map(|v| encode(&legacy_arg(v), &mut call))
                    .collect();
                json!({"op": "call3", "name": name, "args": args})
            }
        };
        let answer = self.ruby_request(&request, &mut call)?;
        let v = self.ruby_answer(answer, &mut call, |_, m| m)?;
        Ok(match f {
            RubyFn::Legacy { rvalue: false } => Value::Undef,
            _ => v,
        })
    }

    /// The function `name` as Ruby describes it (loaded the first time).
    fn ruby_function(&mut self, name: &str, span: Span) -> R<RubyFn> {
        if let Some(f) = self.ruby.functions.get(name) {
            return Ok(*f);
        }
        let Some(file) = self.loader.ruby_function_file(name) else {
            return Err(Flow::Err(
                self.issue(format!("Unknown function: '{name}'."), span),
            ));
        };
        let key = format!("{}\0{name}", file.path);
        let known = described()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied();
        if let Err(why) = self.loader.ruby().map_or(Ok(()), |rt| rt.available()) {
            return Err(Flow::Err(self.runtime(
                format!(
                    "The function '{name}' is written in Ruby ({}): {why}",
                    file.path
                ),
                span,
            )));
        }
        let f = match known {
            Some((sig, aliases)) if !file.legacy => RubyFn::Modern(sig, aliases),
            _ => {
                let op = if file.legacy {
                    "function3"
                } else {
                    "function4"
                };
                let mut call = Call {
                    lambda: None,
                    scope: self.top,
                    span,
                    pending: None,
                    opaque: Vec::new(),
                };
                let request = json!({"op": op, "name": name, "file": file.path});
                let answer = self.ruby_request(&request, &mut call)?;
                let desc = match answer.get("ok") {
                    Some(d) => d.clone(),
                    None => {
                        let msg = answer["err"]["message"].as_str().unwrap_or("").to_string();
                        return Err(Flow::Err(self.runtime(
                            format!(
                                "Could not load the Ruby function '{name}' from {}: {msg}",
                                file.path
                            ),
                            span,
                        )));
                    }
                };
                if file.legacy {
                    RubyFn::Legacy {
                        rvalue: desc["type"].as_str() == Some("rvalue"),
                    }
                } else {
                    let sig =
                        signature(name, &desc).map_err(|m| Flow::Err(self.runtime(m, span)))?;
                    let sig: &'static Signature = Box::leak(Box::new(sig));
                    let aliases: Vec<(String, String)> = desc["aliases"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|a| {
                            Some((a[0].as_str()?.to_string(), a[1].as_str()?.to_string()))
                        })
                        .collect();
                    let aliases: &'static [(String, String)] =
                        Box::leak(aliases.into_boxed_slice());
                    described()
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(key, (sig, aliases));
                    RubyFn::Modern(sig, aliases)
                }
            }
        };
        self.ruby.functions.insert(name.to_string(), f);
        Ok(f)
    }

    /// Sends a request to Ruby and answers its callbacks; the answer (`ok` or `err`).
    fn ruby_request(&mut self, request: &Json, call: &mut Call<'_>) -> R<Json> {
        let loader = self.loader;
        let Some(rt) = loader.ruby() else {
            return Err(Flow::Err(self.runtime(
                format!("Ordo has no Ruby to run this (install the package `{RUBY_PACKAGE}`)"),
                call.span,
            )));
        };
        if !self.ruby.lib_dirs_sent {
            let dirs = json!({"op": "libdirs", "dirs": loader.ruby_lib_dirs()});
            rt.request(&dirs, &mut |_| json!({"err": "no callback expected"}))
                .map_err(|e| Flow::Err(self.runtime(e, call.span)))?;
            self.ruby.lib_dirs_sent = true;
        }
        let mut host = |cb: &Json| self.ruby_callback(cb, call);
        let answer = rt.request(request, &mut host);
        answer.map_err(|e| Flow::Err(self.runtime(e, call.span)))
    }

    /// The value of Ruby's answer, or its error as Puppet reports it (`word` makes the
    /// message of a Ruby error from its text and where it was raised).
    fn ruby_answer(
        &mut self,
        answer: Json,
        call: &mut Call<'_>,
        word: impl FnOnce(&str, String) -> String,
    ) -> R<Value> {
        if let Some(v) = answer.get("ok") {
            return self
                .decode(v, call)
                .map_err(|m| Flow::Err(self.runtime(m, call.span)));
        }
        let err = &answer["err"];
        if err["callback"].as_bool() == Some(true) {
            if let Some(flow) = call.pending.take() {
                return Err(flow);
            }
        }
        let msg = err["message"].as_str().unwrap_or("").to_string();
        let where_ = err["where"].as_str().unwrap_or("");
        Err(Flow::Err(self.runtime(word(where_, msg), call.span)))
    }

    /// Answers one callback of Ruby.
    fn ruby_callback(&mut self, cb: &Json, call: &mut Call<'_>) -> Json {
        match self.ruby_callback_value(cb, call) {
            Ok(v) => json!({"ok": encode(&v, call)}),
            Err(Flow::Err(e)) => {
                let msg = e.msg.clone();
                call.pending = Some(Flow::Err(e));
                json!({"err": msg})
            }
            Err(flow) => {
                call.pending = Some(flow);
                json!({"err": "a Puppet control flow statement in a function called from Ruby"})
            }
        }
    }

    fn ruby_callback_value(&mut self, cb: &Json, call: &mut Call<'_>) -> R<Value> {
        let text = |k: &str| cb[k].as_str().unwrap_or("").to_string();
        let (scope, span) = (call.scope, call.span);
        let values = |c: &mut Compiler<'_>, call: &mut Call<'_>| -> R<Vec<Value>> {
            match c.decode(&cb["args"], call) {
                Ok(Value::Array(a)) => Ok(a),
                Ok(v) => Ok(vec![v]),
                Err(m) => Err(Flow::Err(c.runtime(m, span))),
            }
        };
        match cb["cb"].as_str().unwrap_or("") {
            "call_function" | "function3" => {
                let args = values(self, call)?;
                self.call_function(&text("name"), args, None, scope, span)
            }
            "block" => {
                let args = values(self, call)?;
                let Some(l) = call.lambda else {
                    return Err(Flow::Err(self.runtime("No block given (yield)", span)));
                };
                self.call_lambda(l, args, scope, span)
            }
            "lookupvar" => Ok(self.ruby_var(&text("name"), scope).unwrap_or(Value::Undef)),
            "exist" => Ok(Value::Bool(self.ruby_var(&text("name"), scope).is_some())),
            "to_hash" => Ok(self.scope_hash(scope)),
            "fact" => {
                let name = text("name");
                let mut path = name.split('.');
                let mut v = self.fact_value(path.next().unwrap_or(""));
                for seg in path {
                    v = match v {
                        Some(Value::Hash(h)) => h.get(&Value::str(seg)).cloned(),
                        _ => None,
                    };
                }
                Ok(v.unwrap_or(Value::Undef))
            }
            "log" => {
                let level = match text("level").as_str() {
                    "notice" => LogLevel::Notice,
                    "info" => LogLevel::Info,
                    "err" => LogLevel::Err,
                    "alert" => LogLevel::Alert,
                    "crit" => LogLevel::Crit,
                    "emerg" => LogLevel::Emerg,
                    _ => LogLevel::Warning,
                };
                self.log(level, text("message"));
                Ok(Value::Undef)
            }
            "function_exists" => {
                let name = text("name");
                let known = self.find_function(&name).is_some()
                    || self.resolve_builtin(&name).is_some()
                    || self.loader.has_ruby_function(&name);
                Ok(Value::Bool(known))
            }
            "findresource" => {
                let found = self.find_resource(&text("type"), &text("title"));
                Ok(Value::Bool(found.is_some()))
            }
            "type_of" => {
                let v = self.decode(&cb["value"], call).unwrap_or(Value::Undef);
                let t = if cb["detailed"].as_bool() == Some(true) {
                    super::types::infer(&v)
                } else {
                    super::types::infer_reduced(&v)
                };
                Ok(Value::Str(t.to_string()))
            }
            "instance_of" => {
                let t = self.type_from_string(&text("type"), span)?;
                let v = self.decode(&cb["value"], call).unwrap_or(Value::Undef);
                Ok(Value::Bool(t.is_instance(&v)))
            }
            other => Err(Flow::Err(self.runtime(
                format!("Ordo does not answer the Ruby callback '{other}'"),
                span,
            ))),
        }
    }

    /// A variable as `lookupvar` finds it: `::x` at top scope, `a::x` in class `a`.
    fn ruby_var(&self, name: &str, scope: ScopeId) -> Option<Value> {
        match name.strip_prefix("::") {
            Some(n) if !n.contains("::") => self.quiet_var(n, self.top),
            _ => self.quiet_var(name, scope),
        }
    }

    /// `scope.to_hash`: every variable visible from the scope (the enclosing and inherited
    /// scopes first, inner ones overriding), without the undef ones, as Puppet's
    /// `Scope#to_hash`.
    pub(super) fn scope_hash(&self, scope: ScopeId) -> Value {
        let mut chain = vec![];
        let mut s = Some(scope);
        while let Some(id) = s {
            chain.push(id);
            s = self.scopes[id].lookup_next;
        }
        let mut out: IndexMap<Value, Value> = IndexMap::new();
        for id in chain.into_iter().rev() {
            for (k, v) in self.scopes[id].vars.iter() {
                let key = Value::str(k.clone());
                if v.is_undef() {
                    out.shift_remove(&key);
                } else {
                    out.insert(key, v.clone());
                }
            }
        }
        Value::Hash(out.into())
    }

    /// Renders ERB in Ruby, as Puppet's `TemplateWrapper` does: the scope's variables as
    /// instance variables, `scope` reaching the compiler. `file`: the template's path
    /// (`None` for an inline template).
    pub(super) fn render_erb_in_ruby(
        &mut self,
        name: &str,
        file: Option<&str>,
        text: &str,
        scope: ScopeId,
        span: Span,
    ) -> R<String> {
        let mut call = Call {
            lambda: None,
            scope,
            span,
            pending: None,
            opaque: Vec::new(),
        };
        let vars = encode(&self.scope_hash(scope), &mut call);
        let request = json!({"op": "erb", "name": name, "file": file, "text": text, "vars": vars});
        self.ruby.erb_depth += 1;
        let answer = self.ruby_request(&request, &mut call);
        self.ruby.erb_depth -= 1;
        let answer = answer?;
        let v = self.ruby_answer(answer, &mut call, |where_, msg| match file {
            Some(_) => {
                let mut info = where_.split(':');
                let path = info.next().unwrap_or("");
                let line = info.next().unwrap_or("");
                format!(
                    "Failed to parse template {name}:\n  Filepath: {path}\n  Line: {line}\n  Detail: {msg}\n"
                )
            }
            None => format!("Failed to parse inline template: {msg}"),
        })?;
        match v {
            Value::Str(s) => Ok(s),
            other => Ok(other.to_display()),
        }
    }

    /// A value Ruby sent.
    fn decode(&mut self, j: &Json, call: &mut Call<'_>) -> Result<Value, String> {
        Ok(match j {
            Json::Null => Value::Undef,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().ok_or("a number out of range")?),
            },
            Json::String(s) => Value::Str(s.clone()),
            Json::Array(a) => Value::Array(
                a.iter()
                    .map(|x| self.decode(x, call))
                    .collect::<Result<_, _>>()?,
            ),
            Json::Object(o) => {
                let text = || o.get("v").and_then(Json::as_str).unwrap_or("");
                match o.get("t").and_then(Json::as_str).unwrap_or("") {
                    "hash" => {
                        let items = o.get("v").and_then(Json::as_array).ok_or("a bad hash")?;
                        let mut h = IndexMap::with_capacity(items.len() / 2);
                        for kv in items.chunks(2) {
                            let k = self.decode(&kv[0], call)?;
                            let v = self.decode(kv.get(1).unwrap_or(&Json::Null), call)?;
                            h.insert(k, v);
                        }
                        Value::Hash(h.into())
                    }
                    "default" => Value::Default,
                    "regexp" => Value::Regex(Regex::new(text())?),
                    "type" => {
                        let t = self.type_from_string(text(), call.span).map_err(|_| {
                            format!("Ruby gave the type '{}', which Ordo cannot parse", text())
                        })?;
                        Value::Type(Box::new(t))
                    }
                    "sensitive" => Value::Sensitive(Box::new(
                        self.decode(o.get("v").unwrap_or(&Json::Null), call)?,
                    )),
                    "timestamp" => Value::Timestamp(
                        super::values::value::Timestamp::parse(text())
                            .ok_or_else(|| format!("a bad Timestamp '{}'", text()))?,
                    ),
                    "timespan" => {
                        Value::Timespan(super::values::timespan::Timespan::parse(text(), &[])?)
                    }
                    "opaque" => {
                        let i = o.get("v").and_then(Json::as_u64).unwrap_or(u64::MAX);
                        call.opaque
                            .get(i as usize)
                            .cloned()
                            .ok_or("an unknown value carried by Ruby")?
                    }
                    other => return Err(format!("a value of unknown kind '{other}' from Ruby")),
                }
            }
        })
    }
}

/// Puppet names a local type alias in its messages (`expects a Port = Integer[1, 65535]
/// value`); the signature holds its definition in its place.
fn name_aliases(mut msg: String, aliases: &[(String, String)]) -> String {
    for (name, definition) in aliases {
        let article = if name.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        };
        for a in ["a", "an"] {
            msg = msg.replace(
                &format!("expects {a} {definition} value"),
                &format!("expects {article} {name} = {definition} value"),
            );
        }
    }
    msg
}

/// An argument as Puppet passes it to a 3.x function: undef as `''`, a regexp as its
/// source, time values as strings.
fn legacy_arg(v: &Value) -> Value {
    match v {
        Value::Undef => Value::Str(String::new()),
        Value::Regex(r) => Value::Str(format!("/{}/", r.source)),
        Value::Timestamp(_) | Value::Timespan(_) | Value::Binary(_) => Value::Str(v.to_display()),
        _ => v.clone(),
    }
}

/// A value as Ruby receives it.
fn encode(v: &Value, call: &mut Call<'_>) -> Json {
    match v {
        Value::Undef => Json::Null,
        Value::Default => json!({"t": "default"}),
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => json!(i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::Str(s) => Json::String(s.clone()),
        Value::Regex(r) => json!({"t": "regexp", "v": &*r.source}),
        Value::Array(a) => Json::Array(a.iter().map(|x| encode(x, call)).collect()),
        Value::Hash(h) => {
            let mut items = Vec::with_capacity(h.len() * 2);
            for (k, x) in h.iter() {
                items.push(encode(k, call));
                items.push(encode(x, call));
            }
            json!({"t": "hash", "v": items})
        }
        Value::Type(t) => json!({"t": "type", "v": type_text(t)}),
        Value::Sensitive(x) => json!({"t": "sensitive", "v": encode(x, call)}),
        Value::Timestamp(t) => json!({"t": "timestamp", "v": t.to_string()}),
        Value::Timespan(t) => json!({"t": "timespan", "v": t.to_string()}),
        Value::Binary(_) | Value::Error(_) => Json::String(v.to_display()),
        Value::Iterator(it) => Json::Array(it.items.iter().map(|x| encode(x, call)).collect()),
        Value::Deferred(_) => {
            call.opaque.push(v.clone());
            json!({"t": "opaque", "v": call.opaque.len() - 1})
        }
    }
}

fn type_text(t: &PType) -> String {
    t.to_string()
}
