//! Parser tests as data.
//!
//! - `fixtures/parser/ok/NAME.pp`: must parse without error; its PN must equal `NAME.pn`
//!   (seeded from `puppet parser dump --format pn`).
//! - `fixtures/parser/err/NAME.pp`: must be rejected; the rendered diagnostics must equal
//!   `NAME.err`.
//! - The shared corpus (`../shared/corpus`) and its mutants, when present: Puppet's verdict
//!   and AST must be matched at the project's thresholds.
//! - Pathological nesting must give a diagnostic, not a crash.
//!
//! `UPDATE_EXPECT=1 cargo test` rewrites the expected files; review the diff.

use ordo::diagnostics::{render, RenderOptions};
use ordo::parser::parse;
use ordo::pn::to_pn;
use ordo::span::{FileId, SourceMap};
use std::path::{Path, PathBuf};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/parser")
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixture directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pp"))
        .collect();
    v.sort();
    v
}

fn update() -> bool {
    crate::common::update_expect()
}

fn check_expect(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if update() {
        std::fs::write(path, actual).expect("write expectation");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if expected.trim_end() != actual.trim_end() {
        failures.push(format!(
            "{}:\n--- expected\n{}\n--- actual\n{}",
            path.display(),
            expected.trim_end(),
            actual.trim_end()
        ));
    }
}

#[test]
fn ok_fixtures_parse_to_puppets_tree() {
    let mut failures = Vec::new();
    for f in fixtures("ok") {
        let text = std::fs::read_to_string(&f).expect("fixture");
        let parsed = parse(&text, FileId(0));
        match &parsed.program {
            Some(p) if !parsed.has_errors() => {
                check_expect(&f.with_extension("pn"), &to_pn(p), &mut failures)
            }
            _ => failures.push(format!(
                "{}: rejected: {:?}",
                f.display(),
                parsed.diagnostics
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn err_fixtures_are_rejected_with_their_diagnostics() {
    let mut failures = Vec::new();
    for f in fixtures("err") {
        let text = std::fs::read_to_string(&f).expect("fixture");
        let mut sources = SourceMap::new();
        let name = format!("err/{}", f.file_name().unwrap().to_string_lossy());
        let id = sources.add(name, text.clone());
        let parsed = parse(&text, id);
        if !parsed.has_errors() {
            failures.push(format!("{}: accepted", f.display()));
            continue;
        }
        let opts = RenderOptions { color: false };
        let rendered: String = parsed
            .diagnostics
            .iter()
            .map(|d| render(d, &sources, opts))
            .collect();
        check_expect(&f.with_extension("err"), &rendered, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_crash() {
    let n = 10_000;
    let cases = [
        "[".repeat(n) + &"]".repeat(n),
        "$x = ".to_string() + &"(".repeat(n) + "1" + &")".repeat(n),
        "$x = ".to_string() + &"{a => ".repeat(n) + "1" + &"}".repeat(n),
        "$x = ".to_string() + &"!".repeat(n) + "true",
        "$x = ".to_string() + &"- ".repeat(n) + "1",
        "$x = 1".to_string() + &" + 1".repeat(100_000),
        "$x = 1".to_string() + &" + 1".repeat(100_000) + " }",
        "$x = \"".to_string() + &"${\"".repeat(n),
        "$x".to_string() + &".foo".repeat(n),
        "File['a']".to_string() + &" -> File['a']".repeat(n),
    ];
    for c in &cases {
        let parsed = parse(c, FileId(0));
        assert!(
            parsed.has_errors(),
            "accepted: {}...",
            &c[..40.min(c.len())]
        );
    }
}

/// Reads PN into a comparable token list (numbers as numbers), as `pn.py` compares.
fn pn_tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if "()[]{}".contains(c) {
            out.push(c.to_string());
            i += 1;
        } else if c == '"' {
            let mut t = String::from("s:");
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' && i + 1 < b.len() {
                    t.push(b[i]);
                    i += 1;
                }
                t.push(b[i]);
                i += 1;
            }
            i += 1;
            out.push(t);
        } else {
            let start = i;
            while i < b.len() && !b[i].is_whitespace() && !"()[]{}".contains(b[i]) {
                i += 1;
            }
            let w: String = b[start..i].iter().collect();
            out.push(match w.parse::<f64>() {
                Ok(f) => format!("n:{f}"),
                Err(_) => w,
            });
        }
    }
    out
}

struct Row {
    path: String,
    ok: bool,
}

fn truth(corpus: &Path) -> Option<Vec<Row>> {
    let text = std::fs::read_to_string(corpus.join("parse-truth.tsv")).ok()?;
    Some(
        text.lines()
            .skip(1)
            .filter_map(|l| {
                let mut cols = l.split('\t');
                let path = cols.next()?.to_string();
                let ok = cols.next()? == "ok";
                path.ends_with(".pp").then_some(Row { path, ok })
            })
            .collect(),
    )
}

/// (files, verdicts matched, accepted files, identical PN) for one corpus directory.
fn run_corpus(corpus: &Path) -> Option<(usize, usize, usize, usize)> {
    let rows = truth(corpus)?;
    let (mut matched, mut accepted, mut identical) = (0, 0, 0);
    for r in &rows {
        let Ok(text) = std::fs::read_to_string(corpus.join(&r.path)) else {
            continue;
        };
        let parsed = std::panic::catch_unwind(|| parse(&text, FileId(0)))
            .unwrap_or_else(|_| panic!("parser panicked on {}", r.path));
        let ok = !parsed.has_errors();
        if ok == r.ok {
            matched += 1;
        }
        if r.ok && ok {
            accepted += 1;
            let rel = r.path.strip_prefix("modules/").unwrap_or(&r.path);
            let want = std::fs::read_to_string(corpus.join("ast-truth").join(format!("{rel}.pn")));
            let got = to_pn(parsed.program.as_ref().expect("accepted"));
            if want.is_ok_and(|w| pn_tokens(&w) == pn_tokens(&got)) {
                identical += 1;
            }
        }
    }
    Some((rows.len(), matched, accepted, identical))
}

#[test]
fn corpus_matches_puppet() {
    let Some(corpus) = crate::common::shared("corpus") else {
        return;
    };
    let Some((files, matched, _accepted, identical)) = run_corpus(&corpus) else {
        panic!("no corpus verdicts at {}", corpus.display());
    };
    let oks = truth(&corpus).unwrap().iter().filter(|r| r.ok).count();
    eprintln!("corpus: files {files}, verdicts {matched}, pn-identical {identical}/{oks}");
    assert_eq!(
        matched, files,
        "every corpus file must get Puppet's verdict"
    );
    assert!(
        identical * 100 >= oks * 99,
        "PN identical for {identical}/{oks}"
    );

    let mutants = corpus.join("mutants");
    let (files, matched, accepted, identical) = run_corpus(&mutants).expect("mutants");
    eprintln!("mutants: files {files}, verdicts {matched}, pn-identical {identical}/{accepted}");
    assert!(
        matched * 100 >= files * 98,
        "verdict matched for {matched}/{files}"
    );
    assert_eq!(identical, accepted, "PN must be identical where accepted");
}
