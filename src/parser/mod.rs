//! The parser: cooked tokens -> LALRPOP grammar (grammar/puppet.lalrpop) -> AST, then the
//! checks Puppet makes before evaluation (`validate`).
//!
//! **Architecture invariant:** parsing never panics and never recurses without bound. The
//! cooker refuses deeply nested brackets; the tree's depth is measured iteratively and an
//! over-deep tree is dismantled iteratively before it is dropped.

pub mod factory;
mod post;
pub mod validate;

use crate::ast::{Expr, Program};
use crate::diagnostics::Diagnostic;
use crate::lexer::{self, LexError, Tok};
use crate::span::{FileId, Span};
use lalrpop_util::ParseError;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, dead_code)]
    grammar,
    "/puppet.rs"
);

// The grammar whose syntax errors Ordo reports (see grammar/puppet_reference.lalrpop).
lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, dead_code)]
    reference_grammar,
    "/puppet_reference.rs"
);

/// The result of parsing one file: the tree (when there was no syntax error) and every
/// diagnostic.
#[derive(Debug)]
pub struct Parsed {
    pub program: Option<Program>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Sources at least this large are lexed on a thread of their own, ahead of the parser.
const LEX_THREAD_FROM: usize = 128 * 1024;

/// Parses a Puppet manifest (`.pp`).
pub fn parse(text: &str, file: FileId) -> Parsed {
    parse_on(text, file, text.len() >= LEX_THREAD_FROM)
}

/// [`parse`], lexing on a second thread or not.
fn parse_on(text: &str, file: FileId, lex_thread: bool) -> Parsed {
    if lex_thread {
        std::thread::scope(|s| run(|| lexer::cook_stream_on(s, text), text, file))
    } else {
        run(|| lexer::cook_stream(text), text, file)
    }
}

/// Parses an EPP template (`.epp`).
pub fn parse_epp(text: &str, file: FileId) -> Parsed {
    run(|| lexer::cook_epp_stream(text), text, file)
}

/// What the grammar gives back.
type GrammarResult = Result<Expr, ParseError<usize, Tok, LexError>>;

/// Parses the tokens of `stream()` with the fast grammar; a source it refuses, or whose
/// actions found errors, is parsed again with the reference grammar, whose diagnostics are
/// the ones reported (see grammar/puppet_reference.lalrpop).
fn run<'a>(stream: impl Fn() -> lexer::Stream<'a>, text: &str, file: FileId) -> Parsed {
    let mut b = factory::B::new(file, text.len());
    let mut tokens = stream();
    let mut result: GrammarResult = grammar::ProgramParser::new().parse(&mut b, &mut tokens);
    if result.is_err() || !b.errors.is_empty() {
        // Stops a lexing thread still running (after a syntax error).
        drop(tokens);
        b = factory::B::new(file, text.len());
        tokens = stream();
        result = reference_grammar::ProgramParser::new().parse(&mut b, &mut tokens);
    }
    finish(result, b, tokens, text, file)
}

fn finish(
    result: GrammarResult,
    mut b: factory::B,
    mut stream: lexer::Stream,
    text: &str,
    file: FileId,
) -> Parsed {
    let end = text.len();
    // Complete: a successful parse has read the stream to its end.
    let depth_bound = stream.depth_bound();
    let lex_warnings = stream.take_warnings();
    // Stops a lexing thread still running (after a syntax error).
    drop(stream);
    let mut diagnostics: Vec<Diagnostic> = lex_warnings
        .into_iter()
        .map(|(at, w)| Diagnostic::warning("lexer", w).with_span(Span::new(file, at, at)))
        .collect();
    let body = match result {
        Ok(body) => Some(body),
        Err(e) => {
            diagnostics.push(syntax_error(e, file, end));
            None
        }
    };
    diagnostics.append(&mut b.errors);
    let Some(body) = body else {
        return Parsed {
            program: None,
            diagnostics,
        };
    };
    let mut program = Program { body };
    // Heredoc texts are cooked separately (their nesting is not in the bound), so any
    // heredoc makes us measure.
    let measure = depth_bound + 16 > post::MAX_DEPTH || text.contains("@(");
    if let Some(d) = measure
        .then(|| post::check_depth(&mut program, file))
        .flatten()
    {
        diagnostics.push(d);
        return Parsed {
            program: None,
            diagnostics,
        };
    }
    if b.definitions.len() > 1 {
        post::qualify_names(&mut program.body, b.definitions);
    }
    diagnostics.extend(validate::validate(&program));
    let program = if diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        Some(program)
    };
    Parsed {
        program,
        diagnostics,
    }
}

/// Maps LALRPOP's errors to Puppet's wording, naming what was expected in words.
fn syntax_error(e: ParseError<usize, Tok, LexError>, file: FileId, end: usize) -> Diagnostic {
    match e {
        ParseError::User { error } => Diagnostic::error("syntax", error.message)
            .with_label(Span::new(file, error.start, error.end), "here"),
        ParseError::UnrecognizedEof { location, expected } => {
            let span = Span::new(file, location.min(end), end);
            with_expected(
                Diagnostic::error("syntax", "Syntax error at end of input")
                    .with_label(span, "the input ends here"),
                &expected,
            )
        }
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => with_expected(
            Diagnostic::error("syntax", format!("Syntax error at '{}'", tok.describe()))
                .with_label(Span::new(file, l, r), "unexpected here"),
            &expected,
        ),
        ParseError::ExtraToken { token: (l, tok, r) } => {
            Diagnostic::error("syntax", format!("Syntax error at '{}'", tok.describe()))
                .with_label(Span::new(file, l, r), "unexpected here")
        }
        ParseError::InvalidToken { location } => Diagnostic::error("syntax", "Syntax error")
            .with_label(Span::new(file, location, location + 1), ""),
    }
}

fn with_expected(d: Diagnostic, expected: &[String]) -> Diagnostic {
    let mut names: Vec<String> = expected.iter().map(|e| token_in_words(e)).collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return d;
    }
    if names.len() > 8 {
        let shown = names[..8].join(", ");
        return d.with_note(format!("expected one of {shown}, ..."));
    }
    d.with_note(format!("expected {}", names.join(", ")))
}

/// A grammar terminal as a user would name it.
fn token_in_words(t: &str) -> String {
    let t = t.trim_matches('"');
    match t {
        "name" => "a name".into(),
        "word" => "a bare word".into(),
        "classref" => "a type name".into(),
        "variable" => "a variable".into(),
        "number" => "a number".into(),
        "string" | "dqpre" => "a string".into(),
        "dqmid" | "dqpost" => "the rest of a string".into(),
        "regex" => "a regular expression".into(),
        "heredoc" => "a heredoc".into(),
        "boolean" => "`true` or `false`".into(),
        "LISTSTART" => "`[`".into(),
        "HASHBRACE" | "SELBRACE" | "COLLECTBRACE" => "`{`".into(),
        "WSLPAREN" => "`(`".into(),
        "UMINUS" => "`-`".into(),
        "SPLAT" => "`*`".into(),
        "PIPECLOSE" => "`|`".into(),
        "EPPSTART" => "`<%`".into(),
        "RENDERSTRING" => "template text".into(),
        "RENDEREXPR" => "`<%=`".into(),
        "EPPEND" => "`%>`".into(),
        "EPPENDTRIM" => "`-%>`".into(),
        other => format!("`{other}`"),
    }
}

/// Drops a tree without recursion (for trees too deep to drop normally).
pub fn dismantle(e: Expr) {
    post::dismantle(e);
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the tests read their fixtures
mod tests {
    use super::*;

    /// Lexing on a thread gives the same tree and diagnostics as lexing as the parser
    /// goes, wherever the chunks happen to end (the statements below are of uneven lengths
    /// and mix the tokens the cooker decides by context: `[` after a value, binary and
    /// prefix `-`, `/` as division or regex, interpolation, heredocs).
    /// One grammar, without the fallback: its tree, or where it met an error (the error's
    /// note may differ between the grammars, the token it is met at may not), and the
    /// actions' errors.
    fn one_grammar(text: &str, epp: bool, reference: bool) -> String {
        let mut b = factory::B::new(FileId(0), text.len());
        let mut tokens = if epp {
            lexer::cook_epp_stream(text)
        } else {
            lexer::cook_stream(text)
        };
        let result = if reference {
            reference_grammar::ProgramParser::new().parse(&mut b, &mut tokens)
        } else {
            grammar::ProgramParser::new().parse(&mut b, &mut tokens)
        };
        match result {
            Ok(tree) => format!("{tree:?} {:?}", b.errors),
            Err(ParseError::UnrecognizedToken { token, .. }) => format!("at {token:?}"),
            Err(ParseError::UnrecognizedEof { .. }) => "at the end".to_string(),
            Err(e) => format!("{e:?}"),
        }
    }

    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir)
            .expect("a fixtures directory")
            .flatten()
        {
            let p = entry.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "pp" || x == "epp") {
                out.push(p);
            }
        }
    }

    /// The fast grammar accepts what the reference grammar accepts, with the same tree and
    /// the same errors from its actions, and refuses what it refuses at the same token: over
    /// every manifest and template under fixtures/ (valid ones, syntax errors, fuzz finds).
    #[test]
    fn fast_grammar_agrees_with_the_reference_grammar() {
        let mut files = Vec::new();
        sources(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
            &mut files,
        );
        assert!(files.len() > 100, "fixtures/ has its manifests");
        // More sources to compare on, e.g. the shared corpus after a grammar change:
        // ORDO_GRAMMAR_DIRS=../shared/corpus cargo test fast_grammar_agrees
        if let Some(dirs) = std::env::var_os("ORDO_GRAMMAR_DIRS") {
            for d in std::env::split_paths(&dirs) {
                sources(&d, &mut files);
            }
        }
        let mut refused = 0;
        for f in &files {
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            let epp = f.extension().is_some_and(|x| x == "epp");
            let fast = one_grammar(&text, epp, false);
            let reference = one_grammar(&text, epp, true);
            assert_eq!(fast, reference, "{}", f.display());
            refused += usize::from(fast.starts_with("at "));
        }
        assert!(refused > 10, "some fixtures have syntax errors");
    }

    /// Naming nested classes and defines walks only the nodes that hold one: the names are
    /// those a walk of every node gives (classes two deep, a define after resources and a
    /// heredoc, definitions at the top and in a second class).
    #[test]
    fn qualifying_names_skips_nothing_that_holds_a_definition() {
        let text = "class a {\n  file { '/x': content => @(EOT) }\n    text\n    | EOT\n  notify { 'n': }\n  class b {\n    notify { 'm': }\n    class c { }\n    define d() { }\n  }\n  $x = [1, 2]\n  define e() { notify { 'o': } }\n}\nclass f { class g { } }\ndefine h() { }\nnotify { 'top': }\n";
        let mut b = factory::B::new(FileId(0), text.len());
        let tree = grammar::ProgramParser::new()
            .parse(&mut b, lexer::cook_stream(text))
            .expect("the text parses");
        assert_eq!(b.definitions.len(), 8);
        let (mut pruned, mut every) = (tree.clone(), tree);
        post::qualify_names(&mut pruned, b.definitions);
        post::qualify_names(&mut every, (0..text.len()).collect());
        assert_eq!(format!("{pruned:?}"), format!("{every:?}"));
        for name in ["\"a::b::c\"", "\"a::b::d\"", "\"a::e\"", "\"f::g\""] {
            assert!(format!("{pruned:?}").contains(name), "{name}");
        }
    }

    #[test]
    fn lexing_thread_changes_nothing() {
        let statement = |i: usize| match i % 7 {
            0 => format!("$a{i} = [1, -2, $b[{i}] - 1, 6 / 3]\n"),
            1 => format!("notify {{ \"n${{a{i}}}-{i}\": message => \"x $a{i} y\" }}\n"),
            2 => format!("if $x =~ /^a{i}$/ {{ $y = $z ? {{ 'a' => 1, default => -{i} }} }}\n"),
            3 => format!("File['/f{i}'] -> Notify[\"n{i}\"]\n"),
            4 => format!("$h{i} = @(EOT)\n  text {i} ${{a}}\n  | EOT\n"),
            5 => format!("foo({i}, [ {i} ], {{ k => {i} }}) include bar{i}\n"),
            _ => format!("$v{i} = $facts['os']['family'] * {i} % 3\n"),
        };
        let mut text = String::new();
        let mut i = 0;
        while text.len() < 3 * LEX_THREAD_FROM {
            text.push_str(&statement(i));
            i += 1;
        }
        let syntax_error = format!("{}\n$x = = 1\n{}", &text[..text.len() / 2], text);
        let lex_error = format!("{text}$s = \"never closed\n");
        for t in [&text, &syntax_error, &lex_error] {
            let one = parse_on(t, FileId(0), false);
            let two = parse_on(t, FileId(0), true);
            assert_eq!(format!("{one:?}"), format!("{two:?}"));
        }
        assert!(parse_on(&text, FileId(0), true).program.is_some());
        assert!(parse_on(&syntax_error, FileId(0), true).has_errors());
        assert!(parse_on(&lex_error, FileId(0), true).has_errors());
    }
}
