//! `ordo apply CATALOG.json`: apply a catalog to this machine.

use super::compile::CompileInputs;
use super::load_input;
use crate::apply::lock::ApplyLock;
use crate::apply::log::{Level, LogFormat, LogLine};
use crate::apply::state::{StateDir, DEFAULT_STATE_DIR};
use crate::apply::{apply, signals, ApplyOptions, Report, RunResult};
use crate::catalog::Catalog;
use crate::graph::Ordering;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct ApplyArgs {
    /// The manifest (.pp) or catalog (JSON) to apply; `-` (or nothing) reads a manifest
    /// from stdin, as `puppet apply` does.
    #[arg(default_value = "-")]
    pub file: PathBuf,
    /// Apply this manifest code instead of a file (`puppet apply -e`).
    #[arg(short = 'e', long = "execute", value_name = "CODE")]
    pub execute: Option<String>,
    /// Print info lines too (Puppet's `--verbose`).
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Print debug lines too (Puppet's `--debug`).
    #[arg(short = 'd', long)]
    pub debug: bool,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), ansi/true/yes/always, or
    /// false/no/never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
    /// Report what would change without changing anything (exit 0 even with pending changes).
    #[arg(long)]
    pub noop: bool,
    /// Exit 0 (no change), 2 (changes), 4 (failures), 6 (both); 1 when the catalog is refused.
    #[arg(long)]
    pub detailed_exitcodes: bool,
    /// `puppet`: exactly Puppet's log lines; `human`: short lines, colour, a summary.
    #[arg(long, default_value = "human")]
    pub log_format: LogFormat,
    /// Diagnostics that refuse the run (compile errors, a catalog that fails validation, a
    /// cycle) as code frames on stderr (`human`) or as one JSON array on stdout (`json`, the
    /// shape of `ordo parse --format json`).
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::cli::DiagFormat,
    /// With `--log-format puppet`: warnings and errors on stderr, as `puppet apply` writes
    /// them. Without it, Puppet's lines are one transcript on stdout, in order (what tools
    /// that read stdout and stderr apart need); Ordo's own format always splits them.
    #[arg(long)]
    pub split_streams: bool,
    /// Write a JSON report of the run to this file.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Apply up to N independent resources at once.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Order of unrelated resources: manifest, title-hash, random[:SEED] or alphanumeric
    /// (Rudder's technique-by-technique order, with `priority`).
    #[arg(long, default_value = "manifest")]
    pub ordering: Ordering,
    /// Ordo's state directory: the lock, the bucket and pending refreshes (see
    /// docs/apply-safety.md).
    #[arg(long, default_value = DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
    /// Back up replaced and removed file content into the bucket unless a file says otherwise
    /// (as `File { backup => puppet }`); Puppet 7's default, and Ordo's, is no backup.
    #[arg(long)]
    pub backup: bool,
    /// Where replaced files are backed up (`backup => puppet`); default STATE_DIR/clientbucket.
    #[arg(long = "bucket", alias = "bucket-dir")]
    pub bucket_dir: Option<PathBuf>,
    /// Node, facts and modules for compiling a manifest (the module path also serves
    /// `puppet:///modules/...` file sources).
    #[command(flatten)]
    pub inputs: CompileInputs,
    /// End the run at the first failure (Salt's failhard; a resource's `failhard => false`
    /// keeps going).
    #[arg(long)]
    pub failhard: bool,
    /// Format of the report: `ordo` (Ordo's JSON) or `salt` (Salt's state return). Without
    /// `--report`, a Salt return is printed on stdout and the log goes to stderr.
    #[arg(long, default_value = "ordo")]
    pub report_format: ReportFormat,
    /// Manage users, groups and dpkg packages of the system installed under DIR
    /// (`useradd --root DIR`, `DIR/etc/passwd`, `dpkg --root=DIR`), for images and tests.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,
    /// Apply only the resources with one of these tags (comma-separated), as Puppet's
    /// `--tags`.
    #[arg(long, value_delimiter = ',', value_name = "TAGS")]
    pub tags: Vec<String>,
    /// Do not apply the resources with one of these tags (comma-separated), as Puppet's
    /// `--skip_tags`.
    #[arg(
        long = "skip_tags",
        alias = "skip-tags",
        value_delimiter = ',',
        value_name = "TAGS"
    )]
    pub skip_tags: Vec<String>,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl std::str::FromStr for ColorChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<ColorChoice, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(ColorChoice::Auto),
            "ansi" | "true" | "yes" | "always" => Ok(ColorChoice::Always),
            "false" | "no" | "never" => Ok(ColorChoice::Never),
            _ => Err(format!(
                "unknown colour setting '{s}' (expected auto, ansi, true, yes, always, false, no or never)"
            )),
        }
    }
}

impl ColorChoice {
    /// Colour on this stream?
    fn on(self, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReportFormat {
    #[default]
    Ordo,
    Salt,
}

impl std::str::FromStr for ReportFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<ReportFormat, String> {
        match s {
            "ordo" => Ok(ReportFormat::Ordo),
            "salt" => Ok(ReportFormat::Salt),
            _ => Err(format!(
                "unknown report format '{s}' (expected ordo or salt)"
            )),
        }
    }
}

/// Tags as given on the command line, in lowercase as Puppet stores them.
fn tag_list(tags: &[String]) -> Vec<String> {
    tags.iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

impl ApplyArgs {
    pub fn options(&self) -> ApplyOptions {
        let mut o = ApplyOptions {
            noop: self.noop,
            ordering: self.ordering,
            modulepath: self
                .inputs
                .module_dirs()
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            jobs: self.jobs.max(1),
            failhard: self.failhard,
            sysroot: self.sysroot.clone(),
            tags: tag_list(&self.tags),
            skip_tags: tag_list(&self.skip_tags),
            ..ApplyOptions::default()
        };
        let state = StateDir::new(&self.state_dir);
        o.bucket_dir = self
            .bucket_dir
            .clone()
            .unwrap_or_else(|| state.bucket_dir());
        o.pending_file = Some(state.pending_path(&self.input_name()));
        o.schedule_file = Some(self.state_dir.join("schedules.json"));
        o
    }
}

impl ApplyArgs {
    /// Manifest code given on the command line or on stdin, not in a file.
    fn inline(&self) -> bool {
        self.execute.is_some() || self.file.as_os_str() == "-"
    }

    /// What the pending refreshes of this input are kept under: the file, or `-e`/`-`.
    fn input_name(&self) -> PathBuf {
        match &self.execute {
            Some(_) => PathBuf::from("-e"),
            None => self.file.clone(),
        }
    }
}

/// `ordo apply FILE`: a manifest (compiled first) or a catalog file. Returns the exit status.
pub fn run(args: &ApplyArgs) -> i32 {
    let mut inputs = args.inputs.clone();
    inputs.state_dir = Some(args.state_dir.clone());
    inputs.resolve_deferred = true;
    use std::io::IsTerminal;
    inputs.console = Some(crate::cli::compile::Console {
        verbose: args.verbose,
        debug: args.debug,
        color_out: args.color.on(std::io::stdout().is_terminal()),
        color_err: args.color.on(std::io::stderr().is_terminal()),
        puppet: args.log_format == LogFormat::Puppet,
    })
    // A Salt return printed on stdout keeps stdout for itself.
    .filter(|_| !(args.report_format == ReportFormat::Salt && args.report.is_none()));
    if args.inline() {
        inputs.code = Some(match &args.execute {
            Some(code) => code.clone(),
            None => {
                let mut text = String::new();
                if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                    eprintln!("Error: Could not read the manifest from stdin: {e}");
                    return 1;
                }
                text
            }
        });
    }
    let started = std::time::Instant::now();
    let input = if args.inline() {
        crate::cli::compile::compile_manifest(&args.input_name(), &inputs)
    } else {
        load_input(&args.file, &inputs)
    };
    match input {
        Ok(mut catalog) => {
            let compiled = args.inline() || !crate::cli::is_catalog_file(&args.file);
            if compiled && catalog.version == 0 {
                // Puppet's catalog version is the time of the compile (`config_version`
                // unset); `ordo compile` leaves 0 so that its output is reproducible.
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                catalog.version = serde_json::Value::from(now);
            }
            if compiled && args.log_format == LogFormat::Puppet {
                // As `puppet apply`, which compiles in the environment `production`.
                let line = LogLine::new(
                    Level::Notice,
                    None,
                    format!(
                        "Compiled catalog for {} in environment production in {:.2} seconds",
                        crate::cli::compile::node_name(&inputs),
                        started.elapsed().as_secs_f64()
                    ),
                );
                if args.color.on(std::io::stdout().is_terminal()) {
                    outln!("{}", puppet_colored(&line));
                } else {
                    outln!("{}", line.puppet());
                }
            }
            run_catalog(&catalog, args)
        }
        Err(code) => {
            if let Some(path) = &args.report {
                let mut report = Report::refused(args.noop);
                report.logs = vec![LogLine::new(
                    Level::Error,
                    None,
                    format!("{} was refused before any change", args.file.display()),
                )];
                // The run fails already: a report that cannot be written only adds its error.
                write_report(path, &report.to_json());
            }
            code
        }
    }
}

/// Writes the report (see `output_file`: atomically, 0600, or through a device or FIFO).
/// Returns false, after saying why, when it could not be written: the run then fails.
fn write_report(path: &std::path::Path, text: &str) -> bool {
    match super::output_file::write(path, text.as_bytes()) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("Error: Could not write the report: {e}");
            false
        }
    }
}

/// The log of a run, as Puppet's console prints it: notices, info and debug lines on stdout
/// (buffered: on a terminal every line is flushed at once; otherwise at most every 100 ms and
/// at the end of the run, so that a run of 1,000 files does not make 1,000 writes), warnings
/// and errors on stderr (stdout is flushed first, so that the two keep their order when they
/// go to one place). On a terminal, a run that takes more than a few seconds also shows a
/// progress line on stderr (see [`Ticker`]).
struct LogOut {
    buf: std::io::BufWriter<std::io::Stdout>,
    tty: bool,
    flushed: std::time::Instant,
    /// Whether the progress line is on the screen (cleared before a line is written).
    progress: Option<std::sync::Arc<std::sync::Mutex<bool>>>,
}

impl LogOut {
    fn new() -> LogOut {
        use std::io::IsTerminal;
        LogOut {
            buf: std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout()),
            tty: std::io::stdout().is_terminal(),
            flushed: std::time::Instant::now(),
            progress: None,
        }
    }

    /// Writes a line on stdout, or on stderr when `to_stderr`.
    fn line(&mut self, text: &str, to_stderr: bool) {
        let shown = self.progress.clone();
        let mut shown = shown
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(s) = shown.as_deref_mut().filter(|s| **s) {
            eprint!("\r\x1b[K");
            *s = false;
        }
        if to_stderr {
            self.flush();
            eprintln!("{text}");
            return;
        }
        let _ = writeln!(self.buf, "{text}");
        if self.tty || self.flushed.elapsed() >= std::time::Duration::from_millis(100) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        crate::cli::note_stdout(self.buf.flush());
        self.flushed = std::time::Instant::now();
    }
}

/// Draws the progress line on stderr (a terminal) while a run goes on: from two seconds in,
/// redrawn four times a second; cleared before every log line and at the end.
struct Ticker {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    shown: std::sync::Arc<std::sync::Mutex<bool>>,
}

impl Ticker {
    fn start(progress: crate::apply::progress::Progress) -> Ticker {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};
        let stop = Arc::new(AtomicBool::new(false));
        let shown = Arc::new(Mutex::new(false));
        let (stop2, shown2) = (Arc::clone(&stop), Arc::clone(&shown));
        let thread = std::thread::spawn(move || {
            let began = std::time::Instant::now();
            let mut walk_began = None;
            while !stop2.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(250));
                let (done, total) = progress.get();
                if total == 0 {
                    continue; // the walk has not started
                }
                let walk = *walk_began.get_or_insert_with(std::time::Instant::now);
                if began.elapsed() < std::time::Duration::from_secs(2) {
                    continue;
                }
                let text = crate::apply::progress::line(done, total, walk.elapsed().as_secs_f64());
                let mut s = shown2.lock().unwrap_or_else(|e| e.into_inner());
                if stop2.load(Ordering::Relaxed) {
                    break;
                }
                eprint!("\r\x1b[K{text}");
                *s = true;
            }
        });
        Ticker {
            stop,
            thread: Some(thread),
            shown,
        }
    }

    fn finish(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut s = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if *s {
            eprint!("\r\x1b[K");
            *s = false;
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A Puppet-format line in Puppet's console colours (`colorize` in util/colors.rb).
fn puppet_colored(line: &LogLine) -> String {
    let code = match line.level {
        Level::Debug => "\x1b[0;36m",
        Level::Info => "\x1b[0;32m",
        Level::Notice => "\x1b[m",
        Level::Warning => "\x1b[1;33m",
        _ => "\x1b[1;31m",
    };
    format!("{code}{}\x1b[0m", line.puppet())
}

/// The errors that refuse a catalog as diagnostics, each framed at the line of the resource
/// it is about when the catalog names it and the file can be read.
#[derive(Default)]
struct Refusals {
    /// A cycle was among them: drawn once the run is over (see [`Refusals::emit_cycles`]).
    cycles: bool,
    sources: crate::span::SourceMap,
    /// The files read so far (`None`: unreadable).
    files: std::collections::HashMap<std::sync::Arc<str>, Option<crate::span::FileId>>,
}

impl Refusals {
    fn emit(&mut self, line: &LogLine, r: &crate::apply::log::Refusal) {
        use crate::diagnostics::Diagnostic;
        if r.code == "cycle" {
            self.cycles = true;
            return;
        }
        // A cycle's edges follow its path, one an indented line.
        let mut parts = line.message.split("\n    ");
        let head = parts.next().unwrap_or_default();
        let mut d = Diagnostic::error(r.code, crate::check::strip_location(head));
        for p in parts {
            d = d.with_note(p);
        }
        if let (Some(file), Some(n)) = (&r.file, r.line) {
            match self.span(file, n) {
                Some(span) => d = d.with_label(span, "declared here"),
                None => d = d.with_note(format!("declared at {file}:{n}")),
            }
        }
        crate::cli::emit(&d, &self.sources);
    }

    /// The catalog's cycles with a label at the source of each edge, when its files can be
    /// read.
    fn emit_cycles(&mut self, catalog: &Catalog, ordering: crate::graph::Ordering) {
        let (prepared, graph) = crate::graph::requisites::build(catalog, ordering);
        let mut sources = crate::span::SourceMap::default();
        let loc = crate::check::Locator::from_catalog(&prepared, &mut sources, &|f| {
            std::fs::read_to_string(f).ok()
        });
        for d in crate::check::cycles::diagnostics(&graph, &loc, &sources) {
            crate::cli::emit(&d, &sources);
        }
    }

    fn span(&mut self, file: &std::sync::Arc<str>, line: u32) -> Option<crate::span::Span> {
        let sources = &mut self.sources;
        let id = *self.files.entry(file.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(&**file).ok()?;
            Some(sources.add(file.to_string(), text))
        });
        let id = id?;
        crate::check::locate::line_span(self.sources.get(id)?, line as usize, id)
    }
}

/// Installs the SIGINT/SIGTERM handlers once per process; returns the flag they set.
fn stop_flag() -> Result<signals::StopFlag, String> {
    static FLAG: std::sync::OnceLock<Result<signals::StopFlag, String>> =
        std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = signals::StopFlag::new();
        signals::install(flag.clone()).map(|_| flag)
    })
    .clone()
}

/// Applies an already-compiled catalog with the command-line options; prints the log and
/// writes the report. Returns the exit status.
pub fn run_catalog(catalog: &Catalog, args: &ApplyArgs) -> i32 {
    use std::io::IsTerminal;
    let with_backups;
    let catalog = if args.backup {
        with_backups = backup_by_default(catalog);
        &with_backups
    } else {
        catalog
    };
    let format = args.log_format;
    // A Salt return printed on stdout sends the log to stderr.
    let salt_on_stdout = args.report_format == ReportFormat::Salt && args.report.is_none();
    let color_out = !salt_on_stdout && args.color.on(std::io::stdout().is_terminal());
    let color_err = args.color.on(std::io::stderr().is_terminal());
    let mut out = LogOut::new();
    let progress = crate::apply::progress::Progress::new();
    // A progress line for people watching a terminal (stderr); never in Puppet's format,
    // nor when stderr goes to a pipe or a file.
    let mut ticker = (format == LogFormat::Human && std::io::stderr().is_terminal())
        .then(|| Ticker::start(progress.clone()));
    out.progress = ticker.as_ref().map(|t| std::sync::Arc::clone(&t.shown));
    let (verbose, debug) = (args.verbose, args.debug);
    let json = crate::cli::json_diagnostics();
    let refusals = std::cell::RefCell::new(Refusals::default());
    let mut sink = |line: &LogLine| {
        // The errors that refuse the catalog, as every command draws diagnostics (Puppet's
        // log lines keep Puppet's words, unless JSON is asked for).
        if let Some(r) = &line.refusal {
            if json || format == LogFormat::Human {
                refusals.borrow_mut().emit(line, r);
                return;
            }
        }
        // As Puppet's console at its default level: info lines with --verbose (or in Ordo's
        // own format), debug lines with --debug.
        let shown = match line.level {
            Level::Debug => debug,
            Level::Info => verbose || debug || format == LogFormat::Human,
            _ => true,
        };
        if !shown {
            return;
        }
        let to_stderr = salt_on_stdout
            || (line.level >= Level::Warning && (format == LogFormat::Human || args.split_streams));
        let color = if to_stderr { color_err } else { color_out };
        let text = match format {
            LogFormat::Puppet if color => puppet_colored(line),
            LogFormat::Puppet => line.puppet(),
            LogFormat::Human => line.human(color),
        };
        out.line(&text, to_stderr);
    };
    let state = StateDir::new(&args.state_dir);
    // One apply at a time on this machine; the lock lives as long as `_lock`.
    let _lock = match state
        .create()
        .and_then(|_| ApplyLock::acquire(&state.lock_path()))
    {
        Ok(l) => l,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let mut opts = args.options();
    opts.progress = progress;
    opts.puppet_messages = format == LogFormat::Puppet;
    opts.report_details = args.report.is_some() || salt_on_stdout;
    match stop_flag() {
        Ok(flag) => opts.stop = flag,
        Err(e) => eprintln!("Warning: {e}; SIGINT and SIGTERM will end the run at once"),
    }
    if format == LogFormat::Puppet {
        // `puppet apply --verbose` says where it stands before the run.
        let version = match &catalog.version {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        sink(&LogLine::new(
            Level::Info,
            None,
            "Using environment 'production'",
        ));
        sink(&LogLine::new(
            Level::Info,
            None,
            format!("Applying configuration version '{version}'"),
        ));
    }
    let result = apply(catalog, &opts, &mut sink);
    signals::walk_ended();
    if refusals.borrow().cycles {
        // Drawn as `ordo check` draws them: a label at each edge's source.
        refusals.borrow_mut().emit_cycles(catalog, args.ordering);
    }
    if let Some(t) = ticker.as_mut() {
        t.finish();
    }
    if format == LogFormat::Puppet && !result.refused {
        let line = LogLine::new(
            Level::Notice,
            None,
            format!(
                "Applied catalog in {:.2} seconds",
                result.report.summary.time
            ),
        );
        sink(&line);
    }
    out.flush();
    if format == LogFormat::Human {
        if salt_on_stdout || (json && result.refused) {
            eprintln!("{}", summary(&result));
        } else {
            outln!("{}", summary(&result));
        }
    }
    let code = result.exit_code(args.detailed_exitcodes);
    if args.report.is_none() && !salt_on_stdout {
        return code; // no report asked for: none is serialised
    }
    let mut report = result.report;
    report.logs = result.log;
    let text = match args.report_format {
        ReportFormat::Ordo => report.to_json(),
        ReportFormat::Salt => {
            serde_json::to_string_pretty(&crate::apply::salt::salt_return(&report, catalog))
                .expect("a Salt return serialises")
        }
    };
    match &args.report {
        // A report that could not be written fails the run (1 unless it failed already).
        Some(path) if !write_report(path, &text) => report_failed(code),
        Some(_) => code,
        None => {
            outln!("{text}");
            code
        }
    }
}

/// The exit status of a run whose report could not be written: 1, unless the run failed
/// already (a failure's own status is kept).
fn report_failed(code: i32) -> i32 {
    match code {
        0 | 2 => 1,
        c => c,
    }
}

/// `--backup`: every file without a `backup` of its own keeps replaced content in the bucket.
fn backup_by_default(catalog: &Catalog) -> Catalog {
    let mut c = catalog.clone();
    for r in &mut c.resources {
        if r.type_name.eq_ignore_ascii_case("file") && !r.parameters.contains_key("backup") {
            r.parameters
                .insert("backup".into(), serde_json::Value::from("puppet"));
        }
    }
    c
}

/// One line for people at the end of a run.
pub fn summary(r: &RunResult) -> String {
    if r.refused {
        let errors = r.log.iter().filter(|l| l.level == Level::Error).count();
        return format!("refused: {errors} error(s) found before any change; nothing was applied");
    }
    let s = &r.report.summary;
    format!(
        "{}{}{} resources: {} changed, {} unchanged, {} failed, {} skipped{}, {} refreshed in {:.2}s",
        if r.interrupted { "interrupted: " } else { "" },
        if r.report.noop { "noop: " } else { "" },
        s.total,
        s.changed,
        s.unchanged,
        s.failed,
        s.skipped,
        if s.noop > 0 {
            format!(", {} would change", s.noop)
        } else {
            String::new()
        },
        s.restarted,
        s.time
    )
}
