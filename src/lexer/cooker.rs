//! The token cooker: turns logos' raw tokens into the tokens the grammar reads, making the
//! decisions Puppet's `lexer2.rb` makes from context.
//!
//! # Invariants
//!
//! - **Context is the previous cooked token.** Every decision below looks only at the last
//!   token pushed (Puppet's `ctx[:after]`) and at the characters right before the current
//!   one; nothing looks ahead except heredoc bodies, which are read ahead and skipped when
//!   the scan reaches the end of the line that opened them.
//! - **Puppet's rules, made explicit for an LR(1) grammar without precedence:**
//!   - `/` starts a regular expression only where `Tok::regex_may_follow` says so
//!     (Puppet's `regexp_acceptable?`); otherwise it divides.
//!   - `[` is `LBrack` (access) only directly after a token that ends an expression, with
//!     no whitespace between; any other `[` is `ListStart`.
//!   - `(` first on its line (only blanks before it) is `WsLParen`; otherwise it is
//!     `LParen` (a call or parameter list) after a token that ends an expression or after
//!     `type`, and `WsLParen` (grouping) elsewhere.
//!   - `-` and `*` are binary (`Minus`, `Times`) after a token that ends an expression and
//!     prefix (`UMinus`, `Splat`) elsewhere.
//!   - `{` is `SelBrace` after `?`, `CollectBrace` after `|>`/`|>>`, `LBrace` (a body)
//!     after a token that ends an expression or after `else`, `|`, `:`, `class` or `<%=`,
//!     and `HashBrace` elsewhere.
//! - **Strings become token sequences.** A string without interpolation is one `Str`; with
//!   interpolation it is `DqPre expr (DqMid expr)* DqPost`, where `expr` is the tokens of
//!   `$name` or of `${...}` up to the matching brace. Inside `${...}` a lone name, number or
//!   keyword, or one followed by `.` or `[`, is turned into a variable (Puppet's
//!   `transform_to_variable`).
//! - **Heredocs** emit `Heredoc(syntax)` followed by the tokens of their text, lexed by a
//!   sub-cooker over the processed text; the sub-cooker's offsets are mapped back to the
//!   file, so every token's span is in the original source.
//! - **Nesting is bounded.** More than `MAX_NESTING` open brackets or nested strings stop
//!   the scan with an error, so the parser and every later tree walk stay shallow.
//! - The first lexical error ends the token stream (Puppet stops there too).

use super::raw::Raw;
use super::strings::{self, Escapes, Stop};
use super::token::{LexError, Tok};
use logos::Logos;

/// A token with its byte range.
pub type Spanned = (usize, Tok, usize);

/// Open brackets (or nested interpolations) allowed before the input is refused.
pub const MAX_NESTING: usize = 200;

/// Operators allowed in one unbroken chain of expressions (summed over open brackets):
/// `a + b + ...`, `!!!x`, `a -> b -> ...` nest as deeply as they are long.
pub const MAX_CHAIN: usize = 300;

/// Cooks a whole Puppet source into tokens. On a lexical error, the tokens before it are
/// returned with the error.
pub fn cook(src: &str) -> Cooked {
    let mut c = Cooker::new(src, 0);
    let error = c.run().err();
    c.finish(error)
}

/// The cooker's output.
pub struct Cooked {
    pub tokens: Vec<Spanned>,
    /// The first lexical error (the tokens stop there).
    pub error: Option<LexError>,
    /// An upper bound on how deeply the tokens can nest (brackets plus operator chains,
    /// weighted by how many tree levels each can add).
    pub depth_bound: usize,
    /// Lexer warnings: the offset Puppet reports them at, and the message.
    pub warnings: Vec<(usize, String)>,
}

/// Cooks an EPP template.
pub fn cook_epp(src: &str) -> Cooked {
    let mut c = Cooker::new(src, 0);
    c.epp = true;
    let error = c.run_epp().err();
    c.finish(error)
}

/// The cooked tokens of a Puppet source as a stream, cooked as the parser asks for them
/// (so the whole token list never exists at once). Yields the tokens before the first
/// lexical error, then the error.
pub fn cook_stream(src: &str) -> Stream<'_> {
    Stream {
        c: Cooker::new(src, 0),
        pos: 0,
        finished: false,
        error: None,
    }
}

/// An EPP template's tokens as a [`Stream`] (cooked in one go: templates are small).
pub fn cook_epp_stream(src: &str) -> Stream<'_> {
    let mut c = Cooker::new(src, 0);
    c.epp = true;
    let error = c.run_epp().err();
    Stream {
        c,
        pos: 0,
        finished: true,
        error,
    }
}

/// See [`cook_stream`]: a cooker run as tokens are asked for.
pub struct Stream<'a> {
    c: Cooker<'a>,
    /// The next token of `c.toks` to yield (the ones before it were taken).
    pos: usize,
    /// Whether the cooker has stopped (end of input or `error`).
    finished: bool,
    error: Option<LexError>,
}

impl Stream<'_> {
    /// An upper bound on how deeply the tokens yielded so far can nest (see
    /// [`Cooked::depth_bound`]); complete once the stream has ended.
    pub fn depth_bound(&self) -> usize {
        self.c.depth_bound
    }

    /// The `elsif` keywords yielded so far: each can nest the tree one level deeper.
    pub fn elsifs(&self) -> usize {
        self.c.elsifs
    }

    /// The lexer warnings of the tokens yielded so far (offset, message), taken out.
    pub fn take_warnings(&mut self) -> Vec<(usize, String)> {
        std::mem::take(&mut self.c.warnings)
    }
}

impl Iterator for Stream<'_> {
    type Item = Result<Spanned, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        let Stream { c, pos, .. } = self;
        loop {
            let n = c.toks.len();
            // The last token cooked stays until the next one is: it is the cooker's
            // context (`Cooker::prev`).
            if *pos + 1 < n || (self.finished && *pos < n) {
                let (s, tok, e) = &mut c.toks[*pos];
                *pos += 1;
                return Some(Ok((*s, std::mem::replace(tok, Tok::Comma), *e)));
            }
            if self.finished {
                return self.error.take().map(Err);
            }
            if *pos >= 256 {
                c.toks.drain(..*pos);
                *pos = 0;
            }
            match c.lex.next() {
                Some(raw) => {
                    if let Err(e) = c.cook_raw(raw) {
                        self.finished = true;
                        self.error = Some(e);
                    }
                }
                None => self.finished = true,
            }
        }
    }
}

struct Cooker<'a> {
    src: &'a str,
    lex: logos::Lexer<'a, Raw>,
    toks: Vec<Spanned>,
    line_start: usize,
    /// Where scanning continues after the current line, past heredoc bodies already read.
    newline_jump: Option<usize>,
    depth: usize,
    /// In an EPP template: whether `%>` closes a tag.
    epp: bool,
    /// Inside `<%= ... %>` (as opposed to `<% ... %>`).
    epp_expr: bool,
    /// Bracket depths at which a `|` parameter list is open.
    open_pipes: Vec<usize>,
    /// Operators in the current expression chain, per open bracket, and their sum.
    chain: Vec<usize>,
    chain_total: usize,
    depth_bound: usize,
    /// `elsif` keywords seen: each nests the tree one level (an `elsif` is an `If` in the
    /// `else` slot) without a bracket or an operator.
    elsifs: usize,
    /// Bracket depths at which a case option's body (`{` after `:`) is open.
    option_bodies: Vec<usize>,
    /// Where the last `}` that closed a case option's body starts: a `{` right after it
    /// starts a hash (the next option), not a body.
    option_closed_at: Option<usize>,
    /// Lexer warnings (Puppet's `lex_warning`): where, and the message.
    warnings: Vec<(usize, String)>,
}

type LResult<T> = Result<T, LexError>;

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Cooker<'a> {
    fn new(src: &'a str, depth: usize) -> Cooker<'a> {
        Cooker {
            src,
            lex: Raw::lexer(src),
            toks: Vec::new(),
            line_start: 0,
            newline_jump: None,
            depth,
            epp: false,
            epp_expr: false,
            open_pipes: Vec::new(),
            chain: vec![0],
            chain_total: 0,
            depth_bound: 0,
            elsifs: 0,
            option_bodies: Vec::new(),
            option_closed_at: None,
            warnings: Vec::new(),
        }
    }

    fn finish(self, error: Option<LexError>) -> Cooked {
        Cooked {
            tokens: self.toks,
            error,
            depth_bound: self.depth_bound,
            warnings: self.warnings,
        }
    }

    fn prev(&self) -> Option<&Tok> {
        self.toks.last().map(|t| &t.1)
    }

    fn prev_ends_expr(&self) -> bool {
        self.prev().is_some_and(Tok::ends_expression)
    }

    fn push(&mut self, start: usize, tok: Tok, end: usize) {
        self.toks.push((start, tok, end));
    }

    /// Counts how long the current operator chain is (see `MAX_CHAIN`).
    fn count_chain(&mut self, tok: &Tok, at: usize) -> LResult<()> {
        use Tok::*;
        let reset = |c: &mut Cooker| {
            let top = c.chain.last_mut().expect("a chain level");
            c.chain_total -= *top;
            *top = 0;
        };
        match tok {
            // Each access of a chain (`$a[0][0]...`) nests the tree one level deeper, as an
            // operator does: counted at the level the chain is on.
            LBrack if matches!(self.prev(), Some(RBrack | RParen | RBrace)) => {
                *self.chain.last_mut().expect("a chain level") += 1;
                self.chain_total += 1;
                if self.chain_total > MAX_CHAIN {
                    return Err(LexError::new(
                        format!("Expressions nested more than {MAX_CHAIN} levels deep are not supported"),
                        at,
                        at + 1,
                    ));
                }
                self.chain.push(0);
                self.depth_bound = self
                    .depth_bound
                    .max(self.chain_total + 6 * self.chain.len());
                return Ok(());
            }
            // A lambda's parameters (`.map |$x| { ... }`) continue the chain of calls.
            Pipe => return Ok(()),
            // Counted apart (`post::MAX_ELSIF`); a branch's test starts a new chain, as after
            // any keyword that follows a complete expression.
            Elsif => {
                self.elsifs += 1;
                if self.prev_ends_expr() {
                    reset(self);
                }
                return Ok(());
            }
            ListStart | LBrack | LBrace | HashBrace | SelBrace | CollectBrace | LParen
            | WsLParen => {
                self.chain.push(0);
                self.depth_bound = self
                    .depth_bound
                    .max(self.chain_total + 6 * self.chain.len());
                return Ok(());
            }
            RBrack | RBrace | RParen => {
                if self.chain.len() > 1 {
                    let top = self.chain.pop().unwrap_or(0);
                    self.chain_total -= top;
                }
                return Ok(());
            }
            Comma | Semic | Colon | FArrow | PArrow => {
                reset(self);
                return Ok(());
            }
            // A prefix operator after a complete expression starts the next statement
            // (`@notify { 'a': } @notify { 'b': }`): a new chain.
            At | AtAt | Not if self.prev_ends_expr() => reset(self),
            Equals | Appends | Deletes | IsEqual | NotEqual | Match | NoMatch | GreaterEqual
            | GreaterThan | LessEqual | LessThan | LShift | RShift | Plus | Minus | UMinus
            | Div | Times | Splat | Modulo | Not | Dot | At | AtAt | QMark | InEdge | InEdgeSub
            | OutEdge | OutEdgeSub | In | And | Or | LCollect | LLCollect => {}
            _ => {
                if self.prev_ends_expr() && !tok.ends_expression_only() {
                    reset(self);
                }
                return Ok(());
            }
        }
        *self.chain.last_mut().expect("a chain level") += 1;
        self.chain_total += 1;
        // A bracket adds at most a few tree levels (e.g. resource, body, attribute, value).
        self.depth_bound = self
            .depth_bound
            .max(self.chain_total + 6 * self.chain.len());
        if self.chain_total > MAX_CHAIN {
            return Err(LexError::new(
                format!("Expressions nested more than {MAX_CHAIN} levels deep are not supported"),
                at,
                at + 1,
            ));
        }
        Ok(())
    }

    /// Moves the raw lexer so that the next raw token starts at `pos`.
    fn seek(&mut self, pos: usize) {
        let cur = self.lex.span().end;
        if pos >= cur {
            self.lex.bump(pos - cur);
        } else {
            let mut lex = Raw::lexer(self.src);
            lex.bump(pos);
            self.lex = lex;
        }
    }

    fn run(&mut self) -> LResult<()> {
        while let Some(raw) = self.lex.next() {
            self.cook_raw(raw)?;
        }
        if self.depth_open() > 0 {
            // Unbalanced brackets are the parser's business.
        }
        Ok(())
    }

    fn depth_open(&self) -> usize {
        0
    }

    fn enter(&mut self, at: usize) -> LResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(LexError::new(
                format!("Expressions nested more than {MAX_NESTING} levels deep are not supported"),
                at,
                at + 1,
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Cooks one raw token (and whatever it opens: strings, heredocs, regexes).
    fn cook_raw(&mut self, raw: Result<Raw, ()>) -> LResult<()> {
        let span = self.lex.span();
        let (s, e) = (span.start, span.end);
        let Ok(raw) = raw else {
            let c = self.src[s..].chars().next().unwrap_or(' ');
            if c.is_whitespace() {
                return Ok(());
            }
            if c == ':' {
                return Err(LexError::new("Illegal fully qualified name", s, e));
            }
            self.push(s, Tok::Other(c), s + c.len_utf8());
            return Ok(());
        };
        let (text, e) = if raw == Raw::BareWord {
            let t = bare_word(&self.src[s..e]);
            if s + t.len() < e {
                self.seek(s + t.len());
            }
            (t, s + t.len())
        } else {
            (&self.src[s..e], e)
        };
        let tok = match raw {
            Raw::Newline => {
                self.line_start = e;
                if let Some(j) = self.newline_jump.take() {
                    self.seek(j);
                    self.line_start = j;
                }
                return Ok(());
            }
            Raw::MlComment => {
                let Some(i) = self.src[e..].find("*/") else {
                    return Err(LexError::new("Unclosed multiline comment", s, e));
                };
                self.seek(e + i + 2);
                return Ok(());
            }
            Raw::BareWord => {
                if let Some(k) = Tok::keyword(text) {
                    k
                } else if is_name(text) {
                    Tok::Name(text.to_string())
                } else {
                    Tok::Word(text.to_string())
                }
            }
            Raw::ClassRef => {
                if self.src[e..].starts_with("::") {
                    let msg = if text.starts_with("::") {
                        "Illegal fully qualified class reference"
                    } else {
                        "Illegal class reference"
                    };
                    return Err(LexError::new(msg, s, e));
                }
                Tok::ClassRef(text.to_string())
            }
            Raw::Number => {
                let bytes = self.src.as_bytes();
                if bytes.get(e).is_some_and(|b| is_word_byte(*b)) {
                    let mut end = e;
                    while bytes
                        .get(end)
                        .is_some_and(|b| is_word_byte(*b) || *b == b'.')
                    {
                        end += 1;
                    }
                    return Err(number_error(&self.src[s..end], s, end));
                }
                if let Some(err) = assert_numeric(text, s, e) {
                    return Err(err);
                }
                Tok::Number(text.to_string())
            }
            Raw::Variable => Tok::Variable(text[1..].to_string()),
            Raw::Dollar => Tok::Variable(String::new()),
            Raw::DQuote => return self.double_quoted(s),
            Raw::SQuote => {
                let Some((value, len)) = strings::single_quoted(&self.src[e..]) else {
                    return Err(LexError::new(
                        format!(
                            "Unclosed quote after \"'\" followed by '{}'",
                            followed_by(&self.src[e..])
                        ),
                        s,
                        e,
                    ));
                };
                self.seek(e + len);
                self.push(s, Tok::Str(value), e + len);
                return Ok(());
            }
            Raw::HeredocStart => return self.heredoc(s),
            Raw::LBrack => {
                self.enter(s)?;
                let ws_before =
                    s == 0 || matches!(self.src.as_bytes()[s - 1], b' ' | b'\t' | b'\r' | b'\n');
                if !ws_before && self.prev_ends_expr() {
                    Tok::LBrack
                } else {
                    Tok::ListStart
                }
            }
            Raw::RBrack => {
                self.leave();
                Tok::RBrack
            }
            Raw::LBrace => {
                self.enter(s)?;
                match self.prev() {
                    Some(Tok::QMark) => Tok::SelBrace,
                    Some(Tok::RCollect | Tok::RRCollect) => Tok::CollectBrace,
                    Some(Tok::Colon) => {
                        self.option_bodies.push(self.depth);
                        Tok::LBrace
                    }
                    Some(Tok::RBrace) if self.toks.last().map(|t| t.0) == self.option_closed_at => {
                        Tok::HashBrace
                    }
                    Some(Tok::Else | Tok::PipeClose | Tok::Class | Tok::RenderExpr) => Tok::LBrace,
                    Some(t) if t.ends_expression() => Tok::LBrace,
                    _ => Tok::HashBrace,
                }
            }
            Raw::RBrace => {
                if self.option_bodies.last() == Some(&self.depth) {
                    self.option_bodies.pop();
                    self.option_closed_at = Some(s);
                }
                self.leave();
                Tok::RBrace
            }
            Raw::LParen => {
                self.enter(s)?;
                let line = &self.src[self.line_start.min(s)..s];
                if line.bytes().all(|b| b == b' ' || b == b'\t' || b == b'\r') {
                    Tok::WsLParen
                } else if self.prev_ends_expr() || matches!(self.prev(), Some(Tok::Type)) {
                    Tok::LParen
                } else {
                    Tok::WsLParen
                }
            }
            Raw::RParen => {
                self.leave();
                Tok::RParen
            }
            Raw::Equals => Tok::Equals,
            Raw::Appends => Tok::Appends,
            Raw::Deletes => Tok::Deletes,
            Raw::IsEqual => Tok::IsEqual,
            Raw::NotEqual => Tok::NotEqual,
            Raw::Match => Tok::Match,
            Raw::NoMatch => Tok::NoMatch,
            Raw::GreaterEqual => Tok::GreaterEqual,
            Raw::GreaterThan => Tok::GreaterThan,
            Raw::LessEqual => Tok::LessEqual,
            Raw::LessThan => Tok::LessThan,
            Raw::FArrow => Tok::FArrow,
            Raw::PArrow => Tok::PArrow,
            Raw::LShift => Tok::LShift,
            Raw::LLCollect => Tok::LLCollect,
            Raw::LCollect => Tok::LCollect,
            Raw::RShift => Tok::RShift,
            Raw::RRCollect => Tok::RRCollect,
            Raw::RCollect => Tok::RCollect,
            Raw::Plus => Tok::Plus,
            Raw::Minus => self.minus(),
            Raw::Slash => {
                if Tok::regex_may_follow(self.prev()) {
                    if let Some((value, end)) = regex_literal(&self.src[s..]) {
                        if let Some(msg) = super::regex_check::check(&value) {
                            return Err(LexError::new(format!("{msg}: /{value}/"), s, s + end));
                        }
                        self.seek(s + end);
                        self.push(s, Tok::Regex(value), s + end);
                        return Ok(());
                    }
                }
                Tok::Div
            }
            Raw::Times => {
                if self.prev_ends_expr() {
                    Tok::Times
                } else {
                    Tok::Splat
                }
            }
            Raw::Modulo => Tok::Modulo,
            Raw::EppEnd => {
                if self.epp {
                    return self.epp_close(s, e, false);
                }
                self.seek(s + 1);
                Tok::Modulo
            }
            Raw::EppEndTrim => {
                if self.epp {
                    return self.epp_close(s, e, true);
                }
                self.seek(s + 1);
                self.push(s, self.minus(), s + 1);
                return Ok(());
            }
            Raw::Not => Tok::Not,
            Raw::Dot => Tok::Dot,
            Raw::Pipe => {
                // Pipes come in pairs around parameters; the pair is matched at one
                // bracket depth.
                if self.open_pipes.last() == Some(&self.depth) {
                    self.open_pipes.pop();
                    Tok::PipeClose
                } else {
                    self.open_pipes.push(self.depth);
                    Tok::Pipe
                }
            }
            Raw::At => Tok::At,
            Raw::AtAt => Tok::AtAt,
            Raw::Colon => Tok::Colon,
            Raw::ColonColon => {
                return Err(LexError::new("Illegal fully qualified name", s, e));
            }
            Raw::Comma => Tok::Comma,
            Raw::Semic => Tok::Semic,
            Raw::QMark => Tok::QMark,
            Raw::Tilde => Tok::Other('~'),
            Raw::InEdge => Tok::InEdge,
            Raw::InEdgeSub => Tok::InEdgeSub,
            Raw::OutEdge => Tok::OutEdge,
            Raw::OutEdgeSub => Tok::OutEdgeSub,
        };
        self.count_chain(&tok, s)?;
        self.push(s, tok, e);
        Ok(())
    }

    fn minus(&self) -> Tok {
        if self.prev_ends_expr() {
            Tok::Minus
        } else {
            Tok::UMinus
        }
    }

    /// A double-quoted string starting at `start` (the `"`).
    fn double_quoted(&mut self, start: usize) -> LResult<()> {
        self.enter(start)?;
        let mut pos = start + 1;
        let mut seg_start = start;
        let mut first = true;
        let mut text = String::new();
        loop {
            let mut warned = Vec::new();
            let (part, stop, at) =
                strings::slurp(&self.src[pos..], Escapes::DQ, true, true, &mut warned);
            text.push_str(&part);
            let at = pos + at;
            // Puppet reports them where its scanner stands: past the `"`, `$` or `${`
            // that ended this run of text.
            if !warned.is_empty() {
                let after = match stop {
                    Stop::DollarBrace => at + 2,
                    Stop::End => at,
                    Stop::Quote | Stop::Dollar => at + 1,
                };
                self.warnings.extend(warned.into_iter().map(|w| (after, w)));
            }
            match stop {
                Stop::End => {
                    return Err(LexError::new(
                        format!(
                            "Unclosed quote after '\"' followed by '{}'",
                            followed_by(&self.src[start + 1..])
                        ),
                        start,
                        start + 1,
                    ));
                }
                Stop::Quote => {
                    let end = at + 1;
                    let tok = if first {
                        Tok::Str(std::mem::take(&mut text))
                    } else {
                        Tok::DqPost(std::mem::take(&mut text))
                    };
                    self.push(seg_start, tok, end);
                    self.seek(end);
                    self.leave();
                    return Ok(());
                }
                Stop::Dollar => {
                    let len = strings::variable_len(&self.src[at + 1..]);
                    if len == 0 {
                        text.push('$');
                        pos = at + 1;
                        continue;
                    }
                    let t = std::mem::take(&mut text);
                    self.push(
                        seg_start,
                        if first { Tok::DqPre(t) } else { Tok::DqMid(t) },
                        at,
                    );
                    first = false;
                    let name = self.src[at + 1..at + 1 + len].to_string();
                    self.push(at, Tok::Variable(name), at + 1 + len);
                    pos = at + 1 + len;
                    seg_start = pos;
                }
                Stop::DollarBrace => {
                    let t = std::mem::take(&mut text);
                    self.push(
                        seg_start,
                        if first { Tok::DqPre(t) } else { Tok::DqMid(t) },
                        at + 2,
                    );
                    first = false;
                    self.seek(at + 2);
                    let close = self.interpolation(at)?;
                    pos = close + 1;
                    seg_start = close + 1;
                }
            }
        }
    }

    /// Lexes the expression of `${ ... }` (the raw lexer is just past `${`); returns the
    /// offset of the closing brace.
    fn interpolation(&mut self, open: usize) -> LResult<usize> {
        let first = self.toks.len();
        let mut braces = 0usize;
        loop {
            let Some(raw) = self.lex.next() else {
                return Err(LexError::new(
                    format!(
                        "Unclosed quote after '\"' followed by '{}'",
                        followed_by(&self.src[open..])
                    ),
                    open,
                    open + 2,
                ));
            };
            match raw {
                Ok(Raw::LBrace) => braces += 1,
                Ok(Raw::RBrace) if braces == 0 => {
                    let close = self.lex.span().start;
                    self.names_to_variable(first);
                    return Ok(close);
                }
                Ok(Raw::RBrace) => braces -= 1,
                _ => {}
            }
            self.cook_raw(raw)?;
        }
    }

    /// Puppet's `transform_to_variable`: `${name}`, `${name[...]}` and `${name.m}` mean
    /// the variable `$name`.
    fn names_to_variable(&mut self, first: usize) {
        let n = self.toks.len() - first;
        // Puppet's test is on its own LBRACK (a `[` with no whitespace before it); after a
        // keyword this cooker called that `[` a list start.
        let adjacent_list = n > 1
            && self.toks[first + 1].1 == Tok::ListStart
            && self.toks[first + 1].0 == self.toks[first].2;
        let rewrite = n == 1
            || adjacent_list
            || (n > 1 && matches!(self.toks[first + 1].1, Tok::Dot | Tok::LBrack));
        if adjacent_list && self.toks[first].1.keyword_text().is_some() {
            self.toks[first + 1].1 = Tok::LBrack;
        }
        if !rewrite {
            return;
        }
        let name = match &self.toks[first].1 {
            Tok::Name(s) | Tok::Word(s) | Tok::Number(s) => Some(s.clone()),
            t => t.keyword_text().map(str::to_string),
        };
        if let Some(name) = name {
            self.toks[first].1 = Tok::Variable(name);
        }
    }

    /// `@(TAG:syntax/flags)` at `start`.
    fn heredoc(&mut self, start: usize) -> LResult<()> {
        let after_open = start + 2;
        let Some(close) = self.src[after_open..].find(')') else {
            return Err(LexError::new(
                format!(
                    "Unclosed parenthesis after '@(' followed by '{}'",
                    followed_by(&self.src[after_open..])
                ),
                start,
                after_open,
            ));
        };
        let header_end = after_open + close + 1;
        let header = strings::heredoc_header(&self.src[after_open..header_end - 1])
            .map_err(|m| LexError::new(m, start, header_end))?;
        // The body starts on the line after the header, or after the previous heredoc that
        // was opened on the same line.
        let body_start = match self.newline_jump {
            Some(j) => j,
            None => match self.src[header_end..].find('\n') {
                Some(i) => header_end + i + 1,
                None => {
                    return Err(LexError::new(
                        "Heredoc without any following lines of text",
                        start,
                        header_end,
                    ))
                }
            },
        };
        let mut lines: Vec<(usize, &str)> = Vec::new();
        let mut pos = body_start;
        let end_info = loop {
            if pos >= self.src.len() {
                return Err(LexError::new(
                    "Heredoc without end-tagged line",
                    start,
                    header_end,
                ));
            }
            let line_end = self.src[pos..]
                .find('\n')
                .map_or(self.src.len(), |i| pos + i + 1);
            let line = &self.src[pos..line_end];
            if let Some(info) = strings::heredoc_end_line(line, &header.tag) {
                break (info, line_end);
            }
            lines.push((pos, line));
            pos = line_end;
        };
        let ((leading, margin, trim), after_end) = end_info;
        self.newline_jump = Some(after_end);

        // Build the text (margin removed) and a map from text offsets to file offsets.
        let mut text = String::new();
        let mut map: Vec<(usize, usize)> = Vec::with_capacity(lines.len());
        for (line_pos, line) in &lines {
            let strip = if margin && !leading.is_empty() && line.starts_with(leading.as_str()) {
                leading.len()
            } else {
                0
            };
            map.push((text.len(), line_pos + strip));
            text.push_str(&line[strip..]);
        }
        if trim {
            if text.ends_with("\r\n") {
                text.truncate(text.len() - 2);
            } else if text.ends_with('\n') {
                text.truncate(text.len() - 1);
            }
        }
        self.push(start, Tok::Heredoc(header.syntax.clone()), header_end);
        self.enter(start)?;
        let mut sub = Cooker::new(&text, self.depth);
        let result = sub.unquoted(header.escapes, header.interpolate);
        let to_file = |o: usize| -> usize {
            let i = map.partition_point(|(t, _)| *t <= o).saturating_sub(1);
            match map.get(i) {
                Some((t, f)) => f + (o - t),
                None => body_start,
            }
        };
        let base = self.toks.len();
        for (o, w) in sub.warnings {
            self.warnings.push((to_file(o), w));
        }
        for (s, t, e) in sub.toks {
            self.toks.push((to_file(s), t, to_file(e)));
        }
        // An empty heredoc still yields one (empty) string token.
        if self.toks.len() == base {
            self.toks
                .push((body_start, Tok::Str(String::new()), body_start));
        }
        self.leave();
        result.map_err(|e| LexError::new(e.message, to_file(e.start), to_file(e.end)))?;
        self.seek(header_end);
        Ok(())
    }

    /// Lexes the whole source as the text of a heredoc.
    fn unquoted(&mut self, esc: Escapes, interpolate: bool) -> LResult<()> {
        let mut pos = 0;
        let mut seg_start = 0;
        let mut first = true;
        let mut text = String::new();
        loop {
            let (part, stop, at) =
                strings::slurp(&self.src[pos..], esc, false, interpolate, &mut Vec::new());
            text.push_str(&part);
            let at = pos + at;
            match stop {
                Stop::End | Stop::Quote => {
                    let t = std::mem::take(&mut text);
                    let tok = if first { Tok::Str(t) } else { Tok::DqPost(t) };
                    self.push(seg_start, tok, self.src.len());
                    return Ok(());
                }
                Stop::Dollar => {
                    let len = strings::variable_len(&self.src[at + 1..]);
                    if len == 0 {
                        text.push('$');
                        pos = at + 1;
                        continue;
                    }
                    let t = std::mem::take(&mut text);
                    self.push(
                        seg_start,
                        if first { Tok::DqPre(t) } else { Tok::DqMid(t) },
                        at,
                    );
                    first = false;
                    let name = self.src[at + 1..at + 1 + len].to_string();
                    self.push(at, Tok::Variable(name), at + 1 + len);
                    pos = at + 1 + len;
                    seg_start = pos;
                }
                Stop::DollarBrace => {
                    let t = std::mem::take(&mut text);
                    self.push(
                        seg_start,
                        if first { Tok::DqPre(t) } else { Tok::DqMid(t) },
                        at + 2,
                    );
                    first = false;
                    self.seek(at + 2);
                    let close = self.interpolation(at)?;
                    pos = close + 1;
                    seg_start = close + 1;
                }
            }
        }
    }

    // ---- EPP ---------------------------------------------------------------------------

    fn run_epp(&mut self) -> LResult<()> {
        self.push(0, Tok::EppStart, 0);
        self.epp_text(0, false)?;
        while let Some(raw) = self.lex.next() {
            self.cook_raw(raw)?;
        }
        Ok(())
    }

    /// `%>` or `-%>` at `s..e`: ends an EPP tag and continues with template text.
    fn epp_close(&mut self, s: usize, e: usize, trim: bool) -> LResult<()> {
        if self.epp_expr {
            let tok = if trim { Tok::EppEndTrim } else { Tok::EppEnd };
            self.push(s, tok, e);
        }
        self.epp_expr = false;
        self.epp_text(e, trim)
    }

    /// Scans template text from `pos` up to the next tag, pushing `RenderString` for the
    /// text and `RenderExpr` for `<%=`, and moves the raw lexer into the tag.
    fn epp_text(&mut self, mut pos: usize, mut skip_leading: bool) -> LResult<()> {
        let src = self.src;
        let mut text = String::new();
        let start = pos;
        loop {
            if skip_leading {
                // Trim spaces and tabs, then up to one line break, after `-%>` (Puppet's
                // `/^[ \t]*\r?(?:\n|\z)?/`: the spaces go even when no line break follows).
                let rest = &src[pos..];
                pos += rest.len() - rest.trim_start_matches([' ', '\t']).len();
                if src[pos..].starts_with('\r') {
                    pos += 1;
                }
                if src[pos..].starts_with('\n') {
                    pos += 1;
                }
                skip_leading = false;
            }
            let Some(i) = src[pos..].find("<%") else {
                text.push_str(&src[pos..].replace("%%>", "%>"));
                if !text.is_empty() {
                    self.push(start, Tok::RenderString(text), src.len());
                }
                self.seek(src.len());
                return Ok(());
            };
            let tag = pos + i;
            let chunk = &src[pos..tag];
            let rest = &src[tag + 2..];
            if rest.is_empty() {
                // `<%` ending the template (after any `<%%`, as Puppet scans).
                return Err(LexError::new(
                    "Unbalanced embedded expression - opening <% and reaching end of input",
                    src.len(),
                    src.len(),
                ));
            }
            if rest.starts_with('%') {
                // `<%%` is a literal `<%`.
                text.push_str(&chunk.replace("%%>", "%>"));
                text.push_str("<%");
                pos = tag + 3;
                if pos == src.len() {
                    // Puppet's scanner loses the text it had when `<%%` ends the template.
                    self.seek(src.len());
                    return Ok(());
                }
                continue;
            }
            if rest.starts_with('#') {
                // A comment up to the first `%>` not after a `%` (`%%>` does not end it);
                // `<%#-` trims the spaces and tabs before it, `-%>` the line after it.
                text.push_str(&chunk.replace("%%>", "%>"));
                let end = rest
                    .match_indices("%>")
                    .map(|(j, _)| j)
                    .find(|&j| j >= 1 && rest.as_bytes()[j - 1] != b'%');
                let Some(end) = end else {
                    return Err(LexError::new(
                        "Reaching end after opening <%# without seeing %>",
                        tag,
                        tag + 3,
                    ));
                };
                if rest.as_bytes().get(1) == Some(&b'-') {
                    let kept = text.trim_end_matches([' ', '\t']).len();
                    text.truncate(kept);
                }
                let trim = rest[..end].ends_with('-');
                pos = tag + 2 + end + 2;
                skip_leading = trim;
                continue;
            }
            let (expr, trim_left, tag_len) = if rest.starts_with("=") {
                (true, false, 3)
            } else if rest.starts_with('-') {
                (false, true, 3)
            } else {
                (false, false, 2)
            };
            text.push_str(&chunk.replace("%%>", "%>"));
            if trim_left {
                // `<%-` removes the spaces and tabs before it (Puppet's
                // `s.sub!(/[ \t]*<%\z/, '')` on the text since the last tag).
                let kept = text.trim_end_matches([' ', '\t']).len();
                text.truncate(kept);
            }
            if !text.is_empty() {
                self.push(start, Tok::RenderString(std::mem::take(&mut text)), tag);
            }
            if expr {
                self.push(tag, Tok::RenderExpr, tag + tag_len);
                self.epp_expr = true;
            }
            self.seek(tag + tag_len);
            return Ok(());
        }
    }
}

/// The part of a raw bare word Puppet's `PATTERN_BARE_WORD` takes: no segment ends with `-`.
fn bare_word(text: &str) -> &str {
    let b = text.as_bytes();
    let lead = if text.starts_with("::") { 2 } else { 0 };
    let mut end = lead;
    let mut i = lead;
    while i < b.len() {
        if b[i] == b':' {
            if end == lead || b[end - 1] == b'-' {
                break;
            }
            i += 2;
            continue;
        }
        if b[i] != b'-' {
            end = i + 1;
        }
        i += 1;
        if i < b.len() && b[i] == b':' && b[i - 1] == b'-' {
            break;
        }
    }
    &text[..end.max(lead + 1)]
}

/// Whether a bare word is a NAME (every segment `[a-z][A-Za-z0-9_]*`), not a WORD.
fn is_name(text: &str) -> bool {
    // A byte scan (this runs for every bare word; `split("::")` costs a searcher each time).
    let t = text.strip_prefix("::").unwrap_or(text).as_bytes();
    let mut seg_start = true;
    let mut i = 0;
    while i < t.len() {
        if seg_start {
            if !t[i].is_ascii_lowercase() {
                return false;
            }
            seg_start = false;
        } else if t[i] == b':' && t.get(i + 1) == Some(&b':') {
            seg_start = true;
            i += 1;
        } else if !is_word_byte(t[i]) {
            return false;
        }
        i += 1;
    }
    !seg_start
}

/// Puppet's `assert_numeric` for a token the number pattern accepted.
fn assert_numeric(text: &str, s: usize, e: usize) -> Option<LexError> {
    let b = text.as_bytes();
    if b.len() > 1
        && b[0] == b'0'
        && b[1] != b'.'
        && !matches!(b[1], b'x' | b'X')
        && !b[1..].iter().all(|c| (b'0'..=b'7').contains(c))
    {
        return Some(LexError::new(
            format!("Not a valid octal number {text}"),
            s,
            e,
        ));
    }
    None
}

fn number_error(text: &str, s: usize, e: usize) -> LexError {
    let b = text.as_bytes();
    let msg = if text.starts_with("0x") || text.starts_with("0X") {
        format!("Not a valid hex number {text}")
    } else if b.len() > 1 && b[0] == b'0' && b[1] != b'.' {
        format!("Not a valid octal number {text}")
    } else if text.bytes().take_while(u8::is_ascii_digit).count() > 0
        && matches!(
            text.bytes().find(|c| !c.is_ascii_digit()),
            Some(b'e' | b'E' | b'.')
        )
    {
        format!("Not a valid decimal number {text}")
    } else {
        format!("Illegal number '{text}'")
    };
    LexError::new(msg, s, e)
}

/// A regular expression literal at the start of `s` (which starts with `/`): its source
/// (with `\/` unescaped) and length. Puppet's pattern: `/[^/]*/`, extended while the
/// closing slash is escaped.
fn regex_literal(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut i = 1;
    loop {
        let rel = s[i..].find('/')?;
        let close = i + rel;
        // Count the backslashes right before the slash (inside the literal).
        let mut n = 0;
        while close - n > 1 && b[close - n - 1] == b'\\' {
            n += 1;
        }
        if n % 2 == 0 {
            let body = &s[1..close];
            return Some((body.replace("\\/", "/"), close + 1));
        }
        i = close + 1;
    }
}

/// Puppet's `followed_by`: the next five characters, with control characters spelled.
fn followed_by(rest: &str) -> String {
    if rest.is_empty() {
        return "<eof>".into();
    }
    let s: String = rest.chars().take(5).collect();
    format!("{s}...")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        let c = cook(src);
        assert!(c.error.is_none(), "{:?}", c.error);
        c.tokens.into_iter().map(|t| t.1).collect()
    }

    #[test]
    fn brackets_follow_context() {
        assert_eq!(
            kinds("$a[1] [2]"),
            vec![
                Tok::Variable("a".into()),
                Tok::LBrack,
                Tok::Number("1".into()),
                Tok::RBrack,
                Tok::ListStart,
                Tok::Number("2".into()),
                Tok::RBrack
            ]
        );
    }

    #[test]
    fn interpolated_names_become_variables() {
        let t = kinds(r#""a${b}c""#);
        assert_eq!(t[1], Tok::Variable("b".into()));
        assert_eq!(t[2], Tok::DqPost("c".into()));
    }

    #[test]
    fn regex_vs_division() {
        assert_eq!(kinds("$a / 2 / 3")[1], Tok::Div);
        assert_eq!(kinds("=~ /a\\/b/")[1], Tok::Regex("a/b".into()));
    }
}
