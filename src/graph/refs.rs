//! Finding the resource a reference names.
//!
//! Puppet matches `Type[title]` case-insensitively on the type, exactly on the title, and also
//! by namevar (`File['/path']` for `file { 'x': path => '/path' }`, `Exec['cmd']` by command)
//! and by the `alias` metaparameter. File paths lose their trailing slashes, class titles
//! their case.

use crate::catalog::{capitalize_type, Resource, ResourceRef};
use serde_json::Value as Json;
use std::collections::HashMap;

/// The parameter naming a resource of a core type when it differs from the title.
pub fn namevar(type_name: &str) -> &'static str {
    match type_name.to_ascii_lowercase().as_str() {
        "file" => "path",
        "exec" => "command",
        _ => "name",
    }
}

/// The canonical reference of a resource: type segments and class titles capitalised.
pub fn canonical_ref(type_name: &str, title: &str) -> ResourceRef {
    let type_name = capitalize_type(type_name);
    let title = if type_name == "Class" {
        capitalize_type(title)
    } else {
        title.to_string()
    };
    ResourceRef::new(type_name, title)
}

/// The lookup key of a (type, title or alias) pair.
fn key(type_name: &str, name: &str) -> (String, String) {
    let t = type_name.trim_start_matches("::").to_ascii_lowercase();
    let n = match t.as_str() {
        "class" => name.trim_start_matches("::").to_ascii_lowercase(),
        "file" if name.len() > 1 => name.trim_end_matches('/').to_string(),
        _ => name.to_string(),
    };
    (t, n)
}

/// Reference strings found in a relationship metaparameter value (a string or nested arrays).
pub fn reference_strings(value: &Json) -> Vec<String> {
    let mut out = Vec::new();
    collect(value, &mut out);
    out
}

fn collect(value: &Json, out: &mut Vec<String>) {
    match value {
        Json::String(s) => out.push(s.clone()),
        Json::Array(items) => items.iter().for_each(|v| collect(v, out)),
        Json::Object(map) => {
            // A reference written as data: {"type": "Notify", "title": "a"}.
            if let (Some(Json::String(t)), Some(Json::String(n))) =
                (map.get("type"), map.get("title"))
            {
                out.push(format!("{t}[{n}]"));
            }
        }
        _ => {}
    }
}

/// Title, namevar and alias index over catalog resources.
#[derive(Default, Debug)]
pub struct RefIndex {
    map: HashMap<(String, String), usize>,
}

impl RefIndex {
    pub fn new(resources: &[Resource]) -> RefIndex {
        let mut map = HashMap::new();
        // Titles first so that a namevar or alias never hides a title.
        for (i, r) in resources.iter().enumerate() {
            map.entry(key(&r.type_name, &r.title)).or_insert(i);
        }
        for (i, r) in resources.iter().enumerate() {
            if let Some(Json::String(name)) = r.parameters.get(namevar(&r.type_name)) {
                map.entry(key(&r.type_name, name)).or_insert(i);
            }
            if let Some(alias) = r.parameters.get("alias") {
                for a in reference_strings(alias) {
                    map.entry(key(&r.type_name, &a)).or_insert(i);
                }
            }
        }
        RefIndex { map }
    }

    /// Resolves `Type[title]` (as written in a catalog or by a user).
    pub fn resolve(&self, reference: &str) -> Option<usize> {
        let r = ResourceRef::parse(reference.trim())?;
        self.find(&r.type_name, &r.title)
    }

    pub fn find(&self, type_name: &str, title: &str) -> Option<usize> {
        self.map.get(&key(type_name, title)).copied()
    }
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
