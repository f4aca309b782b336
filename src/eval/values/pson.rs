//! `PSON.load`: Puppet's vendored pure-Ruby JSON parser (`puppet/external/pson/pure/parser.rb`),
//! which stdlib's `parsepson` and `loadjson` call. It differs from JSON: the text must hold
//! objects or arrays only (`"str"` and `12` are refused), `//` and `/* */` comments are
//! blanks, an object or array left open at the end of the text is taken as closed, and its
//! errors have their own wording (`expected ',' or '}' in object at '...'!`).

use super::value::Value;
use indexmap::IndexMap;

/// Objects and arrays nest at most this deep (PSON's default `max_nesting`).
const MAX_NESTING: usize = 19;

/// Parses `text` as `PSON.load` does; `Err` carries the parser's message.
pub fn load(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
        nesting: 0,
    };
    p.parse()
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    nesting: usize,
}

/// A value, or none where the text holds no value (the parser's `UNPARSED`).
type Parsed = Result<Option<Value>, String>;

impl Parser<'_> {
    fn eos(&self) -> bool {
        self.pos >= self.s.len()
    }

    /// `peek(20)`: the next 20 bytes, as the messages show them.
    fn peek20(&self) -> String {
        let end = (self.pos + 20).min(self.s.len());
        String::from_utf8_lossy(&self.s[self.pos..end]).into_owned()
    }

    fn scan(&mut self, lit: &str) -> bool {
        if self.s[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            return true;
        }
        false
    }

    fn parse(&mut self) -> Result<Value, String> {
        let mut obj = None;
        while !self.eos() {
            let open = self.s[self.pos];
            if open == b'{' || open == b'[' {
                if obj.is_some() {
                    self.pos += 1;
                    return Err(format!("source '{}' not in PSON!", self.peek20()));
                }
                self.pos += 1;
                self.nesting = 1;
                obj = Some(if open == b'{' {
                    self.object()?
                } else {
                    self.array()?
                });
            } else if !self.skip_ignore() {
                return Err(format!("source '{}' not in PSON!", self.peek20()));
            }
        }
        obj.ok_or_else(|| "source did not contain any PSON!".to_string())
    }

    /// Skips blanks and comments (`IGNORE`); whether any were skipped.
    fn skip_ignore(&mut self) -> bool {
        let start = self.pos;
        loop {
            let rest = &self.s[self.pos..];
            if rest.first().is_some_and(|b| b" \t\r\n".contains(b)) {
                self.pos += 1;
            } else if rest.starts_with(b"//") {
                // A line comment needs its line end.
                match rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
                    Some(i) => self.pos += i + 1,
                    None => break,
                }
            } else if rest.starts_with(b"/*") {
                match rest[2..].windows(2).position(|w| w == b"*/") {
                    Some(i) => self.pos += i + 4,
                    None => break,
                }
            } else {
                break;
            }
        }
        self.pos > start
    }

    fn check_nesting(&self) -> Result<(), String> {
        if self.nesting > MAX_NESTING {
            return Err(format!("nesting of {} is too deep", self.nesting));
        }
        Ok(())
    }

    /// After an element: a `,` (true: another element must follow) or the `close` ahead.
    fn item_end(&mut self, close: u8, kind: &str) -> Result<bool, String> {
        self.skip_ignore();
        if self.scan(",") {
            return Ok(true);
        }
        if !self.s[self.pos..].starts_with(&[close]) {
            let close = close as char;
            return Err(format!(
                "expected ',' or '{close}' in {kind} at '{}'!",
                self.peek20()
            ));
        }
        Ok(false)
    }

    /// A close right after a `,` is an error.
    fn no_dangling_comma(&self, delim: bool, what: &str) -> Result<(), String> {
        if delim {
            return Err(format!("expected next {what} at '{}'!", self.peek20()));
        }
        Ok(())
    }

    fn array(&mut self) -> Result<Value, String> {
        self.check_nesting()?;
        let mut out = Vec::new();
        let mut delim = false;
        while !self.eos() {
            if let Some(v) = self.value()? {
                out.push(v);
                delim = self.item_end(b']', "array")?;
            } else if self.scan("]") {
                self.no_dangling_comma(delim, "element in array")?;
                break;
            } else if !self.skip_ignore() {
                return Err(format!("unexpected token in array at '{}'!", self.peek20()));
            }
        }
        Ok(Value::Array(out))
    }

    fn object(&mut self) -> Result<Value, String> {
        self.check_nesting()?;
        let mut out = IndexMap::new();
        let mut delim = false;
        while !self.eos() {
            if let Some(key) = self.string()? {
                self.skip_ignore();
                if !self.scan(":") {
                    return Err(format!("expected ':' in object at '{}'!", self.peek20()));
                }
                self.skip_ignore();
                let Some(v) = self.value()? else {
                    return Err(format!("expected value in object at '{}'!", self.peek20()));
                };
                out.insert(key, v);
                delim = self.item_end(b'}', "object")?;
            } else if self.scan("}") {
                self.no_dangling_comma(delim, "name, value pair in object")?;
                break;
            } else if !self.skip_ignore() {
                return Err(format!(
                    "unexpected token in object at '{}'!",
                    self.peek20()
                ));
            }
        }
        Ok(Value::Hash(out.into()))
    }

    fn value(&mut self) -> Parsed {
        if let Some(n) = self.number() {
            return Ok(Some(n));
        }
        for (lit, v) in [
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("null", Value::Undef),
        ] {
            if self.scan(lit) {
                return Ok(Some(v));
            }
        }
        if let Some(s) = self.string()? {
            return Ok(Some(s));
        }
        for (open, obj) in [("[", false), ("{", true)] {
            if self.scan(open) {
                self.nesting += 1;
                let v = if obj { self.object()? } else { self.array()? };
                self.nesting -= 1;
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// `FLOAT` or `INTEGER`: `-?(0|[1-9]\d*)` with an optional fraction and exponent.
    fn number(&mut self) -> Option<Value> {
        let s = self.s;
        let digits = |mut i: usize| {
            let from = i;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
            (i > from).then_some(i)
        };
        let start = self.pos;
        let mut i = start + usize::from(s.get(start) == Some(&b'-'));
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i)?,
            _ => return None,
        }
        let int_end = i;
        if s.get(i) == Some(&b'.') {
            if let Some(e) = digits(i + 1) {
                i = e;
            }
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(s.get(i + 1), Some(b'+' | b'-')));
            if let Some(e) = digits(i + 1 + sign) {
                i = e;
            }
        }
        let text = std::str::from_utf8(&s[start..i]).ok()?;
        self.pos = i;
        if i == int_end {
            // Beyond 64 bits Ruby keeps a big integer; a float is the nearest Ordo has.
            return Some(match text.parse::<i64>() {
                Ok(n) => Value::Int(n),
                Err(_) => Value::Float(text.parse().unwrap_or(0.0)),
            });
        }
        Some(Value::Float(text.parse().unwrap_or(0.0)))
    }

    /// A string (`STRING`): `Ok(None)` when the text holds none here.
    fn string(&mut self) -> Result<Option<Value>, String> {
        let s = self.s;
        if s.get(self.pos) != Some(&b'"') {
            return Ok(None);
        }
        let mut out: Vec<u8> = Vec::new();
        let mut i = self.pos + 1;
        loop {
            match s.get(i) {
                None => return Ok(None),
                Some(b'"') => break,
                Some(b'\\') => {
                    let Some(&e) = s.get(i + 1) else {
                        return Ok(None);
                    };
                    if e == b'u' && is_hex4(&s[i + 2..]) {
                        i = unescape_utf16(s, i, &mut out);
                        continue;
                    }
                    if e < 0x20 {
                        return Ok(None);
                    }
                    out.push(match e {
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        other => other,
                    });
                    i += 2;
                }
                Some(&b) if b < 0x20 => return Ok(None),
                Some(&b) => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        self.pos = i + 1;
        Ok(Some(Value::Str(String::from_utf8_lossy(&out).into_owned())))
    }
}

fn is_hex4(s: &[u8]) -> bool {
    s.len() >= 4 && s[..4].iter().all(u8::is_ascii_hexdigit)
}

/// Decodes a run of `\uXXXX` escapes from `s[i..]` as UTF-16 into `out`; the index after it.
fn unescape_utf16(s: &[u8], mut i: usize, out: &mut Vec<u8>) -> usize {
    let mut units = Vec::new();
    while s.get(i) == Some(&b'\\') && s.get(i + 1) == Some(&b'u') && is_hex4(&s[i + 2..]) {
        let hex = std::str::from_utf8(&s[i + 2..i + 6]).unwrap_or("0");
        units.push(u16::from_str_radix(hex, 16).unwrap_or(0));
        i += 6;
    }
    let text: String = char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    out.extend_from_slice(text.as_bytes());
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pson_quirks() {
        assert_eq!(
            load("[1, 2.5, true, null, \"x\"]").unwrap(),
            Value::Array(vec![
                Value::Int(1),
                Value::Float(2.5),
                Value::Bool(true),
                Value::Undef,
                Value::str("x")
            ])
        );
        assert_eq!(
            load("\"str\"").unwrap_err(),
            "source '\"str\"' not in PSON!"
        );
        assert_eq!(
            load("{\"a\": }").unwrap_err(),
            "expected value in object at '}'!"
        );
        assert_eq!(
            load("{\"a\": 1").unwrap_err(),
            "expected ',' or '}' in object at ''!"
        );
        assert_eq!(load("[1, /* c */ 2,").unwrap(), load("[1,2]").unwrap());
        assert_eq!(
            load("[\"\\u00e9\\n\"]").unwrap(),
            load("[\"é\\n\"]").unwrap()
        );
        assert_eq!(load("").unwrap_err(), "source did not contain any PSON!");
    }
}
