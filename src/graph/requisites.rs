//! Salt's requisites and run controls as Ordo metaparameters: the catalog-level part.
//!
//! Before the graph is built, [`prepare`] rewrites the catalog so that only *direct*
//! requisites with concrete references remain:
//! 1. globs in relationship values (`File['/etc/apache2/*']`) become every matching
//!    resource (by title or namevar), when the reference does not name one resource exactly;
//! 2. `_in` forms insert the direct form into their targets (`require_in => File[x]` on A
//!    adds `require => A` to `File[x]`), then disappear;
//! 3. `use` copies the target's non-requisite attributes the resource does not set, from the
//!    target as written (a chain of `use` does not pass inherited values on).
//!
//! The graph stage then turns the direct requisites into edges ([`EDGE_PARAMS`]): `watch`
//! like `subscribe`, `prereq` the other way round (the pre-requiring resource goes first),
//! the others like `require`. `listen` adds no edge. The runner (`apply::requisites`)
//! decides, resource by resource, whether the requisites let it run.
//!
//! **Invariant**: like the rest of the graph stage, this does no IO and is deterministic.

use super::refs::{self, namevar, RefIndex};
use super::{Graph, GraphError, Ordering};
use crate::catalog::{Catalog, Resource, ResourceRef};
use serde_json::Value as Json;
use std::borrow::Cow;

/// Requisites that become edges: (name, points at a dependency, refresh).
pub const EDGE_PARAMS: &[(&str, bool, bool)] = &[
    ("watch", true, true),
    ("watch_any", true, true),
    ("onchanges", true, false),
    ("onchanges_any", true, false),
    ("onfail", true, false),
    ("onfail_any", true, false),
    ("onfail_all", true, false),
    ("require_any", true, false),
    // The pre-requiring resource is applied before its target.
    ("prereq", false, false),
];

/// Requisites whose edges do not skip the resource when their target fails: the runner
/// decides (onfail runs *because* a target failed; `_any` needs all targets to fail).
pub const SOFT_PARAMS: &[&str] = &[
    "onfail",
    "onfail_any",
    "onfail_all",
    "require_any",
    "watch_any",
    "onchanges_any",
];

pub use crate::catalog::metaparams::{
    is_extension_metaparam, unknown_to_puppet, CONTROL_PARAMS, IN_PARAMS, REFERENCE_PARAMS,
};

/// A reference that did not resolve, found while preparing (resource index, param, text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    pub resource: usize,
    pub param: &'static str,
    pub reference: String,
}

/// A catalog rewritten for the graph stage, and what was wrong with it. The catalog is
/// borrowed when nothing needed rewriting (no globs, `_in` forms or `use`): the common case,
/// where a copy of a 100,000-resource catalog cost a fifth of `ordo check`.
#[derive(Debug)]
pub struct Prepared<'a> {
    pub catalog: Cow<'a, Catalog>,
    pub missing: Vec<Unresolved>,
    /// Invalid metaparameter values: (resource index, message).
    pub invalid: Vec<(usize, String)>,
    /// The reference index of `catalog` (rewriting never changes titles, namevars or
    /// aliases, so the index of the input serves).
    pub index: RefIndex,
}

/// Prepares the catalog and builds its graph; problems of the preparation are added to the
/// graph's errors. The runner and the subcommands use this rather than `Graph::build`.
pub fn build(catalog: &Catalog, ordering: Ordering) -> (Cow<'_, Catalog>, Graph) {
    let p = prepare(catalog);
    let mut g = Graph::build_indexed(&p.catalog, ordering, &p.index);
    for u in p.missing {
        g.errors.push(GraphError::MissingDependency {
            reference: ResourceRef::parse(u.reference.trim())
                .map(|r| r.to_string())
                .unwrap_or(u.reference),
            resource: g.node_of[u.resource],
            param: u.param,
        });
    }
    for (i, message) in p.invalid {
        g.errors.push(GraphError::Invalid {
            resource: g.node_of[i],
            message,
        });
    }
    (p.catalog, g)
}

/// The first bytes of the [`REFERENCE_PARAMS`], as a table.
const REFERENCE_FIRST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < REFERENCE_PARAMS.len() {
        table[REFERENCE_PARAMS[i].as_bytes()[0] as usize] = true;
        i += 1;
    }
    table
};

/// The entry of [`REFERENCE_PARAMS`] equal to `name`, if any.
#[inline]
pub fn reference_param(name: &str) -> Option<&'static str> {
    // By the first byte first: most parameter names (`ensure`, `content`, `mode`) are out
    // at that test.
    if !name
        .as_bytes()
        .first()
        .is_some_and(|&b| REFERENCE_FIRST_BYTES[b as usize])
    {
        return None;
    }
    REFERENCE_PARAMS.iter().copied().find(|p| *p == name)
}

/// Could this reference be a glob (its title has a glob character)?
fn glob_like(reference: &str) -> bool {
    // Bytes, not chars: the three are ASCII, and this runs for every reference.
    refs::split_ref(reference.trim())
        .is_some_and(|(_, title)| title.bytes().any(|b| matches!(b, b'*' | b'?' | b'[')))
}

/// Expands globs, `_in` forms and `use` (see the module documentation).
pub fn prepare(catalog: &Catalog) -> Prepared<'_> {
    let mut missing = Vec::new();
    let index = RefIndex::new(&catalog.resources);
    // 1. Globs in direct references: the rewritten values first, applied below if any.
    let mut globbed: Vec<(usize, &'static str, Json)> = Vec::new();
    // One pass over each resource's parameters (a handful) rather than a lookup of every
    // requisite name: which `_in` forms and `use` there are comes out of the same pass.
    let (mut any_in, mut any_use) = (false, false);
    for (i, r) in catalog.resources.iter().enumerate() {
        for (name, value) in &r.parameters {
            let Some(param) = reference_param(name) else {
                any_in |= name.ends_with("_in") && IN_PARAMS.iter().any(|(p, _)| p == name);
                continue;
            };
            any_use |= param == "use";
            let mut any = false;
            refs::for_each_reference(value, &mut |s| any |= glob_like(&s));
            if !any {
                continue;
            }
            let mut changed = false;
            let mut refs_out = Vec::new();
            for reference in refs::reference_strings(value) {
                match expand_glob(&catalog.resources, &index, &reference, i) {
                    Some(found) => {
                        changed = true;
                        refs_out.extend(found.into_iter().map(|t| ref_of(&catalog.resources[t])));
                    }
                    None => refs_out.push(reference),
                }
            }
            if changed {
                globbed.push((i, param, strings(refs_out)));
            }
        }
    }
    let mut out = Cow::Borrowed(catalog);
    if !globbed.is_empty() || any_in || any_use {
        let owned = out.to_mut();
        for (i, param, value) in globbed {
            owned.resources[i]
                .parameters
                .insert(param.to_string(), value);
        }
    }
    // 2. `_in` forms.
    if any_in {
        let out = out.to_mut();
        for i in 0..out.resources.len() {
            for &(in_param, direct) in IN_PARAMS {
                let Some(value) = out.resources[i].parameters.shift_remove(in_param) else {
                    continue;
                };
                let me = ref_of(&catalog.resources[i]);
                for reference in refs::reference_strings(&value) {
                    let targets = resolve(&catalog.resources, &index, &reference, i);
                    if targets.is_empty() {
                        missing.push(Unresolved {
                            resource: i,
                            param: in_param,
                            reference,
                        });
                    }
                    for t in targets {
                        append(&mut out.resources[t], direct, &me);
                    }
                }
            }
        }
    }
    // 3. `use`, from the targets as they were before any inheritance.
    // The copy "as written" is only needed when some resource uses another.
    if any_use {
        let out = out.to_mut();
        let written: Vec<Resource> = out.resources.clone();
        for i in 0..written.len() {
            let Some(value) = written[i].parameters.get("use") else {
                continue;
            };
            for reference in refs::reference_strings(value) {
                let targets = resolve(&written, &index, &reference, i);
                if targets.is_empty() {
                    missing.push(Unresolved {
                        resource: i,
                        param: "use",
                        reference,
                    });
                }
                for t in targets {
                    inherit(&mut out.resources[i], &written[t]);
                }
            }
        }
    }
    let invalid = out
        .resources
        .iter()
        .enumerate()
        .flat_map(|(i, r)| validate(r).into_iter().map(move |m| (i, m)))
        .collect();
    Prepared {
        catalog: out,
        missing,
        invalid,
        index,
    }
}

/// `Type[title]` of a resource, as the graph stage resolves it.
fn ref_of(r: &Resource) -> String {
    refs::canonical_ref(&r.type_name, &r.title).to_string()
}

fn strings(v: Vec<String>) -> Json {
    if v.len() == 1 {
        Json::String(v.into_iter().next().expect("one"))
    } else {
        Json::Array(v.into_iter().map(Json::String).collect())
    }
}

/// Adds a reference to a relationship parameter (a string becomes an array).
fn append(r: &mut Resource, param: &str, reference: &str) {
    let mut list = r
        .parameters
        .get(param)
        .map(refs::reference_strings)
        .unwrap_or_default();
    if !list.iter().any(|x| x == reference) {
        list.push(reference.to_string());
    }
    r.parameters.insert(param.to_string(), strings(list));
}

/// Parameters `use` never copies: requisites and relationships, run controls that only make
/// sense on the resource that wrote them, and whatever names the resource.
fn inheritable(type_name: &str, name: &str) -> bool {
    !(REFERENCE_PARAMS.contains(&name)
        || IN_PARAMS.iter().any(|(p, _)| *p == name)
        || matches!(name, "name" | "title" | "alias")
        || name == namevar(type_name))
}

fn inherit(r: &mut Resource, from: &Resource) {
    for (k, v) in &from.parameters {
        if inheritable(&r.type_name, k) && !r.parameters.contains_key(k) {
            r.parameters.insert(k.clone(), v.clone());
        }
    }
}

/// Resources a reference names: exactly one, or every match of a glob (never `me`).
pub fn resolve(resources: &[Resource], index: &RefIndex, reference: &str, me: usize) -> Vec<usize> {
    if let Some(found) = expand_glob(resources, index, reference, me) {
        return found;
    }
    index.resolve(reference).into_iter().collect()
}

/// `Some(matches)` when the reference is a glob that names no resource exactly and matches
/// at least one; `None` otherwise (left to exact resolution).
fn expand_glob(
    resources: &[Resource],
    index: &RefIndex,
    reference: &str,
    me: usize,
) -> Option<Vec<usize>> {
    let r = ResourceRef::parse(reference.trim())?;
    if !r.title.contains(['*', '?', '[']) || index.resolve(reference).is_some() {
        return None;
    }
    let found: Vec<usize> = resources
        .iter()
        .enumerate()
        .filter(|(i, res)| {
            *i != me
                && res.type_name.eq_ignore_ascii_case(&r.type_name)
                && (glob_match(&r.title, &res.title)
                    || matches!(res.parameters.get(namevar(&res.type_name)),
                        Some(Json::String(n)) if glob_match(&r.title, n)))
        })
        .map(|(i, _)| i)
        .collect();
    (!found.is_empty()).then_some(found)
}

/// fnmatch without flags, as Salt matches requisite globs: `*` and `?` cross `/`; `[abc]`,
/// `[a-z]` and `[!a]` are classes.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with one backtracking point for the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => Some(pi + 1),
                '[' => match class_match(&p, pi, t[ti]) {
                    Some((true, next)) => Some(next),
                    Some((false, _)) => None,
                    None => (t[ti] == '[').then_some(pi + 1),
                },
                c => (c == t[ti]).then_some(pi + 1),
            }
        } else {
            None
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                ti += 1;
            }
            (None, Some((sp, st))) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Matches a `[...]` class at `p[start]`: `Some((matched, index after the class))`, or `None`
/// when the bracket is not closed (then it is a literal `[`).
fn class_match(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = i < p.len() && (p[i] == '!' || p[i] == '^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() && (first || p[i] != ']') {
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            matched |= p[i] <= c && c <= p[i + 2];
            i += 3;
        } else {
            matched |= p[i] == c;
            i += 1;
        }
    }
    (i < p.len()).then_some((matched != negate, i + 1))
}

/// Checks the values of the run controls and of `priority`/`order`.
fn validate(r: &Resource) -> Vec<String> {
    let mut out = Vec::new();
    const CHECKED: &[&str] = &[
        "order",
        "priority",
        "failhard",
        "retry",
        "onlyif",
        "unless",
        "check_cmd",
    ];
    if !r.parameters.keys().any(|k| CHECKED.contains(&k.as_str())) {
        return out;
    }
    let at = format!(
        "{}[{}]",
        crate::catalog::capitalize_type(&r.type_name),
        r.title
    );
    if let Some(v) = r.parameters.get("order") {
        if order_value(v).is_none() {
            out.push(format!(
                "Invalid value {v} for order on {at}: expected an integer, 'first' or 'last'"
            ));
        }
    }
    // A class or defined type may have a `priority` parameter of its own (apt::pin's is 500):
    // there a value outside 0..10 is not Rudder's priority and is left alone.
    if let Some(v) = r.parameters.get("priority") {
        if priority_value(v).is_none() && !crate::graph::is_container(r) {
            out.push(format!(
                "Invalid value {v} for priority on {at}: expected an integer from 0 (highest) to 10"
            ));
        }
    }
    if let Some(v) = r.parameters.get("failhard") {
        if !matches!(v, Json::Bool(_)) && !matches!(v.as_str(), Some("true" | "false")) {
            out.push(format!(
                "Invalid value {v} for failhard on {at}: expected true or false"
            ));
        }
    }
    if let Some(v) = r.parameters.get("retry") {
        if !matches!(v, Json::Bool(_) | Json::Object(_)) {
            out.push(format!(
                "Invalid value {v} for retry on {at}: expected true, false or a hash of attempts, until, interval and splay"
            ));
        }
    }
    let is_exec = r.type_name.eq_ignore_ascii_case("exec");
    for p in ["onlyif", "unless", "check_cmd"] {
        if is_exec && p != "check_cmd" {
            continue;
        }
        if let Some(v) = r.parameters.get(p) {
            let ok = match v {
                Json::String(_) => true,
                Json::Array(items) => items.iter().all(Json::is_string),
                _ => false,
            };
            if !ok {
                out.push(format!(
                    "Invalid value {v} for {p} on {at}: expected a command or an array of commands"
                ));
            }
        }
    }
    out
}

/// Salt's `order`: an integer, `first` or `last` (strings of digits accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderValue {
    First,
    Number(i64),
    Last,
}

pub fn order_value(v: &Json) -> Option<OrderValue> {
    match v {
        Json::Number(n) => n.as_i64().map(OrderValue::Number),
        Json::String(s) => match s.as_str() {
            "first" => Some(OrderValue::First),
            "last" => Some(OrderValue::Last),
            s => s.parse().ok().map(OrderValue::Number),
        },
        _ => None,
    }
}

/// Rudder's priority: 0 (highest) to 10.
pub fn priority_value(v: &Json) -> Option<u8> {
    let n = match v {
        Json::Number(n) => n.as_u64()?,
        Json::String(s) => s.parse().ok()?,
        _ => return None,
    };
    (n <= 10).then_some(n as u8)
}

/// Parameters of a resource that Puppet would reject (for `ordo check --puppet-compatible`).
pub fn puppet_incompatible(r: &Resource) -> Vec<&str> {
    r.parameters
        .keys()
        .map(String::as_str)
        .filter(|k| unknown_to_puppet(&r.type_name, k))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog(rs: Json) -> Catalog {
        serde_json::from_value(json!({ "resources": rs })).unwrap()
    }

    #[test]
    fn globs() {
        assert!(glob_match(
            "/etc/apache2/*",
            "/etc/apache2/sites/default.conf"
        ));
        assert!(glob_match("/etc/*.conf", "/etc/a.conf"));
        assert!(!glob_match("/etc/*.conf", "/etc/a.cnf"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("[ab]x", "bx"));
        assert!(!glob_match("[!ab]x", "bx"));
        assert!(glob_match("[a-c]*", "cat"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a", ""));
        assert!(glob_match("x[", "x["));
    }

    #[test]
    fn in_forms_insert_the_direct_requisite() {
        let c = catalog(json!([
            {"type": "Package", "title": "vim", "parameters": {"require_in": "File[/etc/vimrc]"}},
            {"type": "File", "title": "/etc/vimrc", "parameters": {"require": "Package[x]"}},
            {"type": "Package", "title": "x"},
        ]));
        let p = prepare(&c);
        assert!(p.missing.is_empty());
        assert_eq!(
            p.catalog.resources[1].parameters["require"],
            json!(["Package[x]", "Package[vim]"])
        );
        assert!(!p.catalog.resources[0].parameters.contains_key("require_in"));
    }

    #[test]
    fn globs_expand_by_title_and_namevar_never_to_self() {
        let c = catalog(json!([
            {"type": "Service", "title": "apache2", "parameters": {"watch": "File[/etc/apache2/*]"}},
            {"type": "File", "title": "/etc/apache2/httpd.conf"},
            {"type": "File", "title": "site", "parameters": {"path": "/etc/apache2/sites/default.conf"}},
            {"type": "File", "title": "/etc/other"},
            {"type": "File", "title": "/etc/apache2/self", "parameters": {"require": "File[/etc/apache2/*]"}},
        ]));
        let p = prepare(&c);
        assert_eq!(
            p.catalog.resources[0].parameters["watch"],
            json!([
                "File[/etc/apache2/httpd.conf]",
                "File[site]",
                "File[/etc/apache2/self]"
            ])
        );
        assert_eq!(
            p.catalog.resources[4].parameters["require"],
            json!(["File[/etc/apache2/httpd.conf]", "File[site]"])
        );
    }

    #[test]
    fn use_copies_written_attributes_only() {
        let c = catalog(json!([
            {"type": "File", "title": "/a", "parameters": {"mode": "0755", "owner": "apache", "require": "File[/z]"}},
            {"type": "File", "title": "/b", "parameters": {"mode": "0600", "use": "File[/a]"}},
            {"type": "File", "title": "/c", "parameters": {"use": "File[/b]"}},
            {"type": "File", "title": "/z"},
        ]));
        let p = prepare(&c);
        let b = &p.catalog.resources[1].parameters;
        assert_eq!(b["mode"], json!("0600"));
        assert_eq!(b["owner"], json!("apache"));
        assert!(!b.contains_key("require"));
        // /c inherits what /b wrote, not what /b inherited.
        let c = &p.catalog.resources[2].parameters;
        assert_eq!(c["mode"], json!("0600"));
        assert!(!c.contains_key("owner"));
    }

    #[test]
    fn missing_in_targets_and_bad_values_are_reported() {
        let c = catalog(json!([
            {"type": "Notify", "title": "a", "parameters": {"watch_in": "Service[nope]", "order": "middle", "priority": 11}},
        ]));
        let p = prepare(&c);
        assert_eq!(p.missing.len(), 1);
        assert_eq!(p.missing[0].param, "watch_in");
        assert_eq!(p.invalid.len(), 2);
    }

    #[test]
    fn a_defined_types_own_priority_parameter_is_not_rudders() {
        let c = catalog(json!([
            {"type": "Apt::Pin", "title": "a", "kind": "defined_type", "parameters": {"priority": 500}},
            {"type": "Notify", "title": "n", "kind": "compilable_type", "parameters": {"priority": 500}},
        ]));
        let p = prepare(&c);
        assert_eq!(p.invalid.len(), 1, "{:?}", p.invalid);
        assert!(p.invalid[0].1.contains("Notify[n]"), "{:?}", p.invalid);
    }
}
