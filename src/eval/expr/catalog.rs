//! The catalog expressions: resource declarations (with their bodies, defaults and
//! `*` attributes) and relationships (chaining arrows).

use super::*;

impl Compiler<'_> {
    /// Evaluates `a -> b` (recording the relationship) and returns the right side's operands
    /// (or the left's when the right is empty); none unless `want` (a statement's value is
    /// not used).
    pub(super) fn eval_relationship(
        &mut self,
        e: &Expr,
        scope: ScopeId,
        want: bool,
    ) -> R<Vec<Operand>> {
        let ExprKind::Relationship { op, left, right } = &e.kind else {
            return self.rel_operands(e, scope, None);
        };
        let l = self.rel_operand_expr(left, scope, *op)?;
        let r = self.rel_operand_expr(right, scope, *op)?;
        let (ls, rs) = (operand_span(left), operand_span(right));
        // The operands the chain goes on with: the right ones, unless there are none; the
        // left ones are kept as the empty alternative of a collector on the right.
        let collector_right = match r.as_slice() {
            [Operand::Collector(ci)] => Some(*ci),
            _ => None,
        };
        let (lv, rv, result) = if r.is_empty() {
            (l.clone(), r, l)
        } else if let Some(ci) = collector_right {
            let rv = r.clone();
            self.collectors[ci].empty_alternative = Some(l.clone());
            (l, rv, r)
        } else if want {
            let rv = r.clone();
            (l, rv, r)
        } else {
            (l, r, vec![])
        };
        let ((source, source_span), (target, target_span)) = match op {
            RelOp::Before | RelOp::Notify => ((lv, ls), (rv, rs)),
            RelOp::Require | RelOp::Subscribe => ((rv, rs), (lv, ls)),
        };
        self.relationships.push(Relationship {
            source,
            target,
            notify: matches!(op, RelOp::Notify | RelOp::Subscribe),
            source_span,
            target_span,
        });
        Ok(result)
    }

    pub(super) fn rel_operand_expr(
        &mut self,
        e: &Expr,
        scope: ScopeId,
        op: RelOp,
    ) -> R<Vec<Operand>> {
        match &e.kind {
            ExprKind::Relationship { .. } => {
                let r = self.eval_relationship(e, scope, true);
                match r {
                    Err(Flow::Err(err)) if !err.formatted => Err(Flow::Err(
                        self.finalize_error(err, "Relationship Statement"),
                    )),
                    other => other,
                }
            }
            ExprKind::Paren(inner) => self.rel_operand_expr(inner, scope, op),
            ExprKind::Collect(c) => {
                match self.make_collector(&c.type_expr, &c.query, &c.ops, scope, e.span)? {
                    Some(ci) => Ok(vec![Operand::Collector(ci)]),
                    None => Ok(vec![]),
                }
            }
            _ => self.rel_operands(e, scope, Some(op)),
        }
    }

    /// The references an operand of `op` evaluates to. A string must be a reference; one
    /// that is not even a type name fails as Puppet's type parser does.
    pub(super) fn rel_operands(
        &mut self,
        e: &Expr,
        scope: ScopeId,
        op: Option<RelOp>,
    ) -> R<Vec<Operand>> {
        let value = match self.eval(e, scope)? {
            // The common operand, one reference: no list to flatten.
            Value::Type(t)
                if matches!(
                    *t,
                    PType::Resource(Some(_), Some(_)) | PType::Class(Some(_))
                ) =>
            {
                return Ok(vec![Operand::Ref(*t)])
            }
            other => other,
        };
        let mut items = vec![];
        flatten_into(value, &mut items);
        let mut out: Vec<Operand> = vec![];
        for item in items {
            let t = match item {
                Value::Undef => {
                    return Err(Flow::Err(self.issue(
                        "Illegal relationship operand, can not form a relationship with an Undef Value. A Catalog type is required.",
                        e.span,
                    )))
                }
                Value::Type(t) => match *t {
                    PType::Resource(Some(_), Some(_)) | PType::Class(Some(_)) => *t,
                    // A type without a title is a catalog type: the relationship fails when
                    // it is made (`No title provided`).
                    PType::Resource(Some(name), None) => PType::Resource(Some(name), Some(String::new())),
                    PType::Class(None) => {
                        let op = op.map_or("->", RelOp::as_str);
                        return Err(self.untitled_class(op, e.span));
                    }
                    other => {
                        return Err(Flow::Err(self.issue(
                            format!("Illegal relationship operand, can not form a relationship with {}. A Catalog type is required.", a_an(&other.to_string())),
                            e.span,
                        )))
                    }
                },
                Value::Str(s) => match crate::catalog::ResourceRef::parse(&s)
                    .filter(|_| s.starts_with(|c: char| c.is_ascii_uppercase()))
                {
                    Some(r) if r.type_name == "Class" => PType::Class(Some(r.title.to_lowercase())),
                    Some(r) => PType::Resource(Some(r.type_name), Some(r.title)),
                    None => {
                        let msg = match op {
                            Some(op) if !s.starts_with(|c: char| c.is_ascii_uppercase()) => format!(
                                "Error while evaluating a '{}' expression, The expression <{s}> is not a valid type specification.",
                                op.as_str()
                            ),
                            _ => "Illegal relationship operand, can not form a relationship with a String. A Catalog type is required.".to_string(),
                        };
                        return Err(Flow::Err(self.issue(msg, e.span)));
                    }
                },
                other => {
                    return Err(Flow::Err(self.issue(
                        format!(
                            "Illegal relationship operand, can not form a relationship with {}. A Catalog type is required.",
                            a_an(&other.type_name())
                        ),
                        e.span,
                    )))
                }
            };
            if !out.iter().any(|o| matches!(o, Operand::Ref(x) if *x == t)) {
                out.push(Operand::Ref(t));
            }
        }
        // Relationships keep their operands to the end of the compile.
        out.shrink_to_fit();
        Ok(out)
    }

    /// A resource expression; its value (unless `want` is false: undef) is the references
    /// to the declared resources.
    pub(super) fn eval_resource(
        &mut self,
        r: &ResourceExpr,
        scope: ScopeId,
        span: Span,
        want: bool,
    ) -> R<Value> {
        let type_name = match &r.type_name.kind {
            ExprKind::QualifiedName(n) | ExprKind::QualifiedReference(n) => n.trim_colons().to_lowercase(),
            _ => match self.eval(&r.type_name, scope)? {
                Value::Type(t) => match *t {
                    PType::Resource(Some(n), None) => n.to_lowercase(),
                    PType::Class(None) => "class".into(),
                    other => {
                        return Err(Flow::Err(self.runtime(
                            format!("Illegal Resource Type expression, expected result to be a type name, or reference to a type, got {other}"),
                            r.type_name.span,
                        )))
                    }
                },
                Value::Str(s) => s.to_lowercase(),
                other => {
                    return Err(Flow::Err(self.runtime(
                        format!("Illegal Resource Type expression, got {}", other.type_name()),
                        r.type_name.span,
                    )))
                }
            },
        };
        let exported = r.form == ResourceForm::Exported;
        let virtual_ = r.form == ResourceForm::Virtual;
        if exported && !self.storeconfigs() {
            self.warn_at(
                "You cannot collect exported resources without storeconfigs being set; the export is ignored",
                span,
            );
        }
        // Titles first, then attribute operations, as Puppet does.
        let mut bodies: Vec<(
            Vec<String>,
            Vec<crate::eval::resources::catalog_ops::AttrValue>,
        )> = Vec::with_capacity(r.bodies.len());
        let mut default_attrs: Vec<crate::eval::resources::catalog_ops::AttrValue> = vec![];
        let mut default_seen = false;
        for body in &r.bodies {
            let tv = self.eval(&body.title, scope)?;
            if tv.is_undef() {
                return Err(Flow::Err(self.issue(
                    "Missing title. The title expression resulted in undef",
                    body.title.span,
                )));
            }
            let items = match tv {
                Value::Array(a) => a
                    .into_iter()
                    .flat_map(|v| {
                        flatten_values(&v).into_iter().chain(if v.is_undef() {
                            Some(Value::Undef)
                        } else {
                            None
                        })
                    })
                    .collect::<Vec<_>>(),
                other => vec![other],
            };
            let mut titles: Vec<String> = Vec::with_capacity(items.len());
            let mut is_default = false;
            for (i, t) in items.iter().enumerate() {
                match t {
                    Value::Str(s) if s.is_empty() => {
                        return Err(Flow::Err(self.issue(
                            format!("Empty string title at {i}. Title strings must have a length greater than zero."),
                            body.title.span,
                        )))
                    }
                    Value::Str(s) => {
                        let seen = |titles: &[String]| titles.iter().any(|t| t == s);
                        if seen(&titles) || bodies.iter().any(|(titles, _)| seen(titles)) {
                            return Err(Flow::Err(self.issue(
                                format!("The title '{s}' has already been used in this resource expression"),
                                span,
                            )));
                        }
                        titles.push(s.clone());
                    }
                    Value::Default if default_seen => {
                        return Err(Flow::Err(self.issue(
                            "The title 'default' has already been used in this resource expression",
                            span,
                        )));
                    }
                    Value::Default => {
                        default_seen = true;
                        is_default = true
                    }
                    Value::Undef => {
                        return Err(Flow::Err(self.issue(
                            format!("Missing title at index {i}. The title expression resulted in an undef title"),
                            body.title.span,
                        )))
                    }
                    other => {
                        return Err(Flow::Err(self.issue(
                            format!("Illegal title type at index {i}. Expected String, got {}", types::infer_generic(other)),
                            body.title.span,
                        )))
                    }
                }
            }
            let attrs = self.eval_attribute_ops(&body.ops, scope)?;
            if is_default {
                default_attrs = attrs.clone();
            }
            bodies.push((titles, attrs));
        }
        let mut out = if want {
            Vec::with_capacity(bodies.iter().map(|(titles, _)| titles.len()).sum())
        } else {
            Vec::new()
        };
        if type_name == "class" {
            for (titles, attrs) in bodies {
                let attrs = merge_attrs(&default_attrs, attrs);
                for t in titles {
                    let idx = self.declare_class(&t, &attrs, scope, span)?;
                    if !want {
                        continue;
                    }
                    // Puppet gives the declared class as a resource reference (`Class['Foo']`).
                    out.push(Value::Type(Box::new(PType::Resource(
                        Some("Class".into()),
                        Some(capitalize_type(&self.resources[idx].title)),
                    ))));
                }
            }
            return Ok(Value::Array(out));
        }
        let Some(kind) = self.resolve_resource_type(&type_name) else {
            self.hint_type(&type_name, span);
            return Err(Flow::Err(
                self.runtime(format!("Unknown resource type: '{type_name}'"), span),
            ));
        };
        if matches!(kind, TypeKind::Class) {
            return Ok(Value::Array(out));
        }
        for (titles, attrs) in bodies {
            let attrs = merge_attrs(&default_attrs, attrs);
            let n = titles.len();
            let mut attrs = Some(attrs);
            for (i, t) in titles.into_iter().enumerate() {
                // The last title takes the attributes, the others a copy.
                let these = if i + 1 == n {
                    attrs.take().unwrap_or_default()
                } else {
                    attrs.clone().unwrap_or_default()
                };
                let idx = self.declare_resource(
                    &type_name, &kind, &t, these, scope, span, virtual_, exported,
                )?;
                if !want {
                    continue;
                }
                let r = &self.resources[idx];
                out.push(Value::Type(Box::new(PType::Resource(
                    Some(r.type_name.clone()),
                    Some(r.title.clone()),
                ))));
            }
        }
        Ok(if want {
            Value::Array(out)
        } else {
            Value::Undef
        })
    }
}
