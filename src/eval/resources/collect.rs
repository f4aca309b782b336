//! Collectors (`Type <| query |>`) and `realize`: they find virtual or declared resources,
//! realize them and apply their overrides, each time the generators loop runs.

use super::catalog_ops::{flatten_values, AttrValue, Override};
use crate::ast::{BinaryOp, Expr, ExprKind};
use crate::eval::compiler::scope::ScopeId;
use crate::eval::compiler::{Compiler, EvalError, Flow, Operand, R};
use crate::eval::values::value::{puppet_eq, Value};
use crate::span::Span;

/// An evaluated query.
#[derive(Clone, Debug)]
pub enum Query {
    All,
    Eq(String, Value),
    Ne(String, Value),
    And(Box<Query>, Box<Query>),
    Or(Box<Query>, Box<Query>),
}

impl Query {
    /// Whether a part asks for `tag == <number>`, which Puppet refuses (a tag is a word).
    fn compares_tag_to_number(&self) -> bool {
        match self {
            Query::All | Query::Ne(..) => false,
            Query::Eq(attr, v) => attr == "tag" && matches!(v, Value::Int(_) | Value::Float(_)),
            Query::And(a, b) | Query::Or(a, b) => {
                a.compares_tag_to_number() || b.compares_tag_to_number()
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Collector {
    pub type_name: String,
    pub query: Query,
    pub overrides: Vec<AttrValue>,
    pub source: std::sync::Arc<str>,
    pub span: Span,
    pub collected: Vec<usize>,
    /// The same, for membership tests.
    pub collected_set: std::collections::HashSet<usize>,
    /// What stood left of this collector in a chain, used when it collects nothing.
    pub empty_alternative: Option<Vec<Operand>>,
    /// `realize`: the references still to find.
    pub unresolved: Vec<(String, String)>,
    pub fixed: bool,
    /// `<<| |>>` with storeconfigs: collects exported resources only, also from the store.
    pub exported: bool,
    /// The scope the collector was written in (collected foreign resources land there).
    pub scope: ScopeId,
    /// Whether the store was already searched.
    pub store_done: bool,
}

impl Compiler<'_> {
    /// Builds a collector from `Type <| query |> { ops }` and registers it.
    pub(in crate::eval) fn make_collector(
        &mut self,
        type_expr: &Expr,
        query: &crate::ast::Query,
        ops: &[crate::ast::AttributeOp],
        scope: ScopeId,
        span: Span,
    ) -> R<Option<usize>> {
        let type_name = match &type_expr.kind {
            ExprKind::QualifiedReference(n) | ExprKind::QualifiedName(n) => {
                crate::catalog::capitalize_type(n)
            }
            _ => match self.eval(type_expr, scope)? {
                Value::Type(t) => match *t {
                    crate::eval::types::PType::Resource(Some(n), None) => n,
                    _ => {
                        return Err(Flow::Err(
                            self.runtime("Illegal collector type", type_expr.span),
                        ))
                    }
                },
                _ => {
                    return Err(Flow::Err(
                        self.runtime("Illegal collector type", type_expr.span),
                    ))
                }
            },
        };
        let storeconfigs = self.storeconfigs();
        if query.exported && !storeconfigs {
            self.warn_at(
                "You cannot collect exported resources without storeconfigs being set; the collection will be ignored",
                span,
            );
        }
        self.check_collector_type(&type_name, query.exported, span)?;
        let q = match &query.expr {
            Some(e) => self.eval_query(e, scope)?,
            None => Query::All,
        };
        if q.compares_tag_to_number() {
            let detail = "Cannot transform a number to a tag";
            return Err(self.query_error(query.exported, detail, span));
        }
        if query.exported && !storeconfigs {
            return Ok(None);
        }
        let overrides = self.eval_attribute_ops(ops, scope)?;
        let source = self.scopes[scope].source.clone();
        self.collectors.push(Collector {
            type_name,
            query: q,
            overrides,
            source,
            span,
            collected: vec![],
            collected_set: Default::default(),
            empty_alternative: None,
            unresolved: vec![],
            fixed: false,
            exported: query.exported,
            scope,
            store_done: false,
        });
        Ok(Some(self.collectors.len() - 1))
    }

    fn eval_query(&mut self, e: &Expr, scope: ScopeId) -> R<Query> {
        match &e.kind {
            ExprKind::Paren(inner) => self.eval_query(inner, scope),
            ExprKind::Binary { op, left, right } => match op {
                BinaryOp::And => Ok(Query::And(
                    Box::new(self.eval_query(left, scope)?),
                    Box::new(self.eval_query(right, scope)?),
                )),
                BinaryOp::Or => Ok(Query::Or(
                    Box::new(self.eval_query(left, scope)?),
                    Box::new(self.eval_query(right, scope)?),
                )),
                BinaryOp::Eq | BinaryOp::Ne => {
                    let attr = match &left.kind {
                        ExprKind::QualifiedName(n) | ExprKind::Str(n) => n.clone(),
                        _ => self.eval(left, scope)?.to_display(),
                    };
                    let v = match &right.kind {
                        ExprKind::QualifiedName(n) => Value::str(n.clone()),
                        _ => self.eval(right, scope)?,
                    };
                    Ok(if *op == BinaryOp::Eq {
                        Query::Eq(attr, v)
                    } else {
                        Query::Ne(attr, v)
                    })
                }
                other => {
                    let loc = self.line_col_location(Some(e.span));
                    Err(Flow::Err(self.plain(
                        format!(
                            "Could not parse for environment production: Illegal query expression. A '{}' expression cannot be used in a query {loc}",
                            other.as_str()
                        ),
                        Some(e.span),
                    )))
                }
            },
            _ => {
                let loc = self.line_col_location(Some(e.span));
                Err(Flow::Err(self.plain(
                    format!("Could not parse for environment production: Illegal query expression {loc}"),
                    Some(e.span),
                )))
            }
        }
    }

    /// `realize(refs)`: a collector of a fixed set of references.
    pub(in crate::eval) fn add_realize(
        &mut self,
        refs: Vec<(String, String)>,
        scope: ScopeId,
        span: Span,
    ) {
        let source = self.scopes[scope].source.clone();
        self.collectors.push(Collector {
            type_name: String::new(),
            query: Query::All,
            overrides: vec![],
            source,
            span,
            collected: vec![],
            collected_set: Default::default(),
            empty_alternative: None,
            unresolved: refs,
            fixed: true,
            exported: false,
            scope,
            store_done: false,
        });
    }

    /// One pass over every collector; true when something new was collected.
    pub(in crate::eval) fn evaluate_collections(&mut self) -> Result<bool, EvalError> {
        let mut changed = false;
        for ci in 0..self.collectors.len() {
            if self.collectors[ci].fixed {
                let pending = std::mem::take(&mut self.collectors[ci].unresolved);
                let mut still = vec![];
                for (t, title) in pending {
                    match self.find_resource(&t, &title) {
                        Some(i) => {
                            if self.resources[i].virtual_ && !self.resources[i].dropped {
                                self.resources[i].virtual_ = false;
                                changed = true;
                            }
                            self.collectors[ci].collected.push(i);
                        }
                        None => still.push((t, title)),
                    }
                }
                self.collectors[ci].unresolved = still;
                continue;
            }
            let type_name = self.collectors[ci].type_name.clone();
            let query = self.collectors[ci].query.clone();
            let exported = self.collectors[ci].exported;
            let of_type = self
                .by_type
                .get(&type_name)
                .map_or(&[][..], |v| v.as_slice());
            let mut matches: Vec<usize> = of_type
                .iter()
                .copied()
                .filter(|&i| {
                    let r = &self.resources[i];
                    !r.dropped
                        && (!exported || r.exported)
                        && !self.collectors[ci].collected_set.contains(&i)
                        && self.query_matches(&query, i)
                })
                .collect();
            if exported && !self.collectors[ci].store_done {
                self.collectors[ci].store_done = true;
                matches.extend(self.collect_from_store(ci)?);
            }
            for i in matches {
                changed = true;
                if self.resources[i].virtual_ {
                    self.recorder.realized(ci, i);
                }
                self.resources[i].virtual_ = false;
                self.collectors[ci].collected.push(i);
                self.collectors[ci].collected_set.insert(i);
                if !self.collectors[ci].overrides.is_empty() {
                    let c = &self.collectors[ci];
                    let o = Override {
                        type_name: self.resources[i].type_name.clone(),
                        title: self.resources[i].title.clone(),
                        params: c.overrides.clone(),
                        source: c.source.clone(),
                        span: c.span,
                        forced: true,
                    };
                    self.merge_override(i, &o)?;
                }
            }
        }
        Ok(changed)
    }

    fn query_matches(&self, q: &Query, idx: usize) -> bool {
        match q {
            Query::All => true,
            Query::And(a, b) => self.query_matches(a, idx) && self.query_matches(b, idx),
            Query::Or(a, b) => self.query_matches(a, idx) || self.query_matches(b, idx),
            Query::Eq(attr, v) => {
                if attr == "tag" {
                    if let Value::Str(t) = v {
                        // The common case, without the lists below.
                        return self.resource_tagged(idx, &crate::eval::compiler::lowercase(t));
                    }
                    let wanted: Vec<String> = flatten_values(v)
                        .iter()
                        .map(|t| t.to_display().to_lowercase())
                        .collect();
                    return wanted.iter().any(|t| self.resource_tagged(idx, t));
                }
                if let Some(eq) = self.title_eq(idx, attr, v) {
                    return eq;
                }
                match &*self.attr_value(idx, attr) {
                    Value::Array(items) => items.iter().any(|x| puppet_eq(x, v)),
                    other => puppet_eq(other, v),
                }
            }
            Query::Ne(attr, v) => match self.title_eq(idx, attr, v) {
                Some(eq) => !eq,
                None => !puppet_eq(&self.attr_value(idx, attr), v),
            },
        }
    }

    /// `title == 'x'` (or `name`) against a title that is not a parameter, as
    /// [`Self::attr_value`] and `puppet_eq` compare it but without copying the title; `None`
    /// for any other comparison.
    fn title_eq(&self, idx: usize, attr: &str, v: &Value) -> Option<bool> {
        let r = &self.resources[idx];
        match v {
            // (`name` is a parameter like any other: a query on it does not see the title.)
            Value::Str(s) if attr == "title" && !r.params.contains_key(attr) => {
                Some(crate::eval::values::value::str_eq_ignore_case(&r.title, s))
            }
            _ => None,
        }
    }

    /// A resource's attribute for a query, borrowed when it is a parameter.
    fn attr_value(&self, idx: usize, attr: &str) -> std::borrow::Cow<'_, Value> {
        let r = &self.resources[idx];
        match r.params.get(attr) {
            Some(v) => std::borrow::Cow::Borrowed(v),
            None if attr == "title" => std::borrow::Cow::Owned(Value::str(r.title.clone())),
            None => std::borrow::Cow::Owned(Value::Undef),
        }
    }

    /// Tagged directly or through the resource of its scope (tags it will inherit).
    pub(in crate::eval) fn resource_tagged(&self, idx: usize, tag: &str) -> bool {
        let mut cur = idx;
        for _ in 0..1000 {
            if self.resources[cur].tags.contains(tag) {
                return true;
            }
            let next = self.scope_resource(self.resources[cur].scope);
            if next == cur {
                return false;
            }
            cur = next;
        }
        false
    }
}
