//! Iteration: how Puppet iterates a value, the lambda's arguments, and the functions that
//! call a lambda (`each`, `map`, `filter`, `reduce`, `slice`, `with`, `then`, `lest`,
//! `any`, `all`, `index`, `step`, `partition`, `group_by`, `tree_each`, `reverse_each`).

use super::*;

pub(super) fn need_lambda<'x>(c: &Compiler<'_>, a: &Args<'x>) -> R<&'x Lambda> {
    let l = a.lambda.ok_or_else(|| arg_err(c, a, "expects a block"))?;
    let Some((min, max)) = registry::entry(&a.name).and_then(|e| e.lambda) else {
        return Ok(l);
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
pub(super) fn iterable_items(c: &Compiler<'_>, a: &Args, v: &Value) -> R<Vec<(Value, Value)>> {
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
pub(super) fn iteration_len(v: &Value) -> Option<i128> {
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
pub(super) fn iteration_items(v: &Value) -> Option<Vec<(Value, Value)>> {
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

/// Arguments for one lambda call: `|$v|`, `|$k, $v|` / `|$i, $v|`.
pub(super) fn lambda_args(l: &Lambda, is_hash: bool, k: &Value, v: &Value) -> Vec<Value> {
    // A block of one parameter that captures the rest takes as many as it can: two.
    if l.params.len() >= 2 || l.params.first().is_some_and(|p| p.captures_rest) {
        vec![k.clone(), v.clone()]
    } else if is_hash {
        vec![Value::Array(vec![k.clone(), v.clone()])]
    } else {
        vec![v.clone()]
    }
}

pub(super) fn f_each(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
pub(super) fn keyed_items(c: &Compiler<'_>, a: &Args, l: &Lambda) -> R<Vec<(Value, Vec<Value>)>> {
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

pub(super) fn f_partition(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_group_by(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
pub(super) fn f_tree_each(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
    // `container_type`: only the arrays and hashes of that type are gone into (the others
    // are values); the root is always gone into.
    let container_t = match opt("container_type") {
        Some(Value::Type(t)) => Some(t),
        _ => None,
    };
    let mut nodes: Vec<(Vec<Value>, Value)> = vec![];
    let mut queue = std::collections::VecDeque::from([(vec![], tree.clone())]);
    while let Some((path, v)) = if breadth {
        queue.pop_front()
    } else {
        queue.pop_back()
    } {
        let is_container = matches!(v, Value::Array(_) | Value::Hash(_))
            && (path.is_empty() || container_t.as_ref().is_none_or(|t| t.is_instance(&v)));
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
            crate::eval::values::value::IterValue {
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

pub(super) fn f_reverse_each(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
pub(super) fn iterator_of(v: &Value, items: Vec<(Value, Value)>) -> Value {
    let elem = match v {
        Value::Iterator(it) => it.elem.clone(),
        Value::Array(a) if a.is_empty() => PType::Unit,
        Value::Hash(h) if h.is_empty() => PType::Unit,
        Value::Array(a) => crate::eval::types::variant_of(a.iter().map(crate::eval::types::infer)),
        Value::Hash(h) => PType::Tuple(
            vec![
                crate::eval::types::variant_of(h.keys().map(crate::eval::types::infer)),
                crate::eval::types::variant_of(h.values().map(crate::eval::types::infer)),
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
    Value::Iterator(std::sync::Arc::new(crate::eval::values::value::IterValue {
        elem,
        items: items.into_iter().map(|(_, x)| x).collect(),
    }))
}

/// The elements `reverse_each` and `step` go through, as (index, element): a hash's are its
/// entries as `[key, value]` arrays (Puppet's Iterable of a hash).
pub(super) fn entries(v: &Value) -> Vec<(Value, Value)> {
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
pub(super) fn each_with_lambda(
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

pub(super) fn f_map(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_filter(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_reduce(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
            Ok(r) if crate::eval::compiler::limits::top_level_too_large(&r) => {
                let msg = crate::eval::compiler::limits::too_many_elements();
                return Err(Flow::Err(c.runtime(msg, a.span)));
            }
            Ok(r) => acc = r,
            Err(Flow::Break(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(acc)
}

pub(super) fn f_slice(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_with(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    c.call_lambda(l, a.values.clone(), a.scope, a.span)
}

pub(super) fn f_then(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    if v.is_undef() {
        return Ok(Value::Undef);
    }
    c.call_lambda(l, vec![v], a.scope, a.span)
}

pub(super) fn f_lest(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let l = need_lambda(c, a)?;
    let v = first_arg(a);
    if !v.is_undef() {
        return Ok(v);
    }
    c.call_lambda(l, vec![], a.scope, a.span)
}

pub(super) fn f_any(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_all(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_index(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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

pub(super) fn f_step(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
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
