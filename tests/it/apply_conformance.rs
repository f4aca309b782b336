//! The conformance apply cases as tests: Puppet's own catalog for each case is applied by
//! `ordo apply`, and the run is compared with what `puppet apply` did, reduced to events by
//! the shared judge (`conformance.py` `events()`: changes, noop changes, failures, skips,
//! refreshes, cycles, exit code and the trace file the execs write).
//!
//! Inputs: `fixtures/apply/puppet-catalogs/<case>.json` are the raw catalogs real Puppet 7.23
//! compiled for the cases (`tools/puppet_catalogs.sh`); raw because their resource order is
//! Puppet's evaluation order, which decides the apply order. Cases that apply a hand-written
//! `catalog.json` use it directly.
//!
//! Isolation: the manifests write to the fixed `/tmp/oracle-run`, which other programs use too
//! (the shared conformance runner deletes and recreates it before each of its cases). Each run
//! happens in a private mount namespace with a fresh tmpfs mounted on `/tmp` itself, holding
//! its own `/tmp/oracle-run`. An earlier version bind-mounted a private directory on the host's
//! `/tmp/oracle-run`; that raced with other users of the path: when another process removes
//! a directory that is a mount point in another namespace, Linux (since 3.18) detaches that
//! mount, so a run that overlapped someone else's `rm -rf /tmp/oracle-run` (more likely under
//! load, when runs are slow) lost its private directory half-way, or failed at `mount`.
//! `/tmp` itself is never removed. Nothing in a case depends on timing otherwise: the execs
//! are `echo`s and `/bin/false` with Puppet's default 300 s timeout, and `--jobs` is 1.

use std::path::{Path, PathBuf};
use std::process::Command;

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

fn shared() -> PathBuf {
    crate::common::shared("").expect("checked by the test")
}

/// The shared judge's reduction of a Puppet-style log to events (as JSON text).
fn events(text: &str) -> String {
    let tools = shared().join("conformance/tools");
    let script = format!(
        "import sys, json; sys.path.insert(0, {:?}); import conformance as C; \
         print(json.dumps(C.events(sys.stdin.read())))",
        tools.display().to_string()
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs the shared judge");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the judge failed on: {text}");
    String::from_utf8(out.stdout).unwrap()
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs one case: setup.sh in an empty /tmp/oracle-run, then `ordo apply`, and returns the
/// text the judge reads (output, exit code, trace file).
fn run_case(case: &Path, catalog: &Path, extra: &[String]) -> String {
    // The binary and the case must stay visible once /tmp is replaced.
    for p in [Path::new(ORDO), case, catalog] {
        assert!(
            !p.starts_with("/tmp"),
            "{} is under /tmp, which the test replaces with a private tmpfs",
            p.display()
        );
    }
    let mut script = String::from(
        "set -e\nmount -t tmpfs ordo-conformance /tmp\nmkdir /tmp/oracle-run /tmp/.bucket\n",
    );
    let setup = case.join("setup.sh");
    if setup.exists() {
        script.push_str(&format!(
            "(cd /tmp/oracle-run && bash {})\n",
            quote(&setup.display().to_string())
        ));
    }
    let mut cmd = vec![
        ORDO.to_string(),
        "apply".into(),
        catalog.display().to_string(),
        "--node".into(),
        "oracle-node".into(),
        "--detailed-exitcodes".into(),
        "--log-format".into(),
        "puppet".into(),
        "--bucket-dir".into(),
        "/tmp/.bucket".into(),
        "--state-dir".into(),
        "/tmp/.state".into(),
    ];
    if case.join("modules").is_dir() {
        cmd.push("--modulepath".into());
        cmd.push("modules".into());
    }
    cmd.extend(extra.iter().cloned());
    let cmd: Vec<String> = cmd.iter().map(|a| quote(a)).collect();
    script.push_str(&format!(
        "set +e\ncd {}\n{} 2>&1\necho \"exit: $?\"\n",
        quote(&case.display().to_string()),
        cmd.join(" ")
    ));
    script.push_str(
        "if [ -f /tmp/oracle-run/trace ]; then echo '== /tmp/oracle-run/trace =='; cat /tmp/oracle-run/trace; fi\n",
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .output()
        .expect("unshare runs");
    assert!(
        out.status.success(),
        "could not run the case in a private mount namespace (needs root): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn deliberate(name: &str) -> bool {
    // Listed in conformance.py DELIBERATE: Ordo means to differ from Puppet 7.23 there.
    [
        "186-ordering-title-hash-rejected",
        "187-ordering-manifest-rejected",
        "120-missing-catalog-apply",
        "121-missing-catalog-apply-before",
        "123-catalog-kind-missing",
    ]
    .contains(&name)
}

fn strip_exit(events: &str) -> String {
    let v: Vec<serde_json::Value> = serde_json::from_str(events).unwrap();
    let kept: Vec<_> = v.into_iter().filter(|e| e[0] != "exit").collect();
    serde_json::to_string(&kept).unwrap()
}

#[test]
fn conformance_apply_cases_with_puppets_catalogs() {
    let Some(cases) = crate::common::shared("conformance/cases") else {
        return;
    };
    // Each case runs in a private mount namespace with its own /tmp: root, and a binary
    // that stays visible once /tmp is replaced.
    let root = rustix::process::geteuid().is_root();
    if !crate::common::prerequisite(root, "root (a private mount namespace for /tmp)")
        || !crate::common::prerequisite(
            !Path::new(ORDO).starts_with("/tmp") && !cases.starts_with("/tmp"),
            "a checkout outside /tmp (the cases replace /tmp)",
        )
    {
        return;
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/apply/puppet-catalogs");
    let mut names: Vec<String> = std::fs::read_dir(&cases)
        .expect("the shared conformance cases are present")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let (mut total, mut failures) = (0, Vec::new());
    for name in names {
        let case = cases.join(&name);
        if !case.join("apply.args").exists() || deliberate(&name) {
            continue;
        }
        let hand_written = case.join("catalog.json");
        let catalog = if hand_written.exists() {
            hand_written.clone()
        } else {
            fixtures.join(format!("{name}.json"))
        };
        assert!(
            catalog.exists(),
            "no Puppet catalog for {name}: run tools/puppet_catalogs.sh"
        );
        let args: Vec<String> = std::fs::read_to_string(case.join("apply.args"))
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        total += 1;
        let got_text = run_case(&case, &catalog, &args);
        let want_text = std::fs::read_to_string(case.join("expected.apply.txt")).unwrap();
        let (mut got, mut want) = (events(&got_text), events(&want_text));
        if hand_written.exists() {
            // Puppet's `apply --catalog` exits 0 whatever happened (see conformance.py).
            got = strip_exit(&got);
            want = strip_exit(&want);
        }
        if got.trim() != want.trim() {
            failures.push(format!(
                "{name}:\n  want {want}  got  {got}  output:\n{got_text}"
            ));
        }
    }
    eprintln!(
        "conformance apply with Puppet's catalogs: {}/{total}",
        total - failures.len()
    );
    assert!(
        total >= 70,
        "expected the shared apply cases, found {total}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
