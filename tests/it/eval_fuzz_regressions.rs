//! Inputs the evaluator fuzzer (`scripts/fuzz.sh evaluator`) found crashing, hanging or
//! exhausting memory, and the inputs that show the evaluator's limits, kept for ever:
//! `fixtures/eval/fuzz/NAME.pp` is compiled the way the fuzz target compiles (fixed node and
//! facts, a small in-memory module, stdlib functions present); it must not panic and must
//! finish, and its verdict (`ok: N resources` or the error messages) must equal `NAME.out`.
//! `UPDATE_EXPECT=1 cargo test --test eval_fuzz_regressions` rewrites the `.out` files.

use ordo::eval::compile;
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "../../fuzz/eval_setup.rs"]
mod eval_setup;
use eval_setup::setup;

#[test]
fn evaluator_fuzz_regressions_compile_without_panicking() {
    // The CLI and the fuzzer compile on a main thread (8 MiB of stack), test threads get
    // 2 MiB: give this one what the binary has.
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(run_fixtures)
        .unwrap()
        .join()
        .unwrap();
}

fn run_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval/fuzz");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/eval/fuzz")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pp"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no evaluator fuzz fixtures");
    let (loader, opts) = setup();
    let mut failures = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f).expect("fixture");
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let started = Instant::now();
        let result = compile(&name, &text, &loader, &opts);
        // Debug builds are slow; this still catches a hang or an unbounded loop.
        let took = started.elapsed();
        if took > Duration::from_secs(120) {
            failures.push(format!("{name}: took {took:?}"));
        }
        let errors: Vec<String> = result
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}\n", d.message))
            .collect();
        let verdict = match &result.catalog {
            Some(c) if errors.is_empty() => {
                let _ = c.to_json_pretty();
                format!("ok: {} resources\n", c.resources.len())
            }
            _ => {
                if errors.is_empty() {
                    failures.push(format!("{name}: no catalog and no error"));
                }
                errors.concat()
            }
        };
        let out = f.with_extension("out");
        if crate::common::update_expect() {
            std::fs::write(&out, &verdict).unwrap();
        } else if std::fs::read_to_string(&out).unwrap_or_default() != verdict {
            failures.push(format!("{name}: verdict changed:\n{verdict}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
