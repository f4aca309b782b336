//! Cooked tokens: what the grammar sees (Puppet's lexer2 token set, with the context
//! decisions already made).

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Name(String),
    Word(String),
    ClassRef(String),
    /// The variable name without `$` (empty for a lone `$`).
    Variable(String),
    /// A number as written; the grammar converts it.
    Number(String),
    Str(String),
    DqPre(String),
    DqMid(String),
    DqPost(String),
    Regex(String),
    /// `@(TAG:syntax)`: carries the syntax (empty when none).
    Heredoc(String),
    True,
    False,

    // keywords
    Case,
    Class,
    Default,
    Define,
    If,
    Elsif,
    Else,
    Inherits,
    Node,
    And,
    Or,
    Undef,
    In,
    Unless,
    Function,
    Type,
    Attr,
    Private,

    /// `[` directly after an expression: access.
    LBrack,
    /// `[` anywhere else: a list.
    ListStart,
    RBrack,
    /// `{` after an expression or a keyword that introduces a body.
    LBrace,
    /// `{` that starts a hash.
    HashBrace,
    /// `{` after `?`.
    SelBrace,
    /// `{` after `|>` / `|>>`.
    CollectBrace,
    RBrace,
    /// `(` after an expression, not first on its line: a call (or a parameter list).
    LParen,
    /// Any other `(`.
    WsLParen,
    RParen,

    Equals,
    Appends,
    Deletes,
    IsEqual,
    NotEqual,
    Match,
    NoMatch,
    GreaterEqual,
    GreaterThan,
    LessEqual,
    LessThan,
    FArrow,
    PArrow,
    LShift,
    LLCollect,
    LCollect,
    RShift,
    RRCollect,
    RCollect,
    Plus,
    /// `-` after an expression.
    Minus,
    /// `-` anywhere else.
    UMinus,
    Div,
    /// `*` after an expression.
    Times,
    /// `*` anywhere else.
    Splat,
    Modulo,
    Not,
    Dot,
    /// `|` opening a lambda's (or EPP template's) parameters.
    Pipe,
    /// `|` closing them.
    PipeClose,
    At,
    AtAt,
    Colon,
    Comma,
    Semic,
    QMark,
    InEdge,
    InEdgeSub,
    OutEdge,
    OutEdgeSub,
    /// A character Puppet lexes but no rule accepts (`~`, unknown characters).
    Other(char),

    // EPP
    EppStart,
    RenderString(String),
    RenderExpr,
    EppEnd,
    EppEndTrim,
}

impl Tok {
    pub fn keyword(word: &str) -> Option<Tok> {
        Some(match word {
            "case" => Tok::Case,
            "class" => Tok::Class,
            "default" => Tok::Default,
            "define" => Tok::Define,
            "if" => Tok::If,
            "elsif" => Tok::Elsif,
            "else" => Tok::Else,
            "inherits" => Tok::Inherits,
            "node" => Tok::Node,
            "and" => Tok::And,
            "or" => Tok::Or,
            "undef" => Tok::Undef,
            "false" => Tok::False,
            "true" => Tok::True,
            "in" => Tok::In,
            "unless" => Tok::Unless,
            "function" => Tok::Function,
            "type" => Tok::Type,
            "attr" => Tok::Attr,
            "private" => Tok::Private,
            _ => return None,
        })
    }

    /// The keyword's text, if this is a keyword (Puppet lets keywords name attributes).
    pub fn keyword_text(&self) -> Option<&'static str> {
        Some(match self {
            Tok::Case => "case",
            Tok::Class => "class",
            Tok::Default => "default",
            Tok::Define => "define",
            Tok::If => "if",
            Tok::Elsif => "elsif",
            Tok::Else => "else",
            Tok::Inherits => "inherits",
            Tok::Node => "node",
            Tok::And => "and",
            Tok::Or => "or",
            Tok::Undef => "undef",
            Tok::In => "in",
            Tok::Unless => "unless",
            Tok::Function => "function",
            Tok::Type => "type",
            Tok::Attr => "attr",
            Tok::Private => "private",
            Tok::True => "true",
            Tok::False => "false",
            _ => return None,
        })
    }

    /// Whether an expression can end with this token: after it, `[` is access, `(` a call,
    /// `-` and `*` binary, and `{` opens a body rather than a hash.
    pub fn ends_expression(&self) -> bool {
        matches!(
            self,
            Tok::Name(_)
                | Tok::Word(_)
                | Tok::ClassRef(_)
                | Tok::Variable(_)
                | Tok::Number(_)
                | Tok::Str(_)
                | Tok::DqPost(_)
                | Tok::Regex(_)
                | Tok::True
                | Tok::False
                | Tok::Default
                | Tok::Undef
                | Tok::RParen
                | Tok::RBrack
                | Tok::RBrace
                | Tok::RCollect
                | Tok::RRCollect
        )
    }

    /// Tokens that can only continue what came before (never start an operand).
    pub fn ends_expression_only(&self) -> bool {
        matches!(self, Tok::PipeClose | Tok::RCollect | Tok::RRCollect)
    }

    /// Puppet's `regexp_acceptable?`: may a `/` after this token start a regular expression?
    /// Also right after `${` of an interpolation (`"${/ab+/}"`), where nothing could be
    /// divided.
    pub fn regex_may_follow(prev: Option<&Tok>) -> bool {
        !matches!(
            prev,
            Some(
                Tok::RParen
                    | Tok::RBrack
                    | Tok::RRCollect
                    | Tok::RCollect
                    | Tok::Name(_)
                    | Tok::ClassRef(_)
                    | Tok::Number(_)
                    | Tok::Str(_)
                    | Tok::True
                    | Tok::False
                    | Tok::DqPost(_)
                    | Tok::Heredoc(_)
                    | Tok::Regex(_)
                    | Tok::Variable(_)
                    | Tok::Word(_)
            )
        )
    }

    /// How a syntax error names this token: Puppet quotes the token's value.
    pub fn describe(&self) -> String {
        match self {
            Tok::Name(s) | Tok::Word(s) | Tok::ClassRef(s) | Tok::Number(s) => s.clone(),
            Tok::Variable(s) => s.clone(),
            Tok::Str(s) | Tok::DqPre(s) | Tok::DqMid(s) | Tok::DqPost(s) => s.clone(),
            Tok::Regex(s) => format!("/{s}/"),
            Tok::Heredoc(s) => s.clone(),
            Tok::RenderString(s) => s.clone(),
            Tok::Other(c) => c.to_string(),
            t => t.text().to_string(),
        }
    }

    /// The fixed text of punctuation and keywords.
    pub fn text(&self) -> &'static str {
        if let Some(k) = self.keyword_text() {
            return k;
        }
        match self {
            Tok::LBrack | Tok::ListStart => "[",
            Tok::RBrack => "]",
            Tok::LBrace | Tok::HashBrace | Tok::SelBrace | Tok::CollectBrace => "{",
            Tok::RBrace => "}",
            Tok::LParen | Tok::WsLParen => "(",
            Tok::RParen => ")",
            Tok::Equals => "=",
            Tok::Appends => "+=",
            Tok::Deletes => "-=",
            Tok::IsEqual => "==",
            Tok::NotEqual => "!=",
            Tok::Match => "=~",
            Tok::NoMatch => "!~",
            Tok::GreaterEqual => ">=",
            Tok::GreaterThan => ">",
            Tok::LessEqual => "<=",
            Tok::LessThan => "<",
            Tok::FArrow => "=>",
            Tok::PArrow => "+>",
            Tok::LShift => "<<",
            Tok::LLCollect => "<<|",
            Tok::LCollect => "<|",
            Tok::RShift => ">>",
            Tok::RRCollect => "|>>",
            Tok::RCollect => "|>",
            Tok::Plus => "+",
            Tok::Minus | Tok::UMinus => "-",
            Tok::Div => "/",
            Tok::Times | Tok::Splat => "*",
            Tok::Modulo => "%",
            Tok::Not => "!",
            Tok::Dot => ".",
            Tok::Pipe | Tok::PipeClose => "|",
            Tok::At => "@",
            Tok::AtAt => "@@",
            Tok::Colon => ":",
            Tok::Comma => ",",
            Tok::Semic => ";",
            Tok::QMark => "?",
            Tok::InEdge => "->",
            Tok::InEdgeSub => "~>",
            Tok::OutEdge => "<-",
            Tok::OutEdgeSub => "<~",
            Tok::EppEnd => "%>",
            Tok::EppEndTrim => "-%>",
            Tok::RenderExpr => "<%=",
            Tok::EppStart => "<%",
            _ => "",
        }
    }
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A lexical error: Puppet's message and the byte offset it refers to.
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    pub message: String,
    pub start: usize,
    pub end: usize,
}

impl LexError {
    pub fn new(message: impl Into<String>, start: usize, end: usize) -> LexError {
        LexError {
            message: message.into(),
            start,
            end,
        }
    }
}
