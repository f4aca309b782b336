//! Cycle search scaling: `cargo bench --bench cycles` builds catalogs whose whole graph is one
//! strongly connected component (a ring of notify resources, each requiring the next, and a
//! ring where each also requires the one after next) at 125k..1M relationship edges, and
//! prints the CPU time (Linux `/proc/self/schedstat`, so that other work on the machine does
//! not count) of `Graph::build` and of `find_cycles` per edge. Linear scaling shows as a flat
//! ns/edge column.

#![allow(clippy::disallowed_methods)]

use ordo::catalog::Catalog;
use ordo::graph::cycles::find_cycles;
use ordo::graph::{Graph, Ordering};

fn ring(n: usize, skips: &[usize]) -> Catalog {
    let resources: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let req: Vec<String> = skips
                .iter()
                .map(|s| format!("Notify[n{}]", (i + s) % n))
                .collect();
            serde_json::json!({"type": "Notify", "title": format!("n{i}"),
                               "parameters": {"require": req}})
        })
        .collect();
    serde_json::from_value(serde_json::json!({
        "name": "bench", "version": 1, "resources": resources, "edges": []
    }))
    .expect("a catalog")
}

fn main() {
    println!("| shape | edges | build | ns/edge | find_cycles | ns/edge | path length |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (shape, skips) in [("ring", &[1][..]), ("ring+skip", &[1, 2][..])] {
        for edges in [125_000usize, 250_000, 500_000, 1_000_000] {
            let catalog = ring(edges / skips.len(), skips);
            let t = cpu_secs();
            let g = Graph::build(&catalog, Ordering::Manifest);
            let build = cpu_secs() - t;
            let t = cpu_secs();
            let cycles = find_cycles(&g);
            let find = cpu_secs() - t;
            assert_eq!(cycles.len(), 1, "one component");
            println!(
                "| {shape} | {edges} | {build:.3} s | {:.0} | {find:.3} s | {:.0} | {} |",
                build * 1e9 / edges as f64,
                find * 1e9 / edges as f64,
                cycles[0].path.len()
            );
        }
    }
}

/// Seconds this process has spent on a CPU (first field of /proc/self/schedstat).
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}
