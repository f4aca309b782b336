//! Unknown type names. A capitalised name (`Foo::Bar`) that is neither a data type (built in or
//! an alias) nor a resource type (built in, a defined type, a module's Ruby type or a type
//! from a schema) is a *type reference* in Puppet; evaluating one fails with
//! `Resource type not found: Foo::Bar` at the name (`eval_QualifiedReference`), wherever it
//! is evaluated: a parameter type, an expression, a reference `Foo['x']`, a resource default.
//! Only type alias bodies (read by Puppet's type parser, not evaluated) keep the reference.
//! Collectors check the type themselves (`Resource type foo doesn't exist`).

use super::PType;
use crate::ast::{Expr, ExprKind, Parameter};
use crate::catalog::TrimColons;
use crate::eval::compiler::{Compiler, Flow, R};
use crate::span::Span;

impl Compiler<'_> {
    /// The type of a name that is no data type: the resource type `key`, or Puppet's error.
    pub(in crate::eval) fn resource_type_reference(
        &mut self,
        written: &str,
        key: String,
        span: Span,
    ) -> R<PType> {
        if self.type_alias_depth > 0 || self.is_resource_type(&key) {
            return Ok(PType::Resource(Some(key), None));
        }
        self.hint_type(written, span);
        Err(Flow::Err(self.issue(
            format!("Resource type not found: {}", written.trim_colons()),
            span,
        )))
    }

    /// Whether `name` names a resource type (Puppet's `Runtime3TypeLoader`: a `Puppet::Type`,
    /// which includes the modules' Ruby types, or a defined type; classes are not types).
    pub(in crate::eval) fn is_resource_type(&mut self, name: &str) -> bool {
        let lower = name.trim_colons().to_lowercase();
        if self.known_resource_types.contains(&lower) {
            return true;
        }
        let found = lower != "class"
            && (self.resolve_resource_type(&lower).is_some()
                || self.loader.type_schema(&lower).is_some());
        if found {
            self.known_resource_types.insert(lower);
        }
        found
    }

    /// Evaluates the parameter types of the classes and defined types written in the main
    /// manifest, as Puppet does when it loads them (before evaluating anything), so that an
    /// unknown type name fails even in a class that is never declared.
    pub(in crate::eval) fn check_main_definitions(&mut self, body: &Expr) -> R<()> {
        match &body.kind {
            ExprKind::Block(items) => {
                for item in items {
                    self.check_main_definitions(item)?;
                }
            }
            ExprKind::Class(def) => {
                self.check_param_types(&def.params)?;
                if let Some(b) = &def.body {
                    self.check_main_definitions(b)?;
                }
            }
            ExprKind::Define(def) => self.check_param_types(&def.params)?,
            _ => {}
        }
        Ok(())
    }

    /// Remembers the parameter types of the classes and defined types of a module file just
    /// loaded: Puppet evaluates them when it loads the file, so an unknown name fails even in
    /// a definition of that file that is never declared. They are evaluated (once) before the
    /// next parameters are bound.
    pub(in crate::eval) fn queue_param_type_checks(&mut self, body: &Expr) {
        match &body.kind {
            ExprKind::Block(items) => {
                for item in items {
                    self.queue_param_type_checks(item);
                }
            }
            ExprKind::Class(def) => {
                self.queued_param_types
                    .extend(def.params.iter().filter_map(|p| p.type_expr.clone()));
                if let Some(b) = &def.body {
                    self.queue_param_type_checks(b);
                }
            }
            ExprKind::Define(def) => self
                .queued_param_types
                .extend(def.params.iter().filter_map(|p| p.type_expr.clone())),
            _ => {}
        }
    }

    pub(in crate::eval) fn check_queued_param_types(&mut self) -> R<()> {
        if self.queued_param_types.is_empty() {
            return Ok(());
        }
        let top = self.top;
        for te in std::mem::take(&mut self.queued_param_types) {
            self.eval(&te, top)?;
        }
        Ok(())
    }

    fn check_param_types(&mut self, params: &[Parameter]) -> R<()> {
        let top = self.top;
        for p in params {
            if let Some(te) = &p.type_expr {
                self.eval(te, top)?;
            }
        }
        Ok(())
    }

    /// `Foo <| |>` / `Foo <<| |>>`: the collected type must exist.
    pub(in crate::eval) fn check_collector_type(
        &mut self,
        type_name: &str,
        exported: bool,
        span: Span,
    ) -> R<()> {
        let lower = type_name.trim_colons().to_lowercase();
        let detail = if lower == "class" {
            "Classes cannot be collected".to_string()
        } else if !self.is_resource_type(&lower) {
            format!("Resource type {lower} doesn't exist")
        } else {
            return Ok(());
        };
        Err(self.query_error(exported, &detail, span))
    }

    /// A collector's failure as Puppet words it (`Error while evaluating a Virtual Query,
    /// DETAIL`), at the collector.
    pub(in crate::eval) fn query_error(&self, exported: bool, detail: &str, span: Span) -> Flow {
        let what = if exported {
            "an Exported Query"
        } else {
            "a Virtual Query"
        };
        let loc = self.line_col_location(Some(span));
        Flow::Err(self.plain(
            crate::eval::compiler::join_loc(
                format!("Evaluation Error: Error while evaluating {what}, {detail}"),
                &loc,
            ),
            Some(span),
        ))
    }
}
