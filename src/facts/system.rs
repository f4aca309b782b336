//! `identity`, `path`, `timezone`, `load_averages`, `system_uptime`, `fips_enabled`,
//! `augeas`, `ruby`, `ssh`, and their legacy names.

use super::util::{base64_decode, read, which};
use super::Gather;
use crate::digest::{hex, sha1, sha256};
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};

/// The system facts; `augeas` is [`augeas_version`]'s answer (asked ahead, see `gather`).
pub fn gather(g: &mut Gather, augeas: Option<String>) {
    identity(g);
    if let Some(p) = std::env::var_os("PATH") {
        g.core("path", json!(p.to_string_lossy()));
    }
    match jiff::tz::TimeZone::try_system() {
        Ok(tz) => {
            let info = tz.to_offset_info(jiff::Timestamp::now());
            g.core("timezone", json!(info.abbreviation().to_string()));
        }
        Err(e) => g.warn("timezone", e),
    }
    match std::fs::read_to_string("/proc/loadavg") {
        Ok(t) => {
            let v: Vec<f64> = t
                .split_whitespace()
                .take(3)
                .filter_map(|x| x.parse().ok())
                .collect();
            if v.len() == 3 {
                g.core(
                    "load_averages",
                    json!({"15m": v[2], "1m": v[0], "5m": v[1]}),
                );
            }
        }
        Err(e) => g.warn("load_averages", format!("/proc/loadavg: {e}")),
    }
    uptime(g);
    g.core(
        "fips_enabled",
        json!(read("/proc/sys/crypto/fips_enabled").is_some_and(|v| v == "1")),
    );
    if let Some(v) = augeas {
        g.core("augeas", json!({"version": v}));
        g.legacy("augeasversion", json!(v));
    }
    ruby(g);
    ssh(g);
}

/// The name of `id` in a `name:x:id:...` file (/etc/passwd, /etc/group).
fn name_of(file: &str, id: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[2].parse::<u32>().ok() == Some(id)).then(|| f[0].to_string())
    })
}

fn identity(g: &mut Gather) {
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let user = name_of("/etc/passwd", uid);
    let group = name_of("/etc/group", gid);
    let mut m = Map::new();
    m.insert("gid".into(), json!(gid));
    if let Some(gr) = &group {
        m.insert("group".into(), json!(gr));
        g.legacy("gid", json!(gr));
    }
    m.insert("privileged".into(), json!(uid == 0));
    m.insert("uid".into(), json!(uid));
    if let Some(u) = &user {
        m.insert("user".into(), json!(u));
        g.legacy("id", json!(u));
    }
    g.core("identity", Json::Object(m));
}

/// `system_uptime` from /proc/uptime (in a container, from PID 1's start, as Facter).
fn uptime(g: &mut Gather) {
    let seconds = match read("/proc/uptime") {
        Some(t) => t
            .split_whitespace()
            .next()
            .and_then(|s| s.split('.').next()?.parse::<u64>().ok()),
        None => None,
    };
    let Some(seconds) = seconds else {
        return g.warn("system_uptime", "/proc/uptime is unreadable");
    };
    let hours = seconds / 3600;
    let days = hours / 24;
    let minutes = (seconds / 60) % 60;
    let text = match days {
        0 => format!("{hours}:{minutes:02} hours"),
        1 => "1 day".to_string(),
        d => format!("{d} days"),
    };
    g.core(
        "system_uptime",
        json!({"days": days, "hours": hours, "seconds": seconds, "uptime": text}),
    );
    g.legacy("uptime", json!(text));
    g.legacy("uptime_days", json!(days));
    g.legacy("uptime_hours", json!(hours));
    g.legacy("uptime_seconds", json!(seconds));
}

/// The `rbconfig.rb` of the Ruby on `PATH` (the Ruby Puppet would run on).
fn rbconfig() -> Option<PathBuf> {
    let ruby = std::fs::canonicalize(which("ruby")?).ok()?;
    let prefix = ruby.parent()?.parent()?.to_path_buf();
    let mut found = None;
    let mut stack: Vec<(PathBuf, u32)> = ["lib", "lib64"]
        .iter()
        .map(|l| (prefix.join(l), 0))
        .collect();
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == "rbconfig.rb" && p.to_string_lossy().contains("ruby") {
                found = Some(p);
            } else if depth < 3 && e.file_type().is_ok_and(|t| t.is_dir()) {
                let n = name.to_string_lossy();
                if depth == 0 && !n.contains("ruby") && !n.contains("linux") {
                    continue;
                }
                stack.push((p, depth + 1));
            }
        }
        if found.is_some() {
            break;
        }
    }
    found
}

/// `CONFIG["key"] = "value"` pairs of rbconfig.rb, `$(var)` references expanded.
fn rbconfig_values(path: &Path) -> Option<Map<String, Json>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut raw: Vec<(String, String)> = Vec::new();
    for l in text.lines() {
        let Some(rest) = l.trim().strip_prefix("CONFIG[\"") else {
            continue;
        };
        let Some((k, v)) = rest.split_once("\"] = ") else {
            continue;
        };
        let v = v.trim();
        let v = if let Some(s) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            s.to_string()
        } else {
            String::new()
        };
        raw.push((k.to_string(), v));
    }
    let get = |k: &str| {
        raw.iter()
            .rev()
            .find(|(rk, _)| rk == k)
            .map(|(_, v)| v.clone())
    };
    fn expand(s: &str, get: &dyn Fn(&str) -> Option<String>, depth: u32) -> String {
        if depth > 8 {
            return s.to_string();
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("$(") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else {
                out.push_str(&rest[i..]);
                return out;
            };
            out.push_str(&expand(
                &get(&after[..end]).unwrap_or_default(),
                get,
                depth + 1,
            ));
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }
    let mut m = Map::new();
    for k in ["RUBY_PROGRAM_VERSION", "arch", "sitelibdir"] {
        let v = get(k).map(|v| expand(&v, &get, 0))?;
        m.insert(k.to_string(), json!(v));
    }
    Some(m)
}

fn ruby(g: &mut Gather) {
    let Some(cfg) = rbconfig().and_then(|p| rbconfig_values(&p)) else {
        return;
    };
    let (platform, sitedir, version) = (
        cfg["arch"].clone(),
        cfg["sitelibdir"].clone(),
        cfg["RUBY_PROGRAM_VERSION"].clone(),
    );
    g.core(
        "ruby",
        json!({"platform": platform, "sitedir": sitedir, "version": version}),
    );
    g.legacy("rubyplatform", platform);
    g.legacy("rubysitedir", sitedir);
    g.legacy("rubyversion", version);
}

/// `ssh`: the host keys, their types and SSHFP fingerprints (SHA-1 and SHA-256 of the key).
fn ssh(g: &mut Gather) {
    const FILES: [&str; 4] = [
        "ssh_host_rsa_key.pub",
        "ssh_host_dsa_key.pub",
        "ssh_host_ecdsa_key.pub",
        "ssh_host_ed25519_key.pub",
    ];
    let mut fact = Map::new();
    for dir in [
        "/etc/ssh",
        "/usr/local/etc/ssh",
        "/etc",
        "/usr/local/etc",
        "/etc/opt/ssh",
    ] {
        if !Path::new(dir).is_dir() {
            continue;
        }
        for f in FILES {
            let Some(text) = read(format!("{dir}/{f}")) else {
                continue;
            };
            let mut words = text.split_whitespace();
            let (Some(kind), Some(key)) = (words.next(), words.next()) else {
                continue;
            };
            let (name, number) = match kind {
                "ssh-rsa" => ("rsa", 1),
                "ssh-dss" => ("dsa", 2),
                "ecdsa-sha2-nistp256" => ("ecdsa", 3),
                "ssh-ed25519" => ("ed25519", 4),
                _ => continue,
            };
            let Some(decoded) = base64_decode(key) else {
                g.warn("ssh", format!("{dir}/{f}: the key is not base64"));
                continue;
            };
            let sha1 = format!("SSHFP {number} 1 {}", hex(&sha1(&decoded)));
            let sha256 = format!("SSHFP {number} 2 {}", hex(&sha256(&decoded)));
            g.legacy(&format!("ssh{name}key"), json!(key));
            g.legacy(&format!("sshfp_{name}"), json!(format!("{sha1}\n{sha256}")));
            fact.insert(
                name.to_string(),
                json!({
                    "fingerprints": {"sha1": sha1, "sha256": sha256},
                    "key": key,
                    "type": kind,
                }),
            );
        }
    }
    if !fact.is_empty() {
        g.core("ssh", Json::Object(fact));
    }
}

/// The version `augparse --version` prints (Facter's `augeas.version`), if augparse is there.
pub fn augeas_version() -> Option<String> {
    let tool = which("augparse")?;
    let o = std::process::Command::new(tool)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    text.lines()
        .find_map(|l| l.strip_prefix("augparse "))
        .and_then(|r| {
            let v = r.split_whitespace().next()?;
            (v.split('.').count() == 3).then(|| v.to_string())
        })
}
