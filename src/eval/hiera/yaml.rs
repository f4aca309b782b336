//! YAML in and out, as Hiera and stdlib's `parseyaml`/`to_yaml` need it.
//!
//! Parsing uses `yaml-rust2` (pure Rust, keeps mapping order); documents become JSON values,
//! which is what Puppet data is. Emitting follows Ruby's Psych layout (`---` header,
//! sequences inside mappings not indented, strings quoted only when they would read back as
//! something else) because `to_yaml` output lands in catalogs.

use serde_json::{Map, Value as Json};
use yaml_rust2::{Yaml, YamlLoader};

/// Parses the first document; an empty text is `null` (Hiera treats it as no data).
pub fn parse(text: &str) -> Result<Json, String> {
    // The loader copies what an alias names: count first what the copies would make
    // ("billion laughs": ten lines that expand to 10^9 values).
    let mut count = Expanded::default();
    yaml_rust2::parser::Parser::new_from_str(text)
        .load(&mut count, false)
        .map_err(|e| e.to_string())?;
    if count.too_many {
        return Err(format!(
            "YAML whose aliases expand to more than {MAX_NODES} values is not supported"
        ));
    }
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    let Some(doc) = docs.first() else {
        return Ok(Json::Null);
    };
    if depth(doc) > MAX_DEPTH {
        return Err(format!(
            "stack level too deep: YAML nested more than {MAX_DEPTH} levels deep is not supported"
        ));
    }
    Ok(to_json(doc))
}

/// Data nested deeper than this is refused (later stages walk values recursively).
pub const MAX_DEPTH: usize = 1000;

/// Values (scalars, sequences, mappings) a document may hold once its aliases are expanded,
/// as the compile's bound on one array or hash (`limits::MAX_VALUE_NODES`).
const MAX_NODES: u64 = 1_000_000;

/// Counts the values of the first document with its aliases expanded, from the parser's
/// events, without making them.
#[derive(Default)]
struct Expanded {
    /// The expanded size of each anchored node (by anchor id).
    sizes: std::collections::HashMap<usize, u64>,
    /// The open sequences and mappings: their anchor and the size of what they hold so far.
    open: Vec<(usize, u64)>,
    total: u64,
    too_many: bool,
}

impl Expanded {
    fn add(&mut self, n: u64) {
        let into = match self.open.last_mut() {
            Some((_, held)) => held,
            None => &mut self.total,
        };
        *into = into.saturating_add(n);
        self.too_many |= *into > MAX_NODES;
    }
}

impl yaml_rust2::parser::MarkedEventReceiver for Expanded {
    fn on_event(&mut self, ev: yaml_rust2::Event, _mark: yaml_rust2::scanner::Marker) {
        use yaml_rust2::Event;
        if self.too_many {
            return;
        }
        match ev {
            Event::Scalar(_, _, anchor, _) => {
                if anchor > 0 {
                    self.sizes.insert(anchor, 1);
                }
                self.add(1);
            }
            Event::Alias(id) => self.add(self.sizes.get(&id).copied().unwrap_or(1)),
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                self.open.push((anchor, 1));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, size)) = self.open.pop() {
                    if anchor > 0 {
                        self.sizes.insert(anchor, size);
                    }
                    self.add(size);
                }
            }
            _ => {}
        }
    }
}

/// How deeply a document nests, measured without recursion.
fn depth(doc: &Yaml) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(doc, 1usize)];
    while let Some((y, d)) = stack.pop() {
        deepest = deepest.max(d);
        if d > MAX_DEPTH {
            break;
        }
        match y {
            Yaml::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Yaml::Hash(h) => stack.extend(h.iter().flat_map(|(k, v)| [(k, d + 1), (v, d + 1)])),
            _ => {}
        }
    }
    deepest
}

fn to_json(y: &Yaml) -> Json {
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(s.clone())),
        Yaml::Integer(i) => Json::from(*i),
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Boolean(b) => Json::Bool(*b),
        Yaml::Array(a) => Json::Array(a.iter().map(to_json).collect()),
        Yaml::Hash(h) => {
            let mut m = Map::new();
            for (k, v) in h {
                let key = match k {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Null => String::new(),
                    other => format!("{other:?}"),
                };
                m.insert(key, to_json(v));
            }
            Json::Object(m)
        }
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Json::Null,
    }
}

/// What Psych's `ScalarScanner#tokenize` makes of a plain scalar: whether it reads back
/// as a String (`false`: a number, date, time, boolean, null or symbol).
fn tokenizes_as_string(s: &str) -> bool {
    use std::sync::OnceLock;
    static RE: OnceLock<Vec<regex::Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| {
        [
            // 0: what is a String for sure (Ruby's `^` is a line anchor: `(?m)`)
            r"(?m)^[^\d.:-]?[[:alpha:]_\s!@#$%\^&*(){}<>|/\\~;=]+",
            // 1: TIME
            r"(?m)^-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|\s+)\d{1,2}:\d\d:\d\d(?:\.\d*)?(?:\s*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$",
            // 2: a date
            r"(?m)^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$",
            // 3: infinities and NaN
            r"(?mi)^(?:[-+]?\.inf|\.nan)$",
            // 4: a symbol
            r"(?m)^:.",
            // 5: sexagesimal integers and floats
            r"(?m)^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}(?:\.[0-9_]*)?$",
            // 6: FLOAT
            r"(?m)^(?:[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?)$",
            // 7: INTEGER
            r"(?m)^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$",
            // 8: null, true, false spellings
            r"(?mi)^(?:~|null|yes|true|on|no|false|off)$",
            // 9: the lone `.` that FLOAT lets through
            r"^[-+]?\.\n?\z",
        ]
        .iter()
        .map(|r| regex::Regex::new(r).expect("static regex"))
        .collect()
    });
    if s.is_empty() {
        return false;
    }
    if re[0].is_match(s) || s.contains('\n') {
        return s.chars().count() > 5
            || s.starts_with(|c: char| !"ytonfYTONF~".contains(c))
            || !re[8].is_match(s);
    }
    if re[1].is_match(s) || re[2].is_match(s) {
        // Psych answers a String only when Time/Date parsing fails; treat as not a String.
        return false;
    }
    if re[3].is_match(s) || re[4].is_match(s) || re[5].is_match(s) {
        return false;
    }
    if re[6].is_match(s) {
        return re[9].is_match(s);
    }
    !re[7].is_match(s)
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// The style Psych's `visit_String` asks libyaml for.
fn psych_style(s: &str) -> Style {
    // `o =~ /\n(?!\Z)/`: a line break other than a final one
    let b = s.as_bytes();
    let n = b.len();
    let inner_break = b
        .iter()
        .enumerate()
        .any(|(i, &c)| c == b'\n' && !(i + 1 == n || (i + 2 == n && b[n - 1] == b'\n')));
    if inner_break {
        return Style::Literal;
    }
    if matches!(s, "y" | "Y" | "n" | "N") {
        return Style::Double;
    }
    // `o =~ /^[^[:word:]][^"]*$/`, with Ruby's line anchors: a line that starts with a
    // character other than a word character, and no `"` before the end of that line
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let cs: Vec<char> = s.chars().collect();
    let quoted_line = (0..cs.len()).any(|p| {
        (p == 0 || cs[p - 1] == '\n')
            && !word(cs[p])
            && !cs[p + 1..]
                .iter()
                .take_while(|&&c| c != '\n')
                .any(|&c| c == '"')
    });
    if quoted_line {
        return Style::Double;
    }
    let octal_like = {
        let t = s.strip_prefix('0');
        t.is_some_and(|t| {
            let rest = t.trim_start_matches(|c: char| ('0'..='7').contains(&c));
            rest.starts_with(['8', '9'])
        })
    };
    if !tokenizes_as_string(s) || octal_like {
        return Style::Single;
    }
    Style::Plain
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')
        && c != '\u{feff}'
}

fn is_blankz(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => c == ' ' || c == '\t' || is_break(c) || c == '\0',
    }
}

/// libyaml's `yaml_emitter_analyze_scalar`: which styles can write the scalar.
struct Analysis {
    multiline: bool,
    block_plain: bool,
    single: bool,
    block: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain: true,
            single: true,
            block: false,
        };
    }
    let cs: Vec<char> = s.chars().collect();
    let mut block_ind = s.starts_with("---") || s.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut lead_space, mut lead_break, mut trail_space, mut trail_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    let mut preceded_ws = true;
    for (i, &c) in cs.iter().enumerate() {
        let followed_ws = is_blankz(cs.get(i + 1).copied());
        if i == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) || (c == '-' && followed_ws) {
                block_ind = true;
            }
            if (c == '?' || c == ':') && followed_ws {
                block_ind = true;
            }
        } else if (c == ':' && followed_ws) || (c == '#' && preceded_ws) {
            block_ind = true;
        }
        if !is_printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        let last = i + 1 == cs.len();
        if c == ' ' {
            lead_space |= i == 0;
            trail_space |= last;
            break_space |= prev_break;
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            lead_break |= i == 0;
            trail_break |= last;
            space_break |= prev_space;
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_ws = is_blankz(Some(c));
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain: true,
        single: true,
        block: true,
    };
    if lead_space || lead_break || trail_space || trail_break {
        a.block_plain = false;
    }
    if trail_space {
        a.block = false;
    }
    if break_space {
        a.block_plain = false;
        a.single = false;
    }
    if space_break || special {
        a.block_plain = false;
        a.single = false;
        a.block = false;
    }
    if line_breaks || block_ind {
        a.block_plain = false;
    }
    a
}

/// A port of the parts of libyaml's emitter (0.2.5, as Psych drives it for `to_yaml`)
/// that block collections of scalars use: its column, indentation and line folding at 80.
struct Emitter {
    out: String,
    column: usize,
    whitespace: bool,
    indention: bool,
    indent: i32,
    open_ended: bool,
    mapping_context: bool,
    simple_key_context: bool,
}

const BEST_WIDTH: usize = 80;
const BEST_INDENT: i32 = 2;

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write(&mut self, c: char) {
        if is_break(c) {
            self.put_break();
        } else {
            self.put(c);
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in ind.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn increase_indent(&mut self, indentless: bool) -> i32 {
        let saved = self.indent;
        if self.indent < 0 {
            self.indent = 0;
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
        saved
    }

    fn node(&mut self, v: &Json, mapping: bool, simple_key: bool) {
        self.mapping_context = mapping;
        self.simple_key_context = simple_key;
        match v {
            Json::Object(m) if !m.is_empty() => {
                let saved = self.increase_indent(false);
                for (k, x) in m {
                    self.write_indent();
                    // yaml_emitter_check_simple_key: one line, at most 128 characters
                    let simple = !k.chars().any(is_break) && k.chars().count() <= 128;
                    if simple {
                        self.node(&Json::String(k.clone()), true, true);
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.node(&Json::String(k.clone()), true, false);
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(x, true, false);
                }
                self.indent = saved;
            }
            Json::Array(a) if !a.is_empty() => {
                let saved = self.increase_indent(self.mapping_context && !self.indention);
                for x in a {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.node(x, false, false);
                }
                self.indent = saved;
            }
            Json::Object(_) => {
                self.write_indicator("{", true, true, false);
                self.write_indicator("}", false, false, false);
            }
            Json::Array(_) => {
                self.write_indicator("[", true, true, false);
                self.write_indicator("]", false, false, false);
            }
            Json::Null => self.scalar("", Style::Plain),
            Json::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain),
            Json::Number(n) => {
                let text = match (n.is_f64(), n.as_f64()) {
                    (true, Some(f)) => crate::eval::values::value::format_float(f),
                    _ => n.to_string(),
                };
                self.scalar(&text, Style::Plain)
            }
            Json::String(s) if s == "<<" => {
                // Psych tags the merge key as a String
                self.write_indicator("!!str", true, false, false);
                self.scalar(s, Style::Single);
            }
            Json::String(s) => self.scalar(s, psych_style(s)),
        }
    }

    /// yaml_emitter_emit_scalar: the style, then its writer one indentation step in.
    fn scalar(&mut self, s: &str, asked: Style) {
        let saved = self.indent;
        self.indent = if self.indent < 0 {
            BEST_INDENT
        } else {
            self.indent + BEST_INDENT
        };
        self.scalar_at(s, asked);
        self.indent = saved;
    }

    /// yaml_emitter_select_scalar_style, then the writer of the style.
    fn scalar_at(&mut self, s: &str, asked: Style) {
        let a = analyze(s);
        let mut style = asked;
        if self.simple_key_context && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain || (s.is_empty() && self.simple_key_context)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block || self.simple_key_context) {
            style = Style::Double;
        }
        match style {
            Style::Plain => self.plain(s),
            Style::Single => self.single_quoted(s),
            Style::Double => self.double_quoted(s),
            Style::Literal => self.literal(s),
        }
    }

    fn plain(&mut self, s: &str) {
        if !self.whitespace && !s.is_empty() {
            self.put(' ');
        }
        self.scalar_text(s, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn single_quoted(&mut self, s: &str) {
        self.write_indicator("'", true, false, false);
        if self.scalar_text(s, true) {
            self.write_indent();
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// The text of a plain or single-quoted scalar (libyaml's `write_plain` and
    /// `write_single_quoted`, which differ where `single` is tested), folded at spaces past
    /// the best width. Returns whether it ended in line breaks.
    fn scalar_text(&mut self, s: &str, single: bool) -> bool {
        let allow_breaks = !self.simple_key_context;
        let cs: Vec<char> = s.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in cs.iter().enumerate() {
            if c == ' ' {
                // A single-quoted scalar is not folded at its first or last character.
                let foldable = !single || (i != 0 && i + 1 != cs.len());
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && foldable
                    && cs.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if single && c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        breaks
    }

    fn double_quoted(&mut self, s: &str) {
        let allow_breaks = !self.simple_key_context;
        self.write_indicator("\"", true, false, false);
        let cs: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in cs.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                let esc = match c {
                    '\0' => Some('0'),
                    '\u{7}' => Some('a'),
                    '\u{8}' => Some('b'),
                    '\t' => Some('t'),
                    '\n' => Some('n'),
                    '\u{b}' => Some('v'),
                    '\u{c}' => Some('f'),
                    '\r' => Some('r'),
                    '\u{1b}' => Some('e'),
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '\u{85}' => Some('N'),
                    '\u{a0}' => Some('_'),
                    '\u{2028}' => Some('L'),
                    '\u{2029}' => Some('P'),
                    _ => None,
                };
                match esc {
                    Some(e) => self.put(e),
                    None => {
                        let v = c as u32;
                        let text = if v <= 0xff {
                            format!("x{v:02X}")
                        } else if v <= 0xffff {
                            format!("u{v:04X}")
                        } else {
                            format!("U{v:08X}")
                        };
                        for t in text.chars() {
                            self.put(t);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i + 1 != cs.len()
                {
                    self.write_indent();
                    if cs.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn literal(&mut self, s: &str) {
        self.write_indicator("|", true, false, false);
        // yaml_emitter_write_block_scalar_hints
        if s.starts_with(|c: char| c == ' ' || is_break(c)) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        self.open_ended = false;
        let mut tail = s.chars().rev();
        let chomp = match (tail.next(), tail.next()) {
            (None, _) => Some("-"),
            (Some(l), _) if !is_break(l) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(p)) if is_break(p) => Some("+"),
            _ => None,
        };
        if let Some(h) = chomp {
            if h == "+" {
                self.open_ended = true;
            }
            self.write_indicator(h, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in s.chars() {
            if is_break(c) {
                self.write(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// Ruby's `value.to_yaml` (Psych 4 over libyaml 0.2.5): a block-style document, scalars
/// in the style Psych picks and libyaml allows, plain and quoted scalars folded past
/// column 80.
pub fn to_yaml(v: &Json) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
        indent: -1,
        open_ended: false,
        mapping_context: false,
        simple_key_context: false,
    };
    // document start: `---`, then the root node
    e.write_indent();
    e.write_indicator("---", true, false, false);
    e.node(v, false, false);
    // document end (implicit), then stream end
    e.write_indent();
    if e.open_ended {
        e.write_indicator("...", true, false, false);
        e.write_indent();
    }
    e.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn psych_layout() {
        // `ruby -ryaml -e 'puts({"a"=>[1,true],"b"=>{"c"=>"x y","d"=>"1"}}.to_yaml)'`
        assert_eq!(
            to_yaml(&json!({"a": [1, true], "b": {"c": "x y", "d": "1"}})),
            "---\na:\n- 1\n- true\nb:\n  c: x y\n  d: '1'\n"
        );
        assert_eq!(to_yaml(&json!("x")), "--- x\n");
        assert_eq!(to_yaml(&json!([{"a": 1, "b": 2}])), "---\n- a: 1\n  b: 2\n");
    }

    #[test]
    fn psych_scalars_and_folding() {
        // outputs of `ruby -ryaml -rjson -e 'print JSON.parse(ARGV[0]).to_yaml'`
        // (Psych 4.0.3, libyaml 0.2.5)
        assert_eq!(to_yaml(&json!(null)), "---\n");
        assert_eq!(
            to_yaml(&json!({"a": null, "b": [null, [null]]})),
            "---\na:\nb:\n-\n- -\n"
        );
        assert_eq!(
            to_yaml(&json!({"k": "multi\nline\n"})),
            "---\nk: |\n  multi\n  line\n"
        );
        assert_eq!(to_yaml(&json!(["x\n y"])), "---\n- |-\n  x\n   y\n");
        assert_eq!(
            to_yaml(&json!({"k": "  x\ny\n"})),
            "---\nk: |2\n    x\n  y\n"
        );
        assert_eq!(to_yaml(&json!("a\nb\n\n")), "--- |+\n  a\n  b\n\n...\n");
        assert_eq!(to_yaml(&json!("abc\n")), "--- 'abc\n\n  '\n");
        assert_eq!(to_yaml(&json!("ends\n\n")), "--- \"ends\\n\\n\"\n");
        assert_eq!(
            to_yaml(&json!(["1e5", "1_000", "0x1F", "2024-01-01", "09", "<<", "a:b", "a #b"])),
            "---\n- 1e5\n- '1_000'\n- '0x1F'\n- '2024-01-01'\n- '09'\n- !!str '<<'\n- a:b\n- 'a #b'\n"
        );
        assert_eq!(
            to_yaml(&json!({"k": "word ".repeat(20).trim_end()})),
            format!(
                "---\nk: {}\n  word word word word\n",
                "word ".repeat(16).trim_end()
            )
        );
        assert_eq!(to_yaml(&json!({"a\nb": 1})), "---\n? |-\n  a\n  b\n: 1\n");
        assert_eq!(to_yaml(&json!([1e15, 1e-5])), "---\n- 1.0e+15\n- 1.0e-05\n");
    }

    #[test]
    fn parses_in_order() {
        let v = parse("b: 1\na: [x, 2.5]\nc: ~\n").unwrap_or_default();
        assert_eq!(v, json!({"b": 1, "a": ["x", 2.5], "c": null}));
        assert_eq!(
            v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["b".to_string(), "a".into(), "c".into()])
        );
    }
}
