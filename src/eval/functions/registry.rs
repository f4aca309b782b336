//! The registry of built-in functions: one entry per name, with its implementation, when a
//! compile has it (Puppet's own, or a module's that Ordo writes in Rust), what it may touch
//! (its purity), and the checks Puppet makes before calling it (the 3.x arity, the lambda's
//! parameter counts, and through [`Entry::signature`] the 4.x dispatches with their
//! argument types). Every call of a built-in function is resolved here
//! ([`resolve`]); a function is added by adding its entry.

use super::signatures::{self, Signature};
use super::*;
use super::{
    hiera_lookup, module_functions, stdlib, stdlib9, stdlib_crypt, stdlib_extra, stdlib_more,
    stdlib_validate,
};
use crate::eval::erb;
use std::collections::HashMap;
use std::sync::OnceLock;

/// When a compile has a function.
#[derive(Clone, Copy)]
pub enum Origin {
    /// Puppet's own (or one Ordo adds): always.
    Puppet,
    /// A module's Ruby function (puppetlabs-stdlib's and a few others'), written in Rust:
    /// only when a module on the modulepath ships it (`Loader::has_ruby_function`).
    Module,
    /// A module's function that Ordo also has without the module: the module's semantics
    /// when a module ships it, else this one.
    ModuleOr(Builtin),
}

/// What a function may touch besides its arguments and the compile's values (facts,
/// variables, the catalog built so far), whatever its lambda does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purity {
    /// Its value from its arguments and the compile's values alone.
    Pure,
    /// Reads the machine through the loader and its `Host`: module files, templates, data
    /// files, commands, the clock, randomness.
    Host,
    /// Changes the compile: the catalog (classes, resources, tags), the log (messages,
    /// deprecation warnings), or calls any function.
    Effect,
}

/// The argument count Puppet checks before calling one of its 3.x functions
/// (`newfunction(..., :arity => n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Any,
    Exactly(usize),
    AtLeast(usize),
}

pub struct Entry {
    pub name: &'static str,
    pub run: Builtin,
    pub origin: Origin,
    pub purity: Purity,
    pub arity: Arity,
    /// The parameter counts a lambda must fit (`min`, `max`), for the iteration functions
    /// whose Puppet dispatch checks them.
    pub lambda: Option<(usize, usize)>,
}

const fn f(name: &'static str, run: Builtin, origin: Origin, purity: Purity) -> Entry {
    Entry {
        name,
        run,
        origin,
        purity,
        arity: Arity::Any,
        lambda: None,
    }
}

impl Entry {
    const fn lambda(mut self, min: usize, max: usize) -> Entry {
        self.lambda = Some((min, max));
        self
    }

    const fn arity(mut self, arity: Arity) -> Entry {
        self.arity = arity;
        self
    }

    /// The function's 4.x dispatches (Puppet's own, from `signatures_data.rs`, or stdlib's
    /// written in `stdlib_more`), for Puppet's check of the argument count and types.
    pub fn signature(&self) -> Option<&'static Signature> {
        signatures::find(self.name)
    }

    /// Puppet's message when `given` arguments do not fit the 3.x arity.
    pub fn arity_mismatch(&self, given: usize) -> Option<String> {
        match self.arity {
            Arity::Any => None,
            Arity::Exactly(n) => {
                (given != n).then(|| format!("Wrong number of arguments given ({given} for {n})"))
            }
            Arity::AtLeast(min) => (given < min)
                .then(|| format!("Wrong number of arguments given ({given} for minimum {min})")),
        }
    }
}

use Origin::{Module, ModuleOr, Puppet};
use Purity::{Effect, Host, Pure};

/// Every built-in function, by name.
pub static ENTRIES: &[Entry] = &[
    f("abs", f_abs, Puppet, Effect),
    f("alert", f_log, Puppet, Effect),
    f("all", f_all, Puppet, Pure).lambda(1, 2),
    f("any", f_any, Puppet, Pure).lambda(1, 2),
    f("any2array", f_any2array, Module, Pure),
    f("any2bool", stdlib::f_any2bool, Module, Pure),
    f(
        "apache::bool2httpd",
        module_functions::f_bool2httpd,
        Module,
        Pure,
    ),
    f(
        "assemble_nexus_url",
        module_functions::f_assemble_nexus_url,
        Module,
        Pure,
    ),
    f("assert_private", stdlib::f_assert_private, Module, Pure),
    f("assert_type", f_assert_type, Puppet, Pure),
    f("base64", stdlib::f_base64, ModuleOr(text::f_base64), Pure),
    f("basename", stdlib::f_basename, Module, Pure),
    f("batch_escape", stdlib_more::f_batch_escape, Module, Pure),
    f("binary_file", f_binary_file, Puppet, Host),
    f("bool2num", stdlib::f_bool2num, Module, Pure),
    f("bool2str", stdlib::f_bool2str, Module, Pure),
    f("break", f_break, Puppet, Pure),
    f("call", f_call, Puppet, Effect),
    f("camelcase", f_camelcase, Puppet, Pure),
    f("capitalize", f_string_op, Puppet, Pure),
    f("ceiling", f_ceiling, Puppet, Effect),
    f("chomp", f_string_op, Puppet, Pure),
    f("chop", f_string_op, Puppet, Pure),
    f("clamp", stdlib_more::f_clamp, Module, Pure),
    f(
        "collectd_convert_processes",
        module_functions::f_collectd_convert_processes,
        Module,
        Pure,
    ),
    f("compare", f_compare, Puppet, Pure),
    f("concat", f_concat, Module, Pure),
    f("contain", f_contain, Puppet, Effect),
    f("convert_base", stdlib_extra::f_convert_base, Module, Pure),
    f("convert_to", f_convert_to, Puppet, Pure),
    f("count", stdlib::f_count, Module, Pure),
    f("create_resources", f_create_resources, Puppet, Effect),
    f("crit", f_log, Puppet, Effect),
    f("debug", f_log, Puppet, Effect),
    f("deep_merge", stdlib::f_deep_merge, Module, Pure),
    f("defined", f_defined, Puppet, Pure),
    f(
        "defined_with_params",
        stdlib::f_defined_with_params,
        Module,
        Pure,
    ),
    f("delete", f_delete, Module, Pure),
    f("delete_at", stdlib::f_delete_at, Module, Pure),
    f("delete_regex", stdlib_extra::f_delete_regex, Module, Pure),
    f(
        "delete_undef_values",
        stdlib::f_delete_undef_values,
        Module,
        Pure,
    ),
    f("delete_values", stdlib::f_delete_values, Module, Pure),
    f("deprecation", stdlib::f_deprecation, Module, Effect),
    f("difference", stdlib::f_difference, Module, Pure),
    f("dig", f_dig, Puppet, Pure),
    f("dig44", stdlib::f_dig44, Module, Pure),
    f("digest", f_digest, Puppet, Pure).arity(Arity::Exactly(1)),
    f("dirname", stdlib::f_dirname, Module, Pure),
    f("dos2unix", stdlib_more::f_dos2unix, Module, Pure),
    f("downcase", f_string_op, Puppet, Pure),
    f("each", f_each, Puppet, Pure).lambda(1, 2),
    f("emerg", f_log, Puppet, Effect),
    f("empty", f_empty, Puppet, Effect),
    f("enclose_ipv6", stdlib::f_enclose_ipv6, Module, Pure),
    f("ensure_packages", stdlib::f_ensure_packages, Module, Effect),
    f("ensure_resource", stdlib::f_ensure_resource, Module, Effect),
    f(
        "ensure_resources",
        stdlib::f_ensure_resources,
        Module,
        Effect,
    ),
    f("epp", f_epp, Puppet, Host),
    f("err", f_log, Puppet, Effect),
    f("fact", stdlib::f_fact, Module, Pure),
    f("fail", f_fail, Puppet, Pure),
    f("file", f_file, Puppet, Host).arity(Arity::AtLeast(1)),
    f("filter", f_filter, Puppet, Pure).lambda(1, 2),
    f("find_file", f_find_file, Puppet, Host),
    f("find_template", f_find_template, Puppet, Host),
    f("first", stdlib::f_first, Module, Pure),
    f("flatten", f_flatten, Puppet, Pure),
    f("floor", f_floor, Puppet, Effect),
    f("fqdn_rand", stdlib::f_fqdn_rand, Puppet, Pure).arity(Arity::AtLeast(1)),
    f(
        "fqdn_rand_string",
        stdlib_more::f_fqdn_rand_string,
        Module,
        Pure,
    ),
    f("fqdn_rotate", stdlib::f_fqdn_rotate, Module, Pure),
    f("fqdn_uuid", stdlib_more::f_fqdn_uuid, Module, Pure),
    f("generate", f_generate, Puppet, Host).arity(Arity::AtLeast(1)),
    f("get", f_get, Puppet, Pure),
    f("get_module_path", f_unsupported, Puppet, Pure),
    f("getparam", stdlib::f_getparam, Module, Pure),
    f("getvar", collections::f_getvar, Puppet, Pure),
    f(
        "getvar_emptystring",
        module_functions::f_getvar_emptystring,
        Module,
        Pure,
    ),
    f("glob", stdlib_extra::f_glob, Module, Host),
    f("grep", stdlib::f_grep, Module, Pure),
    f("group_by", f_group_by, Puppet, Pure),
    f(
        "has_interface_with",
        stdlib_extra::f_has_interface_with,
        Module,
        Effect,
    ),
    f("has_ip_address", stdlib_extra::f_has_ip, Module, Pure),
    f("has_ip_network", stdlib_extra::f_has_ip, Module, Pure),
    f("has_key", f_has_key, Module, Pure),
    f("hash", f_hash, Module, Pure),
    f("hiera", hiera_lookup::f_hiera, Puppet, Host),
    f("hiera_array", hiera_lookup::f_hiera_array, Puppet, Host),
    f("hiera_hash", hiera_lookup::f_hiera_hash, Puppet, Host),
    f(
        "hiera_include",
        hiera_lookup::f_hiera_include,
        Puppet,
        Effect,
    ),
    f("import", f_import, Puppet, Pure),
    f("include", f_include, Puppet, Effect),
    f("index", f_index, Puppet, Pure),
    f(
        "inet6_prefix",
        module_functions::f_inet6_prefix,
        Module,
        Pure,
    ),
    f("info", f_log, Puppet, Effect),
    f(
        "inifile::create_ini_settings",
        module_functions::f_create_ini_settings,
        Module,
        Effect,
    ),
    f("inline_epp", f_inline_epp, Puppet, Host),
    f("inline_template", erb::f_inline_template, Puppet, Host).arity(Arity::AtLeast(1)),
    f("intersection", stdlib::f_intersection, Module, Pure),
    f("ipaddresses", module_functions::f_ipaddresses, Module, Pure),
    f("is_a", stdlib_extra::f_is_a, Module, Pure),
    f("is_absolute_path", stdlib_validate::f_is, Module, Pure),
    f("is_array", stdlib_validate::f_is, Module, Pure),
    f("is_bool", stdlib_validate::f_is, Module, Pure),
    f("is_domain_name", stdlib_validate::f_is, Module, Pure),
    f("is_email_address", stdlib_validate::f_is, Module, Pure),
    f("is_float", stdlib_validate::f_is, Module, Pure),
    f(
        "is_function_available",
        stdlib::f_is_function_available,
        Module,
        Host,
    ),
    f("is_hash", stdlib_validate::f_is, Module, Pure),
    f("is_integer", stdlib_validate::f_is, Module, Pure),
    f("is_ip_address", stdlib_validate::f_is, Module, Pure),
    f("is_ipv4_address", stdlib_validate::f_is, Module, Pure),
    f("is_ipv6_address", stdlib_validate::f_is, Module, Pure),
    f("is_mac_address", stdlib_validate::f_is, Module, Pure),
    f("is_numeric", stdlib_validate::f_is, Module, Pure),
    f(
        "is_service_default",
        module_functions::f_is_service_default,
        Module,
        Pure,
    ),
    f("is_string", stdlib_validate::f_is, Module, Pure),
    f("join", f_join, Puppet, Pure),
    f(
        "join_keys_to_values",
        stdlib::f_join_keys_to_values,
        Module,
        Pure,
    ),
    f("keys", f_keys, Puppet, Pure),
    f("last", stdlib::f_last, Module, Pure),
    f("length", f_size, Puppet, Pure),
    f("lest", f_lest, Puppet, Pure).lambda(0, 0),
    f(
        "load_module_metadata",
        stdlib_extra::f_load_module_metadata,
        Module,
        Host,
    ),
    f("loadjson", stdlib_extra::f_load_file, Module, Effect),
    f("loadyaml", stdlib_extra::f_load_file, Module, Effect),
    f("lookup", hiera_lookup::f_lookup, Puppet, Host),
    f("lstrip", f_string_op, Puppet, Pure),
    f("map", f_map, Puppet, Pure).lambda(1, 2),
    f("match", f_match, Puppet, Pure),
    f("max", f_max, Puppet, Effect),
    f(
        "mco_array_to_string",
        module_functions::f_mco_array_to_string,
        Module,
        Pure,
    ),
    f("md5", f_digest, Puppet, Pure).arity(Arity::Exactly(1)),
    f("member", f_member, Module, Pure),
    f(
        "memcached::max_memory",
        module_functions::f_memcached_max_memory,
        Module,
        Pure,
    ),
    f("merge", f_merge, Module, Pure),
    f("min", f_min, Puppet, Effect),
    f("module_directory", f_module_directory, Puppet, Host),
    f(
        "mysql::password",
        module_functions::f_mysql_password,
        Module,
        Pure,
    ),
    f("new", f_new, Puppet, Host),
    f("next", f_next, Puppet, Pure),
    f(
        "normalize_ip_for_uri",
        module_functions::f_normalize_ip_for_uri,
        Module,
        Pure,
    ),
    f("notice", f_log, Puppet, Effect),
    f("num2bool", stdlib::f_num2bool, Module, Pure),
    f(
        "os_transport_url",
        module_functions::f_os_transport_url,
        Module,
        Pure,
    ),
    f(
        "os_version_gte",
        stdlib_more::f_os_version_gte,
        Module,
        Pure,
    ),
    f("parsejson", stdlib::f_parsejson, Module, Pure),
    f("parsepson", stdlib_extra::f_parsepson, Module, Pure),
    f("parseyaml", stdlib::f_parseyaml, Module, Pure),
    f("partition", f_partition, Puppet, Pure),
    f("pick", f_pick, Module, Pure),
    f("pick_default", f_pick_default, Module, Pure),
    f(
        "postgresql::postgresql_acls_to_resources_hash",
        module_functions::f_postgresql_acls_to_resources_hash,
        Module,
        Pure,
    ),
    f(
        "postgresql::postgresql_escape",
        module_functions::f_postgresql_escape,
        Module,
        Pure,
    ),
    f(
        "postgresql::postgresql_password",
        module_functions::f_postgresql_password,
        Module,
        Pure,
    ),
    f(
        "postgresql_password",
        module_functions::f_postgresql_password,
        Module,
        Pure,
    ),
    f(
        "powershell_escape",
        stdlib_more::f_powershell_escape,
        Module,
        Pure,
    ),
    f("prefix", stdlib::f_prefix, Module, Pure),
    f("pw_hash", stdlib_crypt::f_pw_hash, Module, Pure),
    f("range", f_range, Module, Pure),
    f("realize", f_realize, Puppet, Effect),
    f("reduce", f_reduce, Puppet, Pure).lambda(2, 2),
    f("regexpescape", stdlib_extra::f_regexpescape, Module, Pure),
    f("regsubst", f_regsubst, Puppet, Pure),
    f("reject", stdlib::f_reject, Module, Pure),
    f("require", f_require, Puppet, Effect),
    f("return", f_return, Puppet, Pure),
    f("reverse", stdlib_more::f_reverse, Module, Pure),
    f("reverse_each", f_reverse_each, Puppet, Pure).lambda(1, 2),
    f("round", f_round, Puppet, Effect),
    f("rstrip", f_string_op, Puppet, Pure),
    f("seeded_rand", stdlib_more::f_seeded_rand, Module, Pure),
    f(
        "seeded_rand_string",
        stdlib_extra::f_seeded_rand_string,
        Module,
        Pure,
    ),
    f("sha1", f_digest, Puppet, Pure).arity(Arity::Exactly(1)),
    f("sha256", f_digest, Puppet, Pure).arity(Arity::Exactly(1)),
    f("shell_escape", stdlib::f_shell_escape, Module, Pure),
    f("shell_join", stdlib::f_shell_join, Module, Pure),
    f("shell_split", stdlib_more::f_shell_split, Module, Pure),
    f("shellquote", f_shellquote, Puppet, Pure),
    f("shuffle", stdlib_extra::f_shuffle, Module, Host),
    f("size", f_size, Puppet, Pure),
    f("slice", f_slice, Puppet, Pure),
    f("sort", f_sort, Puppet, Pure),
    f("split", f_split, Puppet, Pure),
    f("sprintf", f_sprintf, Puppet, Pure).arity(Arity::AtLeast(1)),
    f("sprintf_hash", stdlib_more::f_sprintf_hash, Module, Pure),
    f("squeeze", stdlib_more::f_squeeze, Module, Pure),
    f("stdlib::crc32", stdlib9::f_crc32, Module, Pure),
    f("stdlib::end_with", stdlib_more::f_end_with, Module, Pure),
    f(
        "stdlib::ensure_packages",
        stdlib9::f_ensure_packages,
        Module,
        Effect,
    ),
    f("stdlib::extname", stdlib_extra::f_extname, Module, Pure),
    f(
        "stdlib::has_function",
        stdlib9::f_has_function,
        Module,
        Host,
    ),
    f(
        "stdlib::has_interface_with",
        stdlib_extra::f_stdlib_has_interface_with,
        Module,
        Pure,
    ),
    f(
        "stdlib::ip_in_range",
        stdlib_extra::f_ip_in_range,
        Module,
        Pure,
    ),
    f("stdlib::merge", stdlib9::f_merge, Module, Pure),
    f(
        "stdlib::nested_values",
        stdlib9::f_nested_values,
        Module,
        Pure,
    ),
    f("stdlib::sha256", stdlib9::f_sha256, Module, Pure),
    f("stdlib::sort_by", stdlib9::f_sort_by, Module, Pure),
    f(
        "stdlib::start_with",
        stdlib_more::f_start_with,
        Module,
        Pure,
    ),
    f(
        "stdlib::str2resource",
        stdlib_extra::f_str2resource,
        Module,
        Pure,
    ),
    f(
        "stdlib::xml_encode",
        stdlib_more::f_xml_encode,
        Module,
        Pure,
    ),
    f("step", f_step, Puppet, Pure),
    f("str2bool", f_str2bool, Module, Pure),
    f(
        "str2saltedpbkdf2",
        stdlib_extra::f_str2saltedpbkdf2,
        Module,
        Host,
    ),
    f(
        "str2saltedsha512",
        stdlib_extra::f_str2saltedsha512,
        Module,
        Host,
    ),
    f("strftime", f_strftime, Puppet, Host),
    f("strip", f_string_op, Puppet, Pure),
    f("suffix", stdlib::f_suffix, Module, Pure),
    f("sum", f_sum, Module, Pure),
    f("swapcase", stdlib_more::f_swapcase, Module, Pure),
    f("tag", f_tag, Puppet, Effect),
    f("tagged", f_tagged, Puppet, Pure),
    f("template", erb::f_template, Puppet, Host).arity(Arity::AtLeast(1)),
    f(
        "template_body",
        module_functions::f_template_body,
        Module,
        Host,
    ),
    f("then", f_then, Puppet, Pure).lambda(1, 1),
    f("time", stdlib_extra::f_time, Module, Host),
    f("to_bytes", stdlib_more::f_to_bytes, Module, Pure),
    f("to_json", stdlib::f_to_json, Module, Pure),
    f("to_json_pretty", stdlib::f_to_json_pretty, Module, Pure),
    f("to_python", stdlib_more::f_to_python, Module, Pure),
    f("to_ruby", stdlib_more::f_to_ruby, Module, Pure),
    f("to_toml", stdlib_extra::f_to_toml, Module, Pure),
    f("to_yaml", stdlib::f_to_yaml, Module, Pure),
    f("tree_each", f_tree_each, Puppet, Pure),
    f(
        "try_get_value",
        stdlib_more::f_try_get_value,
        Module,
        Effect,
    ),
    f("type", f_type, Puppet, Pure),
    f("type3x", stdlib_extra::f_type3x, Module, Pure),
    f("type_of", stdlib_more::f_type_of, Module, Pure),
    f("union", stdlib::f_union, Module, Pure),
    f("unique", f_unique, Puppet, Pure),
    f("unix2dos", stdlib_more::f_unix2dos, Module, Pure),
    f("unwrap", f_unwrap, Puppet, Pure),
    f("upcase", f_string_op, Puppet, Pure),
    f("uriescape", stdlib::f_uriescape, Module, Pure),
    f(
        "validate_absolute_path",
        stdlib_validate::f_validate,
        Module,
        Pure,
    ),
    f("validate_array", stdlib_validate::f_validate, Module, Pure),
    f("validate_bool", stdlib_validate::f_validate, Module, Pure),
    f(
        "validate_domain_name",
        stdlib_extra::f_validate_name,
        Module,
        Pure,
    ),
    f(
        "validate_email_address",
        stdlib_extra::f_validate_name,
        Module,
        Pure,
    ),
    f("validate_hash", stdlib_validate::f_validate, Module, Pure),
    f(
        "validate_integer",
        stdlib_validate::f_validate,
        Module,
        Pure,
    ),
    f(
        "validate_ip_address",
        stdlib_validate::f_validate,
        Module,
        Pure,
    ),
    f(
        "validate_ipv4_address",
        stdlib_validate::f_validate,
        Module,
        Pure,
    ),
    f(
        "validate_ipv6_address",
        stdlib_validate::f_validate,
        Module,
        Pure,
    ),
    f(
        "validate_legacy",
        stdlib_validate::f_validate_legacy,
        Module,
        Effect,
    ),
    f(
        "validate_numeric",
        stdlib_validate::f_validate,
        Module,
        Pure,
    ),
    f("validate_re", stdlib_validate::f_validate, Module, Pure),
    f(
        "validate_slength",
        stdlib_validate::f_validate,
        Module,
        Pure,
    ),
    f("validate_string", stdlib_validate::f_validate, Module, Pure),
    f("values", f_values, Puppet, Pure),
    f("values_at", stdlib::f_values_at, Module, Pure),
    f("versioncmp", f_versioncmp, Puppet, Pure),
    f("warning", f_log, Puppet, Effect),
    f("with", f_with, Puppet, Pure),
    f("zip", f_zip, Module, Pure),
];

/// The entry of that name, whether or not a compile has the function.
pub fn entry(name: &str) -> Option<&'static Entry> {
    static BY_NAME: OnceLock<HashMap<&'static str, &'static Entry>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| ENTRIES.iter().map(|e| (e.name, e)).collect())
        .get(name)
        .copied()
}

/// A function as a compile calls it: its entry and the implementation that runs.
#[derive(Clone, Copy)]
pub struct Resolved {
    pub entry: &'static Entry,
    pub run: Builtin,
}

/// The built-in function `name` (without leading `::`) names in a compile whose modules
/// ship the Ruby functions `ships` says they do. A `stdlib::` name (stdlib 9's namespaced
/// functions) exists when a module ships it; it runs its own entry, or where stdlib 9 only
/// moved a function, the entry of the old name.
pub fn resolve(name: &str, ships: impl Fn(&str) -> bool) -> Option<Resolved> {
    if let Some(old) = name.strip_prefix("stdlib::") {
        if !ships(name) {
            return None;
        }
        let entry = entry(name).or_else(|| entry(old))?;
        return Some(Resolved {
            entry,
            run: entry.run,
        });
    }
    let entry = entry(name)?;
    let run = match entry.origin {
        Puppet => entry.run,
        Module if ships(name) => entry.run,
        Module => return None,
        ModuleOr(own) => {
            if ships(name) {
                entry.run
            } else {
                own
            }
        }
    };
    Some(Resolved { entry, run })
}
