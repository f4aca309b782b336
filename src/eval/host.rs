//! The machine as the evaluator may see it.
//!
//! A few of Puppet's functions look at the machine that compiles: `file()` of an absolute
//! path, `loadyaml`/`loadjson`, `glob`, `generate()` runs a command, `Timestamp()` and
//! `time()` read the clock. The evaluator stays pure: it asks a [`Host`], which the loader
//! hands it ([`super::Loader::host`]). The default, [`NoHost`], is an empty machine at the
//! epoch; the CLI gives the real one (`cli::host::SystemHost`).

use std::io;
use std::time::Duration;

/// What a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    File,
    Dir,
    /// Something else: a device, a FIFO, a socket.
    Other,
}

/// A command's end: its exit code (`None` when a signal ended it) and its output, standard
/// output and standard error together.
pub struct CommandOutput {
    pub code: Option<i32>,
    pub output: Vec<u8>,
}

/// The machine's files, commands and clock.
pub trait Host {
    /// The text of a file.
    fn read_file(&self, _path: &str) -> io::Result<String> {
        Err(io::ErrorKind::NotFound.into())
    }

    /// What `path` names, following symbolic links; `None` when nothing is there.
    fn path_kind(&self, _path: &str) -> Option<PathKind> {
        None
    }

    /// The names in a directory (`""`: the working directory), unsorted.
    fn list_dir(&self, _path: &str) -> Vec<String> {
        Vec::new()
    }

    /// The absolute path with links resolved.
    fn canonical_path(&self, _path: &str) -> Option<String> {
        None
    }

    /// Runs `argv` (no shell) in `dir` with no standard input.
    fn run_command(&self, _argv: &[String], _dir: &str) -> io::Result<CommandOutput> {
        Err(io::ErrorKind::PermissionDenied.into())
    }

    /// The time since the Unix epoch.
    fn now(&self) -> Duration {
        Duration::ZERO
    }

    /// Whether whoever started the compile wants it stopped (a compile server's time limit
    /// passed). The evaluator asks at its loop and call boundaries (lambda and function
    /// calls, defined type instances) and ends the compile with an error.
    fn stop_requested(&self) -> bool {
        false
    }

    /// The memory the process holds now (its resident set), in bytes, when known. The
    /// evaluator asks as the strings it makes add up and stops a compile past its bound.
    fn memory_in_use(&self) -> Option<u64> {
        None
    }
}

/// An empty machine at the epoch.
pub struct NoHost;

impl Host for NoHost {}
