//! The binary operators with Puppet's semantics: comparison, matching (`=~`, `in`, case and
//! selector matching), arithmetic and the collection operators.

use super::*;

impl Compiler<'_> {
    pub(super) fn eval_binary(
        &mut self,
        op: BinaryOp,
        left: &Expr,
        right: &Expr,
        scope: ScopeId,
        span: Span,
    ) -> R<Value> {
        match op {
            BinaryOp::And => {
                let l = self.eval(left, scope)?;
                if !l.truthy() {
                    return Ok(Value::Bool(false));
                }
                return Ok(Value::Bool(self.eval(right, scope)?.truthy()));
            }
            BinaryOp::Or => {
                let l = self.eval(left, scope)?;
                if l.truthy() {
                    return Ok(Value::Bool(true));
                }
                return Ok(Value::Bool(self.eval(right, scope)?.truthy()));
            }
            _ => {}
        }
        let l = self.eval(left, scope)?;
        let r = self.eval(right, scope)?;
        match op {
            BinaryOp::Eq => Ok(Value::Bool(puppet_eq(&l, &r))),
            BinaryOp::Ne => Ok(Value::Bool(!puppet_eq(&l, &r))),
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                // A type compares only with a type (assignability); with anything else it is
                // neither smaller nor larger.
                if matches!(l, Value::Type(_)) && !matches!(r, Value::Type(_)) {
                    return Ok(Value::Bool(false));
                }
                if let (Value::Type(a), Value::Type(b)) = (&l, &r) {
                    // Types compare by assignability (evaluator_impl's
                    // eval_ComparisonExpression): unrelated types are neither < nor >.
                    return Ok(Value::Bool(match op {
                        BinaryOp::Lt => b.is_assignable(a) && !a.normalized_eq(b),
                        BinaryOp::Le => b.is_assignable(a),
                        BinaryOp::Gt => a.is_assignable(b) && !a.normalized_eq(b),
                        _ => a.is_assignable(b),
                    }));
                }
                let ord = self.compare(&l, &r, op, (left.span, right.span))?;
                Ok(Value::Bool(match op {
                    BinaryOp::Lt => ord == Ordering::Less,
                    BinaryOp::Le => ord != Ordering::Greater,
                    BinaryOp::Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                }))
            }
            BinaryOp::Match | BinaryOp::NotMatch => {
                let m = self.match_op(&l, &r, scope, span, right.span)?;
                Ok(Value::Bool(if op == BinaryOp::Match { m } else { !m }))
            }
            BinaryOp::In => Ok(Value::Bool(self.in_op(&l, &r, scope, span)?)),
            _ => self.arith(op, l, r, (left.span, right.span)),
        }
    }

    /// Compares for `<` and friends; a failure is reported at the operator between the
    /// `operands` (where Puppet locates a binary expression), found only then.
    pub(in crate::eval) fn compare(
        &self,
        l: &Value,
        r: &Value,
        op: BinaryOp,
        operands: (Span, Span),
    ) -> R<Ordering> {
        let fail = |why: &str| {
            let span = self.operator_span(operands.0, operands.1, op.as_str());
            Flow::Err(self.issue(
                format!(
                    "Comparison of: {} {} {}, is not possible. Caused by '{}'.",
                    compared_label(l),
                    op.as_str(),
                    compared_label(r),
                    why
                ),
                span,
            ))
        };
        if let Some(o) = crate::eval::values::timespan::compare(l, r) {
            return Ok(o);
        }
        match (l, r) {
            (Value::Int(a), Value::Int(b)) => Ok(a.cmp(b)),
            (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                let a = num_f64(l);
                let b = num_f64(r);
                Ok(a.partial_cmp(&b).unwrap_or(Ordering::Equal))
            }
            (Value::Str(a), Value::Str(b)) => {
                Ok(crate::eval::values::value::str_cmp_ignore_case(a, b))
            }
            (Value::Str(_), _) => Err(fail("A String is not comparable to a non String")),
            (Value::Int(_) | Value::Float(_), _) => {
                Err(fail("A Numeric is not comparable to non Numeric"))
            }
            _ => Err(fail(
                "Only Strings, Numbers, Timespans, Timestamps, and Versions are comparable",
            )),
        }
    }

    /// `l =~ r`; `right_at` is where the right operand is written (Puppet reports a right
    /// operand that is no pattern there).
    pub(super) fn match_op(
        &mut self,
        l: &Value,
        r: &Value,
        scope: ScopeId,
        span: Span,
        right_at: Span,
    ) -> R<bool> {
        match r {
            Value::Type(t) => Ok(t.is_instance(l)),
            Value::Regex(re) => {
                let Value::Str(s) = l else {
                    return Err(self.match_not_string(l, span));
                };
                Ok(self.regex_match(re, s, scope))
            }
            Value::Str(src) => {
                let re = Regex::new(src).map_err(|m| Flow::Err(self.issue(m, span)))?;
                let Value::Str(s) = l else {
                    return Err(self.match_not_string(l, span));
                };
                Ok(self.regex_match(&re, s, scope))
            }
            // Puppet hands anything else to Ruby's Regexp.new, whose TypeError is the cause.
            other => {
                let ruby = match other {
                    Value::Undef => "nil",
                    Value::Bool(true) => "true",
                    Value::Bool(false) => "false",
                    Value::Default => "Symbol",
                    other => crate::eval::functions::stdlib::ruby_class(other),
                };
                Err(Flow::Err(self.issue(
                    format!(
                        "Can not convert right match operand to a regular expression. Caused by 'no implicit conversion of {ruby} into String'."
                    ),
                    right_at,
                )))
            }
        }
    }

    /// Puppet's MATCH_NOT_STRING: a pattern matches Strings only (`undef =~ /x/` fails).
    pub(super) fn match_not_string(&self, l: &Value, at: Span) -> Flow {
        let label = match l {
            Value::Undef => "an Undef Value".to_string(),
            Value::Default => "an Object".to_string(),
            Value::Type(t) => match &**t {
                PType::Resource(Some(_), Some(_)) => a_an(&format!("{t} Resource-Reference")),
                _ => a_an(&format!("{t}-Type")),
            },
            other => a_an(&simple_type_name(other)),
        };
        Flow::Err(self.issue(
            format!("Left match operand must result in a String value. Got {label}."),
            at,
        ))
    }

    /// Matches and, on success, sets `$0`..`$n` in the scope.
    pub(in crate::eval) fn regex_match(&mut self, re: &Regex, s: &str, scope: ScopeId) -> bool {
        match re.captures(s) {
            Some(groups) => {
                self.scopes[scope].matches = Some(groups);
                true
            }
            None => false,
        }
    }

    pub(super) fn in_op(&mut self, l: &Value, r: &Value, scope: ScopeId, _span: Span) -> R<bool> {
        Ok(match r {
            Value::Str(hay) => match l {
                Value::Str(needle) => hay.to_lowercase().contains(&needle.to_lowercase()),
                Value::Regex(re) => self.regex_match(re, &hay.clone(), scope),
                _ => false,
            },
            // Puppet's include_Binary: a byte sequence, a string's bytes or a byte value.
            Value::Binary(hay) => match l {
                Value::Binary(needle) => contains_bytes(hay, needle),
                Value::Str(needle) => contains_bytes(hay, needle.as_bytes()),
                Value::Int(i) => hay.iter().any(|b| i64::from(*b) == *i),
                Value::Float(f) => hay.iter().any(|b| f64::from(*b) == *f),
                _ => false,
            },
            // A hash: its keys (Puppet's include_Hash).
            Value::Array(items) => self.in_list(l, items, scope),
            Value::Hash(h) => {
                let keys: Vec<Value> = h.keys().cloned().collect();
                self.in_list(l, &keys, scope)
            }
            _ => false,
        })
    }

    /// Puppet's `include_Array`: a regex matches a string element; a string matches an
    /// element that is a regex (setting the captures), a type it is an instance of, or an
    /// equal string; a type contains its instances (a type value is an instance of a
    /// `Type[...]` only); anything else is compared for equality.
    pub(super) fn in_list(&mut self, l: &Value, items: &[Value], scope: ScopeId) -> bool {
        match l {
            Value::Regex(re) => items
                .iter()
                .filter_map(|v| v.as_str())
                .any(|s| self.regex_match(re, s, scope)),
            Value::Str(needle) => items.iter().any(|v| match v {
                Value::Regex(re) => self.regex_match(re, needle, scope),
                Value::Type(t) => t.is_instance(l),
                v => puppet_eq(l, v),
            }),
            Value::Type(t) => items.iter().any(|v| match v {
                Value::Type(_) => matches!(**t, PType::Type(_) | PType::Any) && t.is_instance(v),
                v => t.is_instance(v),
            }),
            _ => items.iter().any(|v| puppet_eq(l, v)),
        }
    }

    /// Arithmetic and the collection operators. `operands` are where the left and right
    /// operands are written: an operand that is not a number is reported there, as Puppet's
    /// `coerce_numeric` does; other errors at the operator between them (found only then).
    pub(in crate::eval) fn arith(
        &mut self,
        op: BinaryOp,
        l: Value,
        r: Value,
        operands: (Span, Span),
    ) -> R<Value> {
        // An array grows in place (the operand is ours): `reduce` building an array by
        // `$memo + [$x]` copies it once per step, not twice.
        // What `+` and `<<` make is bounded as a literal is (the top level only: a memo
        // doubled by `$m + $m` at each step).
        let len = |v: &Value| match v {
            Value::Array(a) => a.len() as u64,
            Value::Hash(h) => h.len() as u64,
            _ => 1,
        };
        if matches!(op, BinaryOp::Add | BinaryOp::Shl)
            && matches!(l, Value::Array(_) | Value::Hash(_))
            && len(&l) + len(&r) > crate::eval::compiler::limits::MAX_VALUE_NODES
        {
            let msg = crate::eval::compiler::limits::too_many_elements();
            return Err(Flow::Err(self.runtime(msg, operands.0.to(operands.1))));
        }
        let l = match (op, l) {
            (BinaryOp::Add, Value::Array(mut out)) => {
                match r {
                    Value::Array(b) => out.extend(b),
                    Value::Hash(h) => out.extend(
                        h.iter()
                            .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()])),
                    ),
                    other => out.push(other),
                }
                return Ok(Value::Array(out));
            }
            (_, l) => l,
        };
        match (op, &l, &r) {
            (BinaryOp::Add, Value::Hash(a), Value::Hash(b)) => {
                let mut out = a.clone();
                for (k, v) in b {
                    out.insert(k.clone(), v.clone());
                }
                return Ok(Value::Hash(out));
            }
            // Puppet's concatenate: an array of arrays is a list of pairs (`Hash[y]`), any
            // other array alternates keys and values (`Hash[*y]`).
            (BinaryOp::Add, Value::Hash(a), Value::Array(b)) => {
                let mut out = a.clone();
                if !b.is_empty() && b.iter().all(|x| matches!(x, Value::Array(_))) {
                    for p in b {
                        if let Value::Array(kv) = p {
                            match kv.as_slice() {
                                [k, v] => out.insert(k.clone(), v.clone()),
                                [k] => out.insert(k.clone(), Value::Undef),
                                _ => {
                                    return Err(Flow::Err(self.issue(
                                        format!("Error while evaluating a '+' expression, invalid number of elements ({} for 1..2)", kv.len()),
                                        self.operator_span(operands.0, operands.1, op.as_str()),
                                    )))
                                }
                            };
                        }
                    }
                } else {
                    if b.len() % 2 != 0 {
                        return Err(Flow::Err(self.issue(
                            "Error while evaluating a '+' expression, odd number of arguments for Hash",
                            self.operator_span(operands.0, operands.1, op.as_str()),
                        )));
                    }
                    for kv in b.chunks(2) {
                        out.insert(kv[0].clone(), kv[1].clone());
                    }
                }
                return Ok(Value::Hash(out));
            }
            (BinaryOp::Add, Value::Binary(a), Value::Binary(b)) => {
                return Ok(Value::Binary([&a[..], &b[..]].concat().into()));
            }
            (BinaryOp::Add, Value::Binary(_), _) => {
                return Err(Flow::Err(self.issue(
                    "Error while evaluating a '+' expression, Can only append Binary to a Binary",
                    self.operator_span(operands.0, operands.1, op.as_str()),
                )));
            }
            // Puppet's concatenate raises for anything else appended to a hash.
            (BinaryOp::Add, Value::Hash(_), _) => {
                return Err(Flow::Err(self.issue(
                    "Error while evaluating a '+' expression, Can only append Array or Hash to a Hash",
                    self.operator_span(operands.0, operands.1, op.as_str()),
                )));
            }
            (BinaryOp::Sub, Value::Array(a), Value::Array(b)) => {
                return Ok(Value::Array(
                    a.iter().filter(|x| !b.contains(x)).cloned().collect(),
                ));
            }
            // A hash's entries are `[key, value]` pairs (Puppet's `delete`).
            (BinaryOp::Sub, Value::Array(a), Value::Hash(h)) => {
                let pairs: Vec<Value> = h
                    .iter()
                    .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
                    .collect();
                return Ok(Value::Array(
                    a.iter().filter(|x| !pairs.contains(x)).cloned().collect(),
                ));
            }
            (BinaryOp::Sub, Value::Array(a), other) => {
                return Ok(Value::Array(
                    a.iter().filter(|x| *x != other).cloned().collect(),
                ));
            }
            (BinaryOp::Sub, Value::Hash(a), Value::Hash(b)) => {
                return Ok(Value::Hash(
                    a.iter()
                        .filter(|(k, _)| !b.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ));
            }
            (BinaryOp::Sub, Value::Hash(a), Value::Array(b)) => {
                return Ok(Value::Hash(
                    a.iter()
                        .filter(|(k, _)| !b.contains(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ));
            }
            (BinaryOp::Sub, Value::Hash(a), other) => {
                return Ok(Value::Hash(
                    a.iter()
                        .filter(|(k, _)| *k != other)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ));
            }
            (BinaryOp::Shl, Value::Array(a), other) => {
                let mut out = a.clone();
                out.push(other.clone());
                return Ok(Value::Array(out));
            }
            _ => {}
        }
        // A time value takes a number (or a string that is one) as seconds.
        let time = |v: &Value| matches!(v, Value::Timespan(_) | Value::Timestamp(_));
        let r = if time(&l) && !time(&r) {
            self.coerce_number(&r, operands.1)?
        } else {
            r
        };
        if let Some(res) = crate::eval::values::timespan::arith(op.as_str(), &l, &r) {
            let span = self.operator_span(operands.0, operands.1, op.as_str());
            return res.map_err(|m| {
                Flow::Err(self.issue(
                    format!("Error while evaluating a '{}' expression, {m}", op.as_str()),
                    span,
                ))
            });
        }
        let a = self.coerce_number(&l, operands.0)?;
        let b = self.coerce_number(&r, operands.1)?;
        // An Integer shifted by a Float: Ruby's Integer#<< takes the Float's integer part.
        let b = match (op, &a, b) {
            (BinaryOp::Shl | BinaryOp::Shr, Value::Int(_), Value::Float(f)) if f.is_finite() => {
                Value::Int(f.trunc() as i64)
            }
            (_, _, b) => b,
        };
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => {
                let v = match op {
                    BinaryOp::Add => x.checked_add(y),
                    BinaryOp::Sub => x.checked_sub(y),
                    BinaryOp::Mul => x.checked_mul(y),
                    BinaryOp::Div | BinaryOp::Mod if y == 0 => {
                        return Err(Flow::Err(self.issue("Division by 0", operands.1)))
                    }
                    BinaryOp::Div => Some(floor_div(x, y)),
                    BinaryOp::Mod => Some(x - y * floor_div(x, y)),
                    // Ruby's Integer#<< and #>>: a negative count shifts the other way;
                    // a left shift is exact (big integers) and refused when out of range.
                    BinaryOp::Shl | BinaryOp::Shr => {
                        let left = (op == BinaryOp::Shl) == (y >= 0);
                        let n = y.unsigned_abs();
                        if !left {
                            return Ok(Value::Int(x >> n.min(63)));
                        }
                        match shift_left(x, n) {
                            Ok(v) => return Ok(Value::Int(v)),
                            Err(hex) => {
                                let (bound, sign) = if x > 0 { ("max", '+') } else { ("min", '-') };
                                return Err(Flow::Err(self.issue(
                                    format!(
                                        "A '{}' expression resulted in a value outside of Puppet Integer {bound} range, got '{sign}{hex}'",
                                        op.as_str()
                                    ),
                                    self.operator_span(operands.0, operands.1, op.as_str()),
                                )));
                            }
                        }
                    }
                    _ => None,
                };
                v.map(Value::Int).ok_or_else(|| {
                    // Puppet computes in Ruby's big integers and then refuses the result,
                    // showing it in hex (`"%#+x"`).
                    let wide = match op {
                        BinaryOp::Add => i128::from(x) + i128::from(y),
                        BinaryOp::Sub => i128::from(x) - i128::from(y),
                        _ => i128::from(x) * i128::from(y),
                    };
                    let (bound, sign) = if wide > 0 { ("max", '+') } else { ("min", '-') };
                    Flow::Err(self.issue(
                        format!(
                            "A '{}' expression resulted in a value outside of Puppet Integer {bound} range, got '{sign}{:#x}'",
                            op.as_str(),
                            wide.unsigned_abs()
                        ),
                        self.operator_span(operands.0, operands.1, op.as_str()),
                    ))
                })
            }
            // Puppet's `calculate` reports these at the left operand (`left_o`), not at
            // the operator.
            (x, y) => {
                let left_is_float = matches!(x, Value::Float(_));
                let (x, y) = (num_f64(&x), num_f64(&y));
                let v = match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    BinaryOp::Mul => x * y,
                    BinaryOp::Div => x / y,
                    BinaryOp::Mod if left_is_float => {
                        return Err(Flow::Err(
                            self.issue("Operator '%' is not applicable to a Float.", operands.0),
                        ))
                    }
                    BinaryOp::Mod => return Err(Flow::Err(self.issue(
                        "Operator '%' is not applicable to an Integer when right side is a Float.",
                        operands.0,
                    ))),
                    _ => {
                        return Err(Flow::Err(self.issue(
                            format!("Operator '{}' is not applicable to a Float.", op.as_str()),
                            operands.0,
                        )))
                    }
                };
                if v.is_infinite() {
                    return Err(Flow::Err(self.issue(
                        format!("The result of the {} expression is Infinity", op.as_str()),
                        operands.0,
                    )));
                }
                Ok(Value::Float(v))
            }
        }
    }

    pub(super) fn coerce_number(&mut self, v: &Value, span: Span) -> R<Value> {
        match v {
            Value::Int(_) | Value::Float(_) => Ok(v.clone()),
            Value::Str(s) => match to_n(s) {
                Some(n) => {
                    self.warn_at(
                        &format!(
                            "The string '{s}' was automatically coerced to the numerical value {}",
                            n.to_display()
                        ),
                        span,
                    );
                    Ok(n)
                }
                None => Err(Flow::Err(self.issue(
                    format!("The value '{s}' cannot be converted to Numeric."),
                    span,
                ))),
            },
            // Puppet's to_n of undef is its empty-string form.
            Value::Undef => Err(Flow::Err(
                self.issue("The value '' cannot be converted to Numeric.", span),
            )),
            // Ruby's `to_s`: an array or hash in its inspect form.
            other @ (Value::Array(_) | Value::Hash(_)) => Err(Flow::Err(self.issue(
                format!(
                    "The value '{}' cannot be converted to Numeric.",
                    crate::eval::functions::stdlib::inspect(other)
                ),
                span,
            ))),
            other => Err(Flow::Err(self.issue(
                format!(
                    "The value '{}' cannot be converted to Numeric.",
                    other.to_display()
                ),
                span,
            ))),
        }
    }

    /// Case/selector matching: regexes match (setting `$n`), types test instances, arrays
    /// and hashes compare element-wise, strings ignore case.
    pub(in crate::eval) fn case_match(
        &mut self,
        v: &Value,
        m: &Value,
        scope: ScopeId,
        _span: Span,
    ) -> R<bool> {
        Ok(match m {
            Value::Regex(re) => match v {
                Value::Str(s) => self.regex_match(re, &s.clone(), scope),
                _ => false,
            },
            Value::Type(t) => match v {
                Value::Type(vt) => t.normalized_eq(vt) || t.is_instance(v),
                _ => t.is_instance(v),
            },
            Value::Array(ms) => match v {
                Value::Array(vs) => {
                    if ms.len() != vs.len() {
                        return Ok(false);
                    }
                    for (a, b) in vs.iter().zip(ms) {
                        if !self.case_match(a, b, scope, _span)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            // Every key of the pattern must match the value's entry (undef when absent);
            // keys the pattern does not name are free.
            Value::Hash(ms) => match v {
                Value::Hash(vs) => {
                    for (k, pat) in ms.iter() {
                        let entry = vs.get(k).unwrap_or(&Value::Undef);
                        if !self.case_match(entry, pat, scope, _span)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            // `default` inside an array or hash pattern matches anything.
            Value::Default => true,
            _ => puppet_eq(v, m),
        })
    }
}
