//! Turning the compiled resources into the catalog data model.

use super::catalog_ops::RELATIONSHIP_PARAMS;
use crate::catalog::{capitalize_type, pretty, Catalog, Edge, Resource};
use crate::eval::compiler::{Compiler, Res};
use crate::eval::values::value::Value;
use crate::fxhash::FxHashMap;
use indexmap::IndexMap;
use serde_json::Value as Json;

fn included(r: &Res) -> bool {
    !r.virtual_ && !r.dropped
}

/// The namevar of each resource type, looked up once per type.
type Namevars = FxHashMap<String, Option<String>>;

/// A resource's namevar attribute (none for classes and Stage[main]).
fn namevar<'n>(namevars: &'n Namevars, r: &Res) -> Option<&'n str> {
    // A title that was not a string is not equal to its namevar's value in Puppet's eyes:
    // the catalog keeps both.
    if (r.type_name == "Stage" && r.title == "main") || r.untagged_title {
        return None;
    }
    namevars.get(&r.type_name).and_then(|n| n.as_deref())
}

impl Compiler<'_> {
    /// The namevar attribute of a resource type (`name` for defined types).
    fn namevar_of(&self, type_name: &str) -> Option<String> {
        if type_name == "Class" {
            return None;
        }
        match crate::eval::types::builtin_types::find(&type_name.to_lowercase()) {
            Some(b) => b.namevars.first().map(|n| n.to_string()),
            // Puppet's `Resource#namevar`: a type of several key attributes has `name`.
            None => match self.loader.type_schema(&type_name.to_lowercase()) {
                Some(s) if s.namevars.len() > 1 => Some("name".into()),
                _ => self.ruby_namevar(type_name).or(Some("name".into())),
            },
        }
    }

    /// The namevars of the types of the catalog's resources.
    fn namevars(&self) -> Namevars {
        let mut out = Namevars::default();
        for r in self.resources.iter().filter(|r| included(r)) {
            if !out.contains_key(&r.type_name) {
                out.insert(r.type_name.clone(), self.namevar_of(&r.type_name));
            }
        }
        out
    }

    /// The name of the file a resource was declared in.
    fn file_name(&self, r: &Res) -> Option<String> {
        r.file
            .and_then(|f| self.sources.get(f))
            .map(|f| f.name.clone())
    }

    /// Builds the catalog, moving the parameters and tags out of the compiled resources
    /// (this is the last use of them; the compiler keeps types, titles and spans).
    pub(in crate::eval) fn build_catalog(&mut self) -> Catalog {
        let mut warnings = vec![];
        for r in self.resources.iter().filter(|r| included(r)) {
            rich_data_warnings_of(r, || self.line_location(r.file, r.line), &mut warnings);
        }
        let namevars = self.namevars();
        let files = self.file_names();
        let mut cat = self.catalog_header();
        let convert = |rs: &mut [Box<Res>], out: &mut Vec<Resource>| {
            for r in rs.iter_mut().filter(|r| included(r)) {
                let file = r.file.and_then(|f| files.get(&f).cloned().flatten());
                let namevar = namevar(&namevars, r);
                out.push(catalog_resource(r, namevar, file));
            }
        };
        cat.resources
            .reserve(self.resources.iter().filter(|r| included(r)).count());
        convert(&mut self.resources, &mut cat.resources);
        cat.edges = catalog_edges(&self.resources, &self.containment);
        for w in warnings {
            self.log(crate::eval::LogLevel::Warning, w);
        }
        cat
    }

    /// The names of the files the catalog's resources were declared in.
    fn file_names(&self) -> FxHashMap<crate::span::FileId, Option<String>> {
        let mut files = FxHashMap::default();
        for r in self.resources.iter().filter(|r| included(r)) {
            if let Some(f) = r.file {
                files.entry(f).or_insert_with(|| self.file_name(r));
            }
        }
        files
    }

    /// The catalog without resources and edges.
    fn catalog_header(&self) -> Catalog {
        let mut cat = Catalog::new(self.opts.node.clone());
        cat.classes = self.class_list.clone();
        cat.tags = self
            .catalog_tags
            .iter()
            .map(|t| String::from(&**t))
            .collect();
        cat
    }

    /// What [`Compiler::build_catalog`] would build, handed over for writing: the
    /// resources, edges and what converting them needs, taken out of the compiler (which is
    /// done with them). Logs the warnings about parameter values now, as `build_catalog`
    /// does.
    pub(in crate::eval) fn catalog_source(&mut self) -> CatalogSource {
        let mut warnings = vec![];
        for r in self.resources.iter().filter(|r| included(r)) {
            rich_data_warnings_of(r, || self.line_location(r.file, r.line), &mut warnings);
        }
        for w in warnings {
            self.log(crate::eval::LogLevel::Warning, w);
        }
        CatalogSource {
            header: self.catalog_header(),
            namevars: self.namevars(),
            files: self.file_names(),
            resources: std::mem::take(&mut self.resources),
            containment: std::mem::take(&mut self.containment),
        }
    }
}

/// A compiled catalog not built yet: the compiler's resources, converted one at a time as
/// they are written, so that the whole catalog never sits in memory next to them (`ordo
/// compile` of a big manifest). See [`Compiler::catalog_source`].
pub struct CatalogSource {
    /// The catalog's own fields (tags, name, classes, ...).
    header: Catalog,
    namevars: Namevars,
    files: FxHashMap<crate::span::FileId, Option<String>>,
    #[allow(clippy::vec_box)] // as the compiler's (see `Compiler::resources`)
    resources: Vec<Box<Res>>,
    containment: Vec<(usize, usize)>,
}

impl CatalogSource {
    /// Writes the catalog exactly as [`Catalog::write_json`] writes the one
    /// `build_catalog` builds (pretty or compact), straight from the compiler's resources
    /// (nothing converted, nothing copied but into the text).
    pub fn write_json(&self, w: &mut impl std::io::Write, pretty: bool) -> std::io::Result<()> {
        pretty::catalog(w, &self.header, &mut ResMembers::new(self), pretty)
    }
}

/// The resources and edges of a [`CatalogSource`], written as the catalog's.
struct ResMembers<'a> {
    source: &'a CatalogSource,
    /// The next resource to look at, and where to stop.
    next: usize,
    end: usize,
    edges: EdgeCursor,
    /// The tags of the resource being written, sorted (kept for its buffer, and for the
    /// next resource, which often has the same).
    tags: SortedTags<'a>,
    /// The last resource type written and its namevar.
    namevar: Option<(&'a str, Option<&'a str>)>,
    /// The last edge source written and its JSON text (containers have many edges).
    last_source: Option<(usize, Vec<u8>)>,
}

impl<'a> ResMembers<'a> {
    fn new(source: &'a CatalogSource) -> ResMembers<'a> {
        ResMembers {
            source,
            next: 0,
            end: source.resources.len(),
            edges: EdgeCursor::default(),
            tags: SortedTags::default(),
            namevar: None,
            last_source: None,
        }
    }
}

impl pretty::Members for ResMembers<'_> {
    fn resource(&mut self, w: &mut pretty::Buf, depth: usize) -> bool {
        let src = self.source;
        while self.next < self.end && !included(&src.resources[self.next]) {
            self.next += 1;
        }
        if self.next >= self.end {
            return false;
        }
        let r = &src.resources[self.next];
        self.next += 1;
        let file = r
            .file
            .and_then(|f| src.files.get(&f))
            .and_then(Option::as_deref);
        // Resources of a type mostly come together (Stage[main] has no namevar, other
        // stages have one: not kept).
        let namevar = match self.namevar {
            _ if r.untagged_title => None,
            Some((t, n)) if t == r.type_name => n,
            _ => {
                let n = namevar(&src.namevars, r);
                if r.type_name != "Stage" {
                    self.namevar = Some((&r.type_name, n));
                }
                n
            }
        };
        write_resource(w, depth, r, namevar, file, &mut self.tags);
        true
    }

    fn edge(&mut self, w: &mut pretty::Buf, depth: usize) -> bool {
        let resources = &self.source.resources;
        let Some((s, t)) = self.edges.next(resources, &self.source.containment) else {
            return false;
        };
        let last = &mut self.last_source;
        pretty::edge_with(
            w,
            depth,
            |w| match last {
                Some((i, text)) if *i == s => w.extend_from_slice(text),
                _ => {
                    let from = w.len();
                    write_reference(w, &resources[s]);
                    *last = Some((s, w[from..].to_vec()));
                }
            },
            |w| write_reference(w, &resources[t]),
        );
        true
    }
}

/// A resource's reference as a JSON string: `"Type[title]"` as [`Res::reference`] makes it.
fn write_reference(w: &mut pretty::Buf, r: &Res) {
    w.push(b'"');
    if r.type_name == "Class" {
        w.extend_from_slice(b"Class[");
        pretty::escaped(w, &capitalize_type(&r.title));
    } else {
        pretty::escaped(w, &r.type_name);
        w.push(b'[');
        pretty::escaped(w, &r.title);
    }
    w.extend_from_slice(b"]\"");
}

/// The sorted tags of the last resource written, and its tags as they were (the next
/// resource, often of the same container and type, may have the very same: no new sort).
#[derive(Default)]
struct SortedTags<'a> {
    sorted: Vec<(u64, &'a str)>,
    of: Option<&'a super::tags::Tags>,
}

impl<'a> SortedTags<'a> {
    /// The tags of `r`, sorted.
    fn of(&mut self, r: &'a Res) -> &[(u64, &'a str)] {
        let same = self.of.is_some_and(|of| {
            of.len() == r.tags.len()
                && of
                    .iter()
                    .zip(r.tags.iter())
                    .all(|(a, b)| std::sync::Arc::ptr_eq(a, b) || a == b)
        });
        if !same {
            self.of = Some(&r.tags);
            self.sorted.clear();
            self.sorted.extend(r.tags.iter().map(|t| tag_key(&**t)));
            sort_tags(&mut self.sorted);
        }
        &self.sorted
    }
}

/// Writes a compiled resource as [`catalog_resource`] converts it and the catalog writes
/// it; `tags` keeps its sorted tags.
fn write_resource<'a>(
    w: &mut pretty::Buf,
    depth: usize,
    r: &'a Res,
    namevar: Option<&str>,
    file: Option<&str>,
    tags: &mut SortedTags<'a>,
) {
    let tags = tags.of(r);
    let class_title;
    let title = if r.type_name == "Class" {
        class_title = capitalize_type(&r.title);
        &class_title
    } else {
        &r.title
    };
    let head = pretty::ResourceHead {
        type_name: &r.type_name,
        title,
    };
    let mid = pretty::ResourceMid {
        file,
        line: r.line,
        exported: r.exported,
        kind: Some(r.kind),
    };
    let mut out = pretty::ResourceOut::open(w, depth, head, tags.iter().map(|(_, t)| *t), mid);
    for (k, v) in &r.params {
        let v = match v {
            Value::Sensitive(inner) => &**inner,
            other => other,
        };
        if RELATIONSHIP_PARAMS.contains(&&**k) {
            match v {
                // Flattened, without undef.
                Value::Array(_) => {
                    let depth = out.param(w, k);
                    let mut b = pretty::Block::open(w, depth, b'[');
                    for_each_leaf(v, &mut |x| {
                        b.next(w);
                        write_value(w, b.depth, x);
                    });
                    b.close(w, b']');
                    continue;
                }
                Value::Undef => {
                    out.param(w, k);
                    w.extend_from_slice(b"[]");
                    continue;
                }
                // One value, as any parameter's.
                _ => {}
            }
        }
        if json_is_null(v) {
            continue;
        }
        // Puppet does not repeat the title as the namevar.
        if namevar == Some(&**k) && json_string(v).as_deref() == Some(r.title.as_str()) {
            continue;
        }
        let depth = out.param(w, k);
        write_value(w, depth, v);
    }
    let sensitive = r.params.iter().filter_map(|(k, v)| match v {
        Value::Sensitive(_) => Some(&**k),
        _ => None,
    });
    out.close(w, sensitive)
}

/// Sorts tags in byte order, as `sort_unstable`, each given with its [`tag_key`]: most
/// pairs differ in their first eight bytes, which spares comparing the rest.
fn sort_tags<T: std::ops::Deref<Target = str>>(tags: &mut [(u64, T)]) {
    tags.sort_unstable_by(|(ka, a), (kb, b)| ka.cmp(kb).then_with(|| (**a).cmp(&**b)));
}

/// [`sort_tags`] of plain tags, in place (the catalog takes the compiler's list).
fn sort_tag_list(tags: &mut [std::sync::Arc<str>]) {
    let key = |t: &str| u64::from_be_bytes(pretty::word(t.as_bytes(), 0));
    tags.sort_unstable_by(|a, b| key(a).cmp(&key(b)).then_with(|| (**a).cmp(&**b)));
}

/// A tag with its first eight bytes as a number that sorts as they do.
fn tag_key<T: std::ops::Deref<Target = str>>(tag: T) -> (u64, T) {
    (u64::from_be_bytes(pretty::word(tag.as_bytes(), 0)), tag)
}

/// Calls `f` on the values of an array and its nested arrays, in order, but undef
/// (`flatten_values`, without copying).
fn for_each_leaf<'v>(v: &'v Value, f: &mut impl FnMut(&'v Value)) {
    match v {
        Value::Array(items) => items.iter().for_each(|x| for_each_leaf(x, f)),
        Value::Undef => {}
        other => f(other),
    }
}

/// Whether [`Value::to_json`] makes `null` of a value.
fn json_is_null(v: &Value) -> bool {
    match v {
        Value::Undef => true,
        Value::Float(f) => !f.is_finite(),
        _ => false,
    }
}

/// The string [`Value::to_json`] makes of a value, if it makes one.
fn json_string(v: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match v {
        Value::Str(s) => Some(s.into()),
        Value::Default | Value::Regex(_) | Value::Type(_) => match v.to_json() {
            Json::String(s) => Some(s.into()),
            _ => None,
        },
        _ => None,
    }
}

/// Writes a value as [`Value::to_json`] converts it and the catalog writes that.
fn write_value(w: &mut pretty::Buf, depth: usize, v: &Value) {
    match v {
        Value::Undef => w.extend_from_slice(b"null"),
        Value::Bool(b) => pretty::boolean(w, *b),
        Value::Int(i) => pretty::integer(w, *i),
        Value::Str(s) => pretty::string(w, s),
        Value::Array(items) => {
            let mut b = pretty::Block::open(w, depth, b'[');
            for x in items {
                b.next(w);
                write_value(w, b.depth, x);
            }
            b.close(w, b']')
        }
        // Other keys are shown as strings, which may then coincide: JSON keeps one.
        Value::Hash(h) if h.keys().all(|k| matches!(k, Value::Str(_))) => {
            let mut b = pretty::Block::open(w, depth, b'{');
            for (k, x) in h.iter() {
                if let Value::Str(k) = k {
                    b.key(w, k);
                    write_value(w, b.depth, x);
                }
            }
            b.close(w, b'}')
        }
        Value::Sensitive(inner) => {
            let mut b = pretty::Block::open(w, depth, b'{');
            b.key(w, "__ptype");
            pretty::string(w, "Sensitive");
            b.key(w, "__pvalue");
            write_value(w, b.depth, inner);
            b.close(w, b'}')
        }
        other => pretty::value(w, depth, &other.to_json()),
    }
}

/// Walks the containment pairs, yielding each edge between catalog resources once.
#[derive(Default)]
struct EdgeCursor {
    next: usize,
    seen: crate::catalog::ContainmentSeen,
}

impl EdgeCursor {
    /// The next edge, as the indexes of its source and target.
    fn next(
        &mut self,
        resources: &[Box<Res>],
        containment: &[(usize, usize)],
    ) -> Option<(usize, usize)> {
        while let Some(&(s, t)) = containment.get(self.next) {
            self.next += 1;
            if included(&resources[s]) && included(&resources[t]) && self.seen.insert(s, t) {
                return Some((s, t));
            }
        }
        None
    }
}

/// The catalog's containment edges. Sized up front (growing a vector of 100,000 edges by
/// doubling copied it a dozen times); consecutive edges mostly leave the same container,
/// whose reference is then copied rather than formatted again.
fn catalog_edges(resources: &[Box<Res>], containment: &[(usize, usize)]) -> Vec<Edge> {
    let mut cursor = EdgeCursor::default();
    let mut edges = Vec::with_capacity(containment.len());
    let mut last: Option<(usize, &String)> = None;
    while let Some((s, t)) = cursor.next(resources, containment) {
        let source = match last {
            Some((at, text)) if at == s => text.clone(),
            _ => resources[s].reference(),
        };
        edges.push(Edge {
            source,
            target: resources[t].reference(),
        });
        last = edges.last().map(|e| (s, &e.source));
    }
    edges
}

/// Puppet's warnings about parameter values JSON cannot carry, for one resource, in the
/// order [`catalog_resource`] meets the parameters.
/// `at`: the resource's location, ` (file: x.pp, line: 3)` or empty, asked for only when
/// the resource has something to warn about.
fn rich_data_warnings_of(r: &Res, at: impl FnOnce() -> String, out: &mut Vec<String>) {
    // Puppet's ToDataConverter appends each warning's path to its message prefix in place
    // (`s = @message_prefix; s << path`), so the paths of a resource's later warnings
    // start with those of the earlier ones: kept here as Puppet prints them.
    let mut context: Option<(String, String)> = None;
    let mut at = Some(at);
    let mut path = Vec::new();
    for (k, v) in &r.params {
        // The cheap test first: most values are plain.
        if has_rich_data(v) && !RELATIONSHIP_PARAMS.contains(&&**k) {
            let (prefix, at) = context.get_or_insert_with(|| {
                let at = at.take().map_or_else(String::new, |f| f());
                (r.reference_shown(), at)
            });
            path.push(Value::Str(k.to_string()));
            let mut w = Warner {
                prefix,
                path: &mut path,
                at,
                out,
            };
            w.walk(v);
            path.clear();
        }
    }
}

/// Walks a parameter value as Puppet's ToDataConverter (without rich data) does.
struct Warner<'w> {
    prefix: &'w mut String,
    path: &'w mut Vec<Value>,
    /// ` (file: x.pp, line: 3)`, or empty.
    at: &'w str,
    out: &'w mut Vec<String>,
}

impl Warner<'_> {
    fn warn(&mut self, what: std::fmt::Arguments<'_>) {
        // The JSON path of the current position: `['message'][0]`.
        for seg in self.path.iter() {
            self.prefix.push('[');
            match seg {
                Value::Str(s) => self
                    .prefix
                    .push_str(&crate::eval::values::value::quote_string(s)),
                other => self.prefix.push_str(&other.to_display()),
            }
            self.prefix.push(']');
        }
        let at = if self.at.is_empty() {
            String::new()
        } else {
            format!(" {}", self.at)
        };
        self.out.push(format!("{} {what}{at}", self.prefix));
    }

    fn walk(&mut self, v: &Value) {
        match v {
            Value::Default => {
                self.warn(format_args!(
                    "contains the special value default. It will be converted to the String 'default'"
                ));
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    self.path.push(Value::Int(i as i64));
                    self.walk(x);
                    self.path.pop();
                }
            }
            Value::Hash(h) => {
                for (k, x) in h {
                    let key = match k {
                        Value::Str(_) => k.clone(),
                        other => {
                            let shown = ruby_to_s(other);
                            let class = a_an_class(other);
                            self.warn(format_args!(
                                "contains a hash with {class} key. It will be converted to the String '{shown}'"
                            ));
                            Value::Str(shown)
                        }
                    };
                    self.path.push(key);
                    self.walk(x);
                    self.path.pop();
                }
            }
            Value::Sensitive(inner) => self.walk(inner),
            // Resource and class types (`Notify`, `Notify['x']`, `Class['c']`) become
            // references without a word.
            Value::Type(t)
                if !matches!(
                    **t,
                    crate::eval::types::PType::Resource(..) | crate::eval::types::PType::Class(..)
                ) =>
            {
                let name = match &**t {
                    crate::eval::types::PType::Alias(..) => "TypeAlias".to_string(),
                    other => {
                        let full = other.generalize().to_string();
                        full.split('[').next().unwrap_or(&full).to_string()
                    }
                };
                let label = crate::eval::values::strings::a_an(&format!("{name}-Type"));
                self.warn(format_args!(
                    "contains {label} value. It will be converted to the String '{t}'"
                ));
            }
            Value::Regex(r) => {
                self.warn(format_args!(
                    "contains a Regexp value. It will be converted to the String '{}'",
                    crate::eval::values::value::regex_inspect(&r.source)
                ));
            }
            Value::Deferred(d) => {
                let shown = d.shown();
                self.warn(format_args!(
                    "contains a Deferred value. It will be converted to the String '{shown}'"
                ));
            }
            Value::Timestamp(t) => {
                self.warn(format_args!(
                    "contains a Puppet::Pops::Time::Timestamp value. It will be converted to the String '{t}'"
                ));
            }
            Value::Binary(_) => {
                let text = v.to_display();
                self.warn(format_args!(
                    "contains a Puppet::Pops::Types::PBinaryType::Binary value. It will be converted to the String '{text}'"
                ));
            }
            _ => {}
        }
    }
}

/// Ruby's `to_s` of a hash key that is not a string (`[\"a\", 1]`, `1`, `true`).
fn ruby_to_s(v: &Value) -> String {
    match v {
        Value::Array(_) | Value::Hash(_) => crate::eval::values::ruby_print::ruby_inspect(v),
        Value::Undef => String::new(),
        other => other.to_display(),
    }
}

/// The Ruby class of a hash key, with its article (`an Integer`, `an Array`).
fn a_an_class(v: &Value) -> String {
    let class = match v {
        Value::Int(_) => "Integer",
        Value::Float(_) => "Float",
        Value::Bool(true) => "TrueClass",
        Value::Bool(false) => "FalseClass",
        Value::Undef => "NilClass",
        Value::Array(_) => "Array",
        Value::Hash(_) => "Hash",
        Value::Regex(_) => "Regexp",
        _ => "Object",
    };
    crate::eval::values::strings::a_an(class)
}

/// The catalog form of a compiled resource, its parameters and tags moved out (this is the
/// last use of them).
fn catalog_resource(r: &mut Res, namevar: Option<&str>, file: Option<String>) -> Resource {
    let mut params: crate::fxhash::FxIndexMap<String, Json> =
        IndexMap::with_capacity_and_hasher(r.params.len(), Default::default());
    let mut sensitive = vec![];
    for (k, v) in std::mem::take(&mut r.params) {
        let v = match v {
            Value::Sensitive(inner) => {
                sensitive.push(k.to_string());
                *inner
            }
            other => other,
        };
        let j = if RELATIONSHIP_PARAMS.contains(&&*k) {
            // `flatten_values`, without copying the references first.
            let mut items: Vec<Json> = Vec::new();
            for_each_leaf(&v, &mut |x| items.push(reference_json(x)));
            match (&v, items.len()) {
                (Value::Array(_), _) => Json::Array(items),
                (_, 1) => items.into_iter().next().unwrap_or(Json::Null),
                _ => Json::Array(items),
            }
        } else {
            v.into_json()
        };
        // Puppet does not repeat the title as the namevar.
        if namevar == Some(&*k) && j.as_str() == Some(r.title.as_str()) {
            continue;
        }
        if !j.is_null() {
            params.insert(k.to_string(), j);
        }
    }
    let title = if r.type_name == "Class" {
        capitalize_type(&r.title)
    } else {
        r.title.clone()
    };
    let mut tags = std::mem::take(&mut r.tags).into_vec();
    sort_tag_list(&mut tags);
    // Not read after this: free them now, for the catalog's strings to reuse.
    r.setters = Default::default();
    Resource {
        type_name: r.type_name.clone(),
        title,
        tags,
        file,
        line: r.line,
        exported: r.exported,
        kind: Some(r.kind),
        parameters: params,
        sensitive_parameters: sensitive,
    }
}

/// [`Value::to_json`] of a relationship value: a resource reference (most are) is written
/// `Type[title]` straight into a string sized for it, not through `format!`.
fn reference_json(v: &Value) -> Json {
    if let Value::Type(t) = v {
        if let crate::eval::types::PType::Resource(Some(t), Some(title)) = &**t {
            let mut s = String::with_capacity(t.len() + title.len() + 2);
            s.push_str(t);
            s.push('[');
            s.push_str(title);
            s.push(']');
            return Json::String(s);
        }
    }
    v.to_json()
}

/// Whether a value holds something [`rich_data_warnings`] may warn about (a type).
fn has_rich_data(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(has_rich_data),
        Value::Hash(h) => h
            .iter()
            .any(|(k, x)| !matches!(k, Value::Str(_)) || has_rich_data(x)),
        Value::Sensitive(inner) => has_rich_data(inner),
        Value::Type(_)
        | Value::Deferred(_)
        | Value::Timestamp(_)
        | Value::Binary(_)
        | Value::Default
        | Value::Regex(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::eval::{compile_catalog, compile_to_write, CompileOptions, NoModules};

    /// Values of every kind, sensitive ones, relationship parameters of every shape, a
    /// namevar repeating the title, hashes whose keys show alike, escapes.
    const MANIFEST: &str = r#"
define d($x = undef) { notify { "in ${title}": message => $x } }
class c($p = 1) { notify { 'in c': } }
class { 'c': p => [1, { 'k' => undef }] }
$h = { 1 => 'a', '1' => 'b', 'k' => [1, 2.5, -7, undef, true, default, /re/, Integer[1, 2], File['/x'], Class['c']] }
file { '/x': ensure => file, path => '/x', mode => '0644',
  content => Sensitive("s\n\"q\"\\ \u0001 \u007f é\t"),
  before => [[Notify['a'], undef], [Notify['b']]], notify => Notify['a'] }
notify { 'a': message => $h, subscribe => [] }
notify { 'b': message => Sensitive([1, { 'x' => Sensitive('y') }]), name => 'b' }
notify { 'default': message => default, name => default }
notify { '/re/': name => /re/, withpath => false }
notify { 'Integer[1, 2]': name => Integer[1, 2] }
exec { 'e': command => '/bin/true', timeout => 1e300, tries => 5, path => ['/bin', [undef, '/usr/bin']] }
d { 'd1': x => { 2 => 3, 2.0 => 4, 'z' => { 'deep' => [[[[[[[[[[1]]]]]]]]]] } } }
@notify { 'virtual': }
"#;

    #[test]
    fn tags_sort_in_byte_order() {
        let tags = [
            "bench::site",
            "bench",
            "bench::s",
            "benchmark",
            "a",
            "",
            "b",
            "bench::sitf",
            "z\u{0}",
            "z",
            "zz",
            "abcdefgh",
            "abcdefg",
            "abcdefghi",
            "é",
            "e",
            "bench::site2",
        ];
        let mut keyed: Vec<_> = tags.iter().map(|t| super::tag_key(*t)).collect();
        super::sort_tags(&mut keyed);
        let mut want = tags.to_vec();
        want.sort_unstable();
        assert_eq!(keyed.into_iter().map(|(_, t)| t).collect::<Vec<_>>(), want);
    }

    #[test]
    fn written_source_is_the_built_catalog() {
        let opts = CompileOptions {
            node: "n.example.com".into(),
            ..Default::default()
        };
        let built = compile_catalog("site.pp", MANIFEST, &NoModules, &opts);
        let errors: Vec<_> = built.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        let built = built.catalog.unwrap();
        let source = compile_to_write("site.pp", MANIFEST, &NoModules, &opts);
        let source = source.catalog_source.unwrap();
        let text = |pretty| {
            let (mut want, mut got) = (vec![], vec![]);
            built.write_json(&mut want, pretty).unwrap();
            source.write_json(&mut got, pretty).unwrap();
            let (want, got) = (
                String::from_utf8(want).unwrap(),
                String::from_utf8(got).unwrap(),
            );
            assert_eq!(got, want);
            got
        };
        let compact = text(false);
        assert_eq!(compact, serde_json::to_string(&built).unwrap());
        let got = text(true);
        for seen in [
            "sensitive_parameters",
            "__ptype",
            "\\u0001",
            "1e+300",
            "\"before\": [",
            "\"Class[C]\"",
        ] {
            assert!(got.contains(seen), "{seen} not in {got}");
        }
    }

    /// A big catalog written straight from the compiler's resources is the text of the
    /// built catalog, and what serde_json writes, with virtual resources (not written).
    #[test]
    fn big_catalogs_are_written_from_the_source_as_built() {
        let mut manifest = String::new();
        for i in 0..6000 {
            if i % 7 == 3 || (1500..2700).contains(&i) {
                manifest.push_str(&format!("@notify {{ 'v{i}': message => 'm{i}' }}\n"));
            } else {
                manifest.push_str(&format!(
                    "file {{ '/tmp/f{i}': ensure => file, content => \"c\\t{i}\", tag => ['t{}'] }}\n",
                    i % 5
                ));
            }
        }
        let opts = CompileOptions {
            node: "n.example.com".into(),
            ..Default::default()
        };
        let built = compile_catalog("site.pp", &manifest, &NoModules, &opts);
        let built = built
            .catalog
            .unwrap_or_else(|| panic!("{:?}", built.diagnostics));
        assert!(built.resources.len() > 4000);
        let source = compile_to_write("site.pp", &manifest, &NoModules, &opts);
        let source = source.catalog_source.expect("compiles");
        assert!(source.resources.len() > 4000);
        for pretty in [false, true] {
            let (mut want, mut got) = (vec![], vec![]);
            built.write_json(&mut want, pretty).unwrap();
            source.write_json(&mut got, pretty).unwrap();
            assert!(got == want, "pretty: {pretty}");
        }
        let mut got = vec![];
        source.write_json(&mut got, false).unwrap();
        assert!(got == serde_json::to_vec(&built).unwrap());
        let parsed: serde_json::Value = serde_json::from_slice(&got).unwrap();
        let written = parsed["resources"].as_array().unwrap();
        assert_eq!(written.len(), built.resources.len());
        assert_eq!(written.last().unwrap()["title"], "/tmp/f5999");
        assert_eq!(written[2]["title"], "/tmp/f0");
    }
}
