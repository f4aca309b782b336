//! `ordo compile`: manifest + facts + modules in, Puppet JSON catalog out.

use crate::catalog::Catalog;
use crate::cli::shared_files::{memo, Shared, SharedFiles};
use crate::eval::{self, CompileOptions, Loader};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Module files from a `--modulepath` (colon-separated directories).
pub struct FsLoader {
    pub dirs: Vec<PathBuf>,
    /// File texts and scans, read once (shared by the compiles of the same code).
    pub files: std::sync::Arc<SharedFiles>,
    /// Where Hiera data lives: see [`crate::cli::data`].
    pub data: crate::cli::data::DataDirs,
    /// With `--storeconfigs`: the resources nodes exported (see `cli::store`).
    pub exports: Option<Vec<(String, crate::catalog::Resource)>>,
    /// Trees shared with the other compiles of a run (`--nodes`).
    pub parse_cache: Option<std::sync::Arc<eval::parse_cache::ParseCache>>,
    /// The Ruby that runs the modules' Ruby (one for the process; see `crate::ruby`).
    pub ruby: Option<std::sync::Arc<crate::ruby::RubyProcess>>,
    /// The machine, with the compile's deadline if it has one.
    pub host: crate::cli::host::SystemHost,
}

impl FsLoader {
    pub fn new(modulepath: Option<&str>) -> FsLoader {
        FsLoader {
            dirs: modulepath
                .map(|p| {
                    p.split(':')
                        .filter(|d| !d.is_empty())
                        .map(PathBuf::from)
                        .collect()
                })
                .unwrap_or_default(),
            files: Default::default(),
            data: Default::default(),
            exports: None,
            parse_cache: None,
            ruby: None,
            host: Default::default(),
        }
    }

    /// Names of the Ruby resource types the modules ship: `lib/puppet/type/*.rb`, or the
    /// `ruby-types.txt` list (`name<TAB>path`) that stands in for them in the corpus.
    fn ruby_types(&self) -> &std::collections::HashSet<String> {
        &self.ruby_type_lists().0
    }

    /// The Ruby types' names, and those of them that are `.rb` files (not only listed).
    fn ruby_type_lists(
        &self,
    ) -> &(
        std::collections::HashSet<String>,
        std::collections::HashSet<String>,
    ) {
        self.files.ruby_types.get_or_init(|| {
            let mut names = std::collections::HashSet::new();
            let mut files = std::collections::HashSet::new();
            for d in &self.dirs {
                let Ok(entries) = std::fs::read_dir(d) else {
                    continue;
                };
                for m in entries.flatten() {
                    if let Ok(types) = std::fs::read_dir(m.path().join("lib/puppet/type")) {
                        for t in types.flatten() {
                            let p = t.path();
                            if p.extension().is_some_and(|e| e == "rb") {
                                if let Some(stem) = p.file_stem() {
                                    files.insert(stem.to_string_lossy().into_owned());
                                }
                            }
                        }
                    }
                    if let Ok(list) = std::fs::read_to_string(m.path().join("ruby-types.txt")) {
                        for l in list.lines().filter(|l| !l.starts_with('#')) {
                            if let Some(name) = l.split_whitespace().next() {
                                names.insert(name.to_string());
                            }
                        }
                    }
                }
            }
            names.extend(files.iter().cloned());
            (names, files)
        })
    }
}

impl FsLoader {
    /// Whether a module ships `lib/puppet/type/NAME.rb` (one `ruby` can read).
    fn has_ruby_type_file(&self, name: &str) -> bool {
        self.ruby_type_lists().1.contains(name)
    }

    /// Names of the Ruby functions the modules ship (`lib/puppet/functions`,
    /// `lib/puppet/parser/functions`, or the corpus's `ruby-functions.txt`).
    fn ruby_functions(&self) -> &std::collections::HashSet<String> {
        self.files.ruby_functions.get_or_init(|| {
            let mut names = std::collections::HashSet::new();
            for d in &self.dirs {
                let Ok(entries) = std::fs::read_dir(d) else {
                    continue;
                };
                for m in entries.flatten() {
                    collect_rb(&m.path().join("lib/puppet/functions"), "", &mut names);
                    collect_rb(
                        &m.path().join("lib/puppet/parser/functions"),
                        "",
                        &mut names,
                    );
                    if let Ok(list) = std::fs::read_to_string(m.path().join("ruby-functions.txt")) {
                        for l in list.lines().filter(|l| !l.starts_with('#')) {
                            if let Some(name) = l.split_whitespace().next() {
                                names.insert(name.to_string());
                            }
                        }
                    }
                }
            }
            names
        })
    }

    /// The modules' `lib` folders, in modulepath and name order.
    fn scan_lib_dirs(&self) -> Vec<String> {
        let mut out = Vec::new();
        for d in &self.dirs {
            let Ok(entries) = std::fs::read_dir(d) else {
                continue;
            };
            let mut modules: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            modules.sort();
            for m in modules {
                let lib = m.join("lib");
                if lib.is_dir() {
                    out.push(lib.to_string_lossy().into_owned());
                }
            }
        }
        out
    }
}

/// `dir/a/b.rb` -> `a::b`.
fn collect_rb(dir: &Path, prefix: &str, out: &mut std::collections::HashSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() {
            collect_rb(&p, &format!("{prefix}{stem}::"), out);
        } else if p.extension().is_some_and(|x| x == "rb") {
            out.insert(format!("{prefix}{stem}"));
        }
    }
}

impl Loader for FsLoader {
    fn load(&self, module: &str, path: &str) -> Option<(String, String)> {
        self.dirs.iter().find_map(|d| {
            let p = d.join(module).join(path);
            let text = self.files.read(&p)?;
            Some((p.to_string_lossy().into_owned(), text.to_string()))
        })
    }

    fn has_module(&self, module: &str) -> bool {
        self.module_dir(module).is_some()
    }

    fn module_dir(&self, module: &str) -> Option<String> {
        memo(&self.files.module_dirs, module, || {
            let dir = self
                .dirs
                .iter()
                .map(|d| d.join(module))
                .find(|p| p.is_dir())?;
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            Some(dir.to_string_lossy().into_owned())
        })
    }

    fn has_ruby_type(&self, name: &str) -> bool {
        self.ruby_types().contains(name)
    }

    fn type_schema(&self, name: &str) -> Option<eval::type_schema::TypeSchema> {
        if !self.data.has_types_file() && self.has_ruby_type_file(name) {
            let schemas = self
                .files
                .ruby_schemas
                .get_or_init(|| crate::cli::ruby_types::schemas(&self.dirs));
            if let Some(s) = schemas.get(name) {
                return Some(s.clone());
            }
        }
        self.data.type_schema(&self.dirs, name, &self.files)
    }

    fn ruby_type_namevar(&self, name: &str) -> Option<String> {
        memo(&self.files.namevars, name, || {
            let file = format!("{name}.rb");
            self.dirs.iter().find_map(|d| {
                std::fs::read_dir(d).ok()?.flatten().find_map(|m| {
                    let p = m.path().join("lib/puppet/type").join(&file);
                    let src = std::fs::read_to_string(p).ok()?;
                    Some(eval::type_schema::namevar_from_ruby(&src))
                })
            })
        })
    }

    fn load_data(&self, path: &str) -> Result<Option<std::sync::Arc<str>>, String> {
        self.data.load(&self.dirs, path, &self.files)
    }

    fn hiera_config_name(&self) -> Option<String> {
        self.data.hiera_config_name()
    }

    fn has_ruby_function(&self, name: &str) -> bool {
        self.ruby_functions().contains(name)
    }

    fn ruby_function_file(&self, name: &str) -> Option<eval::RubyFunctionFile> {
        if !self.has_ruby_function(name) {
            return None;
        }
        let file = |dir: &Path, legacy: bool| {
            dir.is_file().then(|| eval::RubyFunctionFile {
                path: dir.to_string_lossy().into_owned(),
                legacy,
            })
        };
        let modern = format!("lib/puppet/functions/{}.rb", name.replace("::", "/"));
        if let Some((module, _)) = name.split_once("::") {
            // A namespaced function lives in the module it names.
            return self
                .dirs
                .iter()
                .find_map(|d| file(&d.join(module).join(&modern), false));
        }
        let legacy = format!("lib/puppet/parser/functions/{name}.rb");
        let modules = || {
            self.dirs
                .iter()
                .filter_map(|d| std::fs::read_dir(d).ok())
                .flat_map(|entries| {
                    let mut m: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
                    m.sort();
                    m
                })
        };
        modules()
            .find_map(|m| file(&m.join(&modern), false))
            .or_else(|| modules().find_map(|m| file(&m.join(&legacy), true)))
    }

    fn ruby(&self) -> Option<&dyn eval::RubyRuntime> {
        self.ruby.as_deref().map(|r| r as &dyn eval::RubyRuntime)
    }

    fn ruby_lib_dirs(&self) -> Vec<String> {
        self.files
            .lib_dirs
            .get_or_init(|| self.scan_lib_dirs())
            .clone()
    }

    fn storeconfigs(&self) -> bool {
        self.exports.is_some()
    }

    fn exported_resources(&self, type_name: &str) -> Vec<(String, crate::catalog::Resource)> {
        let want = crate::catalog::capitalize_type(type_name);
        self.exports
            .iter()
            .flatten()
            .filter(|(_, r)| crate::catalog::capitalize_type(&r.type_name) == want)
            .cloned()
            .collect()
    }

    fn parse_cache(&self) -> Option<&eval::parse_cache::ParseCache> {
        self.parse_cache.as_deref()
    }

    fn host(&self) -> &dyn eval::host::Host {
        &self.host
    }
}

/// What a compile needs besides the manifest: the node, its facts, the modules.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CompileInputs {
    /// The node name (certname; default: this machine's hostname).
    #[arg(long, alias = "certname")]
    pub node: Option<String>,
    /// Facts as JSON or YAML (default: gathered from this machine).
    #[arg(long)]
    pub facts: Option<PathBuf>,
    /// Module directories, separated with ':' (the option may be repeated).
    #[arg(long)]
    pub modulepath: Vec<String>,
    /// Unknown variables are errors.
    #[arg(long)]
    pub strict_variables: bool,
    /// A Hiera 5 config for the global layer.
    #[arg(long)]
    pub hiera_config: Option<PathBuf>,
    /// Resource type schemas (JSON, as resource-type-schemas.json) for Ruby types.
    #[arg(long)]
    pub types: Option<PathBuf>,
    /// Keep exported resources (`@@`) in a store under the state directory and collect
    /// those of other nodes (`<<| |>>`), standing in for PuppetDB (Puppet's storeconfigs).
    #[arg(long)]
    pub storeconfigs: bool,
    /// The state directory holding the store (set from the subcommand's `--state-dir`).
    #[arg(skip)]
    pub state_dir: Option<PathBuf>,
    /// Resolve `Deferred` values at the end of the compile (set by `ordo apply`).
    #[arg(skip)]
    pub resolve_deferred: bool,
    /// The manifest's text, given on the command line (`-e`) or read from stdin, in place of
    /// the manifest file (set by `ordo apply`).
    #[arg(skip)]
    pub code: Option<String>,
    /// Compile-time log lines as `puppet apply` prints them: notices (and info lines when
    /// verbose) on stdout, warnings and errors on stderr (set by `ordo apply`; `ordo compile`
    /// keeps stdout for the catalog).
    #[arg(skip)]
    pub console: Option<Console>,
    /// What a compile server knows of the node (set by `ordo serve`).
    #[arg(skip)]
    pub server: Option<eval::ServerContext>,
    /// When the compile is stopped (set by `ordo serve` from `--timeout`).
    #[arg(skip)]
    pub deadline: Option<std::time::Instant>,
}

/// Where `puppet apply` prints compile-time log lines, and from which level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Console {
    /// `--verbose`: info lines too.
    pub verbose: bool,
    /// `--debug`: debug lines too.
    pub debug: bool,
    /// Puppet's console colours on stdout, on stderr.
    pub color_out: bool,
    pub color_err: bool,
    /// `--log-format puppet`: errors as Puppet's lines, also on a terminal.
    pub puppet: bool,
}

/// A console line in Puppet's colour for its level (`colorize` in util/colors.rb).
pub fn puppet_color(level: eval::LogLevel, text: &str) -> String {
    let code = match level {
        eval::LogLevel::Debug => "\x1b[0;36m",
        eval::LogLevel::Info => "\x1b[0;32m",
        eval::LogLevel::Notice => "\x1b[m",
        eval::LogLevel::Warning => "\x1b[1;33m",
        _ => "\x1b[1;31m",
    };
    format!("{code}{text}\x1b[0m")
}

/// The node a compile is for: `--node`/`--certname`, else this machine's hostname.
pub fn node_name(inputs: &CompileInputs) -> String {
    inputs.node.clone().unwrap_or_else(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "localhost".into())
    })
}

impl CompileInputs {
    /// The module directories, in order.
    pub fn module_dirs(&self) -> Vec<String> {
        self.modulepath
            .iter()
            .flat_map(|p| p.split(':'))
            .filter(|d| !d.is_empty())
            .map(String::from)
            .collect()
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct CompileArgs {
    /// The main manifest (default: site.pp).
    pub manifest: Option<PathBuf>,
    #[command(flatten)]
    pub inputs: CompileInputs,
    /// Write the catalog here instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Indent the JSON catalog (two spaces a level) instead of printing it compact, on one
    /// line, as `puppet catalog compile --render-as json` does.
    #[arg(long)]
    pub pretty: bool,
    /// Diagnostics as code frames on stderr (`human`) or as one JSON array on stdout
    /// (`json`, the shape of `ordo parse --format json`), printed when the compile fails.
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::cli::DiagFormat,
    /// Print on stderr the duplicate declarations resolved by `priority` and the merged
    /// order of every defined type's instances (Rudder ordering, Ordo extension).
    #[arg(long)]
    pub explain_priorities: bool,
    /// Ordo's state directory; with `--storeconfigs` it holds the exported-resources store.
    #[arg(long, default_value = crate::apply::state::DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
    /// Compile one catalog per node: DIR holds a facts file per node (`NODE.json` or
    /// `NODE.yaml`); each catalog is written to `--outdir`/NODE.json.
    #[arg(long, value_name = "DIR", requires = "outdir",
          conflicts_with_all = ["output", "explain_priorities", "node", "facts"])]
    pub nodes: Option<PathBuf>,
    /// Where `--nodes` writes the catalogs.
    #[arg(long, value_name = "DIR", requires = "nodes")]
    pub outdir: Option<PathBuf>,
    /// Nodes compiled at once with `--nodes` (default: the available cores).
    #[arg(long, value_name = "N", requires = "nodes",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

/// `ordo compile`: prints the catalog (or writes it to `--output`); returns the exit code.
pub fn run(args: &CompileArgs) -> i32 {
    let manifest = args
        .manifest
        .clone()
        .unwrap_or_else(|| PathBuf::from("site.pp"));
    let mut inputs = args.inputs.clone();
    inputs.state_dir = Some(args.state_dir.clone());
    if let (Some(nodes), Some(outdir)) = (&args.nodes, &args.outdir) {
        let jobs = args.jobs.map(|j| j as usize);
        return super::nodes::run(&manifest, nodes, outdir, &inputs, jobs, args.pretty);
    }
    // Unless the catalog is explained, it is only written: written as it is built.
    let mode = if args.explain_priorities {
        Mode::Catalog
    } else {
        Mode::Write
    };
    let result = match checked_result(&manifest, &inputs, mode) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if let (true, Some(catalog)) = (args.explain_priorities, &result.catalog) {
        eprint!(
            "{}",
            super::priorities::explain(catalog, &result.priorities)
        );
    }
    let code = match &args.output {
        Some(p) => {
            let written = super::output_file::write_with(p, &mut |w| {
                write_result(&mut &mut *w, &result, args.pretty)
            });
            match written {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("Error: {e}");
                    1
                }
            }
        }
        None => {
            let out: Box<dyn Write> = match stdout_file() {
                Some(f) => Box::new(f),
                None => Box::new(std::io::stdout().lock()),
            };
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            // A failure is reported with the exit status (see `cli::note_stdout`).
            super::note_stdout(write_result(&mut w, &result, args.pretty).and_then(|_| w.flush()));
            0
        }
    };
    // The process ends right after this: freeing the catalog piece by piece would only cost
    // time (tens of milliseconds on 100,000 resources). The OS takes the memory back.
    std::mem::forget(result);
    code
}

/// Standard output as a plain file (a copy of its descriptor), for writing a catalog in
/// big pieces: `Stdout` is line-buffered and looks for the last new line in every piece
/// it is given (4 million instructions for the compact catalog of mixed 10k, which has
/// none, against 45 million for writing it).
fn stdout_file() -> Option<std::fs::File> {
    use std::os::fd::AsFd;
    let out = std::io::stdout();
    out.lock().flush().ok()?;
    out.as_fd()
        .try_clone_to_owned()
        .ok()
        .map(std::fs::File::from)
}

/// Writes the catalog of a successful compile as [`write_catalog`] does.
fn write_result(
    w: &mut impl Write,
    result: &eval::CompileResult,
    pretty: bool,
) -> std::io::Result<()> {
    match (&result.catalog, &result.catalog_source) {
        (Some(catalog), _) => write_catalog(w, catalog, pretty),
        (None, Some(source)) => {
            source.write_json(w, pretty)?;
            w.write_all(b"\n")
        }
        (None, None) => Ok(()),
    }
}

/// The catalog as `ordo compile` prints it: JSON (compact, or indented when `pretty`) and
/// a newline, streamed.
pub fn write_catalog(w: &mut impl Write, catalog: &Catalog, pretty: bool) -> std::io::Result<()> {
    catalog.write_json(w, pretty)?;
    w.write_all(b"\n")
}

/// Compiles a manifest into a catalog, printing compile-time log lines and errors on stderr
/// as Puppet does. `Err` carries the exit code.
pub fn compile_manifest(manifest: &Path, inputs: &CompileInputs) -> Result<Catalog, i32> {
    compile_manifest_with_priorities(manifest, inputs).map(|(c, _)| c)
}

/// [`compile_manifest`], also returning the conflicts resolved by `priority`.
pub fn compile_manifest_with_priorities(
    manifest: &Path,
    inputs: &CompileInputs,
) -> Result<(Catalog, Vec<eval::priority::PriorityConflict>), i32> {
    let mut result = checked_result(manifest, inputs, Mode::Catalog)?;
    let conflicts = std::mem::take(&mut result.priorities);
    result.catalog.map(|c| (c, conflicts)).ok_or(1)
}

/// Compiles a manifest, printing compile-time log lines and errors on stderr as Puppet does
/// and saving exported resources (storeconfigs): the result when it has a catalog (or, for
/// [`Mode::Write`], a catalog source). `Err` carries the exit code.
fn checked_result(
    manifest: &Path,
    inputs: &CompileInputs,
    mode: Mode,
) -> Result<eval::CompileResult, i32> {
    let (result, node) = compile_result_with(manifest, inputs, mode)?;
    let mut err = std::io::stderr().lock();
    // Puppet's default log level is notice: `info()` and `debug()` print nothing.
    let console = inputs.console;
    for l in &result.logs {
        let shown = match l.level {
            eval::LogLevel::Info => console.is_some_and(|c| c.verbose || c.debug),
            eval::LogLevel::Debug => console.is_some_and(|c| c.debug),
            _ => true,
        };
        if !shown {
            continue;
        }
        let to_stdout = console.is_some()
            && matches!(
                l.level,
                eval::LogLevel::Notice | eval::LogLevel::Info | eval::LogLevel::Debug
            );
        let color = console.is_some_and(|c| if to_stdout { c.color_out } else { c.color_err });
        let text = if color {
            puppet_color(l.level, &l.render())
        } else {
            l.render()
        };
        if to_stdout {
            outln!("{text}");
        } else {
            let _ = writeln!(err, "{text}");
        }
    }
    let errors: Vec<_> = result.diagnostics.iter().filter(|d| d.is_error()).collect();
    let built = result.catalog.is_some() || result.catalog_source.is_some();
    match result {
        result if built && errors.is_empty() => {
            if inputs.storeconfigs {
                if let Err(e) = export_store(inputs).save(&node, &result.exported) {
                    let _ = writeln!(err, "Error: {e}");
                    return Err(1);
                }
            }
            Ok(result)
        }
        _ => {
            // As `ordo check` draws them: always for `ordo apply` in Ordo's log format, on a
            // terminal for `ordo compile`; otherwise Puppet's lines, which tools compare.
            use std::io::IsTerminal;
            let framed = match console {
                Some(c) => !c.puppet,
                None => std::io::stderr().is_terminal(),
            };
            drop(err);
            report_errors(&errors, &result.sources, &node, framed);
            Err(1)
        }
    }
}

/// Compiles a manifest without printing anything: the result and the node name. `Err` (the
/// exit code) when the manifest or the facts cannot be read (already printed).
pub fn compile_result(
    manifest: &Path,
    inputs: &CompileInputs,
) -> Result<(eval::CompileResult, String), i32> {
    compile_result_with(manifest, inputs, Mode::Provenance)
}

/// [`compile_result`] for `ordo check`: every missing relationship target is reported.
pub fn check_result(
    manifest: &Path,
    inputs: &CompileInputs,
) -> Result<(eval::CompileResult, String), i32> {
    compile_result_with(manifest, inputs, Mode::Check)
}

/// What a compile gives besides log lines and diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The catalog and where things came from (for `ordo check` and `ordo explain`, which
    /// exit once done with them).
    Provenance,
    /// As `Provenance`, with every missing relationship target reported (`ordo check`).
    Check,
    /// The catalog; the provenance stays empty.
    Catalog,
    /// A catalog source to write (see [`eval::compile_to_write`]).
    Write,
}

/// [`compile_result`] in the given mode.
fn compile_result_with(
    manifest: &Path,
    inputs: &CompileInputs,
    mode: Mode,
) -> Result<(eval::CompileResult, String), i32> {
    let text = match &inputs.code {
        Some(code) => code.clone(),
        None => crate::input::read_to_string(manifest).map_err(|e| {
            let message = format!("Could not read manifest {}: {e}", manifest.display());
            if crate::cli::json_diagnostics() {
                crate::cli::emit_plain(&crate::diagnostics::Diagnostic::error(
                    "unreadable",
                    message,
                ));
            } else {
                eprintln!("Error: {message}");
            }
            1
        })?,
    };
    let node = node_name(inputs);
    let facts = match &inputs.facts {
        Some(p) => crate::facts::read_facts(p).map_err(|refusal| {
            crate::cli::emit(&refusal.diagnostic, &refusal.sources);
            1
        })?,
        None => {
            let dirs: Vec<PathBuf> = inputs.module_dirs().iter().map(PathBuf::from).collect();
            crate::facts::local_facts(&node, &dirs)
        }
    };
    let result = compile_text(manifest, &text, &node, facts, inputs, None, mode).map_err(|e| {
        eprintln!("Error: {e}");
        1
    })?;
    Ok((result, node))
}

/// Compiles manifest text for a node with its facts; `cache` shares parsed files with other
/// compiles of the same code; `mode` says what the result carries.
/// `Err` when the exported-resources store cannot be read.
pub fn compile_text(
    manifest: &Path,
    text: &str,
    node: &str,
    facts: serde_json::Value,
    inputs: &CompileInputs,
    shared: Option<Shared>,
    mode: Mode,
) -> Result<eval::CompileResult, String> {
    let opts = CompileOptions {
        node: node.to_string(),
        facts,
        strict_variables: inputs.strict_variables,
        resolve_deferred: inputs.resolve_deferred,
        server: inputs.server.clone(),
    };
    let modulepath = inputs.module_dirs().join(":");
    let mut loader = FsLoader::new(Some(&modulepath));
    loader.data = crate::cli::data::DataDirs::new(
        manifest,
        inputs.hiera_config.clone(),
        inputs.types.clone(),
    );
    if inputs.storeconfigs {
        loader.exports = Some(export_store(inputs).load_all()?);
    }
    if let Some((trees, files)) = shared {
        loader.parse_cache = Some(trees);
        loader.files = files;
    }
    loader.ruby = Some(crate::ruby::shared());
    loader.host.deadline = inputs.deadline;
    let name = display_name(manifest);
    Ok(match mode {
        Mode::Provenance => eval::compile_exiting(&name, text, &loader, &opts),
        Mode::Check => eval::compile_checking(&name, text, &loader, &opts, true),
        Mode::Catalog => eval::compile_catalog(&name, text, &loader, &opts),
        Mode::Write => eval::compile_to_write(&name, text, &loader, &opts),
    })
}

/// The text `ordo compile` writes for a catalog (`-o` file or stdout line), compact or
/// indented.
pub fn catalog_text(catalog: &Catalog, pretty: bool) -> Vec<u8> {
    // Room for a usual resource (a few hundred bytes) each: few regrowths, each a copy.
    let mut text = Vec::with_capacity(4096 + 512 * catalog.resources.len());
    // Writing to a Vec cannot fail.
    let _ = write_catalog(&mut text, catalog, pretty);
    text
}

/// The exported-resources store of the inputs' state directory.
pub fn export_store(inputs: &CompileInputs) -> crate::cli::store::ExportStore {
    let dir = inputs
        .state_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::apply::state::DEFAULT_STATE_DIR));
    crate::cli::store::ExportStore::new(&dir)
}

fn display_name(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Compile errors drawn as `ordo check` draws them (`framed`), or as Puppet's lines.
pub fn error_text(
    errors: &[&crate::diagnostics::Diagnostic],
    sources: &crate::span::SourceMap,
    node: &str,
    framed: bool,
) -> String {
    let mut text = String::new();
    for d in errors {
        if framed {
            let d = crate::check::shown_compile_error((*d).clone(), sources);
            let opts = crate::cli::stderr_render_options();
            text.push_str(&crate::diagnostics::render(&d, sources, opts));
        } else {
            text.push_str(&error_line(d, node));
            text.push('\n');
        }
    }
    text
}

/// Reports compile errors on stderr as [`error_text`] draws them, or keeps them for the JSON
/// array of `--format json` (as `ordo check` shows them).
pub fn report_errors(
    errors: &[&crate::diagnostics::Diagnostic],
    sources: &crate::span::SourceMap,
    node: &str,
    framed: bool,
) {
    if crate::cli::json_diagnostics() {
        for d in errors {
            let d = crate::check::shown_compile_error((*d).clone(), sources);
            crate::cli::emit(&d, sources);
        }
    } else {
        eprint!("{}", error_text(errors, sources, node, framed));
    }
}

/// A compile error as Puppet prints it: `Error: MESSAGE on node NODE`; the validation errors
/// logged before Puppet gives up name no node.
pub fn error_line(d: &crate::diagnostics::Diagnostic, node: &str) -> String {
    // Control characters escaped: a binary file's bytes stay off the terminal.
    let message = crate::diagnostics::printable(&d.message);
    if d.code == "validation-logged" {
        format!("Error: {message}")
    } else {
        format!("Error: {message} on node {node}")
    }
}
