//! Puppet 7.23's built-in resource types (those Puppet itself ships; `cron`, `host`, `mount`
//! and the other `*_core` types come from modules): name, namevar attributes and every
//! attribute name. Generated from `../shared/corpus/resource-type-schemas.json`.

pub struct BuiltinType {
    pub name: &'static str,
    pub namevars: &'static [&'static str],
    pub attributes: &'static [&'static str],
}

pub const BUILTIN_TYPES: &[BuiltinType] = &[
    BuiltinType {
        name: "component",
        namevars: &["name"],
        attributes: &["name"],
    },
    BuiltinType {
        name: "exec",
        namevars: &["command"],
        attributes: &[
            "command",
            "path",
            "user",
            "group",
            "cwd",
            "logoutput",
            "refresh",
            "environment",
            "umask",
            "timeout",
            "tries",
            "try_sleep",
            "refreshonly",
            "creates",
            "unless",
            "onlyif",
            "provider",
            "returns",
        ],
    },
    BuiltinType {
        name: "file",
        namevars: &["path"],
        attributes: &[
            "path",
            "backup",
            "recurse",
            "recurselimit",
            "max_files",
            "replace",
            "force",
            "ignore",
            "links",
            "purge",
            "sourceselect",
            "show_diff",
            "staging_location",
            "validate_cmd",
            "validate_replacement",
            "provider",
            "checksum",
            "source",
            "source_permissions",
            "selinux_ignore_defaults",
            "content",
            "checksum_value",
            "target",
            "ensure",
            "owner",
            "group",
            "mode",
            "type",
            "seluser",
            "selrole",
            "seltype",
            "selrange",
            "ctime",
            "mtime",
        ],
    },
    BuiltinType {
        name: "filebucket",
        namevars: &["name"],
        attributes: &["name", "server", "port", "path"],
    },
    BuiltinType {
        name: "group",
        namevars: &["name"],
        attributes: &[
            "auth_membership",
            "name",
            "allowdupe",
            "ia_load_module",
            "attribute_membership",
            "system",
            "forcelocal",
            "provider",
            "ensure",
            "gid",
            "members",
            "attributes",
        ],
    },
    BuiltinType {
        name: "notify",
        namevars: &["name"],
        attributes: &["withpath", "name", "message"],
    },
    BuiltinType {
        name: "package",
        namevars: &["name", "provider", "command"],
        attributes: &[
            "name",
            "provider",
            "command",
            "source",
            "instance",
            "status",
            "adminfile",
            "responsefile",
            "configfiles",
            "category",
            "platform",
            "root",
            "vendor",
            "description",
            "allowcdrom",
            "enable_only",
            "install_only",
            "install_options",
            "uninstall_options",
            "allow_virtual",
            "reinstall_on_refresh",
            "ensure",
            "package_settings",
            "flavor",
            "mark",
        ],
    },
    BuiltinType {
        name: "resources",
        namevars: &["name"],
        attributes: &["name", "purge", "unless_system_user", "unless_uid"],
    },
    BuiltinType {
        name: "schedule",
        namevars: &["name"],
        attributes: &[
            "name",
            "range",
            "periodmatch",
            "period",
            "repeat",
            "weekday",
        ],
    },
    BuiltinType {
        name: "service",
        namevars: &["name"],
        attributes: &[
            "logonpassword",
            "binary",
            "hasstatus",
            "name",
            "path",
            "pattern",
            "restart",
            "start",
            "status",
            "stop",
            "control",
            "hasrestart",
            "manifest",
            "timeout",
            "provider",
            "enable",
            "ensure",
            "logonaccount",
            "flags",
        ],
    },
    BuiltinType {
        name: "stage",
        namevars: &["name"],
        attributes: &["name"],
    },
    BuiltinType {
        name: "tidy",
        namevars: &["path"],
        attributes: &[
            "path",
            "recurse",
            "max_files",
            "matches",
            "backup",
            "age",
            "size",
            "type",
            "rmdirs",
        ],
    },
    BuiltinType {
        name: "user",
        namevars: &["name"],
        attributes: &[
            "name",
            "membership",
            "system",
            "allowdupe",
            "managehome",
            "role_membership",
            "auth_membership",
            "profile_membership",
            "key_membership",
            "ia_load_module",
            "attribute_membership",
            "forcelocal",
            "purge_ssh_keys",
            "provider",
            "ensure",
            "home",
            "uid",
            "gid",
            "comment",
            "shell",
            "password",
            "password_min_age",
            "password_max_age",
            "password_warn_days",
            "groups",
            "expiry",
            "roles",
            "auths",
            "profiles",
            "keys",
            "project",
            "attributes",
            "salt",
            "iterations",
            "loginclass",
        ],
    },
    BuiltinType {
        name: "whit",
        namevars: &["name"],
        attributes: &["name"],
    },
];

pub fn find(name: &str) -> Option<&'static BuiltinType> {
    BUILTIN_TYPES.iter().find(|t| t.name == name)
}

/// Whether built-in type `b` has attribute `name` (every parameter of every resource is
/// checked: the first bytes are compared before the names).
pub fn has_attribute(b: &BuiltinType, name: &str) -> bool {
    let first = name.as_bytes().first();
    b.attributes
        .iter()
        .any(|a| a.as_bytes().first() == first && *a == name)
}

/// [`find`] of the name in lower case, without lowering an ASCII name first.
pub fn find_any_case(name: &str) -> Option<&'static BuiltinType> {
    if name.is_ascii() {
        BUILTIN_TYPES
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    } else {
        find(&name.to_lowercase())
    }
}
