//! A small Ruby: the lexer and parser for the expressions and statements that ERB templates in
//! Puppet modules use (`if`/`unless`/`case`, method chains with blocks, literals, operators).
//!
//! The ERB splitter (`erb.rs`) feeds this parser one token stream for the whole template, with
//! `Text(i)` tokens for literal text and `Out` tokens before `<%= %>` expressions, so blocks may
//! span several ERB tags as they do in Ruby's ERB. Anything beyond this subset is an error that
//! names the construct.

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    IVar(String),
    GVar(String),
    Const(String),
    Int(i64),
    Float(f64),
    Str(Vec<StrPart>),
    Sym(String),
    Regex(String),
    Words(Vec<String>),
    Op(&'static str),
    Newline,
    /// Literal template text number `i`.
    Text(usize),
    /// The start of a `<%= %>` expression.
    Out,
    /// The end of a `<%= %>` expression: its value is that of the last statement in it.
    OutEnd,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StrPart {
    Lit(String),
    Code(Vec<Tok>),
}

#[derive(Clone, Debug)]
pub enum Node {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<NodePart>),
    Sym(String),
    Regex(String),
    Array(Vec<Node>),
    Hash(Vec<(Node, Node)>),
    IVar(String),
    GVar(String),
    /// A bare name: a local variable if one is bound, else a call without arguments.
    Name(String),
    Const(String),
    Call {
        recv: Option<Box<Node>>,
        name: String,
        args: Vec<Node>,
        block: Option<Block>,
    },
    Index(Box<Node>, Vec<Node>),
    Not(Box<Node>),
    Neg(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Bin(&'static str, Box<Node>, Box<Node>),
    Range(Box<Node>, Box<Node>, bool),
    If(Box<Node>, Vec<Node>, Vec<Node>),
    Case(Option<Box<Node>>, Vec<(Vec<Node>, Vec<Node>)>, Vec<Node>),
    Assign(String, Box<Node>),
    /// `x[k] = v` on a local or instance variable.
    IndexAssign(Box<Node>, Vec<Node>, Box<Node>),
    IVarAssign(String, Box<Node>),
    OpAssign(String, &'static str, Box<Node>),
    Defined(Box<Node>),
    Seq(Vec<Node>),
    Text(usize),
    Out(Box<Node>),
    Next(Option<Box<Node>>),
    /// `begin body rescue [Class] [=> e] handler ensure always end`.
    Begin {
        body: Vec<Node>,
        rescue: Option<(Option<String>, Vec<Node>)>,
        ensure: Vec<Node>,
    },
    /// `def name(params) body end`: a method of the template.
    Def(String, std::sync::Arc<Block>),
}

#[derive(Clone, Debug)]
pub enum NodePart {
    Lit(String),
    Code(Node),
}

#[derive(Clone, Debug)]
pub struct Block {
    pub params: Vec<String>,
    pub body: Vec<Node>,
    /// `&:name` shorthand.
    pub sym: Option<String>,
}

// ---- lexer ---------------------------------------------------------------------------------------

const OPS: &[&str] = &[
    "**=", "<=>", "===", "...", "||=", "&&=", "<<=", "==", "!=", ">=", "<=", "&&", "||", "=~",
    "!~", "..", "::", "+=", "-=", "*=", "/=", "<<", ">>", "=>", "->", "&.", "+", "-", "*", "/",
    "%", "=", "<", ">", "!", "&", "|", "^", "~", "?", ":", ",", ".", "(", ")", "[", "]", "{", "}",
    ";",
];

fn value_end(t: Option<&Tok>) -> bool {
    match t {
        Some(Tok::Ident(n)) => !matches!(
            n.as_str(),
            "if" | "unless"
                | "elsif"
                | "and"
                | "or"
                | "not"
                | "when"
                | "return"
                | "then"
                | "else"
                | "do"
                | "while"
                | "until"
                | "case"
                | "in"
        ),
        Some(
            Tok::IVar(_)
            | Tok::GVar(_)
            | Tok::Const(_)
            | Tok::Int(_)
            | Tok::Float(_)
            | Tok::Str(_)
            | Tok::Sym(_)
            | Tok::Regex(_)
            | Tok::Words(_),
        ) => true,
        Some(Tok::Op(o)) => matches!(*o, ")" | "]" | "}"),
        _ => false,
    }
}

pub fn lex(src: &str, out: &mut Vec<Tok>) -> Result<(), String> {
    let b: Vec<char> = src.chars().collect();
    lex_chars(&b, out, 0)
}

/// Lexes `b`, the code of a tag or of a `#{}` nested `depth` strings deep (bounded as the
/// parser's nesting is: each level is lexed in place, not copied).
fn lex_chars(b: &[char], out: &mut Vec<Tok>, depth: usize) -> Result<(), String> {
    if depth > MAX_NESTING {
        return Err(too_deep());
    }
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            out.push(Tok::Newline);
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '\\' && b.get(i + 1) == Some(&'\n') {
            i += 2;
            continue;
        }
        if c == '#' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '_') {
                i += 1;
            }
            if i + 1 < b.len() && b[i] == '.' && b[i + 1].is_ascii_digit() {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let t: String = b[s..i].iter().filter(|c| **c != '_').collect();
                out.push(Tok::Float(
                    t.parse().map_err(|_| format!("bad number {t}"))?,
                ));
            } else {
                let t: String = b[s..i].iter().filter(|c| **c != '_').collect();
                out.push(Tok::Int(t.parse().map_err(|_| format!("bad number {t}"))?));
            }
            continue;
        }
        if c == '@' || c == '$' || c.is_alphabetic() || c == '_' {
            let s = i;
            i += 1;
            if c == '@' && b.get(i) == Some(&'@') {
                return Err("class variables (`@@`)".into());
            }
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            if c != '@'
                && c != '$'
                && i < b.len()
                && (b[i] == '?' || b[i] == '!')
                && b.get(i + 1) != Some(&'=')
            {
                i += 1;
            }
            let word: String = b[s..i].iter().collect();
            // `key: value` in a hash literal.
            if c != '@'
                && c != '$'
                && b.get(i) == Some(&':')
                && b.get(i + 1) != Some(&':')
                && matches!(out.last(), Some(Tok::Op("{" | ",")) | Some(Tok::Newline))
            {
                out.push(Tok::Sym(word));
                out.push(Tok::Op("=>"));
                i += 1;
                continue;
            }
            out.push(if c == '@' {
                Tok::IVar(word[1..].to_string())
            } else if c == '$' {
                Tok::GVar(word[1..].to_string())
            } else if c.is_uppercase() {
                Tok::Const(word)
            } else {
                Tok::Ident(word)
            });
            continue;
        }
        if c == '\'' || c == '"' {
            let (parts, n) = lex_string(b, i + 1, c, depth)?;
            out.push(Tok::Str(parts));
            i = n;
            continue;
        }
        if c == ':' && b.get(i + 1).is_some_and(|n| n.is_alphabetic() || *n == '_') {
            let s = i + 1;
            i += 1;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_' || b[i] == '?') {
                i += 1;
            }
            out.push(Tok::Sym(b[s..i].iter().collect()));
            continue;
        }
        if c == ':' && matches!(b.get(i + 1), Some('"') | Some('\'')) {
            let (parts, n) = lex_string(b, i + 2, b[i + 1], depth)?;
            let name = parts
                .iter()
                .map(|p| match p {
                    StrPart::Lit(s) => s.clone(),
                    StrPart::Code(_) => String::new(),
                })
                .collect();
            out.push(Tok::Sym(name));
            i = n;
            continue;
        }
        // %(..), %Q(..) and %q(..) strings (not `a % b`).
        if c == '%' && !value_end(out.last()) {
            let (interp, at) = match b.get(i + 1) {
                Some('Q') => (true, i + 2),
                Some('q') => (false, i + 2),
                Some(o) if "([{<|!/^".contains(*o) => (true, i + 1),
                _ => (true, usize::MAX),
            };
            if let Some(&o) = b.get(at) {
                let close = match o {
                    '(' => ')',
                    '[' => ']',
                    '{' => '}',
                    '<' => '>',
                    o => o,
                };
                let open = (close != o).then_some(o);
                let (parts, n) = lex_delimited(b, at + 1, open, close, interp, depth)?;
                out.push(Tok::Str(parts));
                i = n;
                continue;
            }
        }
        if c == '%' && matches!(b.get(i + 1), Some('w') | Some('W')) {
            let open = b.get(i + 2).copied().unwrap_or(' ');
            let close = match open {
                '[' => ']',
                '(' => ')',
                '{' => '}',
                '<' => '>',
                o => o,
            };
            let mut j = i + 3;
            let s = j;
            while j < b.len() && b[j] != close {
                j += 1;
            }
            let words: String = b[s..j.min(b.len())].iter().collect();
            out.push(Tok::Words(
                words.split_whitespace().map(String::from).collect(),
            ));
            i = j + 1;
            continue;
        }
        let regex_ok = !value_end(out.last())
            || (matches!(out.last(), Some(Tok::Ident(_)))
                && i > 0
                && b[i - 1] == ' '
                && b.get(i + 1).is_some_and(|n| *n != ' '));
        if c == '/' && regex_ok {
            let mut j = i + 1;
            let mut pat = String::new();
            while j < b.len() && b[j] != '/' {
                if b[j] == '\\' && j + 1 < b.len() {
                    pat.push(b[j]);
                    pat.push(b[j + 1]);
                    j += 2;
                    continue;
                }
                pat.push(b[j]);
                j += 1;
            }
            j += 1;
            let mut flags = String::new();
            while j < b.len() && matches!(b[j], 'i' | 'm' | 'x' | 'o') {
                flags.push(b[j]);
                j += 1;
            }
            if flags.contains('i') {
                pat = format!("(?i){pat}");
            }
            out.push(Tok::Regex(pat));
            i = j;
            continue;
        }
        let rest: String = b[i..(i + 3).min(b.len())].iter().collect();
        let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
            return Err(format!("the character `{c}`"));
        };
        i += op.chars().count();
        out.push(Tok::Op(op));
    }
    Ok(())
}

fn lex_string(
    b: &[char],
    i: usize,
    q: char,
    nesting: usize,
) -> Result<(Vec<StrPart>, usize), String> {
    lex_delimited(b, i, None, q, q != '\'', nesting)
}

/// A string up to `close` (nested `open`/`close` pairs kept, as in `%(a (b) c)`), with
/// `#{}` interpolation and double-quote escapes when `interp`.
fn lex_delimited(
    b: &[char],
    mut i: usize,
    open: Option<char>,
    close: char,
    interp: bool,
    nesting: usize,
) -> Result<(Vec<StrPart>, usize), String> {
    let mut parts = vec![];
    let mut cur = String::new();
    let mut depth = 0usize;
    while i < b.len() && (b[i] != close || depth > 0) {
        let c = b[i];
        if Some(c) == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
        }
        if c == '\\' && i + 1 < b.len() {
            let n = b[i + 1];
            if !interp {
                if n == close || n == '\\' {
                    cur.push(n);
                } else {
                    cur.push('\\');
                    cur.push(n);
                }
            } else {
                match n {
                    'n' => cur.push('\n'),
                    't' => cur.push('\t'),
                    'r' => cur.push('\r'),
                    's' => cur.push(' '),
                    '0' => cur.push('\0'),
                    'e' => cur.push('\x1b'),
                    other => cur.push(other),
                }
            }
            i += 2;
            continue;
        }
        if interp && c == '#' && b.get(i + 1) == Some(&'{') {
            let mut depth = 1;
            let mut j = i + 2;
            while j < b.len() && depth > 0 {
                match b[j] {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            let mut toks = vec![];
            lex_chars(&b[i + 2..j - 1], &mut toks, nesting + 1)?;
            if !cur.is_empty() {
                parts.push(StrPart::Lit(std::mem::take(&mut cur)));
            }
            parts.push(StrPart::Code(toks));
            i = j;
            continue;
        }
        cur.push(c);
        i += 1;
    }
    if i >= b.len() {
        return Err("an unterminated string".into());
    }
    if !cur.is_empty() || parts.is_empty() {
        parts.push(StrPart::Lit(cur));
    }
    Ok((parts, i + 1))
}

// ---- parser --------------------------------------------------------------------------------------

pub struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    locals: Vec<std::collections::HashSet<String>>,
    /// Nesting of the statements and expressions being parsed (see [`MAX_NESTING`]).
    depth: usize,
    /// Links of the operator, call and `elsif` chains being parsed (see [`MAX_CHAIN`]).
    chain: usize,
}

type PR<T> = Result<T, String>;

/// How deep a template's code may nest (brackets, blocks, unary operators), as a manifest's
/// expressions: deeper code is refused, not parsed until the stack overflows. The message
/// starts as the compile's other bounds do, so Ruby is not asked to render it either.
const MAX_NESTING: usize = 200;

/// How many links the chains being parsed may have together (`a + b + ...`, `x.m.m`,
/// `a[0][0]`, `c ? x : c ? ...`, `elsif`): each nests the tree one level deeper without a
/// bracket. Ruby 3.1 itself fails at some thousands ("stack level too deep").
const MAX_CHAIN: usize = 1_000;

fn too_deep() -> String {
    format!("evaluation stopped: code nested more than {MAX_NESTING} levels deep is not supported")
}

fn describe(t: Option<&Tok>) -> String {
    match t {
        None => "end of template".into(),
        Some(Tok::Ident(n)) => format!("`{n}`"),
        Some(Tok::Op(o)) => format!("`{o}`"),
        Some(Tok::Newline) => "end of line".into(),
        Some(Tok::OutEnd) => "the end of the `<%= %>` tag".into(),
        Some(Tok::Text(_)) => "template text".into(),
        Some(other) => format!("{other:?}"),
    }
}

impl Parser {
    pub fn new(toks: Vec<Tok>) -> Parser {
        Parser {
            toks,
            pos: 0,
            locals: vec![Default::default()],
            depth: 0,
            chain: 0,
        }
    }

    /// Runs `f` one nesting level deeper, refused past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PR<T>) -> PR<T> {
        if self.depth >= MAX_NESTING {
            return Err(too_deep());
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn stmt(&mut self) -> PR<Node> {
        self.nested(Parser::stmt_at)
    }

    /// Runs `f`, which parses a chain (calling [`Parser::link`] for each link); its links
    /// count for what it parses, not after it.
    fn chained<T>(&mut self, f: impl FnOnce(&mut Self) -> PR<T>) -> PR<T> {
        let base = self.chain;
        let r = f(self);
        self.chain = base;
        r
    }

    /// One more link of the chain being parsed, refused past [`MAX_CHAIN`].
    fn link(&mut self) -> PR<()> {
        self.chain += 1;
        if self.chain > MAX_CHAIN {
            return Err(format!(
                "evaluation stopped: chains of more than {MAX_CHAIN} operators, calls or branches are not supported"
            ));
        }
        Ok(())
    }

    pub fn expr(&mut self) -> PR<Node> {
        self.nested(Parser::expr_at)
    }

    fn unary(&mut self) -> PR<Node> {
        self.nested(Parser::unary_at)
    }

    fn not_expr(&mut self) -> PR<Node> {
        self.nested(Parser::not_expr_at)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn is_op(&self, o: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(x)) if *x == o)
    }

    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(x)) if x == k)
    }

    fn eat_op(&mut self, o: &str) -> bool {
        if self.is_op(o) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, k: &str) -> bool {
        if self.is_kw(k) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_op(&mut self, o: &str) -> PR<()> {
        if self.eat_op(o) {
            Ok(())
        } else {
            Err(format!("expected `{o}`, found {}", describe(self.peek())))
        }
    }

    fn expect_kw(&mut self, k: &str) -> PR<()> {
        self.skip_terms();
        if self.eat_kw(k) {
            Ok(())
        } else {
            Err(format!("expected `{k}`, found {}", describe(self.peek())))
        }
    }

    fn skip_nl(&mut self) {
        while matches!(self.peek(), Some(Tok::Newline)) {
            self.pos += 1;
        }
    }

    fn skip_terms(&mut self) {
        while matches!(self.peek(), Some(Tok::Newline) | Some(Tok::Op(";"))) {
            self.pos += 1;
        }
    }

    fn is_local(&self, n: &str) -> bool {
        self.locals.iter().any(|s| s.contains(n))
    }

    pub fn program(&mut self) -> PR<Vec<Node>> {
        let body = self.stmts(&[])?;
        if self.pos < self.toks.len() {
            return Err(format!("unexpected {}", describe(self.peek())));
        }
        Ok(body)
    }

    /// Statements up to one of the terminating keywords (not consumed).
    fn stmts(&mut self, until: &[&str]) -> PR<Vec<Node>> {
        let mut out = vec![];
        loop {
            self.skip_terms();
            match self.peek() {
                None => break,
                Some(Tok::Ident(k)) if until.contains(&k.as_str()) => break,
                Some(Tok::Op("}")) if until.contains(&"}") => break,
                _ => {}
            }
            out.push(self.stmt()?);
        }
        Ok(out)
    }

    fn stmt_at(&mut self) -> PR<Node> {
        let mut n = match self.peek() {
            Some(Tok::Text(i)) => {
                let i = *i;
                self.pos += 1;
                return Ok(Node::Text(i));
            }
            Some(Tok::Out) => {
                // `<%= a; b %>` is Ruby's `(a; b).to_s`: every statement runs, the last one's
                // value is written (modifiers inside the tag belong to its statements).
                self.pos += 1;
                let mut body = vec![];
                loop {
                    self.skip_terms();
                    match self.peek() {
                        Some(Tok::OutEnd) => break,
                        None => return Err("a `<%=` tag without its end".into()),
                        _ => body.push(self.stmt()?),
                    }
                }
                self.pos += 1;
                let value = match body.len() {
                    1 => body.pop().expect("one statement"),
                    _ => Node::Seq(body),
                };
                return Ok(Node::Out(Box::new(value)));
            }
            _ => self.expr_stmt()?,
        };
        // Modifiers: `x if c`, `x unless c`.
        loop {
            if self.eat_kw("if") {
                let c = self.expr_stmt()?;
                n = Node::If(Box::new(c), vec![n], vec![]);
            } else if self.eat_kw("unless") {
                let c = self.expr_stmt()?;
                n = Node::If(Box::new(Node::Not(Box::new(c))), vec![n], vec![]);
            } else if self.is_kw("while") || self.is_kw("until") {
                return Err("`while`/`until` loops".into());
            } else {
                return Ok(n);
            }
        }
    }

    /// `not`, `and`, `or` (lowest precedence).
    fn expr_stmt(&mut self) -> PR<Node> {
        let mut l = self.not_expr()?;
        loop {
            if self.eat_kw("and") {
                self.skip_nl();
                let r = self.not_expr()?;
                l = Node::And(Box::new(l), Box::new(r));
            } else if self.eat_kw("or") {
                self.skip_nl();
                let r = self.not_expr()?;
                l = Node::Or(Box::new(l), Box::new(r));
            } else {
                return Ok(l);
            }
        }
    }

    fn not_expr_at(&mut self) -> PR<Node> {
        if self.eat_kw("not") {
            return Ok(Node::Not(Box::new(self.not_expr()?)));
        }
        self.expr()
    }

    fn expr_at(&mut self) -> PR<Node> {
        // Assignment.
        if let (Some(Tok::Ident(n)), Some(Tok::Op(op))) =
            (self.toks.get(self.pos), self.toks.get(self.pos + 1))
        {
            let (n, op) = (n.clone(), *op);
            if matches!(op, "=" | "||=" | "&&=" | "+=" | "-=" | "<<=" | "*=") {
                self.pos += 2;
                self.skip_nl();
                self.locals.last_mut().map(|s| s.insert(n.clone()));
                let v = self.expr()?;
                return Ok(if op == "=" {
                    Node::Assign(n, Box::new(v))
                } else {
                    Node::OpAssign(n, op, Box::new(v))
                });
            }
        }
        if let (Some(Tok::IVar(n)), Some(Tok::Op("="))) =
            (self.toks.get(self.pos), self.toks.get(self.pos + 1))
        {
            let n = n.clone();
            self.pos += 2;
            let v = self.expr()?;
            return Ok(Node::IVarAssign(n, Box::new(v)));
        }
        let lhs = self.ternary()?;
        if let Node::Index(target, keys) = &lhs {
            if self.eat_op("=") {
                self.skip_nl();
                let v = self.expr()?;
                return Ok(Node::IndexAssign(target.clone(), keys.clone(), Box::new(v)));
            }
        }
        Ok(lhs)
    }

    fn ternary(&mut self) -> PR<Node> {
        self.chained(|p| {
            let c = p.range()?;
            if p.eat_op("?") {
                p.link()?;
                p.skip_nl();
                let a = p.ternary()?;
                p.skip_nl();
                p.expect_op(":")?;
                p.skip_nl();
                let b = p.ternary()?;
                return Ok(Node::If(Box::new(c), vec![a], vec![b]));
            }
            Ok(c)
        })
    }

    fn range(&mut self) -> PR<Node> {
        let l = self.oror()?;
        if self.eat_op("..") {
            let r = self.oror()?;
            return Ok(Node::Range(Box::new(l), Box::new(r), false));
        }
        if self.eat_op("...") {
            let r = self.oror()?;
            return Ok(Node::Range(Box::new(l), Box::new(r), true));
        }
        Ok(l)
    }

    fn oror(&mut self) -> PR<Node> {
        self.logical("||", Parser::andand, Node::Or)
    }

    fn andand(&mut self) -> PR<Node> {
        self.logical("&&", Parser::equality, Node::And)
    }

    /// `a || b || ...` or `a && b && ...`: a chain of `op` over what `next` parses.
    fn logical(
        &mut self,
        op: &str,
        next: fn(&mut Parser) -> PR<Node>,
        make: fn(Box<Node>, Box<Node>) -> Node,
    ) -> PR<Node> {
        self.chained(|p| {
            let mut l = next(p)?;
            while p.eat_op(op) {
                p.link()?;
                p.skip_nl();
                let r = next(p)?;
                l = make(Box::new(l), Box::new(r));
            }
            Ok(l)
        })
    }

    fn binary_level(
        &mut self,
        ops: &[&'static str],
        next: fn(&mut Parser) -> PR<Node>,
    ) -> PR<Node> {
        self.chained(|p| {
            let mut l = next(p)?;
            loop {
                let Some(Tok::Op(o)) = p.peek() else {
                    return Ok(l);
                };
                let Some(op) = ops.iter().find(|x| **x == *o) else {
                    return Ok(l);
                };
                p.pos += 1;
                p.link()?;
                p.skip_nl();
                let r = next(p)?;
                l = Node::Bin(op, Box::new(l), Box::new(r));
            }
        })
    }

    fn equality(&mut self) -> PR<Node> {
        self.binary_level(&["==", "!=", "=~", "!~", "===", "<=>"], Parser::comparison)
    }

    fn comparison(&mut self) -> PR<Node> {
        self.binary_level(&["<", ">", "<=", ">="], Parser::bitor)
    }

    fn bitor(&mut self) -> PR<Node> {
        self.binary_level(&["|", "&"], Parser::shift)
    }

    fn shift(&mut self) -> PR<Node> {
        self.binary_level(&["<<"], Parser::additive)
    }

    fn additive(&mut self) -> PR<Node> {
        self.binary_level(&["+", "-"], Parser::multiplicative)
    }

    fn multiplicative(&mut self) -> PR<Node> {
        self.binary_level(&["*", "/", "%"], Parser::unary)
    }

    fn unary_at(&mut self) -> PR<Node> {
        if self.eat_op("!") {
            return Ok(Node::Not(Box::new(self.unary()?)));
        }
        if self.eat_op("-") {
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        if self.eat_op("&") {
            return Err("block-pass arguments other than `&:name`".into());
        }
        self.postfix()
    }

    fn call_args(&mut self, close: &str) -> PR<(Vec<Node>, Option<Block>)> {
        let mut args = vec![];
        let mut block = None;
        let mut pairs: Vec<(Node, Node)> = vec![];
        self.skip_nl();
        while !self.is_op(close) {
            if self.eat_op("&") {
                match self.next() {
                    Some(Tok::Sym(s)) => {
                        block = Some(Block {
                            params: vec![],
                            body: vec![],
                            sym: Some(s),
                        })
                    }
                    t => return Err(format!("block argument {}", describe(t.as_ref()))),
                }
            } else {
                let e = self.expr()?;
                if self.eat_op("=>") {
                    self.skip_nl();
                    let v = self.expr()?;
                    pairs.push((e, v));
                } else {
                    args.push(e);
                }
            }
            self.skip_nl();
            if !self.eat_op(",") {
                break;
            }
            self.skip_nl();
        }
        self.expect_op(close)?;
        if !pairs.is_empty() {
            args.push(Node::Hash(pairs));
        }
        Ok((args, block))
    }

    fn block(&mut self) -> PR<Option<Block>> {
        let close = if self.eat_kw("do") {
            "end"
        } else if self.eat_op("{") {
            "}"
        } else {
            return Ok(None);
        };
        self.skip_nl();
        let mut params = vec![];
        if self.eat_op("|") {
            while !self.eat_op("|") {
                match self.next() {
                    Some(Tok::Ident(n)) => params.push(n),
                    Some(Tok::Op(",")) | Some(Tok::Op("(")) | Some(Tok::Op(")")) => {}
                    t => return Err(format!("block parameter {}", describe(t.as_ref()))),
                }
            }
        }
        self.locals.push(params.iter().cloned().collect());
        let body = self.stmts(&[close])?;
        self.locals.pop();
        if close == "end" {
            self.expect_kw("end")?;
        } else {
            self.skip_terms();
            self.expect_op("}")?;
        }
        Ok(Some(Block {
            params,
            body,
            sym: None,
        }))
    }

    fn postfix(&mut self) -> PR<Node> {
        self.chained(Parser::postfix_chain)
    }

    fn postfix_chain(&mut self) -> PR<Node> {
        let mut n = self.primary()?;
        loop {
            // A leading `.` on the next line continues the chain.
            let save = self.pos;
            self.skip_nl();
            if self.eat_op(".") || self.eat_op("&.") {
                self.link()?;
                self.skip_nl();
                let name = match self.next() {
                    Some(Tok::Ident(n)) | Some(Tok::Const(n)) => n,
                    t => return Err(format!("method name {}", describe(t.as_ref()))),
                };
                let mut args = vec![];
                let mut block = None;
                if self.is_op("(")
                    && !matches!(self.toks.get(self.pos.wrapping_sub(1)), Some(Tok::Newline))
                {
                    self.pos += 1;
                    let (a, b) = self.call_args(")")?;
                    args = a;
                    block = b;
                } else if self.command_arg_follows() {
                    args = self.command_args()?;
                }
                if block.is_none() {
                    block = self.block()?;
                }
                n = Node::Call {
                    recv: Some(Box::new(n)),
                    name,
                    args,
                    block,
                };
                continue;
            }
            self.pos = save;
            if self.is_op("[") && !self.space_before() {
                self.pos += 1;
                self.link()?;
                let (args, _) = self.call_args("]")?;
                n = Node::Index(Box::new(n), args);
                continue;
            }
            if self.eat_op("::") {
                match self.next() {
                    Some(Tok::Const(c)) => {
                        n = Node::Const(format!("{}::{c}", const_name(&n)));
                        continue;
                    }
                    t => return Err(format!("`::` followed by {}", describe(t.as_ref()))),
                }
            }
            return Ok(n);
        }
    }

    /// Whether `[` follows without whitespace (indexing) — the lexer drops spaces, so indexing
    /// is assumed unless the previous token ends a command name.
    fn space_before(&self) -> bool {
        false
    }

    fn command_arg_follows(&self) -> bool {
        matches!(
            self.peek(),
            Some(Tok::Str(_))
                | Some(Tok::IVar(_))
                | Some(Tok::Sym(_))
                | Some(Tok::Int(_))
                // `x.is_a? String and y` (apache's `_wsgi.erb`)
                | Some(Tok::Const(_))
        )
    }

    fn command_args(&mut self) -> PR<Vec<Node>> {
        let mut args = vec![self.ternary()?];
        while self.eat_op(",") {
            self.skip_nl();
            args.push(self.ternary()?);
        }
        Ok(args)
    }

    fn primary(&mut self) -> PR<Node> {
        let t = self.next();
        Ok(match t {
            Some(Tok::Int(i)) => Node::Int(i),
            Some(Tok::Float(f)) => Node::Float(f),
            Some(Tok::Sym(s)) => Node::Sym(s),
            Some(Tok::Regex(r)) => Node::Regex(r),
            Some(Tok::Words(w)) => Node::Array(
                w.into_iter()
                    .map(|s| Node::Str(vec![NodePart::Lit(s)]))
                    .collect(),
            ),
            Some(Tok::Str(parts)) => {
                let mut out = vec![];
                for p in parts {
                    match p {
                        StrPart::Lit(s) => out.push(NodePart::Lit(s)),
                        StrPart::Code(toks) => {
                            let mut sub = Parser::new(toks);
                            sub.locals = self.locals.clone();
                            let body = sub.program()?;
                            out.push(NodePart::Code(Node::Seq(body)));
                        }
                    }
                }
                // Adjacent literals concatenate: "a" "b".
                while let Some(Tok::Str(more)) = self.peek().cloned() {
                    self.pos += 1;
                    for p in more {
                        if let StrPart::Lit(s) = p {
                            out.push(NodePart::Lit(s));
                        }
                    }
                }
                Node::Str(out)
            }
            Some(Tok::IVar(n)) => Node::IVar(n),
            Some(Tok::GVar(n)) => Node::GVar(n),
            Some(Tok::Const(c)) => {
                if self.is_op("(") {
                    self.pos += 1;
                    let (args, _) = self.call_args(")")?;
                    Node::Call {
                        recv: None,
                        name: c,
                        args,
                        block: None,
                    }
                } else {
                    Node::Const(c)
                }
            }
            Some(Tok::Op("(")) => {
                self.skip_terms();
                let mut body = vec![self.stmt()?];
                self.skip_terms();
                while !self.is_op(")") {
                    body.push(self.stmt()?);
                    self.skip_terms();
                }
                self.expect_op(")")?;
                if body.len() == 1 {
                    body.pop().unwrap_or(Node::Nil)
                } else {
                    Node::Seq(body)
                }
            }
            Some(Tok::Op("[")) => {
                let (items, _) = self.call_args("]")?;
                Node::Array(items)
            }
            Some(Tok::Op("{")) => {
                let mut pairs = vec![];
                self.skip_nl();
                while !self.is_op("}") {
                    let k = self.expr()?;
                    self.skip_nl();
                    self.expect_op("=>")?;
                    self.skip_nl();
                    let v = self.expr()?;
                    pairs.push((k, v));
                    self.skip_nl();
                    if !self.eat_op(",") {
                        break;
                    }
                    self.skip_nl();
                }
                self.expect_op("}")?;
                Node::Hash(pairs)
            }
            Some(Tok::Op("::")) => match self.next() {
                Some(Tok::Const(c)) => Node::Const(c),
                t => return Err(format!("`::` followed by {}", describe(t.as_ref()))),
            },
            Some(Tok::Ident(k)) => return self.keyword_or_name(k),
            t => return Err(format!("unexpected {}", describe(t.as_ref()))),
        })
    }

    fn keyword_or_name(&mut self, k: String) -> PR<Node> {
        Ok(match k.as_str() {
            "nil" => Node::Nil,
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            "self" => Node::Name("self".into()),
            "if" | "unless" => {
                let c = self.expr_stmt()?;
                self.eat_kw("then");
                let body = self.stmts(&["elsif", "else", "end"])?;
                let els = self.if_tail()?;
                if k == "if" {
                    Node::If(Box::new(c), body, els)
                } else {
                    Node::If(Box::new(Node::Not(Box::new(c))), body, els)
                }
            }
            "case" => {
                let subject = if matches!(self.peek(), Some(Tok::Newline)) {
                    None
                } else {
                    Some(Box::new(self.expr_stmt()?))
                };
                self.skip_terms();
                let mut whens = vec![];
                let mut els = vec![];
                loop {
                    self.skip_terms();
                    if self.eat_kw("when") {
                        let mut conds = vec![self.ternary()?];
                        while self.eat_op(",") {
                            self.skip_nl();
                            conds.push(self.ternary()?);
                        }
                        self.eat_kw("then");
                        let body = self.stmts(&["when", "else", "end"])?;
                        whens.push((conds, body));
                    } else if self.eat_kw("else") {
                        els = self.stmts(&["end"])?;
                    } else {
                        self.expect_kw("end")?;
                        break;
                    }
                }
                Node::Case(subject, whens, els)
            }
            "defined?" => {
                let paren = self.eat_op("(");
                let e = self.expr()?;
                if paren {
                    self.expect_op(")")?;
                }
                Node::Defined(Box::new(e))
            }
            "next" => {
                if matches!(self.peek(), Some(Tok::Newline) | None | Some(Tok::Text(_)))
                    || self.is_kw("end")
                    || self.is_kw("if")
                    || self.is_kw("unless")
                {
                    Node::Next(None)
                } else {
                    Node::Next(Some(Box::new(self.expr()?)))
                }
            }
            "def" => {
                let name = match self.next() {
                    Some(Tok::Ident(n)) => n,
                    t => return Err(format!("a method name {}", describe(t.as_ref()))),
                };
                let mut params = vec![];
                let parens = self.eat_op("(");
                loop {
                    match self.peek() {
                        Some(Tok::Ident(n)) => {
                            params.push(n.clone());
                            self.pos += 1;
                        }
                        Some(Tok::Op(",")) => self.pos += 1,
                        Some(Tok::Op(")")) if parens => {
                            self.pos += 1;
                            break;
                        }
                        Some(Tok::Newline) | Some(Tok::Op(";")) if !parens => break,
                        t => return Err(format!("method parameter {}", describe(t))),
                    }
                }
                // A method sees only its parameters, not the template's locals.
                let outer =
                    std::mem::replace(&mut self.locals, vec![params.iter().cloned().collect()]);
                let body = self.stmts(&["end"]);
                self.locals = outer;
                let body = body?;
                self.expect_kw("end")?;
                Node::Def(
                    name,
                    std::sync::Arc::new(Block {
                        params,
                        body,
                        sym: None,
                    }),
                )
            }
            "begin" => {
                let body = self.stmts(&["rescue", "ensure", "end"])?;
                let rescue = if self.eat_kw("rescue") {
                    // Exception classes are not told apart: any error is rescued.
                    while let Some(Tok::Const(_)) | Some(Tok::Op(",")) | Some(Tok::Op("::")) =
                        self.peek()
                    {
                        self.pos += 1;
                    }
                    let var = if self.eat_op("=>") {
                        match self.next() {
                            Some(Tok::Ident(n)) => {
                                self.locals.last_mut().map(|s| s.insert(n.clone()));
                                Some(n)
                            }
                            t => return Err(format!("a rescue variable {}", describe(t.as_ref()))),
                        }
                    } else {
                        None
                    };
                    Some((var, self.stmts(&["ensure", "end"])?))
                } else {
                    None
                };
                let ensure = if self.eat_kw("ensure") {
                    self.stmts(&["end"])?
                } else {
                    vec![]
                };
                self.expect_kw("end")?;
                Node::Begin {
                    body,
                    rescue,
                    ensure,
                }
            }
            "while" | "until" | "for" | "class" | "module" | "yield" | "rescue" | "return"
            | "break" | "redo" | "retry" | "lambda" | "proc" => return Err(format!("`{k}`")),
            _ => {
                if self.is_local(&k) && !self.is_op("(") {
                    return Ok(Node::Name(k));
                }
                let mut args = vec![];
                let mut block = None;
                if self.is_op("(") {
                    self.pos += 1;
                    let (a, b) = self.call_args(")")?;
                    args = a;
                    block = b;
                } else if self.command_arg_follows() {
                    args = self.command_args()?;
                } else if block.is_none() && args.is_empty() && !self.is_kw("do") {
                    return Ok(Node::Name(k));
                }
                if block.is_none() {
                    block = self.block()?;
                }
                Node::Call {
                    recv: None,
                    name: k,
                    args,
                    block,
                }
            }
        })
    }

    fn if_tail(&mut self) -> PR<Vec<Node>> {
        self.chained(Parser::if_tail_chain)
    }

    fn if_tail_chain(&mut self) -> PR<Vec<Node>> {
        self.skip_terms();
        if self.eat_kw("elsif") {
            self.link()?;
            let c = self.expr_stmt()?;
            self.eat_kw("then");
            let body = self.stmts(&["elsif", "else", "end"])?;
            let els = self.if_tail_chain()?;
            return Ok(vec![Node::If(Box::new(c), body, els)]);
        }
        if self.eat_kw("else") {
            let body = self.stmts(&["end"])?;
            self.expect_kw("end")?;
            return Ok(body);
        }
        self.expect_kw("end")?;
        Ok(vec![])
    }
}

fn const_name(n: &Node) -> String {
    match n {
        Node::Const(c) => c.clone(),
        _ => String::new(),
    }
}
