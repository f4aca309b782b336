//! Spans for the things a check talks about: resources, relationship parameters, arrows,
//! `require`/`contain` calls.
//!
//! From a manifest, the evaluator's [`Provenance`] gives exact spans. From a catalog, only the
//! file and line of each resource are known: when the file can be read, the resource's span is
//! its line (without the indentation).

use crate::catalog::{Catalog, ResourceRef};
use crate::eval::Provenance;
use crate::fxhash::{FxHashMap as FastMap, FxHashSet as FastSet};
use crate::graph::refs::canonical_ref;
use crate::span::{FileId, SourceFile, SourceMap, Span};
use std::sync::OnceLock;

#[derive(Debug, Default)]
pub struct Locator<'c> {
    provenance: Provenance,
    /// Resource lines of a catalog whose files could be read.
    lines: Option<CatalogLines<'c>>,
}

/// The lines of a catalog's resources, spanned when a diagnostic first asks for one: a
/// clean check of a large catalog never builds the map.
#[derive(Debug)]
struct CatalogLines<'c> {
    catalog: &'c Catalog,
    /// The files that could be read, by name (a copy of the text with its line table).
    files: FastMap<&'c str, (FileId, SourceFile)>,
    spans: OnceLock<FastMap<ResourceRef, Span>>,
}

impl CatalogLines<'_> {
    fn spans(&self) -> &FastMap<ResourceRef, Span> {
        self.spans.get_or_init(|| {
            let mut lines = FastMap::default();
            for r in &self.catalog.resources {
                let (Some(f), Some(line)) = (&r.file, r.line) else {
                    continue;
                };
                let Some((id, file)) = self.files.get(f.as_str()) else {
                    continue;
                };
                if let Some(span) = line_span(file, line as usize, *id) {
                    lines.insert(canonical_ref(&r.type_name, &r.title), span);
                }
            }
            lines
        })
    }
}

impl<'c> Locator<'c> {
    /// A locator that knows no place (diagnostics fall back to `file:line` notes).
    pub fn none() -> Locator<'c> {
        Locator::default()
    }

    pub fn from_provenance(provenance: Provenance) -> Locator<'c> {
        Locator {
            provenance,
            lines: None,
        }
    }

    /// Reads the files a catalog names (with `read`) into `sources`; each resource's line is
    /// spanned when first asked for. Files that cannot be read are skipped.
    pub fn from_catalog(
        catalog: &'c Catalog,
        sources: &mut SourceMap,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Locator<'c> {
        let mut tried: FastSet<&str> = FastSet::default();
        let mut files = FastMap::default();
        for r in &catalog.resources {
            let (Some(f), Some(_)) = (&r.file, r.line) else {
                continue;
            };
            if !tried.insert(f.as_str()) {
                continue;
            }
            if let Some(text) = read(f) {
                let id = sources.add(f.clone(), text);
                if let Some(file) = sources.get(id) {
                    files.insert(f.as_str(), (id, file.clone()));
                }
            }
        }
        Locator {
            provenance: Provenance::default(),
            lines: Some(CatalogLines {
                catalog,
                files,
                spans: OnceLock::new(),
            }),
        }
    }

    /// Where a resource was declared.
    pub fn resource(&self, r: &ResourceRef) -> Option<Span> {
        self.provenance
            .resource(r)
            .or_else(|| self.lines.as_ref()?.spans().get(r).copied())
    }

    /// Where a parameter of a resource was set (falls back to nothing: callers choose).
    pub fn param(&self, r: &ResourceRef, param: &str) -> Option<Span> {
        self.provenance.param(r, param)
    }

    /// The chaining arrow that made the edge `source -> target` (or `~>`).
    pub fn arrow(&self, source: &ResourceRef, target: &ResourceRef, notify: bool) -> Option<Span> {
        self.provenance
            .arrows()
            .iter()
            .find(|a| a.source == *source && a.target == *target && a.notify == notify)
            .map(|a| a.span)
    }

    /// The `require`/`contain` call in `from` (any container when `from` is None) naming `class`.
    pub fn call(
        &self,
        function: &str,
        from: Option<&ResourceRef>,
        class: &ResourceRef,
    ) -> Option<Span> {
        self.provenance
            .calls()
            .iter()
            .find(|c| {
                c.function == function && c.class == *class && from.is_none_or(|f| c.from == *f)
            })
            .map(|c| c.span)
    }

    /// Every recorded `require`/`contain` call.
    pub fn calls(&self) -> &[crate::eval::CallEdge] {
        self.provenance.calls()
    }

    pub fn error_labels(&self) -> &[(Span, String)] {
        &self.provenance.error_labels
    }
}

/// The span of line `line` (1-based) without its indentation and line break.
pub fn line_span(source: &SourceFile, line: usize, file: FileId) -> Option<Span> {
    let start = source.line_start(line)?;
    let rest = source.text.get(start..)?;
    let content = rest.split('\n').next()?.trim_end_matches('\r');
    let indent = content.len() - content.trim_start().len();
    if content.trim().is_empty() {
        return None;
    }
    Some(Span::new(
        file,
        start + indent,
        start + content.trim_end().len(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_span_skips_indentation() {
        let text = "a\n  notify { 'x': }\n";
        let file = SourceFile::new("t.pp", text);
        let s = line_span(&file, 2, FileId(0)).unwrap();
        assert_eq!(&text[s.range()], "notify { 'x': }");
        assert!(line_span(&file, 9, FileId(0)).is_none());
    }
}
