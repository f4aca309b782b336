//! Inputs that once broke the catalog reader or the checks after it (found by
//! `scripts/fuzz.sh`, or written by hand for the same paths): each must be read or refused
//! without a panic, and a refusal must point inside the text.

use ordo::graph::{order, Graph, Ordering};
use std::path::Path;

#[test]
fn fuzz_regressions_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalog/fuzz-regressions");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        n += 1;
        match ordo::cli::catalog_file::parse_catalog_bytes("r.json", &bytes) {
            Ok(c) => {
                let g = Graph::build(&c, Ordering::Manifest);
                let _ = ordo::apply::validate(&c, &g, false);
                let _ = order::apply_order(&g);
                let _ = ordo::cli::graph::check_catalog(&c);
            }
            Err(r) => {
                let span = r.diagnostic.span.expect("a refusal has a location");
                assert!(span.start as usize <= bytes.len(), "{}", p.display());
                let text = r.render(ordo::diagnostics::RenderOptions { color: false });
                assert!(text.contains("r.json:"), "{text}");
            }
        }
    }
    assert!(n >= 5);
}
