//! The real machine behind the evaluator's [`Host`]: files, commands and the clock.

use crate::eval::host::{CommandOutput, Host, PathKind};
use std::io;
use std::time::Duration;

/// This machine, as `ordo compile` and `ordo apply` show it to the evaluator.
#[derive(Default)]
pub struct SystemHost {
    /// When the compile must stop (`ordo serve`'s per-request time limit).
    pub deadline: Option<std::time::Instant>,
}

impl Host for SystemHost {
    fn stop_requested(&self) -> bool {
        self.deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
    }

    fn memory_in_use(&self) -> Option<u64> {
        // `statm`'s second field: resident pages. Linux pages are 4 KiB on the platforms
        // Ordo ships for; an unreadable file answers nothing and the bound is not applied.
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        Some(pages * 4096)
    }

    fn read_file(&self, path: &str) -> io::Result<String> {
        // Regular files only: a FIFO or `/dev/zero` is refused at once.
        crate::input::read_to_string(std::path::Path::new(path))
    }

    fn path_kind(&self, path: &str) -> Option<PathKind> {
        let meta = std::fs::metadata(path).ok()?;
        Some(if meta.is_dir() {
            PathKind::Dir
        } else if meta.is_file() {
            PathKind::File
        } else {
            PathKind::Other
        })
    }

    fn list_dir(&self, path: &str) -> Vec<String> {
        let path = if path.is_empty() { "." } else { path };
        std::fs::read_dir(path)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn canonical_path(&self, path: &str) -> Option<String> {
        std::fs::canonicalize(path)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
    }

    fn run_command(&self, argv: &[String], dir: &str) -> io::Result<CommandOutput> {
        let (program, args) = argv.split_first().ok_or(io::ErrorKind::InvalidInput)?;
        let (mut reader, writer) = io::pipe()?;
        let err_writer = writer.try_clone()?;
        let mut child = std::process::Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .stderr(err_writer)
            .spawn()?;
        let mut output = Vec::new();
        // The command's ends of the pipe went with it: reading stops when it exits.
        let _ = io::Read::read_to_end(&mut reader, &mut output);
        let status = child.wait()?;
        Ok(CommandOutput {
            code: status.code(),
            output,
        })
    }

    fn now(&self) -> Duration {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
    }
}
