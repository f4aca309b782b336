//! Raw tokens recognised by logos: everything whose meaning does not depend on context.
//!
//! Strings, heredocs and regular expressions are *not* raw tokens: the cooker
//! (`cooker.rs`) scans them by hand when it meets their opening character, because what
//! they contain depends on what came before (regex vs division) or is itself a little
//! language (interpolation). Whitespace and comments are skipped here; newlines are kept
//! because the cooker needs them (heredoc bodies, `(` at line start).

use logos::Logos;

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r]+")]
#[logos(skip r"#[^\n]*")]
pub enum Raw {
    #[token("\n")]
    Newline,
    /// `/*`: the cooker skips to the closing `*/`.
    #[token("/*")]
    MlComment,

    /// `(::)?[a-z_]...` bare words and names (classified by the cooker, which also gives
    /// back dashes that end a segment: Puppet's words cannot end with `-`).
    #[regex(r"(::)?[a-z_][A-Za-z0-9_-]*(::[a-z_][A-Za-z0-9_-]*)*")]
    BareWord,
    #[regex(r"(::)?[A-Z][A-Za-z0-9_]*(::[A-Z][A-Za-z0-9_]*)*")]
    ClassRef,
    #[regex(r"0[xX][0-9A-Fa-f]+|[0-9]+(\.[0-9]+)?([eE]-?[0-9]+)?")]
    Number,
    #[regex(r"\$(::)?[A-Za-z0-9_]+(::[A-Za-z0-9_]+)*")]
    Variable,
    #[token("$")]
    Dollar,

    #[token("\"")]
    DQuote,
    #[token("'")]
    SQuote,
    #[token("@(")]
    HeredocStart,

    #[token("[")]
    LBrack,
    #[token("]")]
    RBrack,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("=")]
    Equals,
    #[token("+=")]
    Appends,
    #[token("-=")]
    Deletes,
    #[token("==")]
    IsEqual,
    #[token("!=")]
    NotEqual,
    #[token("=~")]
    Match,
    #[token("!~")]
    NoMatch,
    #[token(">=")]
    GreaterEqual,
    #[token(">")]
    GreaterThan,
    #[token("<=")]
    LessEqual,
    #[token("<")]
    LessThan,
    #[token("=>")]
    FArrow,
    #[token("+>")]
    PArrow,
    #[token("<<")]
    LShift,
    #[token("<<|")]
    LLCollect,
    #[token("<|")]
    LCollect,
    #[token(">>")]
    RShift,
    #[token("|>>")]
    RRCollect,
    #[token("|>")]
    RCollect,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("/")]
    Slash,
    #[token("*")]
    Times,
    #[token("%")]
    Modulo,
    #[token("%>")]
    EppEnd,
    #[token("-%>")]
    EppEndTrim,
    #[token("!")]
    Not,
    #[token(".")]
    Dot,
    #[token("|")]
    Pipe,
    #[token("@")]
    At,
    #[token("@@")]
    AtAt,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token(",")]
    Comma,
    #[token(";")]
    Semic,
    #[token("?")]
    QMark,
    #[token("~")]
    Tilde,
    #[token("->")]
    InEdge,
    #[token("~>")]
    InEdgeSub,
    #[token("<-")]
    OutEdge,
    #[token("<~")]
    OutEdgeSub,
}
