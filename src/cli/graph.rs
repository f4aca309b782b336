//! `ordo check`, `ordo graph` and `ordo explain` over a catalog.

use super::compile::CompileInputs;
use super::load_input;
use crate::apply::providers;
use crate::catalog::Catalog;
use crate::diagnostics::{render, Diagnostic, RenderOptions};
use crate::graph::cycles::{explain, find_cycles, path_names};
use crate::graph::dot::{to_dot, Kind};
use crate::graph::{Graph, Ordering, Origin, Vertex};
use crate::span::SourceMap;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// The manifest (.pp) or catalog (JSON) to check.
    pub file: PathBuf,
    /// human or json.
    #[arg(long, default_value = "human")]
    pub format: String,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    #[command(flatten)]
    pub inputs: CompileInputs,
    /// Flag Ordo's extension metaparameters (Salt requisites, run controls, `priority`):
    /// real Puppet rejects them.
    #[arg(long)]
    pub puppet_compatible: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct GraphArgs {
    /// The manifest (.pp) or catalog (JSON) to draw.
    pub file: PathBuf,
    /// resources, relationships, expanded or cycles.
    #[arg(long, default_value = "relationships")]
    pub kind: Kind,
    /// Write the DOT text here instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    #[arg(long, default_value = "manifest")]
    pub ordering: Ordering,
    #[command(flatten)]
    pub inputs: CompileInputs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct ExplainArgs {
    /// The manifest (.pp) or catalog (JSON).
    pub file: PathBuf,
    /// First resource, e.g. 'Notify[a]'.
    pub first: String,
    /// Second resource.
    pub second: String,
    #[arg(long, default_value = "manifest")]
    pub ordering: Ordering,
    #[command(flatten)]
    pub inputs: CompileInputs,
}

/// Everything `ordo check` finds in a catalog: errors (missing dependencies, unsupported
/// types or attributes, cycles with the origin of each edge) and warnings.
pub fn check_catalog(catalog: &Catalog) -> Vec<Diagnostic> {
    let (prepared, graph) = crate::graph::requisites::build(catalog, Ordering::Manifest);
    let catalog = &prepared;
    let mut out = graph.diagnostics();
    for node in &graph.nodes {
        if let (false, Some(i)) = (node.container, node.index) {
            if let Err(msg) = providers::build(&catalog.resources[i]) {
                let mut d = Diagnostic::error("unsupported", msg);
                if let Some(l) = node.short_location() {
                    d = d.with_note(format!("declared at {l}"));
                }
                out.push(d);
            }
        }
    }
    let cycles = find_cycles(&graph);
    if !cycles.is_empty() {
        let n = cycles.len();
        for (k, c) in cycles.iter().enumerate() {
            let mut d = Diagnostic::error(
                "cycle",
                format!(
                    "dependency cycle {} of {n}: ({})",
                    k + 1,
                    path_names(&graph, &c.path).join(" => ")
                ),
            );
            for line in explain(&graph, c) {
                d = d.with_note(line);
            }
            out.push(d);
        }
    }
    out.extend(warnings(catalog, &graph));
    out
}

/// Notifying relationships whose target cannot refresh: the event is silently dropped.
fn warnings(catalog: &Catalog, graph: &Graph) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for rel in &graph.relations {
        if !rel.refresh || !seen.insert((rel.source, rel.target)) {
            continue;
        }
        let target = &graph.nodes[rel.target];
        if target.container {
            continue;
        }
        // Unsupported targets are reported as errors already.
        let provider = target
            .index
            .and_then(|i| providers::build(&catalog.resources[i]).ok());
        if provider.is_some_and(|p| !p.refreshable()) {
            let mut d = Diagnostic::warning(
                "refresh-ignored",
                format!(
                    "{} notifies {}, which does not refresh: the events are ignored",
                    graph.nodes[rel.source].reference, target.reference
                ),
            );
            if let Origin::Metaparam { on, .. } = rel.origin {
                if let Some(l) = graph.nodes[on].short_location() {
                    d = d.with_note(format!("relationship declared at {l}"));
                }
            }
            out.push(d);
        }
    }
    out
}

pub fn check(args: &CheckArgs) -> i32 {
    let catalog = match load_input(&args.file, &args.inputs) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut diags = check_catalog(&catalog);
    if args.puppet_compatible {
        diags.extend(puppet_compatibility(&catalog));
    }
    if args.format == "json" {
        outln!(
            "{}",
            serde_json::to_string_pretty(&diags).expect("diagnostics serialise")
        );
    } else {
        let opts = RenderOptions::for_stderr();
        let sources = SourceMap::default();
        for d in &diags {
            eprint!("{}", render(d, &sources, opts));
        }
        let errors = diags.iter().filter(|d| d.is_error()).count();
        eprintln!(
            "{}: {errors} error(s), {} warning(s)",
            args.file.display(),
            diags.len() - errors
        );
    }
    let failing = diags.iter().any(|d| d.is_error() || args.deny_warnings);
    i32::from(failing)
}

/// Errors for every Ordo extension metaparameter: Puppet rejects unknown metaparameters.
pub fn puppet_compatibility(catalog: &Catalog) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for r in &catalog.resources {
        for p in crate::graph::requisites::puppet_incompatible(r) {
            let reference = crate::graph::refs::canonical_ref(&r.type_name, &r.title);
            let mut d = Diagnostic::error(
                "puppet-incompatible",
                format!("no parameter named '{p}' for {reference} in Puppet: '{p}' is an Ordo extension"),
            )
            .with_help("remove it, or apply this catalog with Ordo only".to_string());
            let loc = match (&r.file, r.line) {
                (Some(f), Some(l)) => Some(format!("{f}:{l}")),
                (Some(f), None) => Some(f.clone()),
                _ => None,
            };
            if let Some(l) = loc {
                d = d.with_note(format!("declared at {l}"));
            }
            out.push(d);
        }
    }
    out
}

pub fn graph(args: &GraphArgs) -> i32 {
    let catalog = match load_input(&args.file, &args.inputs) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let dot = to_dot(
        &crate::graph::requisites::build(&catalog, args.ordering).1,
        args.kind,
    );
    match &args.output {
        Some(p) => {
            if let Err(e) = std::fs::write(p, dot) {
                eprintln!("error: could not write {}: {e}", p.display());
                return 1;
            }
        }
        None => out!("{dot}"),
    }
    0
}

/// Lines explaining the order of two resources of a catalog.
pub fn explain_catalog(
    catalog: &Catalog,
    a: &str,
    b: &str,
    ordering: Ordering,
) -> Result<Vec<String>, String> {
    let (prepared, graph) = crate::graph::requisites::build(catalog, ordering);
    let catalog = &prepared;
    let find = |r: &str| {
        graph
            .find(catalog, r)
            .ok_or_else(|| format!("no resource {r} in the catalog"))
    };
    let (na, nb) = (find(a)?, find(b)?);
    let mut lines = crate::graph::explain::explain(&graph, na, nb);
    for c in find_cycles(&graph) {
        let on = |n: usize| c.members.iter().any(|v: &Vertex| v.node() == n);
        if on(na) || on(nb) {
            lines.push(format!(
                "note: they are on a dependency cycle: ({})",
                path_names(&graph, &c.path).join(" => ")
            ));
        }
    }
    Ok(lines)
}

pub fn explain_cmd(args: &ExplainArgs) -> i32 {
    let catalog = match load_input(&args.file, &args.inputs) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let result = explain_catalog(&catalog, &args.first, &args.second, args.ordering);
    match result {
        Ok(lines) => {
            for l in lines {
                outln!("{l}");
            }
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
