//! `ordo check`: everything that would stop or surprise an apply, found without applying.
//!
//! Errors: what the compile rejects (missing relationship targets, duplicate declarations, ...,
//! in Puppet's words), then what the catalog cannot do (missing dependencies, unsupported
//! types or attributes, dependency cycles with the origin of each edge). Warnings Puppet lacks:
//! collectors in relationships that match nothing or realize virtual resources (found by the
//! evaluator), notifications a resource cannot act on, `refreshonly` execs nothing notifies.
//!
//! The checks are pure: they take a compile result or a catalog and return diagnostics; the
//! CLI reads files and renders.

pub mod cycles;
pub mod locate;
mod warnings;

use crate::apply::providers;
use crate::catalog::Catalog;
use crate::diagnostics::{Diagnostic, Severity};
use crate::eval::{CompileOptions, CompileResult, Loader, LogLevel};
use crate::graph::{GraphError, Ordering};
use crate::span::SourceMap;
pub use locate::Locator;

/// Diagnostics and the sources their spans point into.
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn warnings(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }
}

/// Compiles a manifest and checks its catalog.
pub fn check_manifest(
    name: &str,
    text: &str,
    loader: &dyn Loader,
    opts: &CompileOptions,
) -> Report {
    let result = crate::eval::compile_checking(name, text, loader, opts, false);
    check_compiled(result)
}

/// Checks what a compile produced: its errors and warnings, then its catalog.
pub fn check_compiled(result: CompileResult) -> Report {
    check_compiled_keeping(result).0
}

/// [`check_compiled`], handing the catalog back (when the compile succeeded) for more
/// checks, without a copy.
pub fn check_compiled_keeping(result: CompileResult) -> (Report, Option<Catalog>) {
    let CompileResult {
        catalog,
        logs,
        diagnostics,
        sources,
        provenance,
        ..
    } = result;
    let loc = Locator::from_provenance(provenance);
    let mut out: Vec<Diagnostic> = logs
        .iter()
        .filter(|l| l.level == LogLevel::Warning)
        .map(|l| Diagnostic::warning("puppet-warning", l.message.clone()))
        .collect();
    let failed = diagnostics.iter().any(Diagnostic::is_error);
    // Puppet's closing "Language validation logged N errors" adds nothing to the errors
    // themselves, each shown with its source.
    for mut d in diagnostics
        .into_iter()
        .filter(|d| d.code != "validation-giving-up")
    {
        if d.code == "validation-logged" {
            d.code = "validation";
        }
        out.push(compile_diagnostic(d, &loc, &sources));
    }
    let catalog = catalog.filter(|_| !failed);
    if let Some(catalog) = &catalog {
        out.extend(check_catalog(catalog, &loc, &sources));
    }
    (
        Report {
            diagnostics: out,
            sources,
        },
        catalog,
    )
}

/// A compile error drawn outside `ordo check` (`ordo compile` and `ordo apply` on a
/// terminal): as [`check_compiled`] shows it, without the evaluator's provenance.
pub fn shown_compile_error(d: Diagnostic, sources: &SourceMap) -> Diagnostic {
    let d = if d.code == "validation-logged" {
        Diagnostic {
            code: "validation",
            ..d
        }
    } else {
        d
    };
    compile_diagnostic(d, &Locator::none(), sources)
}

/// A compile diagnostic made ready to draw: a code that says what it is, a label at its span,
/// and without Puppet's `(file: x.pp, line: 3)` suffix when the drawing shows the place.
fn compile_diagnostic(mut d: Diagnostic, loc: &Locator, sources: &SourceMap) -> Diagnostic {
    if d.severity != Severity::Error {
        return d;
    }
    let Some(span) = d.span.filter(|s| sources.get(s.file).is_some()) else {
        return d;
    };
    d.message = without_locations(&d.message);
    if d.code == "syntax" || d.message.starts_with("Could not parse") {
        return d.with_label(span, "");
    }
    if d.message.contains("Could not find resource '") {
        d.code = "missing-target";
        return d.with_label(span, "this reference names no resource of the catalog");
    }
    if d.message.contains("Duplicate declaration:") || d.message.contains("Cannot alias ") {
        d.code = "duplicate-declaration";
        d = d.with_label(span, "declared again here");
        for (s, m) in loc.error_labels() {
            d = d.with_label(*s, m.clone());
        }
        return d;
    }
    let label = [
        ("Unknown resource type", "unknown resource type"),
        ("Resource type not found", "unknown resource type"),
        ("no parameter named", "unknown attribute"),
        ("has no parameter named", "unknown parameter"),
        ("Could not find class", "unknown class"),
        ("Could not find declared class", "unknown class"),
    ]
    .iter()
    .find(|(words, _)| d.message.contains(words))
    .map_or("", |(_, label)| label);
    d.with_label(span, label)
}

/// A message without the places Puppet writes into it (`(file: x.pp, line: 3)`, anywhere but
/// after `at`): the frame shows the place.
fn without_locations(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = [rest.find(" (file: "), rest.find(" (line: ")]
        .into_iter()
        .flatten()
        .min()
    {
        let Some(close) = rest[i..].find(')') else {
            break;
        };
        // `already declared at (file: x.pp, line: 1)`: there the place is the sentence's.
        let keep = rest[..i].ends_with(" at");
        out.push_str(&rest[..if keep { i + close + 1 } else { i }]);
        rest = &rest[i + close + 1..];
    }
    out.push_str(rest);
    out
}

/// `msg (file: x.pp, line: 3, column: 5)` -> `msg`.
pub fn strip_location(mut msg: &str) -> &str {
    // Puppet may append two (`... (file: x.pp, line: 3) (file: x.pp, line: 3, column: 1)`).
    while let Some(i) = msg.rfind(" (file: ").filter(|_| msg.ends_with(')')) {
        msg = &msg[..i];
    }
    msg
}

/// What the runner would make of a catalog, apart from its graph: the validation errors
/// (`apply::sanity`) and, for each resource, whether its provider refreshes or why none
/// can manage it (`None` for containers).
struct Managed {
    sanity: Vec<String>,
    providers: Vec<Option<Result<bool, String>>>,
}

fn managed(catalog: &Catalog) -> Managed {
    Managed {
        sanity: crate::apply::sanity::check(catalog),
        providers: catalog
            .resources
            .iter()
            .map(|r| {
                (!crate::graph::is_container(r))
                    .then(|| providers::build(r).map(|p| p.refreshable()))
            })
            .collect(),
    }
}

/// Everything found in a catalog. `loc` and `sources` give spans when known.
pub fn check_catalog(catalog: &Catalog, loc: &Locator, sources: &SourceMap) -> Vec<Diagnostic> {
    // The runner's view is of the catalog the graph stage prepares, which is the input
    // itself unless it had globs, `_in` forms or `use` (then it is the rewritten catalog).
    let (prepared, graph) = crate::graph::requisites::build(catalog, Ordering::Manifest);
    let m = managed(&prepared);
    let mut out: Vec<Diagnostic> = m
        .sanity
        .into_iter()
        .map(|m| {
            let code = if m.starts_with("Duplicate declaration") {
                "duplicate-declaration"
            } else {
                "invalid-catalog"
            };
            Diagnostic::error(code, m)
        })
        .collect();
    let catalog = &prepared;
    for e in &graph.errors {
        out.push(graph_error(&graph, e, loc));
    }
    // Whether each managed resource can refresh; `None` for containers and for resources
    // the runner cannot manage (reported here as errors). Built once: the warnings below ask
    // for every notifying relationship.
    let mut refreshable: Vec<Option<bool>> = vec![None; graph.nodes.len()];
    // Resources of types Ordo cannot apply: whether the catalog is right is another
    // question, answered above; they are counted by type in one note.
    let mut cannot_apply: std::collections::BTreeMap<String, usize> = Default::default();
    for (n, node) in graph.nodes.iter().enumerate() {
        if let (false, Some(i)) = (node.container, node.index) {
            let type_name = &catalog.resources[i].type_name;
            if !providers::can_apply(type_name) {
                *cannot_apply.entry(type_name.to_lowercase()).or_default() += 1;
                continue;
            }
            let msg = match &m.providers[i] {
                Some(Ok(refreshes)) => {
                    refreshable[n] = Some(*refreshes);
                    continue;
                }
                Some(Err(msg)) => msg.clone(),
                None => continue,
            };
            {
                let mut d = Diagnostic::error("unsupported", msg);
                match loc.resource(&node.reference) {
                    Some(span) => d = d.with_label(span, "declared here"),
                    None => {
                        if let Some(l) = node.short_location() {
                            d = d.with_note(format!("declared at {l}"));
                        }
                    }
                }
                out.push(d);
            }
        }
    }
    if !cannot_apply.is_empty() {
        let total: usize = cannot_apply.values().sum();
        let by_type: Vec<String> = cannot_apply
            .iter()
            .map(|(t, n)| format!("{t} ({n})"))
            .collect();
        out.push(
            Diagnostic::note(
                "cannot-apply",
                format!(
                    "{total} resource{} of types Ordo cannot apply: {}",
                    if total == 1 { "" } else { "s" },
                    by_type.join(", ")
                ),
            )
            .with_help("the catalog is checked all the same; `ordo apply` refuses it"),
        );
    }
    out.extend(cycles::diagnostics(&graph, loc, sources));
    out.extend(warnings::refresh_ignored(&graph, &refreshable, loc));
    out.extend(warnings::refreshonly_unnotified(catalog, &graph, loc));
    out
}

fn graph_error(g: &crate::graph::Graph, e: &GraphError, loc: &Locator) -> Diagnostic {
    let (code, at) = match e {
        GraphError::MissingDependency {
            reference,
            resource,
            param,
        } => (
            "missing-dependency",
            Some((
                *resource,
                *param,
                format!("{reference} is not in the catalog"),
            )),
        ),
        GraphError::BadReference {
            resource, param, ..
        } => (
            "bad-reference",
            Some((*resource, *param, "not a resource reference".to_string())),
        ),
        GraphError::BadEdge { .. } => ("bad-edge", None),
        GraphError::Invalid { resource, .. } => (
            "invalid-metaparameter",
            Some((*resource, "", String::new())),
        ),
    };
    let message = g.error_message(e);
    if let Some((node, param, label)) = at {
        let r = &g.nodes[node].reference;
        if let Some(span) = loc.param(r, param).or_else(|| loc.resource(r)) {
            return Diagnostic::error(code, strip_location(&message)).with_label(span, label);
        }
    }
    Diagnostic::error(code, message)
}
