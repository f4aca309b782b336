//! The table of resource types Ordo applies (src/apply/providers/mod.rs, `TYPES`): every
//! entry and every provider in it is reached by a catalog's resource, and nothing else is.

use ordo::apply::providers::{build, can_apply, Suitable, TYPES};
use ordo::catalog::Resource;
use serde_json::json;

fn resource(t: &str, title: &str, params: serde_json::Value) -> Resource {
    serde_json::from_value(json!({"type": t, "title": title, "parameters": params}))
        .expect("a resource")
}

/// A title each type takes (a file's is a path).
fn title(t: &str) -> &'static str {
    match t {
        "file" => "/tmp/ordo-providers-table",
        "exec" => "/bin/true",
        _ => "x",
    }
}

fn error_of(r: &Resource) -> String {
    match build(r) {
        Ok(_) => String::new(),
        Err(e) => e,
    }
}

#[test]
fn every_type_is_reached_through_its_entry() {
    assert!(TYPES.len() >= 9, "only {} types", TYPES.len());
    for k in TYPES {
        let capitalized = format!("{}{}", k.name[..1].to_uppercase(), &k.name[1..]);
        assert!(can_apply(k.name) && can_apply(&capitalized), "{}", k.name);
        // The entry's own attribute check answers for it.
        let r = resource(&capitalized, title(k.name), json!({"no_such_attribute": 1}));
        let e = error_of(&r);
        assert!(
            e.contains(&format!("Ordo's {} does not support it", k.name)),
            "{}: {e}",
            k.name
        );
        for a in k.attributes {
            assert!(!a.is_empty());
        }
    }
    assert!(!can_apply("cron"));
    let e = error_of(&resource("Cron", "x", json!({})));
    let names: Vec<&str> = TYPES.iter().filter(|k| k.manages).map(|k| k.name).collect();
    assert_eq!(names.len(), 7, "{names:?}");
    assert!(
        e.ends_with(&format!("supported types: {}", names.join(", "))),
        "{e}"
    );
}

#[test]
fn every_provider_is_taken_by_name_and_others_refused() {
    let mut with_providers = 0;
    for k in TYPES.iter().filter(|k| !k.providers.is_empty()) {
        with_providers += 1;
        assert!(k.attributes.contains(&"provider"), "{}", k.name);
        for p in k.providers {
            let r = resource(k.name, title(k.name), json!({"provider": p.name}));
            assert_eq!(k.provider_of(&r), Ok(p.name));
            assert_eq!(error_of(&r), "", "{} provider {}", k.name, p.name);
        }
        // Without a name: a suitable one, which is never one taken only by name.
        let r = resource(k.name, title(k.name), json!({}));
        let chosen = k.provider_of(&r).expect("a default provider");
        let entry = k
            .providers
            .iter()
            .find(|p| p.name == chosen)
            .expect("listed");
        assert!(!matches!(entry.suitable, Suitable::Named), "{}", k.name);
        let r = resource(
            k.name,
            title(k.name),
            json!({"provider": "no_such_provider"}),
        );
        assert_eq!(k.provider_of(&r), Err("no_such_provider".to_string()));
        assert!(
            error_of(&r).contains("'no_such_provider'"),
            "{}: {}",
            k.name,
            error_of(&r)
        );
    }
    assert_eq!(
        with_providers, 3,
        "exec, package and service choose a provider"
    );
}
