//! Facts: read from a file (JSON or a YAML subset) or gathered from the local machine.
//!
//! This is IO and lives outside the evaluator, which only receives facts as data.

use serde_json::{json, Map, Value as Json};

/// Reads facts from JSON or YAML text. `puppet facts` output (`{name, values}`) is unwrapped.
pub fn parse_facts(text: &str) -> Result<Json, String> {
    let v: Json = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(json_err) => {
            yaml::parse(text).map_err(|e| format!("neither JSON ({json_err}) nor YAML ({e})"))?
        }
    };
    let v = match v {
        Json::Object(mut o) if o.contains_key("values") && o.contains_key("name") => {
            o.remove("values").unwrap_or(Json::Null)
        }
        other => other,
    };
    match v {
        Json::Object(_) => Ok(v),
        _ => Err("facts must be a mapping of names to values".into()),
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// A small set of core facts gathered from this machine (Linux `/proc` and `/etc`).
pub fn local_facts(node: &str) -> Json {
    let hostname = read("/proc/sys/kernel/hostname").unwrap_or_else(|| "localhost".into());
    let domain = read("/proc/sys/kernel/domainname")
        .filter(|d| !d.is_empty() && d != "(none)")
        .or_else(|| node.split_once('.').map(|(_, d)| d.to_string()))
        .unwrap_or_default();
    let fqdn = if domain.is_empty() {
        hostname.clone()
    } else {
        format!("{hostname}.{domain}")
    };
    let kernel = read("/proc/sys/kernel/ostype").unwrap_or_else(|| "Linux".into());
    let kernelrelease = read("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut os_release = Map::new();
    if let Some(text) = read("/etc/os-release") {
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                os_release.insert(k.to_string(), Json::String(v.trim_matches('"').to_string()));
            }
        }
    }
    let get = |k: &str| {
        os_release
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let name = match get("ID").as_str() {
        "debian" => "Debian".to_string(),
        "ubuntu" => "Ubuntu".to_string(),
        "centos" => "CentOS".to_string(),
        "rhel" => "RedHat".to_string(),
        "fedora" => "Fedora".to_string(),
        other => {
            let mut c = other.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_else(|| kernel.clone())
        }
    };
    let family = match name.as_str() {
        "Debian" | "Ubuntu" => "Debian",
        "CentOS" | "RedHat" | "Fedora" => "RedHat",
        _ => name.as_str(),
    }
    .to_string();
    let full = read("/etc/debian_version")
        .filter(|_| family == "Debian" && name == "Debian")
        .unwrap_or_else(|| get("VERSION_ID"));
    let major = full.split('.').next().unwrap_or("").to_string();
    let minor = full.split('.').nth(1).unwrap_or("").to_string();
    let hardware = std::env::consts::ARCH.to_string();
    let architecture = match (family.as_str(), hardware.as_str()) {
        ("Debian", "x86_64") => "amd64".to_string(),
        ("Debian", "aarch64") => "arm64".to_string(),
        _ => hardware.clone(),
    };
    let mut release = json!({ "full": full, "major": major });
    if !minor.is_empty() {
        release["minor"] = json!(minor);
    }
    let selinux = std::path::Path::new("/sys/fs/selinux/enforce").exists();
    let cpus = read("/proc/cpuinfo").map_or(1, |t| {
        t.lines()
            .filter(|l| l.starts_with("processor"))
            .count()
            .max(1)
    });
    let mem_kb: u64 = read("/proc/meminfo")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0);
    json!({
        "os": {
            "architecture": architecture,
            "distro": {
                "id": name,
                "release": release,
                "codename": get("VERSION_CODENAME"),
                "description": get("PRETTY_NAME"),
            },
            "release": release,
            "family": family,
            "hardware": hardware,
            "selinux": { "enabled": selinux },
            "name": name,
        },
        "osfamily": family,
        "operatingsystem": name,
        "operatingsystemrelease": full,
        "kernel": kernel,
        "kernelrelease": kernelrelease,
        "hostname": hostname,
        "fqdn": fqdn,
        "domain": domain,
        "networking": { "hostname": hostname, "fqdn": fqdn, "domain": domain },
        "processors": { "count": cpus },
        "processorcount": cpus,
        "memory": { "system": { "total_bytes": mem_kb * 1024 } },
        "architecture": architecture,
        "hardwaremodel": hardware,
        // What Puppet adds to the facts it gathers itself (Puppet::Node::Facts#add_local_facts).
        "clientcert": node,
        "clientversion": crate::PUPPET_VERSION,
        "clientnoop": false,
    })
}

/// A reader for the YAML that fact files use: block mappings and sequences, plain and
/// quoted scalars, `[]`/`{}` and simple flow lists. Written here because facts are the
/// only YAML Ordo reads so far; a full YAML crate is not worth its weight for that.
mod yaml {
    use serde_json::{Map, Value as Json};

    struct Line {
        indent: usize,
        text: String,
    }

    pub fn parse(text: &str) -> Result<Json, String> {
        let lines: Vec<Line> = text
            .lines()
            .filter(|l| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#') && t != "---" && t != "..."
            })
            .map(|l| Line {
                indent: l.len() - l.trim_start().len(),
                text: l.trim().to_string(),
            })
            .collect();
        if lines.is_empty() {
            return Ok(Json::Object(Map::new()));
        }
        let mut pos = 0;
        let v = block(&lines, &mut pos, lines[0].indent)?;
        if pos < lines.len() {
            return Err(format!("unexpected content: {}", lines[pos].text));
        }
        Ok(v)
    }

    fn block(lines: &[Line], pos: &mut usize, indent: usize) -> Result<Json, String> {
        if lines[*pos].text.starts_with("- ") || lines[*pos].text == "-" {
            let mut items = vec![];
            while *pos < lines.len()
                && lines[*pos].indent == indent
                && lines[*pos].text.starts_with('-')
            {
                let rest = lines[*pos].text[1..].trim().to_string();
                *pos += 1;
                if rest.is_empty() {
                    if *pos < lines.len() && lines[*pos].indent > indent {
                        items.push(block(lines, pos, lines[*pos].indent)?);
                    } else {
                        items.push(Json::Null);
                    }
                } else if let Some((k, v)) = split_key(&rest) {
                    // A mapping inside a sequence item.
                    let mut m = Map::new();
                    m.insert(k, value_or_block(v, lines, pos, indent + 2)?);
                    if *pos < lines.len()
                        && lines[*pos].indent == indent + 2
                        && !lines[*pos].text.starts_with('-')
                    {
                        if let Json::Object(more) = block(lines, pos, indent + 2)? {
                            m.extend(more);
                        }
                    }
                    items.push(Json::Object(m));
                } else {
                    items.push(scalar(&rest));
                }
            }
            return Ok(Json::Array(items));
        }
        let mut m = Map::new();
        while *pos < lines.len() && lines[*pos].indent == indent {
            let text = lines[*pos].text.clone();
            let Some((k, v)) = split_key(&text) else {
                return Err(format!("expected 'key: value', got {text}"));
            };
            *pos += 1;
            let value = value_or_block(v, lines, pos, indent)?;
            m.insert(k, value);
        }
        Ok(Json::Object(m))
    }

    fn value_or_block(
        v: String,
        lines: &[Line],
        pos: &mut usize,
        indent: usize,
    ) -> Result<Json, String> {
        if !v.is_empty() {
            return Ok(scalar(&v));
        }
        if *pos < lines.len()
            && (lines[*pos].indent > indent
                || (lines[*pos].indent == indent && lines[*pos].text.starts_with('-')))
        {
            let ind = lines[*pos].indent;
            return block(lines, pos, ind);
        }
        Ok(Json::Null)
    }

    fn split_key(text: &str) -> Option<(String, String)> {
        let (k, v) = if let Some(rest) = text.strip_prefix('"') {
            let end = rest.find('"')?;
            let after = rest[end + 1..].trim_start().strip_prefix(':')?;
            (rest[..end].to_string(), after)
        } else if let Some(rest) = text.strip_prefix('\'') {
            let end = rest.find('\'')?;
            let after = rest[end + 1..].trim_start().strip_prefix(':')?;
            (rest[..end].to_string(), after)
        } else {
            let i = text
                .find(": ")
                .or_else(|| text.strip_suffix(':').map(|s| s.len()))?;
            (text[..i].to_string(), &text[(i + 1).min(text.len())..])
        };
        Some((k, v.trim().to_string()))
    }

    fn scalar(s: &str) -> Json {
        let s = s.trim();
        if let Some(q) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            return Json::String(
                q.replace("\\\"", "\"")
                    .replace("\\n", "\n")
                    .replace("\\\\", "\\"),
            );
        }
        if let Some(q) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            return Json::String(q.replace("''", "'"));
        }
        if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            if inner.trim().is_empty() {
                return Json::Array(vec![]);
            }
            return Json::Array(inner.split(',').map(scalar).collect());
        }
        if s == "{}" {
            return Json::Object(Map::new());
        }
        match s {
            "~" | "null" | "" => return Json::Null,
            "true" => return Json::Bool(true),
            "false" => return Json::Bool(false),
            _ => {}
        }
        if let Ok(i) = s.parse::<i64>() {
            return Json::from(i);
        }
        if s.contains('.') {
            if let Ok(f) = s.parse::<f64>() {
                if let Some(n) = serde_json::Number::from_f64(f) {
                    return Json::Number(n);
                }
            }
        }
        Json::String(s.to_string())
    }

    #[cfg(test)]
    mod tests {
        use super::parse;
        use serde_json::json;

        #[test]
        fn reads_fact_yaml() {
            let y = "---\nos:\n  family: Debian\n  release:\n    major: '12'\nlist:\n  - a\n  - 2\nempty: []\nflag: true\n";
            assert_eq!(
                parse(y).unwrap(),
                json!({"os": {"family": "Debian", "release": {"major": "12"}}, "list": ["a", 2], "empty": [], "flag": true})
            );
        }
    }
}
