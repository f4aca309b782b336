//! Definitions: classes, defined types, functions and type aliases registered from a tree,
//! their redefinition errors, and the autoloading of module files that define them.

use super::*;

impl<'a> Compiler<'a> {
    /// Records classes, defines, nodes, functions and type aliases found in a file, with
    /// nested definitions named inside their class (`class a { class b {} }` is `a::b`).
    /// Remembers which module's file defines class or defined type `name` (for
    /// `$module_name`); nothing for the main manifest.
    pub(super) fn note_module(&mut self, name: &str, file: FileId) {
        if let Some(m) = self.module_files.get(&file) {
            self.def_modules
                .entry(name.to_string())
                .or_insert_with(|| m.clone());
        }
    }

    /// Puppet's refusal of a second definition: `SUBJECT is already defined (file: ...,
    /// line: ...)AS; cannot VERB (file: ..., line: ...)`.
    pub(super) fn redefinition(
        &self,
        subject: &str,
        earlier: Span,
        as_what: &str,
        verb: &str,
        at: Span,
    ) -> EvalError {
        self.plain(
            format!(
                "{subject} is already defined {}{as_what}; cannot {verb} {}",
                self.span_location(earlier),
                self.span_location(at)
            ),
            Some(at),
        )
    }

    /// Puppet's `warn_if_metaparam`: a parameter named after a metaparameter needs a
    /// default (and then is the metaparameter's value for what the definition contains).
    pub(super) fn metaparameter_names(
        &self,
        params: &[crate::ast::Parameter],
        name: &str,
    ) -> Result<(), EvalError> {
        match params
            .iter()
            .find(|p| p.value.is_none() && crate::eval::resources::catalog_ops::METAPARAMS.contains(&p.name.as_str()))
        {
            Some(p) => Err(self.plain(
                format!(
                    "{} is a metaparameter; please choose another parameter name in the {name} definition",
                    p.name
                ),
                None,
            )),
            None => Ok(()),
        }
    }

    /// Records the definitions of a tree (the parser has already given nested classes and
    /// defines their qualified names, as Puppet's name stack does).
    pub(in crate::eval) fn register_definitions(&mut self, e: &Expr) -> Result<(), EvalError> {
        match &e.kind {
            ExprKind::Block(items) => {
                for item in items {
                    self.register_definitions(item)?;
                }
            }
            ExprKind::Class(def) => {
                if let Some(body) = &def.body {
                    self.register_definitions(body)?;
                }
                let name = definition_name(&def.name);
                // A name defines one class or define, once (Puppet's messages).
                if let Some(&earlier) = self.class_spans.get(&name) {
                    let subject = format!("Class '{name}'");
                    return Err(self.redefinition(&subject, earlier, "", "redefine", e.span));
                }
                if let Some(&earlier) = self.define_spans.get(&name) {
                    let subject = format!("Definition '{name}'");
                    let verb = "be redefined as a class";
                    return Err(self.redefinition(&subject, earlier, "", verb, e.span));
                }
                self.metaparameter_names(&def.params, &name)?;
                self.class_spans.insert(name.clone(), e.span);
                self.note_module(&name, e.span.file);
                // The tree's definition, shared; a copy only to rename it.
                let mut def = def.clone();
                if def.name != name {
                    std::sync::Arc::make_mut(&mut def).name = name.clone();
                }
                self.classes.entry(name).or_insert(def);
            }
            ExprKind::Define(def) => {
                let name = definition_name(&def.name);
                if let Some(&earlier) = self.define_spans.get(&name) {
                    let at = self.sources.get(earlier.file).map(|f| {
                        let (line, col) = f.line_col(earlier.start as usize);
                        format!("file://{}?line={line}&pos={col}", f.name)
                    });
                    return Err(self.plain(
                        format!(
                            "Attempt to redefine entity 'http://puppet.com/2016.1/runtime/type/{name}'. Originally set at {}.",
                            at.unwrap_or_default()
                        ),
                        Some(e.span),
                    ));
                }
                if let Some(&earlier) = self.class_spans.get(&name) {
                    let (subject, verb) = (format!("'{name}'"), "redefine as a definition");
                    return Err(self.redefinition(&subject, earlier, " as a class", verb, e.span));
                }
                self.metaparameter_names(&def.params, &name)?;
                self.define_spans.insert(name.clone(), e.span);
                self.note_module(&name, e.span.file);
                let mut def = def.clone();
                if def.name != name {
                    std::sync::Arc::make_mut(&mut def).name = name.clone();
                }
                self.defines.entry(name).or_insert(def);
            }
            ExprKind::Node(def) => {
                for m in &def.matches {
                    let Some(key) = node_match_key(m) else {
                        continue;
                    };
                    let earlier = self.nodes.iter().find(|n| {
                        n.def
                            .matches
                            .iter()
                            .any(|o| node_match_key(o) == Some(key.clone()))
                    });
                    if let Some(earlier) = earlier {
                        let subject = format!("Node '{key}'");
                        return Err(self.redefinition(
                            &subject,
                            earlier.span,
                            "",
                            "redefine",
                            e.span,
                        ));
                    }
                }
                self.nodes.push(NodeInfo {
                    def: def.clone().into(),
                    span: e.span,
                })
            }
            ExprKind::Function(def) => {
                self.functions.insert(
                    def.name.trim_colons().to_lowercase(),
                    Rc::new((**def).clone()),
                );
            }
            ExprKind::TypeAlias { name, type_expr } => {
                self.type_aliases
                    .insert(name.trim_colons().to_string(), (**type_expr).clone());
            }
            _ => {}
        }
        Ok(())
    }

    /// Loads the file that should define `name` (`mod::a::b` -> `mod/manifests/a/b.pp`).
    pub(in crate::eval) fn autoload(&mut self, name: &str, dir: &str) -> bool {
        let name = name.trim_colons().to_lowercase();
        let segs: Vec<&str> = name.split("::").collect();
        let module = segs[0];
        if dir != "manifests" {
            if segs.len() == 1 {
                return false;
            }
            return self.load_module_file(module, &format!("{dir}/{}.pp", segs[1..].join("/")));
        }
        // `a::b::c` is looked for in a/manifests/b/c.pp, then in the files of its enclosing
        // namespaces (a/manifests/b.pp, a/manifests/init.pp), where it may be nested.
        let mut loaded = false;
        for n in (1..=segs.len()).rev() {
            let path = if n == 1 {
                "manifests/init.pp".to_string()
            } else {
                format!("manifests/{}.pp", segs[1..n].join("/"))
            };
            loaded |= self.load_module_file(module, &path);
            if self.classes.contains_key(&name) || self.defines.contains_key(&name) {
                break;
            }
        }
        loaded
    }

    pub(in crate::eval) fn load_module_file(&mut self, module: &str, path: &str) -> bool {
        let key = format!("{module}/{path}");
        if !self.loaded_files.insert(key) {
            return false;
        }
        let Some((display, text)) = self.loader.load(module, path) else {
            return false;
        };
        let file = self.sources.add(display.clone(), text);
        self.module_files.insert(file, module.to_string());
        let text = self.sources.get(file).map_or("", |f| f.text.as_str());
        let parsed = self.parse_shared(&display, text, file);
        self.log_validation_warnings(&parsed.diagnostics);
        match &parsed.program {
            Some(p) => {
                if let Some(e) = self.misplaced_definition(module, path, &display, &p.body) {
                    self.load_error.get_or_insert(e);
                    return false;
                }
                self.queue_param_type_checks(&p.body);
                self.register_definitions(&p.body).is_ok()
            }
            // A module file that does not parse fails the compile with its syntax error
            // (what it should have defined is then unknown, a consequence).
            None => {
                if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
                    let loc = self.line_col_location(d.span);
                    let e = EvalError {
                        msg: join_loc(d.message.clone(), &loc),
                        span: d.span,
                        formatted: true,
                    };
                    self.load_error.get_or_insert(e);
                }
                false
            }
        }
    }

    /// Puppet's rule for autoloaded files: `MOD/manifests/a/b.pp` (and `functions/`, `types/`)
    /// may only define names in the `mod::a::b` namespace (`init.pp`: `mod`).
    pub(super) fn misplaced_definition(
        &self,
        module: &str,
        path: &str,
        display: &str,
        body: &Expr,
    ) -> Option<EvalError> {
        let parts: Vec<String> = path.to_lowercase().split('/').map(String::from).collect();
        if !matches!(
            parts.first().map(String::as_str),
            Some("manifests" | "functions" | "types")
        ) {
            return None;
        }
        let mut names = vec![module.to_lowercase()];
        names.extend(parts[1..parts.len() - 1].iter().cloned());
        let file_name = parts.last()?;
        if !(parts.len() == 2 && file_name == "init.pp") {
            names.push(
                file_name
                    .strip_suffix(".pp")
                    .unwrap_or(file_name)
                    .to_string(),
            );
        }
        let namespace = names.join("::");
        let items = match &body.kind {
            ExprKind::Block(items) => items.as_slice(),
            _ => std::slice::from_ref(body),
        };
        // Only definitions may be at the top of an autoloaded file (Puppet's
        // internal_check_top_construct_in_module).
        let stray = items.iter().find_map(|item| {
            let (label, at) = match &item.kind {
                ExprKind::Resource(_) => ("Resource Statement".to_string(), item.span),
                ExprKind::ResourceDefaults { .. } => {
                    ("Resource Defaults Expression".into(), item.span)
                }
                ExprKind::ResourceOverride { .. } => ("Resource Override".into(), item.span),
                ExprKind::Assignment { op, left, right } => (
                    format!("'{}' expression", op.as_str()),
                    self.operator_span(left.span, right.span, op.as_str()),
                ),
                ExprKind::Relationship { op, left, right } => (
                    format!("'{}' expression", op.as_str()),
                    self.operator_span(left.span, right.span, op.as_str()),
                ),
                ExprKind::Call(c) if c.kind == crate::ast::CallKind::Method => {
                    ("Method call".into(), item.span)
                }
                ExprKind::Call(_) => ("Function Call".into(), item.span),
                ExprKind::If { .. } => ("'if' statement".into(), item.span),
                ExprKind::Unless { .. } => ("'unless' Statement".into(), item.span),
                ExprKind::Case { .. } => ("'case' statement".into(), item.span),
                ExprKind::Node(_) => ("Node Definition".into(), item.span),
                _ => return None,
            };
            let loc = self.line_col_location(Some(at));
            Some(EvalError {
                msg: join_loc(
                    format!(
                        "This {label} is unacceptable as a top level construct in this location"
                    ),
                    &loc,
                ),
                span: Some(at),
                formatted: true,
            })
        });
        if stray.is_some() {
            return stray;
        }
        items.iter().find_map(|item| {
            let name = match &item.kind {
                ExprKind::Class(d) => d.name.as_str(),
                ExprKind::Define(d) => d.name.as_str(),
                ExprKind::Function(d) => d.name.as_str(),
                ExprKind::TypeAlias { name, .. } => name.as_str(),
                _ => return None,
            };
            let name = name.trim_colons();
            (!name.to_lowercase().starts_with(&namespace)).then(|| {
                let loc = self.line_col_location(Some(item.span));
                EvalError {
                    msg: join_loc(
                        format!(
                            "Unacceptable location. The name '{name}' is unacceptable in file '{display}'"
                        ),
                        &loc,
                    ),
                    span: Some(item.span),
                    formatted: true,
                }
            })
        })
    }

    /// Parses a manifest or module file, or takes its tree from the loader's shared cache.
    pub(super) fn parse_shared(
        &self,
        name: &str,
        text: &str,
        file: FileId,
    ) -> std::sync::Arc<crate::eval::parse_cache::Parsed> {
        self.tree(name, text, file, parse_source)
    }

    /// Parses an EPP template, or takes its tree from the loader's shared cache (by the
    /// template's name, which the cache keeps apart from manifests').
    pub(in crate::eval) fn parse_epp_shared(
        &mut self,
        name: &str,
        text: &str,
    ) -> std::sync::Arc<crate::eval::parse_cache::Parsed> {
        let file = match self.epp_files.get(name) {
            Some(&id) if self.sources.get(id).is_some_and(|f| f.text == text) => id,
            _ => {
                let id = self.sources.add(name, text);
                self.epp_files.insert(name.to_string(), id);
                id
            }
        };
        self.tree(
            &format!("epp {name}"),
            text,
            file,
            super::inputs::parse_epp_source,
        )
    }

    /// A file's tree by `parse`, or from the loader's shared cache under `key`.
    fn tree(
        &self,
        key: &str,
        text: &str,
        file: FileId,
        parse: fn(&str, FileId) -> super::inputs::ParsedSource,
    ) -> std::sync::Arc<crate::eval::parse_cache::Parsed> {
        let parse = || {
            let p = parse(text, file);
            crate::eval::parse_cache::Parsed {
                program: p.program,
                diagnostics: p.diagnostics,
            }
        };
        match self.loader.parse_cache() {
            Some(cache) => cache.get(key, text, file, parse),
            None => std::sync::Arc::new(parse()),
        }
    }

    pub(in crate::eval) fn find_class(&mut self, name: &str) -> Option<std::sync::Arc<ClassDef>> {
        let name = lowercase(name.trim_colons());
        if let Some(c) = self.classes.get(&*name) {
            return Some(c.clone());
        }
        self.autoload(&name, "manifests");
        self.classes.get(&*name).cloned()
    }

    pub(in crate::eval) fn find_define(&mut self, name: &str) -> Option<std::sync::Arc<DefineDef>> {
        let name = lowercase(name.trim_colons());
        if let Some(c) = self.defines.get(&*name) {
            return Some(c.clone());
        }
        self.autoload(&name, "manifests");
        self.defines.get(&*name).cloned()
    }

    pub(in crate::eval) fn find_function(&mut self, name: &str) -> Option<Rc<FunctionDef>> {
        let name = lowercase(name.trim_colons());
        if let Some(f) = self.functions.get(&*name) {
            return Some(f.clone());
        }
        if name.contains("::") {
            self.autoload(&name, "functions");
        }
        self.functions.get(&*name).cloned()
    }
}
