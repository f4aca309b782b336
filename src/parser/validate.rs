//! Puppet's static validation (pops/validation/checker4_0.rb): what `puppet parser validate`
//! rejects in a tree that parsed, with Puppet's wording (labels from model_label_provider.rb).

use crate::ast::*;
use crate::ast_walk::for_each_child;
use crate::diagnostics::Diagnostic;
use crate::fxhash::FxHashSet;
use crate::span::Span;

/// Checks a parsed program.
pub fn validate(program: &Program) -> Vec<Diagnostic> {
    let mut v = Validator { out: Vec::new() };
    let mut path = vec![Node::Program];
    v.walk(&program.body, &mut path);
    v.out
}

/// A container on the path from the program to the node being checked.
#[derive(Clone, Copy)]
enum Node<'a> {
    Program,
    /// The statement block that Puppet always has around a definition's or lambda's body
    /// (our tree leaves it out when the body has one statement).
    Body,
    Expr(&'a Expr),
}

struct Validator {
    out: Vec<Diagnostic>,
}

/// Puppet's label for a node (`label_provider`).
pub fn label(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Undef => "'undef' expression".into(),
        ExprKind::Default => "'default' expression".into(),
        ExprKind::Bool(_) => "Boolean".into(),
        ExprKind::Integer { .. } => "Literal Integer".into(),
        ExprKind::Float(_) => "Literal Float".into(),
        ExprKind::Str(_) => "String".into(),
        ExprKind::Regex(_) => "Regular Expression".into(),
        ExprKind::QualifiedName(_) => "Name".into(),
        ExprKind::QualifiedReference(_) => "Type-Name".into(),
        ExprKind::ReservedWord(w) => format!("Reserved Word '{w}'"),
        ExprKind::ConcatString(_) => "Double Quoted String".into(),
        ExprKind::Text(_) => "Expression in Interpolated String".into(),
        ExprKind::Heredoc { syntax, .. } => format!("'@({syntax})' expression"),
        ExprKind::Array(_) => "Array Expression".into(),
        ExprKind::Hash(_) => "Hash Expression".into(),
        ExprKind::Variable(_) => "Variable".into(),
        ExprKind::Access { .. } => "'[]' expression".into(),
        ExprKind::NamedAccess { .. } => "'.' expression".into(),
        ExprKind::Unary { op, .. } => match op {
            UnaryOp::Not => "'not' expression".into(),
            UnaryOp::Minus => "Unary Minus".into(),
            UnaryOp::Unfold => "Unfold".into(),
        },
        ExprKind::Binary { op, .. } => format!("'{}' expression", op.as_str()),
        ExprKind::Relationship { op, .. } => format!("'{}' expression", op.as_str()),
        ExprKind::Assignment { op, .. } => format!("'{}' expression", op.as_str()),
        ExprKind::Paren(_) => "Parenthesized Expression".into(),
        ExprKind::Selector { .. } => "Selector Expression".into(),
        ExprKind::Block(_) => "Block Expression".into(),
        ExprKind::If { .. } => "'if' statement".into(),
        ExprKind::Unless { .. } => "'unless' Statement".into(),
        ExprKind::Case { .. } => "'case' statement".into(),
        ExprKind::Nop => "Nop Expression".into(),
        ExprKind::Call(c) => match c.kind {
            CallKind::Method => "Method call".into(),
            _ => "Function Call".into(),
        },
        ExprKind::Lambda(_) => "Lambda".into(),
        ExprKind::Resource(_) => "Resource Statement".into(),
        ExprKind::ResourceDefaults { .. } => "Resource Defaults Expression".into(),
        ExprKind::ResourceOverride { .. } => "Resource Override".into(),
        ExprKind::Collect(c) => {
            if c.query.exported {
                "Exported Query".into()
            } else {
                "Virtual Query".into()
            }
        }
        ExprKind::Class(_) => "Host Class Definition".into(),
        ExprKind::Define(_) => "'define' expression".into(),
        ExprKind::Node(_) => "Node Definition".into(),
        ExprKind::Function(_) => "Function Definition".into(),
        ExprKind::TypeAlias { .. } => "Type Alias".into(),
        ExprKind::TypeDefinition(_) => "Type Definition".into(),
        ExprKind::TypeMapping { .. } => "Type Mapping".into(),
        ExprKind::Epp { .. } => "Lambda".into(),
        ExprKind::RenderString(_) => "Epp Text".into(),
        ExprKind::Render(_) => "Epp Interpolated Expression".into(),
    }
}

fn article(text: &str) -> &'static str {
    let mut chars = text.chars();
    let mut c = chars.next().unwrap_or('x');
    if c == '\'' || c == '"' {
        c = chars.next().unwrap_or('x');
    }
    if "aeiouy".contains(c.to_ascii_lowercase()) {
        "an"
    } else {
        "a"
    }
}

pub fn a_an(e: &Expr) -> String {
    let l = label(e);
    format!("{} {l}", article(&l))
}

pub fn a_an_uc(e: &Expr) -> String {
    let l = label(e);
    let a = article(&l);
    let a = if a == "an" { "An" } else { "A" };
    format!("{a} {l}")
}

/// Puppet's `idem`: does evaluating this have no effect besides its value?
fn idem(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Nop
        | ExprKind::Undef
        | ExprKind::Default
        | ExprKind::Bool(_)
        | ExprKind::Integer { .. }
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Regex(_)
        | ExprKind::QualifiedName(_)
        | ExprKind::QualifiedReference(_)
        | ExprKind::ReservedWord(_)
        | ExprKind::Array(_)
        | ExprKind::Hash(_)
        | ExprKind::Access { .. }
        | ExprKind::NamedAccess { .. }
        | ExprKind::Unary { .. }
        | ExprKind::Variable(_)
        | ExprKind::Text(_)
        | ExprKind::ConcatString(_)
        | ExprKind::Heredoc { .. }
        | ExprKind::Selector { .. } => true,
        ExprKind::Binary { op, .. } => !matches!(op, BinaryOp::Match | BinaryOp::NotMatch),
        ExprKind::Paren(x) => idem(x),
        ExprKind::Block(v) => v.iter().all(idem),
        ExprKind::If {
            test,
            then_expr,
            else_expr,
        }
        | ExprKind::Unless {
            test,
            then_expr,
            else_expr,
        } => idem(test) && idem(then_expr) && idem(else_expr),
        ExprKind::Case { test, options } => {
            idem(test)
                && options
                    .iter()
                    .all(|o| o.values.iter().all(idem) && idem(&o.then_expr))
        }
        _ => false,
    }
}

fn resource_without_title(e: &Expr) -> Option<&str> {
    if let ExprKind::Block(v) = &e.kind {
        if let [Expr {
            kind: ExprKind::QualifiedName(n),
            ..
        }, Expr {
            kind: ExprKind::Hash(_),
            ..
        }] = v.as_slice()
        {
            return Some(n);
        }
    }
    None
}

fn is_numeric_var(name: &str) -> bool {
    name == "0"
        || (!name.is_empty() && !name.starts_with('0') && name.bytes().all(|b| b.is_ascii_digit()))
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `\A(?:::)?(?:[a-z]\w*::)*[a-z_]\w*\z`
fn is_var_name(name: &str) -> bool {
    let n = name.strip_prefix("::").unwrap_or(name);
    let segs: Vec<&str> = n.split("::").collect();
    let last = segs.len() - 1;
    segs.iter().enumerate().all(|(i, s)| {
        let b = s.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_lowercase() || (i == last && b[0] == b'_'))
            && b.iter().all(|c| is_word(*c))
    })
}

/// `\A[a-z][\w]*(?:::[a-z][\w]*)*\z`
fn is_classref_decl(name: &str) -> bool {
    name.split("::").all(|s| {
        let b = s.as_bytes();
        !b.is_empty() && b[0].is_ascii_lowercase() && b.iter().all(|c| is_word(*c))
    })
}

/// `\A[A-Z][\w]*(?:::[A-Z][\w]*)*\z`
fn is_classref_ext_decl(name: &str) -> bool {
    name.split("::").all(|s| {
        let b = s.as_bytes();
        !b.is_empty() && b[0].is_ascii_uppercase() && b.iter().all(|c| is_word(*c))
    })
}

const RESERVED_TYPE_NAMES: &[&str] = &[
    "type",
    "any",
    "unit",
    "scalar",
    "boolean",
    "numeric",
    "integer",
    "float",
    "collection",
    "array",
    "hash",
    "tuple",
    "struct",
    "variant",
    "optional",
    "enum",
    "regexp",
    "pattern",
    "runtime",
    "init",
    "object",
    "sensitive",
    "semver",
    "semverrange",
    "string",
    "timestamp",
    "timespan",
    "typeset",
];

impl Validator {
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.out
            .push(Diagnostic::error("validation", msg).with_label(span, "here"));
    }

    fn warn(&mut self, span: Span, msg: impl Into<String>) {
        self.out
            .push(Diagnostic::warning("validation", msg).with_label(span, "here"));
    }

    fn walk<'a>(&mut self, e: &'a Expr, path: &mut Vec<Node<'a>>) {
        self.check(e, path);
        path.push(Node::Expr(e));
        let body = body_of(e);
        for_each_child(e, &mut |c| {
            let wrap =
                body.is_some_and(|b| std::ptr::eq(b, c)) && !matches!(c.kind, ExprKind::Block(_));
            if wrap {
                path.push(Node::Body);
            }
            self.walk(c, path);
            if wrap {
                path.pop();
            }
        });
        path.pop();
    }

    fn check(&mut self, e: &Expr, path: &[Node]) {
        match &e.kind {
            ExprKind::Block(stmts) => {
                if let Some(name) = resource_without_title(e) {
                    self.err(
                        e.span,
                        format!("This expression is invalid. Did you try declaring a '{name}' resource without a title?"),
                    );
                } else if stmts.len() > 1 {
                    if let Some(s) = stmts[..stmts.len() - 1].iter().find(|s| idem(s)) {
                        self.err(s.span, format!("This {} has no effect. A value was produced and then forgotten (one or more preceding expressions may have the wrong form)", label(s)));
                    }
                }
            }
            ExprKind::Assignment { op, left, right } => match op {
                AssignOp::Assign => {
                    self.assign(left, false);
                    self.rvalue(right);
                }
                _ => self.err(
                    e.span,
                    format!(
                        "The operator '{}' is no longer supported. See http://links.puppet.com/remove-plus-equals",
                        op.as_str()
                    ),
                ),
            },
            ExprKind::Binary { left, right, .. } => {
                self.rvalue(left);
                self.rvalue(right);
            }
            ExprKind::Unary { expr, .. } => self.rvalue(expr),
            ExprKind::Relationship { left, right, .. } => {
                for side in [left, right] {
                    if !matches!(side.kind, ExprKind::Collect(_) | ExprKind::Relationship { .. }) {
                        self.rvalue(side);
                    }
                }
            }
            ExprKind::Array(v) => v.iter().for_each(|x| self.rvalue(x)),
            ExprKind::Hash(entries) => {
                // A set, not a list: a hash can have many thousands of keys.
                let mut seen: FxHashSet<String> = FxHashSet::default();
                for en in entries {
                    self.rvalue(&en.key);
                    self.rvalue(&en.value);
                    if let Some(k) = literal_key(&en.key) {
                        if seen.contains(&k) {
                            // At the entry's `=>`, where Puppet locates it: the gap between
                            // key and value (the compile skips the blanks before it).
                            let at = Span::new(en.span.file, en.key.span.end as usize, en.value.span.start as usize);
                            self.warn(at, format!("The key '{k}' is declared more than once"));
                        } else {
                            seen.insert(k);
                        }
                    }
                }
            }
            ExprKind::If { test, .. } | ExprKind::Unless { test, .. } => self.rvalue(test),
            ExprKind::Case { test, options } => {
                self.rvalue(test);
                let mut found = false;
                for o in options {
                    for v in &o.values {
                        self.rvalue(v);
                        if matches!(v.kind, ExprKind::Default) {
                            if found {
                                self.err(v.span, "This 'case' statement already has a 'default' entry - this is a duplicate");
                            }
                            found = true;
                        }
                    }
                }
            }
            ExprKind::Selector { left, entries } => {
                self.rvalue(left);
                let defaults: Vec<&SelectorEntry> = entries
                    .iter()
                    .filter(|en| matches!(en.matching.kind, ExprKind::Default))
                    .collect();
                if defaults.len() > 1 {
                    self.err(defaults[1].matching.span, "This Selector Expression already has a 'default' entry - this is a duplicate");
                }
                entries.iter().for_each(|en| self.rvalue(&en.matching));
            }
            ExprKind::Variable(name) => self.check_variable(e, name),
            ExprKind::ReservedWord(w) => self.err(
                e.span,
                format!("Use of reserved word: {w}, must be quoted if intended to be a String value"),
            ),
            ExprKind::Call(c) => self.check_call(c),
            ExprKind::Lambda(l) => {
                let last = l.params.len().saturating_sub(1);
                for (i, p) in l.params.iter().enumerate() {
                    if p.captures_rest && i != last {
                        self.err(p.span, format!("Parameter ${} is not last, and has 'captures rest'", p.name));
                    }
                }
                self.check_params(&l.params, false);
                if let Some(r) = &l.return_type {
                    self.check_type_ref(e, r);
                }
            }
            ExprKind::Resource(r) => {
                if r.form != ResourceForm::Regular
                    && matches!(&r.type_name.kind, ExprKind::QualifiedName(n) if n == "class")
                {
                    self.err(e.span, "Classes are not virtualizable");
                }
                for b in &r.bodies {
                    self.check_ops(&b.ops, false, "Resource Instance Definition");
                    let mut splats = b.ops.iter().filter(|o| matches!(o, AttributeOp::Splat { .. }));
                    if let Some(second) = splats.nth(1) {
                        self.err(second.span(), "Unfolding of attributes from Hash can only be used once per resource body");
                    }
                }
            }
            ExprKind::ResourceDefaults { form, ops, .. } => {
                if *form != ResourceForm::Regular {
                    self.err(e.span, "Resource Defaults are not virtualizable");
                }
                self.check_ops(ops, false, "Resource Defaults Expression");
            }
            ExprKind::ResourceOverride { form, ops, .. } => {
                if *form != ResourceForm::Regular {
                    self.err(e.span, "Resource Defaults are not virtualizable");
                }
                self.check_ops(ops, true, "");
            }
            ExprKind::Collect(c) => {
                let CollectExpr {
                    type_expr,
                    query,
                    ops,
                } = &**c;
                if !matches!(type_expr.kind, ExprKind::QualifiedReference(_)) {
                    self.err(
                        type_expr.span,
                        format!("Illegal expression. {} is unacceptable as type name in {}", a_an_uc(type_expr), a_an(e)),
                    );
                }
                if let Some(q) = &query.expr {
                    self.query(q);
                }
                self.check_ops(ops, true, "");
            }
            ExprKind::Class(c) => {
                self.named_definition(e, &c.name, path);
                self.no_capture(e, &c.params);
                self.check_params(&c.params, true);
                self.reserved_params(e, &c.params);
                self.no_idem_last(e, c.body.as_ref());
            }
            ExprKind::Define(d) => {
                self.named_definition(e, &d.name, path);
                self.no_capture(e, &d.params);
                self.check_params(&d.params, true);
                self.reserved_params(e, &d.params);
                self.no_idem_last(e, d.body.as_ref());
            }
            ExprKind::Function(f) => {
                self.named_definition(e, &f.name, path);
                if let Some(r) = &f.return_type {
                    self.check_type_ref(e, r);
                }
                self.check_params(&f.params, true);
            }
            ExprKind::Node(n) => {
                for m in &n.matches {
                    self.hostname(m, e);
                }
                self.top(e, path);
                self.no_idem_last(e, n.body.as_ref());
                if let Some(p) = &n.parent {
                    self.err(p.span, "Node inheritance is not supported in Puppet >= 4.0.0. See http://links.puppet.com/puppet-node-inheritance-deprecation");
                }
            }
            ExprKind::TypeAlias { name, type_expr } => {
                self.top(e, path);
                if !is_classref_ext_decl(name) {
                    self.err(e.span, format!("Unacceptable name. The name '{name}' is unacceptable as the name of {}", a_an(e)));
                }
                self.reserved_type_name(e, name);
                self.check_type_ref(e, type_expr);
            }
            ExprKind::TypeDefinition(t) => {
                self.top(e, path);
                self.reserved_type_name(e, &t.name);
                self.err(e.span, format!("Expressions of type {} are not supported in this version of Puppet", a_an(e)));
            }
            ExprKind::TypeMapping { type_expr, .. } => {
                self.top(e, path);
                let runtime = matches!(&type_expr.kind, ExprKind::Access { left, .. }
                    if matches!(&left.kind, ExprKind::QualifiedReference(n) if n == "Runtime"));
                if !runtime {
                    self.err(e.span, format!("Expressions of type {} are not supported in this version of Puppet", a_an(e)));
                }
            }
            ExprKind::Epp { params: Some(ps), .. } => {
                self.no_capture(e, ps);
                self.check_params(ps, true);
            }
            _ => {}
        }
    }

    fn check_variable(&mut self, e: &Expr, name: &str) {
        if name.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            if !is_numeric_var(name) {
                self.err(e.span, format!("Illegal numeric variable name, The given name '{name}' must be a decimal value if it starts with a digit 0-9"));
            }
        } else if !is_var_name(name) {
            self.err(e.span, format!("Illegal variable name, The given name '{name}' does not conform to the naming rule /^((::)?[a-z]\\w*)*((::)?[a-z_]\\w*)$/"));
        }
    }

    fn check_call(&mut self, c: &Call) {
        match c.kind {
            CallKind::Named => {
                let f = &c.functor;
                let ok = match &f.kind {
                    ExprKind::QualifiedName(_) | ExprKind::QualifiedReference(_) => true,
                    ExprKind::Access { left, .. } => {
                        matches!(left.kind, ExprKind::QualifiedReference(_))
                    }
                    _ => false,
                };
                if matches!(f.kind, ExprKind::RenderString(_)) {
                    self.err(f.span, "Ambiguous EPP parameter expression. Probably missing '<%-' before parameters to remove leading whitespace");
                } else if !ok {
                    self.err(
                        f.span,
                        format!("Illegal expression. {} is unacceptable as function name in a Function Call", a_an_uc(f)),
                    );
                }
            }
            CallKind::Method | CallKind::Function => {}
        }
    }

    /// `what` names the expression in the message for a `+>` where it is not allowed.
    fn check_ops(&mut self, ops: &[AttributeOp], append_ok: bool, what: &str) {
        for op in ops {
            match op {
                AttributeOp::Set {
                    name,
                    append,
                    value,
                    span,
                } => {
                    if *append && !append_ok {
                        self.err(*span, format!("Illegal +> operation on attribute {name}. This operator can not be used in a {what}"));
                    }
                    self.rvalue(value);
                }
                AttributeOp::Splat { expr, .. } => self.rvalue(expr),
            }
        }
    }

    fn assign(&mut self, e: &Expr, via_index: bool) {
        match &e.kind {
            ExprKind::Variable(name) => {
                if is_numeric_var(name) {
                    self.err(e.span, format!("Illegal attempt to assign to the numeric match result variable '${name}'. Numeric variables are not assignable"));
                }
                if name.contains("::") {
                    self.err(e.span, format!("Illegal attempt to assign to '{name}'. Cannot assign to variables in other namespaces"));
                }
            }
            ExprKind::Access { .. } => {
                self.err(
                    e.span,
                    "Illegal attempt to assign via [index/key]. Not an assignable reference",
                );
            }
            ExprKind::Array(v) => v.iter().for_each(|x| self.assign(x, false)),
            _ => {
                let msg = if via_index {
                    format!("Illegal attempt to assign to {} via [index/key]. Not an assignable reference", a_an(e))
                } else {
                    format!(
                        "Illegal attempt to assign to '{}'. Not an assignable reference",
                        a_an(e)
                    )
                };
                self.err(e.span, msg);
            }
        }
    }

    fn rvalue(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Collect(_)
            | ExprKind::Class(_)
            | ExprKind::Define(_)
            | ExprKind::Function(_)
            | ExprKind::Node(_)
            | ExprKind::TypeAlias { .. }
            | ExprKind::TypeDefinition(_)
            | ExprKind::TypeMapping { .. } => {
                self.err(
                    e.span,
                    format!(
                        "Invalid use of expression. {} does not produce a value",
                        a_an_uc(e)
                    ),
                );
            }
            ExprKind::Unary { expr, .. } => self.rvalue(expr),
            _ => {}
        }
    }

    fn query(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Binary { op, left, right } => match op {
                BinaryOp::Eq | BinaryOp::Ne => {}
                BinaryOp::And | BinaryOp::Or => {
                    self.query(left);
                    self.query(right);
                }
                _ => self.err(
                    e.span,
                    format!(
                        "Illegal query expression. {} cannot be used in a query",
                        a_an_uc(e)
                    ),
                ),
            },
            ExprKind::Paren(x) => self.query(x),
            ExprKind::Variable(_)
            | ExprKind::QualifiedName(_)
            | ExprKind::Integer { .. }
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_) => {}
            _ => self.err(
                e.span,
                format!(
                    "Illegal query expression. {} cannot be used in a query",
                    a_an_uc(e)
                ),
            ),
        }
    }

    fn hostname(&mut self, m: &Expr, node: &Expr) {
        let bad = |s: &str| s.bytes().any(|b| !(is_word(b) || b == b'-' || b == b'.'));
        match &m.kind {
            ExprKind::Str(s) | ExprKind::QualifiedName(s) => {
                if bad(s) {
                    self.err(m.span, format!("The hostname '{s}' contains illegal characters (only letters, digits, '_', '-', and '.' are allowed)"));
                }
            }
            ExprKind::ConcatString(segs) => {
                if let Some(t) = segs.iter().find(|s| matches!(s.kind, ExprKind::Text(_))) {
                    self.err(
                        t.span,
                        "An interpolated expression is not allowed in a hostname of a node",
                    );
                } else if segs.len() != 1 {
                    self.err(
                        m.span,
                        "An interpolated expression is not allowed in a hostname of a node",
                    );
                } else {
                    self.hostname(&segs[0], node);
                }
            }
            ExprKind::Default
            | ExprKind::Regex(_)
            | ExprKind::Integer { .. }
            | ExprKind::Float(_) => {}
            _ => self.err(
                m.span,
                format!(
                    "Illegal expression. {} is unacceptable as hostname in {}",
                    a_an_uc(m),
                    a_an(node)
                ),
            ),
        }
    }

    fn named_definition(&mut self, e: &Expr, name: &str, path: &[Node]) {
        self.top(e, path);
        if !is_classref_decl(name) {
            self.err(
                e.span,
                format!(
                    "Unacceptable name. The name '{name}' is unacceptable as the name of {}",
                    a_an(e)
                ),
            );
        }
        self.reserved_type_name(e, name);
    }

    fn reserved_type_name(&mut self, e: &Expr, name: &str) {
        if RESERVED_TYPE_NAMES.contains(&name) {
            self.err(e.span, format!("The name: '{name}' is already defined by Puppet and can not be used as the name of {}.", a_an(e)));
        }
    }

    fn check_type_ref(&mut self, container: &Expr, r: &Expr) {
        let n = match &r.kind {
            ExprKind::Access { left, .. } => left,
            _ => r,
        };
        if !matches!(n.kind, ExprKind::QualifiedReference(_)) {
            self.err(
                r.span,
                format!(
                    "Illegal expression. {} is unacceptable as a type reference in {}",
                    a_an_uc(r),
                    a_an(container)
                ),
            );
        }
    }

    /// Puppet's `top`: where definitions may appear.
    fn top(&mut self, def: &Expr, path: &[Node]) {
        let absolute = matches!(
            def.kind,
            ExprKind::Function(_)
                | ExprKind::TypeAlias { .. }
                | ExprKind::TypeDefinition(_)
                | ExprKind::TypeMapping { .. }
        );
        let mut i = path.len();
        while i > 0 {
            i -= 1;
            match path[i] {
                Node::Program => return,
                Node::Expr(Expr {
                    kind: ExprKind::Class(_),
                    ..
                }) => return,
                Node::Body
                | Node::Expr(Expr {
                    kind: ExprKind::Block(_),
                    ..
                }) => {
                    let parent_is_program = i > 0 && matches!(path[i - 1], Node::Program);
                    if !parent_is_program && absolute {
                        self.err(
                            def.span,
                            format!("{} may only appear at toplevel", a_an_uc(def)),
                        );
                        return;
                    }
                }
                _ => {
                    self.err(def.span, "Classes, definitions, and nodes may only appear at toplevel or inside other classes");
                    return;
                }
            }
        }
    }

    fn no_idem_last(&mut self, def: &Expr, body: Option<&Expr>) {
        let Some(body) = body else { return };
        let violator = match &body.kind {
            ExprKind::Block(v) => v.last().filter(|l| idem(l)),
            _ => Some(body).filter(|b| idem(b)),
        };
        if let Some(v) = violator {
            if resource_without_title(v).is_none() {
                self.err(v.span, format!("This {} has no effect. {} can not end with a value-producing expression without other effect", label(v), a_an_uc(def)));
            }
        }
    }

    fn no_capture(&mut self, def: &Expr, params: &[Parameter]) {
        for p in params.iter().filter(|p| p.captures_rest) {
            self.err(
                p.span,
                format!(
                    "Parameter ${} has 'captures rest' - not supported in {}",
                    p.name,
                    a_an(def)
                ),
            );
        }
    }

    fn reserved_params(&mut self, def: &Expr, params: &[Parameter]) {
        for p in params
            .iter()
            .filter(|p| p.name == "name" || p.name == "title")
        {
            self.err(
                p.span,
                format!(
                    "The parameter ${} redefines a built in parameter in the {}",
                    p.name,
                    label(def)
                ),
            );
        }
    }

    /// The checks of a parameter list; `unique`: a name may appear once (not checked for
    /// lambdas, as Puppet's checker does not).
    fn check_params(&mut self, params: &[Parameter], unique: bool) {
        let mut seen: Vec<&str> = Vec::new();
        for p in params {
            if unique && seen.contains(&p.name.as_str()) {
                self.err(
                    p.span,
                    format!(
                        "The parameter '{}' is declared more than once in the parameter list",
                        p.name
                    ),
                );
            }
            seen.push(&p.name);
            let n = p.name.strip_prefix("0x").unwrap_or(&p.name);
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                self.err(p.span, format!("The numeric parameter name '${}' cannot be used (clashes with numeric match result variables)", p.name));
            }
            let b = p.name.as_bytes();
            if b.is_empty()
                || !(b[0].is_ascii_lowercase() || b[0] == b'_')
                || !b.iter().all(|c| is_word(*c))
            {
                self.err(p.span, format!("Illegal parameter name. The given name '{}' does not conform to the naming rule /^[a-z_]\\w*$/", p.name));
            }
            if let Some(v) = &p.value {
                self.no_assignment(v);
            }
        }
    }

    fn no_assignment(&mut self, e: &Expr) {
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            match &x.kind {
                ExprKind::Assignment { .. } => self.err(x.span, "Assignment not allowed here"),
                ExprKind::Lambda(_) => {}
                _ => for_each_child(x, &mut |c| stack.push(c)),
            }
        }
    }
}

/// The body of a definition or lambda (which Puppet always wraps in a block).
fn body_of(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Class(c) => c.body.as_ref(),
        ExprKind::Define(d) => d.body.as_ref(),
        ExprKind::Node(n) => n.body.as_ref(),
        ExprKind::Function(f) => f.body.as_ref(),
        ExprKind::Lambda(l) => l.body.as_ref(),
        _ => None,
    }
}

/// The value of a literal hash key, for duplicate detection.
fn literal_key(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Str(s) => Some(s.clone()),
        ExprKind::Integer { value, .. } => Some(value.to_string()),
        ExprKind::Bool(b) => Some(b.to_string()),
        ExprKind::QualifiedName(n) => Some(n.clone()),
        _ => None,
    }
}
