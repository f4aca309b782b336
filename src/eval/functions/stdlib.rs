//! puppetlabs-stdlib's Ruby functions (version 8.5, the one the corpus ships), written in
//! Rust because Ordo cannot run Ruby. Consulted before the core registry in
//! `functions.rs`, so a function here replaces a simpler core stand-in of the same name.
//!
//! Each function follows stdlib's Ruby source: same argument handling, same results, and
//! the error text Puppet users see.

use crate::catalog::TrimColons;
use crate::eval::compiler::scope::ScopeId;
use crate::eval::compiler::{Compiler, Flow, StackFrame, R};
use crate::eval::functions::Args;
use crate::eval::types::PType;
use crate::eval::values::ruby_random;
use crate::eval::values::value::{Regex, Value};
use crate::eval::LogLevel;
use indexmap::IndexMap;

// ---- helpers -------------------------------------------------------------------------------------

pub(in crate::eval) fn fail(c: &Compiler<'_>, a: &Args, msg: impl std::fmt::Display) -> Flow {
    Flow::Err(c.runtime(format!("{}(): {}", a.name, msg), a.span))
}

/// An error with the message exactly as given (Ruby's `raise Puppet::ParseError, msg`).
pub(in crate::eval) fn fail_plain(c: &Compiler<'_>, a: &Args, msg: impl Into<String>) -> Flow {
    Flow::Err(c.runtime(msg, a.span))
}

pub(in crate::eval) fn arg(a: &Args, i: usize) -> Value {
    a.values.get(i).cloned().unwrap_or(Value::Undef)
}

fn need_args(c: &Compiler<'_>, a: &Args, min: usize) -> R<()> {
    if a.values.len() < min {
        return Err(fail(
            c,
            a,
            format!(
                "Wrong number of arguments given ({} for {min})",
                a.values.len()
            ),
        ));
    }
    Ok(())
}

/// Ruby's class name for a value, as stdlib's messages print it.
pub(in crate::eval) fn ruby_class(v: &Value) -> &'static str {
    match v {
        Value::Undef => "NilClass",
        Value::Default => "Symbol",
        Value::Bool(true) => "TrueClass",
        Value::Bool(false) => "FalseClass",
        Value::Int(_) => "Integer",
        Value::Float(_) => "Float",
        Value::Str(_) => "String",
        Value::Regex(_) => "Regexp",
        Value::Array(_) => "Array",
        Value::Hash(_) => "Hash",
        Value::Type(_) => "Class",
        Value::Sensitive(_) => "Puppet::Pops::Types::PSensitiveType::Sensitive",
        Value::Deferred(_) => "Puppet::Pops::Types::PuppetObject",
        Value::Timestamp(_) => "Puppet::Pops::Time::Timestamp",
        Value::Iterator(_) => "Puppet::Pops::Types::Iterator",
        Value::Timespan(_) => "Puppet::Pops::Time::Timespan",
        Value::Binary(_) => "Puppet::Pops::Types::PBinaryType::Binary",
        Value::Error(_) => "Puppet::DataTypes::Error",
    }
}

/// Ruby's `inspect` for the values stdlib messages show.
pub(in crate::eval) fn inspect(v: &Value) -> String {
    if let Some(text) = crate::eval::values::value::container_text(v, "=>", &inspect) {
        return text;
    }
    match v {
        Value::Undef => "nil".into(),
        Value::Str(s) => format!("{s:?}"),
        other => other.to_display(),
    }
}

impl Compiler<'_> {
    /// A variable's value along the scope chain without warnings (`lookupvar`).
    pub(in crate::eval) fn quiet_var(&self, name: &str, scope: ScopeId) -> Option<Value> {
        self.quiet_var_ref(name, scope).cloned()
    }

    /// [`Self::quiet_var`] without a copy (a Hiera path digs into `$facts` many times a
    /// compile: copying the whole hash each time cost most of a compile).
    pub(in crate::eval) fn quiet_var_ref(&self, name: &str, scope: ScopeId) -> Option<&Value> {
        let name = name.trim_colons();
        if let Some((class, var)) = name.rsplit_once("::") {
            // The class's scope, then the scopes of the classes it inherits from.
            let mut s = self.class_scopes.get(&class.to_lowercase()).copied();
            while let Some(id) = s {
                if let Some(v) = self.scopes[id].vars.get(var) {
                    return Some(v);
                }
                s = self.scopes[id].lookup_next.filter(|n| {
                    self.scopes[*n].kind == crate::eval::compiler::scope::ScopeKind::Class
                });
            }
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

    pub(in crate::eval) fn fact_value(&self, name: &str) -> Option<Value> {
        self.scopes[self.top].vars.get(name).cloned()
    }
}

/// Follows a dotted path (`os.release.major`) into hashes and arrays.
pub(in crate::eval) fn dig_dotted(mut cur: Value, path: &[&str]) -> Value {
    for seg in path {
        cur = match cur {
            Value::Hash(h) => h.get(&Value::str(*seg)).cloned().unwrap_or(Value::Undef),
            Value::Array(items) => seg
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i).cloned())
                .unwrap_or(Value::Undef),
            _ => Value::Undef,
        };
    }
    cur
}

// ---- resources -----------------------------------------------------------------------------------

fn type_name_of(v: &Value) -> String {
    match v {
        Value::Type(t) => match &**t {
            PType::Resource(Some(n), None) => n.to_lowercase(),
            other => other.to_string().to_lowercase(),
        },
        other => other.to_display().trim_colons().to_lowercase(),
    }
}

/// stdlib's `defined_with_params`: the resource exists and has every given parameter.
fn defined_with_params(
    c: &Compiler<'_>,
    type_name: &str,
    title: &str,
    params: &IndexMap<Value, Value>,
    scope: ScopeId,
) -> bool {
    let Some(idx) = c.find_resource(type_name, title) else {
        return false;
    };
    // Called from within a defined type, it finds itself: skip it.
    if c.scopes[scope].resource == Some(idx) && c.resources[idx].is_define {
        return false;
    }
    let r = &c.resources[idx];
    params.iter().all(|(k, v)| {
        let have = r.params.get(&k.to_display());
        match have {
            None | Some(Value::Undef) => v.is_undef(),
            Some(h) => ruby_eq(h, v),
        }
    })
}

/// Ruby's `==` between two values (a 3.x function's, an ERB template's): strict for strings
/// (`'1'` is not `1`, `'true'` is not `true`), numeric across Integer and Float (`1 == 1.0`),
/// element by element for arrays and hashes.
pub(in crate::eval) fn ruby_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(i), Value::Float(f)) | (Value::Float(f), Value::Int(i)) => *i as f64 == *f,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| ruby_eq(p, q))
        }
        (Value::Hash(x), Value::Hash(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| ruby_eq(p, q)))
        }
        _ => a == b,
    }
}

pub(in crate::eval) fn f_defined_with_params(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let reference = arg(a, 0);
    let params = match arg(a, 1) {
        Value::Hash(h) => h,
        _ => Default::default(),
    };
    let (t, title) = match &reference {
        Value::Type(t) => match &**t {
            PType::Resource(Some(t), Some(title)) => (t.clone(), title.clone()),
            PType::Class(Some(n)) => ("Class".into(), n.clone()),
            _ => return Ok(Value::Bool(false)),
        },
        Value::Str(s) => match s.split_once('[') {
            Some((t, rest)) => (
                t.to_string(),
                rest.trim_end_matches(']')
                    .trim_matches(|c| c == '\'' || c == '"')
                    .to_string(),
            ),
            None => return Ok(Value::Bool(false)),
        },
        _ => return Err(fail_plain(c, a, "Reference is not understood")),
    };
    Ok(Value::Bool(defined_with_params(
        c, &t, &title, &params, a.scope,
    )))
}

/// stdlib's `getparam(Type[title], 'param')`: the parameter's value in the catalog so far,
/// `''` when the resource or the value is missing.
pub(in crate::eval) fn f_getparam(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let reference = arg(a, 0);
    if reference.is_undef() {
        return Err(fail_plain(c, a, "Must specify a reference"));
    }
    let Value::Str(param) = arg(a, 1) else {
        return Err(fail_plain(c, a, "Must specify name of a parameter"));
    };
    let found = match &reference {
        Value::Type(t) => match &**t {
            PType::Resource(Some(t), Some(title)) => c.find_resource(t, title),
            PType::Class(Some(n)) => c.find_resource("Class", n),
            _ => None,
        },
        Value::Str(s) => s.split_once('[').and_then(|(t, rest)| {
            let title = rest
                .strip_suffix(']')?
                .trim_matches(|c| c == '\'' || c == '"');
            c.find_resource(&crate::catalog::capitalize_type(t), title)
        }),
        _ => None,
    };
    let value = found
        .filter(|_| !param.is_empty())
        .and_then(|idx| c.resources[idx].params.get(&param).cloned())
        .filter(|v| !v.is_undef());
    Ok(value.unwrap_or_else(|| Value::str("")))
}

fn ensure_one(
    c: &mut Compiler<'_>,
    a: &Args,
    type_name: &str,
    title: &Value,
    params: &IndexMap<Value, Value>,
) -> R<()> {
    let title_s = title.to_display();
    if defined_with_params(c, type_name, &title_s, params, a.scope) {
        return Ok(());
    }
    let mut inst = IndexMap::new();
    inst.insert(title.clone(), Value::Hash(params.clone().into()));
    c.call_function(
        "create_resources",
        vec![Value::str(type_name), Value::Hash(inst.into())],
        None,
        a.scope,
        a.span,
    )?;
    Ok(())
}

pub(in crate::eval) fn f_ensure_resource(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    need_args(c, a, 2)?;
    let type_name = type_name_of(&arg(a, 0));
    let params = match arg(a, 2) {
        Value::Hash(h) => h,
        _ => Default::default(),
    };
    let titles = match arg(a, 1) {
        Value::Array(items) => items,
        other => vec![other],
    };
    let a2 = Args {
        name: a.name.clone(),
        values: vec![],
        lambda: None,
        scope: a.scope,
        span: a.span,
    };
    for t in titles
        .iter()
        .flat_map(crate::eval::resources::catalog_ops::flatten_values)
    {
        ensure_one(c, &a2, &type_name, &t, &params)?;
    }
    Ok(Value::Undef)
}

pub(in crate::eval) fn f_ensure_resources(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    need_args(c, a, 2)?;
    let type_name = type_name_of(&arg(a, 0));
    let Value::Hash(instances) = arg(a, 1) else {
        return Err(fail(c, a, "second argument must be a hash"));
    };
    let defaults = match arg(a, 2) {
        Value::Hash(h) => h,
        _ => Default::default(),
    };
    for (title, params) in instances {
        let mut p = defaults.clone();
        if let Value::Hash(h) = params {
            for (k, v) in h {
                p.insert(k, v);
            }
        }
        ensure_one(c, a, &type_name, &title, &p)?;
    }
    Ok(Value::Undef)
}

pub(in crate::eval) fn f_ensure_packages(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if crate::eval::functions::stdlib9::is_stdlib9(c) {
        // stdlib 9's deprecated `ensure_packages` calls `stdlib::ensure_packages`.
        return crate::eval::functions::stdlib9::f_ensure_packages(c, a);
    }
    need_args(c, a, 1)?;
    let mut defaults = IndexMap::new();
    defaults.insert(Value::str("ensure"), Value::str("installed"));
    if let Value::Hash(h) = arg(a, 1) {
        for (k, v) in h {
            defaults.insert(k, v);
        }
    }
    if defaults.get(&Value::str("ensure")) == Some(&Value::str("present")) {
        defaults.insert(Value::str("ensure"), Value::str("installed"));
    }
    match arg(a, 0) {
        Value::Hash(packages) => {
            for (name, params) in packages {
                let mut p = defaults.clone();
                if let Value::Hash(h) = params {
                    for (k, v) in h {
                        p.insert(k, v);
                    }
                }
                ensure_one(c, a, "package", &name, &p)?;
            }
        }
        other => {
            let names = match other {
                Value::Array(items) => items,
                v => vec![v],
            };
            for n in names
                .iter()
                .flat_map(crate::eval::resources::catalog_ops::flatten_values)
            {
                let s = n.to_display();
                if s.is_empty() {
                    return Err(fail_plain(
                        c,
                        a,
                        "ensure_packages(): Empty String provided for package name",
                    ));
                }
                if c.find_resource("Package", &s).is_none() {
                    ensure_one(c, a, "package", &n, &defaults)?;
                }
            }
        }
    }
    Ok(Value::Undef)
}

// ---- scope ---------------------------------------------------------------------------------------

pub(in crate::eval) fn f_assert_private(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let module = c.quiet_var("module_name", a.scope).unwrap_or(Value::Undef);
    let caller = c
        .quiet_var("caller_module_name", a.scope)
        .unwrap_or(Value::Undef);
    if module.to_display() == caller.to_display() {
        return Ok(Value::Undef);
    }
    let msg = match arg(a, 0) {
        Value::Str(s) => s,
        _ => {
            let src = c.scopes[c.real_scope(a.scope)].source.clone();
            match src.split_once(' ') {
                Some(("class", n)) => format!("Class {n} is private"),
                Some((_, n)) => format!("Definition {n} is private"),
                None => format!("Class {src} is private"),
            }
        }
    };
    Err(fail_plain(c, a, msg))
}

pub(in crate::eval) fn f_fact(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let name = arg(a, 0).to_display();
    let facts = c.fact_value("facts").unwrap_or(Value::Undef);
    let path: Vec<&str> = name.split('.').collect();
    Ok(dig_dotted(facts, &path))
}

/// stdlib's `deprecation(key, message, use_strict_setting)`.
pub(in crate::eval) fn f_deprecation(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (key, message) = (arg(a, 0).to_display(), arg(a, 1).to_display());
    deprecation_warning(c, &key, &message);
    Ok(Value::Undef)
}

/// What stdlib's `deprecation` logs: a warning once per key (`Puppet.deprecation_warning`),
/// the message followed by the two innermost frames of Puppet's stack as Ruby prints them
/// (`at ["site.pp", 5]:["site.pp", 0]`; a missing frame prints as nothing), and where in
/// the module's Ruby it was logged.
pub(in crate::eval) fn deprecation_warning(c: &mut Compiler<'_>, key: &str, message: &str) {
    if !c
        .warned_deprecations
        .insert(format!("stdlib deprecation {key}"))
    {
        return;
    }
    let frame = |depth: usize| {
        let Some(f) = c.puppet_stack.iter().rev().nth(depth) else {
            return String::new();
        };
        let (file, line) = match *f {
            StackFrame::Call(span) => (span.file, c.span_line(span).unwrap_or(0)),
            StackFrame::Main(file) => (file, 0),
        };
        let name = c.sources.get(file).map_or("unknown", |f| f.name.as_str());
        format!("[{}, {line}]", crate::ruby_text::inspect_str(name))
    };
    let mut text = format!("{message} at {}:{}", frame(0), frame(1));
    if let Some((path, line)) = ruby_source_line(c, "deprecation", "Puppet.deprecation_warning(") {
        text.push_str(&format!("\n   (location: {path}:{line}:in `deprecation')"));
    }
    c.log(LogLevel::Warning, text);
}

/// The text of a module's 4.x Ruby function (`lib/puppet/functions/NAME.rb`), with the name
/// the loader gives its file.
fn ruby_function_source(c: &Compiler<'_>, name: &str) -> Option<(String, String)> {
    let file = c.loader.ruby_function_file(name).filter(|f| !f.legacy)?;
    let rel = format!("lib/puppet/functions/{}.rb", name.replace("::", "/"));
    let module_dir = file.path.strip_suffix(&rel)?.trim_end_matches('/');
    let module = module_dir.rsplit('/').next()?;
    c.loader.load(module, &rel)
}

/// The file of a module's Ruby function and the line of its first `needle`.
fn ruby_source_line(c: &Compiler<'_>, function: &str, needle: &str) -> Option<(String, usize)> {
    let (path, text) = ruby_function_source(c, function)?;
    let line = text.lines().position(|l| l.contains(needle))? + 1;
    Some((path, line))
}

/// When a module ships `name` as one of stdlib 9's generated shims (`deprecation_gen`,
/// calling `deprecation(KEY, MESSAGE, false)` and then the namespaced function): its key
/// and message.
pub(in crate::eval) fn shim_message(c: &Compiler<'_>, name: &str) -> Option<(String, String)> {
    if name.contains("::") {
        return None;
    }
    let (_, text) = ruby_function_source(c, name)?;
    if !text.contains("def deprecation_gen") {
        return None;
    }
    let rest =
        &text[text.find("call_function('deprecation',")? + "call_function('deprecation',".len()..];
    let mut quoted = rest.split('\'').skip(1).step_by(2);
    let key = quoted.next()?.to_string();
    let message = quoted.next()?.to_string();
    Some((key, message))
}

pub(in crate::eval) fn f_is_function_available(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let name = arg(a, 0).to_display();
    let known = crate::eval::functions::registry::entry(&name).is_some()
        || c.find_function(&name).is_some();
    Ok(Value::Bool(known))
}

// ---- random --------------------------------------------------------------------------------------

fn fqdn(c: &Compiler<'_>) -> String {
    c.fact_value("fqdn")
        .or_else(|| {
            c.fact_value("facts")
                .map(|f| dig_dotted(f, &["networking", "fqdn"]))
        })
        .map(|v| v.to_display())
        .unwrap_or_default()
}

/// Ruby's `Array#join` flattens nested arrays.
fn ruby_join(vals: &[Value], sep: &str) -> String {
    fn flat(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Array(items) => items.iter().for_each(|x| flat(x, out)),
            other => out.push(other.to_display()),
        }
    }
    let mut out = vec![];
    vals.iter().for_each(|v| flat(v, &mut out));
    out.join(sep)
}

pub(in crate::eval) fn f_fqdn_rotate(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    need_args(c, a, 1)?;
    let value = arg(a, 0);
    let (mut items, is_str) = match &value {
        Value::Array(x) => (x.clone(), false),
        Value::Str(s) => (
            s.chars().map(|ch| Value::str(ch.to_string())).collect(),
            true,
        ),
        _ => {
            return Err(fail(c, a, "Requires either array or string to work with"));
        }
    };
    if items.len() <= 1 {
        return Ok(value);
    }
    let mut seed_parts = vec![Value::str(fqdn(c))];
    seed_parts.extend(a.values[1..].iter().cloned());
    let seed = ruby_join(&seed_parts, ":") + if a.values.len() == 1 { ":" } else { "" };
    let offset = ruby_random::deterministic_rand(&seed, items.len() as u64) as usize;
    items.rotate_left(offset);
    Ok(if is_str {
        Value::Str(items.iter().map(|v| v.to_display()).collect())
    } else {
        Value::Array(items)
    })
}

pub(in crate::eval) fn f_fqdn_rand(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    need_args(c, a, 1)?;
    let max = match arg(a, 0) {
        Value::Int(i) => i,
        Value::Str(s) => s.trim().parse().unwrap_or(0),
        Value::Float(f) => f as i64,
        _ => 0,
    };
    // `[fqdn, max, initial_seed].join(':')`; a missing seed joins as an empty string.
    let mut host = fqdn(c);
    if arg(a, 2).truthy() {
        host = host.to_lowercase();
    }
    let initial = match arg(a, 1) {
        Value::Undef => String::new(),
        v => ruby_join(&[v], ":"),
    };
    let seed = format!("{host}:{max}:{initial}");
    if max <= 0 {
        return Ok(Value::Int(0));
    }
    Ok(Value::Int(
        ruby_random::deterministic_rand(&seed, max as u64) as i64,
    ))
}

// ---- collections ---------------------------------------------------------------------------------

pub(in crate::eval) fn f_delete_undef_values(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match arg(a, 0) {
        Value::Hash(h) => Value::Hash(h.into_iter().filter(|(_, v)| !v.is_undef()).collect()),
        Value::Array(x) => Value::Array(x.into_iter().filter(|v| !v.is_undef()).collect()),
        _ => return Err(fail(c, a, "expected an array or hash")),
    })
}

pub(in crate::eval) fn f_delete_values(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let drop = arg(a, 1);
    match arg(a, 0) {
        Value::Hash(h) => Ok(Value::Hash(
            h.into_iter().filter(|(_, v)| *v != drop).collect(),
        )),
        other => Err(fail(
            c,
            a,
            format!(
                "First argument must be a Hash. Given an argument of class {}.",
                ruby_class(&other)
            ),
        )),
    }
}

pub(in crate::eval) fn f_delete_at(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Array(mut items) = arg(a, 0) else {
        return Err(fail(c, a, "Requires array to work with"));
    };
    let idx = match arg(a, 1) {
        Value::Int(i) => i,
        Value::Str(s) => s.parse().unwrap_or(-1),
        _ => -1,
    };
    if idx < 0 || idx as usize >= items.len() {
        return Err(fail(c, a, "Given index exceeds size of array given"));
    }
    items.remove(idx as usize);
    Ok(Value::Array(items))
}

pub(in crate::eval) fn f_values_at(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Array(items) = arg(a, 0) else {
        return Err(fail(c, a, "Requires array to work with"));
    };
    let idx = match arg(a, 1) {
        Value::Array(x) => x,
        other => vec![other],
    };
    let mut out = vec![];
    for i in idx {
        let s = i.to_display();
        if let Some((lo, hi)) = s.split_once('-') {
            let (lo, hi): (usize, usize) = (lo.parse().unwrap_or(0), hi.parse().unwrap_or(0));
            for j in lo..=hi {
                out.push(items.get(j).cloned().unwrap_or(Value::Undef));
            }
        } else {
            let j: usize = s
                .parse()
                .map_err(|_| fail(c, a, "Unknown format of given index"))?;
            if j >= items.len() {
                return Err(fail(c, a, "Given index exceeds array size"));
            }
            out.push(items[j].clone());
        }
    }
    Ok(Value::Array(out))
}

fn affix(c: &Compiler<'_>, a: &Args, before: bool) -> R<Value> {
    let fix = match arg(a, 1) {
        Value::Undef => String::new(),
        v => v.to_display(),
    };
    let wrap = |s: &Value| {
        let s = s.to_display();
        Value::Str(if before {
            format!("{fix}{s}")
        } else {
            format!("{s}{fix}")
        })
    };
    match arg(a, 0) {
        Value::Array(items) => Ok(Value::Array(items.iter().map(wrap).collect())),
        Value::Hash(h) => Ok(Value::Hash(
            h.iter().map(|(k, v)| (wrap(k), v.clone())).collect(),
        )),
        other => Err(fail(
            c,
            a,
            format!(
                "expected first argument to be an Array or a Hash, got {}",
                inspect(&other)
            ),
        )),
    }
}

pub(in crate::eval) fn f_prefix(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    affix(c, a, true)
}

pub(in crate::eval) fn f_suffix(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    affix(c, a, false)
}

pub(in crate::eval) fn f_join_keys_to_values(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Hash(h) = arg(a, 0) else {
        return Err(fail(c, a, "The first argument must be a hash"));
    };
    let sep = arg(a, 1).to_display();
    let mut out = vec![];
    for (k, v) in h {
        match v {
            Value::Array(items) => {
                for x in items {
                    out.push(Value::Str(format!(
                        "{}{sep}{}",
                        k.to_display(),
                        x.to_display()
                    )));
                }
            }
            Value::Undef => out.push(Value::Str(format!("{}{sep}", k.to_display()))),
            other => out.push(Value::Str(format!(
                "{}{sep}{}",
                k.to_display(),
                other.to_display()
            ))),
        }
    }
    Ok(Value::Array(out))
}

pub(in crate::eval) fn f_dirname(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Str(p) = arg(a, 0) else {
        return Err(fail(c, a, "Requires string as argument"));
    };
    let trimmed = p.trim_end_matches('/');
    Ok(Value::Str(match trimmed.rfind('/') {
        Some(0) => "/".into(),
        Some(i) => trimmed[..i].trim_end_matches('/').to_string(),
        None if p.starts_with('/') => "/".into(),
        None => ".".into(),
    }))
}

pub(in crate::eval) fn f_basename(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Str(p) = arg(a, 0) else {
        return Err(fail(c, a, "Requires string as first argument"));
    };
    let trimmed = p.trim_end_matches('/');
    let mut base = trimmed.rsplit('/').next().unwrap_or("").to_string();
    if let Value::Str(ext) = arg(a, 1) {
        if ext == ".*" {
            if let Some(i) = base.rfind('.').filter(|i| *i > 0) {
                base.truncate(i);
            }
        } else if base.ends_with(&ext) && base != ext {
            base.truncate(base.len() - ext.len());
        }
    }
    Ok(Value::Str(base))
}

fn to_bool(c: &Compiler<'_>, a: &Args, v: &Value) -> R<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Str(s) => match s.as_str() {
            "" => Ok(false),
            "1" | "t" | "y" | "true" | "yes" => Ok(true),
            "0" | "f" | "n" | "false" | "no" | "undef" | "undefined" => Ok(false),
            _ => Err(fail(c, a, "Unknown type of boolean given")),
        },
        _ => Err(fail(c, a, "Requires a boolean or string")),
    }
}

pub(in crate::eval) fn f_bool2num(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let b = to_bool(c, a, &arg(a, 0))?;
    Ok(Value::Int(b as i64))
}

pub(in crate::eval) fn f_bool2str(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = arg(a, 0);
    let Value::Bool(b) = v else {
        return Err(fail(c, a, "Requires a boolean to work with"));
    };
    let (t, f) = match (arg(a, 1), arg(a, 2)) {
        (Value::Str(t), Value::Str(f)) => (t, f),
        _ => ("true".into(), "false".into()),
    };
    Ok(Value::Str(if b { t } else { f }))
}

pub(in crate::eval) fn f_num2bool(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let n = match arg(a, 0) {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
        Value::Bool(b) => b as i64 as f64,
        Value::Str(s) => s.trim().parse::<f64>().unwrap_or(0.0),
        _ => 0.0,
    };
    Ok(Value::Bool(n.trunc() > 0.0))
}

pub(in crate::eval) fn f_any2bool(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(match arg(a, 0) {
        Value::Bool(b) => b,
        Value::Undef => false,
        Value::Str(s) => matches!(s.as_str(), "1" | "t" | "y" | "true" | "yes"),
        Value::Int(i) => i > 0,
        Value::Float(f) => f > 0.0,
        _ => true,
    }))
}

// ---- serialization -------------------------------------------------------------------------------

/// Ruby's `JSON.generate`: the pretty generator's layout with every separator empty, so a
/// Float is written as Ruby's `Float#to_s` (`1.0e+20`, not `1e+20`).
pub(in crate::eval) fn f_to_json(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let compact = PrettyJson {
        indent: String::new(),
        space: String::new(),
        space_before: String::new(),
        object_nl: String::new(),
        array_nl: String::new(),
    };
    let mut out = String::new();
    compact.generate(&arg(a, 0).to_json(), 0, &mut out);
    Ok(Value::Str(out))
}

pub(in crate::eval) fn f_to_json_pretty(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut v = arg(a, 0);
    // stdlib's `data.compact`: the undef values of the top level only.
    if matches!(arg(a, 1), Value::Bool(true)) {
        v = match v {
            Value::Hash(h) => Value::Hash(h.into_iter().filter(|(_, v)| !v.is_undef()).collect()),
            Value::Array(x) => Value::Array(x.into_iter().filter(|v| !v.is_undef()).collect()),
            other => other,
        };
    }
    let mut layout = PrettyJson::default();
    if let Value::Hash(opts) = arg(a, 2) {
        for (k, v) in opts.iter() {
            let Value::Str(text) = v else { continue };
            let slot = match k.to_display().as_str() {
                "indent" => &mut layout.indent,
                "space" => &mut layout.space,
                "space_before" => &mut layout.space_before,
                "object_nl" => &mut layout.object_nl,
                "array_nl" => &mut layout.array_nl,
                _ => continue,
            };
            *slot = text.clone();
        }
    }
    let mut out = String::new();
    layout.generate(&v.to_json(), 0, &mut out);
    out.push('\n');
    Ok(Value::Str(out))
}

/// Ruby's `JSON.pretty_generate` (the json gem's generator state): an empty array is
/// `[` + array_nl + array_nl + indent + `]`, an empty object `{` + object_nl + indent + `}`.
struct PrettyJson {
    indent: String,
    space: String,
    space_before: String,
    object_nl: String,
    array_nl: String,
}

impl Default for PrettyJson {
    fn default() -> Self {
        PrettyJson {
            indent: "  ".into(),
            space: " ".into(),
            space_before: String::new(),
            object_nl: "\n".into(),
            array_nl: "\n".into(),
        }
    }
}

impl PrettyJson {
    fn pad(&self, depth: usize, out: &mut String) {
        for _ in 0..depth {
            out.push_str(&self.indent);
        }
    }

    fn generate(&self, v: &serde_json::Value, depth: usize, out: &mut String) {
        match v {
            serde_json::Value::Object(m) => {
                out.push('{');
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&self.object_nl);
                    self.pad(depth + 1, out);
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push_str(&self.space_before);
                    out.push(':');
                    out.push_str(&self.space);
                    self.generate(x, depth + 1, out);
                }
                out.push_str(&self.object_nl);
                self.pad(depth, out);
                out.push('}');
            }
            serde_json::Value::Array(items) => {
                out.push('[');
                out.push_str(&self.array_nl);
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        out.push_str(&self.array_nl);
                    }
                    self.pad(depth + 1, out);
                    self.generate(x, depth + 1, out);
                }
                out.push_str(&self.array_nl);
                self.pad(depth, out);
                out.push(']');
            }
            serde_json::Value::Number(n) if n.is_f64() => out.push_str(
                &crate::ruby_text::ruby_float(n.as_f64().unwrap_or_default()),
            ),
            scalar => out.push_str(&scalar.to_string()),
        }
    }
}

pub(in crate::eval) fn f_to_yaml(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Str(crate::eval::hiera::yaml::to_yaml(
        &arg(a, 0).to_json(),
    )))
}

/// parsejson/parseyaml return `parsed || arguments[1]`: a document that is null or `false`
/// (an empty YAML document too) gives the default, or undef without one.
fn parsed_or_default(v: Value, a: &Args) -> Value {
    if v.truthy() {
        v
    } else {
        a.values.get(1).cloned().unwrap_or(Value::Undef)
    }
}

/// A parse error is rescued only when the default is truthy in Ruby (not nil, not `false`).
fn rescues(a: &Args) -> bool {
    a.values.get(1).is_some_and(Value::truthy)
}

pub(in crate::eval) fn f_parsejson(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let text = arg(a, 0).to_display();
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(j) => Ok(parsed_or_default(Value::from_json(&j), a)),
        Err(e) => {
            if rescues(a) {
                Ok(arg(a, 1))
            } else {
                Err(fail_plain(c, a, format!("parsejson(): {e}")))
            }
        }
    }
}

pub(in crate::eval) fn f_parseyaml(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let text = arg(a, 0).to_display();
    match crate::eval::hiera::yaml::parse(&text) {
        Ok(j) => Ok(parsed_or_default(Value::from_json(&j), a)),
        Err(e) => {
            if rescues(a) {
                Ok(arg(a, 1))
            } else {
                Err(fail_plain(c, a, format!("parseyaml(): {e}")))
            }
        }
    }
}

// ---- strings -------------------------------------------------------------------------------------

pub(in crate::eval) fn f_grep(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Array(items) = arg(a, 0) else {
        return Err(fail(c, a, "first argument must be an array"));
    };
    let pat = match arg(a, 1) {
        Value::Regex(r) => r,
        other => Regex::new(&other.to_display()).map_err(|e| fail(c, a, e))?,
    };
    Ok(Value::Array(
        items
            .into_iter()
            .filter(|v| pat.is_match(&v.to_display()))
            .collect(),
    ))
}

pub(in crate::eval) fn deep_merge_values(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Hash(mut x), Value::Hash(y)) => {
            // Ruby's `Hash#merge` with a block: a key both have keeps its place.
            for (k, v) in y {
                match x.get_mut(&k) {
                    Some(old) => {
                        let prev = std::mem::replace(old, Value::Undef);
                        *old = deep_merge_values(prev, v);
                    }
                    None => {
                        x.insert(k, v);
                    }
                }
            }
            Value::Hash(x)
        }
        (_, b) => b,
    }
}

pub(in crate::eval) fn f_deep_merge(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    need_args(c, a, 2)?;
    let mut out = Value::Hash(Default::default());
    for v in a.values.clone() {
        match v {
            Value::Undef => {}
            Value::Str(s) if s.is_empty() => {}
            Value::Hash(_) => out = deep_merge_values(out, v),
            other => {
                return Err(fail(
                    c,
                    a,
                    format!(
                        "unexpected argument type {}, only expects hash arguments",
                        ruby_class(&other)
                    ),
                ))
            }
        }
    }
    Ok(out)
}

pub(in crate::eval) fn f_enclose_ipv6(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let items = match arg(a, 0) {
        Value::Array(x) => x,
        other => vec![other],
    };
    Ok(Value::Array(
        items
            .into_iter()
            .map(|v| {
                let s = v.to_display();
                if s.contains(':') && !s.starts_with('[') {
                    Value::Str(format!("[{s}]"))
                } else {
                    Value::Str(s)
                }
            })
            .collect(),
    ))
}

/// Ruby's `Shellwords.escape`: every character but `A-Za-z0-9_-.,:+/@` gets a backslash
/// (a non-ASCII one too), a newline becomes `'\n'`.
pub(in crate::eval) fn shell_escape(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    for ch in s.chars() {
        if ch == '\n' {
            out.push_str("'\n'");
        } else if ch.is_ascii_alphanumeric() || "_-.,:+/@".contains(ch) {
            out.push(ch);
        } else {
            out.push('\\');
            out.push(ch);
        }
    }
    out
}

pub(in crate::eval) fn f_shell_join(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Array(items) = arg(a, 0) else {
        return Err(fail(c, a, "Requires an array"));
    };
    Ok(Value::Str(
        items
            .iter()
            .map(|v| shell_escape(&v.to_display()))
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

pub(in crate::eval) fn f_shell_escape(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Str(shell_escape(&arg(a, 0).to_display())))
}

/// `URI::DEFAULT_PARSER.escape`: escapes what is not unreserved or reserved.
fn uri_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        let ch = b as char;
        if ch.is_ascii_alphanumeric() || "-_.!~*'();/?:@&=+$,[]#".contains(ch) {
            out.push(ch);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub(in crate::eval) fn f_uriescape(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match arg(a, 0) {
        Value::Array(x) => Value::Array(
            x.iter()
                .map(|v| Value::Str(uri_escape(&v.to_display())))
                .collect(),
        ),
        v => Value::Str(uri_escape(&v.to_display())),
    })
}

pub(in crate::eval) fn f_dig44(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut cur = arg(a, 0);
    let Value::Array(path) = arg(a, 1) else {
        return Ok(arg(a, 2));
    };
    for k in path {
        cur = match (cur, &k) {
            (Value::Hash(h), k) => h.get(k).cloned().unwrap_or(Value::Undef),
            (Value::Array(x), Value::Int(i)) => x.get(*i as usize).cloned().unwrap_or(Value::Undef),
            _ => Value::Undef,
        };
        if cur.is_undef() {
            return Ok(arg(a, 2));
        }
    }
    Ok(cur)
}

pub(in crate::eval) fn f_base64(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mode = arg(a, 0).to_display();
    let s = arg(a, 1).to_display();
    let method = match arg(a, 2) {
        Value::Str(m) => m,
        _ => "default".into(),
    };
    use crate::eval::values::strings::{base64_decode, base64_encode};
    match mode.as_str() {
        "encode" => {
            let enc = base64_encode(s.as_bytes());
            Ok(Value::Str(match method.as_str() {
                "strict" => enc,
                "urlsafe" => enc.replace('+', "-").replace('/', "_"),
                // Ruby's Base64.encode64: lines of 60 characters, each ending in a newline.
                _ => {
                    let mut out = String::new();
                    for chunk in enc.as_bytes().chunks(60) {
                        out.push_str(std::str::from_utf8(chunk).unwrap_or(""));
                        out.push('\n');
                    }
                    out
                }
            }))
        }
        "decode" => {
            let cleaned: String = s
                .chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| match (method.as_str(), c) {
                    ("urlsafe", '-') => '+',
                    ("urlsafe", '_') => '/',
                    (_, c) => c,
                })
                .collect();
            base64_decode(&cleaned)
                .map(|b| Value::Str(String::from_utf8_lossy(&b).into_owned()))
                .ok_or_else(|| fail(c, a, "invalid base64"))
        }
        _ => Err(fail(
            c,
            a,
            "the first argument must be one of 'encode' or 'decode'",
        )),
    }
}

pub(in crate::eval) fn f_count(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let items = match arg(a, 0) {
        Value::Array(x) => x,
        Value::Hash(h) => h.into_inner().into_values().collect(),
        other => vec![other],
    };
    Ok(Value::Int(if a.values.len() > 1 {
        let w = arg(a, 1);
        items.iter().filter(|v| **v == w).count()
    } else {
        items
            .iter()
            .filter(|v| !v.is_undef() && !matches!(v, Value::Str(s) if s.is_empty()))
            .count()
    } as i64))
}

pub(in crate::eval) fn f_last(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match arg(a, 0) {
        Value::Array(x) => x.last().cloned().unwrap_or(Value::Undef),
        Value::Str(s) => s
            .chars()
            .last()
            .map(|c| Value::str(c.to_string()))
            .unwrap_or(Value::Undef),
        _ => Value::Undef,
    })
}

pub(in crate::eval) fn f_first(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(match arg(a, 0) {
        Value::Array(x) => x.first().cloned().unwrap_or(Value::Undef),
        Value::Str(s) => s
            .chars()
            .next()
            .map(|c| Value::str(c.to_string()))
            .unwrap_or(Value::Undef),
        _ => Value::Undef,
    })
}

fn two_arrays(c: &Compiler<'_>, a: &Args) -> R<(Vec<Value>, Vec<Value>)> {
    match (arg(a, 0), arg(a, 1)) {
        (Value::Array(x), Value::Array(y)) => Ok((x, y)),
        _ => Err(fail(c, a, "Every parameter must be an array")),
    }
}

pub(in crate::eval) fn f_union(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out: Vec<Value> = vec![];
    for v in a.values.clone() {
        let Value::Array(x) = v else {
            return Err(fail(c, a, "Every parameter must be an array"));
        };
        for i in x {
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    Ok(Value::Array(out))
}

pub(in crate::eval) fn f_intersection(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (x, y) = two_arrays(c, a)?;
    let mut out: Vec<Value> = vec![];
    for i in x {
        if y.contains(&i) && !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(Value::Array(out))
}

pub(in crate::eval) fn f_difference(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (x, y) = two_arrays(c, a)?;
    Ok(Value::Array(
        x.into_iter().filter(|i| !y.contains(i)).collect(),
    ))
}

pub(in crate::eval) fn f_reject(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Array(items) = arg(a, 0) else {
        return Err(fail(c, a, "first argument must be an array"));
    };
    let pat = Regex::new(&arg(a, 1).to_display()).map_err(|e| fail(c, a, e))?;
    Ok(Value::Array(
        items
            .into_iter()
            .filter(|v| !pat.is_match(&v.to_display()))
            .collect(),
    ))
}
