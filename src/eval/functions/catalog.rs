//! Catalog functions: classes (`include`, `require`, `contain`), virtual resources
//! (`realize`), tags, `defined` and `create_resources`.

use super::*;

pub(super) fn class_names(c: &Compiler<'_>, a: &Args) -> R<Vec<String>> {
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

pub(super) fn f_include(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = vec![];
    for n in class_names(c, a)? {
        let idx = c.include_class(&n, a.scope, a.span)?;
        out.push(Value::Type(Box::new(res_type(&c.resources[idx]))));
    }
    Ok(Value::Array(out))
}

pub(super) fn f_require(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_contain(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_realize(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_tag(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let container = c.scope_resource(a.scope);
    for v in &a.values {
        // The function's failure is an evaluation error of the call (with its column).
        if let Some(bad) = crate::eval::resources::catalog_ops::invalid_tag(v) {
            return Err(Flow::Err(c.runtime(format!("Invalid tag '{bad}'"), a.span)));
        }
        for t in flatten_values(v) {
            crate::eval::compiler::add_tag(&mut c.resources[container].tags, &t.to_display());
        }
    }
    Ok(Value::Undef)
}

pub(super) fn f_tagged(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let container = c.scope_resource(a.scope);
    let all = a
        .values
        .iter()
        .flat_map(flatten_values)
        .all(|t| c.resource_tagged(container, &t.to_display().to_lowercase()));
    Ok(Value::Bool(all))
}

pub(super) fn f_defined(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_create_resources(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
            other => crate::eval::stdlib::ruby_class(other),
        };
        return Err(Flow::Err(c.runtime(
            format!("no implicit conversion of {what} into Hash"),
            a.span,
        )));
    }
    let to_attrs = |h: &IndexMap<Value, Value>,
                    span: Span|
     -> Vec<crate::eval::resources::catalog_ops::AttrValue> {
        let mut out: Vec<crate::eval::resources::catalog_ops::AttrValue> = defaults
            .iter()
            .filter(|(k, _)| !h.contains_key(*k))
            .map(|(k, v)| crate::eval::resources::catalog_ops::AttrValue {
                name: k.to_display(),
                value: v.clone(),
                append: false,
                span,
            })
            .collect();
        out.extend(
            h.iter()
                .map(|(k, v)| crate::eval::resources::catalog_ops::AttrValue {
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
            && matches!(
                kind,
                crate::eval::resources::catalog_ops::TypeKind::Define(_)
            )
            && !attrs.iter().any(|x| x.name == "name")
        {
            attrs.push(crate::eval::resources::catalog_ops::AttrValue {
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
