//! Automatic relationships (Puppet's `autorequire` blocks of the core types).
//!
//! They are invisible in the catalog and added at apply time, and they silently yield to an
//! explicit relationship between the same two resources, in either direction (so an
//! explicit `require` the other way round never makes a cycle).

use super::refs::{reference_strings, RefIndex};
use super::{Graph, Origin, Relation};
use crate::catalog::Catalog;
use serde_json::Value as Json;

/// Which automatic relationship an edge is (its label keeps this byte, not the text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    FileParent,
    LinkTarget,
    FileOwner,
    FileGroup,
    ExecCwd,
    ExecCommand,
    ExecCheck,
    ExecUser,
    UserGid,
    UserGroups,
    PackageFile,
}

impl Rule {
    /// What the rule says, for people.
    pub fn text(self) -> &'static str {
        match self {
            Rule::FileParent => "file autorequires its nearest managed parent directory",
            Rule::LinkTarget => "link autorequires its target",
            Rule::FileOwner => "file autorequires its owner",
            Rule::FileGroup => "file autorequires its group",
            Rule::ExecCwd => "exec autorequires its cwd",
            Rule::ExecCommand => "exec autorequires the file of its command",
            Rule::ExecCheck => "exec autorequires the file of its onlyif/unless",
            Rule::ExecUser => "exec autorequires its user",
            Rule::UserGid => "user autorequires its primary group",
            Rule::UserGroups => "user autorequires its groups",
            Rule::PackageFile => "package autorequires its source/response file",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// A resource an automatic relationship may point at: (type, name, rule).
type Wanted = (&'static str, String, Rule);

/// An automatic relationship found in a catalog: (resource, the resource it depends on,
/// rule), by position in `Catalog::resources`.
pub(super) type Found = (usize, usize, Rule);

/// The automatic relationships of a catalog's managed resources, in catalog order (each
/// resource's in rule order). They need no graph, only the reference index.
pub(super) fn find(catalog: &Catalog, index: &RefIndex) -> Vec<Found> {
    let mut out = Vec::new();
    let mut parents = ParentCache::default();
    for (i, r) in catalog.resources.iter().enumerate() {
        if super::is_container(r) {
            continue;
        }
        let t = r.type_name.as_str();
        let wanted = if t.eq_ignore_ascii_case("file") {
            // The nearest managed ancestor is found already: no second lookup.
            if let Some(dep) = parents.nearest(r, index) {
                out.push((i, dep, Rule::FileParent));
            }
            file_wants(r)
        } else if t.eq_ignore_ascii_case("exec") {
            exec_wants(r)
        } else if t.eq_ignore_ascii_case("user") {
            user_wants(r)
        } else if t.eq_ignore_ascii_case("package") {
            package_wants(r)
        } else {
            Vec::new()
        };
        for (type_name, name, rule) in wanted {
            if let Some(dep) = index.find(type_name, &name) {
                out.push((i, dep, rule));
            }
        }
    }
    out
}

/// Adds what [`find`] found, unless an explicit relationship links the pair already.
pub(super) fn add_auto_relations(g: &mut Graph, found: Vec<Found>) {
    for (i, dep, rule) in found {
        let (me, dep) = (g.node_of[i], g.node_of[dep]);
        if dep == me || g.has_relation(dep, me) || g.has_relation(me, dep) {
            continue;
        }
        g.add_relation(Relation {
            source: dep,
            target: me,
            refresh: false,
            origin: Origin::Auto { rule },
        });
    }
}

fn string_param(r: &crate::catalog::Resource, name: &str) -> Option<String> {
    match super::refs::param(r, name)? {
        Json::String(s) => Some(s.clone()),
        Json::Array(items) => items.first().and_then(|v| v.as_str()).map(str::to_string),
        _ => None,
    }
}

fn is_numeric(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The nearest managed ancestor directory of the files of a catalog. Consecutive files
/// mostly share their directory, whose walk up the tree is then not made again (it looked
/// every ancestor up in the index, for every file).
#[derive(Default)]
struct ParentCache {
    /// The directory of the last file asked about, and its nearest managed ancestor.
    last: Option<(String, Option<usize>)>,
}

impl ParentCache {
    fn nearest(&mut self, r: &crate::catalog::Resource, index: &RefIndex) -> Option<usize> {
        let path = match super::refs::param(r, "path") {
            Some(Json::String(s)) => s.as_str(),
            Some(Json::Array(items)) => match items.first().and_then(|v| v.as_str()) {
                Some(s) => s,
                None => &r.title,
            },
            _ => &r.title,
        };
        let dir = std::path::Path::new(path.trim_end_matches('/')).parent()?;
        let dir = dir.to_string_lossy();
        if let Some((d, found)) = &self.last {
            if *d == dir {
                return *found;
            }
        }
        let mut found = None;
        let mut p = std::path::Path::new(&*dir);
        loop {
            let s = p.to_string_lossy();
            if s.is_empty() {
                break;
            }
            if let Some(dep) = index.find("File", &s) {
                found = Some(dep);
                break;
            }
            match p.parent() {
                Some(parent) => p = parent,
                None => break,
            }
        }
        self.last = Some((dir.into_owned(), found));
        found
    }
}

fn file_wants(r: &crate::catalog::Resource) -> Vec<Wanted> {
    let mut out = Vec::new();
    // `ensure => '/some/path'` is a link whose target is that path: the type's ensure
    // munging sets `target` from it (over any `target` given), so it is autorequired too.
    let ensure_target = string_param(r, "ensure").filter(|e| {
        !e.is_empty()
            && !matches!(
                e.as_str(),
                "present" | "absent" | "false" | "file" | "directory" | "link"
            )
    });
    if let Some(target) = ensure_target.or_else(|| string_param(r, "target")) {
        out.push(("File", target, Rule::LinkTarget));
    }
    for (ty, param, rule) in [
        ("User", "owner", Rule::FileOwner),
        ("Group", "group", Rule::FileGroup),
    ] {
        if let Some(v) = string_param(r, param).filter(|v| !is_numeric(v)) {
            out.push((ty, v, rule));
        }
    }
    out
}

/// Absolute paths a command starts with (`/usr/bin/foo args` -> `/usr/bin/foo`). Puppet
/// scans with Ruby's `^`, which anchors at the start of every line: each line of a
/// multi-line command that starts with a path names a file too. `quoted`: also a
/// double-quoted path at the start of a line (the command itself; not onlyif/unless).
fn command_paths(cmd: &str, quoted: bool) -> Vec<String> {
    let mut out = Vec::new();
    for line in cmd.split('\n') {
        if line.starts_with('/') {
            let end = line.find(char::is_whitespace).unwrap_or(line.len());
            out.push(line[..end].to_string());
        }
    }
    if quoted {
        let mut at = 0;
        while at < cmd.len() {
            let rest = &cmd[at..];
            if let Some(q) = rest.strip_prefix('"') {
                if let Some(end) = q.find('"').filter(|&e| e > 0) {
                    out.push(q[..end].to_string());
                }
            }
            match rest.find('\n') {
                Some(nl) => at += nl + 1,
                None => break,
            }
        }
    }
    out
}

fn exec_wants(r: &crate::catalog::Resource) -> Vec<Wanted> {
    let mut out = Vec::new();
    if let Some(cwd) = string_param(r, "cwd") {
        out.push(("File", cwd, Rule::ExecCwd));
    }
    let command = string_param(r, "command").unwrap_or_else(|| r.title.clone());
    for p in command_paths(&command, true) {
        out.push(("File", p, Rule::ExecCommand));
    }
    for param in ["onlyif", "unless"] {
        if let Some(v) = r.parameters.get(param) {
            for cmd in reference_strings(v) {
                for p in command_paths(&cmd, false) {
                    out.push(("File", p, Rule::ExecCheck));
                }
            }
        }
    }
    if let Some(user) = string_param(r, "user").filter(|u| !is_numeric(u)) {
        out.push(("User", user, Rule::ExecUser));
    }
    out
}

fn user_wants(r: &crate::catalog::Resource) -> Vec<Wanted> {
    let mut out = Vec::new();
    if let Some(gid) = string_param(r, "gid").filter(|g| !is_numeric(g)) {
        out.push(("Group", gid, Rule::UserGid));
    }
    if let Some(groups) = r.parameters.get("groups") {
        for g in reference_strings(groups) {
            for g in g.split(',').map(str::trim).filter(|g| !g.is_empty()) {
                out.push(("Group", g.to_string(), Rule::UserGroups));
            }
        }
    }
    out
}

fn package_wants(r: &crate::catalog::Resource) -> Vec<Wanted> {
    let mut out = Vec::new();
    for param in ["responsefile", "adminfile", "source"] {
        if let Some(v) = string_param(r, param).filter(|v| v.starts_with('/')) {
            out.push(("File", v, Rule::PackageFile));
        }
    }
    out
}
