//! The house rules the compiler does not check: which part of the crate may use which
//! (docs/architecture.md, "Invariants"), and how long a source file may grow. The IO rules
//! of the core are clippy's (`clippy.toml`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and the modules it may name (`crate::x`). The pipeline
/// runs lexer -> parser -> eval -> catalog <- graph <- apply; `check`, `cli` and the
/// machine-facing modules sit on top. A new top-level module must be placed here.
const ARROWS: &[(&str, &[&str])] = &[
    ("span", &[]),
    ("fxhash", &[]),
    ("digest", &[]),
    ("ruby_text", &[]),
    ("input", &[]),
    // How deep the calling thread's stack may still go (a recursion's guard).
    ("stack", &[]),
    ("diagnostics", &["span"]),
    ("lexer", &["span", "diagnostics", "fxhash"]),
    ("ast", &["span"]),
    ("ast_walk", &["ast", "span"]),
    (
        "parser",
        &["lexer", "ast", "ast_walk", "span", "diagnostics", "fxhash"],
    ),
    ("pn", &["ast", "span", "ruby_text"]),
    (
        "catalog",
        &["span", "fxhash", "digest", "diagnostics", "ruby_text"],
    ),
    (
        "eval",
        &[
            "lexer",
            "parser",
            "ast",
            "ast_walk",
            "span",
            "diagnostics",
            "fxhash",
            "digest",
            "catalog",
            "pn",
            "ruby_text",
            "stack",
            "PUPPET_VERSION",
        ],
    ),
    (
        "graph",
        &["catalog", "span", "diagnostics", "fxhash", "digest"],
    ),
    (
        "apply",
        &[
            "graph",
            "catalog",
            "span",
            "diagnostics",
            "fxhash",
            "digest",
            "ruby_text",
            "input",
        ],
    ),
    (
        "check",
        &[
            "eval",
            "graph",
            "apply",
            "catalog",
            "parser",
            "span",
            "diagnostics",
            "fxhash",
        ],
    ),
    // Facts: SSH fingerprints (digest), YAML external facts (eval's YAML reader), inputs
    // read as regular files only (input), modules' custom facts run by the machine's Ruby
    // (ruby).
    (
        "facts",
        &[
            "span",
            "diagnostics",
            "digest",
            "eval",
            "input",
            "ruby",
            "PUPPET_VERSION",
        ],
    ),
    // The child `ruby` behind the evaluator's `RubyRuntime` (machine-facing).
    ("ruby", &["eval"]),
    ("cli", &["*"]),
    (
        "serve",
        &[
            "cli",
            "eval",
            "catalog",
            "digest",
            "apply",
            "stack",
            "COMPILE_STACK",
            "PUPPET_VERSION",
        ],
    ),
    ("lib", &["*"]),
    ("main", &["*"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`src/eval/expr.rs` -> `eval`).
fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The code of a file without its unit tests (`#[cfg(test)]` and what follows) and
/// comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate modules a piece of code names: `crate::x` and `use crate::{x, y::z}`.
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn imports_follow_the_architecture() {
    let mut files = vec![];
    rust_files(&src(), &mut files);
    assert!(files.len() > 50, "only {} source files found", files.len());
    let mut problems = vec![];
    for f in &files {
        let top = top_module(f);
        let Some((_, allowed)) = ARROWS.iter().find(|(m, _)| *m == top) else {
            problems.push(format!(
                "{}: module `{top}` is not placed in tests/tidy.rs ARROWS",
                f.display()
            ));
            continue;
        };
        if allowed.contains(&"*") {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("read source");
        for m in named_modules(&code(&text)) {
            if m != top && !allowed.contains(&m.as_str()) {
                problems.push(format!(
                    "{}: `{top}` may not use `crate::{m}`",
                    f.strip_prefix(src()).unwrap_or(f).display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The rooms of `src/eval/` (docs/eval.md) and the other rooms and modules of `eval` each
/// may name. Values are data; types see only values and the compiler (which resolves type
/// names); Hiera reads data; the ERB interpreter is reached only through the function
/// registry (`template()`, `inline_template()`). Items of `eval` itself (`Loader`,
/// `is_qualified`) are not rooms and are always allowed; a room not listed is not checked.
const EVAL_ROOMS: &[(&str, &[&str])] = &[
    ("values", &["types"]),
    ("types", &["values", "compiler"]),
    ("hiera", &["values", "types"]),
    ("resources", &["compiler", "functions", "types", "values"]),
    (
        "compiler",
        &[
            "functions",
            "hiera",
            "parse_cache",
            "resources",
            "types",
            "values",
        ],
    ),
    (
        "expr",
        &["compiler", "functions", "resources", "types", "values"],
    ),
    ("erb", &["compiler", "functions", "hiera", "values"]),
];

/// The modules of `eval` a piece of code in module `module` (its path from `crate`, as
/// `["eval", "values", "value"]`) names, through `crate::eval::x` or `super::x`.
fn named_eval_modules(code: &str, module: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::eval::") {
        out.insert(ident(&code[i + "crate::eval::".len()..]));
    }
    let bytes = code.as_bytes();
    for (i, _) in code.match_indices("super::") {
        let before = if i == 0 { b' ' } else { bytes[i - 1] };
        if before == b':' || before == b'_' || before.is_ascii_alphanumeric() {
            continue; // the tail of a chain, counted from its head
        }
        let mut rest = &code[i..];
        let mut up = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            up += 1;
        }
        if module.len() == up + 1 && module[0] == "eval" {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

#[test]
fn eval_rooms_follow_their_arrows() {
    let eval = src().join("eval");
    let mut files = vec![];
    rust_files(&eval, &mut files);
    let modules: BTreeSet<String> = std::fs::read_dir(&eval)
        .expect("read src/eval")
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".rs").to_string()
        })
        .filter(|n| n != "mod")
        .collect();
    for (room, allowed) in EVAL_ROOMS {
        assert!(modules.contains(*room), "room `{room}` is not in src/eval");
        for a in *allowed {
            assert!(modules.contains(*a), "`{a}` is not a module of src/eval");
        }
    }
    let mut problems = vec![];
    for f in &files {
        let rel = f.strip_prefix(&eval).expect("under src/eval");
        let mut module: Vec<String> = vec!["eval".into()];
        for c in rel.components() {
            let c = c.as_os_str().to_string_lossy();
            module.push(c.trim_end_matches(".rs").to_string());
        }
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let Some(room) = module.get(1) else { continue };
        let Some((_, allowed)) = EVAL_ROOMS.iter().find(|(r, _)| r == room) else {
            continue;
        };
        let text = std::fs::read_to_string(f).expect("read source");
        for m in named_eval_modules(&code(&text), &module) {
            if &m != room && modules.contains(&m) && !allowed.contains(&m.as_str()) {
                problems.push(format!(
                    "eval/{}: the `{room}` room may not use `eval::{m}`",
                    rel.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Files that are over the limit today, with the size they may not pass: each is to be
/// split, never grown. None today.
const OVERSIZED: &[(&str, usize)] = &[];

const MAX_LINES: usize = 1500;

/// Generated data, exempt from the limit: the table of Puppet's function signatures that
/// `scripts/gen_signatures.py --write` writes whole (the code that reads it is held to it).
const GENERATED: &[&str] = &["eval/functions/signatures_data.rs"];

#[test]
fn source_files_stay_readable() {
    let mut files = vec![];
    rust_files(&src(), &mut files);
    let mut problems = vec![];
    for f in &files {
        let rel = f
            .strip_prefix(src())
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        if GENERATED.contains(&rel.as_str()) {
            continue;
        }
        let lines = std::fs::read_to_string(f).expect("read").lines().count();
        let limit = OVERSIZED
            .iter()
            .find(|(name, _)| *name == rel)
            .map_or(MAX_LINES, |(_, n)| *n);
        if lines > limit {
            problems.push(format!("{rel}: {lines} lines (limit {limit})"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_tidy_checks_see_violations() {
    let planted = "use crate::graph::Graph;\nfn f() { crate::{apply, cli::x}; }";
    let found = named_modules(planted);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["apply", "cli", "graph"]
    );
    assert!(named_modules(&code("// crate::graph\n#[cfg(test)]\nuse crate::cli;")).is_empty());
    let value: Vec<String> = ["eval", "values", "value"].map(String::from).into();
    let planted =
        "use crate::eval::erb::x; fn f() { super::super::resources::y(); super::strings::z() }";
    assert_eq!(
        named_eval_modules(planted, &value)
            .into_iter()
            .collect::<Vec<_>>(),
        ["erb", "resources"]
    );
}

/// docs/diagnostics.md lists every diagnostic code of `diagnostics::CODES`, and nothing else.
#[test]
fn every_diagnostic_code_is_documented() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/diagnostics.md"))
            .expect("docs/diagnostics.md");
    let listed: BTreeSet<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let registered: BTreeSet<&str> = ordo::diagnostics::CODES
        .iter()
        .map(|(c, _, _)| *c)
        .collect();
    assert_eq!(listed, registered);
}

/// Whether a line maps a function name to an implementation (`"name" => f_name,`), as a
/// name-keyed table of functions does.
fn maps_a_function_name(line: &str) -> bool {
    let Some((left, right)) = line.trim().split_once(" => ") else {
        return false;
    };
    let names = left.split(" | ").all(|n| {
        n.len() > 2
            && n.starts_with('"')
            && n.ends_with('"')
            && n[1..n.len() - 1]
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':')
    });
    let target = right.trim_end_matches(',');
    let last = target.rsplit("::").next().unwrap_or(target);
    names && last.starts_with("f_") && !target.contains(['(', ' '])
}

/// Built-in functions are found through one registry (src/eval/functions/registry.rs),
/// never through a `match name { "x" => f_x, .. }` table elsewhere.
#[test]
fn built_in_functions_have_one_registry() {
    let mut files = vec![];
    rust_files(&src(), &mut files);
    let registry = Path::new("eval/functions/registry.rs");
    let mut problems = vec![];
    for f in &files {
        let rel = f.strip_prefix(src()).unwrap_or(f);
        if rel == registry {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("read source");
        for (i, line) in code(&text).lines().enumerate() {
            if maps_a_function_name(line) {
                problems.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(maps_a_function_name(r#"        "each" | "map" => f_each,"#));
    assert!(maps_a_function_name(
        r#"        "lookup" => super::hiera_lookup::f_lookup,"#
    ));
    assert!(!maps_a_function_name(r#"        "each" => (1, 2),"#));
}
