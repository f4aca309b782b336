//! `ordo check`, `ordo graph` and `ordo explain` over a catalog.

use super::compile::CompileInputs;
use super::load_input;
use crate::catalog::Catalog;
use crate::check::{Locator, Report};
use crate::diagnostics::{render, to_json, Diagnostic, Severity};
use crate::graph::cycles::{find_cycles, path_names};
use crate::graph::dot::{to_dot, Kind};
use crate::graph::{Ordering, Vertex};
use crate::span::SourceMap;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// The manifest (.pp) or catalog (JSON) to check.
    pub file: PathBuf,
    /// Diagnostics as code frames on stderr (`human`) or as one JSON array on stdout
    /// (`json`).
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::cli::DiagFormat,
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
    /// Diagnostics as code frames on stderr (`human`) or as one JSON array on stdout
    /// (`json`, the shape of `ordo parse --format json`), printed when there are any.
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::cli::DiagFormat,
    /// Write the DOT text here instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Order of unrelated resources: manifest, title-hash, random[:SEED] or alphanumeric
    /// (Rudder's technique-by-technique order, with `priority`).
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
    /// Diagnostics as code frames on stderr (`human`) or as one JSON array on stdout
    /// (`json`, the shape of `ordo parse --format json`), printed when there are any.
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::cli::DiagFormat,
    /// Order of unrelated resources: manifest, title-hash, random[:SEED] or alphanumeric
    /// (Rudder's technique-by-technique order, with `priority`).
    #[arg(long, default_value = "manifest")]
    pub ordering: Ordering,
    #[command(flatten)]
    pub inputs: CompileInputs,
}

/// Everything `ordo check` finds in a catalog (see `crate::check`), without source spans.
pub fn check_catalog(catalog: &Catalog) -> Vec<Diagnostic> {
    crate::check::check_catalog(catalog, &Locator::none(), &SourceMap::default())
}

/// The report of `ordo check` on a file: a catalog (its resources' files are read when they
/// exist, for snippets) or a manifest (compiled, with the evaluator's spans).
fn check_report(args: &CheckArgs) -> Result<(Report, Option<Catalog>), i32> {
    if super::is_catalog_file(&args.file) {
        let catalog = super::load_catalog(&args.file)?;
        let mut sources = SourceMap::default();
        let loc =
            Locator::from_catalog(&catalog, &mut sources, &|f| std::fs::read_to_string(f).ok());
        let diagnostics = crate::check::check_catalog(&catalog, &loc, &sources);
        return Ok((
            Report {
                diagnostics,
                sources,
            },
            Some(catalog),
        ));
    }
    let (result, _node) = super::compile::check_result(&args.file, &args.inputs)?;
    Ok(crate::check::check_compiled_keeping(result))
}

pub fn check(args: &CheckArgs) -> i32 {
    let (mut report, catalog) = match check_report(args) {
        Ok(r) => r,
        Err(code) => return code,
    };
    match (args.puppet_compatible, &catalog) {
        (true, Some(catalog)) => report.diagnostics.extend(puppet_compatibility(catalog)),
        (false, Some(catalog)) => report.diagnostics.extend(extensions_note(catalog)),
        _ => {}
    }
    match args.format {
        crate::cli::DiagFormat::Json => {
            let items: Vec<serde_json::Value> = report
                .diagnostics
                .iter()
                .map(|d| to_json(d, &report.sources))
                .collect();
            outln!(
                "{}",
                serde_json::to_string_pretty(&items).expect("diagnostics serialise")
            );
        }
        crate::cli::DiagFormat::Human => {
            let opts = crate::cli::stderr_render_options();
            for d in &report.diagnostics {
                eprint!("{}", render(d, &report.sources, opts));
            }
            eprintln!(
                "{}: {} error(s), {} warning(s)",
                args.file.display(),
                report.errors(),
                report.warnings()
            );
        }
    }
    let failing = report
        .diagnostics
        .iter()
        .any(|d| d.is_error() || (args.deny_warnings && d.severity == Severity::Warning));
    // The process ends here: freeing a large catalog and its sources piece by piece would
    // only delay the exit (a tenth of checking 100,000 resources).
    std::mem::forget(catalog);
    std::mem::forget(report);
    i32::from(failing)
}

/// One note when the catalog uses Ordo's extension metaparameters (`require_in`,
/// `priority`, ...), which Puppet would reject: which ones, and how many resources.
pub fn extensions_note(catalog: &Catalog) -> Option<Diagnostic> {
    let mut names = std::collections::BTreeSet::new();
    let mut resources = 0;
    for r in &catalog.resources {
        let used = crate::graph::requisites::puppet_incompatible(r);
        resources += usize::from(!used.is_empty());
        names.extend(used.into_iter().map(str::to_string));
    }
    (resources > 0).then(|| {
        let names: Vec<String> = names.into_iter().map(|n| format!("'{n}'")).collect();
        Diagnostic::note(
            "ordo-extension",
            format!(
                "{resources} resource{} use{} Ordo's extension metaparameters {}: Puppet would reject them",
                if resources == 1 { "" } else { "s" },
                if resources == 1 { "s" } else { "" },
                names.join(", ")
            ),
        )
        .with_help("`ordo check --puppet-compatible` shows each one")
    })
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
            if let Err(e) = super::output_file::write(p, dot.as_bytes()) {
                eprintln!("error: {e}");
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
    explain_located(
        catalog,
        a,
        b,
        ordering,
        &Locator::none(),
        &SourceMap::default(),
    )
}

/// [`explain_catalog`] naming the source of each edge (arrows, `require` calls) when the
/// locator knows it.
pub fn explain_located(
    catalog: &Catalog,
    a: &str,
    b: &str,
    ordering: Ordering,
    loc: &Locator,
    sources: &SourceMap,
) -> Result<Vec<String>, String> {
    let (prepared, graph) = crate::graph::requisites::build(catalog, ordering);
    let catalog = &prepared;
    let find = |r: &str| {
        graph
            .find(catalog, r)
            .ok_or_else(|| format!("no resource {r} in the catalog"))
    };
    let (na, nb) = (find(a)?, find(b)?);
    let describe =
        |s: Vertex, t: Vertex| crate::check::cycles::edge_words(&graph, loc, sources, s, t);
    let mut lines = crate::graph::explain::explain_with(&graph, na, nb, &describe);
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
    let result = if super::is_catalog_file(&args.file) {
        let catalog = match load_input(&args.file, &args.inputs) {
            Ok(c) => c,
            Err(code) => return code,
        };
        explain_catalog(&catalog, &args.first, &args.second, args.ordering)
    } else {
        // A manifest: compile it (printing its log as `ordo compile` does) and keep the spans.
        let (result, node) = match super::compile::compile_result(&args.file, &args.inputs) {
            Ok(r) => r,
            Err(code) => return code,
        };
        for l in &result.logs {
            eprintln!("{}", l.render());
        }
        let errors: Vec<_> = result.diagnostics.iter().filter(|d| d.is_error()).collect();
        let Some(catalog) = result.catalog.as_ref().filter(|_| errors.is_empty()) else {
            super::compile::report_errors(&errors, &result.sources, &node, true);
            return 1;
        };
        let loc = Locator::from_provenance(result.provenance.clone());
        explain_located(
            catalog,
            &args.first,
            &args.second,
            args.ordering,
            &loc,
            &result.sources,
        )
    };
    match result {
        Ok(lines) => {
            for l in lines {
                outln!("{l}");
            }
            0
        }
        Err(e) => {
            crate::cli::emit_plain(&Diagnostic::error("unknown-resource", e));
            1
        }
    }
}
