//! Messages and control flow: `fail`, the log functions, deprecation warnings, `return`,
//! `next`, `break`, `call` (and deferred values called now), `import`.

use super::*;

/// `fail` is a 3.x function: each argument is Ruby's `to_s` of it (an array or hash in
/// Ruby's inspect form, `{"a"=>nil}`), joined by spaces.
pub(super) fn f_fail(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let msg: Vec<String> = a
        .values
        .iter()
        .map(crate::eval::values::ruby_print::ruby_to_s)
        .collect();
    Err(Flow::Err(c.runtime(msg.join(" "), a.span)))
}

/// `import` was removed in Puppet 4; the function that stands in its place says so.
pub(super) fn f_import(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Err(c.issue(
        "Use of 'import' has been discontinued in favor of a manifest directory. \
         See http://links.puppet.com/puppet-import-deprecation",
        a.span,
    )))
}

pub(in crate::eval) fn scope_label(c: &Compiler<'_>, scope: ScopeId) -> String {
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

pub(super) fn f_log(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

/// `call(name, args...)`: calls a function by name, with the block if one is given.
pub(super) fn f_call(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
pub(super) fn resolve_deferred(
    c: &mut Compiler<'_>,
    d: &crate::eval::values::value::Deferred,
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

pub(super) fn f_return(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Return(first_arg(a), a.span))
}

pub(super) fn f_next(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Next(first_arg(a), a.span))
}

pub(super) fn f_break(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(Flow::Break(a.span))
}

/// Puppet's once-per-run deprecation warning of min() and max()'s conversions.
pub(super) fn deprecation(c: &mut Compiler<'_>, name: &str, key: &str, what: &str) {
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
pub(in crate::eval) fn warn_once(c: &mut Compiler<'_>, key: String, message: String) {
    if c.warned_deprecations.insert(key) {
        c.log(
            super::LogLevel::Warning,
            format!("{message}\n   (file & line not available)"),
        );
    }
}

pub(super) fn f_unsupported(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Err(arg_err(c, a, "is not supported by Ordo yet"))
}
