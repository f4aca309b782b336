//! ERB templates: `template()` and `inline_template()`, rendered the way Puppet's
//! `TemplateWrapper` does with Ruby's ERB in trim mode `-`.
//!
//! The template becomes one token stream for the small Ruby in `ruby.rs`; this file splits
//! the template and interprets the Ruby over Puppet values. Variables of the calling scope
//! are the template's instance variables (`@name`); `scope['x']`, `scope.lookupvar('x')`
//! and `scope.function_name([args])` / `scope.call_function('name', [args])` reach the
//! compiler. Ruby beyond the subset is an error naming the construct.

use super::compiler::scope::ScopeId;
use super::compiler::{Compiler, Flow, R};
use super::functions::stdlib::{arg, fail_plain};
use super::functions::Args;
use super::values::ruby_print::{ruby_inspect, ruby_to_s};
use super::values::value::{Regex, Value};
use indexmap::IndexMap;
use ruby::{Block, Node, NodePart, Parser, Tok};
use std::cmp::Ordering;
use std::collections::HashMap;

mod methods;
mod render;
mod ruby;
pub use render::{f_inline_template, f_template};

/// Splits a template into Ruby tokens (text as `Text(i)`), applying trim mode `-`.
pub fn compile_template(src: &str) -> Result<(Vec<Tok>, Vec<String>), String> {
    let mut toks = vec![];
    let mut texts: Vec<String> = vec![];
    let mut rest = src;
    let mut pending = String::new();
    let flush = |pending: &mut String, toks: &mut Vec<Tok>, texts: &mut Vec<String>| {
        if !pending.is_empty() {
            texts.push(std::mem::take(pending));
            toks.push(Tok::Text(texts.len() - 1));
        }
    };
    while let Some(start) = rest.find("<%") {
        let (before, after) = rest.split_at(start);
        if let Some(stripped) = after.strip_prefix("<%%") {
            pending.push_str(before);
            pending.push_str("<%");
            rest = stripped;
            continue;
        }
        let mut text = before.to_string();
        let mut tag = &after[2..];
        if let Some(t) = tag.strip_prefix('-') {
            // `<%-`: drop the indentation before the tag on its line.
            let line_start = text.rfind('\n').map(|i| i + 1).unwrap_or(0);
            let prefix_is_blank = text[line_start..].chars().all(|c| c == ' ' || c == '\t');
            let at_line_start = line_start > 0 || pending.is_empty() || pending.ends_with('\n');
            if prefix_is_blank && at_line_start {
                text.truncate(line_start);
            }
            tag = t;
        }
        pending.push_str(&text);
        let Some(end) = find_tag_end(tag) else {
            return Err("a tag without its closing `%>`".into());
        };
        let mut code = tag[..end].to_string();
        let mut after_tag = &tag[end + 2..];
        if code.ends_with('-') {
            code.pop();
            if let Some(t) = after_tag.strip_prefix('\n') {
                after_tag = t;
            } else if let Some(t) = after_tag.strip_prefix("\r\n") {
                after_tag = t;
            }
        }
        let code = code.replace("%%>", "%>");
        flush(&mut pending, &mut toks, &mut texts);
        if let Some(c) = code.strip_prefix('#') {
            let _ = c;
        } else if let Some(c) = code.strip_prefix('=') {
            toks.push(Tok::Out);
            ruby::lex(c, &mut toks).map_err(|e| in_tag(e, "<%=", c))?;
            toks.push(Tok::Newline);
            toks.push(Tok::OutEnd);
        } else {
            toks.push(Tok::Newline);
            ruby::lex(&code, &mut toks).map_err(|e| in_tag(e, "<%", &code))?;
            toks.push(Tok::Newline);
        }
        rest = after_tag;
    }
    pending.push_str(rest);
    flush(&mut pending, &mut toks, &mut texts);
    Ok((toks, texts))
}

/// A lexing error of a tag's code, with the tag (its first 80 characters: a tag may be
/// megabytes); a bound's error alone.
fn in_tag(e: String, open: &str, code: &str) -> String {
    if e.starts_with(LIMIT_MARK) {
        return e;
    }
    match code.char_indices().nth(80) {
        Some((end, _)) => format!("{e} in `{open}{} ...`", &code[..end]),
        None => format!("{e} in `{open}{code}%>`"),
    }
}

fn find_tag_end(tag: &str) -> Option<usize> {
    let mut from = 0;
    loop {
        let i = tag[from..].find("%>")? + from;
        if i > 0 && tag.as_bytes()[i - 1] == b'%' {
            from = i + 2;
            continue;
        }
        return Some(i);
    }
}

// ---- the interpreter -----------------------------------------------------------------------------

enum Ctl {
    Err(String),
    Next(Value),
    Flow(Flow),
}

type E<T> = Result<T, Ctl>;

/// How the errors of the compile's bounds begin: such a template is not given to Ruby to
/// render instead.
const LIMIT_MARK: &str = "evaluation stopped:";

/// An array or hash a template built, within the compile's bounds on depth and size.
fn shaped(v: Value) -> E<Value> {
    match super::compiler::limits::value_shape_error(&v) {
        None => Ok(v),
        Some(msg) => err(msg),
    }
}

fn err<T>(m: impl Into<String>) -> E<T> {
    Err(Ctl::Err(m.into()))
}

struct Interp<'c, 'a> {
    c: &'c mut Compiler<'a>,
    scope: ScopeId,
    template: std::sync::Arc<Compiled>,
    out: String,
    locals: Vec<HashMap<String, Value>>,
    ivars: HashMap<String, Value>,
    /// Locals that name the same Ruby object as an instance variable (`a = @list`): a
    /// change in place through one (`a << x`) is seen through the other, and by the Puppet
    /// variable behind it, as one shared array or hash.
    aliases: HashMap<String, String>,
    /// Methods the template defines (`def`).
    methods: HashMap<String, std::sync::Arc<Block>>,
    span: crate::span::Span,
}

/// A template lexed and parsed: what renders it in any scope (shared by the compiles of
/// the same code through the loader's parse cache).
#[derive(Debug)]
pub struct Compiled {
    body: Vec<Node>,
    /// The template's text between its tags.
    texts: Vec<String>,
    /// Names the template assigns somewhere (`x = ...`): in Ruby a local exists, as nil,
    /// once the parser has seen its assignment, even in a branch that did not run.
    assigned: std::collections::HashSet<String>,
}

/// Lexes and parses a template; `Err`: what Ordo's ERB does not support.
pub fn compile(text: &str) -> Result<Compiled, String> {
    // A bound's error says itself; any other is a construct Ordo's ERB does not know.
    let unsupported = |what: &str, e: String| {
        if e.starts_with(LIMIT_MARK) {
            e
        } else {
            format!("Ordo's ERB does not support {what}{e}")
        }
    };
    let (toks, texts) = compile_template(text).map_err(|e| unsupported("", e))?;
    let assigned = toks
        .windows(2)
        .filter_map(|w| match w {
            [Tok::Ident(n), Tok::Op("=")] => Some(n.clone()),
            _ => None,
        })
        .collect();
    let body = Parser::new(toks)
        .program()
        .map_err(|e| unsupported("this Ruby: ", e))?;
    Ok(Compiled {
        body,
        texts,
        assigned,
    })
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Undef | Value::Bool(false))
}

fn class_name(v: &Value) -> &'static str {
    super::functions::stdlib::ruby_class(v)
}

fn ruby_cmp(a: &Value, b: &Value) -> E<Ordering> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            num(a).partial_cmp(&num(b)).unwrap_or(Ordering::Equal)
        }
        (Value::Str(x), Value::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let o = ruby_cmp(p, q)?;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            x.len().cmp(&y.len())
        }
        _ => {
            return err(format!(
                "comparison of {} with {} failed",
                class_name(a),
                class_name(b)
            ))
        }
    })
}

fn num(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => 0.0,
    }
}

use super::functions::stdlib::ruby_eq;

fn to_array(v: Value) -> Vec<Value> {
    match v {
        Value::Undef => vec![],
        Value::Array(x) => x,
        Value::Hash(h) => h
            .into_iter()
            .map(|(k, v)| Value::Array(vec![k, v]))
            .collect(),
        other => vec![other],
    }
}

fn regex_of(v: &Value) -> E<Regex> {
    match v {
        Value::Regex(r) => Ok(r.clone()),
        Value::Str(s) => Regex::new(&regex::escape(s)).or_else(err),
        other => err(format!(
            "wrong argument type {} (expected Regexp)",
            class_name(other)
        )),
    }
}

impl Interp<'_, '_> {
    fn run(&mut self, body: &[Node]) -> E<Value> {
        let mut last = Value::Undef;
        for n in body {
            last = self.eval(n)?;
        }
        Ok(last)
    }

    fn local(&self, n: &str) -> Option<Value> {
        self.locals.iter().rev().find_map(|m| m.get(n).cloned())
    }

    fn set_local(&mut self, n: &str, v: Value) {
        for m in self.locals.iter_mut().rev() {
            if let Some(slot) = m.get_mut(n) {
                *slot = v;
                return;
            }
        }
        if let Some(m) = self.locals.last_mut() {
            m.insert(n.to_string(), v);
        }
    }

    fn ivar(&self, n: &str) -> Value {
        if let Some(v) = self.ivars.get(n) {
            return v.clone();
        }
        self.c.quiet_var(n, self.scope).unwrap_or(Value::Undef)
    }

    /// `scope.to_hash` (Puppet's `Scope#to_hash`).
    fn scope_hash(&self) -> Value {
        self.c.scope_hash(self.scope)
    }

    fn lookupvar(&self, n: &str) -> Value {
        self.c.quiet_var(n, self.scope).unwrap_or(Value::Undef)
    }

    fn eval(&mut self, n: &Node) -> E<Value> {
        if crate::stack::low() {
            return err(format!("{LIMIT_MARK} {}", crate::stack::TOO_DEEP));
        }
        Ok(match n {
            Node::Nil => Value::Undef,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => Value::Int(*i),
            Node::Float(f) => Value::Float(*f),
            Node::Sym(s) => Value::Str(s.clone()),
            Node::Regex(r) => Value::Regex(Regex::new(r).or_else(err)?),
            Node::Str(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        NodePart::Lit(l) => s.push_str(l),
                        NodePart::Code(c) => {
                            let v = self.eval(c)?;
                            s.push_str(&ruby_to_s(&v));
                        }
                    }
                }
                if parts.iter().any(|p| matches!(p, NodePart::Code(_))) {
                    self.charge(s.len())?;
                }
                Value::Str(s)
            }
            Node::Array(items) => {
                let mut out = vec![];
                for i in items {
                    out.push(self.eval(i)?);
                }
                shaped(Value::Array(out))?
            }
            Node::Hash(pairs) => {
                let mut h = IndexMap::new();
                for (k, v) in pairs {
                    let k = self.eval(k)?;
                    let v = self.eval(v)?;
                    h.insert(k, v);
                }
                shaped(Value::Hash(h.into()))?
            }
            Node::IVar(n) => self.ivar(n),
            Node::GVar(n) => return err(format!("global variable `${n}`")),
            Node::Name(n) => match self.local(n) {
                Some(v) => v,
                None => return self.call(None, n, vec![], None),
            },
            Node::Const(c) if CLASSES.contains(&c.as_str()) => Value::Str(c.clone()),
            Node::Const(c) => return err(format!("the constant `{c}`")),
            Node::IndexAssign(target, keys, v) => {
                let container = self.eval(target)?;
                let mut ks = vec![];
                for k in keys {
                    ks.push(self.eval(k)?);
                }
                let v = self.eval(v)?;
                let key = ks.into_iter().next().unwrap_or(Value::Undef);
                let updated = match container {
                    Value::Hash(mut h) => {
                        h.insert(key, v.clone());
                        Value::Hash(h)
                    }
                    Value::Array(mut a) => {
                        let i = num(&key) as usize;
                        if a.len() <= i {
                            a.resize(i + 1, Value::Undef);
                        }
                        a[i] = v.clone();
                        Value::Array(a)
                    }
                    other => {
                        return err(format!("undefined method `[]=' for {}", class_name(&other)))
                    }
                };
                self.write_back(target, &updated);
                // `scope.lookupvar('x')[k] = v` changes the Puppet variable itself, as the
                // shared Ruby hash would.
                if let Node::Call {
                    recv: Some(r),
                    name,
                    args,
                    ..
                } = &**target
                {
                    let on_scope = matches!(&**r, Node::Name(s) if s == "scope")
                        && self.local("scope").is_none()
                        && (name == "lookupvar" || name == "[]");
                    if let (true, Some(a)) = (on_scope, args.first()) {
                        let var = ruby_to_s(&self.eval(a)?);
                        self.set_scope_var(&var, updated);
                    }
                }
                v
            }
            Node::Call {
                recv,
                name,
                args,
                block,
            } => {
                if let Some(r) = recv {
                    if matches!(&**r, Node::Name(s) if s == "scope" && self.local("scope").is_none())
                    {
                        let mut vals = vec![];
                        for a in args {
                            vals.push(self.eval(a)?);
                        }
                        return self.scope_call(name, vals);
                    }
                }
                if let (Some(r), "new") = (recv, name.as_str()) {
                    if matches!(&**r, Node::Const(c) if c == "IPAddr") {
                        let a = match args.first() {
                            Some(a) => ruby_to_s(&self.eval(a)?),
                            None => String::new(),
                        };
                        return ip_addr(&a);
                    }
                }
                // `(a..b).each`: the range is gone through, not made (Ruby's is lazy); each
                // step is a block call, bounded with the compile's lambda calls.
                if let (Some(r), "each", Some(bl), true) =
                    (recv, name.as_str(), block.as_ref(), args.is_empty())
                {
                    if let Node::Range(a, b, excl) = &**r {
                        let (Value::Int(x), Value::Int(y)) = (self.eval(a)?, self.eval(b)?) else {
                            return err("ranges of non-integers");
                        };
                        let end = if *excl { y.saturating_sub(1) } else { y };
                        for i in x..=end {
                            self.call_block(bl, vec![Value::Int(i)])?;
                        }
                        return Ok(Value::Undef);
                    }
                }
                let rv = match recv {
                    Some(r) => Some(self.eval(r)?),
                    None => None,
                };
                let mut vals = vec![];
                for a in args {
                    vals.push(self.eval(a)?);
                }
                // `x.compact!`, `x.uniq!`, ...: the method without `!`, its result written
                // back to the variable (Ruby changes the object in place).
                // On anything else (`a.flatten.compact!`) only the result counts.
                if let (Some(r), Some(base)) = (recv, name.strip_suffix('!')) {
                    if !base.is_empty() {
                        let new = self.call(rv, base, vals, block.as_ref())?;
                        self.write_back(r, &new);
                        return Ok(new);
                    }
                }
                // Hash#delete / Array#delete change the variable they are called on.
                if let (Some(r), "delete", [key]) = (recv, name.as_str(), vals.as_slice()) {
                    if matches!(&**r, Node::Name(_) | Node::IVar(_)) {
                        let (updated, removed) = match rv {
                            Some(Value::Hash(mut h)) => {
                                let removed = h.shift_remove(key).unwrap_or(Value::Undef);
                                (Value::Hash(h), removed)
                            }
                            Some(Value::Array(mut a)) => {
                                let before = a.len();
                                a.retain(|x| !ruby_eq(x, key));
                                let removed = if a.len() < before {
                                    key.clone()
                                } else {
                                    Value::Undef
                                };
                                (Value::Array(a), removed)
                            }
                            other => {
                                let shown = other.as_ref().map(class_name).unwrap_or("NilClass");
                                return err(format!("undefined method `delete' for {shown}"));
                            }
                        };
                        self.write_back(r, &updated);
                        return Ok(removed);
                    }
                }
                let v = self.call(rv, name, vals, block.as_ref())?;
                if let Value::Str(s) = &v {
                    self.charge(s.len())?;
                }
                return Ok(v);
            }
            Node::Index(r, args) => {
                let mut vals = vec![];
                for a in args {
                    vals.push(self.eval(a)?);
                }
                if matches!(&**r, Node::Name(s) if s == "scope" && self.local("scope").is_none()) {
                    return Ok(self.lookupvar(&vals.first().map(ruby_to_s).unwrap_or_default()));
                }
                let rv = self.eval(r)?;
                return self.call(Some(rv), "[]", vals, None);
            }
            Node::Not(x) => Value::Bool(!truthy(&self.eval(x)?)),
            Node::Neg(x) => match self.eval(x)? {
                Value::Int(i) => Value::Int(-i),
                Value::Float(f) => Value::Float(-f),
                other => return err(format!("undefined method `-@' for {}", class_name(&other))),
            },
            Node::And(a, b) => {
                let l = self.eval(a)?;
                if truthy(&l) {
                    self.eval(b)?
                } else {
                    l
                }
            }
            Node::Or(a, b) => {
                let l = self.eval(a)?;
                if truthy(&l) {
                    l
                } else {
                    self.eval(b)?
                }
            }
            Node::Bin(op, a, b) => {
                let l = self.eval(a)?;
                let r = self.eval(b)?;
                return self.binop(op, l, r, a);
            }
            Node::Range(a, b, excl) => {
                let (Value::Int(x), Value::Int(y)) = (self.eval(a)?, self.eval(b)?) else {
                    return err("ranges of non-integers");
                };
                let y = if *excl { y.saturating_sub(1) } else { y };
                // Made as an array: one longer than an iteration may run is refused
                // before any of it is made.
                let len = (y as i128 - x as i128 + 1).max(0);
                if len > super::functions::MAX_ITEMS {
                    return err(format!(
                        "{LIMIT_MARK} the range {x}..{y} has {len} elements, more than the {} one iteration may have",
                        super::functions::MAX_ITEMS
                    ));
                }
                Value::Array((x..=y).map(Value::Int).collect())
            }
            Node::If(c, t, e) => {
                if truthy(&self.eval(c)?) {
                    self.run(t)?
                } else {
                    self.run(e)?
                }
            }
            Node::Case(subject, whens, els) => {
                let s = match subject {
                    Some(s) => Some(self.eval(s)?),
                    None => None,
                };
                for (conds, body) in whens {
                    for c in conds {
                        let cv = self.eval(c)?;
                        let hit = match &s {
                            None => truthy(&cv),
                            Some(s) => match &cv {
                                Value::Regex(r) => r.is_match(&ruby_to_s(s)),
                                Value::Array(_) => ruby_eq(&cv, s),
                                _ => ruby_eq(&cv, s),
                            },
                        };
                        if hit {
                            return self.run(body);
                        }
                    }
                }
                self.run(els)?
            }
            Node::Assign(n, v) => {
                match &**v {
                    Node::IVar(iv) => self.aliases.insert(n.clone(), iv.clone()),
                    _ => self.aliases.remove(n),
                };
                let v = self.eval(v)?;
                self.set_local(n, v.clone());
                v
            }
            Node::IVarAssign(n, v) => {
                let v = self.eval(v)?;
                self.ivars.insert(n.clone(), v.clone());
                v
            }
            Node::OpAssign(n, op, v) => {
                let cur = self.local(n).unwrap_or(Value::Undef);
                let nv = match *op {
                    "||=" => {
                        if truthy(&cur) {
                            cur
                        } else {
                            self.eval(v)?
                        }
                    }
                    "&&=" => {
                        if truthy(&cur) {
                            self.eval(v)?
                        } else {
                            cur
                        }
                    }
                    o => {
                        let r = self.eval(v)?;
                        let bop = match o {
                            "+=" => "+",
                            "-=" => "-",
                            "*=" => "*",
                            _ => "<<",
                        };
                        self.binop(bop, cur, r, &Node::Nil)?
                    }
                };
                self.set_local(n, nv.clone());
                nv
            }
            Node::Defined(x) => match &**x {
                Node::IVar(n) => {
                    let v = self.ivar(n);
                    if v.is_undef() {
                        Value::Undef
                    } else {
                        Value::str("instance-variable")
                    }
                }
                Node::Name(n) if self.local(n).is_some() => Value::str("local-variable"),
                _ => Value::str("expression"),
            },
            Node::Seq(body) => self.run(body)?,
            Node::Text(i) => {
                let template = self.template.clone();
                self.emit(&template.texts[*i])?;
                Value::Undef
            }
            Node::Out(x) => {
                let v = self.eval(x)?;
                self.emit(&ruby_to_s(&v))?;
                Value::Undef
            }
            Node::Next(v) => {
                let v = match v {
                    Some(v) => self.eval(v)?,
                    None => Value::Undef,
                };
                return Err(Ctl::Next(v));
            }
            Node::Begin {
                body,
                rescue,
                ensure,
            } => {
                let r = match (self.run(body), rescue) {
                    (Err(Ctl::Err(m)), Some((var, handler))) => {
                        if let Some(v) = var {
                            self.set_local(v, Value::Str(m));
                        }
                        self.run(handler)
                    }
                    (r, _) => r,
                };
                self.run(ensure)?;
                r?
            }
            Node::Def(name, m) => {
                self.methods.insert(name.clone(), m.clone());
                Value::Str(name.clone())
            }
        })
    }

    fn binop(&mut self, op: &str, l: Value, r: Value, lhs: &Node) -> E<Value> {
        use Value::*;
        Ok(match (op, &l, &r) {
            ("==", _, _) => Bool(ruby_eq(&l, &r)),
            ("!=", _, _) => Bool(!ruby_eq(&l, &r)),
            ("===", Regex(re), _) => Bool(re.is_match(&ruby_to_s(&r))),
            ("===", _, _) => Bool(ruby_eq(&l, &r)),
            ("=~", Str(s), Regex(re)) | ("=~", Regex(re), Str(s)) => match re.captures(s) {
                Some(c) => {
                    let m0 = c.first().map(|v| v.to_display()).unwrap_or_default();
                    Int(s[..s.find(&m0).unwrap_or(0)].chars().count() as i64)
                }
                None => Undef,
            },
            ("=~", Undef, _) => Undef,
            ("!~", Str(s), Regex(re)) => Bool(!re.is_match(s)),
            // nil =~ anything is nil, so nil !~ anything is true (Object#!~).
            ("!~", Undef, _) => Bool(true),
            ("<", _, _) => Bool(ruby_cmp(&l, &r)? == Ordering::Less),
            (">", _, _) => Bool(ruby_cmp(&l, &r)? == Ordering::Greater),
            ("<=", _, _) => Bool(ruby_cmp(&l, &r)? != Ordering::Greater),
            (">=", _, _) => Bool(ruby_cmp(&l, &r)? != Ordering::Less),
            ("<=>", _, _) => Int(match ruby_cmp(&l, &r)? {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }),
            // Ruby's integers have no bounds; ours refuse what does not fit in 64 bits.
            // Division and modulo round toward negative infinity, as Ruby's.
            ("+" | "-" | "*" | "/" | "%", Int(a), Int(b))
                if *b != 0 || matches!(op, "+" | "-" | "*") =>
            {
                let (a, b) = (*a, *b);
                let v = match op {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    "*" => a.checked_mul(b),
                    "/" => a.checked_div(b).map(|q| {
                        if (a % b != 0) && ((a < 0) != (b < 0)) {
                            q - 1
                        } else {
                            q
                        }
                    }),
                    _ => a.checked_rem(b).map(|m| {
                        if m != 0 && ((m < 0) != (b < 0)) {
                            m + b
                        } else {
                            m
                        }
                    }),
                };
                match v {
                    Some(v) => Int(v),
                    None => return err(format!("integer overflow in {a} {op} {b}")),
                }
            }
            ("+" | "-" | "*" | "/", Int(_) | Float(_), Int(_) | Float(_)) => {
                let (a, b) = (num(&l), num(&r));
                Float(match op {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    _ => a / b,
                })
            }
            ("+", Str(a), Str(b)) => {
                self.make_string(a.len() + b.len(), a.len() + b.len())?;
                Str(format!("{a}{b}"))
            }
            ("+", Str(_), _) => {
                return err(format!(
                    "no implicit conversion of {} into String",
                    class_name(&r)
                ))
            }
            ("*", Str(a), Int(n)) => {
                // Ruby: "argument too big" past its limits; ours is the sprintf width's.
                let n = (*n).max(0) as usize;
                if a.len().saturating_mul(n) > super::values::strings::MAX_FORMAT_WIDTH {
                    return err("argument too big");
                }
                self.charge(a.len() * n)?;
                Str(a.repeat(n))
            }
            ("%", Str(f), _) => {
                let args = match &r {
                    Array(x) => x.clone(),
                    other => vec![other.clone()],
                };
                let s = super::values::strings::sprintf(f, &args).or_else(err)?;
                self.charge(s.len())?;
                Str(s)
            }
            ("+", Array(a), Array(b))
                if (a.len() + b.len()) as u64 > super::compiler::limits::MAX_VALUE_NODES =>
            {
                return err(super::compiler::limits::too_many_elements());
            }
            ("+", Array(a), Array(b)) => Array(a.iter().chain(b.iter()).cloned().collect()),
            ("-", Array(a), Array(b)) => {
                Array(a.iter().filter(|x| !b.contains(x)).cloned().collect())
            }
            ("&", Array(a), Array(b)) => {
                let mut out: Vec<Value> = vec![];
                for x in a {
                    if b.contains(x) && !out.contains(x) {
                        out.push(x.clone());
                    }
                }
                Array(out)
            }
            ("|", Array(a), Array(b)) => {
                let mut out: Vec<Value> = vec![];
                for x in a.iter().chain(b.iter()) {
                    if !out.contains(x) {
                        out.push(x.clone());
                    }
                }
                Array(out)
            }
            ("<<", Array(a), _) => {
                shaped(r.clone())?;
                let mut a = a.clone();
                a.push(r.clone());
                let v = Array(a);
                self.write_back(lhs, &v);
                v
            }
            ("<<", Str(a), _) => {
                let tail = ruby_to_s(&r);
                self.make_string(a.len() + tail.len(), tail.len())?;
                let v = Str(format!("{a}{tail}"));
                self.write_back(lhs, &v);
                v
            }
            ("&" | "|", Bool(a), Bool(b)) => Bool(if op == "&" { *a && *b } else { *a || *b }),
            _ => return err(format!("undefined method `{op}' for {}", class_name(&l))),
        })
    }

    /// `x << y` mutates `x`; we have values, so write the new one back to the variable.
    fn write_back(&mut self, lhs: &Node, v: &Value) {
        match lhs {
            Node::Name(n) if self.local(n).is_some() => {
                self.set_local(n, v.clone());
                if let Some(iv) = self.aliases.get(n).cloned() {
                    self.ivars.insert(iv.clone(), v.clone());
                    self.share_with_puppet(&iv, v);
                }
            }
            Node::IVar(n) => {
                self.ivars.insert(n.clone(), v.clone());
                self.share_with_puppet(n, v);
            }
            _ => {}
        }
    }

    /// An array or hash changed in place through an instance variable is the Puppet
    /// variable's own object in Ruby: the variable sees the change, and so does the
    /// parameter of the template's resource when the variable is that parameter (Puppet
    /// binds the same object to both). Strings are frozen in Puppet, so never shared.
    fn share_with_puppet(&mut self, name: &str, v: &Value) {
        if !matches!(v, Value::Array(_) | Value::Hash(_)) {
            return;
        }
        let Some(slot) = self.c.scopes[self.scope].vars.get_mut(name) else {
            return;
        };
        *slot = v.clone();
        let idx = self.c.scope_resource(self.scope);
        if let Some(p) = self.c.resources[idx].params.get_mut(name) {
            *p = v.clone();
        }
    }

    /// Counts a string just made against the compile's bound on the bytes of its strings.
    fn charge(&mut self, len: usize) -> E<()> {
        self.c.charge_string(len).or_else(err)
    }

    /// A string of `total` bytes is about to be made, `new` of them new: within the bound on
    /// one string, and the new bytes counted against the compile's.
    fn make_string(&mut self, total: usize, new: usize) -> E<()> {
        if total > super::functions::MAX_STRING_BYTES {
            return err(format!(
                "{LIMIT_MARK} a string longer than the {} bytes one value may have",
                super::functions::MAX_STRING_BYTES
            ));
        }
        self.charge(new)
    }

    /// Writes to the template's output, which is one string (bounded as one).
    fn emit(&mut self, text: &str) -> E<()> {
        self.make_string(self.out.len() + text.len(), text.len())?;
        self.out.push_str(text);
        Ok(())
    }

    /// Counts a block call against the compile's bound on lambda calls (a template's loops
    /// are iterations like the manifest's).
    fn count_block_call(&mut self) -> E<()> {
        self.c.lambda_calls += 1;
        if self.c.lambda_calls > super::functions::MAX_LAMBDA_CALLS {
            return err(format!(
                "{LIMIT_MARK} more than {} lambda and block calls in one compile",
                super::functions::MAX_LAMBDA_CALLS
            ));
        }
        Ok(())
    }

    fn call_block(&mut self, b: &Block, args: Vec<Value>) -> E<Value> {
        self.count_block_call()?;
        if let Some(m) = &b.sym {
            let mut it = args.into_iter();
            let recv = it.next().unwrap_or(Value::Undef);
            return self.call(Some(recv), m, vec![], None);
        }
        let mut frame = HashMap::new();
        // One array argument spreads over several parameters (`|k, v|` over pairs).
        let args = if b.params.len() > 1 && args.len() == 1 {
            match &args[0] {
                Value::Array(x) => x.clone(),
                _ => args,
            }
        } else {
            args
        };
        for (i, p) in b.params.iter().enumerate() {
            frame.insert(p.clone(), args.get(i).cloned().unwrap_or(Value::Undef));
        }
        self.locals.push(frame);
        let r = self.run(&b.body);
        self.locals.pop();
        match r {
            Err(Ctl::Next(v)) => Ok(v),
            other => other,
        }
    }

    /// Updates the Puppet variable `name` where the template's scope chain holds it (else
    /// sets it in the template's scope).
    fn set_scope_var(&mut self, name: &str, value: Value) {
        let name = name.trim_start_matches("::");
        let mut s = Some(self.scope);
        while let Some(id) = s {
            if let Some(slot) = self.c.scopes[id].vars.get_mut(name) {
                *slot = value;
                return;
            }
            s = self.c.scopes[id].parent;
        }
        self.c.scopes[self.scope]
            .vars
            .insert(name.to_string(), value);
    }

    fn scope_call(&mut self, name: &str, args: Vec<Value>) -> E<Value> {
        match name {
            "lookupvar" | "[]" => {
                Ok(self.lookupvar(&args.first().map(ruby_to_s).unwrap_or_default()))
            }
            "to_hash" => Ok(self.scope_hash()),
            // Sets a variable of the template's scope (apache's templates pass data to the
            // templates they call this way).
            "setvar" => {
                let name = args.first().map(ruby_to_s).unwrap_or_default();
                let value = args.get(1).cloned().unwrap_or(Value::Undef);
                self.c.scopes[self.scope].vars.insert(name, value.clone());
                Ok(value)
            }
            "call_function" => {
                let fname = args.first().map(ruby_to_s).unwrap_or_default();
                let fargs = to_array(args.get(1).cloned().unwrap_or(Value::Undef));
                self.puppet_call(&fname, fargs)
            }
            n if n.starts_with("function_") => {
                let fargs = to_array(args.first().cloned().unwrap_or(Value::Undef));
                self.puppet_call(&n["function_".len()..], fargs)
            }
            other => err(format!("scope.{other}")),
        }
    }

    fn puppet_call(&mut self, name: &str, args: Vec<Value>) -> E<Value> {
        self.c
            .call_function(name, args, None, self.scope, self.span)
            .map_err(Ctl::Flow)
    }
}

/// `IPAddr.new(s)`: the address (with an optional `/prefix`) as IPAddr#to_s gives it, or
/// Ruby's `invalid address` error.
fn ip_addr(s: &str) -> E<Value> {
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let ip: std::net::IpAddr = match addr.parse() {
        Ok(ip) => ip,
        Err(_) => return err(format!("invalid address: {s}")),
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let bits = match prefix {
        None => max,
        Some(p) => match p.parse::<u32>() {
            Ok(b) if b <= max => b,
            _ => return err(format!("invalid address: {s}")),
        },
    };
    // The network address: host bits cleared.
    let masked = match ip {
        std::net::IpAddr::V4(v) => {
            let m = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            std::net::IpAddr::V4((u32::from(v) & m).into())
        }
        std::net::IpAddr::V6(v) => {
            let m = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            std::net::IpAddr::V6((u128::from(v) & m).into())
        }
    };
    Ok(Value::Str(masked.to_string()))
}

const CLASSES: &[&str] = &[
    "Object",
    "String",
    "Array",
    "Hash",
    "Integer",
    "Fixnum",
    "Bignum",
    "Float",
    "Numeric",
    "TrueClass",
    "FalseClass",
    "NilClass",
    "Symbol",
    "Regexp",
];
