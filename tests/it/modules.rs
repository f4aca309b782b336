//! Real-module features checked against Puppet 7.23: the corpus compile-truth run (with a
//! floor that only goes up) and fixtures under `fixtures/modules/NAME/` (an environment in
//! `env/` with `manifests/site.pp`, `hiera.yaml`, `data/`, `modules/`, and Puppet's
//! `expected.catalog.json` from `puppet catalog compile`).

use std::path::Path;
use std::process::Command;

/// Public compile-truth catalogs that must be identical (of 41), and errors refused (of 10).
const CATALOG_FLOOR: usize = 41;
const ERROR_FLOOR: usize = 10;

#[test]
fn corpus_compile_truth_floor() {
    if crate::common::shared("corpus/tools/compile_check.py").is_none() {
        return;
    }
    let (nums, stdout) = compile_check(None);
    assert!(
        nums.len() == 4 && nums[0] >= CATALOG_FLOOR && nums[2] >= ERROR_FLOOR,
        "compile-truth below the floor ({CATALOG_FLOOR} catalogs, {ERROR_FLOOR} errors):\n{stdout}"
    );
}

/// `compile_check.py`'s summary numbers for the corpus at `corpus`: catalogs identical,
/// catalogs, errors refused, errors.
fn compile_check(corpus: Option<&Path>) -> (Vec<usize>, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("../shared/corpus/tools/compile_check.py");
    assert!(
        script.exists(),
        "the shared corpus is expected beside the repository"
    );
    let mut cmd = Command::new("python3");
    cmd.arg(&script)
        .args(["--ordo", env!("CARGO_BIN_EXE_ordo"), "--show", "200"]);
    if let Some(c) = corpus {
        cmd.arg("--corpus").arg(c);
    }
    let out = cmd.output().expect("python3 runs compile_check.py");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("compile-truth: catalogs "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    // "C/T identical, errors E/T refused"
    let nums = summary
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    (nums, stdout)
}

/// More uses of the corpus modules (other classes and defines, parameters, stdlib
/// functions, title patterns of Ruby types), each with Puppet 7.23's catalog or error, in
/// `fixtures/corpus-probes/compile-truth/` (made with the modules' Ruby code, from their
/// Debian packages, on Puppet's side). Run as compile_check.py runs the corpus: every
/// catalog identical, every error refused.
#[test]
fn corpus_probes_match_puppet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(shared) = crate::common::shared("corpus") else {
        return;
    };
    let shared = shared.canonicalize().expect("shared corpus");
    let corpus = std::env::temp_dir().join(format!("ordo-probes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&corpus);
    std::fs::create_dir_all(&corpus).expect("temp corpus");
    let link = |from: &Path, name: &str| {
        std::os::unix::fs::symlink(from, corpus.join(name)).expect("symlink");
    };
    link(&shared.join("modules"), "modules");
    link(&shared.join("MODULES.tsv"), "MODULES.tsv");
    link(
        &root.join("fixtures/corpus-probes/compile-truth"),
        "compile-truth",
    );
    let (nums, stdout) = compile_check(Some(&corpus));
    let _ = std::fs::remove_dir_all(&corpus);
    assert!(
        nums.len() == 4 && nums[0] == nums[1] && nums[2] == nums[3] && nums[1] > 0,
        "corpus probes differ from Puppet:\n{stdout}"
    );
}

/// Whether two catalogs are equal after the shared `normalize_catalog.py` (the judge the
/// conformance and corpus tools use: it drops versions, paths, lines and Puppet's
/// environment-only `Class[Settings]`).
fn same_catalog(got: &str, want: &Path) -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tools = root.join("../shared/conformance/tools");
    let tmp = std::env::temp_dir().join(format!("ordo-modules-{}.json", std::process::id()));
    std::fs::write(&tmp, got).expect("temp file");
    let code = "import sys; sys.path.insert(0, sys.argv[1]); import normalize_catalog as n; \
        f = lambda p: n.normalize(n.load_text(open(p).read()), True); \
        sys.exit(0 if f(sys.argv[2]) == f(sys.argv[3]) else 1)";
    let ok = Command::new("python3")
        .args(["-c", code])
        .arg(&tools)
        .arg(&tmp)
        .arg(want)
        .status()
        .is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(&tmp);
    ok
}

#[test]
fn module_fixtures_match_puppet() {
    if crate::common::shared("conformance/tools").is_none() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/modules");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures/modules exists") {
        let case = entry.expect("entry").path();
        let env = case.join("env");
        let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
            .args([
                "compile",
                "manifests/site.pp",
                "--node",
                "oracle-node",
                "--modulepath",
                "modules",
            ])
            .current_dir(&env)
            .output()
            .expect("ordo runs");
        assert!(
            out.status.success(),
            "{}: {}",
            case.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(
            same_catalog(&got, &case.join("expected.catalog.json")),
            "{}: catalog differs from Puppet's:\n{got}",
            case.display()
        );
        checked += 1;
    }
    assert!(checked > 0);
}
