//! `os` (name, family, release, distro, architecture, hardware, selinux), `kernel*`, and
//! their legacy names (`operatingsystem`, `osfamily`, `lsbdist*`, `selinux`...).

use super::util::{key_values, read, run, which};
use super::{obj, Gather};
use serde_json::{json, Map, Value as Json};

/// `/etc/os-release`, keys lower-cased, with Facter's touches: the name shortened to its
/// first word (two for Red Hat, Oracle, Arch, Manjaro), a `VERSION_ID` without a dot given
/// `.0`.
struct OsRelease(Map<String, Json>);

impl OsRelease {
    fn read() -> OsRelease {
        let mut m = Map::new();
        let text = read("/etc/os-release")
            .or_else(|| read("/usr/lib/os-release"))
            .unwrap_or_default();
        for (k, v) in key_values(&text) {
            m.insert(k.to_ascii_lowercase(), Json::String(v));
        }
        if let Some(Json::String(name)) = m.get("name").cloned() {
            let lower = name.to_ascii_lowercase();
            let words: Vec<&str> = name.split(' ').collect();
            let mut n = if ["red", "oracle", "arch", "manjaro"]
                .iter()
                .any(|p| lower.starts_with(p))
            {
                words.iter().take(2).copied().collect::<String>()
            } else if lower.ends_with("mariner") {
                words.last().unwrap_or(&"").trim().to_string()
            } else {
                words.first().unwrap_or(&"").trim().to_string()
            };
            if lower.starts_with("arch") || lower.starts_with("manjaro") {
                n = capitalize(&n);
            }
            if lower.starts_with("virtuozzo") {
                n.push_str("Linux");
            }
            m.insert("name".into(), json!(n));
        }
        OsRelease(m)
    }

    fn get(&self, k: &str) -> Option<String> {
        self.0.get(k).and_then(Json::as_str).map(String::from)
    }

    fn version_id(&self) -> Option<String> {
        self.get("version_id")
            .map(|v| if v.contains('.') { v } else { format!("{v}.0") })
    }
}

/// Ruby's `String#capitalize`: the first letter upper case, the rest lower case.
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| {
        f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase()
    })
}

/// The family of an os-release `ID` (or `ID_LIKE`) as Facter names it.
fn family_of(id: &str) -> String {
    const FAMILIES: &[(&str, &[&str])] = &[
        (
            "RedHat",
            &[
                "redhat",
                "rhel",
                "fedora",
                "centos",
                "scientific",
                "ascendos",
                "cloudlinux",
                "psbm",
                "oraclelinux",
                "ovs",
                "oel",
                "amazon",
                "xenserver",
                "xcp-ng",
                "virtuozzo",
                "photon",
                "mariner",
            ],
        ),
        (
            "Debian",
            &["debian", "ubuntu", "huaweios", "linuxmint", "devuan", "kde"],
        ),
        ("Suse", &["sles", "sled", "suse"]),
        ("Gentoo", &["gentoo"]),
        ("Archlinux", &["arch", "manjaro"]),
        ("Mandrake", &["mandrake", "mandriva", "mageia"]),
    ];
    let lower = id.to_ascii_lowercase();
    for (family, members) in FAMILIES {
        if members.iter().any(|m| lower.contains(m)) {
            return (*family).to_string();
        }
    }
    capitalize(id)
}

/// A release string as a hash: `full`, `major`, and `minor` when there is one.
fn release_hash(full: &str, strip_leading_zero: bool) -> Json {
    let parts: Vec<&str> = full.split('.').collect();
    let mut m = Map::new();
    m.insert("full".into(), json!(full));
    m.insert("major".into(), json!(parts[0]));
    if let Some(minor) = parts.get(1) {
        let minor = match minor.strip_prefix('0') {
            Some(rest)
                if strip_leading_zero
                    && rest.starts_with(|c: char| c.is_ascii_digit() && c != '0') =>
            {
                rest
            }
            _ => minor,
        };
        m.insert("minor".into(), json!(minor));
    }
    Json::Object(m)
}

/// What `lsb_release -a` reports, when the tool is installed (Facter's condition for the
/// `lsbdist*` facts). The os-release reader that Debian ships as `lsb_release` is read the
/// way it reads; any other `lsb_release` is run.
fn lsb_release(osr: &OsRelease) -> Option<Map<String, Json>> {
    let tool = which("lsb_release")?;
    let script = std::fs::read(&tool).unwrap_or_default();
    let is_os_release_reader =
        script.starts_with(b"#!/bin/sh") && script.windows(10).any(|w| w == b"os-release");
    let mut m = Map::new();
    if is_os_release_reader {
        let mut id = osr
            .0
            .get("id")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        // The raw ID (not Facter's reworked name), first letter upper case; the NAME when
        // it is the same word.
        let raw = key_values(&read("/etc/os-release").unwrap_or_default());
        let raw_get = |k: &str| raw.iter().find(|(rk, _)| rk == k).map(|(_, v)| v.clone());
        if let Some(r) = raw_get("ID") {
            id = r;
        }
        let mut c = id.chars();
        id = c.next().map_or_else(String::new, |f| {
            f.to_uppercase().collect::<String>() + c.as_str()
        });
        if let Some(name) = raw_get("NAME") {
            if name.to_lowercase() == id.to_lowercase() {
                id = name;
            }
        }
        let or_na = |v: Option<String>| v.filter(|v| !v.is_empty()).unwrap_or("n/a".into());
        m.insert("distributor_id".into(), json!(or_na(Some(id))));
        m.insert("description".into(), json!(or_na(raw_get("PRETTY_NAME"))));
        m.insert("release".into(), json!(or_na(raw_get("VERSION_ID"))));
        m.insert("codename".into(), json!(or_na(raw_get("VERSION_CODENAME"))));
    } else {
        let out = run(&tool.to_string_lossy(), &["-a"])?;
        for line in out.replace('\t', "").lines() {
            if let Some((k, v)) = line.split_once(':') {
                let key = k
                    .to_lowercase()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join("_");
                m.insert(key, json!(v));
            }
        }
    }
    Some(m)
}

pub fn gather(g: &mut Gather) {
    let osr = OsRelease::read();
    let machine = g.uname.machine.clone();
    let kernel = read("/proc/sys/kernel/ostype").unwrap_or_else(|| "Linux".into());
    let release = g.uname.release.clone();

    // Which branch of Facter's OS hierarchy applies.
    let id = osr.get("id").unwrap_or_default();
    let family = family_of(&osr.get("id_like").unwrap_or_else(|| id.clone()));
    let family = if family.is_empty() {
        kernel.clone()
    } else {
        family
    };
    let debian_like = family == "Debian";
    let name = osr
        .get("name")
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| kernel.clone());

    let architecture = if debian_like && machine == "x86_64" {
        "amd64".to_string()
    } else if debian_like && machine == "aarch64" {
        "arm64".to_string()
    } else if ["i386", "i486", "i586", "i686", "pentium"]
        .iter()
        .any(|p| machine.contains(p))
    {
        "i386".to_string()
    } else {
        machine.clone()
    };

    // os.release: /etc/debian_version on Debian and derivatives that keep it meaningful,
    // /etc/redhat-release on Red Hat, else VERSION_ID.
    let rel = if debian_like && (id == "debian" || id == "devuan" || id == "raspbian") {
        read("/etc/debian_version").map(|v| release_hash(&v, true))
    } else if family == "RedHat" {
        redhat_release()
            .or_else(|| osr.get("version_id"))
            .map(|v| release_hash(&v, false))
    } else if debian_like {
        osr.get("version_id").map(|v| release_hash(&v, false))
    } else {
        osr.version_id().map(|v| json!({"full": v, "major": v}))
    };

    let lsb = lsb_release(&osr);
    let lsb_get = |k: &str| -> Option<String> {
        lsb.as_ref()?
            .get(k)
            .and_then(Json::as_str)
            .map(String::from)
    };

    // os.distro: on Debian and Ubuntu from os-release; elsewhere from lsb_release.
    let distro = if debian_like {
        let codename = osr.get("version_codename").or_else(|| {
            let v = osr.get("version")?;
            let open = v.rfind('(')?;
            Some(v[open + 1..].trim_end_matches(')').to_string())
        });
        let mut d = obj(vec![
            ("codename", codename.map(Json::from)),
            ("description", osr.get("pretty_name").map(Json::from)),
            ("id", Some(json!(capitalize(&id)))),
            ("release", rel.clone()),
        ]);
        if id == "ubuntu" {
            d["release"] = osr
                .get("version_id")
                .map_or(Json::Null, |v| release_hash(&v, false));
        }
        Some(d)
    } else if lsb.is_some() {
        Some(obj(vec![
            ("codename", lsb_get("codename").map(Json::from)),
            ("description", lsb_get("description").map(Json::from)),
            ("id", lsb_get("distributor_id").map(Json::from)),
            (
                "release",
                lsb_get("release").map(|r| release_hash(&r, false)),
            ),
            ("specification", lsb_get("lsb_version").map(Json::from)),
        ]))
    } else {
        None
    };

    let selinux = selinux();

    let mut os = Map::new();
    os.insert("architecture".into(), json!(architecture));
    if let Some(d) = distro.clone() {
        os.insert("distro".into(), d);
    }
    os.insert("family".into(), json!(family));
    os.insert("hardware".into(), json!(machine));
    os.insert("name".into(), json!(name));
    if let Some(r) = rel.clone() {
        os.insert("release".into(), r);
    }
    os.insert("selinux".into(), selinux.clone());
    g.core("os", Json::Object(os));

    g.legacy("architecture", json!(architecture));
    g.legacy("hardwaremodel", json!(machine));
    g.legacy("operatingsystem", json!(name));
    g.legacy("osfamily", json!(family));
    if let Some(r) = &rel {
        g.legacy("operatingsystemmajrelease", r["major"].clone());
        g.legacy("operatingsystemrelease", r["full"].clone());
    }
    g.legacy("selinux", selinux["enabled"].clone());
    for (k, legacy) in [
        ("config_mode", "selinux_config_mode"),
        ("config_policy", "selinux_config_policy"),
        ("current_mode", "selinux_current_mode"),
        ("enforced", "selinux_enforced"),
        ("policy_version", "selinux_policyversion"),
    ] {
        if let Some(v) = selinux.get(k) {
            g.legacy(legacy, v.clone());
        }
    }
    if lsb.is_some() {
        g.legacy_opt("lsbdistcodename", lsb_get("codename").map(Json::from));
        g.legacy_opt("lsbdistdescription", lsb_get("description").map(Json::from));
        g.legacy_opt("lsbdistid", lsb_get("distributor_id").map(Json::from));
        g.legacy_opt("lsbrelease", lsb_get("lsb_version").map(Json::from));
        let dr = distro.as_ref().and_then(|d| d.get("release")).cloned();
        let dr = if debian_like {
            dr
        } else {
            lsb_get("release").map(|r| release_hash(&r, false))
        };
        if let Some(r) = dr.filter(Json::is_object) {
            g.legacy_opt("lsbdistrelease", r.get("full").cloned());
            g.legacy_opt("lsbmajdistrelease", r.get("major").cloned());
            g.legacy_opt("lsbminordistrelease", r.get("minor").cloned());
        }
    }

    g.core("kernel", json!(kernel));
    g.core("kernelrelease", json!(release));
    let version = release.split('-').next().unwrap_or("").to_string();
    let major: Vec<&str> = version.split('.').take(2).collect();
    g.core("kernelversion", json!(version));
    g.core("kernelmajversion", json!(major.join(".")));
}

/// The version in `/etc/redhat-release` (`... release 9.3 (Plow)`).
fn redhat_release() -> Option<String> {
    let text = read("/etc/redhat-release")?;
    let after = text.split(" release ").nth(1)?;
    after.split_whitespace().next().map(String::from)
}

/// `os.selinux`: enabled when selinuxfs is mounted and /etc/selinux/config is readable.
fn selinux() -> Json {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mountpoint = mounts
        .lines()
        .find(|l| l.contains("selinuxfs"))
        .and_then(|l| l.split_whitespace().nth(1))
        .map(String::from);
    let config = std::fs::read_to_string("/etc/selinux/config").ok();
    let (Some(mp), Some(config)) = (mountpoint, config.filter(|c| !c.is_empty())) else {
        return json!({"enabled": false});
    };
    let mut m = Map::new();
    m.insert("enabled".into(), json!(true));
    for line in config.lines() {
        if line.starts_with("SELINUX=") {
            m.insert(
                "config_mode".into(),
                json!(line.rsplit('=').next().unwrap_or("").trim()),
            );
        } else if line.starts_with("SELINUXTYPE=") {
            m.insert(
                "config_policy".into(),
                json!(line.rsplit('=').next().unwrap_or("").trim()),
            );
        }
    }
    let enforced = std::fs::read_to_string(format!("{mp}/enforce")).is_ok_and(|s| s == "1");
    m.insert(
        "current_mode".into(),
        json!(if enforced { "enforcing" } else { "permissive" }),
    );
    m.insert("enforced".into(), json!(enforced));
    if let Ok(p) = std::fs::read_to_string(format!("{mp}/policyvers")) {
        m.insert("policy_version".into(), json!(p));
    }
    Json::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_and_families() {
        assert_eq!(
            release_hash("12.11", true),
            json!({"full": "12.11", "major": "12", "minor": "11"})
        );
        assert_eq!(
            release_hash("10.04", true),
            json!({"full": "10.04", "major": "10", "minor": "4"})
        );
        assert_eq!(release_hash("9", false), json!({"full": "9", "major": "9"}));
        assert_eq!(family_of("rhel centos fedora"), "RedHat");
        assert_eq!(family_of("debian"), "Debian");
        assert_eq!(family_of("alpine"), "Alpine");
    }
}
