//! SIGINT and SIGTERM: stop after the current resource.
//!
//! The first signal asks the run to stop: the resource being applied finishes (a file is
//! written whole or not at all, see `atomic`), no further resource starts, pending refreshes
//! are stored (see `pending`) and the report is written. A second signal also kills the
//! process group of a command still running (an exec that would otherwise hold the stop for
//! up to its timeout), and that resource fails. Once the walk has ended (the log and the
//! report are being written, which a stuck reader of a pipe or FIFO can block for ever), or
//! at the third signal, a signal ends the process at once, as its default action does.
//!
//! Signal handlers need unsafe code; `signal-hook` holds it (the crate denies `unsafe_code`).
//! Its iterator runs the handling on an ordinary thread, so nothing here runs in signal
//! context.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

/// A request to stop the run, shared between the signal thread and the transaction.
#[derive(Clone, Debug, Default)]
pub struct StopFlag(Arc<AtomicI32>);

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Asks the run to stop because of signal `sig` (the first request wins).
    pub fn request(&self, sig: i32) {
        let _ = self
            .0
            .compare_exchange(0, sig.max(1), Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The signal that asked the run to stop, if any.
    pub fn requested(&self) -> Option<i32> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

/// Set by the second signal: commands still running are killed.
static ABORT: AtomicBool = AtomicBool::new(false);

/// Set when the run's resources are done: nothing is left to stop.
static ENDED: AtomicBool = AtomicBool::new(false);

/// Notes that the walk has ended: a signal from now on ends the process at once.
pub fn walk_ended() {
    ENDED.store(true, Ordering::SeqCst);
}

pub fn abort_requested() -> bool {
    ABORT.load(Ordering::SeqCst)
}

/// `TERM`, `INT` (as Puppet names signals in `Caught TERM; exiting`).
pub fn signal_name(sig: i32) -> String {
    match sig {
        signal_hook::consts::SIGINT => "INT".into(),
        signal_hook::consts::SIGTERM => "TERM".into(),
        other => format!("signal {other}"),
    }
}

/// Prints `msg` on stderr from a thread of its own: stderr may be a stuck pipe, and the
/// signal thread must stay free to count the next signals.
fn say(msg: String) {
    let _ = std::thread::Builder::new()
        .name("ordo-signal-note".into())
        .spawn(move || eprintln!("{msg}"));
}

/// Installs the handlers for SIGINT and SIGTERM: the first sets `flag`, the second also asks
/// running commands to be killed.
pub fn install(flag: StopFlag) -> Result<(), String> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .map_err(|e| format!("Could not install signal handlers: {e}"))?;
    std::thread::Builder::new()
        .name("ordo-signals".into())
        .spawn(move || {
            let mut seen = 0;
            for sig in signals.forever() {
                seen += 1;
                // Decided before anything is printed: stderr may be the stuck pipe.
                if ENDED.load(Ordering::SeqCst) || seen >= 3 {
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                }
                if flag.requested().is_some() {
                    ABORT.store(true, Ordering::SeqCst);
                    say(format!(
                        "Caught {} again; killing the running command",
                        signal_name(sig)
                    ));
                } else {
                    flag.request(sig);
                    say(format!(
                        "Caught {}; stopping after the current resource",
                        signal_name(sig)
                    ));
                }
            }
        })
        .map_err(|e| format!("Could not start the signal thread: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_request_wins() {
        let f = StopFlag::new();
        assert_eq!(f.requested(), None);
        let g = f.clone();
        g.request(15);
        f.request(2);
        assert_eq!(f.requested(), Some(15));
        assert_eq!(signal_name(15), "TERM");
        assert_eq!(signal_name(2), "INT");
    }
}
