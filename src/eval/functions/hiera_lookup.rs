//! The evaluator's side of Hiera: `lookup()` and automatic class parameter lookup
//! (`classname::param`), over files the [`Loader`](crate::eval::Loader) provides.

use crate::catalog::TrimColons;
use crate::eval::compiler::scope::ScopeId;
use crate::eval::compiler::{Compiler, Flow, R};
use crate::eval::functions::stdlib::{arg, fail_plain};
use crate::eval::functions::Args;
use crate::eval::hiera::{self, Merge};
use crate::eval::values::value::Value;
use crate::span::Span;

struct Source<'l>(&'l dyn crate::eval::Loader);

impl hiera::DataSource for Source<'_> {
    fn read(&self, path: &str) -> Result<Option<std::sync::Arc<str>>, String> {
        self.0.load_data(path)
    }

    fn shared(&self) -> Option<&hiera::Shared> {
        self.0.parse_cache().map(|c| &c.hiera)
    }
}

impl Compiler<'_> {
    /// Looks `key` up in Hiera; `Ok(None)` when no layer has it.
    pub(in crate::eval) fn hiera_lookup(
        &mut self,
        key: &str,
        merge: Option<Merge>,
        scope: ScopeId,
        span: Span,
    ) -> R<Option<Value>> {
        self.hiera_lookup_in(key, merge, false, scope, span)
    }

    /// [`Self::hiera_lookup`], as the `hiera_*` functions do it when `hiera_call`: only the
    /// global layer unless the environment has a `hiera.yaml` of its own.
    pub(in crate::eval) fn hiera_lookup_in(
        &mut self,
        key: &str,
        merge: Option<Merge>,
        hiera_call: bool,
        scope: ScopeId,
        span: Span,
    ) -> R<Option<Value>> {
        let mut cache = std::mem::take(&mut self.hiera_cache);
        let global = self.loader.hiera_config_name();
        let result = {
            let this = &*self;
            let mut vars = |name: &str| -> Value {
                let name = name.trim_colons();
                let mut parts = name.split('.');
                let first = parts.next().unwrap_or_default();
                // Dug by reference: only the value found is copied.
                let mut v = this.quiet_var_ref(first, scope);
                for seg in parts {
                    v = match v {
                        Some(Value::Hash(h)) => h.get(&Value::str(seg)),
                        _ => None,
                    };
                }
                v.cloned().unwrap_or(Value::Undef)
            };
            let src = Source(this.loader);
            let mut lookup = hiera::Lookup::new(&src, &mut cache, &mut vars, global);
            lookup.global_only = hiera_call && !lookup.env_has_config();
            lookup.lookup(key, merge).and_then(|found| match found {
                Some(v) => Ok(Some((v, lookup.convert_to(key)?))),
                None => Ok(None),
            })
        };
        self.hiera_cache = cache;
        let found = result.map_err(|m| Flow::Err(self.runtime(m, span)))?;
        let Some((v, convert_to)) = found else {
            return Ok(None);
        };
        // `lookup_options` `convert_to`: the value through the type's `new`
        // (`Sensitive`, or `[Array, true]` with arguments).
        let (type_name, args) = match convert_to {
            None | Some(Value::Undef) => return Ok(Some(v)),
            Some(Value::Array(items)) if !items.is_empty() => {
                (items[0].clone(), items[1..].to_vec())
            }
            Some(other) => (other, vec![]),
        };
        let t = match type_name {
            Value::Type(t) => *t,
            other => self.type_from_string(&other.to_display(), span)?,
        };
        let mut values = vec![Value::Type(Box::new(t)), v];
        values.extend(args);
        self.call_function("new", values, None, scope, span)
            .map(Some)
    }

    /// Automatic parameter lookup: a class parameter not given in the declaration takes
    /// `classname::param` from Hiera when found there.
    pub(in crate::eval) fn hiera_class_param(
        &mut self,
        idx: usize,
        sid: ScopeId,
        param: &str,
        span: Span,
    ) -> R<()> {
        if self.resources[idx].params.contains_key(param) {
            return Ok(());
        }
        let Some(class) = self.scopes[sid].class_name.clone() else {
            return Ok(());
        };
        if let Some(v) = self.hiera_lookup(&format!("{class}::{param}"), None, sid, span)? {
            self.resources[idx].params.insert(param.to_string(), v);
        }
        Ok(())
    }
}

const LOOKUP_NAME: &str = "NameType = Variant[String, Array[String]] name";
const LOOKUP_MERGE: &str = "MergeType = Variant[String[1], Hash[String, Scalar]]";
const LOOKUP_OPTIONS: &str = "Struct[{'value_type' => Optional[ValueType = Type], 'default_value' => DefaultValueType = Any, 'override' => Optional[Hash[String, Any]], 'default_values_hash' => Optional[Hash[String, Any]], 'merge' => Optional[MergeType = Variant[String[1], Hash[String, Scalar]]]}]";

/// Puppet's error for `lookup(name, value_type [, merge])` whose value type is no type
/// (`lookup('k', undef, 'first')`): every dispatch of the function, with why it refused
/// the arguments.
fn positional_mismatch(a: &Args) -> Option<String> {
    let n = a.values.len();
    let vt = a.values.get(1)?;
    if !(2..=3).contains(&n)
        || matches!(vt, Value::Type(_))
        || (n == 2 && matches!(vt, Value::Hash(_)))
        || (n == 3 && !matches!(a.values[2], Value::Str(_) | Value::Hash(_) | Value::Undef))
    {
        return None;
    }
    let got = vt.type_name();
    let got = got.split('[').next().unwrap_or(&got).to_string();
    let first = format!(
        "  ({LOOKUP_NAME}, ValueType = Type value_type?, {LOOKUP_MERGE} merge?)\n    rejected: parameter 'value_type' expects a ValueType = Type value, got {got}"
    );
    let block = "BlockType = Callable[NameType = Variant[String, Array[String]]] block?";
    let with_name = "OptionsWithName = Struct[{'name' => NameType = Variant[String, Array[String]], 'value_type' => Optional[ValueType = Type], 'default_value' => DefaultValueType = Any, 'override' => Optional[Hash[String, Any]], 'default_values_hash' => Optional[Hash[String, Any]], 'merge' => Optional[MergeType = Variant[String[1], Hash[String, Scalar]]]}]";
    let last = if n == 2 {
        format!(
            "parameter 'options_hash' expects an OptionsWithoutName = {LOOKUP_OPTIONS} value, got {got}"
        )
    } else {
        format!("expects 2 arguments, got {n}")
    };
    Some(format!(
        "The function 'lookup' was called with arguments it does not accept. It expects one of:\n{first}\n  ({LOOKUP_NAME}, Optional[ValueType] value_type, Optional[MergeType] merge, DefaultValueType = Any default_value)\n    rejected: expects 4 arguments, got {n}\n{first}\n  ({with_name} options_hash, {block})\n    rejected: expects 1 argument, got {n}\n  (Variant[String, Array[String]] name, OptionsWithoutName = {LOOKUP_OPTIONS} options_hash, {block})\n    rejected: {last}"
    ))
}

/// `lookup(name [, type [, merge [, default]]])`, `lookup(name, options)`, names as an
/// array (the first found wins), and a lambda giving the default.
pub fn f_lookup(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    // lookup(name, [value_type], [merge], [default_value]), lookup(name, options_hash) and
    // lookup(options_hash with 'name'), each optionally with a block (Puppet's lookup.rb).
    let (name_value, opts) = match arg(a, 0) {
        Value::Hash(opts) => (
            opts.get(&Value::str("name"))
                .cloned()
                .unwrap_or(Value::Undef),
            Some(opts),
        ),
        first => match arg(a, 1) {
            Value::Hash(opts) => (first, Some(opts)),
            _ => (first, None),
        },
    };
    if opts.is_none() {
        if let Some(m) = positional_mismatch(a) {
            return Err(fail_plain(c, a, m));
        }
    }
    let names: Vec<String> = match &name_value {
        Value::Array(x) => x.iter().map(|v| v.to_display()).collect(),
        Value::Str(s) => vec![s.clone()],
        other => {
            return Err(fail_plain(
                c,
                a,
                format!(
                    "'lookup' parameter 'name' expects a value of type String or Array, got {}",
                    other.type_name()
                ),
            ))
        }
    };
    let opt = |k: &str| opts.as_ref().and_then(|o| o.get(&Value::str(k)).cloned());
    let hash_opt = |k: &str| match opt(k) {
        Some(Value::Hash(h)) => h,
        _ => Default::default(),
    };
    let (value_type, merge, default, overrides, default_values) = match &opts {
        Some(_) => (
            match opt("value_type") {
                Some(Value::Type(t)) => Some(*t),
                _ => None,
            },
            opt("merge"),
            opt("default_value"),
            hash_opt("override"),
            hash_opt("default_values_hash"),
        ),
        // The positional form: lookup(name, value_type, merge, default_value), where
        // value_type and merge may be undef.
        None => (
            match arg(a, 1) {
                Value::Type(t) => Some(*t),
                _ => None,
            },
            a.values.get(2).cloned(),
            (a.values.len() > 3).then(|| arg(a, 3)),
            Default::default(),
            Default::default(),
        ),
    };
    let strategy = match &merge {
        None | Some(Value::Undef) => None,
        Some(m) => match Merge::from_value(m) {
            Some(s) => Some(s),
            None => {
                return Err(fail_plain(
                    c,
                    a,
                    format!("Unknown merge strategy: '{}'", m.to_display()),
                ))
            }
        },
    };
    // The override hash first, then Hiera, then the default values hash, per name in turn.
    // Each value is checked against value_type under the name of where it came from.
    let mut found = None;
    for n in &names {
        if let Some(v) = overrides.get(&Value::str(n.as_str())) {
            found = Some((
                v.clone(),
                format!("Value found for key '{n}' in override hash"),
            ));
            break;
        }
        if let Some(v) = c.hiera_lookup(n, strategy.clone(), a.scope, a.span)? {
            found = Some((v, "Found value".to_string()));
            break;
        }
    }
    if found.is_none() {
        found = names.iter().find_map(|n| {
            default_values.get(&Value::str(n.as_str())).map(|v| {
                let label = format!("Value found for key '{n}' in default values hash");
                (v.clone(), label)
            })
        });
    }
    // Not found: the block, else the default value, else an error.
    let (v, label) = match (found, a.lambda, default) {
        (Some(found), _, _) => found,
        (None, Some(l), _) => (
            c.call_lambda(l, vec![name_value.clone()], a.scope, a.span)?,
            "Value returned from default block".to_string(),
        ),
        (None, None, Some(d)) => (d, "Default value".to_string()),
        (None, None, None) => {
            let shown = if names.len() == 1 {
                format!("the name '{}'", names[0])
            } else {
                format!(
                    "any of the names [{}]",
                    names
                        .iter()
                        .map(|n| format!("'{n}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            // Puppet's LookupError is not wrapped by the evaluator: no location.
            return Err(Flow::Err(c.plain(
                format!("Function lookup() did not find a value for {shown}"),
                Some(a.span),
            )));
        }
    };
    if let Some(t) = value_type {
        if !t.is_instance(&v) {
            return Err(Flow::Err(c.runtime(
                format!(
                    "{label} has wrong type, {}",
                    crate::eval::types::mismatch(&t, &v)
                ),
                a.span,
            )));
        }
    }
    Ok(v)
}

/// `hiera(key [, default [, override]])` and the block forms, Puppet's deprecated Hiera 3
/// functions, kept in Puppet 7 on top of lookup: `hiera` takes the first value found,
/// `hiera_array` merges `unique`, `hiera_hash` merges `hash`; `hiera_include` includes the
/// classes `hiera_array` finds.
pub fn f_hiera(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    hiera_call(c, a, "hiera", None)
}

pub fn f_hiera_array(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    hiera_call(c, a, "hiera_array", Some(Merge::Unique))
}

pub fn f_hiera_hash(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    hiera_call(c, a, "hiera_hash", Some(Merge::Hash))
}

pub fn f_hiera_include(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let classes = hiera_call(c, a, "hiera_include", Some(Merge::Unique))?;
    let names: Vec<Value> = match classes {
        Value::Array(x) => x,
        Value::Undef => vec![],
        v => vec![v],
    };
    for n in names {
        let name = n.to_display();
        c.include_class(name.trim_colons(), a.scope, a.span)?;
    }
    Ok(Value::Undef)
}

fn hiera_call(c: &mut Compiler<'_>, a: &mut Args, fname: &str, merge: Option<Merge>) -> R<Value> {
    if c.warned_deprecations.insert(fname.to_string()) {
        let msg = format!(
            "The function '{fname}' is deprecated in favor of using 'lookup'. See https://puppet.com/docs/puppet/7.23/deprecated_language.html\n   (file & line not available)"
        );
        c.log(crate::eval::LogLevel::Warning, msg);
    }
    // hiera([key, default, override]): the arguments as one array.
    let values = match a.values.as_slice() {
        [Value::Array(x)] if !x.is_empty() && x.len() <= 3 => x.clone(),
        v => v.to_vec(),
    };
    let key = match values.first() {
        Some(Value::Str(s)) => s.clone(),
        other => {
            let got = other
                .map(|v| v.type_name())
                .unwrap_or_else(|| "Undef".into());
            return Err(fail_plain(
                c,
                a,
                format!("'{fname}' parameter 'key' expects a String value, got {got}"),
            ));
        }
    };
    // With a block the second argument is the override, not a default.
    let default = if a.lambda.is_none() {
        values.get(1).cloned()
    } else {
        None
    };
    if let Some(v) = c.hiera_lookup_in(&key, merge, true, a.scope, a.span)? {
        return Ok(v);
    }
    match (a.lambda, default) {
        (Some(l), _) => c.call_lambda(l, vec![Value::Str(key)], a.scope, a.span),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(Flow::Err(c.plain(
            format!("Function lookup() did not find a value for the name '{key}'"),
            Some(a.span),
        ))),
    }
}
