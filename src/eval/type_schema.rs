//! Resource type schemas for Ruby types Ordo cannot load: namevars and attribute names, read
//! from a JSON file in the format of `resource-type-schemas.json` (what Puppet reports for
//! each type: `key_attributes`, `parameters`, `properties`).

use serde_json::Value as Json;
use std::collections::HashMap;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeSchema {
    pub namevars: Vec<String>,
    pub attributes: Vec<String>,
}

/// Reads every type of a schema file; `_metaparams` and malformed entries are skipped.
pub fn parse_schemas(text: &str) -> Result<HashMap<String, TypeSchema>, String> {
    let j: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Json::Object(types) = j else {
        return Err("a type schema file must be a JSON object of types".into());
    };
    let mut out = HashMap::new();
    for (name, t) in types {
        if name.starts_with('_') {
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
        out.insert(
            name,
            TypeSchema {
                namevars,
                attributes,
            },
        );
    }
    Ok(out)
}

impl super::Compiler<'_> {
    /// The namevar of a Ruby type from its schema.
    pub(super) fn ruby_namevar(&self, type_name: &str) -> Option<String> {
        self.loader
            .type_schema(&type_name.to_lowercase())
            .and_then(|s| s.namevars.first().cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            })
        );
        assert!(!s.contains_key("_metaparams"));
    }
}
