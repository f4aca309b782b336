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

/// Parses a Puppet manifest (`.pp`).
pub fn parse(text: &str, file: FileId) -> Parsed {
    run(lexer::cook_stream(text), text, file)
}

/// Parses an EPP template (`.epp`).
pub fn parse_epp(text: &str, file: FileId) -> Parsed {
    run(lexer::cook_epp_stream(text), text, file)
}

/// What the grammar gives back.
type GrammarResult = Result<Expr, ParseError<usize, Tok, LexError>>;

/// Parses the tokens of `stream` with the grammar.
fn run(mut tokens: lexer::Stream<'_>, text: &str, file: FileId) -> Parsed {
    let mut b = factory::B::new(file, text.len());
    let result: GrammarResult = grammar::ProgramParser::new().parse(&mut b, &mut tokens);
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
    let elsifs = stream.elsifs();
    let lex_warnings = stream.take_warnings();
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
    // heredoc makes us measure; each `elsif` may add a level the bound does not hold.
    let measure = depth_bound + elsifs + 16 > post::MAX_DEPTH || text.contains("@(");
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

/// Tokens that would continue an expression already complete (operators, assignments,
/// arrows, access): where the grammar also expects a token that closes or separates, those
/// are what the writer missed, and the note names only them.
const CONTINUATIONS: &[&str] = &[
    "=", "+=", "-=", "->", "<-", "~>", "<~", "+", "-", "*", "/", "%", "<<", ">>", "==", "!=", "<",
    ">", "<=", ">=", "=~", "!~", "and", "or", "in", "?", ".", "[", "(", "|",
];

fn with_expected(d: Diagnostic, expected: &[String]) -> Diagnostic {
    let bare = |e: &String| e.trim_matches('"').to_string();
    let closing = expected
        .iter()
        .any(|e| !CONTINUATIONS.contains(&bare(e).as_str()));
    let mut names: Vec<String> = expected
        .iter()
        .filter(|e| !closing || !CONTINUATIONS.contains(&bare(e).as_str()))
        .map(|e| token_in_words(e))
        .collect();
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
mod tests {
    use super::*;

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
}
