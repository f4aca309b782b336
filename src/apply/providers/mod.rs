//! Providers: the code that reads and converges one kind of resource.
//!
//! The resource API is deliberately narrow (mgmt's `CheckApply`): one method reads the
//! current state, compares it with the desired state and, only when asked, converges. Noop
//! costs nothing more than a check, and a check can never change the system.

pub mod command;
pub mod exec;
pub mod file;
pub mod notify;
pub mod package;
pub mod service;
pub mod usergroup;

use crate::apply::atomic::Staged;
use crate::apply::log::{Level, LogLine};
use crate::apply::stage::StagePaths;
use crate::catalog::Resource;
use serde_json::Value as Json;
use std::path::PathBuf;

/// What one property did (or would do): Puppet logs one line and emits one event for each.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub property: String,
    /// Event name (`file_created`, `executed_command`, ...): events are grouped by it.
    pub event: String,
    /// Current value as Puppet shows it (`'absent'`, `['0']`).
    pub previous: String,
    /// Desired value as Puppet shows it.
    pub desired: String,
    pub result: ChangeResult,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ChangeResult {
    /// Converged; the message Puppet logs (`defined content as '{sha256}...'`).
    Synced(String),
    /// Would change (noop).
    Noop,
    /// The change was attempted and failed with this message.
    Failed(String),
}

/// What a provider may use while it works.
pub struct Context<'a> {
    /// The resource path for log lines (`/Stage[main]/Main/Exec[x]`).
    pub path: &'a str,
    pub modulepath: &'a [PathBuf],
    pub bucket_dir: &'a std::path::Path,
    /// `--sysroot`: user, group and package act on the system installed under this directory.
    pub sysroot: Option<&'a std::path::Path>,
    /// Lines the provider logs itself (`Notice: message` of notify, exec output).
    pub log: Vec<LogLine>,
}

impl Context<'_> {
    pub fn log(&mut self, level: Level, source: Option<String>, message: impl Into<String>) {
        self.log.push(LogLine::new(level, source, message));
    }
}

/// One managed resource.
pub trait Provider: Send {
    /// Reads the current state and compares it with the desired one; converges when `apply`.
    /// `Err` means the resource could not even be evaluated (`Could not evaluate: ...`).
    fn check_apply(&mut self, cx: &mut Context, apply: bool) -> Result<Vec<Change>, String>;

    /// Whether the type reacts to refresh events (exec, service, package).
    fn refreshable(&self) -> bool {
        false
    }

    /// What the resource writes and reads when it can be checked ahead of a flush (see
    /// `apply::stage`); None (the default): it never is.
    fn stage_paths(&self, _modulepath: &[PathBuf]) -> Option<StagePaths> {
        None
    }

    /// Checks and converges like `check_apply(cx, true)` when that takes nothing but log lines
    /// and, at most, a new file's content, which goes to a temporary file ([`Staged`]) that
    /// the runner syncs and renames later; nothing else may change. None: converging needs
    /// more (or the check failed), and the resource goes through `check_apply`.
    fn stage(&mut self, _cx: &mut Context) -> Option<(Vec<Change>, Option<Staged>)> {
        None
    }

    /// The refresh action (restart, rerun).
    fn refresh(&mut self, _cx: &mut Context) -> Result<(), String> {
        Ok(())
    }
}

use crate::catalog::metaparams::METAPARAMS;

/// A resource type Ordo applies: one entry per type, the only place that names them.
pub struct ResourceType {
    /// Puppet's name of the type (lower case).
    pub name: &'static str,
    /// The attributes Ordo's provider reads (metaparameters aside); any other is refused.
    pub attributes: &'static [&'static str],
    /// The providers of the type (Puppet's names) that Ordo implements, in the order it
    /// picks one for a resource that names none; empty where the type has a single one
    /// and the `provider` attribute is not read.
    pub providers: &'static [ProviderKind],
    /// Whether it changes the machine (`anchor` and `schedule` only order and time the
    /// others): the refusal of a type Ordo does not have names these.
    pub manages: bool,
    /// Builds the provider of a resource of this type (its attributes already checked).
    pub build: BuildProvider,
}

/// Builds the provider of a resource, given its type's entry.
pub type BuildProvider = fn(&'static ResourceType, &Resource) -> Result<Box<dyn Provider>, String>;

/// One of Puppet's providers of a type, as Ordo implements it.
pub struct ProviderKind {
    pub name: &'static str,
    pub suitable: Suitable,
}

/// When a provider serves a resource that does not name one.
pub enum Suitable {
    /// Always (the type's default).
    Default,
    /// When the machine has a feature (systemd running it).
    When(fn() -> bool),
    /// Only when named (`provider => dpkg`).
    Named,
}

const fn kind(name: &'static str, suitable: Suitable) -> ProviderKind {
    ProviderKind { name, suitable }
}

/// Whether systemd runs the machine (the systemd service provider's confine).
fn systemd_runs() -> bool {
    std::path::Path::new("/run/systemd/system").is_dir()
}

/// Every resource type Ordo applies.
pub static TYPES: &[ResourceType] = &[
    ResourceType {
        name: "notify",
        attributes: notify::ATTRIBUTES,
        providers: &[],
        manages: true,
        build: |_, r| Ok(Box::new(notify::Notify::new(r)?)),
    },
    ResourceType {
        name: "file",
        attributes: file::ATTRIBUTES,
        providers: &[],
        manages: true,
        build: |_, r| Ok(Box::new(file::File::new(r)?)),
    },
    ResourceType {
        name: "exec",
        attributes: exec::ATTRIBUTES,
        providers: &[
            kind("posix", Suitable::Default),
            kind("shell", Suitable::Named),
        ],
        manages: true,
        build: |k, r| Ok(Box::new(exec::Exec::new(r, k)?)),
    },
    ResourceType {
        name: "package",
        attributes: package::ATTRIBUTES,
        providers: &[
            kind("apt", Suitable::Default),
            kind("dpkg", Suitable::Named),
        ],
        manages: true,
        build: |k, r| Ok(Box::new(package::Package::new(r, k)?)),
    },
    ResourceType {
        name: "service",
        attributes: service::ATTRIBUTES,
        providers: &[
            kind("systemd", Suitable::When(systemd_runs)),
            kind("init", Suitable::Default),
            kind("debian", Suitable::Named),
            kind("base", Suitable::Named),
        ],
        manages: true,
        build: |k, r| Ok(Box::new(service::Service::new(r, k)?)),
    },
    ResourceType {
        name: "user",
        attributes: usergroup::USER_ATTRIBUTES,
        providers: &[],
        manages: true,
        build: |_, r| Ok(Box::new(usergroup::User::new(r)?)),
    },
    ResourceType {
        name: "group",
        attributes: usergroup::GROUP_ATTRIBUTES,
        providers: &[],
        manages: true,
        build: |_, r| Ok(Box::new(usergroup::Group::new(r)?)),
    },
    // stdlib's `anchor` and Puppet's `schedule`: nothing to converge.
    ResourceType {
        name: "anchor",
        attributes: &["name"],
        providers: &[],
        manages: false,
        build: |_, _| Ok(Box::new(Anchor)),
    },
    ResourceType {
        name: "schedule",
        attributes: &[
            "name",
            "period",
            "periodmatch",
            "range",
            "repeat",
            "weekday",
        ],
        providers: &[],
        manages: false,
        build: |_, _| Ok(Box::new(Anchor)),
    },
];

/// The entry of a type (any case).
pub fn resource_type(t: &str) -> Option<&'static ResourceType> {
    TYPES.iter().find(|k| k.name.eq_ignore_ascii_case(t))
}

/// Whether Ordo has a provider for resources of type `t` (any case); the others (the modules'
/// Ruby types, `cron`, ...) compile but cannot be applied.
pub fn can_apply(t: &str) -> bool {
    resource_type(t).is_some()
}

impl ResourceType {
    /// The provider a resource of this type uses: the one it names, or the first suitable
    /// one. `Err`: the name it gives, which Ordo does not implement.
    pub fn provider_of(&self, r: &Resource) -> Result<&'static str, String> {
        let named = param_str(r, "provider");
        let found = self.providers.iter().find(|k| match &named {
            Some(n) => k.name == n,
            None => match k.suitable {
                Suitable::Default => true,
                Suitable::When(holds) => holds(),
                Suitable::Named => false,
            },
        });
        match (found, named) {
            (Some(k), _) => Ok(k.name),
            (None, Some(n)) => Err(n),
            (None, None) => Err(String::new()),
        }
    }

    /// The names of its providers (`apt, dpkg`).
    pub fn provider_names(&self) -> Vec<&'static str> {
        self.providers.iter().map(|k| k.name).collect()
    }
}

/// Builds the provider of a managed resource, validating its attributes first.
pub fn build(r: &Resource) -> Result<Box<dyn Provider>, String> {
    let Some(kind) = resource_type(&r.type_name) else {
        let names: Vec<&str> = TYPES.iter().filter(|k| k.manages).map(|k| k.name).collect();
        return Err(format!(
            "Ordo cannot manage resources of type '{}' ({}[{}]); supported types: {}",
            r.type_name.to_ascii_lowercase(),
            r.type_name,
            r.title,
            names.join(", ")
        ));
    };
    let t = kind.name;
    for name in r.parameters.keys() {
        if !kind.attributes.contains(&name.as_str())
            && !METAPARAMS.contains(&name.as_str())
            && !crate::catalog::metaparams::is_extension_metaparam(name)
        {
            return Err(format!(
                "no parameter named '{name}' for {}[{}] (Ordo's {t} does not support it)",
                r.type_name, r.title
            ));
        }
    }
    if let Some(level) = param_str(r, "loglevel") {
        const LEVELS: &[&str] = &[
            "debug", "info", "notice", "warning", "err", "alert", "emerg", "crit", "verbose",
        ];
        if !LEVELS.contains(&level.as_str()) {
            let valid = LEVELS.join(", ");
            let detail = format!("Invalid value \"{level}\". Valid values are {valid}.");
            return Err(param_failure(r, "loglevel", detail));
        }
    }
    check_values(t, r)?;
    (kind.build)(kind, r)
}

/// Puppet's boolean parameters (`Puppet::Parameter::Boolean`).
const BOOLEAN: &[&str] = &["true", "false", "yes", "no"];

/// Parameters Puppet checks against a fixed set of values before any change (their
/// `newvalues`), for the types Ordo applies; the others are checked by each provider.
const VALUES: &[(&str, &str, &[&str])] = &[
    ("file", "show_diff", BOOLEAN),
    ("file", "purge", BOOLEAN),
    ("file", "selinux_ignore_defaults", &["true", "false"]),
    (
        "file",
        "source_permissions",
        &["use", "use_when_creating", "ignore"],
    ),
    ("file", "sourceselect", &["first", "all"]),
    ("service", "hasstatus", &["true", "false"]),
    ("service", "hasrestart", &["true", "false"]),
    ("package", "allow_virtual", BOOLEAN),
];

/// Parameters that take one value (a name, a state): an array or a hash is refused rather
/// than read as if the parameter were not given (`ensure => []` must not install a package).
const SCALARS: &[(&str, &str)] = &[
    ("file", "owner"),
    ("file", "group"),
    ("exec", "user"),
    ("exec", "group"),
    ("exec", "cwd"),
    ("user", "uid"),
    ("user", "gid"),
    ("user", "home"),
    ("user", "shell"),
    ("group", "gid"),
];

/// The value as Puppet's messages show it: strings quoted, numbers and booleans bare.
fn shown(v: &Json) -> String {
    match v {
        Json::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// Checks the values Puppet checks when the catalog is converted, before any change.
fn check_values(t: &str, r: &Resource) -> Result<(), String> {
    let value = |name: &str| match r.parameters.get(name) {
        None | Some(Json::Null) => None,
        Some(v) => Some(v),
    };
    for (_, name, valid) in VALUES.iter().filter(|(ty, _, _)| *ty == t) {
        let Some(v) = value(name) else { continue };
        let items = match v {
            Json::Array(items) => items.iter().collect(),
            v => vec![v],
        };
        for item in items {
            let ok = match item {
                Json::String(s) => valid.contains(&s.as_str()),
                Json::Bool(b) => valid.contains(&if *b { "true" } else { "false" }),
                _ => false,
            };
            if !ok {
                let detail = format!(
                    "Invalid value {}. Valid values are {}.",
                    shown(item),
                    valid.join(", ")
                );
                return Err(param_failure(r, name, detail));
            }
        }
    }
    // The state of every type, and the scalars above: one value.
    let scalars = SCALARS.iter().filter(|(ty, _)| *ty == t).map(|(_, n)| *n);
    for name in std::iter::once("ensure").chain(scalars) {
        if value(name).is_some_and(|v| v.is_array() || v.is_object()) {
            let v = value(name).map(Json::to_string).unwrap_or_default();
            let detail = format!("Invalid value {v}: {name} takes one value");
            return Err(param_failure(r, name, detail));
        }
    }
    // Counts that Puppet matches with a pattern.
    for (ty, name, negative_one) in [("file", "recurselimit", false), ("file", "max_files", true)] {
        let Some(v) = value(name).filter(|_| ty == t) else {
            continue;
        };
        let text = match v {
            Json::String(s) => s.clone(),
            Json::Number(n) => n.to_string(),
            _ => String::new(),
        };
        let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        if !(digits || negative_one && text == "-1") {
            let pattern = if negative_one {
                "/^[0-9]+$/, /^-1$/"
            } else {
                "/^[0-9]+$/"
            };
            let detail = format!("Invalid value {}. Valid values match {pattern}.", shown(v));
            return Err(param_failure(r, name, detail));
        }
    }
    puppet_validations(t, r, value)
}

/// The other checks Puppet's types make before any change, in Puppet's words.
fn puppet_validations<'a>(
    t: &str,
    r: &Resource,
    value: impl Fn(&str) -> Option<&'a Json>,
) -> Result<(), String> {
    let text = |name: &str| value(name).and_then(Json::as_str);
    match t {
        "file" => {
            if let Some(v) = value("backup").filter(|v| v.is_array() || v.is_object()) {
                let shown = match v {
                    Json::Array(items) if items.is_empty() => "nil".to_string(),
                    other => other.to_string(),
                };
                return Err(param_failure(
                    r,
                    "backup",
                    format!("Invalid backup type {shown}"),
                ));
            }
            let sum = text("checksum").unwrap_or("sha256");
            let digits = match sum.trim_end_matches("lite") {
                "md5" => 32,
                "sha1" => 40,
                "sha224" => 56,
                "sha256" => 64,
                "sha384" => 96,
                "sha512" => 128,
                _ => 0,
            };
            if let (Some(v), true) = (text("checksum_value"), digits > 0) {
                let hex = v.strip_prefix(&format!("{{{sum}}}")).unwrap_or(v);
                if hex.len() != digits || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!(
                        "Validation of {} failed: Checksum value '{v}' is not a valid checksum type {sum}",
                        r.reference()
                    ));
                }
            }
        }
        "group" => {
            if let Some(gid) = text("gid") {
                if gid.is_empty() || !gid.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                    return Err(param_failure(r, "gid", format!("Invalid GID {gid}")));
                }
            }
        }
        "user" => {
            if param_list(r, "groups").iter().any(|g| g.contains(',')) {
                let detail =
                    "Group names must be provided as an array, not a comma-separated list.";
                return Err(param_failure(r, "groups", detail));
            }
            if text("password").is_some_and(|p| p.contains(':')) {
                return Err(param_failure(r, "password", "Passwords cannot include ':'"));
            }
        }
        "exec" => {
            let bad = match value("path") {
                Some(Json::Object(_)) => true,
                Some(Json::Array(items)) => items.iter().any(|i| !i.is_string()),
                _ => false,
            };
            if bad {
                let detail = "path must be a string or an array of strings (directories)";
                return Err(param_failure(r, "path", detail));
            }
        }
        _ => {}
    }
    Ok(())
}

/// stdlib's `anchor`: a no-op resource that only orders, and passes refresh events on.
struct Anchor;

impl Provider for Anchor {
    fn check_apply(&mut self, _cx: &mut Context, _apply: bool) -> Result<Vec<Change>, String> {
        Ok(Vec::new())
    }

    fn refreshable(&self) -> bool {
        true
    }
}

/// Puppet's display of a value in change messages: strings quoted, arrays bracketed.
pub fn show(value: &Json) -> String {
    match value {
        Json::Array(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Json::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("'{k}' => {}", show(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Json::String(s) => format!("'{s}'"),
        Json::Null => "'absent'".into(),
        other => format!("'{other}'"),
    }
}

/// A quoted string as Puppet shows it.
pub fn quoted(s: &str) -> String {
    format!("'{s}'")
}

/// A parameter as text (strings, numbers and booleans), if set.
/// Puppet's refusal of a parameter's value: `Parameter NAME failed on Type[title]: DETAIL`.
pub fn param_failure(r: &Resource, name: &str, detail: impl std::fmt::Display) -> String {
    format!("Parameter {name} failed on {}: {detail}", r.reference())
}

pub fn param_str(r: &Resource, name: &str) -> Option<String> {
    match crate::graph::refs::param(r, name)? {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A parameter as a list of strings (a single value or an array).
pub fn param_list(r: &Resource, name: &str) -> Vec<String> {
    match crate::graph::refs::param(r, name) {
        Some(Json::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Json::String(s) => Some(s.clone()),
                Json::Number(n) => Some(n.to_string()),
                Json::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect(),
        Some(_) => param_str(r, name).into_iter().collect(),
        None => Vec::new(),
    }
}

/// A boolean parameter (`true`, `'true'`, `'yes'`), or the default.
pub fn param_bool(r: &Resource, name: &str, default: bool) -> Result<bool, String> {
    match crate::graph::refs::param(r, name) {
        None | Some(Json::Null) => Ok(default),
        Some(Json::Bool(b)) => Ok(*b),
        Some(Json::String(s)) => match s.as_str() {
            "true" | "yes" => Ok(true),
            "false" | "no" => Ok(false),
            _ => Err(format!(
                "Invalid value '{s}' for {name}. Valid values are true, false, yes, no"
            )),
        },
        Some(other) => Err(format!("Invalid value {other} for {name}")),
    }
}

/// The resource's own `noop` metaparameter, when it has one: it wins over the global
/// `--noop` either way, as Puppet's `noop?` has it.
pub fn resource_noop(r: &Resource) -> Option<bool> {
    match crate::graph::refs::param(r, "noop") {
        None | Some(Json::Null) => None,
        Some(_) => param_bool(r, "noop", false).ok(),
    }
}
