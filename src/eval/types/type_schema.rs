//! Resource type schemas for Ruby types Ordo cannot load: namevars and attribute names, read
//! from a JSON file in the format of `resource-type-schemas.json` (what Puppet reports for
//! each type: `key_attributes`, `parameters`, `properties`).

use serde_json::Value as Json;
use std::collections::HashMap;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeSchema {
    pub namevars: Vec<String>,
    pub attributes: Vec<String>,
    /// The type's title patterns whose captures Ordo can name: each regular expression
    /// (Ruby syntax) with the attribute of each of its groups, in order.
    pub title_patterns: Vec<(String, Vec<String>)>,
}

/// The attributes that the captures of Ruby types' title patterns set, pattern by pattern.
/// Puppet reads them from the type's code (`self.title_patterns` returns each regular
/// expression with a list of attributes); a schema file keeps only the expressions. These
/// are the types of the modules Ordo is tested with that split their titles, as their
/// sources give them (sshkeys_core, keystone, rabbitmq). A type not here keeps its title
/// whole, and so does one whose schema lists another number of patterns.
const TITLE_PATTERN_ATTRIBUTES: &[(&str, &[&[&str]])] = &[
    ("sshkey", &[&["name", "type"], &["name"]]),
    (
        "keystone_endpoint",
        &[
            &["region", "name", "type"],
            &["region", "name"],
            &["name", "type"],
            &["name"],
        ],
    ),
    ("keystone_service", &[&["name", "type"], &["name"]]),
    ("keystone_tenant", &[&["name", "domain"], &["name"]]),
    ("keystone_user", &[&["name", "domain"], &["name"]]),
    (
        "keystone_user_role",
        &[
            &["user", "user_domain", "project", "project_domain"],
            &["user", "user_domain", "domain"],
            &["user", "user_domain", "project"],
            &["user", "project", "project_domain"],
            &["user", "domain"],
            &["user", "project"],
            &["user", "user_domain", "system"],
            &["user", "system"],
        ],
    ),
    (
        "rabbitmq_binding",
        &[&["name"], &["name", "source", "destination", "vhost"]],
    ),
];

/// The named title patterns of type `name` from the schema's `patterns`: each either
/// `{"pattern": RE, "attributes": [..]}` (what Ordo reads from the type's Ruby), or a bare
/// regular expression whose attributes come from [`TITLE_PATTERN_ATTRIBUTES`].
fn title_patterns(name: &str, patterns: Option<&Json>) -> Vec<(String, Vec<String>)> {
    let Some(patterns) = patterns.and_then(|p| p.as_array()) else {
        return vec![];
    };
    if patterns.iter().all(|p| p.is_object()) {
        return patterns
            .iter()
            .filter_map(|p| {
                let attributes = p.get("attributes")?.as_array()?;
                Some((
                    p.get("pattern")?.as_str()?.to_string(),
                    attributes
                        .iter()
                        .filter_map(|a| a.as_str().map(String::from))
                        .collect(),
                ))
            })
            .collect();
    }
    let Some((_, attributes)) = TITLE_PATTERN_ATTRIBUTES.iter().find(|(t, _)| *t == name) else {
        return vec![];
    };
    if attributes.len() != patterns.len() {
        return vec![];
    }
    patterns
        .iter()
        .zip(attributes.iter())
        .filter_map(|(p, a)| {
            Some((
                p.as_str()?.to_string(),
                a.iter().map(|s| s.to_string()).collect(),
            ))
        })
        .collect()
}

/// Reads every type of a schema file; `_metaparams`, types that could not be read
/// (`error`) and malformed entries are skipped.
pub fn parse_schemas(text: &str) -> Result<HashMap<String, TypeSchema>, String> {
    let j: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Json::Object(types) = j else {
        return Err("a type schema file must be a JSON object of types".into());
    };
    let mut out = HashMap::new();
    for (name, t) in types {
        if name.starts_with('_') || t.get("error").is_some() {
            continue;
        }
        let names = |k: &str| -> Vec<String> {
            t.get(k)
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.get("name").and_then(|n| n.as_str()))
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut attributes = names("parameters");
        attributes.extend(names("properties"));
        let mut namevars: Vec<String> = t
            .get("key_attributes")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if namevars.is_empty() {
            namevars.push("name".into());
        }
        let title_patterns = title_patterns(&name, t.get("title_patterns"));
        out.insert(
            name,
            TypeSchema {
                namevars,
                attributes,
                title_patterns,
            },
        );
    }
    Ok(out)
}

impl crate::eval::Compiler<'_> {
    /// The namevar of a Ruby type from its schema.
    pub(in crate::eval) fn ruby_namevar(&self, type_name: &str) -> Option<String> {
        let name = type_name.to_lowercase();
        match self.loader.type_schema(&name) {
            Some(s) => s.namevars.first().cloned(),
            None => self.loader.ruby_type_namevar(&name),
        }
    }
}

/// The namevar a Ruby type's source declares: `newparam(:x, :namevar => true)` (or
/// `namevar: true`), else a `newparam(:x) do .. isnamevar`, else `name`. A reading of the
/// common forms, not of Ruby: types that build their parameters in loops keep `name`.
pub fn namevar_from_ruby(src: &str) -> String {
    let params: Vec<(&str, &str)> = src
        .match_indices("newparam(")
        .filter_map(|(i, _)| {
            let rest = &src[i + "newparam(".len()..];
            let rest = rest.trim_start().strip_prefix(':')?;
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            // The declaration up to the next parameter or property.
            let body_end = ["newparam(", "newproperty("]
                .iter()
                .filter_map(|k| rest[end..].find(k))
                .min()
                .map_or(rest.len(), |e| end + e);
            Some((&rest[..end], &rest[end..body_end]))
        })
        .collect();
    let declared = |body: &str| {
        let head = body.split(['\n']).next().unwrap_or("");
        let flat: String = head.chars().filter(|c| !c.is_whitespace()).collect();
        flat.contains(":namevar=>true") || flat.contains("namevar:true")
    };
    params
        .iter()
        .find(|(_, body)| declared(body))
        .or_else(|| params.iter().find(|(_, body)| body.contains("isnamevar")))
        .map_or_else(|| "name".to_string(), |(n, _)| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namevars_read_from_ruby_types() {
        let concat = "Puppet::Type.newtype(:concat_file) do\n  ensurable\n  newparam(:tag) do\n  end\n  newparam(:path, :namevar => true) do\n  end\nend";
        assert_eq!(namevar_from_ruby(concat), "path");
        let block = "newparam(:name) do\n desc 'x'\nend\nnewparam(:target) do\n  isnamevar\nend\nnewproperty(:x)";
        assert_eq!(namevar_from_ruby(block), "target");
        assert_eq!(namevar_from_ruby("newparam(:name, namevar: true)"), "name");
        assert_eq!(namevar_from_ruby("newproperty(:value)"), "name");
    }

    #[test]
    fn reads_namevars_and_attributes() {
        let s = parse_schemas(
            r#"{"_metaparams": {}, "concat_file": {"key_attributes": ["path"],
                "parameters": [{"name": "path", "isnamevar": true}, {"name": "tag"}],
                "properties": [{"name": "ensure"}]}}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            s.get("concat_file"),
            Some(&TypeSchema {
                namevars: vec!["path".into()],
                attributes: vec!["path".into(), "tag".into(), "ensure".into()],
                title_patterns: vec![],
            })
        );
        assert!(!s.contains_key("_metaparams"));
    }

    #[test]
    fn reads_named_title_patterns_and_skips_unreadable_types() {
        let s = parse_schemas(
            r#"{"probe": {"key_attributes": ["name", "section"],
                "parameters": [{"name": "name"}, {"name": "section"}],
                "title_patterns": [{"pattern": "(?-mix:^(.*)/(.*)$)", "attributes": ["section", "name"]}]},
                "broken": {"error": "NameError: x"}}"#,
        )
        .unwrap_or_default();
        let probe = s.get("probe").cloned().unwrap_or_default();
        assert_eq!(
            probe.title_patterns,
            vec![(
                "(?-mix:^(.*)/(.*)$)".to_string(),
                vec!["section".to_string(), "name".to_string()]
            )]
        );
        assert!(!s.contains_key("broken"));
    }
}
