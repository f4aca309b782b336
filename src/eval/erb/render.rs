//! The evaluator's side of ERB: rendering in a scope, template files, and the
//! `template`/`inline_template` functions.

use super::*;

impl Compiler<'_> {
    /// Renders ERB text in `scope`; `name` names it in errors.
    pub(in crate::eval) fn render_erb(
        &mut self,
        name: &str,
        text: &str,
        scope: ScopeId,
        span: crate::span::Span,
    ) -> R<String> {
        let fail = |c: &Compiler<'_>, m: String| {
            Flow::Err(c.runtime(format!("Failed to parse template {name}:\n  Filepath: {name}\n  Line: 1\n  Detail: {m}\n"), span))
        };
        let template = match self.loader.parse_cache() {
            Some(cache) => cache.erb(text, || compile(text)),
            None => compile(text).map(std::sync::Arc::new),
        }
        .map_err(|m| fail(self, m))?;
        let mut it = Interp {
            c: self,
            scope,
            template: template.clone(),
            out: String::new(),
            locals: vec![HashMap::new()],
            ivars: HashMap::new(),
            aliases: HashMap::new(),
            methods: HashMap::new(),
            span,
        };
        match it.run(&template.body) {
            Ok(_) | Err(Ctl::Next(_)) => Ok(it.out),
            Err(Ctl::Flow(f)) => Err(f),
            Err(Ctl::Err(m)) => Err(fail(it.c, m)),
        }
    }
}

impl Compiler<'_> {
    /// The file and text of template `mod/path` (the file `path` in module `mod`'s
    /// `templates/`).
    pub(in crate::eval) fn template_file(&self, spec: &str) -> Option<(String, String)> {
        let (module, rest) = spec.split_once('/').unwrap_or((spec, ""));
        self.loader.load(module, &format!("templates/{rest}"))
    }

    /// Renders a template: Ordo's ERB, or Ruby's where Ordo's fails (a construct it does
    /// not know; Ruby's own error when the template is wrong). `file`: the template's path,
    /// `None` for an inline template.
    fn render_template(
        &mut self,
        name: &str,
        file: Option<&str>,
        text: &str,
        scope: ScopeId,
        span: crate::span::Span,
    ) -> R<String> {
        if self.ruby.erb_depth > 0 {
            return self.render_erb_in_ruby(name, file, text, scope, span);
        }
        let logs = self.logs.len();
        let native = self.render_erb(name, text, scope, span);
        let Err(Flow::Err(mut e)) = native else {
            return native;
        };
        // A bound of the compile (iterations, sizes) holds for Ruby's rendering too.
        if e.msg.contains(LIMIT_MARK) {
            return Err(Flow::Err(e));
        }
        let ruby = match self.loader.ruby() {
            Some(rt) => rt.available(),
            None => Err(format!(
                "Ordo has no Ruby here (install the package `{}`)",
                crate::eval::functions::ruby_call::RUBY_PACKAGE
            )),
        };
        match ruby {
            Ok(()) => {
                // What the first rendering logged is logged again by Ruby's.
                self.logs.truncate(logs);
                self.render_erb_in_ruby(name, file, text, scope, span)
            }
            // A construct or a method Ordo's ERB does not know (its `undefined method` may
            // be one Ruby has).
            Err(why)
                if e.msg.contains("Ordo's ERB does not support")
                    || e.msg.contains("undefined method") =>
            {
                e.msg = format!(
                    "{}  Ruby renders what Ordo's ERB does not know: {why}\n",
                    e.msg
                );
                Err(Flow::Err(e))
            }
            Err(_) => Err(Flow::Err(e)),
        }
    }
}

/// `template('mod/file.erb', ...)`: each file rendered, results concatenated.
pub fn f_template(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = String::new();
    for v in a.values.clone() {
        let path = v.to_display();
        let Some((file, text)) = c.template_file(&path) else {
            return Err(fail_plain(
                c,
                a,
                format!("Could not find template '{path}'"),
            ));
        };
        out.push_str(&c.render_template(&path, Some(&file), &text, a.scope, a.span)?);
    }
    Ok(Value::Str(out))
}

pub fn f_inline_template(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    let mut out = String::new();
    for v in a.values.clone() {
        let text = v.to_display();
        out.push_str(&c.render_template("inline template", None, &text, a.scope, a.span)?);
    }
    let _ = arg(a, 0);
    Ok(Value::Str(out))
}
