//! Access (`l[keys]`): indexes and slices of strings, arrays and hashes, types
//! parameterised, and resource references (`File['/x']`, `File['/x'][mode]`).

use super::*;

impl Compiler<'_> {
    /// Index keys of `Array[]` and `String[]` as Puppet's AccessOperator coerces them: an
    /// array key goes through `coerce_numeric` (a numeric string with a warning, anything else
    /// is not convertible), a string key through `Utils.to_n` (numeric strings silently).
    /// Errors point at the offending key.
    pub(super) fn coerce_index_keys(
        &mut self,
        l: &Value,
        ks: &mut Vec<Value>,
        exprs: &[Expr],
        span: Span,
    ) -> R<()> {
        let is_array = matches!(l, Value::Array(_));
        if ks.iter().any(|k| matches!(k, Value::Array(_))) {
            // `keys.flatten!`: a key that is an array gives its elements as keys.
            let mut flat = vec![];
            for k in ks.drain(..) {
                flatten_into(k, &mut flat);
            }
            *ks = flat;
        }
        let spans_match = ks.len() == exprs.len();
        for (i, k) in ks.iter_mut().enumerate() {
            let at = if spans_match { exprs[i].span } else { span };
            match &*k {
                Value::Int(_) | Value::Default => {}
                Value::Str(s) if is_array => match to_n(s) {
                    Some(n) => {
                        self.warn_at(
                            &format!(
                                "The string '{s}' was automatically coerced to the numerical value {}",
                                n.to_display()
                            ),
                            at,
                        );
                        *k = n;
                    }
                    None => {
                        return Err(Flow::Err(self.issue(
                            format!("The value '{s}' cannot be converted to Numeric."),
                            at,
                        )))
                    }
                },
                Value::Bool(_) if is_array => {
                    return Err(Flow::Err(self.issue(
                        format!(
                            "The value '{}' cannot be converted to Numeric.",
                            k.to_display()
                        ),
                        at,
                    )))
                }
                Value::Undef if is_array => {
                    return Err(Flow::Err(
                        self.issue("The value '' cannot be converted to Numeric.", at),
                    ))
                }
                Value::Float(_) if is_array => {
                    return Err(Flow::Err(self.issue(
                        "An Array[] cannot use Float where Integer is expected",
                        at,
                    )))
                }
                Value::Str(s) => match to_n(s) {
                    Some(Value::Int(n)) => *k = Value::Int(n),
                    _ => return Err(Flow::Err(self.bad_substring_key("String", at))),
                },
                Value::Undef if !is_array => {
                    return Err(Flow::Err(self.bad_substring_key("Undef", at)))
                }
                Value::Bool(_) if !is_array => {
                    return Err(Flow::Err(self.bad_substring_key("Boolean", at)))
                }
                Value::Float(_) if !is_array => {
                    return Err(Flow::Err(self.bad_substring_key("Float", at)))
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub(super) fn bad_substring_key(&self, type_name: &str, at: Span) -> EvalError {
        let article = if type_name.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "an"
        } else {
            "a"
        };
        self.issue(
            format!(
                "A substring operation does not accept {article} {type_name} as a character index. Expected an Integer"
            ),
            at,
        )
    }

    /// `Type[title][param, ...]`: the values of parameters of a declared resource, set
    /// explicitly or by a resource default in its scope (Puppet's access_PResourceType with a
    /// title). Several keys, or an array of keys, give an array.
    pub(super) fn resource_param_access(
        &mut self,
        type_name: &str,
        title: &str,
        keys: &[Value],
        span: Span,
    ) -> R<Value> {
        let as_array = keys.len() > 1 || matches!(keys.first(), Some(Value::Array(_)));
        let names: Vec<Value> = keys
            .iter()
            .flat_map(flatten_values)
            .filter(|k| !matches!(k, Value::Undef))
            .collect();
        let shown = capitalize_type(type_name);
        let Some(idx) = self.find_resource(type_name, title) else {
            let msg = format!("Resource not found: {shown}['{title}']");
            return Err(Flow::Err(self.issue(msg, span)));
        };
        let mut out = Vec::with_capacity(names.len());
        for k in &names {
            let name = match k {
                Value::Str(s) if self.is_parameter_of(idx, s) => s,
                _ => {
                    let msg = format!(
                        "The resource {shown}['{title}'] does not have a parameter called '{}'",
                        k.to_display()
                    );
                    return Err(Flow::Err(self.issue(msg, span)));
                }
            };
            let r = &self.resources[idx];
            let value = match r.params.get(name.as_str()) {
                Some(v) => v.clone(),
                None => {
                    let (scope, tn) = (r.scope, r.type_name.clone());
                    self.lookup_defaults(scope, &tn)
                        .get(name.as_str())
                        .cloned()
                        .unwrap_or(Value::Undef)
                }
            };
            out.push(value);
        }
        Ok(if as_array {
            Value::Array(out)
        } else {
            out.pop().unwrap_or(Value::Undef)
        })
    }

    /// `Name['title']`, the common way to write a reference, evaluated as the generic access
    /// is (the type name resolved, then accessed with the title) without its intermediate
    /// values when the name is a resource type.
    pub(super) fn access_reference(
        &mut self,
        name: &str,
        name_span: Span,
        title: &str,
        title_span: Span,
        span: Span,
    ) -> R<Value> {
        match self.resolve_type_name(name, name_span)? {
            PType::Resource(Some(t), None) => Ok(Value::Type(Box::new(PType::Resource(
                Some(t),
                Some(title.to_string()),
            )))),
            other => self.access(
                Value::Type(Box::new(other)),
                &[Value::Str(title.to_string())],
                &[title_span],
                span,
            ),
        }
    }

    /// Puppet's refusal of `[]` with more than two keys on an Array or a String.
    pub(super) fn slice_arity(&self, what: &str, n: usize, span: Span) -> Flow {
        let msg = format!("{what} supports [] with one or two arguments. Got {n}");
        Flow::Err(self.issue(msg, span))
    }

    /// `l[keys]`; `key_spans` are the keys' spans when known (one each), for errors that
    /// blame a key.
    pub(in crate::eval) fn access(
        &mut self,
        l: Value,
        keys: &[Value],
        key_spans: &[Span],
        span: Span,
    ) -> R<Value> {
        match l {
            Value::Array(a) => {
                let n = a.len() as i64;
                match keys {
                    [Value::Int(i)] => {
                        let i = if *i < 0 { n + i } else { *i };
                        Ok(a.get(i.max(0) as usize)
                            .filter(|_| i >= 0)
                            .cloned()
                            .unwrap_or(Value::Undef))
                    }
                    [Value::Int(start), Value::Int(count)] => {
                        let (s, end) = slice_bounds(*start, *count, n);
                        Ok(Value::Array(a[s..end].to_vec()))
                    }
                    _ if keys.len() > 2 => Err(self.slice_arity("Array", keys.len(), span)),
                    _ => Err(Flow::Err(
                        self.issue("Array access expects Integer index", span),
                    )),
                }
            }
            Value::Hash(h) => {
                if keys.len() == 1 {
                    Ok(h.get(&keys[0]).cloned().unwrap_or(Value::Undef))
                } else {
                    Ok(Value::Array(
                        keys.iter().filter_map(|k| h.get(k).cloned()).collect(),
                    ))
                }
            }
            Value::Str(s) => {
                let chars: Vec<char> = s.chars().collect();
                let n = chars.len() as i64;
                match keys {
                    // Outside the string: '' (Puppet's access_String).
                    [Value::Int(i)] => {
                        let i = if *i < 0 { n + i } else { *i };
                        Ok(Value::Str(if i >= 0 && i < n {
                            chars[i as usize].to_string()
                        } else {
                            String::new()
                        }))
                    }
                    [Value::Int(start), Value::Int(count)] => {
                        let (st, end) = slice_bounds(*start, *count, n);
                        Ok(Value::Str(chars[st..end].iter().collect()))
                    }
                    _ if keys.len() > 2 => Err(self.slice_arity("String", keys.len(), span)),
                    _ => Err(Flow::Err(
                        self.issue("String access expects Integer index", span),
                    )),
                }
            }
            // Its bytes as a string's characters (Puppet's access_Binary).
            Value::Binary(b) => {
                let n = b.len() as i64;
                match keys {
                    [Value::Int(i)] => {
                        let i = if *i < 0 { n + i } else { *i };
                        let at = usize::try_from(i).ok().filter(|i| *i < b.len());
                        Ok(Value::Binary(at.map_or(Vec::new(), |i| vec![b[i]]).into()))
                    }
                    [Value::Int(start), Value::Int(count)] => {
                        let (st, end) = slice_bounds(*start, *count, n);
                        Ok(Value::Binary(b[st..end].into()))
                    }
                    _ if keys.len() > 2 => Err(self.slice_arity("String", keys.len(), span)),
                    _ => Err(Flow::Err(
                        self.issue("String access expects Integer index", span),
                    )),
                }
            }
            Value::Type(t) => {
                // A reference to one resource: `Notify['a']['message']` reads its parameters.
                match &*t {
                    PType::Resource(Some(tn), Some(title)) => {
                        return self.resource_param_access(tn, title, keys, span);
                    }
                    PType::Class(Some(name)) if !keys.is_empty() => {
                        return self.resource_param_access("Class", name, keys, span);
                    }
                    _ => {}
                }
                let checked = t.check_args(keys).map_err(|(m, key)| {
                    let at = key.and_then(|k| key_spans.get(k)).copied().unwrap_or(span);
                    Flow::Err(self.issue(m, at))
                })?;
                let keys = checked.as_slice();
                // Resource references with several titles produce several references.
                match &*t {
                    // `Resource[Notify, 'b', 'c']`: the type, then each title.
                    PType::Resource(None, _)
                        if keys.len() > 2
                            || (keys.len() == 2 && matches!(keys[1], Value::Array(_))) =>
                    {
                        let base = t
                            .parameterize(&keys[..1])
                            .map_err(|m| Flow::Err(self.issue(m, span)))?;
                        let mut out = vec![];
                        for k in &keys[1..] {
                            for k in flatten_values(k) {
                                out.push(Value::Type(Box::new(
                                    base.parameterize(&[k])
                                        .map_err(|m| Flow::Err(self.issue(m, span)))?,
                                )));
                            }
                        }
                        return Ok(Value::Array(out));
                    }
                    // `Notify[undef]` is undef.
                    PType::Resource(Some(_), None) if matches!(keys, [Value::Undef]) => {
                        return Ok(Value::Undef);
                    }
                    PType::Resource(Some(_), None) if keys.len() > 1 => {
                        let mut out = vec![];
                        for k in keys {
                            for k in flatten_values(k) {
                                out.push(Value::Type(Box::new(
                                    t.parameterize(&[k])
                                        .map_err(|m| Flow::Err(self.issue(m, span)))?,
                                )));
                            }
                        }
                        return Ok(Value::Array(out));
                    }
                    PType::Resource(Some(_), None)
                        if matches!(keys.first(), Some(Value::Array(_))) =>
                    {
                        let mut out = vec![];
                        for k in flatten_values(&keys[0]) {
                            out.push(Value::Type(Box::new(
                                t.parameterize(&[k])
                                    .map_err(|m| Flow::Err(self.issue(m, span)))?,
                            )));
                        }
                        return Ok(Value::Array(out));
                    }
                    // Several class names, or names in arrays (flattened, undef dropped):
                    // an array of references.
                    PType::Class(None)
                        if keys.len() > 1 || matches!(keys.first(), Some(Value::Array(_))) =>
                    {
                        let mut out = vec![];
                        for k in keys {
                            for k in flatten_values(k) {
                                out.push(Value::Type(Box::new(
                                    t.parameterize(&[k])
                                        .map_err(|m| Flow::Err(self.issue(m, span)))?,
                                )));
                            }
                        }
                        return Ok(Value::Array(out));
                    }
                    _ => {}
                }
                // Puppet flattens the keys of most types (`Optional[[Integer[1]]]` is
                // `Optional[Integer[1]]`); not those of Callable, Struct, Init and Object.
                let flat: Vec<Value>;
                let keys = if matches!(
                    &*t,
                    PType::Callable(_) | PType::Struct(_) | PType::Init | PType::Object
                ) || !keys.iter().any(|k| matches!(k, Value::Array(_)))
                {
                    keys
                } else {
                    fn flatten(v: &Value, out: &mut Vec<Value>) {
                        match v {
                            Value::Array(a) => a.iter().for_each(|v| flatten(v, out)),
                            other => out.push(other.clone()),
                        }
                    }
                    let mut out = Vec::new();
                    keys.iter().for_each(|k| flatten(k, &mut out));
                    flat = out;
                    &flat[..]
                };
                let p = t.parameterize(keys).map_err(|m| {
                    // A range the type's constructor refuses is an evaluation error of the
                    // access; the rest are Puppet's validation issues.
                    if m.starts_with("'from' must be") {
                        let m = format!("Error while evaluating a '[]' expression, {m}");
                        Flow::Err(self.issue(m, span))
                    } else {
                        Flow::Err(self.issue(m, span))
                    }
                })?;
                Ok(Value::Type(Box::new(p)))
            }
            Value::Undef => Err(Flow::Err(
                self.issue("Operator '[]' is not applicable to an Undef Value.", span),
            )),
            // Puppet names an iterator by its Ruby kind of value.
            Value::Iterator(_) => Err(Flow::Err(
                self.issue("Operator '[]' is not applicable to an Object.", span),
            )),
            other => Err(Flow::Err(self.issue(
                format!(
                    "Operator '[]' is not applicable to {}.",
                    a_an(&other.type_name())
                ),
                span,
            ))),
        }
    }
}
