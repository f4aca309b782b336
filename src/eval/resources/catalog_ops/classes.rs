//! Classes and defined types: `include` and resource-like class declarations (with
//! inheritance, stages and the nesting bound), parameter binding with its type checks, and the
//! lazy evaluation of defines.

use super::*;

impl Compiler<'_> {
    /// `include`/`require`/`contain` of one class: evaluates it unless it already is.
    pub(in crate::eval) fn include_class(
        &mut self,
        name: &str,
        scope: ScopeId,
        span: Span,
    ) -> R<usize> {
        let lname = name.trim_colons().to_lowercase();
        if let Some(i) = self.find_resource("Class", &lname) {
            return Ok(i);
        }
        if let Some(i) = self.settle_priority_class(&lname)? {
            return Ok(i);
        }
        let Some(def) = self.find_class(&lname) else {
            self.hint_class(&lname, span);
            return Err(Flow::Err(self.runtime(
                format!("Could not find class ::{lname} for {}", self.opts.node),
                span,
            )));
        };
        self.instantiate_class(def, scope, span, None)
    }

    /// `class { 'name': params }`.
    pub(in crate::eval) fn declare_class(
        &mut self,
        name: &str,
        params: &[AttrValue],
        scope: ScopeId,
        span: Span,
    ) -> R<usize> {
        let lname = name.trim_colons().to_lowercase();
        let Some(def) = self.find_class(&lname) else {
            self.hint_class(&lname, span);
            return Err(Flow::Err(
                self.runtime(format!("Could not find declared class {lname}"), span),
            ));
        };
        if let Some(idx) = self.priority_declare_class(&lname, &def, params, scope, span)? {
            return Ok(idx);
        }
        if let Some(existing) = self.find_resource("Class", &lname) {
            let e = &self.resources[existing];
            let mut msg = format!(
                "Duplicate declaration: {} is already declared",
                e.reference()
            );
            if e.file.is_some() {
                msg.push_str(&format!(" at {}", self.line_location(e.file, e.line)));
            }
            msg.push_str("; cannot redeclare");
            let msg = join_loc(msg, &self.span_location(span));
            return Err(Flow::Err(self.runtime(msg, span)));
        }
        self.instantiate_class(def, scope, span, Some(params))
    }

    pub(in crate::eval) fn instantiate_class(
        &mut self,
        def: std::sync::Arc<crate::ast::ClassDef>,
        scope: ScopeId,
        span: Span,
        params: Option<&[AttrValue]>,
    ) -> R<usize> {
        // Each class declared from a class body nests the evaluation: bounded, as Ruby's
        // stack bounds Puppet's ("stack level too deep").
        if self.class_depth >= MAX_CLASS_DEPTH {
            return Err(Flow::Err(self.runtime(
                format!(
                    "stack level too deep: classes declared more than {MAX_CLASS_DEPTH} levels deep (at class {})",
                    def.name
                ),
                span,
            )));
        }
        self.class_depth += 1;
        let r = self.instantiate_class_nested(def, scope, span, params);
        self.class_depth -= 1;
        r
    }

    pub(super) fn instantiate_class_nested(
        &mut self,
        def: std::sync::Arc<crate::ast::ClassDef>,
        scope: ScopeId,
        span: Span,
        params: Option<&[AttrValue]>,
    ) -> R<usize> {
        let name = def.name.clone();
        // The parent class comes first, declared from the same scope.
        let parent_scope = match &def.parent {
            Some(p) => {
                let pname = p.trim_colons().to_lowercase();
                if self.find_resource("Class", &pname).is_none()
                    && self.find_class(&pname).is_none()
                {
                    // Puppet::Resource::Type#parent_type, located at the class definition.
                    let at = self.class_spans.get(&name.to_lowercase()).copied();
                    let loc = match at {
                        Some(s) => self.line_location(Some(s.file), self.span_line(s)),
                        None => String::new(),
                    };
                    let msg = format!(
                        "Could not find parent resource type '::{}' of type hostclass in production",
                        p.trim_colons()
                    );
                    return Err(Flow::Err(self.plain(join_loc(msg, &loc), at)));
                }
                if self.find_resource("Class", &pname).is_none() {
                    let me = name.to_lowercase();
                    if pname == me || self.inheriting.contains(&pname) {
                        let mut chain = self.inheriting.clone();
                        chain.push(me);
                        chain.push(pname);
                        let msg =
                            format!("Circular class inheritance: {}", chain.join(" inherits "));
                        return Err(Flow::Err(self.runtime(msg, span)));
                    }
                    self.inheriting.push(me);
                    let r = self.include_class(&pname, scope, span);
                    self.inheriting.pop();
                    r?;
                }
                self.class_scopes.get(&pname).copied()
            }
            None => None,
        };
        let kind = if params.is_some() {
            ResourceKind::Class
        } else {
            ResourceKind::Unknown
        };
        let idx = self.new_res("Class", &name, scope, kind, span);
        if params.is_some() {
            let line = self.span_line(span);
            self.resources[idx].file = Some(span.file);
            self.resources[idx].line = line;
        }
        let label = self.resources[idx].reference();
        let source = self.scopes[scope].source.clone();
        if let Some(ps) = params {
            for a in ps {
                if !METAPARAMS.contains(&a.name.as_str())
                    && !ordo_metaparam(&a.name)
                    && !def.params.iter().any(|p| p.name == a.name)
                {
                    return Err(Flow::Err(self.runtime(
                        format!("{label}: has no parameter named '{}'", a.name),
                        span,
                    )));
                }
                if !a.value.is_undef() {
                    self.set_param(idx, &a.name, a.value.clone(), &source, a.span);
                } else {
                    // Not a value, but given: the parameter's type is checked against undef.
                    let at = (Some(a.span.file), self.span_line(a.span));
                    let key = self.attr_name(&a.name);
                    self.resources[idx].setters.set(&key, &source, Some(at));
                }
            }
        }
        self.insert_resource(idx);
        for t in &self.resources[idx].tags {
            if !self.catalog_tags.contains(t) {
                self.catalog_tags.insert(t.clone());
            }
        }
        self.resources[idx].evaluated = true;

        // Evaluate: scope, tags, parameters, stage, body.
        let declaring_res = self.scope_resource(scope);
        self.copy_tags(declaring_res, idx);
        let dyn_parent = parent_scope.unwrap_or(scope);
        let lookup_next = parent_scope.unwrap_or_else(|| self.global_scope_for(scope));
        let source = Arc::from(format!("class {name}"));
        let mut s = Scope::with_source(
            ScopeKind::Class,
            Some(dyn_parent),
            Some(lookup_next),
            source,
        );
        s.resource = Some(idx);
        s.class_name = Some(name.clone());
        s.vars.reserve(DEFINITION_VARS + def.params.len());
        let sid = self.new_scope(s);
        self.class_scopes.insert(name.clone(), sid);
        self.class_list.push(name.clone());
        self.scopes[sid]
            .vars
            .insert("title".into(), Value::str(name.clone()));
        self.scopes[sid]
            .vars
            .insert("name".into(), Value::str(name.clone()));
        let module = self.def_modules.get(&name).cloned().unwrap_or_default();
        self.scopes[sid]
            .vars
            .insert("module_name".into(), Value::str(module));
        self.set_caller_module(sid, scope);
        self.bind_parameters(idx, &def.params, sid, &label, span, true)?;

        // Stage: the class's own, else the declaring scope resource's, else main.
        let stage = self.resources[idx]
            .params
            .get("stage")
            .map(stage_name)
            .or_else(|| {
                self.resources[declaring_res]
                    .params
                    .get("stage")
                    .map(stage_name)
            })
            .unwrap_or_else(|| "main".into());
        let Some(stage_idx) = self.find_resource("Stage", &stage) else {
            return Err(Flow::Err(self.runtime(
                format!("Could not find stage {stage} specified by {label}"),
                span,
            )));
        };
        if stage != "main" && !self.resources[idx].params.contains_key("stage") {
            self.resources[idx]
                .params
                .insert("stage", Value::str(stage));
        }
        self.containment.push((stage_idx, idx));
        if let Some(body) = &def.body {
            // `return()` and `next()` end the class body (from a lambda in it too).
            match self.eval_for_effect(body, sid) {
                Ok(_) | Err(Flow::Return(..) | Flow::Next(..)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(idx)
    }

    /// `$caller_module_name`: the module of the scope that declared the class or define.
    pub(super) fn set_caller_module(&mut self, sid: ScopeId, caller: ScopeId) {
        let mut s = Some(caller);
        let mut module = Value::str("");
        while let Some(id) = s {
            if let Some(m) = self.scopes[id].vars.get("module_name") {
                module = m.clone();
                break;
            }
            s = self.scopes[id].lookup_next;
        }
        self.scopes[sid]
            .vars
            .insert("caller_module_name".into(), module);
    }

    /// Whether a declaration gave parameter `name` (an `undef` included, which leaves no
    /// value but a setter).
    pub(super) fn was_given(&self, idx: usize, name: &str) -> bool {
        let r = &self.resources[idx];
        r.params.contains_key(name) || r.setters.source(name).is_some()
    }

    /// Binds class/define parameters: given values, defaults, type checks.
    pub(in crate::eval) fn bind_parameters(
        &mut self,
        idx: usize,
        params: &[Parameter],
        sid: ScopeId,
        label: &str,
        span: Span,
        is_class: bool,
    ) -> R<()> {
        crate::eval::functions::reserved_parameter(self, params, span)?;
        self.check_queued_param_types()?;
        let source = self.scopes[sid].source.clone();
        if is_class {
            for p in params {
                self.hiera_class_param(idx, sid, &p.name, span)?;
            }
        }
        // Every missing value is reported at once, as Puppet does. A parameter without a
        // default needs a value whatever its type (`Optional[String] $x` too); an explicit
        // `undef` is a value given: type-checked below (`expects a String value, got
        // Undef`), accepted by an untyped or optional parameter.
        let missing: Vec<String> = params
            .iter()
            .filter(|p| p.value.is_none() && !self.was_given(idx, &p.name))
            .map(|p| format!("expects a value for parameter '{}'", p.name))
            .collect();
        match missing.len() {
            0 => {}
            1 => {
                return Err(Flow::Err(
                    self.runtime(format!("{label}: {}", missing[0]), span),
                ))
            }
            _ => {
                return Err(Flow::Err(
                    self.runtime(format!("{label}:\n  {}", missing.join("\n  ")), span),
                ))
            }
        }
        // As in Puppet, the values given are there before any default is evaluated, and a
        // default may read only parameters that have a value (given, or defaulted before).
        for p in params {
            if let Some(v) = self.resources[idx].params.get(&p.name) {
                self.scopes[sid].vars.insert(p.name.clone(), v.clone());
            } else if self.was_given(idx, &p.name) {
                self.scopes[sid].vars.insert(p.name.clone(), Value::Undef);
            }
        }
        // (Made once for every default evaluated below.)
        let names: std::rc::Rc<[String]> = params.iter().map(|p| p.name.clone()).collect();
        let guard_label: std::rc::Rc<str> = label.into();
        for (at, p) in params.iter().enumerate() {
            let given = self.resources[idx].params.get(&p.name).cloned();
            let value = match given {
                Some(v) if !v.is_undef() => v,
                _ => match &p.value {
                    Some(default) => {
                        let guard = crate::eval::compiler::ParamGuard {
                            scope: sid,
                            label: guard_label.clone(),
                            from: at,
                            names: names.clone(),
                            span,
                        };
                        let outer = self.param_guard.replace(guard);
                        let v = self.eval(default, sid);
                        self.param_guard = outer;
                        let v = v?;
                        if !v.is_undef() || is_class {
                            let key = self.attr_name(&p.name);
                            self.resources[idx].setters.set(&key, &source, None);
                            self.resources[idx].params.insert(key, v.clone());
                        }
                        v
                    }
                    None => {
                        if self.was_given(idx, &p.name) {
                            Value::Undef
                        } else {
                            return Err(Flow::Err(self.runtime(
                                format!("{label}: expects a value for parameter '{}'", p.name),
                                span,
                            )));
                        }
                    }
                },
            };
            if let Some(te) = &p.type_expr {
                let t = self.eval_type(te, sid)?;
                if !t.is_instance(&value) {
                    // Several problems (a struct's) are listed one per line, as Puppet does.
                    let msg = match crate::eval::types::mismatches(&t, &value).as_slice() {
                        [one] => format!("{label}: parameter '{}' {one}", p.name),
                        many => format!(
                            "{label}:\n{}",
                            many.iter()
                                .map(|m| format!("  parameter '{}' {m}", p.name))
                                .collect::<Vec<_>>()
                                .join("\n")
                        ),
                    };
                    return Err(Flow::Err(self.runtime(msg, span)));
                }
            }
            self.scopes[sid].vars.insert(p.name.clone(), value);
        }
        self.resources[idx].params.retain(|_, v| !v.is_undef());
        Ok(())
    }

    /// Evaluates a defined type instance (called from the generators loop).
    pub(in crate::eval) fn evaluate_define(&mut self, idx: usize) -> R<()> {
        self.resources[idx].evaluated = true;
        let type_name = self.resources[idx].type_name.to_lowercase();
        let Some(def) = self.find_define(&type_name) else {
            return Ok(());
        };
        if let Some(pos) = self.unchecked_virtual.iter().position(|&i| i == idx) {
            self.unchecked_virtual.swap_remove(pos);
            self.check_attributes(idx, &TypeKind::Define(def.clone()), &[])?;
        }
        let declaring = self.resources[idx].scope;
        let declaring_res = self.scope_resource(declaring);
        if declaring_res != idx {
            self.copy_tags(declaring_res, idx);
        }
        let lookup_next = self.global_scope_for(declaring);
        // The definition's name as scopes show it, made once per defined type.
        let source = match self.define_sources.get(&def.name) {
            Some(s) => s.clone(),
            None => {
                let s: Arc<str> = Arc::from(format!("define {}", def.name));
                self.define_sources.insert(def.name.clone(), s.clone());
                s
            }
        };
        let mut s = Scope::with_source(
            ScopeKind::Define,
            Some(declaring),
            Some(lookup_next),
            source,
        );
        s.resource = Some(idx);
        s.vars.reserve(DEFINITION_VARS + def.params.len());
        let sid = self.new_scope(s);
        let title = self.resources[idx].title.clone();
        let name = self.resources[idx]
            .params
            .get("name")
            .cloned()
            .unwrap_or_else(|| Value::str(title.clone()));
        self.scopes[sid]
            .vars
            .insert("title".into(), Value::str(title));
        self.scopes[sid].vars.insert("name".into(), name);
        let module = self.def_modules.get(&def.name).cloned().unwrap_or_default();
        self.scopes[sid]
            .vars
            .insert("module_name".into(), Value::str(module));
        self.set_caller_module(sid, declaring);
        let label = self.resources[idx].reference();
        let span = self.resources[idx].span;
        self.check_stop(span)?;
        self.bind_parameters(idx, &def.params, sid, &label, span, false)?;
        if let Some(body) = &def.body {
            match self.eval_for_effect(body, sid) {
                Ok(_) | Err(Flow::Return(..) | Flow::Next(..)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
