//! Where things came from: the spans of declarations, relationship parameters, chaining arrows
//! and `require`/`contain` calls, kept so that `ordo check` can point at the source of every
//! edge. Also the warnings Puppet does not give (collectors in relationships), which only the
//! checker shows: `ordo compile` prints exactly Puppet's log.
//!
//! Recording is additive: the compiler calls `record_*` at the few places where it creates
//! these things; nothing here changes what is compiled.

use super::compiler::{Compiler, Operand};
use crate::catalog::{capitalize_type, ResourceRef};
use crate::diagnostics::Diagnostic;
use crate::span::Span;
use std::collections::HashMap;

/// The chaining arrow that made an edge, e.g. `Notify[a] -> Notify[b]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrowEdge {
    pub source: ResourceRef,
    pub target: ResourceRef,
    /// `~>` or `<~`.
    pub notify: bool,
    /// From the start of the left operand to the end of the right one.
    pub span: Span,
}

/// A `require` or `contain` call made in the body of `from`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallEdge {
    pub function: &'static str,
    pub from: ResourceRef,
    pub class: ResourceRef,
    pub span: Span,
}

/// What the compile knows about where catalog resources and their edges were written.
/// References are canonical (`Notify[a]`, `Class[Foo::Bar]`).
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// The declaration of each catalog resource.
    pub resources: HashMap<ResourceRef, Span>,
    /// The attribute (`require => ...`) that last set each parameter of each resource.
    pub params: HashMap<(ResourceRef, String), Span>,
    pub arrows: Vec<ArrowEdge>,
    pub calls: Vec<CallEdge>,
    /// Extra labels for the error that stopped the compile (`first declared here`).
    pub error_labels: Vec<(Span, String)>,
}

/// What the compiler records while it runs (by resource index).
#[derive(Clone, Debug, Default)]
pub(super) struct Recorder {
    /// Parameter spans are not kept (a compile whose provenance nobody reads).
    pub(super) skip_params: bool,
    params: HashMap<(usize, String), Span>,
    /// (source, target, notify, span)
    arrows: Vec<(usize, usize, bool, Span)>,
    /// (function, from, class, span)
    calls: Vec<(&'static str, usize, usize, Span)>,
    /// Resources realized by a collector (collector index, resource index).
    realized: Vec<(usize, usize)>,
    error_labels: Vec<(Span, String)>,
    pub(super) warnings: Vec<Diagnostic>,
}

impl Recorder {
    pub(super) fn param(&mut self, idx: usize, name: &str, span: Span) {
        if !self.skip_params && !span.is_synthetic() {
            self.params.insert((idx, name.to_string()), span);
        }
    }

    pub(super) fn param_span(&self, idx: usize, name: &str) -> Option<Span> {
        self.params.get(&(idx, name.to_string())).copied()
    }

    pub(super) fn arrow(&mut self, source: usize, target: usize, notify: bool, span: Span) {
        self.arrows.push((source, target, notify, span));
    }

    pub(super) fn call(&mut self, function: &'static str, from: usize, class: usize, span: Span) {
        self.calls.push((function, from, class, span));
    }

    pub(super) fn realized(&mut self, collector: usize, resource: usize) {
        self.realized.push((collector, resource));
    }

    pub(super) fn error_label(&mut self, span: Span, message: impl Into<String>) {
        self.error_labels.push((span, message.into()));
    }
}

impl Compiler<'_> {
    fn canonical(&self, idx: usize) -> ResourceRef {
        let r = &self.resources[idx];
        let title = if r.type_name == "Class" {
            capitalize_type(&r.title)
        } else {
            r.title.clone()
        };
        ResourceRef::new(r.type_name.clone(), title)
    }

    /// The recorded places, by canonical reference.
    pub(super) fn provenance(&self) -> Provenance {
        let rec = &self.recorder;
        let mut p = Provenance {
            error_labels: rec.error_labels.clone(),
            ..Provenance::default()
        };
        for (idx, r) in self.resources.iter().enumerate() {
            if !r.span.is_synthetic() && !r.dropped {
                p.resources.entry(self.canonical(idx)).or_insert(r.span);
            }
        }
        for ((idx, name), span) in &rec.params {
            p.params.insert((self.canonical(*idx), name.clone()), *span);
        }
        for &(s, t, notify, span) in &rec.arrows {
            p.arrows.push(ArrowEdge {
                source: self.canonical(s),
                target: self.canonical(t),
                notify,
                span,
            });
        }
        for &(function, from, class, span) in &rec.calls {
            p.calls.push(CallEdge {
                function,
                from: self.canonical(from),
                class: self.canonical(class),
                span,
            });
        }
        p
    }

    /// Warnings about the collectors used as relationship operands: one that matches nothing
    /// makes the relationship silently empty; one that matches virtual resources realizes
    /// them, which the author rarely means (`User <| |> -> Package[x]` adds every virtual
    /// user to the catalog).
    pub(super) fn collector_relationship_warnings(&mut self, operands: &[&[Operand]]) {
        let mut seen = std::collections::HashSet::new();
        for ops in operands {
            for op in ops.iter() {
                let Operand::Collector(ci) = op else { continue };
                if !seen.insert(*ci) {
                    continue;
                }
                let c = &self.collectors[*ci];
                if c.collected.is_empty() {
                    let mut d = Diagnostic::warning(
                        "empty-collector",
                        format!(
                            "this collector of {} matches no resource: the relationship it is part of makes no edge",
                            c.type_name
                        ),
                    )
                    .with_label(c.span, "matches nothing");
                    if c.empty_alternative.is_some() {
                        d = d.with_note(
                            "the chain continues from what stands left of the collector",
                        );
                    }
                    self.recorder.warnings.push(d);
                    continue;
                }
                let realized: Vec<String> = self
                    .recorder
                    .realized
                    .iter()
                    .filter(|(k, _)| k == ci)
                    .map(|(_, r)| self.resources[*r].reference())
                    .collect();
                if !realized.is_empty() {
                    let d = Diagnostic::warning(
                        "collector-realizes",
                        format!(
                            "this collector in a relationship realizes virtual resource{}: {}",
                            if realized.len() == 1 { "" } else { "s" },
                            realized.join(", ")
                        ),
                    )
                    .with_label(c.span, "orders and also realizes what it matches")
                    .with_help(
                        "to order resources without realizing them, use references (`Type['title']`); to realize them, say so with `realize` or a collector of its own",
                    );
                    self.recorder.warnings.push(d);
                }
            }
        }
    }
}
