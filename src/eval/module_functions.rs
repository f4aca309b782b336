//! Ruby functions shipped by modules other than stdlib (openstacklib and others), written in
//! Rust from their Ruby sources because Ordo cannot run Ruby. They are only reached when no
//! Puppet-language function of the same name exists on the modulepath.

use super::compiler::{Compiler, R};
use super::functions::{Args, Builtin};
use super::stdlib::{arg, fail_plain};
use super::values::strings::{leading_size, ruby_to_f};
use super::values::value::Value;
use indexmap::IndexMap;

pub fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "is_service_default" => f_is_service_default,
        "normalize_ip_for_uri" => f_normalize_ip_for_uri,
        "os_transport_url" => f_os_transport_url,
        "inet6_prefix" => f_inet6_prefix,
        "apache::bool2httpd" => f_bool2httpd,
        "memcached::max_memory" => f_memcached_max_memory,
        "mysql::password" => f_mysql_password,
        "postgresql::postgresql_password" | "postgresql_password" => f_postgresql_password,
        "postgresql::postgresql_escape" => f_postgresql_escape,
        "postgresql::postgresql_acls_to_resources_hash" => f_postgresql_acls_to_resources_hash,
        "mco_array_to_string" => f_mco_array_to_string,
        "getvar_emptystring" => f_getvar_emptystring,
        "ipaddresses" => f_ipaddresses,
        "template_body" => f_template_body,
        "collectd_convert_processes" => f_collectd_convert_processes,
        "assemble_nexus_url" => f_assemble_nexus_url,
        "inifile::create_ini_settings" => f_create_ini_settings,
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

/// puppetlabs-apache: a boolean (or a string containing true/false, any case) as httpd's
/// `On`/`Off`; anything else as its string.
fn f_bool2httpd(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let v = arg(a, 0);
    let has = |s: &str, w: &str| s.to_ascii_lowercase().contains(w);
    Ok(Value::str(match &v {
        Value::Undef | Value::Bool(false) => "Off",
        Value::Str(s) if has(s, "false") => "Off",
        Value::Bool(true) => "On",
        Value::Str(s) if has(s, "true") => "On",
        other => return Ok(Value::Str(other.to_display())),
    }))
}

/// saz-memcached: the cache size in MB, `arg` as a number of MB or as a percentage (default
/// 95%) of the `memorysize` fact (`15.61 GiB`).
fn f_memcached_max_memory(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let given = arg(a, 0);
    let given = match given {
        Value::Undef | Value::Bool(false) => None,
        v => Some(v.to_display()),
    };
    if let Some(g) = given.as_deref().filter(|g| !g.ends_with('%')) {
        return Ok(Value::Int(ruby_to_f(g).trunc() as i64));
    }
    let percent = ruby_to_f(given.as_deref().unwrap_or("95%"));
    let memsize = match c.opts.facts.get("memorysize") {
        Some(serde_json::Value::String(s)) => s.clone(),
        _ => {
            return Err(fail_plain(
                c,
                a,
                "memcached::max_memory(): the memorysize fact is not set".to_string(),
            ))
        }
    };
    let (value, prefix) = leading_size(&memsize);
    let shift = match prefix {
        None => 0,
        Some('k') => 10,
        Some('M') => 20,
        Some('G') => 30,
        Some('T') => 40,
        Some('E') => 50,
        Some(p) => {
            return Err(fail_plain(
                c,
                a,
                format!("memcached_max_memory(): Unknown prefix {p}"),
            ))
        }
    };
    let bytes = (value * (1u64 << shift) as f64) as i64;
    Ok(Value::Int(
        ((bytes / (1 << 20)) as f64 * (percent / 100.0)).floor() as i64,
    ))
}

/// puppetlabs-mysql: MySQL's native password hash, `*` and the upper-case hex SHA-1 of the
/// SHA-1 of the password; an empty password or one already hashed is returned as is.
fn f_mysql_password(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let password = match arg(a, 0) {
        Value::Str(s) => s,
        other => {
            let got = other.type_name();
            return Err(fail_plain(
                c,
                a,
                format!("'mysql::password' parameter 'password' expects a String value, got {got}"),
            ));
        }
    };
    let hashed = password.len() >= 41 && {
        let tail = &password.as_bytes()[password.len() - 41..];
        tail[0] == b'*'
            && tail[1..]
                .iter()
                .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b))
    };
    if password.is_empty() || hashed {
        return Ok(Value::Str(password));
    }
    let inner = crate::digest::sha1(password.as_bytes());
    let outer = crate::digest::hex(&crate::digest::sha1(&inner));
    Ok(Value::Str(format!("*{}", outer.to_uppercase())))
}

/// puppetlabs-postgresql: `md5` and the MD5 of the password followed by the user name.
fn f_postgresql_password(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let (user, password) = (arg(a, 0).to_display(), arg(a, 1).to_display());
    Ok(Value::Str(format!(
        "md5{}",
        super::values::strings::md5_hex(format!("{password}{user}").as_bytes())
    )))
}

/// puppetlabs-postgresql: a dollar-quoted string, with a tag from MD5 digests when the text
/// holds `$$` or ends with `$`.
fn f_postgresql_escape(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let input = arg(a, 0).to_display();
    if !(input.contains("$$") || input.ends_with('$')) {
        return Ok(Value::Str(format!("$${input}$$")));
    }
    let tag_of = |s: &str| -> String {
        super::values::strings::md5_hex(s.as_bytes())[..6]
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect()
    };
    let mut tag = tag_of(&input);
    while input.contains(&tag) {
        tag = tag_of(&tag);
    }
    Ok(Value::Str(format!("${tag}${input}${tag}$")))
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

/// puppet-community-mcollective: each element of an array as Ruby's `to_s` writes it.
fn f_mco_array_to_string(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    match arg(a, 0) {
        Value::Array(items) => Ok(Value::Array(
            items
                .iter()
                .map(|v| Value::Str(super::values::ruby_print::ruby_to_s(v)))
                .collect(),
        )),
        other => Err(fail_plain(
            c,
            a,
            format!(
                "Expected an array, but got a {}",
                super::stdlib::ruby_class(&other)
            ),
        )),
    }
}

/// arioch-redis: a (qualified) variable's value, or `''` when it is unknown or undef.
fn f_getvar_emptystring(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if a.values.len() != 1 {
        return Err(fail_plain(
            c,
            a,
            format!(
                "getvar_emptystring(): wrong number of arguments ({}; must be 1)",
                a.values.len()
            ),
        ));
    }
    let name = arg(a, 0).to_display();
    Ok(match c.quiet_var(name.trim_start_matches("::"), a.scope) {
        Some(v) if !v.is_undef() => v,
        _ => Value::str(""),
    })
}

/// saz-ssh: the addresses of every interface but loopback, from the legacy facts
/// `interfaces`, `ipaddress_<if>` and `ipaddress6_<if>`; `false` without `interfaces`.
fn f_ipaddresses(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let interfaces = match c.quiet_var("interfaces", a.scope) {
        Some(Value::Str(s)) => s,
        Some(v) if !v.is_undef() => v.to_display(),
        _ => return Ok(Value::Bool(false)),
    };
    let mut out = vec![];
    for iface in interfaces.split(',') {
        if iface.contains("lo") {
            continue;
        }
        for fact in [format!("ipaddress_{iface}"), format!("ipaddress6_{iface}")] {
            if let Some(v) = c.quiet_var(&fact, a.scope).filter(|v| !v.is_undef()) {
                out.push(v);
            }
        }
    }
    Ok(Value::Array(out))
}

/// richardc-datacat: the unrendered text of templates (`mod/file` in the module's
/// `templates/`), joined.
fn f_template_body(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = String::new();
    for spec in a.values.clone() {
        let spec = spec.to_display();
        match c.template_file(&spec).map(|(_, t)| t) {
            Some(text) => out.push_str(&text),
            None => {
                return Err(fail_plain(
                    c,
                    a,
                    format!("Could not find template '{spec}'"),
                ));
            }
        }
    }
    Ok(Value::Str(out))
}

/// puppetlabs-postgresql: `pg_hba.conf` lines as `postgresql::server::pg_hba_rule` bodies
/// for `create_resources`, keyed `postgresql class generated rule ID INDEX` (the index of a
/// line's first occurrence, as Ruby's `Array#index` gives it), ordered from `offset`.
fn f_postgresql_acls_to_resources_hash(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let acls: Vec<String> = match arg(a, 0) {
        Value::Array(x) => x.iter().map(Value::to_display).collect(),
        _ => vec![],
    };
    let id = arg(a, 1).to_display();
    let offset = match arg(a, 2) {
        Value::Int(n) => n,
        _ => 0,
    };
    let mut out: IndexMap<Value, Value> = IndexMap::new();
    for acl in &acls {
        let index = acls.iter().position(|x| x == acl).unwrap_or(0);
        let parts: Vec<&str> = acl.split_whitespace().collect();
        if parts.len() < 4 {
            return Err(fail_plain(
                c,
                a,
                format!(
                    "postgresql::postgresql_acls_to_resources_hash(): acl line {index} does not have enough parts"
                ),
            ));
        }
        let text = |v: &str| Value::str(v.to_string());
        let rest = |from: usize| Value::Str(parts[from..].join(" "));
        let mut r: IndexMap<Value, Value> = IndexMap::new();
        r.insert(Value::str("type"), text(parts[0]));
        r.insert(Value::str("database"), text(parts[1]));
        r.insert(Value::str("user"), text(parts[2]));
        r.insert(
            Value::str("order"),
            Value::Str(format!("{:03}", offset + index as i64)),
        );
        // Where the method sits, after an address of one or two fields (a netmask starts
        // with a digit); a missing one is Ruby's nil, undef in the hash.
        let method_at = if parts[0] == "local" {
            3
        } else if parts
            .get(4)
            .is_some_and(|p| p.starts_with(|c: char| c.is_ascii_digit()))
        {
            r.insert(
                Value::str("address"),
                Value::Str(format!("{} {}", parts[3], parts[4])),
            );
            5
        } else {
            r.insert(Value::str("address"), text(parts[3]));
            4
        };
        let method = parts.get(method_at).map_or(Value::Undef, |m| text(m));
        r.insert(Value::str("auth_method"), method);
        if parts.len() > method_at + 1 {
            r.insert(Value::str("auth_option"), rest(method_at + 1));
        }
        out.insert(
            Value::Str(format!("postgresql class generated rule {id} {index}")),
            Value::Hash(r.into()),
        );
    }
    Ok(Value::Hash(out.into()))
}

/// collectd's `collectd_convert_processes(list)`: the old list of process names and
/// `{'name' => .., ...}` hashes as the hash `create_resources` takes (a hash is kept).
fn f_collectd_convert_processes(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let fail = |c: &Compiler<'_>, a: &Args, m: &str| {
        fail_plain(c, a, format!("convert_process_array(): {m}"))
    };
    if a.values.len() != 1 {
        return Err(fail(c, a, "Needs exactly one argument"));
    }
    let items = match arg(a, 0) {
        h @ Value::Hash(_) => return Ok(h),
        Value::Array(items) => items,
        _ => return Err(fail(c, a, "Needs an array as argument")),
    };
    let mut out = IndexMap::new();
    for p in items {
        match p {
            Value::Str(name) => {
                out.insert(Value::Str(name), Value::Hash(Default::default()));
            }
            Value::Hash(h) => {
                let mut h: IndexMap<Value, Value> =
                    h.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let name = h.shift_remove(&Value::str("name")).unwrap_or(Value::Undef);
                out.insert(name, Value::Hash(h.into()));
            }
            _ => return Err(fail(c, a, "array element must be string or hash")),
        }
    }
    Ok(Value::Hash(out.into()))
}

/// archive's `assemble_nexus_url(url, params)`: the artifact content URL with the
/// parameters as a query string (values escaped as Ruby's `CGI.escape`).
fn f_assemble_nexus_url(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let url = arg(a, 0).to_display();
    let query: Vec<String> = match arg(a, 1) {
        Value::Hash(h) => h
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_display(), cgi_escape(&v.to_display())))
            .collect(),
        _ => vec![],
    };
    Ok(Value::Str(format!(
        "{url}/service/local/artifact/maven/content?{}",
        query.join("&")
    )))
}

/// Ruby's `CGI.escape`: bytes other than letters, digits and `_.-~` as `%XX`, spaces `+`.
fn cgi_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// inifile's `inifile::create_ini_settings(settings, defaults = {})`: an `ini_setting`
/// per setting of each section, titled `"PATH [SECTION] SETTING"`, declared through
/// `create_resources` with the defaults.
fn f_create_ini_settings(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let Value::Hash(settings) = arg(a, 0) else {
        return Err(fail_plain(
            c,
            a,
            "'inifile::create_ini_settings' parameter 'settings' expects a Hash value".to_string(),
        ));
    };
    let defaults = match arg(a, 1) {
        Value::Hash(h) => h,
        _ => Default::default(),
    };
    let mut resources = IndexMap::new();
    for (section, body) in settings.iter() {
        let Value::Hash(body) = body else {
            return Err(fail_plain(
                c,
                a,
                format!(
                    "create_ini_settings(): Section {} must contain a Hash",
                    section.to_display()
                ),
            ));
        };
        // Ruby's `defaults.merge(settings)['path']`: a section named `path` wins.
        let path = settings
            .get(&Value::str("path"))
            .or_else(|| defaults.get(&Value::str("path")))
            .filter(|p| !p.is_undef())
            .cloned();
        let Some(path) = path else {
            return Err(fail_plain(
                c,
                a,
                "create_ini_settings(): must pass the path parameter to the Ini_setting resource!"
                    .to_string(),
            ));
        };
        for (setting, value) in body.iter() {
            let mut res: IndexMap<Value, Value> = IndexMap::new();
            res.insert(Value::str("ensure"), Value::str("present"));
            res.insert(Value::str("section"), section.clone());
            res.insert(Value::str("setting"), setting.clone());
            match value {
                Value::Hash(h) => {
                    for (k, v) in h.iter() {
                        res.insert(k.clone(), v.clone());
                    }
                }
                v => {
                    res.insert(Value::str("value"), v.clone());
                }
            }
            let title = format!(
                "{} [{}] {}",
                path.to_display(),
                section.to_display(),
                setting.to_display()
            );
            resources.insert(Value::Str(title), Value::Hash(res.into()));
        }
    }
    c.call_function(
        "create_resources",
        vec![
            Value::str("ini_setting"),
            Value::Hash(resources.into()),
            Value::Hash(defaults),
        ],
        None,
        a.scope,
        a.span,
    )
}
