//! Making a type from its parameters (`Integer[1, 5]`, `Struct[{...}]`): the checks
//! Puppet's access operator makes of their number and kinds, then the type.

use super::*;

impl PType {
    /// The checks Puppet's access operator makes of a type's parameters before it makes
    /// the type: their number and kinds, with the key to blame. Returns the keys to
    /// parameterize with (flattened where Puppet flattens them).
    pub fn check_args(&self, args: &[Value]) -> Result<Vec<Value>, TypeArgError> {
        use PType::*;
        let keys = match self {
            Array(..) | Hash(..) | String(..) | Regexp(_) | Pattern(_) | Collection(..) => {
                flat_keys(args)
            }
            // `Optional[x]`, `NotUndef[x]`: a type or a string.
            Optional(None) | NotUndef(None) => {
                if let [k] = args {
                    if !matches!(k, Value::Type(_) | Value::Str(_) | Value::Array(_)) {
                        let m = if matches!(self, Optional(_)) {
                            format!(
                                "Optional-Type[] arguments must be types. Got {}",
                                ruby_class(k)
                            )
                        } else {
                            format!(
                                "NotUndef-Type[] argument must be a Type or a String. Got {}",
                                ruby_class(k)
                            )
                        };
                        return Err((m, Some(0)));
                    }
                }
                return Ok(args.to_vec());
            }
            Class(None) => {
                let keys: Vec<Value> = flat_keys(args)
                    .into_iter()
                    .filter(|k| !k.is_undef())
                    .collect();
                let spans_match = keys.len() == args.len();
                for (i, k) in keys.iter().enumerate() {
                    if !matches!(k, Value::Str(_) | Value::Type(_)) {
                        let label = crate::eval::values::strings::a_an(&key_type_name(k));
                        let mut label_uc = label.clone();
                        label_uc[..1].make_ascii_uppercase();
                        return Err((
                            format!("Illegal Class name in class reference. {label_uc} cannot be used where a String is expected"),
                            spans_match.then_some(i),
                        ));
                    }
                }
                for (i, k) in flat_keys(args).iter().enumerate() {
                    let Value::Str(name) = k else { continue };
                    let lower = name.to_lowercase();
                    let bare = lower.strip_prefix("::").unwrap_or(&lower);
                    if !is_class_name(bare) {
                        return Err((
                            format!("Illegal name. The given name '{name}' does not conform to the naming rule /^((::)?[a-z_]\\w*)(::[a-z]\\w*)*$/"),
                            Some(i),
                        ));
                    }
                }
                return Ok(args.to_vec());
            }
            _ => return Ok(args.to_vec()),
        };
        let slice_type = |base: &str, k: &Value, i: usize| -> TypeArgError {
            (
                format!("{base}[] arguments must be types. Got {}", ruby_class(k)),
                Some(i),
            )
        };
        match self {
            Array(..) => match keys.len() {
                1 if !is_type(&keys[0]) => return Err(slice_type("Array-Type", &keys[0], 0)),
                1 => {}
                2 if is_type(&keys[0]) => check_size_keys(&keys[1..], 1)?,
                2 => check_size_keys(&keys, 0)?,
                3 if is_type(&keys[0]) => check_size_keys(&keys[1..], 1)?,
                3 => return Err(slice_type("Array-Type", &keys[0], 0)),
                n => return Err((arity_error("Array-Type", 1, Some(3), n), None)),
            },
            Hash(..) if !(keys.len() == 2 && keys.iter().all(|k| matches!(k, Value::Int(_)))) => {
                for (i, k) in keys.iter().take(2).enumerate() {
                    if !is_type(k) {
                        return Err(slice_type("Hash-Type", k, i));
                    }
                }
                match keys.len() {
                    2 => {}
                    3 => {
                        if !matches!(&keys[2], Value::Int(_))
                            && !matches!(&keys[2], Value::Type(t) if matches!(**t, Integer(..)))
                        {
                            check_size_keys(&keys[2..], 2)?;
                        }
                    }
                    4 => check_size_keys(&keys[2..], 2)?,
                    n => return Err((arity_error("Hash-Type", 2, Some(4), n), None)),
                }
            }
            String(..) => match keys.len() {
                1 | 2 => check_size_keys(&keys, 0)?,
                n => {
                    return Err((
                        format!("String supports [] with one or two arguments. Got {n}"),
                        None,
                    ))
                }
            },
            Collection(..) => match keys.len() {
                1 | 2 => check_size_keys(&keys, 0)?,
                n => return Err((arity_error("Collection-Type", 1, Some(2), n), None)),
            },
            Regexp(_) => {
                if keys.len() != 1 {
                    let blamed = if keys.is_empty() { None } else { Some(1) };
                    return Err((arity_error("A Regexp-Type", 1, Some(1), keys.len()), blamed));
                }
                if !matches!(&keys[0], Value::Str(_) | Value::Regex(_)) {
                    return Err((
                        format!(
                            "Error creating type specialization of a Regexp-Type, Cannot use {} where String or Regexp is expected",
                            key_type_name(&keys[0])
                        ),
                        Some(0),
                    ));
                }
            }
            Pattern(_) => {
                if keys.is_empty() {
                    return Err((arity_error("A Pattern-Type", 1, None, 0), None));
                }
                for (i, k) in keys.iter().enumerate() {
                    let ok = match k {
                        Value::Str(_) | Value::Regex(_) => true,
                        Value::Type(t) => matches!(**t, Pattern(_) | Regexp(_)),
                        _ => false,
                    };
                    if !ok {
                        return Err((
                            format!(
                                "Error creating type specialization of a Pattern-Type, Cannot use {} where String or Regexp or Pattern-Type or Regexp-Type is expected",
                                key_type_name(k)
                            ),
                            Some(i),
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(keys)
    }

    /// `Base[args]`: parameterizes a type with the evaluated arguments.
    pub fn parameterize(&self, args: &[Value]) -> Result<PType, String> {
        use PType::*;
        Ok(match self {
            Integer(..) => {
                let min = args.first().map_or(Ok(MIN), |v| int_arg(v, MIN))?;
                let max = args.get(1).map_or(Ok(MAX), |v| int_arg(v, MAX))?;
                if min > max {
                    return Err(format!(
                        "'from' must be less or equal to 'to'. Got ({min}, {max}"
                    ));
                }
                Integer(min, max)
            }
            Float(..) => {
                let f = |v: Option<&Value>, d: f64| match v {
                    Some(Value::Int(i)) => *i as f64,
                    Some(Value::Float(x)) => *x,
                    _ => d,
                };
                let (min, max) = (
                    f(args.first(), f64::NEG_INFINITY),
                    f(args.get(1), f64::INFINITY),
                );
                if min > max {
                    return Err(format!(
                        "'from' must be less or equal to 'to'. Got ({}, {}",
                        Value::Float(min).to_display(),
                        Value::Float(max).to_display()
                    ));
                }
                Float(min, max)
            }
            String(..) => {
                let (min, max) = size_args(args)?;
                String(min, max, None)
            }
            Boolean(_) => Boolean(match args.first() {
                Some(Value::Bool(b)) => Some(*b),
                _ => None,
            }),
            Enum(..) => {
                let mut out = vec![];
                let mut case_insensitive = false;
                for (i, a) in args.iter().enumerate() {
                    match a {
                        Value::Bool(b) if i + 1 == args.len() && i > 0 => case_insensitive = *b,
                        Value::Str(s) => out.push(s.clone()),
                        Value::Array(items) => {
                            out.extend(items.iter().filter_map(|v| v.as_str().map(str::to_string)))
                        }
                        _ => {}
                    }
                }
                // Puppet's PEnumType keeps its values unique and sorted: they print, compare
                // and iterate in that order (`Enum[b, a]` is `Enum['a', 'b']`).
                out.sort();
                out.dedup();
                Enum(out, case_insensitive)
            }
            Pattern(_) => {
                let mut out = vec![];
                for a in args {
                    match a {
                        Value::Str(s) => out.push(s.clone()),
                        Value::Regex(r) => out.push(r.source.to_string()),
                        Value::Type(t) => match &**t {
                            Regexp(Some(s)) => out.push(s.clone()),
                            Pattern(ps) => out.extend(ps.iter().cloned()),
                            _ => {}
                        },
                        _ => {}
                    }
                }
                Pattern(out)
            }
            Regexp(_) => Regexp(match args.first() {
                Some(Value::Str(s)) => Some(s.clone()),
                Some(Value::Regex(r)) => Some(r.source.to_string()),
                _ => None,
            }),
            // `Array[1, 2]`: sizes only.
            Array(..) if args.first().is_some_and(|a| !is_type(a)) => {
                let (min, max) = size_args(args)?;
                Array(Box::new(Any), min, max)
            }
            Array(..) => {
                let elem = args.first().map_or(Ok(Any), type_arg)?;
                let (min, max) = size_args(args.get(1..).unwrap_or(&[]))?;
                Array(Box::new(elem), min, max)
            }
            Hash(..) if matches!(args, [Value::Int(_), Value::Int(_)]) => {
                let (min, max) = size_args(args)?;
                Hash(Box::new(Any), Box::new(Any), min, max)
            }
            Hash(..) => {
                if args.len() == 1 {
                    return Err("Hash requires a key and a value type".into());
                }
                let k = args.first().map_or(Ok(Any), type_arg)?;
                let v = args.get(1).map_or(Ok(Any), type_arg)?;
                let (min, max) = size_args(args.get(2..).unwrap_or(&[]))?;
                Hash(Box::new(k), Box::new(v), min, max)
            }
            Tuple(..) => {
                let mut types = vec![];
                let mut sizes = vec![];
                for a in args {
                    match a {
                        Value::Type(t) => types.push((**t).clone()),
                        other => sizes.push(other.clone()),
                    }
                }
                let n = types.len() as i64;
                let min = sizes.first().map_or(Ok(n), |v| int_arg(v, n))?;
                let max = sizes
                    .get(1)
                    .map_or(Ok(if sizes.is_empty() { n } else { MAX }), |v| {
                        int_arg(v, MAX)
                    })?;
                Tuple(types, min, max)
            }
            Struct(_) => {
                let Some(Value::Hash(h)) = args.first() else {
                    return Err("Struct expects a Hash".into());
                };
                let mut entries = vec![];
                for (k, v) in h {
                    let vt = type_arg(v)?;
                    match k {
                        // A plain key whose value accepts undef is optional (Puppet's
                        // `TypeFactory.struct`).
                        Value::Str(s) => {
                            let optional = vt.is_instance(&Value::Undef);
                            entries.push((s.clone(), optional, vt))
                        }
                        Value::Type(t) => match &**t {
                            Optional(Some(inner)) => match &**inner {
                                Enum(names, _) if names.len() == 1 => {
                                    entries.push((names[0].clone(), true, vt))
                                }
                                _ => return Err("Struct key must be a String".into()),
                            },
                            NotUndef(Some(inner)) => match &**inner {
                                Enum(names, _) if names.len() == 1 => {
                                    entries.push((names[0].clone(), false, vt))
                                }
                                _ => return Err("Struct key must be a String".into()),
                            },
                            Enum(names, _) if names.len() == 1 => {
                                let optional = vt.is_instance(&Value::Undef);
                                entries.push((names[0].clone(), optional, vt))
                            }
                            _ => return Err("Struct key must be a String".into()),
                        },
                        _ => return Err("Struct key must be a String".into()),
                    }
                }
                Struct(entries)
            }
            Variant(_) => Variant(args.iter().map(type_arg).collect::<Result<_, _>>()?),
            Optional(_) => Optional(args.first().map(type_arg).transpose()?.map(Box::new)),
            NotUndef(_) => NotUndef(args.first().map(type_arg).transpose()?.map(Box::new)),
            Sensitive(_) => Sensitive(args.first().map(type_arg).transpose()?.map(Box::new)),
            Type(_) => Type(args.first().map(type_arg).transpose()?.map(Box::new)),
            Collection(..) => {
                let (min, max) = size_args(args)?;
                Collection(min, max)
            }
            Resource(None, _) => {
                let name = match args.first() {
                    Some(Value::Str(s)) => capitalize_type(s),
                    Some(Value::Type(t)) => match &**t {
                        Resource(Some(n), None) => n.clone(),
                        Class(None) => "Class".into(),
                        _ => return Err("Resource[] expects a type name".into()),
                    },
                    _ => return Err("Resource[] expects a type name".into()),
                };
                if name.eq_ignore_ascii_case("class") {
                    return PType::Class(None).parameterize(args.get(1..).unwrap_or(&[]));
                }
                let base = Resource(Some(name), None);
                if args.len() > 1 {
                    return base.parameterize(&args[1..]);
                }
                base
            }
            Resource(Some(t), None) => {
                let title = match args.first() {
                    Some(Value::Str(s)) => s.clone(),
                    Some(other) => other.to_display(),
                    None => return Ok(self.clone()),
                };
                Resource(Some(t.clone()), Some(title))
            }
            Class(None) => match args.first() {
                Some(Value::Str(s)) => Class(Some(s.trim_colons().to_lowercase())),
                Some(Value::Type(t)) => match &**t {
                    Resource(Some(n), None) => Class(Some(n.to_lowercase())),
                    _ => return Err("Class[] expects a class name".into()),
                },
                _ => return Err("Class[] expects a class name".into()),
            },
            Alias(_, t) => t.parameterize(args)?,
            Timespan => {
                let end = |v: Option<&Value>, d: i64| -> Result<i64, std::string::String> {
                    match v {
                        None | Some(Value::Default) | Some(Value::Undef) => Ok(d),
                        Some(Value::Timespan(t)) => Ok(t.0),
                        Some(Value::Str(s)) => crate::eval::values::timespan::Timespan::parse(
                            s,
                            &crate::eval::values::timespan::Timespan::default_formats(),
                        )
                        .map(|t| t.0),
                        Some(n) => crate::eval::values::timespan::Timespan::from_seconds(n)
                            .map(|t| t.0)
                            .ok_or_else(|| "Unable to create a Timespan".to_string()),
                    }
                };
                let (a, b) = (end(args.first(), i64::MIN)?, end(args.get(1), i64::MAX)?);
                if a > b {
                    return Err(format!(
                        "'from' must be less or equal to 'to'. Got ({a}, {b}"
                    ));
                }
                TimespanRange(a, b)
            }
            Iterable | Iterator => match args.first() {
                None => self.clone(),
                Some(a) => {
                    let e = Box::new(type_arg(a)?);
                    if *self == Iterable {
                        IterableOf(e)
                    } else {
                        IteratorOf(e)
                    }
                }
            },
            Callable(None) => Callable(Some(
                args.iter().map(callable_arg).collect::<Vec<_>>().join(", "),
            )),
            Binary => return Err("Operator '[]' is not applicable to a Binary-Type.".to_string()),
            Error(None, None) if args.len() <= 2 => {
                let text = |v: Option<&Value>| match v {
                    Some(Value::Str(s)) => Ok(Some(s.clone())),
                    None | Some(Value::Undef) => Ok(None),
                    Some(other) => Err(format!(
                        "Error-Type[] arguments must be strings, got {}",
                        other.type_name()
                    )),
                };
                Error(text(args.first())?, text(args.get(1))?)
            }
            other => return Err(format!("{} is not a parameterized type", other)),
        })
    }
}
