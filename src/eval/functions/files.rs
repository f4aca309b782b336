//! Module files, templates and commands, read through the loader and its host: `file`,
//! `binary_file`, `find_file`, `module_directory`, `find_template`, `epp`, `inline_epp`
//! (and EPP rendering), `generate`.

use super::*;

/// `module_directory(names)`: the directory of the first of the modules (names or arrays
/// of names) on the modulepath, else undef.
pub(super) fn f_module_directory(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    for v in a.values.iter().flat_map(flatten_values) {
        if let Some(dir) = c.loader.module_dir(&v.to_display()) {
            return Ok(Value::str(dir));
        }
    }
    Ok(Value::Undef)
}

/// `find_template(paths)`: the path of the first `module/file` found in its module's
/// `templates`, else undef.
pub(super) fn f_find_template(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    for v in a.values.iter().flat_map(flatten_values) {
        let name = v.to_display();
        let Some((module, file)) = name.split_once('/') else {
            continue;
        };
        let rel = format!("templates/{file}");
        if c.loader.load(module, &rel).is_some() {
            if let Some(dir) = c.loader.module_dir(module) {
                return Ok(Value::str(format!("{dir}/{rel}")));
            }
        }
    }
    Ok(Value::Undef)
}

/// Puppet's file search (`Puppet::Parser::Files.find_file`): an absolute path as it is,
/// `mod/path` in the module's `files/` folder. Returns the path and the text.
pub(super) fn find_module_file(c: &Compiler<'_>, spec: &str) -> Option<(String, String)> {
    let host = c.loader.host();
    if spec.starts_with('/') {
        return host.read_file(spec).ok().map(|t| (spec.to_string(), t));
    }
    let (module, rest) = spec.split_once('/')?;
    let (display, text) = c.loader.load(module, &format!("files/{rest}"))?;
    let path = host.canonical_path(&display).unwrap_or(display);
    Some((path, text))
}

/// The file arguments of `file` and `find_file`: strings, or arrays of strings.
pub(super) fn file_specs(a: &Args) -> Vec<String> {
    let mut out = vec![];
    for v in &a.values {
        match v {
            Value::Array(items) => out.extend(items.iter().map(Value::to_display)),
            other => out.push(other.to_display()),
        }
    }
    out
}

/// `file(spec, ...)`: the text of the first file found.
pub(super) fn f_file(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let specs = file_specs(a);
    match specs.iter().find_map(|s| find_module_file(c, s)) {
        Some((_, text)) => Ok(Value::Str(text)),
        None => Err(Flow::Err(c.runtime(
            format!("Could not find any files from {}", specs.join(", ")),
            a.span,
        ))),
    }
}

/// `binary_file(path)`: an absolute file's or a module's file's (`module/file`) bytes as a
/// Binary. The loader reads text, so a file that is not UTF-8 is not found.
pub(super) fn f_binary_file(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let spec = first_arg(a).to_display();
    match find_module_file(c, &spec) {
        Some((_, text)) => Ok(Value::Binary(text.into_bytes().into())),
        None => Err(Flow::Err(c.runtime(
            format!("binary_file(): The given file '{spec}' does not exist"),
            a.span,
        ))),
    }
}

/// `find_file(spec, ...)`: the path of the first file found, or undef.
pub(super) fn f_find_file(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let specs = file_specs(a);
    Ok(specs
        .iter()
        .find_map(|s| find_module_file(c, s))
        .map_or(Value::Undef, |(path, _)| Value::Str(path)))
}

pub(super) fn f_inline_epp(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let text = str_arg(c, a, 0)?;
    let params = a.values.get(1).cloned();
    // An inline template closes over the calling scope (Puppet's `inline_epp`);
    // a template file sees the top scope only.
    c.render_epp("inline_epp", &text, params, a.scope, a.span)
}

pub(super) fn f_epp(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let path = str_arg(c, a, 0)?;
    let Some((_, text)) = c.template_file(&path) else {
        return Err(arg_err(c, a, format!("Could not find template '{path}'")));
    };
    let params = a.values.get(1).cloned();
    let top = c.top;
    c.render_epp(&path, &text, params, top, a.span)
}

/// `generate(command, args...)`: runs a fully qualified command in its own directory when
/// the catalog is compiled and gives its output (stdout and stderr together), as Puppet's
/// 3.x function does; no shell.
pub(super) fn f_generate(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let argv: Vec<String> = a.values.iter().map(Value::to_display).collect();
    let fail = |c: &Compiler<'_>, msg: String| Flow::Err(c.runtime(msg, a.span));
    let command = argv[0].as_str();
    if !command.starts_with('/') {
        return Err(fail(c, "Generators must be fully qualified".into()));
    }
    let allowed = |ch: char| ch.is_alphanumeric() || "-/_.+".contains(ch);
    if !command.chars().all(allowed) {
        return Err(fail(
            c,
            "Generators can only contain alphanumerics, file separators, and dashes".into(),
        ));
    }
    if command.contains("..") {
        return Err(fail(c, "Can not use generators with '..' in them.".into()));
    }
    let dir = std::path::Path::new(command)
        .parent()
        .map_or("/".into(), |d| d.to_string_lossy().into_owned());
    let host = c.loader.host();
    if host.path_kind(&dir) != Some(crate::eval::host::PathKind::Dir) {
        return Err(fail(
            c,
            format!("No such file or directory @ dir_chdir - {dir}"),
        ));
    }
    let failed = |c: &Compiler<'_>, code: i32, output: &str| {
        fail(
            c,
            format!(
                "Failed to execute generator {command}: Execution of '{}' returned {code}: {output}",
                argv.join(" ")
            ),
        )
    };
    let done = match host.run_command(&argv, &dir) {
        Ok(done) => done,
        Err(e) => {
            // Puppet's child reports why it could not exec, and exits 1.
            let why = match e.kind() {
                std::io::ErrorKind::PermissionDenied => "Permission denied",
                _ => "No such file or directory",
            };
            let msg = format!("Error: Could not execute posix command: {why} - {command}");
            return Err(failed(c, 1, &msg));
        }
    };
    let output = String::from_utf8_lossy(&done.output).into_owned();
    match done.code {
        Some(0) => Ok(Value::Str(output)),
        // Puppet's ExecutionFailure gives the output stripped.
        code => Err(failed(c, code.unwrap_or(1), output.trim())),
    }
}

impl Compiler<'_> {
    /// Renders an EPP template with its own scope (parameters from the hash).
    pub(in crate::eval) fn render_epp(
        &mut self,
        name: &str,
        text: &str,
        params: Option<Value>,
        scope: ScopeId,
        span: Span,
    ) -> R<Value> {
        let parsed = self.parse_epp_shared(name, text);
        let Some(program) = &parsed.program else {
            // Puppet's EppEvaluator: `epp(): Invalid EPP: <parse error> (file: ..)`, the
            // inline text's file named `inlined-epp-text`.
            let (func, shown) = if name == "inline_epp" {
                ("inline_epp", "inlined-epp-text")
            } else {
                ("epp", name)
            };
            let d = parsed.diagnostics.iter().find(|d| d.is_error());
            let msg = d.map(|d| d.message.clone()).unwrap_or_default();
            let at = d
                .and_then(|d| d.span)
                .and_then(|sp| Some(self.sources.get(sp.file)?.line_col(sp.start as usize)))
                .map(|(l, c)| format!(" (file: {shown}, line: {l}, column: {c})"))
                .unwrap_or_default();
            return Err(Flow::Err(
                self.runtime(format!("{func}(): Invalid EPP: {msg}{at}"), span),
            ));
        };
        let source = self.scopes[scope].source.clone();
        let mut s = Scope::with_source(ScopeKind::Local, Some(scope), Some(scope), source);
        s.resource = self.scopes[scope].resource;
        self.in_call_scope(s, |c, sid| c.run_epp(program, params, sid, span))
    }

    pub(super) fn run_epp(
        &mut self,
        program: &crate::ast::Program,
        params: Option<Value>,
        sid: ScopeId,
        span: Span,
    ) -> R<Value> {
        let given = match params {
            Some(Value::Hash(h)) => h,
            _ => Default::default(),
        };
        if let ExprKind::Epp {
            params: Some(ps), ..
        } = &program.body.kind
        {
            // The template runs as a closure (`call_by_name`): Puppet's messages name it
            // `lambda`, for epp and inline_epp alike.
            // Undef arguments are not assigned (`call_by_name`): one the template does not
            // declare is no error, and a declared one with a default gets the default.
            if let Some(k) = given
                .iter()
                .filter(|(_, v)| !v.is_undef())
                .map(|(k, _)| k.to_display())
                .find(|k| !ps.iter().any(|p| p.name == *k))
            {
                return Err(Flow::Err(
                    self.runtime(format!("lambda: has no parameter named '{k}'"), span),
                ));
            }
            for p in ps {
                let v = match given.get(&Value::str(p.name.clone())) {
                    Some(v) if !v.is_undef() || p.value.is_none() => v.clone(),
                    _ => match &p.value {
                        Some(d) => self.eval(d, sid)?,
                        None => {
                            return Err(Flow::Err(self.runtime(
                                format!("lambda: expects a value for parameter '{}'", p.name),
                                span,
                            )));
                        }
                    },
                };
                if let Some(te) = &p.type_expr {
                    let t = self.eval_type(te, sid)?;
                    if !t.is_instance(&v) {
                        let m = crate::eval::types::mismatch(&t, &v);
                        return Err(Flow::Err(
                            self.runtime(format!("lambda: parameter '{}' {m}", p.name), span),
                        ));
                    }
                }
                self.scopes[sid].vars.insert(p.name.clone(), v);
            }
        } else {
            for (k, v) in given {
                self.scopes[sid].vars.insert(k.to_display(), v);
            }
        }
        self.render_stack.push(String::new());
        self.render_sensitive.push(false);
        let r = self.eval(&program.body, sid);
        let out = self.render_stack.pop().unwrap_or_default();
        let sensitive = self.render_sensitive.pop().unwrap_or(false);
        match r {
            // A template that rendered a Sensitive value is Sensitive.
            Ok(_) | Err(Flow::Return(..)) if sensitive => {
                Ok(Value::Sensitive(Box::new(Value::Str(out))))
            }
            Ok(_) | Err(Flow::Return(..)) => Ok(Value::Str(out)),
            Err(e) => Err(e),
        }
    }
}
