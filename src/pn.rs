//! Puppet Notation: the AST printed exactly as `puppet parser dump --format pn` prints it
//! (pops/model/pn_transformer.rb and pops/pn.rb), and as JSON (`--format json`, PN's
//! `to_data`).

use crate::ruby_text::ruby_float;

use crate::ast::*;
use std::fmt::Write;

/// A PN value.
#[derive(Clone, Debug, PartialEq)]
pub enum Pn {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Pn>),
    /// `{:key value ...}`
    Map(Vec<(&'static str, Pn)>),
    /// `(name args...)`
    Call(&'static str, Vec<Pn>),
    /// A map whose keys come from the program (parameter names).
    NamedMap(Vec<(String, Pn)>),
}

/// The PN text of a program.
pub fn to_pn(program: &Program) -> String {
    let mut out = String::new();
    write_pn(&transform(&program.body), &mut out);
    out
}

/// The JSON text of a program (Puppet's `--format json`).
pub fn to_json(program: &Program) -> String {
    to_data(&transform(&program.body)).to_string()
}

fn call(name: &'static str, args: Vec<Pn>) -> Pn {
    Pn::Call(name, args)
}

fn map(entries: Vec<(&'static str, Pn)>) -> Pn {
    Pn::Map(entries)
}

fn s(v: &str) -> Pn {
    Pn::Str(v.to_string())
}

fn list(v: &[Expr]) -> Pn {
    Pn::List(v.iter().map(transform).collect())
}

fn is_nop(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Nop)
}

/// `block_as_entry`: a block's statements, or a one-element list.
fn block_list(e: &Expr) -> Pn {
    match &e.kind {
        ExprKind::Block(stmts) => list(stmts),
        _ => Pn::List(vec![transform(e)]),
    }
}

fn params(ps: &[Parameter]) -> Pn {
    Pn::NamedMap(
        ps.iter()
            .map(|p| {
                let mut entries = Vec::new();
                if let Some(t) = &p.type_expr {
                    entries.push(("type", transform(t)));
                }
                if p.captures_rest {
                    entries.push(("splat", Pn::Bool(true)));
                }
                if let Some(v) = &p.value {
                    entries.push(("value", transform(v)));
                }
                (p.name.clone(), map(entries))
            })
            .collect(),
    )
}

fn ops(ops: &[AttributeOp]) -> Pn {
    Pn::List(
        ops.iter()
            .map(|op| match op {
                AttributeOp::Set {
                    name,
                    append,
                    value,
                    ..
                } => call(
                    if *append { "+>" } else { "=>" },
                    vec![s(name), transform(value)],
                ),
                AttributeOp::Splat { expr, .. } => call("splat-hash", vec![transform(expr)]),
            })
            .collect(),
    )
}

fn form_entry(entries: &mut Vec<(&'static str, Pn)>, form: ResourceForm) {
    if form != ResourceForm::Regular {
        entries.push(("form", s(form.as_str())));
    }
}

fn definition(
    head: &'static str,
    name: &str,
    parent: Option<&str>,
    ps: &[Parameter],
    body: Option<&Expr>,
    returns: Option<&Expr>,
) -> Pn {
    let mut entries = vec![("name", s(name))];
    if let Some(p) = parent {
        entries.push(("parent", s(p)));
    }
    if !ps.is_empty() {
        entries.push(("params", params(ps)));
    }
    if let Some(b) = body {
        entries.push(("body", block_list(b)));
    }
    if let Some(r) = returns {
        entries.push(("returns", transform(r)));
    }
    call(head, vec![map(entries)])
}

fn lambda(l: &Lambda) -> Pn {
    let mut entries = Vec::new();
    if !l.params.is_empty() {
        entries.push(("params", params(&l.params)));
    }
    if let Some(r) = &l.return_type {
        entries.push(("returns", transform(r)));
    }
    if let Some(b) = &l.body {
        entries.push(("body", block_list(b)));
    }
    call("lambda", vec![map(entries)])
}

fn conditional(name: &'static str, test: &Expr, then_expr: &Expr, else_expr: &Expr) -> Pn {
    let mut entries = vec![("test", transform(test))];
    if !is_nop(then_expr) {
        entries.push(("then", block_list(then_expr)));
    }
    if !is_nop(else_expr) {
        entries.push(("else", block_list(else_expr)));
    }
    call(name, vec![map(entries)])
}

/// Turns one expression into PN.
pub fn transform(e: &Expr) -> Pn {
    match &e.kind {
        ExprKind::Undef => Pn::Nil,
        ExprKind::Default => call("default", vec![]),
        ExprKind::Bool(b) => Pn::Bool(*b),
        ExprKind::Integer { value, radix: 10 } => Pn::Int(*value),
        ExprKind::Integer { value, radix } => call(
            "int",
            vec![map(vec![
                ("radix", Pn::Int(*radix as i64)),
                ("value", Pn::Int(*value)),
            ])],
        ),
        ExprKind::Float(f) => Pn::Float(*f),
        ExprKind::Str(v) => s(v),
        ExprKind::Regex(r) => call("regexp", vec![s(r)]),
        ExprKind::QualifiedName(n) => call("qn", vec![s(n)]),
        ExprKind::QualifiedReference(n) => call("qr", vec![s(n)]),
        ExprKind::ReservedWord(w) => call("reserved", vec![s(w)]),
        ExprKind::ConcatString(segs) => call("concat", segs.iter().map(transform).collect()),
        ExprKind::Text(x) => call("str", vec![transform(x)]),
        ExprKind::Heredoc { syntax, text } => {
            let mut entries = Vec::new();
            if !syntax.is_empty() {
                entries.push(("syntax", s(syntax)));
            }
            entries.push(("text", transform(text)));
            call("heredoc", vec![map(entries)])
        }
        ExprKind::Array(v) => call("array", v.iter().map(transform).collect()),
        ExprKind::Hash(entries) => call(
            "hash",
            entries
                .iter()
                .map(|k| call("=>", vec![transform(&k.key), transform(&k.value)]))
                .collect(),
        ),
        ExprKind::Variable(n) => call("var", vec![s(n)]),
        ExprKind::Access { left, keys } => {
            let mut v = vec![transform(left)];
            v.extend(keys.iter().map(transform));
            call("access", v)
        }
        ExprKind::NamedAccess { left, right } => call(".", vec![transform(left), transform(right)]),
        ExprKind::Unary { op, expr } => match op {
            UnaryOp::Not => call("!", vec![transform(expr)]),
            UnaryOp::Unfold => call("unfold", vec![transform(expr)]),
            UnaryOp::Minus => match &expr.kind {
                ExprKind::Integer { value, .. } => Pn::Int(value.wrapping_neg()),
                ExprKind::Float(f) => Pn::Float(-f),
                _ => call("-", vec![transform(expr)]),
            },
        },
        ExprKind::Binary { op, left, right } => {
            call(op.as_str(), vec![transform(left), transform(right)])
        }
        ExprKind::Relationship { op, left, right } => {
            call(op.as_str(), vec![transform(left), transform(right)])
        }
        ExprKind::Assignment { op, left, right } => {
            call(op.as_str(), vec![transform(left), transform(right)])
        }
        ExprKind::Paren(x) => call("paren", vec![transform(x)]),
        ExprKind::Selector { left, entries } => call(
            "?",
            vec![
                transform(left),
                Pn::List(
                    entries
                        .iter()
                        .map(|en| call("=>", vec![transform(&en.matching), transform(&en.value)]))
                        .collect(),
                ),
            ],
        ),
        ExprKind::Block(stmts) => call("block", stmts.iter().map(transform).collect()),
        ExprKind::If {
            test,
            then_expr,
            else_expr,
        } => conditional("if", test, then_expr, else_expr),
        ExprKind::Unless {
            test,
            then_expr,
            else_expr,
        } => conditional("unless", test, then_expr, else_expr),
        ExprKind::Case { test, options } => call(
            "case",
            vec![
                transform(test),
                Pn::List(
                    options
                        .iter()
                        .map(|o| {
                            map(vec![
                                ("when", list(&o.values)),
                                ("then", block_list(&o.then_expr)),
                            ])
                        })
                        .collect(),
                ),
            ],
        ),
        ExprKind::Nop => call("nop", vec![]),
        ExprKind::Call(c) => {
            let name = match (c.kind, c.rval_required) {
                (CallKind::Named, true) => "call",
                (CallKind::Named, false) => "invoke",
                (CallKind::Method, true) => "call-method",
                (CallKind::Method, false) => "invoke-method",
                (CallKind::Function, true) => "call-lambda",
                (CallKind::Function, false) => "invoke-lambda",
            };
            let mut entries = vec![("functor", transform(&c.functor)), ("args", list(&c.args))];
            if let Some(l) = &c.lambda {
                entries.push(("block", transform(l)));
            }
            call(name, vec![map(entries)])
        }
        ExprKind::Lambda(l) => lambda(l),
        ExprKind::Resource(r) => {
            let bodies = r
                .bodies
                .iter()
                .map(|b| map(vec![("title", transform(&b.title)), ("ops", ops(&b.ops))]))
                .collect();
            let mut entries = vec![
                ("type", transform(&r.type_name)),
                ("bodies", Pn::List(bodies)),
            ];
            form_entry(&mut entries, r.form);
            call("resource", vec![map(entries)])
        }
        ExprKind::ResourceDefaults {
            form,
            type_ref,
            ops: o,
        } => {
            let mut entries = vec![("type", transform(type_ref)), ("ops", ops(o))];
            form_entry(&mut entries, *form);
            call("resource-defaults", vec![map(entries)])
        }
        ExprKind::ResourceOverride {
            form,
            resources,
            ops: o,
        } => {
            let mut entries = vec![("resources", transform(resources)), ("ops", ops(o))];
            form_entry(&mut entries, *form);
            call("resource-override", vec![map(entries)])
        }
        ExprKind::Collect(c) => {
            let CollectExpr {
                type_expr,
                query,
                ops: o,
            } = &**c;
            let qname = if query.exported {
                "exported-query"
            } else {
                "virtual-query"
            };
            let q = match &query.expr {
                Some(x) if !is_nop(x) => call(qname, vec![transform(x)]),
                _ => call(qname, vec![]),
            };
            let mut entries = vec![("type", transform(type_expr)), ("query", q)];
            if !o.is_empty() {
                entries.push(("ops", ops(o)));
            }
            call("collect", vec![map(entries)])
        }
        ExprKind::Class(c) => definition(
            "class",
            &c.name,
            c.parent.as_deref(),
            &c.params,
            c.body.as_ref(),
            None,
        ),
        ExprKind::Define(d) => {
            definition("define", &d.name, None, &d.params, d.body.as_ref(), None)
        }
        ExprKind::Node(n) => {
            let mut entries = vec![("matches", list(&n.matches))];
            if let Some(p) = &n.parent {
                entries.push(("parent", transform(p)));
            }
            if let Some(b) = &n.body {
                entries.push(("body", block_list(b)));
            }
            call("node", vec![map(entries)])
        }
        ExprKind::Function(f) => definition(
            "function",
            &f.name,
            None,
            &f.params,
            f.body.as_ref(),
            f.return_type.as_ref(),
        ),
        ExprKind::TypeAlias { name, type_expr } => {
            call("type-alias", vec![s(name), transform(type_expr)])
        }
        ExprKind::TypeDefinition(t) => call(
            "type-definition",
            vec![
                s(&t.name),
                t.parent.as_deref().map_or(Pn::Nil, s),
                transform(&t.body),
            ],
        ),
        ExprKind::TypeMapping {
            type_expr,
            mapping_expr,
        } => call(
            "type-mapping",
            vec![transform(type_expr), transform(mapping_expr)],
        ),
        ExprKind::Epp { params: ps, body } => {
            // Puppet wraps a template in a lambda whose body is the `EppExpression`.
            let epp = match &body.kind {
                ExprKind::Block(stmts) => call("epp", stmts.iter().map(transform).collect()),
                _ => call("epp", vec![transform(body)]),
            };
            let mut entries = Vec::new();
            if let Some(ps) = ps {
                if !ps.is_empty() {
                    entries.push(("params", params(ps)));
                }
            }
            entries.push(("body", Pn::List(vec![epp])));
            call("lambda", vec![map(entries)])
        }
        ExprKind::RenderString(t) => call("render-s", vec![s(t)]),
        ExprKind::Render(x) => call("render", vec![transform(x)]),
    }
}

/// `{:key value ...}`, whether the keys are fixed names or come from the program.
fn write_map<K: AsRef<str>>(entries: &[(K, Pn)], out: &mut String) {
    out.push('{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push(':');
        out.push_str(k.as_ref());
        out.push(' ');
        write_pn(v, out);
    }
    out.push('}');
}

/// Writes PN text (single line).
pub fn write_pn(pn: &Pn, out: &mut String) {
    match pn {
        Pn::Nil => out.push_str("nil"),
        Pn::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Pn::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Pn::Float(f) => out.push_str(&ruby_float(*f)),
        Pn::Str(v) => quote(v, out),
        Pn::List(v) => {
            out.push('[');
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_pn(x, out);
            }
            out.push(']');
        }
        Pn::Map(entries) => write_map(entries, out),
        Pn::NamedMap(entries) => write_map(entries, out),
        Pn::Call(name, args) => {
            out.push('(');
            out.push_str(name);
            for a in args {
                out.push(' ');
                write_pn(a, out);
            }
            out.push(')');
        }
    }
}

/// PN's `double_quote`.
fn quote(v: &str, out: &mut String) {
    out.push('"');
    for c in v.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\o{:03o}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// PN's `to_data`, as JSON.
pub fn to_data(pn: &Pn) -> serde_json::Value {
    use serde_json::{json, Value};
    match pn {
        Pn::Nil => Value::Null,
        Pn::Bool(b) => json!(b),
        Pn::Int(i) => json!(i),
        Pn::Float(f) => json!(f),
        Pn::Str(v) => json!(v),
        Pn::List(v) => Value::Array(v.iter().map(to_data).collect()),
        Pn::Map(entries) => {
            let mut r = Vec::new();
            for (k, v) in entries {
                r.push(json!(k));
                r.push(to_data(v));
            }
            json!({ "#": r })
        }
        Pn::NamedMap(entries) => {
            let mut r = Vec::new();
            for (k, v) in entries {
                r.push(json!(k));
                r.push(to_data(v));
            }
            json!({ "#": r })
        }
        Pn::Call(name, args) => {
            let mut v = vec![json!(name)];
            v.extend(args.iter().map(to_data));
            json!({ "^": v })
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ruby_text::ruby_float;

    #[test]
    fn floats_print_like_ruby() {
        assert_eq!(ruby_float(1.5), "1.5");
        assert_eq!(ruby_float(15000000000.0), "15000000000.0");
        assert_eq!(ruby_float(1e-5), "1.0e-05");
        assert_eq!(ruby_float(0.0001), "0.0001");
        assert_eq!(ruby_float(1e16), "1.0e+16");
        // `puppet parser dump --format pn -e 'notice(1e15, 1234567890123456.0, 123456789012345.0)'`
        assert_eq!(ruby_float(1e15), "1.0e+15");
        assert_eq!(ruby_float(1234567890123456.0), "1.234567890123456e+15");
        assert_eq!(ruby_float(123456789012345.0), "123456789012345.0");
        assert_eq!(ruby_float(2.0), "2.0");
    }
}
