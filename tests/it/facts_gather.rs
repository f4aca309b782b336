//! `ordo facts`: the facts of this machine against Facter's, external facts from facts.d
//! folders, queries and output formats, and the facts a compile sees.
//!
//! The comparison with Facter takes facts that do not move between two runs (os, kernel,
//! identity, processors, networking names and addresses, disks, filesystems...) from
//! `facter --json --show-legacy` run at test time; it is skipped with a printed reason when
//! facter is absent, except under CI=true where that is a failure.

use serde_json::Value as Json;
use std::path::Path;
use std::process::{Command, Output};

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

fn ordo(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(ORDO);
    c.args(args).env("NO_COLOR", "1");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn json_of(out: &Output) -> Json {
    assert!(
        out.status.success(),
        "ordo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// Facter's facts, or `None` (with the reason printed) when facter is not installed.
fn facter() -> Option<Json> {
    if !super::common::tool("facter") {
        return None;
    }
    let out = Command::new("facter")
        .args(["--json", "--show-legacy", "--no-external-facts"])
        .output()
        .unwrap();
    // Facter exits 1 when one fact failed; the others are printed all the same.
    Some(serde_json::from_slice(&out.stdout).expect("facter prints JSON"))
}

#[test]
fn stable_facts_are_facters() {
    let Some(facter) = facter() else { return };
    let got = json_of(&ordo(
        &["facts", "--json", "--show-legacy", "--no-external-facts"],
        &[],
    ));
    let mut checked = 0;
    let mut wrong = Vec::new();
    // Whole facts that do not move between runs.
    for fact in [
        "os",
        "kernel",
        "kernelrelease",
        "kernelversion",
        "kernelmajversion",
        "identity",
        "filesystems",
        "fips_enabled",
        "timezone",
        "augeas",
        "ruby",
        "facterversion",
        "disks",
        "partitions",
        "dmi",
        "ssh",
        "hypervisors",
        "dhcp_servers",
        "architecture",
        "hardwaremodel",
        "hardwareisa",
        "osfamily",
        "operatingsystem",
        "operatingsystemrelease",
        "operatingsystemmajrelease",
        "lsbdistid",
        "lsbdistcodename",
        "lsbdistrelease",
        "hostname",
        "fqdn",
        "domain",
        "interfaces",
        "ipaddress",
        "ipaddress6",
        "macaddress",
        "netmask",
        "network",
        "processorcount",
        "physicalprocessorcount",
        "memorysize",
        "memorysize_mb",
        "blockdevices",
        "selinux",
        "id",
        "gid",
    ] {
        if let Some(expected) = facter.get(fact) {
            checked += 1;
            if got.get(fact) != Some(expected) {
                wrong.push(format!(
                    "{fact}: facter {expected}, ordo {}",
                    got.get(fact).unwrap_or(&Json::Null)
                ));
            }
        }
    }
    // Parts of facts whose other parts move (free memory, mount usage).
    for pointer in [
        "/processors/count",
        "/processors/physicalcount",
        "/processors/models",
        "/processors/isa",
        "/processors/cores",
        "/processors/threads",
        "/memory/system/total_bytes",
        "/memory/system/total",
        "/memory/swap/total_bytes",
        "/networking/hostname",
        "/networking/fqdn",
        "/networking/domain",
        "/networking/primary",
        "/networking/ip",
        "/networking/ip6",
        "/networking/mac",
        "/networking/mtu",
        "/networking/interfaces",
    ] {
        if let Some(expected) = facter.pointer(pointer) {
            checked += 1;
            if got.pointer(pointer) != Some(expected) {
                wrong.push(format!(
                    "{pointer}: facter {expected}, ordo {}",
                    got.pointer(pointer).unwrap_or(&Json::Null)
                ));
            }
        }
    }
    // Every mountpoint Facter lists, with its device, filesystem and options.
    if let Some(mounts) = facter.get("mountpoints").and_then(Json::as_object) {
        for (path, m) in mounts {
            for key in ["device", "filesystem", "options", "size_bytes"] {
                checked += 1;
                let value = got.pointer(&format!(
                    "/mountpoints/{}/{key}",
                    path.replace('~', "~0").replace('/', "~1")
                ));
                if value != m.get(key) {
                    wrong.push(format!(
                        "mountpoints.{path}.{key}: facter {}, ordo {value:?}",
                        m[key]
                    ));
                }
            }
        }
    }
    assert!(checked > 20, "too few facts compared ({checked})");
    assert!(
        wrong.is_empty(),
        "facts that differ from Facter's:\n{}",
        wrong.join("\n")
    );
    // Legacy facts only with --show-legacy.
    let core = json_of(&ordo(&["facts", "--json", "--no-external-facts"], &[]));
    assert!(core.get("os").is_some() && core.get("osfamily").is_none());
}

/// A facts.d folder with one file of each kind.
fn facts_d(dir: &Path) {
    std::fs::write(dir.join("a.txt"), "Team=web\ndup=from_txt\nnot a fact\n").unwrap();
    std::fs::write(
        dir.join("b.yaml"),
        "role: db\ndup: from_yaml\nports:\n  - 80\n  - 443\nnested:\n  key: true\n",
    )
    .unwrap();
    std::fs::write(dir.join("c.json"), r#"{"json_fact": {"list": [1, null]}}"#).unwrap();
    std::fs::write(dir.join("d.yml"), "ignored: 1\n").unwrap();
    std::fs::write(dir.join("broken.json"), "{not json").unwrap();
    let script = dir.join("e.sh");
    std::fs::write(&script, "#!/bin/sh\necho exec_fact=5\necho 'oops' >&2\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let yaml_script = dir.join("f");
    std::fs::write(
        &yaml_script,
        "#!/bin/sh\nprintf 'from_exec_yaml:\\n  a: 1\\n'\n",
    )
    .unwrap();
    std::fs::set_permissions(&yaml_script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn external_facts_from_facts_d() {
    let dir = tempfile::tempdir().unwrap();
    facts_d(dir.path());
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("z.txt"),
        "role=later_folder\nonly_here=1\n",
    )
    .unwrap();
    let out = ordo(
        &[
            "facts",
            "--json",
            "--external-dir",
            dir.path().to_str().unwrap(),
            "--external-dir",
            other.path().to_str().unwrap(),
        ],
        &[],
    );
    let f = json_of(&out);
    assert_eq!(f["team"], "web", "names are lower-cased");
    assert_eq!(f["role"], "db", "the first folder wins");
    assert_eq!(f["only_here"], "1");
    assert_eq!(f["ports"], serde_json::json!([80, 443]));
    assert_eq!(f["nested"]["key"], true);
    assert_eq!(f["json_fact"]["list"], serde_json::json!([1, null]));
    assert_eq!(f["exec_fact"], "5");
    assert_eq!(f["from_exec_yaml"]["a"], 1);
    // Files of a folder are read in reverse name order, the first to give a fact winning.
    assert_eq!(f["dup"], "from_yaml");
    assert!(f.get("ignored").is_none(), ".yml files are not fact files");
    assert!(f.get("os").is_some(), "core facts are still there");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken.json"),
        "a broken file is a warning: {stderr}"
    );
    assert!(
        stderr.contains("oops"),
        "a script's stderr is a warning: {stderr}"
    );

    // Without external facts, and with a FACTER_ variable (which overrides every fact).
    let f = json_of(&ordo(
        &["facts", "--json", "--no-external-facts"],
        &[("FACTER_KERNEL", "Plan9")],
    ));
    assert!(f.get("team").is_none());
    assert_eq!(f["kernel"], "Plan9");
}

#[test]
fn queries_and_formats() {
    let all = json_of(&ordo(&["facts", "--json", "--no-external-facts"], &[]));
    let family = all["os"]["family"].as_str().unwrap().to_string();

    let out = ordo(&["facts", "os.family", "--no-external-facts"], &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{family}\n"));

    let q = json_of(&ordo(
        &[
            "facts",
            "--json",
            "os.family",
            "kernel",
            "no.such.fact",
            "--no-external-facts",
        ],
        &[],
    ));
    assert_eq!(q["os.family"], Json::String(family.clone()));
    assert_eq!(q["kernel"], all["kernel"]);
    assert_eq!(q["no.such.fact"], Json::Null);

    // A legacy fact answers a query without --show-legacy, as in facter.
    let q = json_of(&ordo(
        &["facts", "--json", "osfamily", "--no-external-facts"],
        &[],
    ));
    assert_eq!(q["osfamily"], Json::String(family.clone()));

    let out = ordo(
        &["facts", "os.family", "kernel", "--no-external-facts"],
        &[],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("os.family => {family}\n")), "{text}");

    let out = ordo(&["facts", "--yaml", "os", "--no-external-facts"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("os:\n"), "{text}");
    assert!(text.contains(&format!("family: {family}")), "{text}");
}

#[test]
fn compiles_see_the_gathered_facts() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site.pp");
    std::fs::write(
        &site,
        "notify { \"${facts['os']['family']}/${facts['networking']['hostname']}/${::osfamily}/${facts['from_env']}/${facts['clientcert']}\": }\n",
    )
    .unwrap();
    let facts = json_of(&ordo(
        &["facts", "--json", "--show-legacy", "--no-external-facts"],
        &[],
    ));
    let out = ordo(
        &["compile", site.to_str().unwrap(), "--node", "n1.example"],
        &[("FACTER_from_env", "yes")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = format!(
        "Notify[{}/{}/{}/yes/n1.example]",
        facts["os"]["family"].as_str().unwrap(),
        facts["networking"]["hostname"].as_str().unwrap(),
        facts["osfamily"].as_str().unwrap()
    );
    let catalog = String::from_utf8_lossy(&out.stdout);
    assert!(
        catalog.contains(&expected.replace("Notify[", "").replace(']', "")),
        "{expected} not in {catalog}"
    );

    // The facts document an agent sends (`puppet facts` shape) is still read by --facts.
    let doc = dir.path().join("agent.json");
    std::fs::write(
        &doc,
        r#"{"name": "n2", "values": {"os": {"family": "Solaris"}, "networking": {"hostname": "h"}, "osfamily": "Solaris", "from_env": "no", "clientcert": "n2"}, "timestamp": "2024-01-01T00:00:00.000000000+00:00", "expiration": "2024-01-01T00:30:00.000000000+00:00"}"#,
    )
    .unwrap();
    let out = ordo(
        &[
            "compile",
            site.to_str().unwrap(),
            "--facts",
            doc.to_str().unwrap(),
            "--node",
            "n2",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Solaris/h/Solaris/no/n2"));
}
