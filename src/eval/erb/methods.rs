//! Ruby's methods on values as ERB templates call them: strings, numbers, arrays and
//! hashes (with Enumerable and blocks), and the few classes a template may name.

use super::*;

impl Interp<'_, '_> {
    pub(super) fn call(
        &mut self,
        recv: Option<Value>,
        name: &str,
        args: Vec<Value>,
        block: Option<&Block>,
    ) -> E<Value> {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        if recv.is_none() {
            if let Some(m) = self.methods.get(name).cloned() {
                if args.len() != m.params.len() {
                    return err(format!(
                        "wrong number of arguments (given {}, expected {})",
                        args.len(),
                        m.params.len()
                    ));
                }
                // The method's own scope: its parameters only.
                let frame = m.params.iter().cloned().zip(args).collect();
                let outer = std::mem::replace(&mut self.locals, vec![frame]);
                let r = self.run(&m.body);
                self.locals = outer;
                return match r {
                    Err(Ctl::Next(v)) => Ok(v),
                    other => other,
                };
            }
        }
        let Some(recv) = recv else {
            return match name {
                // The libraries templates load (ipaddr, json, ...) are built in here.
                "require" => Ok(Value::Bool(true)),
                "Array" => Ok(Value::Array(to_array(a0))),
                "String" => Ok(Value::Str(ruby_to_s(&a0))),
                "Integer" => match &a0 {
                    Value::Int(_) => Ok(a0),
                    Value::Float(f) => Ok(Value::Int(*f as i64)),
                    Value::Str(s) => s.trim().parse::<i64>().map(Value::Int).or_else(|_| {
                        err(format!(
                            "invalid value for Integer(): {}",
                            ruby_inspect(&a0)
                        ))
                    }),
                    other => err(format!("can't convert {} into Integer", class_name(other))),
                },
                "Float" => Ok(Value::Float(match &a0 {
                    Value::Str(s) => s
                        .trim()
                        .parse()
                        .or_else(|_| err("invalid value for Float()"))?,
                    v => num(v),
                })),
                "raise" | "fail" => err(ruby_to_s(&a0)),
                "scope" => err("`scope` without a method"),
                "puts" | "print" | "p" => err(format!("`{name}` (templates must not print)")),
                other if self.template.assigned.contains(other) && args.is_empty() => {
                    Ok(Value::Undef)
                }
                other => err(format!("undefined local variable or method `{other}'")),
            };
        };
        let b = |c: &str| -> E<&Block> {
            block.ok_or_else(|| Ctl::Err(format!("`{c}` without a block")))
        };
        use Value::*;
        if let (Str(cls), "new") = (&recv, name) {
            match cls.as_str() {
                "Hash" => return Ok(Hash(crate::eval::values::value::HashValue::default())),
                "Array" => return Ok(Array(vec![])),
                "String" => return Ok(Str(ruby_to_s(&a0))),
                _ => {}
            }
        }
        // Methods every object has.
        match name {
            "nil?" => return Ok(Bool(recv.is_undef())),
            "is_a?" | "kind_of?" | "instance_of?" => {
                let cls = match &a0 {
                    Str(s) => s.clone(),
                    _ => String::new(),
                };
                return Ok(Bool(is_a(&recv, &cls)));
            }
            "to_s" => return Ok(Str(ruby_to_s(&recv))),
            "inspect" => return Ok(Str(ruby_inspect(&recv))),
            // Psych's dump, as stdlib's to_yaml() gives it.
            "to_yaml" => return Ok(Str(crate::eval::hiera::yaml::to_yaml(&recv.to_json()))),
            "class" => return Ok(Str(class_name(&recv).into())),
            "respond_to?" => return Ok(Bool(true)),
            "==" => return Ok(Bool(ruby_eq(&recv, &a0))),
            "!" => return Ok(Bool(!truthy(&recv))),
            "frozen?" => return Ok(Bool(false)),
            "dup" | "clone" | "freeze" | "itself" => return Ok(recv),
            _ => {}
        }
        match (&recv, name) {
            (Undef, "to_a") => Ok(Array(vec![])),
            (Undef, "empty?") => err("undefined method `empty?' for nil:NilClass"),
            (Undef, "to_i") => Ok(Int(0)),
            (Undef, _) => err(format!("undefined method `{name}' for nil:NilClass")),
            // ---- strings
            (Str(s), "length" | "size") => Ok(Int(s.chars().count() as i64)),
            (Str(s), "empty?") => Ok(Bool(s.is_empty())),
            (Str(s), "upcase") => Ok(Str(s.to_uppercase())),
            (Str(s), "downcase") => Ok(Str(s.to_lowercase())),
            (Str(s), "capitalize") => Ok(Str(crate::eval::values::strings::ruby_capitalize(s))),
            (Str(s), "strip") => Ok(Str(s.trim().to_string())),
            (Str(s), "lstrip") => Ok(Str(s.trim_start().to_string())),
            (Str(s), "rstrip") => Ok(Str(s.trim_end().to_string())),
            (Str(s), "chomp") => Ok(Str(s
                .strip_suffix("\r\n")
                .or_else(|| s.strip_suffix('\n'))
                .unwrap_or(s)
                .to_string())),
            (Str(s), "to_i") => Ok(Int({
                let t = s.trim_start();
                let end = t
                    .char_indices()
                    .find(|(i, c)| !(c.is_ascii_digit() || (*i == 0 && (*c == '-' || *c == '+'))))
                    .map(|(i, _)| i)
                    .unwrap_or(t.len());
                t[..end].parse().unwrap_or(0)
            })),
            (Str(s), "to_f") => Ok(Float(s.trim().parse().unwrap_or(0.0))),
            (Str(_), "to_sym" | "to_str") => Ok(recv.clone()),
            (Str(s), "reverse") => Ok(Str(s.chars().rev().collect())),
            (Str(s), "include?") => Ok(Bool(s.contains(&ruby_to_s(&a0)))),
            (Str(s), "start_with?") => Ok(Bool(args.iter().any(|p| s.starts_with(&ruby_to_s(p))))),
            (Str(s), "end_with?") => Ok(Bool(args.iter().any(|p| s.ends_with(&ruby_to_s(p))))),
            (Str(s), "chars") => Ok(Array(s.chars().map(|c| Str(c.to_string())).collect())),
            (Str(s), "lines" | "each_line") => {
                let lines: Vec<Value> = s
                    .split_inclusive('\n')
                    .map(|l| Str(l.to_string()))
                    .collect();
                if let Some(bl) = block {
                    for l in lines {
                        self.call_block(bl, vec![l])?;
                    }
                    Ok(recv.clone())
                } else {
                    Ok(Array(lines))
                }
            }
            (Str(s), "split") => {
                let parts: Vec<Value> = match &a0 {
                    Undef => s.split_whitespace().map(|p| Str(p.into())).collect(),
                    Str(sep) if sep == " " => s.split_whitespace().map(|p| Str(p.into())).collect(),
                    Str(sep) => {
                        let mut v: Vec<Value> =
                            s.split(sep.as_str()).map(|p| Str(p.into())).collect();
                        while matches!(v.last(), Some(Str(x)) if x.is_empty()) {
                            v.pop();
                        }
                        v
                    }
                    Regex(r) => {
                        let mut v: Vec<Value> = r.split(s).into_iter().map(Str).collect();
                        while matches!(v.last(), Some(Str(x)) if x.is_empty()) {
                            v.pop();
                        }
                        v
                    }
                    other => {
                        return err(format!(
                            "wrong argument type {} (expected Regexp)",
                            class_name(other)
                        ))
                    }
                };
                Ok(Array(parts))
            }
            // With a block: each match replaced by the block's value for it.
            (Str(s), "gsub" | "sub") if block.is_some() && args.len() == 1 => {
                let re = regex_of(&a0)?;
                let mut out = String::new();
                let mut last = 0;
                for (m0, m1) in re.match_spans(s, 0, name == "gsub") {
                    out.push_str(&s[last..m0]);
                    let v =
                        self.call_block(block.expect("guarded"), vec![Str(s[m0..m1].into())])?;
                    out.push_str(&ruby_to_s(&v));
                    last = m1;
                }
                out.push_str(&s[last..]);
                Ok(Str(out))
            }
            // The character index of the first (`index`) or last (`rindex`) match of a
            // string or regexp, nil when none.
            (Str(s), "index" | "rindex") => {
                let re = regex_of(&a0)?;
                let spans = re.match_spans(s, 0, name == "rindex");
                let at = if name == "index" {
                    spans.first()
                } else {
                    spans.last()
                };
                Ok(at.map_or(Undef, |(m0, _)| Int(s[..*m0].chars().count() as i64)))
            }
            (Str(s), "gsub" | "sub") => {
                let re = regex_of(&a0)?;
                let rep = ruby_to_s(&args.get(1).cloned().unwrap_or(Undef));
                let rep =
                    crate::eval::values::strings::ruby_replacement(&rep, re.has_named_groups());
                Ok(Str(if name == "gsub" {
                    re.replace(s, &rep, true)
                } else {
                    re.replace(s, &rep, false)
                }))
            }
            (Str(s), "tr") => {
                let from: Vec<char> = ruby_to_s(&a0).chars().collect();
                let to: Vec<char> = ruby_to_s(&args.get(1).cloned().unwrap_or(Undef))
                    .chars()
                    .collect();
                Ok(Str(s
                    .chars()
                    .map(|c| match from.iter().position(|f| *f == c) {
                        Some(i) => *to.get(i).or(to.last()).unwrap_or(&c),
                        None => c,
                    })
                    .collect()))
            }
            (Str(s), "match" | "=~") => {
                let re = regex_of(&a0)?;
                Ok(re.captures(s).map(Array).unwrap_or(Undef))
            }
            // Regexp#match(str): the match data, nil for no match or a nil string.
            (Regex(re), "match") => Ok(match &a0 {
                Undef => Undef,
                v => re.captures(&ruby_to_s(v)).map(Array).unwrap_or(Undef),
            }),
            (Regex(re), "match?") => Ok(Bool(match &a0 {
                Undef => false,
                v => re.is_match(&ruby_to_s(v)),
            })),
            (Str(s), "ljust" | "rjust" | "center") => {
                let w = match a0 {
                    Int(i) => i.max(0) as usize,
                    _ => 0,
                };
                let pad = match args.get(1) {
                    Some(Str(p)) if !p.is_empty() => p.chars().next().unwrap_or(' '),
                    _ => ' ',
                };
                let n = s.chars().count();
                if n >= w {
                    return Ok(recv.clone());
                }
                let fill = |k: usize| std::iter::repeat_n(pad, k).collect::<String>();
                Ok(Str(match name {
                    "ljust" => format!("{s}{}", fill(w - n)),
                    "rjust" => format!("{}{s}", fill(w - n)),
                    _ => {
                        let left = (w - n) / 2;
                        format!("{}{s}{}", fill(left), fill(w - n - left))
                    }
                }))
            }
            (Str(s), "[]") => match &a0 {
                Int(i) => {
                    let chars: Vec<char> = s.chars().collect();
                    let i = if *i < 0 { chars.len() as i64 + i } else { *i };
                    Ok(chars
                        .get(i as usize)
                        .map(|c| Str(c.to_string()))
                        .unwrap_or(Undef))
                }
                Regex(r) => Ok(r
                    .captures(s)
                    .and_then(|c| c.into_iter().next())
                    .unwrap_or(Undef)),
                Str(sub) => Ok(if s.contains(sub.as_str()) {
                    a0.clone()
                } else {
                    Undef
                }),
                Array(r) => {
                    let chars: Vec<char> = s.chars().collect();
                    let from = num(r.first().unwrap_or(&Undef)).max(0.0) as usize;
                    let n = r.len();
                    Ok(Str(chars.iter().skip(from).take(n).collect()))
                }
                _ => err("String#[] with this argument"),
            },
            (Str(s), "%") => self.binop("%", Str(s.clone()), a0, &Node::Nil),
            (Str(s), "+") => self.binop("+", Str(s.clone()), a0, &Node::Nil),
            (Str(s), "squeeze") => {
                let mut out = String::new();
                for ch in s.chars() {
                    if !out.ends_with(ch) {
                        out.push(ch);
                    }
                }
                Ok(Str(out))
            }
            // ---- numbers
            (Int(i), "to_i" | "round" | "floor" | "ceil" | "to_int") => Ok(Int(*i)),
            (Int(i), "to_f") => Ok(Float(*i as f64)),
            (Int(i), "zero?") => Ok(Bool(*i == 0)),
            (Int(i), "even?") => Ok(Bool(i % 2 == 0)),
            (Int(i), "odd?") => Ok(Bool(i % 2 != 0)),
            (Int(i), "abs") => i
                .checked_abs()
                .map(Int)
                .ok_or_else(|| Ctl::Err("integer overflow".into())),
            (Int(i), "times") => {
                let bl = b("times")?;
                for k in 0..*i {
                    self.call_block(bl, vec![Int(k)])?;
                }
                Ok(recv.clone())
            }
            (Float(f), "to_i" | "floor") => Ok(Int(f.floor() as i64)),
            (Float(f), "round") => Ok(Int(f.round() as i64)),
            (Float(f), "ceil") => Ok(Int(f.ceil() as i64)),
            (Float(_), "to_f") => Ok(recv.clone()),
            (Bool(_), "&" | "|") => self.binop(name, recv.clone(), a0, &Node::Nil),
            // ---- hashes
            (Hash(h), "[]") => Ok(h.get(&a0).cloned().unwrap_or(Undef)),
            (Hash(h), "fetch") => match h.get(&a0) {
                Some(v) => Ok(v.clone()),
                None if args.len() > 1 => Ok(args[1].clone()),
                None => err(format!("key not found: {}", ruby_inspect(&a0))),
            },
            (Hash(h), "dig") => {
                let mut cur = Hash(h.clone());
                for k in &args {
                    cur = self.call(Some(cur), "[]", vec![k.clone()], None)?;
                    if cur.is_undef() {
                        break;
                    }
                }
                Ok(cur)
            }
            (Hash(h), "keys") => Ok(Array(h.keys().cloned().collect())),
            (Hash(h), "values") => Ok(Array(h.values().cloned().collect())),
            (Hash(h), "key?" | "has_key?" | "include?" | "member?") => {
                Ok(Bool(h.contains_key(&a0)))
            }
            (Hash(h), "value?" | "has_value?") => Ok(Bool(h.values().any(|v| ruby_eq(v, &a0)))),
            (Hash(h), "empty?") => Ok(Bool(h.is_empty())),
            (Hash(h), "length" | "size" | "count") if block.is_none() => Ok(Int(h.len() as i64)),
            (Hash(h), "merge") => {
                let mut out = h.clone();
                if let Hash(o) = &a0 {
                    for (k, v) in o {
                        out.insert(k.clone(), v.clone());
                    }
                }
                Ok(Hash(out))
            }
            (Hash(h), "to_h") => Ok(Hash(h.clone())),
            (Hash(h), "to_a") => Ok(Array(to_array(Hash(h.clone())))),
            (Hash(h), "invert") => Ok(Hash(
                h.iter().map(|(k, v)| (v.clone(), k.clone())).collect(),
            )),
            (Hash(h), "select" | "filter" | "reject") => {
                let bl = b(name)?;
                let mut out = IndexMap::new();
                for (k, v) in h {
                    let keep = truthy(&self.call_block(bl, vec![k.clone(), v.clone()])?);
                    if keep == (name != "reject") {
                        out.insert(k.clone(), v.clone());
                    }
                }
                Ok(Hash(out.into()))
            }
            (Hash(h), "each_pair") => {
                let bl = b(name)?;
                for (k, v) in h.clone() {
                    self.call_block(bl, vec![k, v])?;
                }
                Ok(recv.clone())
            }
            (Hash(h), "delete_if") => {
                let bl = b(name)?;
                let mut out = IndexMap::new();
                for (k, v) in h {
                    if !truthy(&self.call_block(bl, vec![k.clone(), v.clone()])?) {
                        out.insert(k.clone(), v.clone());
                    }
                }
                Ok(Hash(out.into()))
            }
            (Hash(_), _) => {
                let items = to_array(recv.clone());
                self.enumerable(Array(items), name, args, block)
            }
            (Array(_), _) => self.enumerable(recv.clone(), name, args, block),
            _ => err(format!(
                "undefined method `{name}' for {}",
                class_name(&recv)
            )),
        }
    }

    pub(super) fn enumerable(
        &mut self,
        recv: Value,
        name: &str,
        args: Vec<Value>,
        block: Option<&Block>,
    ) -> E<Value> {
        use Value::*;
        let Array(items) = recv.clone() else {
            return err(format!("undefined method `{name}'"));
        };
        let a0 = args.first().cloned().unwrap_or(Undef);
        let b = |c: &str| -> E<&Block> {
            block.ok_or_else(|| Ctl::Err(format!("`{c}` without a block")))
        };
        Ok(match name {
            "map" | "collect" | "each" if block.is_none() => recv,
            "each" => {
                let bl = b(name)?;
                for x in items {
                    self.call_block(bl, vec![x])?;
                }
                recv
            }
            "each_index" => {
                let bl = b(name)?;
                for i in 0..items.len() {
                    self.call_block(bl, vec![Int(i as i64)])?;
                }
                recv
            }
            "each_with_index" => {
                let bl = b(name)?;
                for (i, x) in items.into_iter().enumerate() {
                    self.call_block_pair(bl, x, Int(i as i64))?;
                }
                recv
            }
            "each_with_object" => {
                let bl = b(name)?;
                let mut acc = a0;
                for x in items {
                    self.call_block_pair(bl, x, acc.clone())?;
                    // Mutation of the memo is not modelled beyond arrays and hashes by value.
                    acc = acc.clone();
                }
                acc
            }
            "each_slice" => {
                let n = match a0 {
                    Int(n) if n > 0 => n as usize,
                    _ => return err("invalid slice size"),
                };
                let slices: Vec<Value> = items.chunks(n).map(|c| Array(c.to_vec())).collect();
                match block {
                    Some(bl) => {
                        for s in slices {
                            self.call_block(bl, vec![s])?;
                        }
                        recv
                    }
                    None => Array(slices),
                }
            }
            "map" | "collect" | "flat_map" | "collect_concat" => {
                let bl = b(name)?;
                let mut out = vec![];
                for x in items {
                    let v = self.call_block(bl, vec![x])?;
                    match (name, v) {
                        ("flat_map" | "collect_concat", Array(inner)) => out.extend(inner),
                        (_, v) => out.push(v),
                    }
                }
                Array(out)
            }
            "select" | "filter" | "reject" | "find_all" => {
                let bl = b(name)?;
                let mut out = vec![];
                for x in items {
                    let keep = truthy(&self.call_block(bl, vec![x.clone()])?);
                    if keep == (name != "reject") {
                        out.push(x);
                    }
                }
                Array(out)
            }
            "find" | "detect" => {
                let bl = b(name)?;
                for x in items {
                    if truthy(&self.call_block(bl, vec![x.clone()])?) {
                        return Ok(x);
                    }
                }
                Undef
            }
            "any?" | "all?" | "none?" => {
                let mut hits = 0;
                let n = items.len();
                for x in items {
                    let t = match block {
                        Some(bl) => truthy(&self.call_block(bl, vec![x])?),
                        None => truthy(&x),
                    };
                    if t {
                        hits += 1;
                    }
                }
                Bool(match name {
                    "any?" => hits > 0,
                    "all?" => hits == n,
                    _ => hits == 0,
                })
            }
            "count" => match block {
                Some(bl) => {
                    let mut k = 0;
                    for x in items {
                        if truthy(&self.call_block(bl, vec![x])?) {
                            k += 1;
                        }
                    }
                    Int(k)
                }
                None if args.is_empty() => Int(items.len() as i64),
                None => Int(items.iter().filter(|x| ruby_eq(x, &a0)).count() as i64),
            },
            "length" | "size" => Int(items.len() as i64),
            "empty?" => Bool(items.is_empty()),
            "include?" | "member?" => Bool(items.iter().any(|x| ruby_eq(x, &a0))),
            "first" => match a0 {
                Int(n) => Array(items.into_iter().take(n.max(0) as usize).collect()),
                _ => items.first().cloned().unwrap_or(Undef),
            },
            "last" => match a0 {
                Int(n) => {
                    let k = items.len().saturating_sub(n.max(0) as usize);
                    Array(items[k..].to_vec())
                }
                _ => items.last().cloned().unwrap_or(Undef),
            },
            "take" => Array(items.into_iter().take(num(&a0) as usize).collect()),
            "drop" => Array(items.into_iter().skip(num(&a0) as usize).collect()),
            "join" => {
                let sep = match &a0 {
                    Undef => String::new(),
                    v => ruby_to_s(v),
                };
                fn flat(v: &Value, out: &mut Vec<String>) {
                    match v {
                        Value::Array(x) => x.iter().for_each(|i| flat(i, out)),
                        other => out.push(ruby_to_s(other)),
                    }
                }
                let mut parts = vec![];
                items.iter().for_each(|i| flat(i, &mut parts));
                Str(parts.join(&sep))
            }
            "sort" => {
                let mut items = items;
                let mut failure = None;
                match block {
                    Some(bl) => {
                        // Insertion sort: the block may fail, and templates sort short lists.
                        let mut out: Vec<Value> = vec![];
                        for x in items {
                            let mut pos = out.len();
                            for (i, y) in out.iter().enumerate() {
                                let r = self.call_block(bl, vec![x.clone(), y.clone()])?;
                                if matches!(r, Int(n) if n < 0) {
                                    pos = i;
                                    break;
                                }
                            }
                            out.insert(pos, x);
                        }
                        return Ok(Array(out));
                    }
                    None => items.sort_by(|a, b| match ruby_cmp(a, b) {
                        Ok(o) => o,
                        Err(Ctl::Err(m)) => {
                            failure.get_or_insert(m);
                            Ordering::Equal
                        }
                        Err(_) => Ordering::Equal,
                    }),
                }
                if let Some(m) = failure {
                    return err(m);
                }
                Array(items)
            }
            "sort_by" | "min_by" | "max_by" | "group_by" | "partition" => {
                let bl = b(name)?;
                let mut keyed = vec![];
                for x in items {
                    let k = self.call_block(bl, vec![x.clone()])?;
                    keyed.push((k, x));
                }
                match name {
                    "group_by" => {
                        let mut h: IndexMap<Value, Value> = IndexMap::new();
                        for (k, x) in keyed {
                            if let Array(v) = h.entry(k).or_insert_with(|| Array(vec![])) {
                                v.push(x);
                            }
                        }
                        Hash(h.into())
                    }
                    "partition" => {
                        let (t, f): (Vec<_>, Vec<_>) =
                            keyed.into_iter().partition(|(k, _)| truthy(k));
                        Array(vec![
                            Array(t.into_iter().map(|p| p.1).collect()),
                            Array(f.into_iter().map(|p| p.1).collect()),
                        ])
                    }
                    _ => {
                        let mut failure = None;
                        keyed.sort_by(|a, b| {
                            ruby_cmp(&a.0, &b.0).unwrap_or_else(|e| {
                                if let Ctl::Err(m) = e {
                                    failure.get_or_insert(m);
                                }
                                Ordering::Equal
                            })
                        });
                        if let Some(m) = failure {
                            return err(m);
                        }
                        match name {
                            "min_by" => keyed.first().map(|p| p.1.clone()).unwrap_or(Undef),
                            "max_by" => keyed.last().map(|p| p.1.clone()).unwrap_or(Undef),
                            _ => Array(keyed.into_iter().map(|p| p.1).collect()),
                        }
                    }
                }
            }
            "min" | "max" => {
                let mut best: Option<Value> = None;
                for x in items {
                    best = Some(match best {
                        None => x,
                        Some(b) => {
                            let o = ruby_cmp(&x, &b)?;
                            if (name == "min") == (o == Ordering::Less) && o != Ordering::Equal {
                                x
                            } else {
                                b
                            }
                        }
                    });
                }
                best.unwrap_or(Undef)
            }
            "sum" => {
                let mut acc = match a0 {
                    Undef => Int(0),
                    v => v,
                };
                for x in items {
                    acc = self.binop("+", acc, x, &Node::Nil)?;
                }
                acc
            }
            "inject" | "reduce" => {
                let bl = b(name)?;
                let mut it = items.into_iter();
                let mut acc = if args.is_empty() {
                    it.next().unwrap_or(Undef)
                } else {
                    a0
                };
                for x in it {
                    acc = self.call_block_pair(bl, acc, x)?;
                }
                acc
            }
            "uniq" => {
                let mut out: Vec<Value> = vec![];
                for x in items {
                    if !out.contains(&x) {
                        out.push(x);
                    }
                }
                Array(out)
            }
            "compact" => Array(items.into_iter().filter(|x| !x.is_undef()).collect()),
            "flatten" => {
                fn flat(v: Value, out: &mut Vec<Value>) {
                    match v {
                        Value::Array(x) => x.into_iter().for_each(|i| flat(i, out)),
                        other => out.push(other),
                    }
                }
                let mut out = vec![];
                items.into_iter().for_each(|i| flat(i, &mut out));
                Array(out)
            }
            "reverse" => Array(items.into_iter().rev().collect()),
            "to_a" | "entries" => Array(items),
            "to_h" => {
                let mut h = IndexMap::new();
                for x in items {
                    if let Array(p) = x {
                        h.insert(
                            p.first().cloned().unwrap_or(Undef),
                            p.get(1).cloned().unwrap_or(Undef),
                        );
                    }
                }
                Hash(h.into())
            }
            "zip" => {
                let other = match a0 {
                    Array(o) => o,
                    _ => vec![],
                };
                Array(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| Array(vec![x, other.get(i).cloned().unwrap_or(Undef)]))
                        .collect(),
                )
            }
            "index" | "find_index" => items
                .iter()
                .position(|x| ruby_eq(x, &a0))
                .map(|i| Int(i as i64))
                .unwrap_or(Undef),
            "[]" => match a0 {
                Int(i) => {
                    let i = if i < 0 { items.len() as i64 + i } else { i };
                    if args.len() > 1 {
                        let n = num(&args[1]) as usize;
                        Array(items.into_iter().skip(i.max(0) as usize).take(n).collect())
                    } else {
                        items.get(i as usize).cloned().unwrap_or(Undef)
                    }
                }
                Array(r) => {
                    let s = num(r.first().unwrap_or(&Undef)) as usize;
                    let e = num(r.last().unwrap_or(&Undef)) as usize;
                    Array(items.into_iter().skip(s).take(e + 1 - s).collect())
                }
                _ => return err("Array#[] with this argument"),
            },
            "push" | "<<" => {
                let mut items = items;
                items.extend(args);
                Array(items)
            }
            "+" | "-" | "&" | "|" => self.binop(name, recv, a0, &Node::Nil)?,
            "each_pair" => {
                let bl = b(name)?;
                for x in items {
                    self.call_block(bl, vec![x])?;
                }
                recv
            }
            _ => return err(format!("undefined method `{name}' for Array")),
        })
    }

    pub(super) fn call_block_pair(&mut self, bl: &Block, a: Value, b: Value) -> E<Value> {
        if bl.params.len() >= 2 {
            self.count_block_call()?;
            let mut frame = HashMap::new();
            frame.insert(bl.params[0].clone(), a);
            frame.insert(bl.params[1].clone(), b);
            self.locals.push(frame);
            let r = self.run(&bl.body);
            self.locals.pop();
            match r {
                Err(Ctl::Next(v)) => Ok(v),
                other => other,
            }
        } else {
            self.call_block(bl, vec![Value::Array(vec![a, b])])
        }
    }
}

pub(super) fn is_a(v: &Value, cls: &str) -> bool {
    match cls {
        "Object" | "BasicObject" => true,
        "String" => matches!(v, Value::Str(_)),
        "Array" => matches!(v, Value::Array(_)),
        "Hash" => matches!(v, Value::Hash(_)),
        "Integer" | "Fixnum" | "Bignum" => matches!(v, Value::Int(_)),
        "Float" => matches!(v, Value::Float(_)),
        "Numeric" => matches!(v, Value::Int(_) | Value::Float(_)),
        "TrueClass" => matches!(v, Value::Bool(true)),
        "FalseClass" => matches!(v, Value::Bool(false)),
        "NilClass" => v.is_undef(),
        "Symbol" => false,
        "Regexp" => matches!(v, Value::Regex(_)),
        _ => false,
    }
}
