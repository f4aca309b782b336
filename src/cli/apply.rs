//! `ordo apply CATALOG.json`: apply a catalog to this machine.

use super::compile::CompileInputs;
use super::{load_input, stdout_color};
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
    /// The manifest (.pp) or catalog (JSON) to apply.
    pub file: PathBuf,
    /// Report what would change without changing anything (exit 0 even with pending changes).
    #[arg(long)]
    pub noop: bool,
    /// Exit 0 (no change), 2 (changes), 4 (failures), 6 (both); 1 when the catalog is refused.
    #[arg(long)]
    pub detailed_exitcodes: bool,
    /// `puppet`: exactly Puppet's log lines; `human`: short lines, colour, a summary.
    #[arg(long, default_value = "human")]
    pub log_format: LogFormat,
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
        o.pending_file = Some(state.pending_path(&self.file));
        o.schedule_file = Some(self.state_dir.join("schedules.json"));
        o
    }
}

/// `ordo apply FILE`: a manifest (compiled first) or a catalog file. Returns the exit status.
pub fn run(args: &ApplyArgs) -> i32 {
    let mut inputs = args.inputs.clone();
    inputs.state_dir = Some(args.state_dir.clone());
    inputs.resolve_deferred = true;
    match load_input(&args.file, &inputs) {
        Ok(catalog) => run_catalog(&catalog, args),
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

/// The log on stdout, buffered: on a terminal every line is flushed at once; otherwise at
/// most every 100 ms and at the end of the run, so that a run of 1,000 files does not make
/// 1,000 writes.
struct LogOut {
    buf: std::io::BufWriter<std::io::Stdout>,
    tty: bool,
    flushed: std::time::Instant,
}

impl LogOut {
    fn new() -> LogOut {
        use std::io::IsTerminal;
        LogOut {
            buf: std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout()),
            tty: std::io::stdout().is_terminal(),
            flushed: std::time::Instant::now(),
        }
    }

    fn line(&mut self, text: &str) {
        let _ = writeln!(self.buf, "{text}");
        if self.tty || self.flushed.elapsed() >= std::time::Duration::from_millis(100) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let _ = self.buf.flush();
        self.flushed = std::time::Instant::now();
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
    let format = args.log_format;
    // A Salt return printed on stdout sends the log to stderr.
    let salt_on_stdout = args.report_format == ReportFormat::Salt && args.report.is_none();
    let color = if salt_on_stdout {
        false
    } else {
        stdout_color()
    };
    let mut out = LogOut::new();
    let mut sink = |line: &LogLine| {
        // Debug lines (`loglevel => debug`) are Puppet's `--debug` output: not printed.
        if line.level == Level::Debug {
            return;
        }
        let text = match format {
            LogFormat::Puppet => line.puppet(),
            LogFormat::Human => line.human(color),
        };
        if salt_on_stdout {
            eprintln!("{text}");
        } else {
            out.line(&text);
        }
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
    match stop_flag() {
        Ok(flag) => opts.stop = flag,
        Err(e) => eprintln!("Warning: {e}; SIGINT and SIGTERM will end the run at once"),
    }
    let result = apply(catalog, &opts, &mut sink);
    out.flush();
    if format == LogFormat::Human {
        if salt_on_stdout {
            eprintln!("{}", summary(&result));
        } else {
            outln!("{}", summary(&result));
        }
    }
    let mut report = result.report.clone();
    report.logs = result.log.clone();
    let text = match args.report_format {
        ReportFormat::Ordo => report.to_json(),
        ReportFormat::Salt => {
            serde_json::to_string_pretty(&crate::apply::salt::salt_return(&report, catalog))
                .expect("a Salt return serialises")
        }
    };
    let code = result.exit_code(args.detailed_exitcodes);
    match &args.report {
        // A report that could not be written fails the run (1 unless it failed already).
        Some(path) if !write_report(path, &text) => report_failed(code),
        Some(_) => code,
        None if salt_on_stdout => {
            outln!("{text}");
            code
        }
        None => code,
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
