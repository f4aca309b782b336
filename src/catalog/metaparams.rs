//! The metaparameters: Puppet's, valid on every resource, and Ordo's own (Salt's
//! requisites and run controls, Rudder's `priority`: docs/extensions.md). The evaluator
//! passes them through, the graph stage and the runner give them their meaning.

/// Puppet's metaparameters, in the order Puppet defines them (`Puppet::Type.metaparams`).
pub const METAPARAMS: &[&str] = &[
    "noop",
    "schedule",
    "audit",
    "loglevel",
    "alias",
    "tag",
    "require",
    "subscribe",
    "before",
    "notify",
    "stage",
];

/// Puppet's relationship metaparameters.
pub const RELATIONSHIP_PARAMS: &[&str] = &["require", "subscribe", "before", "notify"];

/// `_in` forms and the direct requisite each inserts into its targets.
pub const IN_PARAMS: &[(&str, &str)] = &[
    ("require_in", "require"),
    ("watch_in", "watch"),
    ("onchanges_in", "onchanges"),
    ("onfail_in", "onfail"),
    ("prereq_in", "prereq"),
    ("use_in", "use"),
    ("listen_in", "listen"),
];

/// Every parameter whose value is a list of resource references.
pub const REFERENCE_PARAMS: &[&str] = &[
    "require",
    "before",
    "notify",
    "subscribe",
    "watch",
    "watch_any",
    "onchanges",
    "onchanges_any",
    "onfail",
    "onfail_any",
    "onfail_all",
    "require_any",
    "prereq",
    "use",
    "listen",
];

/// Run controls valid on every type (`onlyif`/`unless` keep Puppet's meaning on exec).
pub const CONTROL_PARAMS: &[&str] = &[
    "onlyif",
    "unless",
    "check_cmd",
    "retry",
    "failhard",
    "order",
    "priority",
];

/// Is this an Ordo metaparameter (valid on every type, unknown to Puppet)?
pub fn is_extension_metaparam(name: &str) -> bool {
    (REFERENCE_PARAMS.contains(&name)
        && !matches!(name, "require" | "before" | "notify" | "subscribe"))
        || IN_PARAMS.iter().any(|(p, _)| *p == name)
        || CONTROL_PARAMS.contains(&name)
}

/// Would Puppet reject this parameter on this type? (`onlyif`/`unless` are exec attributes.)
pub fn unknown_to_puppet(type_name: &str, name: &str) -> bool {
    is_extension_metaparam(name)
        && !(type_name.eq_ignore_ascii_case("exec") && matches!(name, "onlyif" | "unless"))
}
