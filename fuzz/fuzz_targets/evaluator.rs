//! The evaluator on parsed input: whatever parses is compiled for a fixed node with fixed
//! facts and a small in-memory module (no modulepath on disk, no network, no file writes; the
//! evaluator does no IO). The compile must return a catalog or diagnostics, never panic, hang
//! or exhaust memory (libFuzzer's `-timeout` and `-rss_limit_mb` watch the last two); every
//! diagnostic renders against its source and the catalog serialises.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ordo::diagnostics::{render, RenderOptions};
use ordo::eval::{compile, CompileOptions, Loader, MemoryLoader};
use ordo::span::SourceMap;
use std::sync::OnceLock;

/// The in-memory module `fz`, and every stdlib-style function reported present (as if
/// stdlib were on the modulepath) so that they are fuzzed too.
struct FuzzLoader(MemoryLoader);

impl Loader for FuzzLoader {
    fn load(&self, module: &str, path: &str) -> Option<(String, String)> {
        self.0.load(module, path)
    }

    fn has_ruby_function(&self, _name: &str) -> bool {
        true
    }
}

fn fixed() -> &'static (FuzzLoader, CompileOptions) {
    static FIXED: OnceLock<(FuzzLoader, CompileOptions)> = OnceLock::new();
    FIXED.get_or_init(|| {
        let mut loader = MemoryLoader::default();
        loader.files.insert(
            "fz/manifests/init.pp".into(),
            "class fz($p = 'x') { notify { \"fz ${p}\": } }\n".into(),
        );
        loader.files.insert(
            "fz/manifests/thing.pp".into(),
            "define fz::thing($v = 1) { file { \"/tmp/fz/${title}\": content => \"${v}\" } }\n"
                .into(),
        );
        loader.files.insert(
            "fz/functions/twice.pp".into(),
            "function fz::twice($x) { [$x, $x] }\n".into(),
        );
        let facts = serde_json::json!({
            "os": {"family": "Debian", "name": "Debian",
                   "release": {"full": "12.4", "major": "12"}},
            "osfamily": "Debian",
            "kernel": "Linux",
            "hostname": "fuzz",
            "fqdn": "fuzz.example.com",
            "networking": {"hostname": "fuzz", "fqdn": "fuzz.example.com"},
            "processors": {"count": 2},
            "ipaddress": "192.0.2.1",
        });
        let opts = CompileOptions {
            node: "fuzz.example.com".into(),
            facts,
            strict_variables: false,
        };
        (FuzzLoader(loader), opts)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Only what parses reaches the evaluator (the parser has its own target).
    let mut sources = SourceMap::new();
    let id = sources.add("fuzz.pp", text);
    if ordo::parser::parse(text, id).has_errors() {
        return;
    }
    let (loader, opts) = fixed();
    let result = compile("fuzz.pp", text, loader, opts);
    for d in &result.diagnostics {
        let _ = render(d, &result.sources, RenderOptions { color: false });
    }
    if let Some(catalog) = &result.catalog {
        let _ = catalog.to_json_pretty();
    }
});
