//! Finding the resource a reference names.
//!
//! Puppet matches `Type[title]` case-insensitively on the type, exactly on the title, and also
//! by namevar (`File['/path']` for `file { 'x': path => '/path' }`, `Exec['cmd']` by command)
//! and by the `alias` metaparameter. File paths lose their trailing slashes, class titles
//! their case.

use crate::catalog::{capitalize_type, Resource, ResourceRef};
use crate::fxhash::FxHashMap as FastMap;
use serde_json::Value as Json;
use std::borrow::Cow;

/// The parameter naming a resource of a core type when it differs from the title.
pub fn namevar(type_name: &str) -> &'static str {
    if type_name.eq_ignore_ascii_case("file") {
        "path"
    } else if type_name.eq_ignore_ascii_case("exec") {
        "command"
    } else {
        "name"
    }
}

/// The canonical reference of a resource: type segments and class titles capitalised.
pub fn canonical_ref(type_name: &str, title: &str) -> ResourceRef {
    let type_name = capitalized(type_name);
    let title = if type_name == "Class" {
        capitalized(title)
    } else {
        title.to_string()
    };
    ResourceRef::new(type_name, title)
}

/// [`capitalize_type`], copying names that are capitalised already (most are) without
/// walking them character by character.
fn capitalized(name: &str) -> String {
    let b = name.as_bytes();
    let (mut i, mut at_start, mut canonical) = (0, true, true);
    while i < b.len() && canonical {
        if b[i] == b':' && b.get(i + 1) == Some(&b':') {
            canonical = !at_start;
            at_start = true;
            i += 2;
            continue;
        }
        if at_start {
            canonical = b[i].is_ascii_uppercase();
            at_start = false;
        }
        i += 1;
    }
    if canonical && !at_start {
        name.to_string()
    } else {
        capitalize_type(name)
    }
}

/// `name` without its leading `::` (any number of them).
pub fn strip_colons(mut name: &str) -> &str {
    while let Some(rest) = name.strip_prefix("::") {
        name = rest;
    }
    name
}

/// A parameter of a resource. Resources have a handful of parameters, and the graph stage
/// asks each for some twenty metaparameters it rarely has: comparing a few keys is cheaper
/// than hashing the name with the map's SipHash every time.
#[inline]
pub fn param<'r>(r: &'r Resource, name: &str) -> Option<&'r Json> {
    if r.parameters.len() <= 8 {
        r.parameters
            .iter()
            .find_map(|(k, v)| (k == name).then_some(v))
    } else {
        r.parameters.get(name)
    }
}

/// Writes the lookup key of a (type, title or alias) pair into `out`: the type trimmed of a
/// leading `::` and lowercased, a NUL (never in a type name), then the name (class names
/// lowercased, file paths without trailing slashes).
fn write_key(type_name: &str, name: &str, out: &mut String) {
    out.clear();
    let t = strip_colons(type_name);
    let start = out.len();
    out.push_str(t);
    out[start..].make_ascii_lowercase();
    let t = &out[start..];
    let (class, file) = (t == "class", t == "file");
    out.push('\0');
    if class {
        let at = out.len();
        out.push_str(strip_colons(name));
        out[at..].make_ascii_lowercase();
    } else if file && name.len() > 1 {
        out.push_str(name.trim_end_matches('/'));
    } else {
        out.push_str(name);
    }
}

/// Is `reference` written `Type[title]` exactly as `r`'s type and title, in a form that
/// [`RefIndex::resolve`] takes as it is (nothing to trim, no quotes, an ASCII type name)?
fn is_exact_ref(reference: &str, r: &Resource) -> bool {
    let (t, title) = (r.type_name.as_str(), r.title.as_str());
    let quoted = title.len() >= 2 && title.starts_with('\'') && title.ends_with('\'');
    reference.len() == t.len() + title.len() + 2
        && reference
            .strip_prefix(t)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.strip_suffix(']'))
            == Some(title)
        && !t.is_empty()
        && t.is_ascii()
        && !t.contains('[')
        && !quoted
        && reference.trim().len() == reference.len()
}

/// `Type[title]` split into its type and title without allocating, by the rules of
/// [`ResourceRef::parse`] (which also capitalises the type: keys lowercase it again).
pub fn split_ref(s: &str) -> Option<(&str, &str)> {
    // A byte scan: `[` is ASCII, so its position is a character boundary.
    let open = s.bytes().position(|b| b == b'[')?;
    if !s.ends_with(']') || open == 0 {
        return None;
    }
    let type_name = &s[..open];
    let mut title = &s[open + 1..s.len() - 1];
    if title.len() >= 2 && title.starts_with('\'') && title.ends_with('\'') {
        title = &title[1..title.len() - 1];
    }
    Some((type_name, title))
}

/// Reference strings found in a relationship metaparameter value (a string or nested arrays).
pub fn reference_strings(value: &Json) -> Vec<String> {
    let mut out = Vec::new();
    for_each_reference(value, &mut |s| out.push(s.into_owned()));
    out
}

/// Calls `f` with each reference string of a relationship metaparameter value, in order,
/// without copying the strings the value holds.
pub fn for_each_reference<'a>(value: &'a Json, f: &mut dyn FnMut(Cow<'a, str>)) {
    match value {
        Json::String(s) => f(Cow::Borrowed(s)),
        Json::Array(items) => items.iter().for_each(|v| for_each_reference(v, f)),
        Json::Object(map) => {
            // A reference written as data: {"type": "Notify", "title": "a"}.
            if let (Some(Json::String(t)), Some(Json::String(n))) =
                (map.get("type"), map.get("title"))
            {
                f(Cow::Owned(format!("{t}[{n}]")));
            }
        }
        _ => {}
    }
}

/// Title, namevar and alias index over catalog resources.
#[derive(Default, Debug)]
pub struct RefIndex {
    map: FastMap<Box<str>, usize>,
    /// Whether each resource's title key leads to it (not to an earlier resource whose
    /// title is the same but for case or a trailing slash): see [`RefIndex::resolve_near`].
    own_title: Vec<bool>,
}

impl RefIndex {
    pub fn new(resources: &[Resource]) -> RefIndex {
        let mut map: FastMap<Box<str>, usize> = FastMap::default();
        map.reserve(resources.len());
        let mut key = String::new();
        let mut add = |t: &str, n: &str, i: usize, key: &mut String| {
            write_key(t, n, key);
            // One hash: the key is new for almost every resource (the first one stays).
            *map.entry(key.as_str().into()).or_insert(i) == i
        };
        // Titles first so that a namevar or alias never hides a title.
        let own_title = resources
            .iter()
            .enumerate()
            .map(|(i, r)| add(&r.type_name, &r.title, i, &mut key))
            .collect();
        for (i, r) in resources.iter().enumerate() {
            if let Some(Json::String(name)) = param(r, namevar(&r.type_name)) {
                add(&r.type_name, name, i, &mut key);
            }
            if let Some(alias) = param(r, "alias") {
                for_each_reference(alias, &mut |a| {
                    add(&r.type_name, &a, i, &mut key);
                });
            }
        }
        RefIndex { map, own_title }
    }

    /// [`RefIndex::resolve`] of a reference that likely names `resources[near]`, as the
    /// targets of a compiled catalog's containment edges name the resources in order: when
    /// it is that resource's `Type[title]` exactly, and the title is its own, a comparison
    /// of text answers without hashing the reference and probing the index.
    pub fn resolve_near(
        &self,
        reference: &str,
        resources: &[Resource],
        near: usize,
    ) -> Option<usize> {
        let exact = resources
            .get(near)
            .is_some_and(|r| self.own_title.get(near) == Some(&true) && is_exact_ref(reference, r));
        if exact {
            Some(near)
        } else {
            self.resolve(reference)
        }
    }

    /// Resolves `Type[title]` (as written in a catalog or by a user).
    pub fn resolve(&self, reference: &str) -> Option<usize> {
        let reference = reference.trim();
        self.resolve_split(reference, split_ref(reference)?)
    }

    /// [`RefIndex::resolve`] of a trimmed reference already split by [`split_ref`].
    pub fn resolve_split(
        &self,
        reference: &str,
        (type_name, title): (&str, &str),
    ) -> Option<usize> {
        if type_name.is_ascii() {
            self.find(type_name, title)
        } else {
            // Unicode capitalisation may change more than ASCII lowercasing undoes.
            let r = ResourceRef::parse(reference)?;
            self.find(&r.type_name, &r.title)
        }
    }

    pub fn find(&self, type_name: &str, title: &str) -> Option<usize> {
        KEY.with(|k| {
            let mut k = k.borrow_mut();
            write_key(type_name, title, &mut k);
            self.map.get(k.as_str()).copied()
        })
    }
}

thread_local! {
    /// The key buffer of lookups: one allocation per thread, not one per lookup.
    static KEY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(t: &str, title: &str, params: &[(&str, &str)]) -> Resource {
        let mut r: Resource =
            serde_json::from_value(serde_json::json!({"type": t, "title": title})).unwrap();
        for (k, v) in params {
            r.parameters.insert(k.to_string(), Json::from(*v));
        }
        r
    }

    #[test]
    fn capitalized_is_capitalize_type() {
        for name in [
            "Foo::Bar", "foo::bar", "Foo::bar", "::Foo", "Foo::", "A:::b", "A::::B", "", "F", "f",
            "Élan", "élan", "Foo:Bar", ":", "::", "Notify", "Class",
        ] {
            assert_eq!(capitalized(name), capitalize_type(name), "{name:?}");
        }
        assert_eq!(strip_colons("::::a::b"), "a::b");
    }

    #[test]
    fn titles_namevars_aliases() {
        let rs = vec![
            res("File", "myfile", &[("path", "/tmp/f")]),
            res("Notify", "real", &[("alias", "nick")]),
            res("Class", "Foo::Bar", &[]),
            res("File", "/etc/dir", &[]),
        ];
        let idx = RefIndex::new(&rs);
        assert_eq!(idx.resolve("File[/tmp/f]"), Some(0));
        assert_eq!(idx.resolve("file[myfile]"), Some(0));
        assert_eq!(idx.resolve("Notify[nick]"), Some(1));
        assert_eq!(idx.resolve("Class[foo::bar]"), Some(2));
        assert_eq!(idx.resolve("File[/etc/dir/]"), Some(3));
        assert_eq!(idx.resolve("Notify[missing]"), None);
        assert_eq!(idx.resolve("garbage"), None);
    }
}
