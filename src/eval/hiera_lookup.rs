//! The evaluator's side of Hiera: `lookup()` and automatic class parameter lookup
//! (`classname::param`), over files the [`Loader`](super::Loader) provides.

use super::compiler::{Compiler, Flow, R};
use super::functions::Args;
use super::scope::ScopeId;
use super::stdlib::{arg, fail_plain};
use super::value::Value;
use crate::catalog::TrimColons;
use crate::hiera::{self, Merge};
use crate::span::Span;

struct Source<'l>(&'l dyn super::Loader);

impl hiera::DataSource for Source<'_> {
    fn read(&self, path: &str) -> Option<String> {
        self.0.load_data(path)
    }
}

impl Compiler<'_> {
    /// Looks `key` up in Hiera; `Ok(None)` when no layer has it.
    pub(super) fn hiera_lookup(
        &mut self,
        key: &str,
        merge: Option<Merge>,
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
                let mut v = this.quiet_var(first, scope).unwrap_or(Value::Undef);
                for seg in parts {
                    v = match v {
                        Value::Hash(h) => h.get(&Value::str(seg)).cloned().unwrap_or(Value::Undef),
                        _ => Value::Undef,
                    };
                }
                v
            };
            let src = Source(this.loader);
            hiera::Lookup::new(&src, &mut cache, &mut vars, global).lookup(key, merge)
        };
        self.hiera_cache = cache;
        result.map_err(|m| Flow::Err(self.runtime(m, span)))
    }

    /// Automatic parameter lookup: a class parameter not given in the declaration takes
    /// `classname::param` from Hiera when found there.
    pub(super) fn hiera_class_param(
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
        if let Some(v) = c.hiera_lookup(n, strategy, a.scope, a.span)? {
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
                format!("name '{}'", names[0])
            } else {
                format!(
                    "names [{}]",
                    names
                        .iter()
                        .map(|n| format!("'{n}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(Flow::Err(c.runtime(
                format!("Function lookup() did not find a value for the {shown}"),
                a.span,
            )));
        }
    };
    if let Some(t) = value_type {
        if !t.is_instance(&v) {
            return Err(Flow::Err(c.runtime(
                format!("{label} has wrong type, {}", super::types::mismatch(&t, &v)),
                a.span,
            )));
        }
    }
    Ok(v)
}
