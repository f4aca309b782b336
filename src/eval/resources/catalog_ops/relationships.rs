//! Resource overrides (`File['x'] { ... }`, collector overrides) and relationships:
//! relationship metaparameters validated, chaining arrows evaluated into `before`/`notify`.

use super::*;

impl Compiler<'_> {
    pub(in crate::eval) fn add_override(&mut self, o: Override) -> Result<(), EvalError> {
        match self.find_resource(&o.type_name, &o.title) {
            Some(idx) => self.merge_override(idx, &o),
            None => {
                self.pending_overrides.push(o);
                Ok(())
            }
        }
    }

    /// Whether definition `a` is `b` or inherits from it.
    pub(super) fn source_child_of(&self, a: &str, b: &str) -> bool {
        let mut cur = a.to_string();
        for _ in 0..100 {
            let Some(name) = cur.strip_prefix("class ") else {
                return false;
            };
            let Some(def) = self.classes.get(name) else {
                return false;
            };
            let Some(p) = &def.parent else { return false };
            cur = format!("class {}", p.trim_colons().to_lowercase());
            if cur == b {
                return true;
            }
        }
        false
    }

    pub(in crate::eval) fn merge_override(
        &mut self,
        idx: usize,
        o: &Override,
    ) -> Result<(), EvalError> {
        let loc = self.span_location(o.span);
        if !o.forced {
            let rsrc = self.resources[idx].source.clone();
            if *rsrc != *o.source && !self.source_child_of(&o.source, &rsrc) {
                return Err(self.plain(
                    join_loc("Only subclasses can override parameters".into(), &loc),
                    Some(o.span),
                ));
            }
        }
        for a in &o.params {
            let current = self.resources[idx].params.get(&a.name).cloned();
            let Some(current) = current else {
                if !a.value.is_undef() {
                    self.set_param(idx, &a.name, a.value.clone(), &o.source, a.span);
                }
                continue;
            };
            if !o.forced {
                let csrc = self.resources[idx]
                    .setters
                    .source(&a.name)
                    .map_or_else(String::new, |s| String::from(&**s));
                // Puppet's override_parameter: a subclass may override, and so may the
                // scope that set the value when the value is that scope's default.
                let from_default = *o.source == *csrc && {
                    let r = &self.resources[idx];
                    self.lookup_defaults(r.scope, &r.type_name)
                        .get(&a.name)
                        .is_some_and(|d| *d == current)
                };
                if !from_default && !self.source_child_of(&o.source, &csrc) {
                    let r = &self.resources[idx];
                    let (f, l) = r.setters.at(&a.name).unwrap_or((r.file, r.line));
                    let by = if csrc.is_empty() {
                        "Class[main]".to_string()
                    } else {
                        csrc
                    };
                    let msg = format!(
                        "Parameter '{}' is already set on {} by {} at {}; cannot redefine",
                        a.name,
                        r.reference(),
                        by,
                        self.line_location(f, l)
                    );
                    return Err(self.plain(join_loc(msg, &loc), Some(o.span)));
                }
            }
            let value = if a.append {
                // Puppet: `[current, value].flatten`, which keeps undef as an element.
                fn flatten_keep_undef(v: &Value, out: &mut Vec<Value>) {
                    match v {
                        Value::Array(a) => a.iter().for_each(|x| flatten_keep_undef(x, out)),
                        other => out.push(other.clone()),
                    }
                }
                let mut items = vec![];
                flatten_keep_undef(&current, &mut items);
                flatten_keep_undef(&a.value, &mut items);
                Value::Array(items)
            } else {
                a.value.clone()
            };
            if value.is_undef() {
                self.resources[idx].params.shift_remove(&a.name);
            } else {
                self.set_param(idx, &a.name, value, &o.source, a.span);
            }
        }
        // An override may set only what the type has (Puppet checks when it merges).
        if !o.params.is_empty() {
            let type_name = self.resources[idx].type_name.clone();
            if let Some(kind) = self.resolve_resource_type(&type_name) {
                if !(self.resources[idx].virtual_ && self.resources[idx].is_define) {
                    if let Err(Flow::Err(e)) = self.check_attributes(idx, &kind, &o.params) {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks every relationship metaparameter of the non-virtual resources.
    pub(in crate::eval) fn validate_relationship_params(&mut self) -> Result<(), EvalError> {
        for idx in 0..self.resources.len() {
            let r = &self.resources[idx];
            // One look at the names first (most resources have none of these).
            if r.virtual_
                || r.dropped
                || !r.params.keys().any(|k| RELATIONSHIP_PARAMS.contains(&&**k))
            {
                continue;
            }
            for p in RELATIONSHIP_PARAMS {
                let Some(v) = r.params.get(p) else { continue };
                for item in flatten_values(v) {
                    let Some((t, title)) = ref_parts(&item) else {
                        // Puppet::Resource.new(nil, value) cannot split it into a type and a
                        // title; a type without a title (`require => Notify`) reads `Notify[]`.
                        let shown = match &item {
                            Value::Str(_) | Value::Int(_) | Value::Float(_) => {
                                Some(item.to_display())
                            }
                            Value::Type(t) => match &**t {
                                PType::Resource(Some(name), None) => Some(format!("{name}[]")),
                                _ => None,
                            },
                            _ => None,
                        };
                        if let Some(shown) = shown {
                            let (f, l) = r.setters.at(p).unwrap_or((r.file, r.line));
                            let msg = format!(
                                "No title provided and {shown:?} is not a valid resource reference"
                            );
                            let span = self.recorder.param_span(idx, p).unwrap_or(r.span);
                            let e =
                                self.plain(join_loc(msg, &self.line_location(f, l)), Some(span));
                            self.fail_or_collect(e)?;
                        }
                        continue;
                    };
                    if self.related_resource(&t, &title).is_none() {
                        let (f, l) = r.setters.at(p).unwrap_or((r.file, r.line));
                        let shown = ref_shown(&item);
                        // `Type['']` reads back as "Type[]", which names no title at all.
                        let msg = if title.is_empty() {
                            format!(
                                "No title provided and {shown:?} is not a valid resource reference"
                            )
                        } else {
                            format!("Could not find resource '{shown}' in parameter '{p}'")
                        };
                        let span = self.recorder.param_span(idx, p).unwrap_or(r.span);
                        if !title.is_empty() {
                            self.hint_reference(&t, &title, span);
                        }
                        let e = self.plain(join_loc(msg, &self.line_location(f, l)), Some(span));
                        self.fail_or_collect(e)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The resource a relationship names. The main class is not one: its catalog resource
    /// is titled `:main` in Puppet, which no reference (`Class['main']` reads `Class[Main]`)
    /// finds.
    pub(super) fn related_resource(&self, ty: &str, title: &str) -> Option<usize> {
        if ty.eq_ignore_ascii_case("class")
            && title.trim_start_matches("::").eq_ignore_ascii_case("main")
        {
            return None;
        }
        self.find_resource(ty, title)
    }

    /// Chaining arrows become `before`/`notify` values on the source resources.
    pub(in crate::eval) fn evaluate_relationships(&mut self) -> Result<(), EvalError> {
        let rels = std::mem::take(&mut self.relationships);
        let operands: Vec<&[Operand]> = rels
            .iter()
            .flat_map(|r| [r.source.as_slice(), r.target.as_slice()])
            .collect();
        self.collector_relationship_warnings(&operands);
        for rel in &rels {
            let sources = self.operand_refs(&rel.source, true);
            let targets = self.operand_refs(&rel.target, false);
            if let Some(r) = sources.iter().chain(&targets).find(|r| r.title.is_empty()) {
                return Err(self.plain(
                    format!(
                        "No title provided and \"{}[]\" is not a valid resource reference",
                        r.ty
                    ),
                    None,
                ));
            }
            let param = if rel.notify { "notify" } else { "before" };
            for s in &sources {
                // Found once the first target is (a missing source with no targets is no
                // error).
                let mut found_source = None;
                for t in &targets {
                    let sidx = match found_source {
                        Some(i) => i,
                        None => {
                            let Some(i) = self.related_resource(&s.ty, &s.title) else {
                                let (sshown, tshown) = (s.shown(), t.shown());
                                self.hint_reference(&s.ty, &s.title, rel.source_span);
                                let e = self.plain(
                                    format!(
                                        "Could not find resource '{sshown}' for relationship on '{tshown}'"
                                    ),
                                    Some(rel.source_span),
                                );
                                self.fail_or_collect(e)?;
                                break;
                            };
                            found_source = Some(i);
                            i
                        }
                    };
                    let Some(tidx) = self.related_resource(&t.ty, &t.title) else {
                        let (sshown, tshown) = (s.shown(), t.shown());
                        self.hint_reference(&t.ty, &t.title, rel.target_span);
                        let e = self.plain(
                            format!("Could not find resource '{tshown}' for relationship from '{sshown}'"),
                            Some(rel.target_span),
                        );
                        self.fail_or_collect(e)?;
                        continue;
                    };
                    let span = rel.source_span.to(rel.target_span);
                    self.recorder.arrow(sidx, tidx, rel.notify, span);
                    let r = &mut self.resources[sidx];
                    let mut target = String::with_capacity(t.ty.len() + t.title.len() + 2);
                    for part in [&*t.ty, "[", &*t.title, "]"] {
                        target.push_str(part);
                    }
                    let target = Value::str(target);
                    match r.params.get_mut(param) {
                        Some(Value::Array(items)) => items.push(target),
                        Some(v) => {
                            let first = std::mem::replace(v, Value::Undef);
                            *v = Value::Array(vec![first, target]);
                        }
                        None => {
                            r.params
                                .insert(param.to_string(), Value::Array(vec![target]));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The references an operand stands for; an empty collector on the left falls back to
    /// its "empty alternative" (what stood left of it in the chain).
    pub(super) fn operand_refs<'o>(&self, ops: &'o [Operand], left: bool) -> Vec<ArrowEnd<'o>> {
        let mut out = vec![];
        for op in ops {
            match op {
                Operand::Ref(t) => out.push(ArrowEnd::of_type(t)),
                Operand::Collector(ci) => {
                    let c = &self.collectors[*ci];
                    if c.collected.is_empty() && left {
                        if let Some(alt) = &c.empty_alternative {
                            out.extend(self.alternative_refs(alt));
                        }
                    } else {
                        for &i in &c.collected {
                            let r = &self.resources[i];
                            out.push(ArrowEnd {
                                ty: Cow::Owned(r.type_name.clone()),
                                title: Cow::Owned(r.title.clone()),
                                kind: if r.type_name == "Class" {
                                    EndKind::Class
                                } else {
                                    EndKind::Resource
                                },
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// [`Self::operand_refs`] of a collector's empty alternative (kept by the collector).
    pub(super) fn alternative_refs(&self, alt: &[Operand]) -> Vec<ArrowEnd<'static>> {
        let refs = self.operand_refs(alt, true);
        refs.into_iter().map(ArrowEnd::into_owned).collect()
    }
}
