//! "Did you mean" hints for the names an error says are unknown: resource types, classes,
//! attributes and relationship targets. The error keeps Puppet's words; the hint is set aside
//! by the span of the error and becomes the diagnostic's help (`Compiler::run`).

use super::Compiler;
use crate::catalog::capitalize_type;
use crate::catalog::metaparams::METAPARAMS;
use crate::diagnostics::nearest;
use crate::eval::types::builtin_types::BUILTIN_TYPES;
use crate::span::Span;

impl Compiler<'_> {
    /// Sets `help` aside for the error at `span`.
    fn hint(&self, span: Span, help: String) {
        self.hints.borrow_mut().push((span, help));
    }

    /// The hint set aside for an error at `span`, if any.
    pub(in crate::eval) fn hint_at(&self, span: Option<Span>) -> Option<String> {
        let span = span?;
        let hints = self.hints.borrow();
        hints
            .iter()
            .rev()
            .find(|(s, _)| *s == span)
            .map(|(_, h)| h.clone())
    }

    /// An unknown resource type: the built-in and defined types known so far. `written` as
    /// the manifest has it (`fille`, `Pakage`): the hint is written the same way.
    pub(in crate::eval) fn hint_type(&self, written: &str, span: Span) {
        let name = written.trim_start_matches("::");
        let lower = name.to_lowercase();
        let builtin = BUILTIN_TYPES
            .iter()
            .map(|t| t.name)
            .filter(|n| !matches!(*n, "component" | "whit"));
        let candidates = builtin.chain(self.defines.keys().map(String::as_str));
        if let Some(found) = nearest(&lower, candidates) {
            let shown = if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                capitalize_type(found)
            } else {
                found.to_string()
            };
            self.hint(span, format!("did you mean '{shown}'?"));
        }
    }

    /// An unknown class: the classes known so far.
    pub(in crate::eval) fn hint_class(&self, lower: &str, span: Span) {
        if let Some(found) = nearest(lower, self.classes.keys().map(String::as_str)) {
            self.hint(span, format!("did you mean '{found}'?"));
        }
    }

    /// An unknown attribute of a resource: the type's own (`own`) and the metaparameters.
    pub(in crate::eval) fn hint_attribute<'n>(
        &self,
        name: &str,
        own: impl IntoIterator<Item = &'n str>,
        span: Span,
    ) {
        let candidates = own.into_iter().chain(METAPARAMS.iter().copied());
        if let Some(found) = nearest(name, candidates) {
            self.hint(span, format!("did you mean '{found}'?"));
        }
    }

    /// A relationship to a resource that is not in the catalog: the titles of the resources
    /// of that type, else the types of the resources of that title.
    pub(in crate::eval) fn hint_reference(&self, ty: &str, title: &str, span: Span) {
        let ty = ty.trim_start_matches("::");
        let same_type = || {
            self.resources
                .iter()
                .filter(|r| !r.virtual_ && r.type_name.eq_ignore_ascii_case(ty))
        };
        let found = match nearest(title, same_type().map(|r| r.title.as_str())) {
            Some(t) => Some(format!("{}['{t}']", capitalize_type(ty))),
            None => {
                let types = self
                    .resources
                    .iter()
                    .filter(|r| !r.virtual_ && r.title == title)
                    .map(|r| r.type_name.as_str());
                nearest(ty, types).map(|t| format!("{}['{title}']", capitalize_type(t)))
            }
        };
        if let Some(found) = found {
            self.hint(span, format!("did you mean {found}?"));
        }
    }
}
