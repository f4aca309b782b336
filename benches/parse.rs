//! Parse throughput: `cargo bench --bench parse [DIR]` parses every `.pp` file under DIR
//! (default: ../shared/corpus/modules) in memory, single-threaded, and prints MB/s, both by
//! wall clock and by the CPU time the process actually got (Linux `/proc/self/schedstat`):
//! on a machine shared with other work, the second is the one that measures the parser.

#![allow(clippy::disallowed_methods)]

use ordo::parser::parse;
use ordo::span::FileId;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "pp") {
            out.push(p);
        }
    }
}

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/modules"));
    let mut files = Vec::new();
    collect(&dir, &mut files);
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    if bytes == 0 {
        println!("no .pp files under {}", dir.display());
        return;
    }
    let rounds = 10;
    let cpu_start = cpu_ns();
    let start = Instant::now();
    let mut trees = 0;
    for _ in 0..rounds {
        for t in &texts {
            if parse(t, FileId(0)).program.is_some() {
                trees += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_ns()) {
        (Some(a), Some(b)) => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    let mb = (bytes * rounds) as f64 / 1e6;
    println!(
        "parsed {} files ({:.2} MB) x{rounds} in {secs:.3}s: {:.1} MB/s wall clock ({trees} trees)",
        texts.len(),
        bytes as f64 / 1e6,
        mb / secs
    );
    if let Some(cpu) = cpu {
        println!("on CPU {cpu:.3}s: {:.1} MB/s of CPU time", mb / cpu);
    }
}

/// Nanoseconds this process has spent on a CPU (first field of /proc/self/schedstat).
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
