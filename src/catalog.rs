//! The catalog: what the evaluator produces and the graph stage and runner consume.
//!
//! The data model is Puppet's JSON catalog (catalog_format 2, see
//! `../shared/reference/puppet-schemas/catalog.json`). Parameters are plain data
//! (`serde_json::Value`, insertion order kept) because that is what a catalog carries; the
//! evaluator converts its values when it stores them.

pub mod metaparams;

use crate::fxhash::FxHashSet as FastSet;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// A resource reference `Type[title]` with the type segments capitalised.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResourceRef {
    pub type_name: String,
    pub title: String,
}

impl ResourceRef {
    pub fn new(type_name: impl Into<String>, title: impl Into<String>) -> ResourceRef {
        ResourceRef {
            type_name: type_name.into(),
            title: title.into(),
        }
    }

    /// Parses `Type[title]` as written in catalogs (`File[/tmp/x]`, `Class[Foo::Bar]`).
    pub fn parse(s: &str) -> Option<ResourceRef> {
        let open = s.find('[')?;
        if !s.ends_with(']') || open == 0 {
            return None;
        }
        let type_name = &s[..open];
        let mut title = &s[open + 1..s.len() - 1];
        // Puppet writes `Class[main]` but `Notify['a']` in log messages; both reach us.
        if title.len() >= 2 && title.starts_with('\'') && title.ends_with('\'') {
            title = &title[1..title.len() - 1];
        }
        Some(ResourceRef::new(capitalize_type(type_name), title))
    }
}

impl std::fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.type_name, self.title)
    }
}

/// `trim_colons`: a name without its leading `::` (any number of them), as
/// `trim_start_matches("::")` gives it but without setting up a substring search (names are
/// trimmed on every lookup).
pub trait TrimColons {
    fn trim_colons(&self) -> &str;
}

impl TrimColons for str {
    fn trim_colons(&self) -> &str {
        let mut s = self;
        while let Some(rest) = s.strip_prefix("::") {
            s = rest;
        }
        s
    }
}

/// `foo::bar` -> `Foo::Bar`, as Puppet writes type names in references.
pub fn capitalize_type(name: &str) -> String {
    let name = name.trim_colons();
    if name.is_ascii() {
        // The same, a byte at a time (most names).
        let mut out = name.to_string();
        let bytes = name.as_bytes();
        let (mut i, mut at_segment_start) = (0, true);
        while i < bytes.len() {
            if bytes[i] == b':' && bytes.get(i + 1) == Some(&b':') {
                i += 2;
                at_segment_start = true;
                continue;
            }
            if at_segment_start {
                out[i..=i].make_ascii_uppercase();
                at_segment_start = false;
            }
            i += 1;
        }
        return out;
    }
    let mut out = String::with_capacity(name.len());
    let mut at_segment_start = true;
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let n = c.len_utf8();
        if c == ':' && rest.as_bytes().get(1) == Some(&b':') {
            out.push_str("::");
            rest = &rest[2..];
            at_segment_start = true;
            continue;
        }
        if at_segment_start {
            if c.is_ascii() {
                out.push(c.to_ascii_uppercase());
            } else {
                out.extend(c.to_uppercase());
            }
            at_segment_start = false;
        } else {
            out.push(c);
        }
        rest = &rest[n..];
    }
    out
}

/// How Puppet classifies a catalog resource (`kind` in catalog_format 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    CompilableType,
    DefinedType,
    Class,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    #[serde(rename = "type")]
    pub type_name: String,
    pub title: String,
    /// Shared strings: most resources carry the same few tags (their containers').
    #[serde(default)]
    pub tags: Vec<std::sync::Arc<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default)]
    pub exported: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ResourceKind>,
    /// FxHash: parameter names are short, looked up often, and SipHash cost more than the
    /// rest of most lookups.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub parameters: crate::fxhash::FxIndexMap<String, Json>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitive_parameters: Vec<String>,
}

impl Resource {
    pub fn reference(&self) -> ResourceRef {
        ResourceRef::new(self.type_name.clone(), self.title.clone())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    pub source: String,
    pub target: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: Json,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_id: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_uuid: Option<String>,
    #[serde(default = "default_format")]
    pub catalog_format: u32,
    #[serde(default)]
    pub environment: String,
    pub resources: Vec<Resource>,
    #[serde(default)]
    pub edges: Vec<Edge>,
    #[serde(default)]
    pub classes: Vec<String>,
}

fn default_format() -> u32 {
    2
}

impl Catalog {
    pub fn new(name: impl Into<String>) -> Catalog {
        Catalog {
            tags: Vec::new(),
            name: name.into(),
            version: Json::from(0),
            code_id: None,
            catalog_uuid: None,
            catalog_format: 2,
            environment: "production".into(),
            resources: Vec::new(),
            edges: Vec::new(),
            classes: Vec::new(),
        }
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("a catalog always serialises")
    }
}

/// Pretty JSON exactly as `serde_json::to_writer_pretty` writes a [`Catalog`] (two-space
/// indent, `": "`, fields in declaration order, the same fields skipped), written straight
/// from the data: no `Serializer` machinery, strings copied in runs between escapes. The
/// text is built in a byte buffer (plain appends, no I/O error paths) that goes to the
/// writer whenever it holds [`pretty::CHUNK`] bytes, so memory stays bounded.
///
/// The pieces are open to the crate so that a writer holding the catalog in another form
/// (the compiler's resources, see `eval::CatalogSource`) writes the same text without
/// converting it first: [`pretty::catalog`] writes the catalog's own fields and asks a
/// [`pretty::Members`] for the resources and edges, which it writes with
/// [`pretty::ResourceOut`] and [`pretty::edge_with`].
pub(crate) mod pretty {
    use super::{Catalog, Edge, Resource, ResourceKind};
    use serde_json::Value as Json;
    use std::io::{self, Write};

    /// The buffer is handed to the writer once it is this full.
    pub(crate) const CHUNK: usize = 1 << 16;

    /// The text being written, and whether it is pretty (serde_json's `PrettyFormatter`:
    /// two-space indent, `": "`) or compact (its `CompactFormatter`: no white space).
    pub(crate) struct Buf {
        bytes: Vec<u8>,
        pretty: bool,
    }

    impl Buf {
        pub(crate) fn new(capacity: usize, pretty: bool) -> Buf {
            Buf {
                bytes: Vec::with_capacity(capacity),
                pretty,
            }
        }

        /// What goes between a key and its value.
        #[inline(always)]
        fn colon(&mut self) {
            if self.pretty {
                self.bytes.extend_from_slice(b": ")
            } else {
                self.bytes.push(b':')
            }
        }
    }

    impl std::ops::Deref for Buf {
        type Target = Vec<u8>;
        #[inline(always)]
        fn deref(&self) -> &Vec<u8> {
            &self.bytes
        }
    }

    impl std::ops::DerefMut for Buf {
        #[inline(always)]
        fn deref_mut(&mut self) -> &mut Vec<u8> {
            &mut self.bytes
        }
    }

    /// Writes a JSON object or array member by member, as serde_json's `PrettyFormatter`.
    pub(crate) struct Block {
        /// The depth of the members.
        pub(crate) depth: usize,
        first: bool,
    }

    fn indent(w: &mut Buf, depth: usize) {
        let len = w.len() + depth * 2;
        w.resize(len, b' ');
    }

    /// A new line, maybe after a comma (the first `.1` bytes), then spaces.
    type LineText = (&'static [u8; 18], usize);

    /// A new line and its indent (a member, or the closing bracket).
    const LINE: LineText = (b"\n                 ", 1);
    /// A comma, a new line and its indent (a member after the first).
    const COMMA_LINE: LineText = (b",\n                ", 2);

    /// `text`'s new line and the indent of `depth`: one fixed-size copy (no `memcpy` call)
    /// for the usual depths, the spaces past the indent cut off again. Compact text keeps
    /// only the comma.
    #[inline(always)]
    fn line_with(w: &mut Buf, (text, start): LineText, depth: usize) {
        if !w.pretty {
            if start > 1 {
                w.push(b',');
            }
            return;
        }
        let len = start + depth * 2;
        if len <= text.len() {
            let end = w.len() + len;
            w.extend_from_slice(text);
            w.truncate(end);
        } else {
            w.extend_from_slice(&text[..start]);
            indent(w, depth)
        }
    }

    impl Block {
        pub(crate) fn open(w: &mut Buf, depth: usize, bracket: u8) -> Block {
            w.push(bracket);
            Block {
                depth: depth + 1,
                first: true,
            }
        }

        /// Starts the next member (array element, or object entry after its key).
        #[inline(always)]
        pub(crate) fn next(&mut self, w: &mut Buf) {
            let text = if self.first { LINE } else { COMMA_LINE };
            self.first = false;
            line_with(w, text, self.depth)
        }

        pub(crate) fn key(&mut self, w: &mut Buf, key: &str) {
            self.next(w);
            string(w, key);
            w.colon();
        }

        /// [`Block::key`] for a field name of the format (plain ASCII, nothing to escape).
        /// Inlined: the name's length is known where it is written, which makes its copy a
        /// plain store.
        #[inline(always)]
        fn field(&mut self, w: &mut Buf, name: &'static str) {
            debug_assert!(name.bytes().all(|b| ESCAPE[b as usize] == 0));
            self.next(w);
            w.push(b'"');
            w.extend_from_slice(name.as_bytes());
            w.push(b'"');
            w.colon();
        }

        pub(crate) fn close(self, w: &mut Buf, bracket: u8) {
            if !self.first {
                line_with(w, LINE, self.depth - 1);
            }
            w.push(bracket);
        }
    }

    /// What a byte becomes in a JSON string: 0 for itself, `u` for `\u00XX`, else the
    /// letter after the backslash (serde_json's table).
    static ESCAPE: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut i = 0;
        while i < 0x20 {
            t[i] = b'u';
            i += 1;
        }
        t[0x08] = b'b';
        t[0x09] = b't';
        t[0x0a] = b'n';
        t[0x0c] = b'f';
        t[0x0d] = b'r';
        t[b'"' as usize] = b'"';
        t[b'\\' as usize] = b'\\';
        t
    };

    const ONES: u64 = 0x0101_0101_0101_0101;

    /// Whether one of the eight bytes of `v` needs an escape (a control byte, `"` or `\\`):
    /// the three tests' bits are gathered and tested once.
    #[inline(always)]
    fn needs_escape(v: u64) -> bool {
        const HIGH: u64 = 0x8080_8080_8080_8080;
        /// The high bit of each byte of `v` below `n` (maybe also of a byte after one).
        fn below(v: u64, n: u8) -> u64 {
            v.wrapping_sub(ONES * n as u64) & !v
        }
        let (quote, backslash) = (v ^ (ONES * b'"' as u64), v ^ (ONES * b'\\' as u64));
        (below(v, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH != 0
    }

    /// The first eight bytes of `s`, `fill` after its end when it is shorter: a word read
    /// with fixed-size copies (no `memcpy` call).
    #[inline(always)]
    pub(crate) fn word(s: &[u8], fill: u8) -> [u8; 8] {
        if let Some(w) = s.first_chunk::<8>() {
            return *w;
        }
        let mut a = [fill; 8];
        let mut at = 0;
        if let Some(w) = s.first_chunk::<4>() {
            a[..4].copy_from_slice(w);
            at = 4;
        }
        if let Some(w) = s[at..].first_chunk::<2>() {
            a[at..at + 2].copy_from_slice(w);
            at += 2;
        }
        if let Some(&b) = s.get(at) {
            a[at] = b;
        }
        a
    }

    /// The index of the first byte at or after `from` that needs an escape (`len` if
    /// none): eight bytes at a time (a word with one makes the scan go on byte by byte).
    fn next_escape(bytes: &[u8], from: usize) -> usize {
        let mut i = from;
        while let Some(word) = bytes[i..].first_chunk::<8>() {
            if needs_escape(u64::from_le_bytes(*word)) {
                break;
            }
            i += 8;
        }
        while i < bytes.len() && ESCAPE[bytes[i] as usize] == 0 {
            i += 1;
        }
        i
    }

    /// The text of a JSON string without its quotes, with serde_json's escapes.
    pub(crate) fn escaped(w: &mut Buf, s: &str) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let bytes = s.as_bytes();
        w.reserve(bytes.len());
        // Most strings need no escape: copied a word at a time as they are checked, the
        // last word padded with spaces (which need none) that are cut off again.
        let mut start = 0;
        loop {
            let rest = &bytes[start..];
            let a = word(rest, b' ');
            if needs_escape(u64::from_le_bytes(a)) {
                break;
            }
            if rest.len() <= 8 {
                let end = w.len() + rest.len();
                w.extend_from_slice(&a);
                w.truncate(end);
                return;
            }
            w.extend_from_slice(&a);
            start += 8;
        }
        loop {
            let i = next_escape(bytes, start);
            if i == bytes.len() {
                break;
            }
            let b = bytes[i];
            let e = ESCAPE[b as usize];
            w.extend_from_slice(&bytes[start..i]);
            if e == b'u' {
                let hex = [HEX[(b >> 4) as usize], HEX[(b & 0xf) as usize]];
                w.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex[0], hex[1]]);
            } else {
                w.extend_from_slice(&[b'\\', e]);
            }
            start = i + 1;
        }
        w.extend_from_slice(&bytes[start..]);
    }

    /// A JSON string with serde_json's escapes. Inlined for the most common strings
    /// (eight bytes or fewer, nothing to escape: names, tags, short values), which are
    /// written with two fixed-size copies.
    #[inline(always)]
    pub(crate) fn string(w: &mut Buf, s: &str) {
        let bytes = s.as_bytes();
        if bytes.len() <= 8 {
            let a = word(bytes, b' ');
            if !needs_escape(u64::from_le_bytes(a)) {
                let end = w.len() + 1 + bytes.len();
                let mut text = [b'"'; 9];
                text[1..].copy_from_slice(&a);
                w.extend_from_slice(&text);
                w.truncate(end);
                w.push(b'"');
                return;
            }
        }
        quoted(w, s)
    }

    /// [`string`] out of line.
    fn quoted(w: &mut Buf, s: &str) {
        w.reserve(s.len() + 2);
        w.push(b'"');
        escaped(w, s);
        w.push(b'"');
    }

    fn strings<'s>(w: &mut Buf, depth: usize, items: impl IntoIterator<Item = &'s str>) {
        let mut b = Block::open(w, depth, b'[');
        for s in items {
            b.next(w);
            string(w, s);
        }
        b.close(w, b']')
    }

    /// A decimal number as `write!` (and serde_json) prints it, without the formatting
    /// machinery.
    pub(crate) fn integer(w: &mut Buf, n: i64) {
        if n < 0 {
            w.push(b'-');
        }
        let mut n = n.unsigned_abs();
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        w.extend_from_slice(&digits[at..])
    }

    pub(crate) fn value(w: &mut Buf, depth: usize, v: &Json) {
        match v {
            Json::Null => w.extend_from_slice(b"null"),
            Json::Bool(b) => boolean(w, *b),
            Json::Number(n) => number(w, n),
            Json::String(s) => string(w, s),
            Json::Array(items) => {
                let mut b = Block::open(w, depth, b'[');
                for x in items {
                    b.next(w);
                    value(w, b.depth, x);
                }
                b.close(w, b']')
            }
            Json::Object(m) => {
                let mut b = Block::open(w, depth, b'{');
                for (k, x) in m {
                    b.key(w, k);
                    value(w, b.depth, x);
                }
                b.close(w, b'}')
            }
        }
    }

    pub(crate) fn boolean(w: &mut Buf, b: bool) {
        w.extend_from_slice(if b { b"true" } else { b"false" });
    }

    /// A JSON number as serde_json writes it.
    pub(crate) fn number(w: &mut Buf, n: &serde_json::Number) {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut w.bytes, n);
    }

    fn kind_name(k: ResourceKind) -> &'static [u8] {
        match k {
            ResourceKind::CompilableType => b"\"compilable_type\"",
            ResourceKind::DefinedType => b"\"defined_type\"",
            ResourceKind::Class => b"\"class\"",
            ResourceKind::Unknown => b"\"unknown\"",
        }
    }

    /// The fields of a resource before its tags.
    pub(crate) struct ResourceHead<'a> {
        pub(crate) type_name: &'a str,
        pub(crate) title: &'a str,
    }

    /// The fields of a resource between its tags and its parameters.
    pub(crate) struct ResourceMid<'a> {
        pub(crate) file: Option<&'a str>,
        pub(crate) line: Option<u32>,
        pub(crate) exported: bool,
        pub(crate) kind: Option<ResourceKind>,
    }

    /// Writes a resource object field by field, as [`Resource`] serialises: [`open`] writes
    /// the fields up to `kind`, [`param`] starts each parameter (the caller writes its
    /// value), [`close`] writes the sensitive parameters' names and ends it.
    ///
    /// [`open`]: ResourceOut::open
    /// [`param`]: ResourceOut::param
    /// [`close`]: ResourceOut::close
    pub(crate) struct ResourceOut {
        fields: Block,
        params: Option<Block>,
    }

    impl ResourceOut {
        pub(crate) fn open<'t>(
            w: &mut Buf,
            depth: usize,
            head: ResourceHead,
            tags: impl IntoIterator<Item = &'t str>,
            mid: ResourceMid,
        ) -> ResourceOut {
            let mut b = Block::open(w, depth, b'{');
            b.field(w, "type");
            string(w, head.type_name);
            b.field(w, "title");
            string(w, head.title);
            b.field(w, "tags");
            strings(w, b.depth, tags);
            if let Some(f) = mid.file {
                b.field(w, "file");
                string(w, f);
            }
            if let Some(l) = mid.line {
                b.field(w, "line");
                integer(w, l.into());
            }
            b.field(w, "exported");
            boolean(w, mid.exported);
            if let Some(k) = mid.kind {
                b.field(w, "kind");
                w.extend_from_slice(kind_name(k));
            }
            ResourceOut {
                fields: b,
                params: None,
            }
        }

        /// Starts the parameter `name`: its value, written next, is at the depth returned.
        pub(crate) fn param(&mut self, w: &mut Buf, name: &str) -> usize {
            let fields = &mut self.fields;
            let p = self.params.get_or_insert_with(|| {
                fields.field(w, "parameters");
                Block::open(w, fields.depth, b'{')
            });
            p.key(w, name);
            p.depth
        }

        /// Ends the resource with the names of its sensitive parameters.
        pub(crate) fn close<'s>(
            mut self,
            w: &mut Buf,
            sensitive: impl IntoIterator<Item = &'s str>,
        ) {
            if let Some(p) = self.params.take() {
                p.close(w, b'}');
            }
            let mut names = sensitive.into_iter().peekable();
            if names.peek().is_some() {
                self.fields.field(w, "sensitive_parameters");
                strings(w, self.fields.depth, names);
            }
            self.fields.close(w, b'}')
        }
    }

    fn resource(w: &mut Buf, depth: usize, r: &Resource) {
        let head = ResourceHead {
            type_name: &r.type_name,
            title: &r.title,
        };
        let mid = ResourceMid {
            file: r.file.as_deref(),
            line: r.line,
            exported: r.exported,
            kind: r.kind,
        };
        let mut out = ResourceOut::open(w, depth, head, r.tags.iter().map(|t| &**t), mid);
        for (k, v) in &r.parameters {
            let depth = out.param(w, k);
            value(w, depth, v);
        }
        out.close(w, r.sensitive_parameters.iter().map(String::as_str))
    }

    /// An edge object; `source` and `target` write the two (JSON string) values.
    pub(crate) fn edge_with(
        w: &mut Buf,
        depth: usize,
        source: impl FnOnce(&mut Buf),
        target: impl FnOnce(&mut Buf),
    ) {
        let mut b = Block::open(w, depth, b'{');
        b.field(w, "source");
        source(w);
        b.field(w, "target");
        target(w);
        b.close(w, b'}')
    }

    fn edge(w: &mut Buf, depth: usize, e: &Edge) {
        edge_with(w, depth, |w| string(w, &e.source), |w| string(w, &e.target))
    }

    /// The resources and edges of a catalog being written, one at a time.
    pub(crate) trait Members {
        /// Writes the next resource (an object at `depth`); false when there is none left.
        fn resource(&mut self, w: &mut Buf, depth: usize) -> bool;
        /// Writes the next edge, as [`Members::resource`]; asked for after every resource.
        fn edge(&mut self, w: &mut Buf, depth: usize) -> bool;
        /// Writes the array of resources (opened at `depth`), handing the text to `out` as
        /// it goes: by default one [`Members::resource`] at a time.
        fn resources(&mut self, w: &mut Buf, out: &mut impl Write, depth: usize) -> io::Result<()> {
            streamed(w, out, depth, |w, d| self.resource(w, d))
        }
    }

    /// A catalog's own resources and edges.
    struct Own<'c> {
        resources: std::slice::Iter<'c, Resource>,
        edges: std::slice::Iter<'c, Edge>,
    }

    impl Members for Own<'_> {
        fn resource(&mut self, w: &mut Buf, depth: usize) -> bool {
            self.resources
                .next()
                .map(|r| resource(w, depth, r))
                .is_some()
        }

        fn edge(&mut self, w: &mut Buf, depth: usize) -> bool {
            self.edges.next().map(|e| edge(w, depth, e)).is_some()
        }
    }

    /// Hands the buffer to the writer once it is [`CHUNK`] full.
    pub(crate) fn spill(buf: &mut Buf, out: &mut impl Write) -> io::Result<()> {
        if buf.len() >= CHUNK {
            out.write_all(buf)?;
            buf.clear();
        }
        Ok(())
    }

    /// Adds a member to `list`, written by `one` (at the list's depth); when `one` writes
    /// nothing (false), the separator is taken back too.
    pub(crate) fn member(
        w: &mut Buf,
        list: &mut Block,
        one: impl FnOnce(&mut Buf, usize) -> bool,
    ) -> bool {
        let (len, first) = (w.len(), list.first);
        list.next(w);
        if one(w, list.depth) {
            return true;
        }
        w.truncate(len);
        list.first = first;
        false
    }

    /// A JSON array of members, each written by `one` until it says there are no more,
    /// handed to `out` as the buffer fills.
    pub(crate) fn streamed(
        w: &mut Buf,
        out: &mut impl Write,
        depth: usize,
        mut one: impl FnMut(&mut Buf, usize) -> bool,
    ) -> io::Result<()> {
        let mut list = Block::open(w, depth, b'[');
        while member(w, &mut list, &mut one) {
            spill(w, out)?;
        }
        list.close(w, b']');
        Ok(())
    }

    /// The catalog `c`, with the resources and edges of `members` in place of its own,
    /// pretty or compact.
    pub(crate) fn catalog(
        out: &mut impl Write,
        c: &Catalog,
        members: &mut impl Members,
        pretty: bool,
    ) -> io::Result<()> {
        let mut buf = Buf::new(CHUNK + (CHUNK >> 2), pretty);
        let w = &mut buf;
        let mut b = Block::open(w, 0, b'{');
        b.field(w, "tags");
        strings(w, b.depth, c.tags.iter().map(String::as_str));
        b.field(w, "name");
        string(w, &c.name);
        b.field(w, "version");
        value(w, b.depth, &c.version);
        if let Some(id) = &c.code_id {
            b.field(w, "code_id");
            value(w, b.depth, id);
        }
        if let Some(u) = &c.catalog_uuid {
            b.field(w, "catalog_uuid");
            string(w, u);
        }
        b.field(w, "catalog_format");
        integer(w, c.catalog_format.into());
        b.field(w, "environment");
        string(w, &c.environment);
        b.field(w, "resources");
        members.resources(w, out, b.depth)?;
        b.field(w, "edges");
        streamed(w, out, b.depth, |w, d| members.edge(w, d))?;
        b.field(w, "classes");
        strings(w, b.depth, c.classes.iter().map(String::as_str));
        b.close(w, b'}');
        out.write_all(w)
    }

    /// [`catalog`] with the catalog's own resources and edges.
    pub(super) fn own_catalog(out: &mut impl Write, c: &Catalog, pretty: bool) -> io::Result<()> {
        let mut own = Own {
            resources: c.resources.iter(),
            edges: c.edges.iter(),
        };
        catalog(out, c, &mut own, pretty)
    }
}

impl Catalog {
    /// Writes the catalog as [`Catalog::to_json_pretty`] renders it (byte for byte), without
    /// building the text in memory first. Use a buffered writer.
    pub fn write_pretty(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        pretty::own_catalog(w, self, true)
    }

    /// Writes the catalog as compact JSON, as `serde_json::to_writer` (and `puppet catalog
    /// compile --render-as json`) does: no white space. Use a buffered writer.
    pub fn write_compact(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        pretty::own_catalog(w, self, false)
    }

    /// [`Catalog::write_pretty`] when `pretty`, else [`Catalog::write_compact`].
    pub fn write_json(&self, w: &mut impl std::io::Write, pretty: bool) -> std::io::Result<()> {
        pretty::own_catalog(w, self, pretty)
    }
}

/// The containment edges met so far, to drop repeated ones. A resource has one container
/// but for a class (also in its stage): each resource's first container is kept in a
/// vector, and only an edge to a second one goes to a set (a set of every edge cost a hash
/// and a probe each; comparing lists, N^2/2 comparisons for a class of N resources).
#[derive(Default)]
pub struct ContainmentSeen {
    first: Vec<usize>,
    more: FastSet<(usize, usize)>,
}

impl ContainmentSeen {
    /// Records the edge `container -> member`; false when it was met already.
    pub fn insert(&mut self, container: usize, member: usize) -> bool {
        if self.first.len() <= member {
            self.first.resize(member + 1, usize::MAX);
        }
        match self.first[member] {
            usize::MAX => {
                self.first[member] = container;
                true
            }
            f => f != container && self.more.insert((container, member)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Catalog {
        let mut c = Catalog::new("node.example.com");
        c.tags = vec!["class".into(), "a\"b".into()];
        c.code_id = Some(Json::Null);
        c.catalog_uuid = Some("u-1".into());
        let mut params = crate::fxhash::FxIndexMap::default();
        params.insert("s".into(), Json::String("x\ny\t\u{1}\u{7f}é\\/".into()));
        // Long strings, escapes at every offset of an eight-byte word and none.
        for k in 0..20 {
            let mut s = "abcdefghijklmnopqrstuvwxyzé0123".repeat(2);
            s.insert(k, ['"', '\\', '\n', '\u{1f}', '\u{7f}'][k % 5]);
            params.insert(format!("long{k}"), Json::String(s));
        }
        params.insert(
            "plain".into(),
            Json::String("a plain string of 33 characters".into()),
        );
        params.insert(
            "n".into(),
            serde_json::json!([1, -2, 3.5, 1e300, 0.1, true, null, [], {}, [[]], {"k": {"j": [1]}}]),
        );
        c.resources.push(Resource {
            type_name: "File".into(),
            title: "/tmp/x".into(),
            tags: vec![],
            file: Some("site.pp".into()),
            line: Some(3),
            exported: true,
            kind: Some(ResourceKind::CompilableType),
            parameters: params,
            sensitive_parameters: vec!["s".into()],
        });
        c.resources.push(Resource {
            type_name: "Class".into(),
            title: "Main".into(),
            tags: vec!["class".into()],
            file: None,
            line: None,
            exported: false,
            kind: None,
            parameters: Default::default(),
            sensitive_parameters: vec![],
        });
        c.edges.push(Edge {
            source: "Class[Main]".into(),
            target: "File[/tmp/x]".into(),
        });
        c
    }

    #[test]
    fn write_pretty_is_serde_pretty() {
        for c in [sample(), Catalog::new("")] {
            let mut out = vec![];
            c.write_pretty(&mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), c.to_json_pretty());
        }
    }

    #[test]
    fn write_compact_is_serde_compact() {
        for c in [sample(), Catalog::new("")] {
            let mut out = vec![];
            c.write_compact(&mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert_eq!(text, serde_json::to_string(&c).unwrap());
            assert!(!text.contains('\n') && !text.contains(": "), "{text}");
        }
    }

    #[test]
    fn numbers_and_deep_values_are_as_serde_writes_them() {
        let mut c = sample();
        for (i, line) in [0, 9, 10, 99, 1000, 4_294_967_295].into_iter().enumerate() {
            let mut r = c.resources[0].clone();
            r.title = format!("/tmp/{i}");
            r.line = Some(line);
            // Deeper than the indents written in one copy.
            let mut deep = serde_json::json!({"k": [1]});
            for _ in 0..20 {
                deep = Json::Array(vec![deep]);
            }
            r.parameters.insert("deep".into(), deep);
            c.resources.push(r);
        }
        let mut out = vec![];
        c.write_pretty(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), c.to_json_pretty());
        let mut out = vec![];
        c.write_compact(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&c).unwrap()
        );
    }

    #[test]
    fn strings_of_any_length_are_escaped_as_serde_does() {
        for len in 0..26 {
            let plain: String = "abcdefghijklmnopqrstuvwxyz"[..len].into();
            let mut cases = vec![plain.clone(), format!("{plain}é"), format!("é{plain}")];
            for at in 0..len {
                for c in ['"', '\\', '\n', '\u{0}', '\u{1f}', ' ', '\u{7f}', 'é'] {
                    let mut s = plain.clone();
                    s.replace_range(at..at + 1, &c.to_string());
                    cases.push(s);
                }
            }
            for s in cases {
                let mut out = pretty::Buf::new(0, true);
                pretty::string(&mut out, &s);
                assert_eq!(
                    String::from_utf8(out.to_vec()).unwrap(),
                    serde_json::to_string(&s).unwrap()
                );
            }
        }
    }

    #[test]
    fn trim_colons_is_trim_start_matches() {
        for s in ["", ":", "::", ":::", "::::a", "::a::b", "a::", ":a", "a"] {
            assert_eq!(s.trim_colons(), s.trim_start_matches("::"), "{s:?}");
        }
    }

    #[test]
    fn capitalize_type_capitalises_each_segment() {
        assert_eq!(capitalize_type("foo::bar"), "Foo::Bar");
        assert_eq!(capitalize_type("::foo"), "Foo");
        assert_eq!(capitalize_type("élan::x"), "Élan::X");
        assert_eq!(capitalize_type("a::::b"), "A::::B");
        assert_eq!(capitalize_type(""), "");
    }
}
