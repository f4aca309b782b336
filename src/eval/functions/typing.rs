//! Types: `assert_type`, `type`, `convert_to`, `unwrap`, and `Error.new` (`new` itself is
//! in `new_value`).

use super::*;

pub(super) fn f_assert_type(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_type(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = first_arg(a);
    let t = match a.values.get(1) {
        Some(Value::Str(m)) if m == "generalized" => types::infer_generic(&v),
        Some(Value::Str(m)) if m == "reduced" => types::infer_reduced(&v),
        _ => types::infer(&v),
    };
    Ok(Value::Type(Box::new(t)))
}

/// Puppet's `Error.new`: a message and optional kind, details and issue code, given in
/// that order or as a hash of `msg`, `kind`, `details`, `issue_code`.
pub(super) fn new_error(args: &[Value]) -> Result<Value, String> {
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
    Ok(Value::Error(Box::new(
        crate::eval::values::value::ErrorValue {
            msg,
            kind: text("kind")?,
            details,
            issue_code: text("issue_code")?,
        },
    )))
}

pub(super) fn f_convert_to(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_unwrap(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    match first_arg(a) {
        Value::Sensitive(v) => match a.lambda {
            Some(l) => c.call_lambda(l, vec![*v], a.scope, a.span),
            None => Ok(*v),
        },
        other => Ok(other),
    }
}
