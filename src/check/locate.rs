//! Spans for the things a check talks about: resources, relationship parameters, arrows,
//! `require`/`contain` calls.
//!
//! From a manifest, the evaluator's [`Provenance`] gives exact spans. From a catalog, only the
//! file and line of each resource are known: when the file can be read, the resource's span is
//! its line (without the indentation).

use crate::catalog::{Catalog, ResourceRef};
use crate::eval::Provenance;
use crate::fxhash::FxHashMap as FastMap;
use crate::graph::refs::canonical_ref;
use crate::span::{SourceFile, SourceMap, Span};

#[derive(Debug, Default)]
pub struct Locator {
    provenance: Provenance,
    /// Resource lines of a catalog whose files could be read.
    lines: FastMap<ResourceRef, Span>,
}

impl Locator {
    /// A locator that knows no place (diagnostics fall back to `file:line` notes).
    pub fn none() -> Locator {
        Locator::default()
    }

    pub fn from_provenance(provenance: Provenance) -> Locator {
        Locator {
            provenance,
            lines: FastMap::default(),
        }
    }

    /// Reads the files a catalog names (with `read`) into `sources`, and spans each resource's
    /// line. Files that cannot be read are skipped.
    pub fn from_catalog(
        catalog: &Catalog,
        sources: &mut SourceMap,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Locator {
        let mut files: FastMap<&str, Option<crate::span::FileId>> = FastMap::default();
        let mut lines = FastMap::default();
        for r in &catalog.resources {
            let (Some(f), Some(line)) = (&r.file, r.line) else {
                continue;
            };
            let id = match files.get(f.as_str()) {
                Some(id) => *id,
                None => {
                    let id = read(f).map(|text| sources.add(f.clone(), text));
                    files.insert(f.as_str(), id);
                    id
                }
            };
            let Some(id) = id else { continue };
            let Some(file) = sources.get(id) else {
                continue;
            };
            if let Some(span) = line_span(file, line as usize, id) {
                lines.insert(canonical_ref(&r.type_name, &r.title), span);
            }
        }
        Locator {
            provenance: Provenance::default(),
            lines,
        }
    }

    /// Where a resource was declared.
    pub fn resource(&self, r: &ResourceRef) -> Option<Span> {
        self.provenance
            .resource(r)
            .or_else(|| self.lines.get(r).copied())
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
fn line_span(source: &SourceFile, line: usize, file: crate::span::FileId) -> Option<Span> {
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
    use crate::span::FileId;

    #[test]
    fn line_span_skips_indentation() {
        let text = "a\n  notify { 'x': }\n";
        let file = SourceFile::new("t.pp", text);
        let s = line_span(&file, 2, FileId(0)).unwrap();
        assert_eq!(&text[s.range()], "notify { 'x': }");
        assert!(line_span(&file, 9, FileId(0)).is_none());
    }
}
