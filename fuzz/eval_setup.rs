//! The evaluator fuzz target's fixed world, shared with tests/eval_fuzz_regressions.rs (which
//! includes this file) so that a regression fixture compiles exactly as the fuzzer did: a
//! fixed node and facts, the small in-memory module `fz`, and every stdlib-style function
//! reported present (as if stdlib were on the modulepath) so that they are fuzzed too.

use ordo::eval::{CompileOptions, Loader, MemoryLoader};

pub struct FuzzLoader(MemoryLoader);

impl Loader for FuzzLoader {
    fn load(&self, module: &str, path: &str) -> Option<(String, String)> {
        self.0.load(module, path)
    }

    fn has_ruby_function(&self, _name: &str) -> bool {
        true
    }
}

pub fn setup() -> (FuzzLoader, CompileOptions) {
    let mut loader = MemoryLoader::default();
    loader.files.insert(
        "fz/manifests/init.pp".into(),
        "class fz($p = 'x') { notify { \"fz ${p}\": } }\n".into(),
    );
    loader.files.insert(
        "fz/manifests/thing.pp".into(),
        "define fz::thing($v = 1) { file { \"/tmp/fz/${title}\": content => \"${v}\" } }\n".into(),
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
        resolve_deferred: false,
        server: None,
    };
    (FuzzLoader(loader), opts)
}
