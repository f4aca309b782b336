//! Scanning of quoted text: single-quoted strings, the literal parts of double-quoted
//! strings and heredocs, escape sequences, and heredoc headers and bodies.
//!
//! These are plain functions over `&str` that return what they found and how far they
//! read; the cooker decides what tokens to make of it.

/// Which escapes a piece of text understands (Puppet's `DQ_ESCAPES`, heredoc flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Escapes {
    pub backslash: bool,
    pub dollar: bool,
    pub quotes: bool,
    pub r: bool,
    pub n: bool,
    pub t: bool,
    pub s: bool,
    pub u: bool,
    pub newline: bool,
}

impl Escapes {
    pub const DQ: Escapes = Escapes {
        backslash: true,
        dollar: true,
        quotes: true,
        r: true,
        n: true,
        t: true,
        s: true,
        u: true,
        newline: true,
    };
    pub const NONE: Escapes = Escapes {
        backslash: false,
        dollar: false,
        quotes: false,
        r: false,
        n: false,
        t: false,
        s: false,
        u: false,
        newline: false,
    };

    /// Heredoc flags after `/` (an empty flag list means all of `trnsuL$`).
    pub fn from_heredoc_flags(flags: &str) -> Result<Escapes, String> {
        let flags = if flags.is_empty() { "trnsuL$" } else { flags };
        let mut seen = Vec::new();
        let mut e = Escapes {
            backslash: true,
            ..Escapes::NONE
        };
        for c in flags.chars() {
            if seen.contains(&c) {
                let all: Vec<String> = flags.chars().map(|c| c.to_string()).collect();
                return Err(format!(
                    "An escape char for @() may only appear once. Got '{}'",
                    all.join(", ")
                ));
            }
            seen.push(c);
            match c {
                't' => e.t = true,
                'r' => e.r = true,
                'n' => e.n = true,
                's' => e.s = true,
                'u' => e.u = true,
                '$' => e.dollar = true,
                'L' => e.newline = true,
                _ => {
                    return Err(format!(
                        "Invalid heredoc escape char. Only t, r, n, s,  u, L, $ allowed. Got '{c}'"
                    ))
                }
            }
        }
        Ok(e)
    }

    fn any(&self) -> bool {
        *self != Escapes::NONE
    }
}

/// How a literal run of text ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The closing `"` (double-quoted strings only).
    Quote,
    /// `$` (an interpolation may follow; the `$` is not consumed).
    Dollar,
    /// `${` (not consumed).
    DollarBrace,
    /// End of the text (heredoc bodies) or of the input (unclosed string).
    End,
}

/// Reads literal text from `text` until an unescaped terminator, processing escapes.
/// `quote` is whether `"` ends the text; `interpolate` whether `$` does.
/// Returns the processed text, the terminator, and the byte offset of the terminator.
/// In a double-quoted string (`quote`), the escapes Puppet warns about (an unrecognized
/// escape, `\u` without hex digits) are added to `warnings`.
pub fn slurp(
    text: &str,
    esc: Escapes,
    quote: bool,
    interpolate: bool,
    warnings: &mut Vec<String>,
) -> (String, Stop, usize) {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let mut lit_start = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' if quote => {
                out.push_str(&text[lit_start..i]);
                return (out, Stop::Quote, i);
            }
            b'$' if interpolate => {
                out.push_str(&text[lit_start..i]);
                let stop = if bytes.get(i + 1) == Some(&b'{') {
                    Stop::DollarBrace
                } else {
                    Stop::Dollar
                };
                return (out, stop, i);
            }
            b'\\' if esc.any() || quote => {
                let Some(&next) = bytes.get(i + 1) else {
                    i += 1;
                    continue;
                };
                // A `$` that cannot be escaped still interpolates (Puppet's SLURP_UQNE).
                if next == b'$' && !esc.dollar && interpolate {
                    i += 1;
                    continue;
                }
                out.push_str(&text[lit_start..i]);
                let (consumed, repl) = escape(text, i, esc);
                match repl {
                    Some(r) => out.push_str(&r),
                    None => {
                        if quote {
                            if let Some(w) = escape_warning(&text[i + 1..], esc) {
                                warnings.push(w);
                            }
                        }
                        out.push_str(&text[i..i + consumed]);
                    }
                }
                i += consumed;
                lit_start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[lit_start..]);
    (out, Stop::End, bytes.len())
}

/// Decodes the escape at `text[i]` (a backslash). Returns how many bytes it covers and its
/// replacement (`None`: keep the text as written).
fn escape(text: &str, i: usize, esc: Escapes) -> (usize, Option<String>) {
    let rest = &text[i + 1..];
    let Some(c) = rest.chars().next() else {
        return (1, None);
    };
    let n = c.len_utf8();
    match c {
        '\\' if esc.backslash => (2, Some("\\".into())),
        '$' if esc.dollar => (2, Some("$".into())),
        '"' | '\'' if esc.quotes => (2, Some(c.to_string())),
        'r' if esc.r => (2, Some("\r".into())),
        'n' if esc.n => (2, Some("\n".into())),
        't' if esc.t => (2, Some("\t".into())),
        's' if esc.s => (2, Some(" ".into())),
        '\n' if esc.newline => (2, Some(String::new())),
        '\r' if esc.newline && rest[1..].starts_with('\n') => (3, Some(String::new())),
        'u' if esc.u => match unicode_escape(&rest[1..]) {
            Some((len, ch)) => (2 + len, Some(ch.to_string())),
            None => (2, None),
        },
        _ => (1 + n, None),
    }
}

/// Puppet's lexer warning about an escape it keeps as written (`rest` follows the
/// backslash): `\u` not followed by a code point, or a character it does not know after a
/// backslash (a line break after the backslash is not an escape).
fn escape_warning(rest: &str, esc: Escapes) -> Option<String> {
    match rest.chars().next()? {
        '\r' | '\n' => None,
        'u' if esc.u => Some(
            "Unicode escape '\\u' was not followed by 4 hex digits or 1-6 hex digits in {} or was > 10ffff"
                .to_string(),
        ),
        c => Some(format!("Unrecognized escape sequence '\\{c}'")),
    }
}

/// `XXXX` or `{X..}` after `\u`: the bytes used and the character.
fn unicode_escape(s: &str) -> Option<(usize, char)> {
    let b = s.as_bytes();
    if b.first() == Some(&b'{') {
        let end = s.find('}')?;
        let hex = &s[1..end];
        if hex.is_empty() || hex.len() > 6 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let ch = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
        Some((end + 1, ch))
    } else {
        if b.len() < 4 || !b[..4].iter().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let ch = char::from_u32(u32::from_str_radix(&s[..4], 16).ok()?)?;
        Some((4, ch))
    }
}

/// A single-quoted string starting after the opening quote: its value and the offset just
/// past the closing quote, or `None` when it is not closed.
pub fn single_quoted(text: &str) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let mut lit = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => {
                out.push_str(&text[lit..i]);
                return Some((out, i + 1));
            }
            b'\\' if matches!(bytes.get(i + 1), Some(b'\\' | b'\'')) => {
                out.push_str(&text[lit..i]);
                out.push(bytes[i + 1] as char);
                i += 2;
                lit = i;
            }
            _ => i += 1,
        }
    }
    None
}

/// The length of a variable name at the start of `s` (Puppet's `(::)?(\w+::)*\w+`).
pub fn variable_len(s: &str) -> usize {
    let b = s.as_bytes();
    let word = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    let mut i = 0;
    if b.starts_with(b"::") {
        i = 2;
    }
    let mut end = 0;
    loop {
        let start = i;
        while word(i) {
            i += 1;
        }
        if i == start {
            return end;
        }
        end = i;
        if b.get(i) == Some(&b':') && b.get(i + 1) == Some(&b':') && word(i + 2) {
            i += 2;
        } else {
            return end;
        }
    }
}

/// A parsed `@(TAG:syntax/flags)` header.
#[derive(Debug)]
pub struct HeredocHeader {
    pub tag: String,
    pub syntax: String,
    pub interpolate: bool,
    pub escapes: Escapes,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Parses the inside of `@( ... )` (without the parentheses).
pub fn heredoc_header(spec: &str) -> Result<HeredocHeader, String> {
    const INVALID: &str = "Invalid syntax in heredoc expected @(endtag[:syntax][/escapes])";
    let tag_end = spec.find([':', '/', '\r', '\n']).unwrap_or(spec.len());
    let raw_tag = &spec[..tag_end];
    if raw_tag.is_empty() {
        return Err(INVALID.into());
    }
    let mut rest = &spec[tag_end..];
    let mut syntax = String::new();
    if let Some(r) = rest.strip_prefix(':') {
        let r = r.trim_start_matches(is_blank);
        let len = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '+'))
            .unwrap_or(r.len());
        let s = &r[..len];
        if s.len() < 2 || !s.as_bytes()[0].is_ascii_lowercase() {
            return Err(INVALID.into());
        }
        syntax = s.to_string();
        rest = r[len..].trim_start_matches(is_blank);
    }
    let mut escapes = Escapes::NONE;
    if let Some(r) = rest.strip_prefix('/') {
        let len = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(r.len());
        escapes = Escapes::from_heredoc_flags(&r[..len])?;
        rest = r[len..].trim_start_matches(is_blank);
    }
    if !rest.is_empty() {
        return Err(INVALID.into());
    }
    let mut tag = raw_tag.trim().to_string();
    let mut interpolate = false;
    if tag.len() >= 2 && tag.starts_with('"') && tag.ends_with('"') {
        interpolate = true;
        tag = tag[1..tag.len() - 1].trim().to_string();
    }
    if tag.is_empty() {
        return Err("Heredoc with an empty endtag".into());
    }
    Ok(HeredocHeader {
        tag,
        syntax,
        interpolate,
        escapes,
    })
}

/// If `line` ends a heredoc tagged `tag`, returns (leading blanks, has margin `|`,
/// remove trailing break `-`). Like Puppet, the end marker is searched anywhere on the line.
pub fn heredoc_end_line(line: &str, tag: &str) -> Option<(String, bool, bool)> {
    let mut search = 0;
    while let Some(found) = line[search..].find(tag) {
        let at = search + found;
        let after = &line[at + tag.len()..];
        let after = after.trim_start_matches(is_blank);
        let after = after.strip_prefix('\r').unwrap_or(after);
        if after.is_empty() || after == "\n" {
            // Walk back over `[blank]* (| [blank]*)? (- [blank]*)?` to find the match start.
            let before = &line[..at];
            let mut b = before.trim_end_matches(is_blank);
            let mut trim = false;
            if let Some(x) = b.strip_suffix('-') {
                trim = true;
                b = x.trim_end_matches(is_blank);
            }
            let mut margin = false;
            if let Some(x) = b.strip_suffix('|') {
                margin = true;
                b = x;
            }
            let lead_end = b.len();
            let lead_start = b.trim_end_matches(is_blank).len();
            let leading = if margin {
                line[lead_start..lead_end].to_string()
            } else {
                String::new()
            };
            return Some((leading, margin, trim));
        }
        // Step over one character, not one byte: the tag may start with a multibyte one.
        match line[at..].chars().next() {
            Some(c) => search = at + c.len_utf8(),
            None => break,
        }
    }
    None
}
