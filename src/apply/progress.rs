//! How far a run is: resources evaluated out of the total, shared with whoever draws a
//! progress line (the CLI, on a terminal). Counting costs two atomic operations per resource.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct Progress(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    done: AtomicUsize,
    total: AtomicUsize,
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    /// The number of resources the run will evaluate (set when the walk starts).
    pub fn start(&self, total: usize) {
        self.0.done.store(0, Ordering::Relaxed);
        self.0.total.store(total, Ordering::Relaxed);
    }

    /// `n` more resources evaluated.
    pub fn advance(&self, n: usize) {
        self.0.done.fetch_add(n, Ordering::Relaxed);
    }

    /// (done, total); total is 0 before the walk starts.
    pub fn get(&self) -> (usize, usize) {
        (
            self.0.done.load(Ordering::Relaxed),
            self.0.total.load(Ordering::Relaxed),
        )
    }
}

/// The progress line: `1,234/10,000 resources (12%), 2,345/s, 4 s left`.
pub fn line(done: usize, total: usize, seconds: f64) -> String {
    let pct = (done * 100).checked_div(total).unwrap_or(100);
    let rate = if seconds > 0.0 {
        done as f64 / seconds
    } else {
        0.0
    };
    let left = if rate > 0.0 {
        let s = (total.saturating_sub(done)) as f64 / rate;
        format!(", {} left", duration(s))
    } else {
        String::new()
    };
    format!(
        "{}/{} resources ({pct}%), {}/s{left}",
        grouped(done),
        grouped(total),
        grouped(rate.round() as usize)
    )
}

/// `12345` -> `12,345`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `75` -> `1 min 15 s`.
fn duration(s: f64) -> String {
    let s = s.ceil() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            line(12_345, 100_000, 5.0),
            "12,345/100,000 resources (12%), 2,469/s, 36 s left"
        );
        assert_eq!(line(0, 10, 0.0), "0/10 resources (0%), 0/s");
        assert_eq!(
            line(1_000, 100_000, 10.0),
            "1,000/100,000 resources (1%), 100/s, 16 min 30 s left"
        );
        let p = Progress::new();
        p.start(3);
        p.advance(2);
        assert_eq!(p.get(), (2, 3));
    }
}
