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

fn run(mut stream: lexer::Stream, text: &str, file: FileId) -> Parsed {
    let mut b = factory::B::new(file);
    let end = text.len();
    let result = grammar::ProgramParser::new().parse(&mut b, &mut stream);
    // Complete: a successful parse has read the stream to its end.
    let depth_bound = stream.depth_bound();
    let mut diagnostics = Vec::new();
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
    if b.definitions > 1 {
        post::qualify_names(&mut program.body);
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
