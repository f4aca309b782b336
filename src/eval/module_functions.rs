//! Ruby functions shipped by corpus modules other than stdlib (openstacklib), written in
//! Rust from their Ruby sources because Ordo cannot run Ruby. They are only reached when no
//! Puppet-language function of the same name exists on the modulepath.

use super::compiler::{Compiler, R};
use super::functions::{Args, Builtin};
use super::stdlib::{arg, fail_plain};
use super::value::Value;
use indexmap::IndexMap;

pub fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "is_service_default" => f_is_service_default,
        "normalize_ip_for_uri" => f_normalize_ip_for_uri,
        "os_transport_url" => f_os_transport_url,
        "inet6_prefix" => f_inet6_prefix,
        _ => return None,
    })
}

/// openstacklib: `'<SERVICE DEFAULT>'` marks an option left to the service's default.
fn f_is_service_default(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if a.values.len() != 1 {
        return Err(fail_plain(
            c,
            a,
            format!(
                "is_service_default(): Wrong number of arguments given ({} for 1)",
                a.values.len()
            ),
        ));
    }
    Ok(Value::Bool(
        matches!(arg(a, 0), Value::Str(s) if s == "<SERVICE DEFAULT>"),
    ))
}

fn bracket_ipv6(ip: &Value) -> Value {
    match ip {
        Value::Str(s) if s.parse::<std::net::Ipv6Addr>().is_ok() => Value::Str(format!("[{s}]")),
        other => other.clone(),
    }
}

fn f_normalize_ip_for_uri(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let items = match arg(a, 0) {
        Value::Array(x) => x,
        _ => a.values.clone(),
    };
    let out: Vec<Value> = items.iter().map(bracket_ipv6).collect();
    Ok(if out.len() == 1 {
        out[0].clone()
    } else {
        Value::Array(out)
    })
}

fn f_inet6_prefix(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let wrap = |v: &Value| match v {
        Value::Str(s) if s.parse::<std::net::Ipv6Addr>().is_ok() => {
            Value::Str(format!("inet6:{s}"))
        }
        other => other.clone(),
    };
    Ok(match arg(a, 0) {
        Value::Array(x) => Value::Array(x.iter().map(wrap).collect()),
        v => wrap(&v),
    })
}

/// `ERB::Util.url_encode`.
fn url_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn present(v: Option<&Value>) -> Option<String> {
    match v {
        None | Some(Value::Undef) => None,
        Some(v) => Some(v.to_display()).filter(|s| !s.is_empty()),
    }
}

/// openstacklib's `os_transport_url`: `transport://user:pass@host:port,.../vhost?query`.
fn f_os_transport_url(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Hash(v) = arg(a, 0) else {
        return Err(fail_plain(
            c,
            a,
            "os_transport_url(): Requires a hash as argument.",
        ));
    };
    let get = |k: &str| v.get(&Value::str(k));
    let Some(transport) = get("transport") else {
        return Err(fail_plain(
            c,
            a,
            "os_transport_url(): transport is required",
        ));
    };
    if get("host").is_some() && get("hosts").is_some() {
        return Err(fail_plain(
            c,
            a,
            "os_transport_url(): cannot use both host and hosts.",
        ));
    }
    let userinfo = present(get("username")).map(|u| match present(get("password")) {
        Some(p) => format!("{}:{}", url_encode(&u), url_encode(&p)),
        None => url_encode(&u),
    });
    let port = present(get("port"));
    let hosts: Vec<Value> = match (get("host"), get("hosts")) {
        (Some(h), _) => vec![h.clone()],
        (_, Some(Value::Array(x))) => x.clone(),
        (_, Some(h)) => vec![h.clone()],
        _ => vec![],
    };
    let mut url = format!("{}://", transport.to_display());
    let host_parts: Vec<String> = hosts
        .iter()
        .map(|h| {
            let mut s = String::new();
            if let Some(u) = &userinfo {
                s.push_str(u);
                s.push('@');
            }
            s.push_str(&bracket_ipv6(h).to_display());
            if let Some(p) = &port {
                s.push(':');
                s.push_str(p);
            }
            s
        })
        .collect();
    url.push_str(&host_parts.join(","));
    url.push('/');
    if let Some(vh) = present(get("virtual_host")) {
        url.push_str(&vh);
    }
    let mut query: IndexMap<String, String> = IndexMap::new();
    if let Some(ssl) = get("ssl") {
        let on = match ssl {
            Value::Bool(b) => *b,
            Value::Str(s) => matches!(s.as_str(), "1" | "t" | "y" | "true" | "yes"),
            _ => false,
        };
        query.insert("ssl".into(), if on { "1" } else { "0" }.into());
    }
    if let Some(Value::Hash(q)) = get("query") {
        for (k, x) in q {
            query.insert(k.to_display(), x.to_display());
        }
    }
    if !query.is_empty() {
        url.push('?');
        url.push_str(
            &query
                .iter()
                .map(|(k, x)| format!("{k}={x}"))
                .collect::<Vec<_>>()
                .join("&"),
        );
    }
    Ok(Value::Str(url))
}
