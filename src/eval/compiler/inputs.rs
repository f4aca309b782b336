//! What a compile reads besides its manifest: parsed sources (the one place the evaluator
//! calls the parsers) and `$server_facts`.

use super::*;

/// What the parser gives back: the tree (if any) and its diagnostics.
pub(in crate::eval) struct ParsedSource {
    pub program: Option<Program>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The one place the evaluator calls the parser.
pub(in crate::eval) fn parse_source(text: &str, file: FileId) -> ParsedSource {
    let p = crate::parser::parse(text, file);
    ParsedSource {
        program: p.program,
        diagnostics: p.diagnostics,
    }
}

/// The one place the evaluator calls the EPP parser.
pub(in crate::eval) fn parse_epp_source(text: &str, file: FileId) -> ParsedSource {
    let p = crate::parser::parse_epp(text, file);
    ParsedSource {
        program: p.program,
        diagnostics: p.diagnostics,
    }
}

/// `$server_facts` as `puppet catalog compile` sets it (Puppet::Indirector::Catalog::Compiler
/// `set_server_facts`): the compiling machine's name and addresses, which for a local compile
/// are the node's own facts, and the Puppet version whose language Ordo implements.
pub(in crate::eval) fn server_facts(facts: &serde_json::Value) -> Value {
    let fact = |path: &[&str]| {
        let mut v = facts;
        for p in path {
            v = v.get(p)?;
        }
        v.as_str().map(Value::str)
    };
    let mut h = IndexMap::new();
    h.insert(
        Value::str("serverversion"),
        Value::str(crate::PUPPET_VERSION),
    );
    let name = fact(&["networking", "fqdn"]).or_else(|| fact(&["fqdn"]));
    for (key, value) in [
        ("servername", name),
        (
            "serverip",
            fact(&["networking", "ip"]).or_else(|| fact(&["ipaddress"])),
        ),
        (
            "serverip6",
            fact(&["networking", "ip6"]).or_else(|| fact(&["ipaddress6"])),
        ),
    ] {
        if let Some(v) = value {
            h.insert(Value::str(key), v);
        }
    }
    h.insert(Value::str("environment"), Value::str("production"));
    Value::Hash(h.into())
}
