//! puppetlabs-stdlib 9's namespaced functions (`stdlib::NAME`, lib/puppet/functions/stdlib).
//! A `stdlib::` name is known when a module on the modulepath ships it (stdlib 9 does); it
//! runs the native function of the old unprefixed name where stdlib 9 only moved that
//! function (`stdlib::to_json` is `to_json`), or the function here where stdlib 9's differs
//! or is new. stdlib 9's deprecated unprefixed shims (`ensure_packages`, `to_json`, ...)
//! call the namespaced ones, so with stdlib 9 installed the old names get these semantics
//! too (`ensure_packages` here).

use super::compiler::{Compiler, Flow, R};
use super::functions::{Args, Builtin};
use super::stdlib::{arg, fail_plain};
use super::values::value::Value;
use indexmap::IndexMap;

/// The functions here whose stdlib 9 semantics differ from the old name's, or that are new.
pub fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "stdlib::crc32" => f_crc32,
        "stdlib::sha256" => f_sha256,
        "stdlib::nested_values" => f_nested_values,
        "stdlib::has_function" => f_has_function,
        "stdlib::sort_by" => f_sort_by,
        "stdlib::ensure_packages" => f_ensure_packages,
        "stdlib::merge" => f_merge,
        _ => return None,
    })
}

/// The name a native function runs under: a `stdlib::` name that only moved a function
/// runs as the old name (the natives that serve several names tell them apart by it).
pub fn native_name(lname: String) -> String {
    match lname.strip_prefix("stdlib::") {
        Some(old) if builtin(&lname).is_none() && super::stdlib::builtin(&lname).is_none() => {
            old.to_string()
        }
        _ => lname,
    }
}

/// Whether the modulepath has stdlib 9 (its namespaced `ensure_packages`).
pub fn is_stdlib9(c: &Compiler<'_>) -> bool {
    c.loader.has_ruby_function("stdlib::ensure_packages")
}

/// Ruby's `to_s` of a `ScalarData` (or a `Sensitive` one) as stdlib's digests take it.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::Sensitive(inner) => scalar_text(inner),
        other => other.to_display(),
    }
}

/// CRC-32 (zlib's polynomial), as `Zlib.crc32`.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// `stdlib::crc32(data)`: the CRC-32 of the text in lower-case hex, without leading zeros.
fn f_crc32(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let text = scalar_text(&arg(a, 0));
    Ok(Value::Str(format!("{:x}", crc32(text.as_bytes()))))
}

/// `stdlib::sha256(data)`: the SHA-256 of the text in hex.
fn f_sha256(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let text = scalar_text(&arg(a, 0));
    Ok(Value::Str(super::values::strings::sha256_hex(
        text.as_bytes(),
    )))
}

/// `stdlib::nested_values(hash)`: the values of a hash and of the hashes in it, depth first.
fn f_nested_values(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        if let Value::Hash(h) = v {
            for (_, v) in h.iter() {
                match v {
                    Value::Hash(_) => walk(v, out),
                    other => out.push(other.clone()),
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&arg(a, 0), &mut out);
    Ok(Value::Array(out))
}

/// `stdlib::has_function(name)`: whether a function of that name exists: a Puppet-language
/// function, one of Puppet's or Ordo's built-ins this compile has, or a module's Ruby one.
fn f_has_function(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let name = arg(a, 0).to_display();
    let name = name.strip_prefix("::").unwrap_or(&name).to_string();
    let found = c.find_function(&name).is_some()
        || c.loader.has_ruby_function(&name)
        || c.has_builtin(&name);
    Ok(Value::Bool(found))
}

/// `stdlib::sort_by(iterable) |x| { key }`: Ruby's `sort_by` over an array, the characters
/// of a string (joined again) or a hash's entries (`[key, value]`).
fn f_sort_by(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Some(l) = a.lambda else {
        return Err(fail_plain(c, a, "'stdlib::sort_by' expects a block"));
    };
    let subject = arg(a, 0);
    let items: Vec<Value> = match &subject {
        Value::Array(v) => v.clone(),
        Value::Str(s) => s.chars().map(|ch| Value::Str(ch.to_string())).collect(),
        Value::Hash(h) => h
            .iter()
            .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
            .collect(),
        _ => return Ok(subject),
    };
    // Ruby's `sort_by` yields one value, a hash's entries as `[key, value]`: a block of two
    // parameters gets no value for the second (Puppet's "is required" error).
    let mut keyed = Vec::with_capacity(items.len());
    for item in items {
        let key = c.call_lambda(l, vec![item.clone()], a.scope, a.span)?;
        keyed.push((key, item));
    }
    let mut failed = None;
    keyed.sort_by(|(x, _), (y, _)| {
        super::functions::ruby_cmp(x, y).unwrap_or_else(|| {
            failed.get_or_insert((x.clone(), y.clone()));
            std::cmp::Ordering::Equal
        })
    });
    if let Some((x, y)) = failed {
        return Err(Flow::Err(c.runtime(
            format!(
                "comparison of {} with {} failed",
                super::stdlib::ruby_class(&x),
                super::stdlib::ruby_class(&y)
            ),
            a.span,
        )));
    }
    let sorted = keyed.into_iter().map(|(_, item)| item);
    Ok(match subject {
        Value::Str(_) => Value::Str(sorted.map(|v| v.to_display()).collect()),
        Value::Hash(_) => {
            let mut h = IndexMap::new();
            for item in sorted {
                if let Value::Array(mut kv) = item {
                    let v = kv.pop().unwrap_or(Value::Undef);
                    let k = kv.pop().unwrap_or(Value::Undef);
                    h.insert(k, v);
                }
            }
            Value::Hash(h.into())
        }
        _ => Value::Array(sorted.collect()),
    })
}

/// `stdlib::merge(hashes...)` and `stdlib::merge(iterable) |acc, v|` / `|acc, k, v|`: the
/// hashes merged left to right (`undef` and `''` skipped), or the hashes the block returns.
fn f_merge(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Some(l) = a.lambda else {
        let mut acc: IndexMap<Value, Value> = IndexMap::new();
        for v in &a.values {
            if let Value::Hash(h) = v {
                for (k, v) in h.iter() {
                    acc.insert(k.clone(), v.clone());
                }
            }
        }
        return Ok(Value::Hash(acc.into()));
    };
    let mut acc: IndexMap<Value, Value> = IndexMap::new();
    let subject = arg(a, 0);
    let three = l.params.len() == 3;
    let entries: Vec<(Value, Value)> = match &subject {
        Value::Hash(h) => h.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::Int(i as i64), v.clone()))
            .collect(),
        _ => vec![],
    };
    let hash_style = matches!(subject, Value::Hash(_));
    for (k, v) in entries {
        let args = match (three, hash_style) {
            (true, _) => vec![Value::Hash(acc.clone().into()), k, v],
            (false, true) => vec![Value::Hash(acc.clone().into()), Value::Array(vec![k, v])],
            (false, false) => vec![Value::Hash(acc.clone().into()), v],
        };
        if let Value::Hash(r) = c.call_lambda(l, args, a.scope, a.span)? {
            for (k, v) in r.iter() {
                acc.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::Hash(acc.into()))
}

/// stdlib 9's `ensure_packages(packages, defaults)`: each package through `ensure_resource`
/// with `ensure => installed` merged under the defaults, and `present`/`installed` kept as
/// `present` when the package is already declared `present`. Unlike stdlib 8 a package
/// declared with other attributes is declared again (a duplicate declaration).
pub(super) fn f_ensure_packages(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let defaults = match arg(a, 1) {
        Value::Hash(h) => h.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ => IndexMap::new(),
    };
    match arg(a, 0) {
        Value::Hash(packages) => {
            for (name, attributes) in packages.iter() {
                let mut merged = defaults.clone();
                if let Value::Hash(h) = attributes {
                    for (k, v) in h.iter() {
                        merged.insert(k.clone(), v.clone());
                    }
                }
                ensure_package(c, a, name, &merged)?;
            }
        }
        Value::Array(names) => {
            for name in &names {
                ensure_package(c, a, name, &defaults)?;
            }
        }
        name => ensure_package(c, a, &name, &defaults)?,
    }
    Ok(Value::Undef)
}

fn ensure_package(
    c: &mut Compiler<'_>,
    a: &Args,
    name: &Value,
    defaults: &IndexMap<Value, Value>,
) -> R<()> {
    let ensure = Value::str("ensure");
    let mut params = IndexMap::new();
    params.insert(ensure.clone(), Value::str("installed"));
    for (k, v) in defaults {
        params.insert(k.clone(), v.clone());
    }
    let wanted = params.get(&ensure).map(Value::to_display);
    if matches!(wanted.as_deref(), Some("present" | "installed")) {
        let mut present = IndexMap::new();
        present.insert(ensure.clone(), Value::str("present"));
        let reference = Value::Str(format!("Package[{}]", name.to_display()));
        let declared = c.call_function(
            "defined_with_params",
            vec![reference, Value::Hash(present.into())],
            None,
            a.scope,
            a.span,
        )?;
        let kept = if declared == Value::Bool(true) {
            "present"
        } else {
            "installed"
        };
        params.insert(ensure, Value::str(kept));
    }
    c.call_function(
        "ensure_resource",
        vec![
            Value::str("package"),
            name.clone(),
            Value::Hash(params.into()),
        ],
        None,
        a.scope,
        a.span,
    )?;
    Ok(())
}
