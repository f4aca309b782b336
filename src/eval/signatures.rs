//! The argument counts and block of Puppet 7.23's own functions (the 4.x API functions in
//! `lib/puppet/functions/*.rb`), over all their dispatches: `min` and `max` arguments
//! (`None`: any number), and whether a block is required, optional or refused. Generated from
//! Puppet's source by reading each `dispatch` block's `param`, `optional_param`,
//! `repeated_param`, `required_repeated_param` and `block_param` lines.

/// Whether a function takes a lambda.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    Required,
    Optional,
    None,
}

pub struct Signature {
    pub name: &'static str,
    pub min: usize,
    pub max: Option<usize>,
    pub block: Block,
}

/// Sorted by name.
pub const SIGNATURES: &[Signature] = &[
    Signature {
        name: "abs",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "alert",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "all",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "annotate",
        min: 2,
        max: Some(3),
        block: Block::Optional,
    },
    Signature {
        name: "any",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "assert_type",
        min: 2,
        max: Some(2),
        block: Block::Optional,
    },
    Signature {
        name: "binary_file",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "break",
        min: 0,
        max: Some(0),
        block: Block::None,
    },
    Signature {
        name: "call",
        min: 1,
        max: None,
        block: Block::Optional,
    },
    Signature {
        name: "camelcase",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "capitalize",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "ceiling",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "chomp",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "chop",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "compare",
        min: 2,
        max: Some(3),
        block: Block::None,
    },
    Signature {
        name: "contain",
        min: 1,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "convert_to",
        min: 2,
        max: None,
        block: Block::Optional,
    },
    Signature {
        name: "crit",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "debug",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "defined",
        min: 1,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "dig",
        min: 1,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "downcase",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "each",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "emerg",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "empty",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "epp",
        min: 1,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "err",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "eyaml_lookup_key",
        min: 3,
        max: Some(3),
        block: Block::None,
    },
    Signature {
        name: "filter",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "find_file",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "find_template",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "flatten",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "floor",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "get",
        min: 2,
        max: Some(3),
        block: Block::Optional,
    },
    Signature {
        name: "getvar",
        min: 1,
        max: Some(2),
        block: Block::Optional,
    },
    Signature {
        name: "group_by",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "hiera",
        min: 1,
        max: Some(3),
        block: Block::Optional,
    },
    Signature {
        name: "hiera_array",
        min: 1,
        max: Some(3),
        block: Block::Optional,
    },
    Signature {
        name: "hiera_hash",
        min: 1,
        max: Some(3),
        block: Block::Optional,
    },
    Signature {
        name: "hiera_include",
        min: 1,
        max: Some(3),
        block: Block::Optional,
    },
    Signature {
        name: "hocon_data",
        min: 2,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "include",
        min: 1,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "index",
        min: 1,
        max: Some(2),
        block: Block::Optional,
    },
    Signature {
        name: "info",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "inline_epp",
        min: 1,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "join",
        min: 1,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "json_data",
        min: 2,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "keys",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "length",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "lest",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "lookup",
        min: 1,
        max: Some(4),
        block: Block::Optional,
    },
    Signature {
        name: "lstrip",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "map",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "match",
        min: 2,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "module_directory",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "new",
        min: 1,
        max: None,
        block: Block::Optional,
    },
    Signature {
        name: "next",
        min: 0,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "notice",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "partition",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "reduce",
        min: 1,
        max: Some(2),
        block: Block::Required,
    },
    Signature {
        name: "regsubst",
        min: 3,
        max: Some(5),
        block: Block::None,
    },
    Signature {
        name: "require",
        min: 1,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "return",
        min: 0,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "reverse_each",
        min: 1,
        max: Some(1),
        block: Block::Optional,
    },
    Signature {
        name: "round",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "rstrip",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "scanf",
        min: 2,
        max: Some(2),
        block: Block::Optional,
    },
    Signature {
        name: "size",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "slice",
        min: 2,
        max: Some(2),
        block: Block::Optional,
    },
    Signature {
        name: "sort",
        min: 1,
        max: Some(1),
        block: Block::Optional,
    },
    Signature {
        name: "split",
        min: 2,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "step",
        min: 2,
        max: Some(2),
        block: Block::Optional,
    },
    Signature {
        name: "strftime",
        min: 1,
        max: Some(3),
        block: Block::None,
    },
    Signature {
        name: "strip",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "then",
        min: 1,
        max: Some(1),
        block: Block::Required,
    },
    Signature {
        name: "tree_each",
        min: 1,
        max: Some(2),
        block: Block::Optional,
    },
    Signature {
        name: "type",
        min: 1,
        max: Some(2),
        block: Block::None,
    },
    Signature {
        name: "unique",
        min: 1,
        max: Some(1),
        block: Block::Optional,
    },
    Signature {
        name: "unwrap",
        min: 1,
        max: Some(1),
        block: Block::Optional,
    },
    Signature {
        name: "upcase",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "values",
        min: 1,
        max: Some(1),
        block: Block::None,
    },
    Signature {
        name: "versioncmp",
        min: 2,
        max: Some(3),
        block: Block::None,
    },
    Signature {
        name: "warning",
        min: 0,
        max: None,
        block: Block::None,
    },
    Signature {
        name: "with",
        min: 0,
        max: None,
        block: Block::Required,
    },
    Signature {
        name: "yaml_data",
        min: 2,
        max: Some(2),
        block: Block::None,
    },
];

/// The signature of Puppet's function `name`, if it is one of Puppet's own.
pub fn find(name: &str) -> Option<&'static Signature> {
    SIGNATURES
        .binary_search_by(|s| s.name.cmp(name))
        .ok()
        .map(|i| &SIGNATURES[i])
}

/// Puppet's message when `got` arguments don't fit between `min` and `max` (no limit: None).
pub fn arity_mismatch(name: &str, min: usize, max: Option<usize>, got: usize) -> Option<String> {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let got_text = if got == 0 {
        "none".to_string()
    } else {
        got.to_string()
    };
    if got >= min && max.is_none_or(|m| got <= m) {
        return None;
    }
    Some(match max {
        Some(max) if max == min => {
            format!(
                "'{name}' expects {max} argument{}, got {got_text}",
                plural(max)
            )
        }
        Some(max) => {
            format!("'{name}' expects between {min} and {max} arguments, got {got_text}")
        }
        None => format!(
            "'{name}' expects at least {min} argument{}, got {got_text}",
            plural(min)
        ),
    })
}

/// Puppet's message when `got` arguments (and a block or not) don't fit `sig`, if they don't.
pub fn mismatch(sig: &Signature, got: usize, has_block: bool) -> Option<String> {
    let name = sig.name;
    if let Some(m) = arity_mismatch(name, sig.min, sig.max, got) {
        return Some(m);
    }
    match (sig.block, has_block) {
        (Block::Required, false) => Some(format!("'{name}' expects a block")),
        (Block::None, true) => Some(format!("'{name}' does not expect a block")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_messages_read_as_puppets() {
        assert!(SIGNATURES.windows(2).all(|w| w[0].name < w[1].name));
        let join = find("join").unwrap();
        assert_eq!(
            mismatch(join, 0, false).unwrap(),
            "'join' expects between 1 and 2 arguments, got none"
        );
        assert_eq!(mismatch(join, 2, false), None);
        let size = find("size").unwrap();
        assert_eq!(
            mismatch(size, 2, false).unwrap(),
            "'size' expects 1 argument, got 2"
        );
        let new = find("new").unwrap();
        assert_eq!(
            mismatch(new, 0, false).unwrap(),
            "'new' expects at least 1 argument, got none"
        );
        assert_eq!(
            mismatch(find("each").unwrap(), 1, false).unwrap(),
            "'each' expects a block"
        );
        assert_eq!(
            mismatch(find("upcase").unwrap(), 1, true).unwrap(),
            "'upcase' does not expect a block"
        );
    }
}
