//! Rudder's directive priority at compile time (seed 002, issue 7).
//!
//! `priority => 0..10` (0 the highest, 5 by default) is an Ordo metaparameter on resources
//! and on resource-like class declarations. A type that declares its own `priority`
//! attribute (`yumrepo`, a define or class with a `$priority` parameter, any Ruby type) keeps
//! it as its own: no validation, no conflict resolution.
//!
//! *Unique techniques* are classes and plain resources: when several declarations of the
//! same `Class[x]` or `Type[title]` meet and at least one carries a `priority`, the best one
//! is kept (smallest priority, then enclosing class name, then title, then the first
//! declared) and the others are dropped with a warning, instead of Puppet's `Duplicate
//! declaration`. Without any `priority` Puppet's error stands.
//!
//! The catalog ends up as if only the winner had been declared:
//! - a resource keeps its slot (so references and relationships to it stay valid) but takes
//!   the winner's parameters, tags, location, declaring scope and container;
//! - a resource-like class declaration with a `priority` is not evaluated at once: it waits
//!   until the generators phase (or until something needs the class: `include`, a parent
//!   class), so that every competing declaration is known before the body runs.
//!
//! *Multi-instance techniques* are defined types: nothing to resolve here; the `priority`
//! stays in the instance's catalog parameters and the runtime sorts the instances
//! (`graph::placement`).
//!
//! Hooks: `declare_resource` calls [`Compiler::priority_on_declare`], `declare_class`
//! [`Compiler::priority_declare_class`], `include_class` and the generators loop
//! [`Compiler::settle_priority_class`] / [`Compiler::settle_priority_classes`].

use super::catalog_ops::{AttrValue, TypeKind};
use crate::ast::ClassDef;
use crate::eval::compiler::scope::ScopeId;
use crate::eval::compiler::{Compiler, EvalError, Flow, R};
use crate::eval::values::value::Value;
use crate::span::Span;
use indexmap::IndexMap;
use std::cmp::Ordering;
use std::collections::HashMap;

/// The metaparameter's name.
pub const PRIORITY: &str = "priority";
/// Rudder's default priority.
pub const DEFAULT_PRIORITY: u8 = 5;

/// One declaration taking part in a priority conflict.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    /// `Notify[x]`, `Class[Ntp]`.
    pub reference: String,
    pub priority: u8,
    /// Whether the declaration wrote `priority` itself.
    pub explicit: bool,
    /// The enclosing class (Rudder's rule): `main` at top level.
    pub class: String,
    pub title: String,
    /// `file:line`.
    pub location: String,
    /// Declaration order, the last tie break.
    pub seq: usize,
}

impl Declaration {
    fn key(&self) -> (u8, &str, &str, usize) {
        (self.priority, &self.class, &self.title, self.seq)
    }

    /// Whether `self` beats `other`.
    pub fn beats(&self, other: &Declaration) -> bool {
        self.key() < other.key()
    }

    /// `priority 1, class r1`.
    pub fn terms(&self) -> String {
        let p = if self.explicit {
            format!("priority {}", self.priority)
        } else {
            format!("default priority {}", self.priority)
        };
        format!("{p}, class {}", self.class)
    }

    /// `file:line (priority 1, class r1)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.location, self.terms())
    }
}

/// Why `winner` beats `loser`, in words.
pub fn reason(winner: &Declaration, loser: &Declaration) -> &'static str {
    match (
        winner.priority.cmp(&loser.priority),
        winner.class.cmp(&loser.class),
        winner.title.cmp(&loser.title),
    ) {
        (Ordering::Less, _, _) => "higher priority",
        (_, Ordering::Less, _) => "same priority, class name first",
        (_, _, Ordering::Less) => "same priority and class, title first",
        _ => "same priority, class and title, declared first",
    }
}

/// A conflict resolved by priority: the kept declaration and the dropped ones.
#[derive(Clone, Debug, PartialEq)]
pub struct PriorityConflict {
    pub reference: String,
    pub winner: Declaration,
    pub losers: Vec<Declaration>,
}

/// A resource-like class declaration waiting for its competitors.
#[derive(Clone)]
struct ClassCandidate {
    decl: Declaration,
    def: std::sync::Arc<ClassDef>,
    params: Vec<AttrValue>,
    scope: ScopeId,
    span: Span,
}

/// The compiler's priority bookkeeping.
#[derive(Default)]
pub struct PriorityState {
    pending: IndexMap<String, Vec<ClassCandidate>>,
    /// Classes evaluated from a priority-bearing declaration: the winner.
    settled: HashMap<String, Declaration>,
    /// Stored resources that won a conflict: the declaration they now stand for.
    holders: HashMap<usize, Declaration>,
    pub conflicts: Vec<PriorityConflict>,
    seq: usize,
}

impl PriorityState {
    fn next_seq(&mut self) -> usize {
        self.seq += 1;
        self.seq
    }

    fn record(&mut self, winner: &Declaration, loser: &Declaration) {
        match self
            .conflicts
            .iter_mut()
            .find(|c| c.reference == winner.reference)
        {
            Some(c) => {
                if c.winner != *winner {
                    let old = std::mem::replace(&mut c.winner, winner.clone());
                    c.losers.retain(|l| l != winner);
                    c.losers.push(old);
                }
                if !c.losers.contains(loser) && c.winner != *loser {
                    c.losers.push(loser.clone());
                }
            }
            None => self.conflicts.push(PriorityConflict {
                reference: winner.reference.clone(),
                winner: winner.clone(),
                losers: vec![loser.clone()],
            }),
        }
    }
}

/// Whether `priority` on this kind of resource is Ordo's metaparameter (not the type's own).
pub(in crate::eval) fn is_ordo_priority(kind: &TypeKind) -> bool {
    match kind {
        TypeKind::Builtin(b) => !crate::eval::types::builtin_types::has_attribute(b, PRIORITY),
        TypeKind::Define(d) => !d.params.iter().any(|p| p.name == PRIORITY),
        TypeKind::Class => true,
        TypeKind::Ruby => false,
    }
}

fn class_has_own_priority(def: &ClassDef) -> bool {
    def.params.iter().any(|p| p.name == PRIORITY)
}

/// The value of a `priority` metaparameter: an integer from 0 to 10.
fn priority_of_value(v: &Value) -> Option<u8> {
    match v {
        Value::Int(n) if (0..=10).contains(n) => Some(*n as u8),
        _ => None,
    }
}

impl Compiler<'_> {
    fn invalid_priority(&self, v: &Value, what: &str, span: Span) -> Flow {
        Flow::Err(self.runtime(
            format!(
                "{what}: invalid value {} for priority: expected an Integer from 0 (highest) to 10",
                v.to_display()
            ),
            span,
        ))
    }

    /// The enclosing class (or node) of a scope, through defined-type instances.
    fn enclosing_class(&self, scope: ScopeId) -> String {
        let mut r = self.scope_resource(scope);
        for _ in 0..self.resources.len() {
            let res = &self.resources[r];
            if res.type_name == "Class" || res.type_name == "Node" {
                return res.title.to_lowercase();
            }
            let up = self.scope_resource(res.scope);
            if up == r {
                break;
            }
            r = up;
        }
        "main".into()
    }

    fn short_location(&self, file: Option<crate::span::FileId>, line: Option<u32>) -> String {
        let name = file
            .and_then(|f| self.sources.get(f))
            .map(|f| f.name.clone())
            .unwrap_or_default();
        match line {
            Some(l) => format!("{name}:{l}"),
            None => name,
        }
    }

    /// The declaration a stored resource stands for (the winner of earlier conflicts).
    fn resource_declaration(&self, idx: usize) -> Declaration {
        if let Some(d) = self.priority.holders.get(&idx) {
            return d.clone();
        }
        let r = &self.resources[idx];
        let explicit = r.params.get(PRIORITY).and_then(priority_of_value);
        let (file, line, scope) = (r.file, r.line.or(self.span_line(r.span)), r.scope);
        let reference = r.reference();
        let title = r.title.clone();
        Declaration {
            reference,
            priority: explicit.unwrap_or(DEFAULT_PRIORITY),
            explicit: explicit.is_some(),
            class: self.enclosing_class(scope),
            title,
            location: self.short_location(file, line),
            seq: idx,
        }
    }

    fn warn_dropped(&mut self, winner: &Declaration, loser: &Declaration) {
        let msg = format!(
            "Duplicate declaration of {} resolved by priority: dropped the one at {}, kept the one at {}: {}",
            winner.reference,
            loser.describe(),
            winner.describe(),
            reason(winner, loser)
        );
        self.log(crate::eval::LogLevel::Warning, msg);
        self.priority.record(winner, loser);
    }

    /// Hook of `declare_resource`, before the resource enters the catalog index: validates
    /// `priority`, and resolves a duplicate declaration by priority. Returns the resource
    /// that stands for the declaration when it was resolved here.
    pub(in crate::eval) fn priority_on_declare(
        &mut self,
        idx: usize,
        kind: &TypeKind,
        params: &[AttrValue],
        span: Span,
    ) -> R<Option<usize>> {
        let r = &self.resources[idx];
        let existing = self.index.get(&self.resources, &r.type_name, &r.title);
        // No priority to check and no earlier declaration (most resources): nothing to do,
        // whatever the type.
        if existing.is_none() && !r.params.contains_key(PRIORITY) {
            return Ok(None);
        }
        if !is_ordo_priority(kind) {
            return Ok(None);
        }
        if let Some(v) = self.resources[idx].params.get(PRIORITY) {
            if priority_of_value(v).is_none() {
                let at = params
                    .iter()
                    .find(|a| a.name == PRIORITY)
                    .map_or(span, |a| a.span);
                let what = self.resources[idx].reference();
                return Err(self.invalid_priority(v, &what, at));
            }
        }
        let Some(existing) = existing else {
            return Ok(None);
        };
        let has = |c: &Self, i: usize| c.resources[i].params.contains_key(PRIORITY);
        if !has(self, idx) && !has(self, existing) {
            return Ok(None);
        }
        let old = self.resource_declaration(existing);
        let new = self.resource_declaration(idx);
        if old.beats(&new) {
            self.drop_resource(idx);
            self.warn_dropped(&old, &new);
            self.priority.holders.insert(existing, old);
            return Ok(Some(existing));
        }
        if self.resources[existing].is_define && self.resources[existing].evaluated {
            let msg = format!(
                "Duplicate declaration: {} is already declared at {} and was already evaluated; the one declared here ({}) cannot replace it",
                new.reference,
                old.describe(),
                new.terms()
            );
            return Err(Flow::Err(self.runtime(msg, span)));
        }
        self.replace_resource(existing, idx)?;
        self.warn_dropped(&new, &old);
        self.priority.holders.insert(existing, new);
        Ok(Some(existing))
    }

    fn drop_resource(&mut self, idx: usize) {
        let r = &mut self.resources[idx];
        r.dropped = true;
        r.virtual_ = true;
    }

    /// The stored resource `existing` takes everything the declaration `new` wrote.
    fn replace_resource(&mut self, existing: usize, new: usize) -> Result<(), EvalError> {
        let n = self.resources[new].clone();
        {
            let e = &mut self.resources[existing];
            e.params = n.params;
            e.setters = n.setters;
            e.tags = n.tags;
            e.file = n.file;
            e.line = n.line;
            e.span = n.span;
            e.scope = n.scope;
            e.source = n.source;
            e.virtual_ = n.virtual_;
            e.exported = n.exported;
            e.dropped = n.dropped;
        }
        self.drop_resource(new);
        // The container is the winner's.
        let container = self.scope_resource(n.scope);
        for edge in self.containment.iter_mut() {
            if edge.1 == existing && self.resources[edge.0].type_name != "Stage" {
                edge.0 = container;
            }
        }
        // Namevar and aliases are the winner's.
        self.aliases.remove_resource(existing);
        self.index.remove(&self.resources, existing);
        self.add_to_catalog(existing)
    }

    // ---- classes ---------------------------------------------------------------------------

    fn class_declaration(
        &mut self,
        name: &str,
        params: &[AttrValue],
        scope: ScopeId,
        span: Span,
    ) -> R<Declaration> {
        let reference = format!("Class[{}]", crate::catalog::capitalize_type(name));
        let explicit = match params.iter().find(|a| a.name == PRIORITY) {
            Some(a) if !a.value.is_undef() => match priority_of_value(&a.value) {
                Some(p) => Some(p),
                None => return Err(self.invalid_priority(&a.value, &reference, a.span)),
            },
            _ => None,
        };
        let seq = self.priority.next_seq();
        Ok(Declaration {
            reference,
            priority: explicit.unwrap_or(DEFAULT_PRIORITY),
            explicit: explicit.is_some(),
            class: self.enclosing_class(scope),
            title: name.to_string(),
            location: self.short_location(Some(span.file), self.span_line(span)),
            seq,
        })
    }

    /// Hook of `declare_class` (`class { 'x': }`). A declaration with `priority` waits for its
    /// competitors; one that meets an already evaluated class is resolved against it. Returns
    /// the class resource (a placeholder while pending) when the declaration was handled here.
    pub(in crate::eval) fn priority_declare_class(
        &mut self,
        name: &str,
        def: &std::sync::Arc<ClassDef>,
        params: &[AttrValue],
        scope: ScopeId,
        span: Span,
    ) -> R<Option<usize>> {
        if class_has_own_priority(def) {
            return Ok(None);
        }
        let decl = self.class_declaration(name, params, scope, span)?;
        if let Some(existing) = self.find_resource("Class", name) {
            let old = match self.priority.settled.get(name) {
                Some(d) => d.clone(),
                None if decl.explicit => {
                    // Evaluated by `include` (or a priority-less declaration): default priority.
                    let r = &self.resources[existing];
                    let (rscope, rspan) = (r.scope, r.span);
                    let mut d = self.class_declaration(name, &[], rscope, rspan)?;
                    d.seq = 0;
                    d
                }
                None => return Ok(None),
            };
            if old.beats(&decl) {
                self.warn_dropped(&old, &decl);
                return Ok(Some(existing));
            }
            let msg = format!(
                "Duplicate declaration: {} is already declared at {} and its body was already evaluated; the one declared here ({}) cannot replace it",
                decl.reference,
                old.describe(),
                decl.terms()
            );
            return Err(Flow::Err(self.runtime(msg, span)));
        }
        if !decl.explicit && !self.priority.pending.contains_key(name) {
            return Ok(None);
        }
        let candidate = ClassCandidate {
            decl,
            def: def.clone(),
            params: params.to_vec(),
            scope,
            span,
        };
        self.priority
            .pending
            .entry(name.to_string())
            .or_default()
            .push(candidate);
        let placeholder = self.new_res(
            "Class",
            name,
            scope,
            crate::catalog::ResourceKind::Class,
            span,
        );
        self.drop_resource(placeholder);
        Ok(Some(placeholder))
    }

    /// Evaluates a pending class now (something needs it), with its best declaration so far.
    pub(in crate::eval) fn settle_priority_class(&mut self, name: &str) -> R<Option<usize>> {
        let Some(mut candidates) = self.priority.pending.shift_remove(name) else {
            return Ok(None);
        };
        candidates.sort_by(|a, b| a.decl.key().cmp(&b.decl.key()));
        let best = candidates.remove(0);
        for loser in &candidates {
            self.warn_dropped(&best.decl, &loser.decl);
        }
        self.priority
            .settled
            .insert(name.to_string(), best.decl.clone());
        let idx = self.instantiate_class(best.def, best.scope, best.span, Some(&best.params))?;
        Ok(Some(idx))
    }

    /// Evaluates every pending class (from the generators loop). Returns whether any was.
    pub(in crate::eval) fn settle_priority_classes(&mut self) -> Result<bool, EvalError> {
        let mut any = false;
        while let Some(name) = self.priority.pending.keys().next().cloned() {
            any = true;
            match self.settle_priority_class(&name) {
                Ok(_) => {}
                Err(Flow::Err(e)) => return Err(self.finalize_error(e, "Resource Statement")),
                Err(Flow::Break(span)) => {
                    return Err(self.issue("break() from context where this is illegal", span))
                }
                Err(_) => {}
            }
        }
        Ok(any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(priority: u8, class: &str, title: &str, seq: usize) -> Declaration {
        Declaration {
            reference: "Notify[x]".into(),
            priority,
            explicit: true,
            class: class.into(),
            title: title.into(),
            location: "a.pp:1".into(),
            seq,
        }
    }

    #[test]
    fn smaller_priority_wins_then_class_then_title_then_first() {
        assert!(decl(1, "z", "z", 9).beats(&decl(2, "a", "a", 1)));
        assert!(decl(5, "a", "z", 9).beats(&decl(5, "b", "a", 1)));
        assert!(decl(5, "a", "a", 9).beats(&decl(5, "a", "b", 1)));
        assert!(decl(5, "a", "a", 1).beats(&decl(5, "a", "a", 2)));
        assert_eq!(
            reason(&decl(5, "a", "x", 2), &decl(5, "b", "x", 1)),
            "same priority, class name first"
        );
    }

    #[test]
    fn conflicts_accumulate_losers_and_follow_the_winner() {
        let mut s = PriorityState::default();
        let (a, b, c) = (
            decl(3, "r", "x", 1),
            decl(5, "r", "x", 2),
            decl(1, "r", "x", 3),
        );
        s.record(&a, &b);
        s.record(&c, &a);
        assert_eq!(s.conflicts.len(), 1);
        assert_eq!(s.conflicts[0].winner, c);
        assert_eq!(s.conflicts[0].losers, vec![b, a]);
    }

    #[test]
    fn priority_values_are_integers_from_0_to_10() {
        assert_eq!(priority_of_value(&Value::Int(0)), Some(0));
        assert_eq!(priority_of_value(&Value::Int(10)), Some(10));
        assert_eq!(priority_of_value(&Value::Int(11)), None);
        assert_eq!(priority_of_value(&Value::Int(-1)), None);
        assert_eq!(priority_of_value(&Value::str("3")), None);
    }
}
