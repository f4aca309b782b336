//! The Ruby that runs the modules' Ruby for the evaluator: a child `ruby` process running
//! `host.rb` (embedded in the binary), started the first time a compile needs it and kept
//! for the whole Ordo process (every node of `--nodes`). See docs/ruby.md.
//!
//! One JSON message a line each way. A request is served by one thread at a time; while
//! Ruby works on it, its callbacks are answered by that thread, which may send nested
//! requests (a lock that the same thread may take again). Each wait for Ruby is bounded
//! ([`CALL_TIMEOUT`]): past it the child is killed and the request fails. The child runs in
//! a network namespace of its own when `unshare` can make one (no network), and what it
//! prints on its standard error is kept for the messages.

// Machine-facing: starts a process (the core's IO rules, clippy.toml, are not this module's).
#![allow(clippy::disallowed_methods)]

use crate::eval::RubyRuntime;
use parking_lot::ReentrantMutex;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Ordo's Ruby side (after its `require`, which `src/facts/custom.rb` shares).
const HOST_RB: &str = concat!(include_str!("require.rb"), include_str!("host.rb"));

/// The longest Ordo waits for one message of Ruby (a function's answer or callback).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// The address space the Ruby child may use (`RLIMIT_AS`, set by host.rb itself at its
/// start): module code or a template that allocates past it fails with Ruby's
/// `NoMemoryError` instead of exhausting the machine.
pub const RUBY_MEMORY: u64 = 2 << 30;

/// The most of Ruby's standard error kept for messages.
const STDERR_KEPT: usize = 8192;

/// The Ruby process of this Ordo process, started on first use.
pub fn shared() -> Arc<RubyProcess> {
    static RUBY: OnceLock<Arc<RubyProcess>> = OnceLock::new();
    RUBY.get_or_init(|| Arc::new(RubyProcess::new("ruby")))
        .clone()
}

pub struct RubyProcess {
    program: String,
    state: ReentrantMutex<RefCell<State>>,
}

enum State {
    NotStarted,
    Running(Running),
    /// Could not start, or died: why (every later request fails the same way).
    Failed(String),
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    stderr: Arc<Mutex<String>>,
}

impl RubyProcess {
    pub fn new(program: &str) -> RubyProcess {
        RubyProcess {
            program: program.to_string(),
            state: ReentrantMutex::new(RefCell::new(State::NotStarted)),
        }
    }

    fn start(&self) -> Result<Running, String> {
        let ruby_args = ["--disable-gems", "--disable-did_you_mean", "-e", HOST_RB];
        // No network for module code: a network namespace of its own, when this machine
        // lets an unprivileged user make one; else plain (docs/ruby.md).
        let isolated = Command::new("unshare")
            .args(["--net", "--map-root-user", &self.program])
            .args(ruby_args)
            .env("ORDO_RUBY_HOST", "1")
            .env("ORDO_RUBY_MEMORY", RUBY_MEMORY.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()
            .and_then(|c| Self::handshake(c).ok());
        if let Some(r) = isolated {
            return Ok(r);
        }
        let child = Command::new(&self.program)
            .args(ruby_args)
            .env("ORDO_RUBY_HOST", "1")
            .env("ORDO_RUBY_MEMORY", RUBY_MEMORY.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "this needs Ruby, and `{}` is not installed (install the package `{}`)",
                    self.program,
                    crate::eval::RUBY_PACKAGE
                ),
                _ => format!("could not start `{}`: {e}", self.program),
            })?;
        Self::handshake(child)
    }

    /// Takes the child's pipes and waits for its answer to a first request.
    fn handshake(mut child: Child) -> Result<Running, String> {
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("Ruby's pipes could not be made".into());
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let end = line.is_err();
                if tx.send(line).is_err() || end {
                    break;
                }
            }
        });
        let kept = Arc::new(Mutex::new(String::new()));
        let sink = kept.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                if s.len() < STDERR_KEPT {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        let mut r = Running {
            child,
            stdin,
            lines,
            stderr: kept,
        };
        match r.exchange(&serde_json::json!({"op": "ping"})) {
            Ok(_) => Ok(r),
            Err(e) => {
                let _ = r.child.kill();
                let _ = r.child.wait();
                Err(e)
            }
        }
    }
}

impl Running {
    fn send(&mut self, msg: &Json) -> Result<(), String> {
        let mut line = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        line.push(b'\n');
        self.stdin
            .write_all(&line)
            .and_then(|_| self.stdin.flush())
            .map_err(|e| self.died(&format!("could not write to Ruby: {e}")))
    }

    fn receive(&mut self) -> Result<Json, String> {
        match self.lines.recv_timeout(CALL_TIMEOUT) {
            Ok(Ok(line)) => serde_json::from_str(&line)
                .map_err(|e| self.died(&format!("Ruby sent a message Ordo cannot read ({e})"))),
            Ok(Err(e)) => Err(self.died(&format!("could not read from Ruby: {e}"))),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(self.died(&format!(
                    "Ruby did not answer within {} seconds and was stopped",
                    CALL_TIMEOUT.as_secs()
                )))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.died("Ruby exited")),
        }
    }

    fn exchange(&mut self, msg: &Json) -> Result<Json, String> {
        self.send(msg)?;
        self.receive()
    }

    /// The message of a failure of the child, with what it printed.
    fn died(&mut self, what: &str) -> String {
        // Let the reader of standard error catch up with the child's last words.
        if let Ok(Some(_)) | Err(_) = self.child.try_wait() {
            std::thread::sleep(Duration::from_millis(20));
        }
        let stderr = self
            .stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if stderr.trim().is_empty() {
            what.to_string()
        } else {
            format!("{what}; Ruby printed:\n{}", stderr.trim_end())
        }
    }
}

impl RubyRuntime for RubyProcess {
    fn available(&self) -> Result<(), String> {
        let guard = self.state.lock();
        let mut state = guard.borrow_mut();
        if let State::NotStarted = *state {
            *state = match self.start() {
                Ok(r) => State::Running(r),
                Err(e) => State::Failed(e),
            };
        }
        match &*state {
            State::Failed(e) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    fn request(&self, request: &Json, host: &mut dyn FnMut(&Json) -> Json) -> Result<Json, String> {
        let guard = self.state.lock();
        self.available()?;
        let failed = |state: &mut State, e: String| {
            if let State::Running(r) = state {
                let _ = r.child.kill();
                let _ = r.child.wait();
            }
            *state = State::Failed(e.clone());
            e
        };
        let mut msg = {
            let mut state = guard.borrow_mut();
            let sent = match &mut *state {
                State::Running(r) => r.exchange(request),
                State::Failed(e) => return Err(e.clone()),
                State::NotStarted => return Err("Ruby did not start".into()),
            };
            sent.map_err(|e| failed(&mut state, e))?
        };
        // Callbacks until the answer; the state is not borrowed while one is answered (it
        // may send requests of its own).
        while msg.get("cb").is_some() {
            let reply = host(&msg);
            let mut state = guard.borrow_mut();
            let sent = match &mut *state {
                State::Running(r) => r.exchange(&reply),
                State::Failed(e) => return Err(e.clone()),
                State::NotStarted => return Err("Ruby did not start".into()),
            };
            msg = sent.map_err(|e| failed(&mut state, e))?;
        }
        Ok(msg)
    }
}

impl Drop for RubyProcess {
    fn drop(&mut self) {
        if let State::Running(r) = &mut *self.state.lock().borrow_mut() {
            // Ruby ends when its input ends; a child that does not is stopped.
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}

/// Why a one-shot run of `ruby` ([`run_once`]) gave nothing.
#[derive(Debug)]
pub enum RunFailure {
    /// No `ruby` on this machine.
    NotInstalled,
    /// It could not start, ran too long, or failed: why.
    Failed(String),
}

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunFailure::NotInstalled => write!(
                f,
                "`ruby` is not installed (install the package `{}`)",
                crate::eval::RUBY_PACKAGE
            ),
            RunFailure::Failed(why) => f.write_str(why),
        }
    }
}

/// Runs `ruby ARGS` once (outside any namespace: what it runs sees this machine), writes
/// `input` on its standard input and returns its standard output; past `timeout` it is
/// killed. A non-zero exit is a failure naming the first line Ruby printed on stderr.
pub fn run_once<A: AsRef<std::ffi::OsStr>>(
    args: &[A],
    input: &[u8],
    timeout: Duration,
) -> Result<String, RunFailure> {
    use std::io::Read;
    let mut child = Command::new("ruby")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => RunFailure::NotInstalled,
            _ => RunFailure::Failed(format!("could not run ruby: {e}")),
        })?;
    let failed = |s: &str| RunFailure::Failed(s.to_string());
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| failed("ruby has no stdin"))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| failed("ruby has no stdout"))?;
    let mut stderr = child
        .stderr
        .take()
        .ok_or_else(|| failed("ruby has no stderr"))?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let errors = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stderr.read_to_string(&mut out);
        out
    });
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunFailure::Failed(format!(
                    "ruby did not finish within {} s and was stopped",
                    timeout.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(RunFailure::Failed(format!("ruby: {e}"))),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = errors.join().unwrap_or_default();
    if !status.success() {
        let first = err.lines().next().unwrap_or("").trim();
        return Err(RunFailure::Failed(format!(
            "ruby failed ({status}): {first}"
        )));
    }
    Ok(out)
}
