//! Still more of puppetlabs-stdlib's Ruby functions (8.5): text (`regexpescape`,
//! `delete_regex`, `convert_base`, `type3x`, `stdlib::extname`), checks (`is_a`,
//! `validate_domain_name`, `validate_email_address`, `stdlib::ip_in_range`), data
//! (`parsepson`, `loadyaml`, `loadjson`, `glob`) and random values (`seeded_rand_string`,
//! `shuffle`, `str2saltedsha512`, `str2saltedpbkdf2`, `time`) and `to_toml`.
//!
//! Each follows stdlib's Ruby source: same argument handling, same results, and the error
//! text Puppet users see. The 4.x functions' dispatches are in `stdlib_more::SIGNATURES`.

use crate::eval::compiler::{Compiler, R};
use crate::eval::functions::stdlib::{arg, fail, fail_plain, inspect, ruby_class};
use crate::eval::functions::stdlib_more::{
    arity_exact, map_strings, no_method, ruby_inspect, undef_to_empty,
};
use crate::eval::functions::Args;
use crate::eval::types::PType;
use crate::eval::values::value::{format_float, Regex, Value};
use crate::eval::LogLevel;

// ---- text ----------------------------------------------------------------------------------------

/// Ruby's `Regexp.escape`: regex metacharacters and blanks escaped (`/` is not).
fn regexp_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '[' | ']' | '{' | '}' | '(' | ')' | '|' | '-' | '*' | '.' | '\\' | '?' | '+' | '^'
            | '$' | '#' | ' ' => {
                out.push('\\');
                out.push(ch);
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            _ => out.push(ch),
        }
    }
    out
}

/// `regexpescape(string_or_array)`: `Regexp.escape` of a string, or of each string of an
/// array (other elements kept).
pub(in crate::eval) fn f_regexpescape(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    map_strings(c, a, regexp_escape)
}

/// `delete_regex(collection, patterns)`: drops the array elements (hash keys) that match
/// `\bPATTERN\b` for any of the patterns; elements that are not strings never match.
pub(in crate::eval) fn f_delete_regex(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.len() != 2 {
        let n = a.values.len();
        return Err(fail(
            c,
            a,
            format!("Wrong number of arguments given {n} for 2"),
        ));
    }
    let mut collection = arg(a, 0);
    let patterns = match arg(a, 1) {
        Value::Array(items) => items,
        other => vec![other],
    };
    for item in patterns {
        let re = Regex::new(&format!("\\b{}\\b", item.to_display())).map_err(|e| fail(c, a, e))?;
        let hit = |v: &Value| matches!(v, Value::Str(s) if re.is_match(s));
        collection = match collection {
            Value::Array(items) => Value::Array(items.into_iter().filter(|v| !hit(v)).collect()),
            Value::Hash(h) => Value::Hash(h.into_iter().filter(|(k, _)| !hit(k)).collect()),
            s @ Value::Str(_) => return Err(no_method(c, a, "reject!", &s)),
            other => {
                let msg = format!(
                    "First argument must be an Array, Hash, or String. Given an argument of class {}.",
                    ruby_class(&other)
                );
                return Err(fail(c, a, msg));
            }
        };
    }
    Ok(collection)
}

/// Ruby's `/^[0-9]+$/` (any line of the text all digits).
fn has_digit_line(s: &str) -> bool {
    s.split('\n')
        .any(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
}

/// `convert_base(number, base)`: the integer (or base-10 string) written in base 2 to 36.
pub(in crate::eval) fn f_convert_base(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_exact(c, a, 2)?;
    let (number, base) = (arg(a, 0), arg(a, 1));
    for (v, which) in [(&number, "First"), (&base, "Second")] {
        if !matches!(v, Value::Int(_) | Value::Str(_)) {
            let msg = format!("{which} argument must be either a string or an integer");
            return Err(fail(c, a, msg));
        }
    }
    for v in [&number, &base] {
        if matches!(v, Value::Str(s) if !has_digit_line(s)) {
            return Err(fail(
                c,
                a,
                "First argument must be an integer or a string corresponding to an integer in base 10",
            ));
        }
    }
    let to_i = |v: &Value| match v {
        Value::Int(n) => i128::from(*n),
        other => crate::eval::values::strings::ruby_to_i(&other.to_display()) as i128,
    };
    let (n, base) = (to_i(&number), to_i(&base));
    if !(2..=36).contains(&base) {
        return Err(fail(
            c,
            a,
            "base must be at least 2 and must not be greater than 36",
        ));
    }
    Ok(Value::Str(to_radix(n, base as u32)))
}

/// Ruby's `Integer#to_s(base)`: lower-case digits, a leading `-` when negative.
fn to_radix(n: i128, base: u32) -> String {
    let mut digits = Vec::new();
    let mut m = n.unsigned_abs();
    loop {
        let d = (m % u128::from(base)) as u32;
        digits.push(char::from_digit(d, base).unwrap_or('0'));
        m /= u128::from(base);
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        digits.push('-');
    }
    digits.iter().rev().collect()
}

/// `type3x(value)` (deprecated): the Ruby class as Puppet 3 named it; a string that reads
/// back as the same integer or float is `integer` or `float`.
pub(in crate::eval) fn f_type3x(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_exact(c, a, 1)?;
    let name = match arg(a, 0) {
        Value::Str(s) if is_canonical_int(&s) => "integer",
        Value::Str(s)
            if s.parse::<f64>()
                .is_ok_and(|f| f.is_finite() && format_float(f) == s) =>
        {
            "float"
        }
        Value::Str(_) => "string",
        Value::Int(_) => "integer",
        Value::Float(_) => "float",
        Value::Bool(_) => "boolean",
        Value::Array(_) => "array",
        Value::Hash(_) => "hash",
        _ => return Err(fail(c, a, "Unknown type")),
    };
    Ok(Value::str(name))
}

/// `s == s.to_i.to_s` in Ruby: an integer written without sign noise or leading zeros.
fn is_canonical_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && s != "-0"
}

/// `stdlib::extname(filename)`: Ruby's `File.extname` on a POSIX system: the last
/// component's text from its last dot (`.` alone for a trailing dot); none when the only
/// dots lead the name (`.profile`).
pub(in crate::eval) fn f_extname(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let path = arg(a, 0).to_display();
    let trimmed = path.trim_end_matches('/');
    let base = trimmed.rsplit('/').next().unwrap_or("");
    let name = base.trim_start_matches('.');
    Ok(Value::str(name.rfind('.').map_or("", |i| &name[i..])))
}

// ---- checks --------------------------------------------------------------------------------------

/// `is_a(value, type)`: whether the value is an instance of the type.
pub(in crate::eval) fn f_is_a(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(match arg(a, 1) {
        Value::Type(t) => t.is_instance(&arg(a, 0)),
        _ => false,
    }))
}

/// `validate_domain_name(names...)` and `validate_email_address(addresses...)`: fail on the
/// first argument that is not a string, or not a domain name (an email address) by
/// `is_domain_name` (`is_email_address`).
pub(in crate::eval) fn f_validate_name(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    // stdlib 9: both names run `stdlib::validate_*`, a 4.x function whose repeated parameter
    // `values` is typed; Puppet's dispatch names the type in the failure.
    if crate::eval::functions::stdlib9::is_stdlib9(c) && !a.values.is_empty() {
        let (name, ty) = if a.name.ends_with("validate_domain_name") {
            (
                "validate_domain_name",
                "Variant[Stdlib::Fqdn, Stdlib::Dns::Zone]",
            )
        } else {
            ("validate_email_address", "Stdlib::Email")
        };
        let t = c.type_from_string(ty, a.span)?;
        if let Some(v) = a.values.iter().find(|v| !t.is_instance(v)) {
            let mut text = crate::eval::types::mismatch(&t, v);
            // Puppet expands each alias of the variant (`Stdlib::Fqdn = Pattern[...]`).
            if name == "validate_domain_name" {
                let fqdn = c.type_from_string("Stdlib::Fqdn", a.span)?;
                let zone = c.type_from_string("Stdlib::Dns::Zone", a.span)?;
                text = text.replace(ty, &format!("Variant[{fqdn}, {zone}]"));
            }
            let msg = format!("'stdlib::{name}' parameter 'values' {text}");
            return Err(fail_plain(c, a, msg));
        }
        return Ok(Value::Undef);
    }
    undef_to_empty(a);
    if a.values.is_empty() {
        return Err(fail(c, a, "wrong number of arguments (0; must be > 0)"));
    }
    let domain = a.name == "validate_domain_name";
    for v in &a.values {
        let Value::Str(s) = v else {
            return Err(fail_plain(c, a, format!("{} is not a string.", inspect(v))));
        };
        let (ok, what) = if domain {
            (
                crate::eval::functions::stdlib_validate::is_domain_name(s),
                "a syntactically correct domain name",
            )
        } else {
            (
                crate::eval::functions::stdlib_validate::is_email_address(s),
                "a valid email address",
            )
        };
        if !ok {
            return Err(fail_plain(c, a, format!("{} is not {what}", inspect(v))));
        }
    }
    Ok(Value::Undef)
}

/// An address block as Ruby's `IPAddr` holds it: the first and last address and whether
/// it is IPv6.
#[derive(Clone, Copy)]
struct IpBlock {
    v6: bool,
    first: u128,
    last: u128,
}

/// `IPAddr.new(text)`: an address with an optional `/prefix` or (IPv4) `/netmask`; the
/// block's host bits are cleared. `Err` carries IPAddr's message.
fn ip_block(text: &str) -> Result<IpBlock, String> {
    let (addr, mask) = match text.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (text, None),
    };
    let addr = addr
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(addr);
    let (v6, bits, value) = if let Ok(ip) = addr.parse::<std::net::Ipv4Addr>() {
        (false, 32u32, u128::from(u32::from(ip)))
    } else if let Ok(ip) = addr.parse::<std::net::Ipv6Addr>() {
        (true, 128, u128::from(ip))
    } else {
        return Err("invalid address: ".into());
    };
    let prefix = match mask {
        None => bits,
        Some(m) => match m.parse::<u32>() {
            Ok(p) if p <= bits => p,
            Ok(_) => return Err("invalid length".into()),
            Err(_) => match m.parse::<std::net::Ipv4Addr>() {
                Ok(nm) if !v6 && u32::from(nm).leading_ones() == u32::from(nm).count_ones() => {
                    u32::from(nm).count_ones()
                }
                _ => return Err("invalid mask".into()),
            },
        },
    };
    let host = if prefix == bits {
        0
    } else {
        (1u128 << (bits - prefix)) - 1
    };
    let first = value & !host;
    Ok(IpBlock {
        v6,
        first,
        last: first | host,
    })
}

/// `stdlib::ip_in_range(address, range_or_ranges)`: whether the address lies in the range
/// (any of the ranges); an address of the other family never does.
pub(in crate::eval) fn f_ip_in_range(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let ip = ip_block(&arg(a, 0).to_display()).map_err(|m| fail_plain(c, a, m))?;
    let ranges = match arg(a, 1) {
        Value::Array(items) => items,
        other => vec![other],
    };
    let mut blocks = Vec::with_capacity(ranges.len());
    for r in &ranges {
        blocks.push(ip_block(&r.to_display()).map_err(|m| fail_plain(c, a, m))?);
    }
    Ok(Value::Bool(blocks.iter().any(|r| {
        r.v6 == ip.v6 && r.first <= ip.first && r.last >= ip.last
    })))
}

/// `has_interface_with(interface)`: whether the `interfaces` fact (comma-separated) names
/// it; `has_interface_with(kind, value)`: whether the fact `kind` (say `ipaddress`), or
/// `kind_IFACE` for one of the interfaces, equals the value.
pub(in crate::eval) fn f_has_interface_with(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    let n = a.values.len();
    if n == 0 || n > 2 {
        let msg = format!("Wrong number of arguments given ({n} for 1 or 2)");
        return Err(fail(c, a, msg));
    }
    // stdlib 9 ships a 4.x `has_interface_with` (which Puppet prefers to the 3.x one):
    // a shim that calls `stdlib::has_interface_with`.
    if crate::eval::functions::stdlib9::is_stdlib9(c) {
        return f_stdlib_has_interface_with(c, a);
    }
    c.warned_deprecations.insert(IFACE_DEFINED.into());
    Ok(Value::Bool(has_interface_with(c, a)))
}

/// stdlib 9's `stdlib::has_interface_with(interface)` / `(kind, value)`: whether
/// `$facts['networking']['interfaces']` has that interface, or an interface whose `kind`
/// (`ipaddress` is `ip`, `macaddress` is `mac`) equals the value.
pub(in crate::eval) fn f_stdlib_has_interface_with(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let interfaces = c
        .fact_value("facts")
        .map(|f| crate::eval::functions::stdlib::dig_dotted(f, &["networking", "interfaces"]))
        .unwrap_or(Value::Undef);
    let Value::Hash(interfaces) = interfaces else {
        let msg = "undefined method `key?' for nil:NilClass";
        return Err(fail(c, a, msg));
    };
    if a.values.len() < 2 {
        return Ok(Value::Bool(interfaces.contains_key(&arg(a, 0))));
    }
    let kind = match arg(a, 0).to_display().as_str() {
        "ipaddress" => "ip".to_string(),
        "macaddress" => "mac".to_string(),
        other => other.to_string(),
    };
    let (kind, value) = (Value::Str(kind), arg(a, 1));
    Ok(Value::Bool(interfaces.values().any(
        |params| match params {
            Value::Hash(p) => p.get(&kind) == Some(&value),
            _ => false,
        },
    )))
}

/// Marks (in the compile's once-only warnings) that `has_interface_with` is defined, and
/// that `has_ip_*` loaded it through Puppet 3's autoloader.
const IFACE_DEFINED: &str = "stdlib has_interface_with defined";
const IFACE_AUTOLOADED: &str = "stdlib has_interface_with autoloaded";

/// The warnings of the first `has_ip_*` call: its use of Puppet 3's function autoloader is
/// deprecated, and reloading `has_interface_with` once called overwrites its definition.
fn autoload_has_interface_with(c: &mut Compiler<'_>) {
    if !c.warned_deprecations.insert(IFACE_AUTOLOADED.into()) {
        return;
    }
    for method in ["loaded?", "load"] {
        let msg = format!(
            "The method 'Puppet::Parser::Functions.autoloader#{method}(\"has_interface_with\")' is deprecated in favor of using 'Scope#call_function'."
        );
        crate::eval::functions::warn_once(c, format!("autoloader {method}"), msg);
    }
    if !c.warned_deprecations.insert(IFACE_DEFINED.into()) {
        let msg = "Overwriting previous definition for function has_interface_with";
        c.log(LogLevel::Warning, msg.into());
    }
}

fn has_interface_with(c: &Compiler<'_>, a: &Args) -> bool {
    let interfaces = match c.quiet_var("interfaces", a.scope) {
        None | Some(Value::Undef) => return false,
        Some(v) => v.to_display(),
    };
    let names: Vec<&str> = interfaces.split(',').collect();
    if a.values.len() == 1 {
        return matches!(arg(a, 0), Value::Str(s) if names.contains(&s.as_str()));
    }
    let (kind, value) = (arg(a, 0).to_display(), arg(a, 1));
    let fact = |name: &str| c.quiet_var(name, a.scope).unwrap_or(Value::Undef);
    fact(&kind) == value
        || names
            .iter()
            .any(|i| fact(&format!("{kind}_{}", i.to_lowercase())) == value)
}

/// `has_ip_address(address)` and `has_ip_network(network)`: `has_interface_with` with the
/// kind `ipaddress` (`network`).
pub(in crate::eval) fn f_has_ip(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_exact(c, a, 1)?;
    let kind = if a.name == "has_ip_address" {
        "ipaddress"
    } else {
        "network"
    };
    autoload_has_interface_with(c);
    a.values.insert(0, Value::str(kind));
    Ok(Value::Bool(has_interface_with(c, a)))
}

/// `load_module_metadata(module[, allow_empty])`: the module's `metadata.json` as data; a
/// module without one gives `{}` when allowed, else an error (as does a missing module).
pub(in crate::eval) fn f_load_module_metadata(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if !(1..=2).contains(&a.values.len()) {
        return Err(fail(c, a, "Wrong number of arguments, expects one or two"));
    }
    let module = arg(a, 0).to_display();
    if !c.loader.has_module(&module) {
        let msg = format!("Could not find module {module} in environment production");
        return Err(fail_plain(c, a, msg));
    }
    match c.loader.load(&module, "metadata.json") {
        Some((_, text)) => crate::eval::values::pson::load(&text).map_err(|m| fail_plain(c, a, m)),
        None if !matches!(arg(a, 1), Value::Undef | Value::Bool(false)) => {
            Ok(Value::Hash(Default::default()))
        }
        None => Err(fail(
            c,
            a,
            format!("No metadata.json file for module {module}"),
        )),
    }
}

/// `stdlib::str2resource('Type[title]')`: a reference to that resource, which must be in
/// the catalog already.
pub(in crate::eval) fn f_str2resource(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let text = arg(a, 0).to_display();
    // Puppet::Resource.type_and_title: `TYPE[TITLE]`, the title taking all up to the last `]`.
    let parsed = text
        .strip_suffix(']')
        .and_then(|t| t.split_once('['))
        .filter(|(ty, title)| !ty.is_empty() && !ty.contains(']') && !title.is_empty());
    let Some((ty, title)) = parsed else {
        let msg = format!(
            "No title provided and {} is not a valid resource reference",
            inspect(&Value::str(text.as_str()))
        );
        return Err(fail_plain(c, a, msg));
    };
    let ty = crate::catalog::capitalize_type(ty);
    let Some(idx) = c.find_resource(&ty, title) else {
        let msg = format!(
            "could not find {ty}[{title}], this is parse order dependent and values should not be quoted"
        );
        return Err(fail(c, a, msg));
    };
    let r = &c.resources[idx];
    let t = if ty == "Class" {
        PType::Class(Some(r.title.clone()))
    } else {
        PType::Resource(Some(r.type_name.clone()), Some(r.title.clone()))
    };
    Ok(Value::Type(Box::new(t)))
}

// ---- data ----------------------------------------------------------------------------------------

/// `parsepson(text[, default])`: `PSON.load` of the text; the default (when given) instead
/// of the parser's error.
pub(in crate::eval) fn f_parsepson(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    match crate::eval::values::pson::load(&arg(a, 0).to_display()) {
        Ok(v) => Ok(v),
        Err(_) if a.values.len() > 1 => Ok(arg(a, 1)),
        Err(m) => Err(fail_plain(c, a, m)),
    }
}

/// `loadyaml(path[, default])` and `loadjson(path[, default])`: the file's data (YAML, or
/// PSON), or the default when the file holds nothing (null or false) or cannot be read or
/// parsed (then an error without a default). A missing file warns and gives the default.
/// Ordo does not fetch `http(s)://` URLs: those fail (or give the default).
pub(in crate::eval) fn f_load_file(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.is_empty() {
        // Both functions check `args.length >= 1` themselves, after Puppet's arity check.
        return Err(fail(
            c,
            a,
            "Wrong number of arguments given (0 for minimum 1)",
        ));
    }
    let default = arg(a, 1);
    let or_default = |v: Value| match v {
        Value::Undef | Value::Bool(false) => default.clone(),
        v => v,
    };
    let loaded: Result<Value, String> = match arg(a, 0) {
        Value::Str(p) if p.starts_with("http://") || p.starts_with("https://") => {
            Err(format!("{}(): Ordo does not fetch URLs ({p})", a.name))
        }
        Value::Str(p) if c.loader.host().path_kind(&p).is_some() => {
            match c.loader.host().read_file(&p) {
                Ok(text) if a.name == "loadyaml" => {
                    crate::eval::hiera::yaml::parse(&text).map(|j| or_default(Value::from_json(&j)))
                }
                Ok(text) => crate::eval::values::pson::load(&text).map(or_default),
                Err(e) => Err(e.to_string()),
            }
        }
        Value::Str(p) => {
            let label = crate::eval::functions::scope_label(c, a.scope);
            let msg = format!("Scope({label}): Can't load '{p}' File does not exist!");
            c.log(LogLevel::Warning, msg);
            Ok(default.clone())
        }
        other => Err(format!(
            "undefined method `start_with?' for {}:{}",
            ruby_inspect(&other),
            ruby_class(&other)
        )),
    };
    match loaded {
        Ok(v) => Ok(v),
        // Ruby's `raise e unless args[1]`: a nil or false default re-raises.
        Err(_) if !matches!(default, Value::Undef | Value::Bool(false)) => Ok(default),
        Err(m) => Err(fail_plain(c, a, m)),
    }
}

/// `glob(pattern_or_patterns)`: Ruby's `Dir.glob`: the paths that match, each pattern's
/// in name order within each directory, relative to the working directory for a relative
/// pattern.
pub(in crate::eval) fn f_glob(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    arity_exact(c, a, 1)?;
    let patterns = match arg(a, 0) {
        Value::Str(s) => vec![s],
        Value::Array(items) => items.iter().map(Value::to_display).collect(),
        _ => return Err(fail(c, a, "Requires either array or string to work")),
    };
    let mut out = Vec::new();
    for p in &patterns {
        for expanded in crate::eval::functions::glob::expand_braces(p) {
            out.extend(
                crate::eval::functions::glob::glob(c.loader.host(), &expanded)
                    .into_iter()
                    .map(Value::Str),
            );
        }
    }
    Ok(Value::Array(out))
}

// ---- random values -------------------------------------------------------------------------------

/// A random number from the process's hash seed and the clock (Ruby's `Kernel#rand` is
/// not reproducible either).
fn random_u64(c: &Compiler<'_>) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(c.loader.host().now().as_nanos());
    h.finish()
}

/// `seeded_rand_string(length, seed[, charset])`: `length` characters of the charset
/// (default `0-9a-zA-Z`) drawn by Ruby's `Random` seeded with the seed's SHA-256.
pub(in crate::eval) fn f_seeded_rand_string(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let length = match arg(a, 0) {
        Value::Int(n) => n.max(0) as u64,
        _ => 0,
    };
    let charset: Vec<char> = match arg(a, 2) {
        Value::Str(s) => s.chars().collect(),
        _ => ('0'..='9').chain('a'..='z').chain('A'..='Z').collect(),
    };
    let seed = crate::eval::values::strings::sha256_hex(arg(a, 1).to_display().as_bytes());
    let mut rng = crate::eval::values::ruby_random::Mt::from_seed_words(
        &crate::eval::values::strings::hex_to_words(&seed),
    );
    let out: String = (0..length)
        .map(|_| charset[rng.rand_below(charset.len() as u64) as usize])
        .collect();
    Ok(Value::Str(out))
}

/// `shuffle(string_or_array)`: the elements (characters) in a random order.
pub(in crate::eval) fn f_shuffle(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.is_empty() {
        return Err(fail(c, a, "Wrong number of arguments given (0 for 1)"));
    }
    let mut seed = random_u64(c);
    let mut shuffle = |n: usize| -> Vec<usize> {
        let mut idx: Vec<usize> = (0..n).collect();
        for i in 0..n {
            // xorshift64*: a fresh draw for each swap.
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            let r = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let j = i + (r % (n - i) as u64) as usize;
            idx.swap(i, j);
        }
        idx
    };
    match arg(a, 0) {
        Value::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            Ok(Value::Str(
                shuffle(chars.len()).into_iter().map(|i| chars[i]).collect(),
            ))
        }
        Value::Array(items) => Ok(Value::Array(
            shuffle(items.len())
                .into_iter()
                .map(|i| items[i].clone())
                .collect(),
        )),
        _ => Err(fail(c, a, "Requires either array or string to work with")),
    }
}

/// `str2saltedsha512(password)`: hex of a random 4-byte salt followed by
/// SHA-512(salt + password) (the OS X password hash).
pub(in crate::eval) fn f_str2saltedsha512(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.len() != 1 {
        let n = a.values.len();
        let msg = format!("Wrong number of arguments passed ({n} but we require 1)");
        return Err(fail(c, a, msg));
    }
    let Value::Str(password) = arg(a, 0) else {
        let msg = format!(
            "Requires a String argument, you passed: {}",
            ruby_class(&arg(a, 0))
        );
        return Err(fail(c, a, msg));
    };
    let seed = ((random_u64(c) % (i32::MAX as u64)) as u32).to_le_bytes();
    let mut salted = seed.to_vec();
    salted.extend_from_slice(password.as_bytes());
    let mut out = seed.to_vec();
    out.extend_from_slice(&crate::digest::sha512(&salted));
    Ok(Value::Str(hex(&out)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// HMAC-SHA512 of `msg` under `key`.
fn hmac_sha512(key: &[u8], msg: &[u8]) -> [u8; 64] {
    let mut k = [0u8; 128];
    if key.len() > 128 {
        k[..64].copy_from_slice(&crate::digest::sha512(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
    inner.extend_from_slice(msg);
    let mut outer: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
    outer.extend_from_slice(&crate::digest::sha512(&inner));
    crate::digest::sha512(&outer)
}

/// PBKDF2 with HMAC-SHA512 (`OpenSSL::PKCS5.pbkdf2_hmac`), `len` bytes.
fn pbkdf2_sha512(password: &[u8], salt: &[u8], iterations: u32, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut block = 1u32;
    while out.len() < len {
        let mut msg = salt.to_vec();
        msg.extend_from_slice(&block.to_be_bytes());
        let mut u = hmac_sha512(password, &msg);
        let mut t = u;
        for _ in 1..iterations {
            u = hmac_sha512(password, &u);
            t.iter_mut().zip(u.iter()).for_each(|(x, y)| *x ^= y);
        }
        out.extend_from_slice(&t);
        block += 1;
    }
    out.truncate(len);
    out
}

/// `str2saltedpbkdf2(password, salt, iterations)`: PBKDF2-HMAC-SHA512 (128 bytes) as
/// `{password_hex, salt_hex, iterations}` (the macOS password hash). Sensitive arguments
/// are unwrapped; the salt needs 8 bytes, the iterations lie strictly between 40,000 and
/// 70,000.
pub(in crate::eval) fn f_str2saltedpbkdf2(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.len() != 3 {
        let n = a.values.len();
        return Err(fail(c, a, format!("wrong number of arguments ({n} for 3)")));
    }
    let unwrap = |v: Value| match v {
        Value::Sensitive(inner) => *inner,
        v => v,
    };
    let (password, salt, iterations) = (unwrap(arg(a, 0)), unwrap(arg(a, 1)), unwrap(arg(a, 2)));
    let Value::Str(password) = password else {
        return Err(fail(c, a, "first argument must be a string"));
    };
    let Value::Str(salt) = salt else {
        return Err(fail(c, a, "second argument must be a string"));
    };
    if salt.len() < 8 {
        return Err(fail(c, a, "second argument must be at least 8 bytes long"));
    }
    let Value::Int(iterations) = iterations else {
        return Err(fail(c, a, "third argument must be an integer"));
    };
    if !(40_001..70_000).contains(&iterations) {
        return Err(fail(
            c,
            a,
            "third argument must be between 40,000 and 70,000",
        ));
    }
    let hash = pbkdf2_sha512(password.as_bytes(), salt.as_bytes(), iterations as u32, 128);
    let mut out = indexmap::IndexMap::new();
    out.insert(Value::str("password_hex"), Value::Str(hex(&hash)));
    out.insert(Value::str("salt_hex"), Value::Str(hex(salt.as_bytes())));
    out.insert(Value::str("iterations"), Value::Int(iterations));
    Ok(Value::Hash(out.into()))
}

/// `time([timezone])`: the seconds since the Unix epoch (the time zone does not change
/// them).
pub(in crate::eval) fn f_time(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    undef_to_empty(a);
    if a.values.len() > 1 {
        let n = a.values.len();
        return Err(fail(
            c,
            a,
            format!("Wrong number of arguments given {n} for 0 or 1"),
        ));
    }
    let secs = c.loader.host().now().as_secs();
    Ok(Value::Int(i64::try_from(secs).unwrap_or(i64::MAX)))
}

// ---- to_toml -------------------------------------------------------------------------------------

/// A hash's pairs as stdlib's TomlDumper sorts them: by key, in three groups.
#[derive(Default)]
struct TomlPairs<'a> {
    /// Keys with a plain value: `key = value` lines.
    simple: Vec<(String, &'a Value)>,
    /// Keys with a hash value: `[prefix.key]` tables.
    nested: Vec<(String, &'a Value)>,
    /// Keys with an array whose first element is a hash: `[[prefix.key]]` tables.
    tables: Vec<(String, &'a [Value])>,
}

/// `key` as written in TOML: bare when only `[A-Za-z0-9_-]`, else quoted.
fn toml_key(key: &Value) -> String {
    let key = key.to_display();
    if key
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        key
    } else {
        format!("\"{}\"", key.replace('"', "\\\""))
    }
}

fn toml_pairs(h: &indexmap::IndexMap<Value, Value>) -> TomlPairs<'_> {
    let mut keys: Vec<&Value> = h.keys().collect();
    keys.sort_by_key(|k| k.to_display());
    let mut pairs = TomlPairs::default();
    for k in keys {
        let key = toml_key(k);
        match &h[k] {
            v @ Value::Hash(_) => pairs.nested.push((key, v)),
            Value::Array(items) if matches!(items.first(), Some(Value::Hash(_))) => {
                pairs.tables.push((key, items))
            }
            v => pairs.simple.push((key, v)),
        }
    }
    pairs
}

/// A plain value as TomlDumper writes it: Ruby's `inspect` (a string's without the `\`
/// before `#{`, `#$` and `#@`; a regexp's inspected twice).
fn toml_value(v: &Value) -> String {
    match v {
        Value::Str(s) => {
            let text: Vec<char> = ruby_inspect(&Value::str(s.as_str())).chars().collect();
            let mut out = String::with_capacity(text.len());
            let mut i = 0;
            while i < text.len() {
                let hash_escape = text[i] == '\\'
                    && text.get(i + 1) == Some(&'#')
                    && matches!(text.get(i + 2), Some('$' | '@' | '{'));
                if !hash_escape {
                    out.push(text[i]);
                }
                i += 1;
            }
            out
        }
        Value::Regex(r) => ruby_inspect(&Value::Str(format!("/{}/", r.source))),
        other => ruby_inspect(other),
    }
}

fn toml_prefix(out: &mut String, prefix: &[String], array: bool) {
    let p = prefix.join(".");
    if array {
        out.push_str(&format!("[[{p}]]\n"));
    } else {
        out.push_str(&format!("[{p}]\n"));
    }
}

/// A table: its header (when it has plain pairs, or nothing), then its pairs. `Err`: an
/// element of a table array that is not a hash (Ruby fails calling `keys` on it).
fn toml_visit(out: &mut String, v: &Value, prefix: &[String]) -> Result<(), Value> {
    let Value::Hash(h) = v else {
        return Err(v.clone());
    };
    let pairs = toml_pairs(h);
    if !prefix.is_empty() && (!pairs.simple.is_empty() || h.is_empty()) {
        toml_prefix(out, prefix, false);
    }
    toml_dump(out, &pairs, prefix)
}

fn toml_dump(out: &mut String, pairs: &TomlPairs<'_>, prefix: &[String]) -> Result<(), Value> {
    for (key, v) in &pairs.simple {
        out.push_str(&format!("{key} = {}\n", toml_value(v)));
    }
    let sub = |key: &str| [prefix, &[key.to_string()]].concat();
    for (key, v) in &pairs.nested {
        toml_visit(out, v, &sub(key))?;
    }
    for (key, items) in &pairs.tables {
        let p = sub(key);
        for child in items.iter() {
            toml_prefix(out, &p, true);
            let Value::Hash(h) = child else {
                return Err(child.clone());
            };
            toml_dump(out, &toml_pairs(h), &p)?;
        }
    }
    Ok(())
}

/// `to_toml(hash)`: the hash as TOML, as stdlib's TomlDumper writes it: keys sorted, plain
/// values first (Ruby's `inspect` of each), then `[tables]`, then `[[table arrays]]`.
pub(in crate::eval) fn f_to_toml(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = String::new();
    toml_visit(&mut out, &arg(a, 0), &[]).map_err(|v| no_method(c, a, "keys", &v))?;
    Ok(Value::Str(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruby_helpers() {
        assert_eq!(regexp_escape("a.b c\n/"), "a\\.b\\ c\\n/");
        assert_eq!(to_radix(123456789, 36), "21i3v9");
        assert_eq!(to_radix(-5, 2), "-101");
        assert!(is_canonical_int("12") && !is_canonical_int("012") && !is_canonical_int("-0"));
        let b = ip_block("10.1.0.0/255.255.0.0").ok().unwrap();
        assert_eq!((b.first, b.last), (0x0a01_0000, 0x0a01_ffff));
        assert!(ip_block("x").is_err());
    }

    #[test]
    fn signatures_sorted_for_binary_search() {
        let sigs = crate::eval::functions::stdlib_more::SIGNATURES;
        assert!(sigs.windows(2).all(|w| w[0].name < w[1].name));
    }

    #[test]
    fn pbkdf2_rfc_vector() {
        // Python's hashlib.pbkdf2_hmac('sha512', b'password', b'salt', 1, 64) agrees.
        let out = pbkdf2_sha512(b"password", b"salt", 1, 64);
        assert_eq!(
            hex(&out),
            "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce"
        );
    }
}
