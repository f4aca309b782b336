//! The catalog reader and everything that runs before the first change: parsing (refusals are
//! rendered, so their locations are exercised), the sanity checks, the graph, validation and
//! the apply order. None of it may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ordo::diagnostics::RenderOptions;
use ordo::graph::{order, Graph, Ordering};

fuzz_target!(|data: &[u8]| {
    match ordo::cli::catalog_file::parse_catalog_bytes("fuzz.json", data) {
        Ok(catalog) => {
            let graph = Graph::build(&catalog, Ordering::Manifest);
            let _ = ordo::apply::validate(&catalog, &graph, false);
            let _ = order::apply_order(&graph);
            let _ = ordo::cli::graph::check_catalog(&catalog);
        }
        Err(refusal) => {
            let _ = refusal.render(RenderOptions { color: false });
        }
    }
});
