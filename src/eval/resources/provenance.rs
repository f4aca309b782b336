//! Where things came from: the spans of declarations, relationship parameters, chaining arrows
//! and `require`/`contain` calls, kept so that `ordo check` can point at the source of every
//! edge. Also the warnings Puppet does not give (collectors in relationships), which only the
//! checker shows: `ordo compile` prints exactly Puppet's log.
//!
//! Recording is additive: the compiler calls `record_*` at the few places where it creates
//! these things; nothing here changes what is compiled.

use crate::catalog::{capitalize_type, ResourceRef};
use crate::diagnostics::Diagnostic;
use crate::eval::compiler::{Compiler, Operand};
use crate::fxhash::FxHashMap as FastMap;
use crate::span::Span;

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
///
/// The compile records compact facts (resource numbers, interned parameter names); the maps
/// by canonical reference are only built when a diagnostic first asks for a place, so that a
/// clean check of a large catalog never builds them.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// Type, title and declaration span of each compiled resource (by compiler index);
    /// `None` for resources whose span is not kept (synthetic or dropped).
    declared: Vec<(String, String, Option<Span>)>,
    /// (resource, parameter name number, span), in recording order: a later entry wins.
    params: Vec<(u32, u32, Span)>,
    param_names: Vec<Box<str>>,
    /// (source, target, notify, span)
    raw_arrows: Vec<(u32, u32, bool, Span)>,
    /// (function, from, class, span)
    raw_calls: Vec<(&'static str, u32, u32, Span)>,
    /// Extra labels for the error that stopped the compile (`first declared here`).
    pub error_labels: Vec<(Span, String)>,
    resolved: std::sync::OnceLock<Resolved>,
    resolved_params: std::sync::OnceLock<FastMap<(ResourceRef, String), Span>>,
}

/// The places by canonical reference, built on first use.
#[derive(Clone, Debug, Default)]
struct Resolved {
    canonical: Vec<ResourceRef>,
    resources: FastMap<ResourceRef, Span>,
    arrows: Vec<ArrowEdge>,
    calls: Vec<CallEdge>,
}

impl Provenance {
    fn resolved(&self) -> &Resolved {
        self.resolved.get_or_init(|| {
            let canonical: Vec<ResourceRef> = self
                .declared
                .iter()
                .map(|(t, title, _)| canonical(t, title))
                .collect();
            let mut resources = FastMap::default();
            for (r, (_, _, span)) in canonical.iter().zip(&self.declared) {
                if let Some(span) = span {
                    resources.entry(r.clone()).or_insert(*span);
                }
            }
            let arrows = self
                .raw_arrows
                .iter()
                .map(|&(s, t, notify, span)| ArrowEdge {
                    source: canonical[s as usize].clone(),
                    target: canonical[t as usize].clone(),
                    notify,
                    span,
                })
                .collect();
            let calls = self
                .raw_calls
                .iter()
                .map(|&(function, from, class, span)| CallEdge {
                    function,
                    from: canonical[from as usize].clone(),
                    class: canonical[class as usize].clone(),
                    span,
                })
                .collect();
            Resolved {
                canonical,
                resources,
                arrows,
                calls,
            }
        })
    }

    /// The declaration of a catalog resource.
    pub fn resource(&self, r: &ResourceRef) -> Option<Span> {
        if self.declared.is_empty() {
            return None;
        }
        self.resolved().resources.get(r).copied()
    }

    /// The attribute (`require => ...`) that last set a parameter of a resource.
    pub fn param(&self, r: &ResourceRef, name: &str) -> Option<Span> {
        if self.params.is_empty() {
            return None;
        }
        let map = self.resolved_params.get_or_init(|| {
            let canonical = &self.resolved().canonical;
            let mut map = FastMap::default();
            for &(idx, name, span) in &self.params {
                let key = (
                    canonical[idx as usize].clone(),
                    self.param_names[name as usize].to_string(),
                );
                map.insert(key, span);
            }
            map
        });
        map.get(&(r.clone(), name.to_string())).copied()
    }

    pub fn arrows(&self) -> &[ArrowEdge] {
        if self.raw_arrows.is_empty() {
            return &[];
        }
        &self.resolved().arrows
    }

    pub fn calls(&self) -> &[CallEdge] {
        if self.raw_calls.is_empty() {
            return &[];
        }
        &self.resolved().calls
    }
}

fn canonical(type_name: &str, title: &str) -> ResourceRef {
    let title = if type_name == "Class" {
        capitalize_type(title)
    } else {
        title.to_string()
    };
    ResourceRef::new(type_name, title)
}

/// What the compiler records while it runs (by resource index).
#[derive(Clone, Debug, Default)]
pub(in crate::eval) struct Recorder {
    /// Parameter spans are not kept (a compile whose provenance nobody reads).
    pub(in crate::eval) skip_params: bool,
    /// (resource, parameter name number, span), in recording order.
    params: Vec<(u32, u32, Span)>,
    /// Parameter names, numbered: a resource's parameters are recorded without a copy of
    /// their names.
    param_names: Vec<Box<str>>,
    param_numbers: FastMap<Box<str>, u32>,
    /// (source, target, notify, span)
    arrows: Vec<(u32, u32, bool, Span)>,
    /// (function, from, class, span)
    calls: Vec<(&'static str, u32, u32, Span)>,
    /// Resources realized by a collector (collector index, resource index).
    realized: Vec<(usize, usize)>,
    error_labels: Vec<(Span, String)>,
    pub(in crate::eval) warnings: Vec<Diagnostic>,
}

impl Recorder {
    pub(in crate::eval) fn param(&mut self, idx: usize, name: &str, span: Span) {
        if !self.skip_params && !span.is_synthetic() {
            let number = match self.param_numbers.get(name) {
                Some(&n) => n,
                None => {
                    let n = self.param_names.len() as u32;
                    self.param_names.push(name.into());
                    self.param_numbers.insert(name.into(), n);
                    n
                }
            };
            self.params.push((idx as u32, number, span));
        }
    }

    /// The span that last set a parameter (a scan: only asked when reporting an error).
    pub(in crate::eval) fn param_span(&self, idx: usize, name: &str) -> Option<Span> {
        let number = *self.param_numbers.get(name)?;
        self.params
            .iter()
            .rev()
            .find(|&&(i, n, _)| i as usize == idx && n == number)
            .map(|&(_, _, span)| span)
    }

    pub(in crate::eval) fn arrow(
        &mut self,
        source: usize,
        target: usize,
        notify: bool,
        span: Span,
    ) {
        self.arrows
            .push((source as u32, target as u32, notify, span));
    }

    pub(in crate::eval) fn call(
        &mut self,
        function: &'static str,
        from: usize,
        class: usize,
        span: Span,
    ) {
        self.calls.push((function, from as u32, class as u32, span));
    }

    pub(in crate::eval) fn realized(&mut self, collector: usize, resource: usize) {
        self.realized.push((collector, resource));
    }

    pub(in crate::eval) fn error_label(&mut self, span: Span, message: impl Into<String>) {
        self.error_labels.push((span, message.into()));
    }
}

impl Compiler<'_> {
    /// The recorded places (references are made canonical only when first asked for),
    /// taken from the compiler once it is done with its resources: their types and titles
    /// are moved out rather than copied, and what was recorded goes with them.
    pub(in crate::eval) fn take_provenance(&mut self) -> Provenance {
        let rec = &mut self.recorder;
        let declared = self
            .resources
            .iter_mut()
            .map(|r| {
                let span = (!r.span.is_synthetic() && !r.dropped).then_some(r.span);
                (
                    std::mem::take(&mut r.type_name),
                    std::mem::take(&mut r.title),
                    span,
                )
            })
            .collect();
        Provenance {
            declared,
            params: std::mem::take(&mut rec.params),
            param_names: std::mem::take(&mut rec.param_names),
            raw_arrows: std::mem::take(&mut rec.arrows),
            raw_calls: std::mem::take(&mut rec.calls),
            error_labels: std::mem::take(&mut rec.error_labels),
            resolved: Default::default(),
            resolved_params: Default::default(),
        }
    }

    /// Warnings about the collectors used as relationship operands: one that matches nothing
    /// makes the relationship silently empty; one that matches virtual resources realizes
    /// them, which the author rarely means (`User <| |> -> Package[x]` adds every virtual
    /// user to the catalog).
    pub(in crate::eval) fn collector_relationship_warnings(&mut self, operands: &[&[Operand]]) {
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
