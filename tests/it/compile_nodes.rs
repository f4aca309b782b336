//! `ordo compile --nodes DIR --outdir OUT`, through the real binary with real files: every
//! catalog is byte-identical to compiling its node alone with `--facts`; failures name their
//! node and do not stop the others.

use std::path::Path;
use std::process::Command;

fn ordo() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ordo"))
}

const SITE: &str = r#"
notify { "hello ${facts['role']} on ${trusted['certname']}": }
if $facts['role'] == 'db' {
  package { 'postgresql': ensure => installed }
  include dbtuning
}
if $facts['role'] == 'bad' { fail("role bad on ${facts['networking']['hostname']}") }
file { '/etc/motd': content => "os ${facts['os']['family']}\n" }
$facts['mounts'].each |$m| { file { "/mnt/${m}": ensure => directory, require => File['/etc/motd'] } }
"#;

const DBTUNING: &str = r#"
class dbtuning {
  notify { "tuning for ${facts['os']['family']}": }
}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("site.pp"), SITE);
    write(&d.join("modules/dbtuning/manifests/init.pp"), DBTUNING);
    write(
        &d.join("nodes/web1.example.com.json"),
        r#"{"role": "web", "os": {"family": "Debian"}, "networking": {"hostname": "web1"}, "mounts": ["a", "b"]}"#,
    );
    write(
        &d.join("nodes/db1.example.com.yaml"),
        "role: db\nos:\n  family: RedHat\nnetworking:\n  hostname: db1\nmounts:\n  - data\n",
    );
    write(
        &d.join("nodes/db2.example.com.json"),
        r#"{"name": "db2.example.com", "values": {"role": "db", "os": {"family": "Debian"}, "networking": {"hostname": "db2"}, "mounts": []}}"#,
    );
    write(&d.join("nodes/README.txt"), "not a facts file\n");
    dir
}

fn compile_nodes(d: &Path, jobs: &str) -> std::process::Output {
    ordo()
        .current_dir(d)
        .args(["compile", "site.pp", "--nodes", "nodes", "--outdir", "out"])
        .args(["--modulepath", "modules", "--jobs", jobs])
        .output()
        .unwrap()
}

fn alone(d: &Path, node: &str, facts: &str) -> Vec<u8> {
    let out = d.join(format!("alone-{node}.json"));
    let status = ordo()
        .current_dir(d)
        .args([
            "compile",
            "site.pp",
            "--modulepath",
            "modules",
            "--node",
            node,
        ])
        .args(["--facts", facts, "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "{node} alone");
    std::fs::read(out).unwrap()
}

#[test]
fn every_catalog_is_the_one_of_its_node_compiled_alone() {
    for jobs in ["1", "3"] {
        let dir = setup();
        let d = dir.path();
        let run = compile_nodes(d, jobs);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(stdout.starts_with("3 nodes, 0 failed, "), "{stdout}");
        // site.pp and the module's class, each parsed once for all the nodes.
        assert!(stdout.contains(", 2 files parsed)"), "{stdout}");
        let mut names: Vec<String> = std::fs::read_dir(d.join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "db1.example.com.json",
                "db2.example.com.json",
                "web1.example.com.json"
            ]
        );
        for (node, facts) in [
            ("web1.example.com", "nodes/web1.example.com.json"),
            ("db1.example.com", "nodes/db1.example.com.yaml"),
            ("db2.example.com", "nodes/db2.example.com.json"),
        ] {
            let many = std::fs::read(d.join("out").join(format!("{node}.json"))).unwrap();
            assert_eq!(many, alone(d, node, facts), "{node} with --jobs {jobs}");
            let text = String::from_utf8(many).unwrap();
            assert!(text.contains(&format!("on {node}")), "{node}: certname");
        }
        // The facts made a difference: only the db nodes include the module's class.
        let web = std::fs::read_to_string(d.join("out/web1.example.com.json")).unwrap();
        let db = std::fs::read_to_string(d.join("out/db1.example.com.json")).unwrap();
        assert!(!web.contains("tuning for") && db.contains("tuning for RedHat"));
        assert!(web.contains("/mnt/b") && db.contains("/mnt/data"));
    }
}

#[test]
fn a_failing_node_is_named_and_the_others_still_compile() {
    let dir = setup();
    let d = dir.path();
    write(
        &d.join("nodes/bad1.example.com.json"),
        r#"{"role": "bad", "os": {"family": "Debian"}, "networking": {"hostname": "bad1"}, "mounts": []}"#,
    );
    write(
        &d.join("nodes/broken.example.com.json"),
        "{\"role\": \"web\",\n \"os\": {\"family\" \"x\"}}\n",
    );
    let run = compile_nodes(d, "2");
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stdout.starts_with("5 nodes, 2 failed, "), "{stdout}");
    assert!(
        stderr.contains("role bad on bad1") && stderr.contains("on node bad1.example.com"),
        "{stderr}"
    );
    // The malformed facts file is refused with its place.
    assert!(
        stderr.contains("Could not load facts from nodes/broken.example.com.json")
            && stderr.contains("broken.example.com.json:2:18")
            && stderr.contains("facts of node broken.example.com refused"),
        "{stderr}"
    );
    assert!(stderr.contains("Failed nodes: bad1.example.com, broken.example.com"));
    for ok in ["web1", "db1", "db2"] {
        assert!(
            d.join(format!("out/{ok}.example.com.json")).is_file(),
            "{ok}"
        );
    }
    assert!(!d.join("out/bad1.example.com.json").exists());
}

#[test]
fn refusals_of_the_command_line() {
    let dir = setup();
    let d = dir.path();
    // --nodes needs --outdir, and excludes a single node's options.
    let run = ordo()
        .current_dir(d)
        .args(["compile", "site.pp", "--nodes", "nodes"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    let run = ordo()
        .current_dir(d)
        .args(["compile", "site.pp", "--nodes", "nodes", "--outdir", "o"])
        .args(["--facts", "nodes/web1.example.com.json"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    // Two facts files for one node.
    write(&d.join("nodes/web1.example.com.yaml"), "role: web\n");
    let run = compile_nodes(d, "1");
    assert_eq!(run.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("Two facts files for node web1.example.com")
    );
}

#[test]
fn catalogs_are_compact_json_unless_pretty() {
    let dir = setup();
    let d = dir.path();
    let alone_to_stdout = |extra: &[&str]| {
        let run = ordo()
            .current_dir(d)
            .args(["compile", "site.pp", "--modulepath", "modules"])
            .args(["--node", "db1.example.com"])
            .args(["--facts", "nodes/db1.example.com.yaml"])
            .args(extra)
            .output()
            .unwrap();
        assert!(run.status.success(), "{run:?}");
        String::from_utf8(run.stdout).unwrap()
    };
    let compact = alone_to_stdout(&[]);
    let pretty = alone_to_stdout(&["--pretty"]);
    let catalog: serde_json::Value = serde_json::from_str(&compact).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&pretty).unwrap(),
        catalog
    );
    assert!(catalog["resources"].as_array().unwrap().len() > 3);
    // Compact as `puppet catalog compile --render-as json` prints it: one line.
    assert_eq!(compact, serde_json::to_string(&catalog).unwrap() + "\n");
    assert_eq!(
        pretty,
        serde_json::to_string_pretty(&catalog).unwrap() + "\n"
    );
    // --nodes writes the same text, compact or pretty.
    for (extra, want) in [(None, &compact), (Some("--pretty"), &pretty)] {
        let out = d.join("out/db1.example.com.json");
        let _ = std::fs::remove_file(&out);
        let run = ordo()
            .current_dir(d)
            .args(["compile", "site.pp", "--nodes", "nodes", "--outdir", "out"])
            .args(["--modulepath", "modules", "--jobs", "1"])
            .args(extra)
            .output()
            .unwrap();
        assert!(run.status.success(), "{run:?}");
        assert_eq!(&std::fs::read_to_string(out).unwrap(), want, "{extra:?}");
    }
}
