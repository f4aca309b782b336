//! Checks of a well-formed catalog's contents that the graph stage does not make: every
//! resource has a type and a title, no resource is declared twice (by title or by namevar),
//! relationship metaparameters hold references. Each message names the resource's place in
//! the catalog (`resources[3]`) and, when known, the manifest line that declared it.

use crate::catalog::{capitalize_type, Catalog, Resource};
use crate::fxhash::FxHashMap as FastMap;
use crate::graph::refs::param;
use crate::graph::refs::{canonical_ref, namevar, strip_colons};
use serde_json::Value as Json;
use std::borrow::Cow;

const RELATIONSHIPS: &[&str] = &["require", "before", "notify", "subscribe"];

/// Error messages; empty when the catalog is sound.
pub fn check(catalog: &Catalog) -> Vec<String> {
    let mut out = Vec::new();
    // Keys borrow from the catalog unless a name must be rewritten to compare.
    let mut titles: FastMap<(Cow<str>, Cow<str>), usize> = FastMap::default();
    titles.reserve(catalog.resources.len());
    let mut names: FastMap<(Cow<str>, Cow<str>), usize> = FastMap::default();
    for (i, r) in catalog.resources.iter().enumerate() {
        if r.type_name.trim().is_empty() {
            out.push(format!(
                "Invalid resource at resources[{i}]: the type is empty"
            ));
            continue;
        }
        if r.title.is_empty() {
            out.push(format!(
                "Invalid resource at resources[{i}]: {}[] has an empty title{}",
                r.type_name,
                at(r)
            ));
            continue;
        }
        // (The messages are sorted at the end: parameters in the resource's own order.)
        for (p, v) in &r.parameters {
            // By the reference parameters' first bytes first: `ensure`, `content`, `mode`
            // are out at that test.
            let relationship = crate::graph::requisites::reference_param(p)
                .is_some_and(|p| RELATIONSHIPS.contains(&p));
            if relationship {
                if let Some(bad) = not_a_reference(v) {
                    out.push(format!(
                        "Invalid relationship at resources[{i}].parameters.{p}: {} {{ {p} => {bad} }} is not a resource reference{}",
                        r.reference(),
                        at(r)
                    ));
                }
            }
        }
        let reference = || canonical_ref(&r.type_name, &r.title);
        let type_key = type_key(&r.type_name);
        // Containers are not managed; exec and tidy are not isomorphic in Puppet (two execs
        // may run the same command), so their namevar is no identity.
        let no_identity = crate::graph::is_container(r) || type_key == "exec" || type_key == "tidy";
        // One hash for the test and the insertion.
        match titles.entry((type_key.clone(), title_key(r, &r.title))) {
            std::collections::hash_map::Entry::Occupied(o) => {
                let first = *o.get();
                let other = &catalog.resources[first].title;
                if *other != r.title && type_key == "file" {
                    // Two spellings of one path (`/x//d`, `/x/y/../d`): Puppet's alias error.
                    let name = &o.key().1;
                    out.push(format!(
                        "Cannot alias {} to [\"{name}\"]; resource [\"File\", \"{name}\"] already declared at resources[{first}]{}",
                        reference(),
                        at(&catalog.resources[first])
                    ));
                    continue;
                }
                out.push(format!(
                    "Duplicate declaration: {} is already declared at resources[{first}]{}; cannot redeclare at resources[{i}]{}",
                    reference(),
                    at(&catalog.resources[first]),
                    at(r)
                ));
                continue;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i);
            }
        }
        if no_identity {
            continue;
        }
        if let Some(Json::String(name)) = param(r, namevar(&r.type_name)) {
            let mut key = (type_key, title_key(r, name));
            if key.0 == "package" {
                // Packages are unique by name and provider together.
                if let Some(Json::String(p)) = r.parameters.get("provider") {
                    key.1 = Cow::Owned(format!("{}\u{0}{p}", key.1));
                }
            }
            match names.get(&key) {
                Some(&first) if first != i => out.push(format!(
                    "Cannot alias {} to [\"{name}\"]; resource [\"{}\", \"{name}\"] already declared at resources[{first}]{}",
                    reference(),
                    reference().type_name,
                    at(&catalog.resources[first])
                )),
                _ => {
                    names.insert(key, i);
                }
            }
        }
    }
    // A title is also a name: `File[/a]` and `File[x] { path => '/a' }` collide.
    for (key, &i) in &titles {
        if let Some(&j) = names.get(key) {
            if i != j && !crate::graph::is_container(&catalog.resources[i]) {
                let (a, b) = (i.min(j), i.max(j));
                let r = &catalog.resources[b];
                out.push(format!(
                    "Cannot alias {} to [\"{}\"]; resource [\"{}\", \"{}\"] already declared at resources[{a}]{}",
                    r.reference(),
                    key.1,
                    r.type_name,
                    key.1,
                    at(&catalog.resources[a])
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Titles and names compare as Puppet compares them: file paths expanded (see
/// [`file_path`]).
fn title_key<'a>(r: &Resource, title: &'a str) -> Cow<'a, str> {
    if r.type_name.eq_ignore_ascii_case("file") && title.len() > 1 {
        file_path(title)
    } else if r.type_name.eq_ignore_ascii_case("class") {
        lowercase(strip_colons(title))
    } else {
        Cow::Borrowed(title)
    }
}

/// A file path as Puppet's `path` parameter munges it (`File.expand_path`): repeated
/// slashes, `.` and `..` resolved, no trailing slash; `/x//d`, `/x/y/../d` and `/x/d/` are
/// all `/x/d`, one file. A relative path is left as it is (refused elsewhere).
pub fn file_path(path: &str) -> Cow<'_, str> {
    if !path.starts_with('/') {
        return Cow::Borrowed(path);
    }
    let plain = !path.contains("//")
        && !path.split('/').any(|c| c == "." || c == "..")
        && (path.len() == 1 || !path.ends_with('/'));
    if plain {
        return Cow::Borrowed(path);
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    Cow::Owned(format!("/{}", parts.join("/")))
}

/// Types compare as their canonical names do, lowercased.
fn type_key(type_name: &str) -> Cow<'_, str> {
    if type_name.is_ascii() {
        // Capitalising segments and lowercasing again only drops the leading `::`.
        lowercase(strip_colons(type_name))
    } else {
        Cow::Owned(capitalize_type(type_name).to_ascii_lowercase())
    }
}

fn lowercase(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// ` (file: site.pp, line: 3)` when the catalog says where the resource was declared.
fn at(r: &Resource) -> String {
    match (&r.file, r.line) {
        (Some(f), Some(l)) => format!(" (file: {f}, line: {l})"),
        (Some(f), None) => format!(" (file: {f})"),
        (None, Some(l)) => format!(" (line: {l})"),
        (None, None) => String::new(),
    }
}

/// The first value in a relationship that cannot be a reference (strings, arrays of them and
/// `{type, title}` objects can).
fn not_a_reference(v: &Json) -> Option<String> {
    match v {
        Json::String(_) | Json::Null => None,
        Json::Array(items) => items.iter().find_map(not_a_reference),
        Json::Object(m)
            if m.get("type").is_some_and(Json::is_string)
                && m.get("title").is_some_and(Json::is_string) =>
        {
            None
        }
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(resources: serde_json::Value) -> Catalog {
        serde_json::from_value(serde_json::json!({ "resources": resources })).unwrap()
    }

    #[test]
    fn duplicates_and_bad_shapes() {
        let c = catalog(serde_json::json!([
            {"type": "Notify", "title": "a", "file": "site.pp", "line": 1},
            {"type": "notify", "title": "a", "file": "site.pp", "line": 2},
            {"type": "File", "title": "/etc/x/"},
            {"type": "File", "title": "conf", "parameters": {"path": "/etc/x", "require": 5}},
            {"type": "Exec", "title": ""},
            {"type": "", "title": "t"}
        ]));
        let got = check(&c);
        assert_eq!(got, vec![
            "Cannot alias File[conf] to [\"/etc/x\"]; resource [\"File\", \"/etc/x\"] already declared at resources[2]".to_string(),
            "Duplicate declaration: Notify[a] is already declared at resources[0] (file: site.pp, line: 1); cannot redeclare at resources[1] (file: site.pp, line: 2)".into(),
            "Invalid relationship at resources[3].parameters.require: File[conf] { require => 5 } is not a resource reference".into(),
            "Invalid resource at resources[4]: Exec[] has an empty title".into(),
            "Invalid resource at resources[5]: the type is empty".into(),
        ]);
    }

    #[test]
    fn a_sound_catalog_passes() {
        let c = catalog(serde_json::json!([
            {"type": "Class", "title": "main"},
            {"type": "Class", "title": "foo"},
            {"type": "File", "title": "/a", "parameters": {"path": "/a", "require": ["Class[foo]", {"type": "Class", "title": "main"}]}},
            {"type": "Package", "title": "p1", "parameters": {"name": "x", "provider": "apt"}},
            {"type": "Package", "title": "p2", "parameters": {"name": "x", "provider": "gem"}}
        ]));
        assert_eq!(check(&c), Vec::<String>::new());
    }
}
