//! `ordo compile MANIFEST --nodes DIR --outdir OUT [--jobs N]`: one catalog per node.
//!
//! DIR holds one facts file per node, `NODE.json` or `NODE.yaml` (`.yml`), read with the
//! facts loader of `--facts`; the node name is the file stem. The manifest is read once, and
//! every manifest and module file is parsed once: the trees are shared, read-only, by all
//! compiles ([`ParseCache`]). Nodes are compiled in parallel by `jobs` threads (default: the
//! available cores), each writing `OUT/NODE.json`, byte for byte what
//! `ordo compile MANIFEST --node NODE --facts FILE -o OUT/NODE.json` writes (compact JSON,
//! or indented with `--pretty`).
//!
//! A node whose facts cannot be read or whose compile fails has its errors printed with its
//! name; the other nodes still compile, and the exit status is 1. A summary line ends the run.

use super::compile::{catalog_text, compile_text, CompileInputs};
use crate::cli::shared_files::{Shared, SharedFiles};
use crate::eval::parse_cache::ParseCache;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A node to compile: its name and its facts file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFile {
    pub name: String,
    pub facts: PathBuf,
}

/// The facts files of a directory, by node name. Files that are not `.json`, `.yaml` or
/// `.yml` are ignored; two files for one node are an error.
pub fn node_files(dir: &Path) -> Result<Vec<NodeFile>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("Could not read the nodes directory {}: {e}", dir.display()))?;
    let mut out: Vec<NodeFile> = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("Could not read the nodes directory {}: {e}", dir.display()))?
            .path();
        let is_facts = path
            .extension()
            .is_some_and(|e| e == "json" || e == "yaml" || e == "yml");
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        if !is_facts || !path.is_file() || stem.is_empty() || stem.starts_with('.') {
            continue;
        }
        out.push(NodeFile {
            name: stem,
            facts: path,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name).then(a.facts.cmp(&b.facts)));
    for w in out.windows(2) {
        if w[0].name == w[1].name {
            return Err(format!(
                "Two facts files for node {}: {} and {}",
                w[0].name,
                w[0].facts.display(),
                w[1].facts.display()
            ));
        }
    }
    Ok(out)
}

/// What became of one node.
struct Outcome {
    ok: bool,
    /// Log lines and errors, printed together so that nodes do not interleave.
    messages: String,
}

fn compile_node(
    manifest: &Path,
    text: &str,
    node: &NodeFile,
    inputs: &CompileInputs,
    outdir: &Path,
    shared: &Shared,
    pretty: bool,
) -> Outcome {
    let mut messages = String::new();
    let facts = match crate::facts::read_facts(&node.facts) {
        Ok(f) => f,
        Err(refusal) => {
            messages.push_str(&format!("Error: facts of node {} refused:\n", node.name));
            messages.push_str(&refusal.render(crate::cli::stderr_render_options()));
            return Outcome {
                ok: false,
                messages,
            };
        }
    };
    let result = match compile_text(
        manifest,
        text,
        &node.name,
        facts,
        inputs,
        Some(shared.clone()),
        super::compile::Mode::Catalog,
    ) {
        Ok(r) => r,
        Err(e) => {
            messages.push_str(&format!("Error: {e} (node {})\n", node.name));
            return Outcome {
                ok: false,
                messages,
            };
        }
    };
    for l in &result.logs {
        messages.push_str(&format!("{}: {}\n", node.name, l.render()));
    }
    let errors: Vec<_> = result.diagnostics.iter().filter(|d| d.is_error()).collect();
    let catalog = match &result.catalog {
        Some(c) if errors.is_empty() => c,
        _ => {
            for d in errors {
                messages.push_str(&super::compile::error_line(d, &node.name));
                messages.push('\n');
            }
            return Outcome {
                ok: false,
                messages,
            };
        }
    };
    if inputs.storeconfigs {
        if let Err(e) = super::compile::export_store(inputs).save(&node.name, &result.exported) {
            messages.push_str(&format!("Error: {e} (node {})\n", node.name));
            return Outcome {
                ok: false,
                messages,
            };
        }
    }
    let path = outdir.join(format!("{}.json", node.name));
    if let Err(e) = super::output_file::write(&path, &catalog_text(catalog, pretty)) {
        messages.push_str(&format!("Error: {e} (node {})\n", node.name));
        return Outcome {
            ok: false,
            messages,
        };
    }
    Outcome { ok: true, messages }
}

/// Runs `ordo compile --nodes`; returns the exit code.
pub fn run(
    manifest: &Path,
    nodes_dir: &Path,
    outdir: &Path,
    inputs: &CompileInputs,
    jobs: Option<usize>,
    pretty: bool,
) -> i32 {
    let start = Instant::now();
    let text = match crate::input::read_to_string(manifest) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Error: Could not read manifest {}: {e}", manifest.display());
            return 1;
        }
    };
    let nodes = match node_files(nodes_dir) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    if let Err(e) = std::fs::create_dir_all(outdir) {
        eprintln!("Error: Could not create {}: {e}", outdir.display());
        return 1;
    }
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, nodes.len().max(1));
    // The trees and files of the code, shared by every node's compile.
    let shared = (Arc::new(ParseCache::new()), Arc::new(SharedFiles::new()));
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(node) = nodes.get(i) else {
            break;
        };
        let outcome = compile_node(manifest, &text, node, inputs, outdir, &shared, pretty);
        if !outcome.messages.is_empty() {
            let _ = std::io::stderr()
                .lock()
                .write_all(outcome.messages.as_bytes());
        }
        if !outcome.ok {
            failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(node.name.clone());
        }
    };
    let mut panicked = false;
    if jobs == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..jobs)
                .map(|_| {
                    std::thread::Builder::new()
                        // The evaluator recurses over the tree: as much stack as the main thread.
                        .stack_size(8 << 20)
                        .spawn_scoped(s, work)
                })
                .collect();
            for h in handles {
                match h {
                    Ok(h) => {
                        if h.join().is_err() {
                            eprintln!("Error: a compile thread panicked");
                            panicked = true;
                        }
                    }
                    Err(e) => {
                        eprintln!("Error: could not start a compile thread: {e}");
                        work();
                    }
                }
            }
        });
    }
    let mut failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    failed.sort();
    let secs = start.elapsed().as_secs_f64();
    let compiled = nodes.len() - failed.len();
    outln!(
        "{} nodes, {} failed, {:.2} s, {:.1} catalogs/s ({} jobs, {} files parsed)",
        nodes.len(),
        failed.len(),
        secs,
        compiled as f64 / secs.max(1e-9),
        jobs,
        shared.0.parses()
    );
    if !failed.is_empty() {
        eprintln!("Failed nodes: {}", failed.join(", "));
    }
    i32::from(!failed.is_empty() || panicked)
}
