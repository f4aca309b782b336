//! Generic access to the children of AST nodes, so that walks (depth checks, validation,
//! name qualification) do not each repeat the shape of every node.

use crate::ast::*;

fn param_children<'a>(ps: &'a [Parameter], f: &mut dyn FnMut(&'a Expr)) {
    for p in ps {
        p.type_expr.iter().for_each(&mut *f);
        p.value.iter().for_each(&mut *f);
    }
}

fn param_children_mut<'a>(ps: &'a mut [Parameter], f: &mut dyn FnMut(&'a mut Expr)) {
    for p in ps {
        p.type_expr.iter_mut().for_each(&mut *f);
        p.value.iter_mut().for_each(&mut *f);
    }
}

fn op_children<'a>(ops: &'a [AttributeOp], f: &mut dyn FnMut(&'a Expr)) {
    for op in ops {
        match op {
            AttributeOp::Set { value, .. } => f(value),
            AttributeOp::Splat { expr, .. } => f(expr),
        }
    }
}

fn op_children_mut<'a>(ops: &'a mut [AttributeOp], f: &mut dyn FnMut(&'a mut Expr)) {
    for op in ops {
        match op {
            AttributeOp::Set { value, .. } => f(value),
            AttributeOp::Splat { expr, .. } => f(expr),
        }
    }
}

/// Calls `f` on each direct sub-expression of `e`, in source order (a callback, not a
/// collected list: walks over big trees call this for every node).
pub fn for_each_child<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    match &e.kind {
        ExprKind::Undef
        | ExprKind::Default
        | ExprKind::Bool(_)
        | ExprKind::Integer { .. }
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Regex(_)
        | ExprKind::QualifiedName(_)
        | ExprKind::QualifiedReference(_)
        | ExprKind::ReservedWord(_)
        | ExprKind::Variable(_)
        | ExprKind::Nop
        | ExprKind::RenderString(_) => {}
        ExprKind::ConcatString(v) | ExprKind::Array(v) | ExprKind::Block(v) => v.iter().for_each(f),
        ExprKind::Text(x)
        | ExprKind::Paren(x)
        | ExprKind::Render(x)
        | ExprKind::Unary { expr: x, .. } => f(x),
        ExprKind::Heredoc { text, .. } => f(text),
        ExprKind::Hash(entries) => {
            for k in entries {
                f(&k.key);
                f(&k.value);
            }
        }
        ExprKind::Access { left, keys } => {
            f(left);
            keys.iter().for_each(&mut *f);
        }
        ExprKind::NamedAccess { left, right }
        | ExprKind::Binary { left, right, .. }
        | ExprKind::Relationship { left, right, .. }
        | ExprKind::Assignment { left, right, .. } => {
            f(left);
            f(right);
        }
        ExprKind::Selector { left, entries } => {
            f(left);
            for en in entries {
                f(&en.matching);
                f(&en.value);
            }
        }
        ExprKind::If {
            test,
            then_expr,
            else_expr,
        }
        | ExprKind::Unless {
            test,
            then_expr,
            else_expr,
        } => {
            f(test);
            f(then_expr);
            f(else_expr);
        }
        ExprKind::Case { test, options } => {
            f(test);
            for o in options {
                o.values.iter().for_each(&mut *f);
                f(&o.then_expr);
            }
        }
        ExprKind::Call(c) => {
            f(&c.functor);
            c.args.iter().for_each(&mut *f);
            c.lambda.iter().for_each(&mut *f);
        }
        ExprKind::Lambda(l) => {
            param_children(&l.params, f);
            l.return_type.iter().for_each(&mut *f);
            l.body.iter().for_each(&mut *f);
        }
        ExprKind::Resource(r) => {
            f(&r.type_name);
            for b in &r.bodies {
                f(&b.title);
                op_children(&b.ops, f);
            }
        }
        ExprKind::ResourceDefaults {
            type_ref: x, ops, ..
        }
        | ExprKind::ResourceOverride {
            resources: x, ops, ..
        } => {
            f(x);
            op_children(ops, f);
        }
        ExprKind::Collect(c) => {
            f(&c.type_expr);
            if let Some(q) = &c.query.expr {
                f(q);
            }
            op_children(&c.ops, f);
        }
        ExprKind::Class(c) => {
            param_children(&c.params, f);
            c.body.iter().for_each(&mut *f);
        }
        ExprKind::Define(d) => {
            param_children(&d.params, f);
            d.body.iter().for_each(&mut *f);
        }
        ExprKind::Node(n) => {
            n.matches.iter().for_each(&mut *f);
            n.parent.iter().for_each(&mut *f);
            n.body.iter().for_each(&mut *f);
        }
        ExprKind::Function(func) => {
            param_children(&func.params, f);
            func.return_type.iter().for_each(&mut *f);
            func.body.iter().for_each(&mut *f);
        }
        ExprKind::TypeAlias { type_expr, .. } => f(type_expr),
        ExprKind::TypeDefinition(t) => f(&t.body),
        ExprKind::TypeMapping {
            type_expr,
            mapping_expr,
        } => {
            f(type_expr);
            f(mapping_expr);
        }
        ExprKind::Epp { params, body } => {
            if let Some(ps) = params {
                param_children(ps, f);
            }
            f(body);
        }
    }
}

/// Calls `f` on each direct sub-expression of `e`, mutably, in source order.
pub fn for_each_child_mut<'a>(e: &'a mut Expr, f: &mut dyn FnMut(&'a mut Expr)) {
    match &mut e.kind {
        ExprKind::Undef
        | ExprKind::Default
        | ExprKind::Bool(_)
        | ExprKind::Integer { .. }
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Regex(_)
        | ExprKind::QualifiedName(_)
        | ExprKind::QualifiedReference(_)
        | ExprKind::ReservedWord(_)
        | ExprKind::Variable(_)
        | ExprKind::Nop
        | ExprKind::RenderString(_) => {}
        ExprKind::ConcatString(v) | ExprKind::Array(v) | ExprKind::Block(v) => {
            v.iter_mut().for_each(&mut *f)
        }
        ExprKind::Text(x)
        | ExprKind::Paren(x)
        | ExprKind::Render(x)
        | ExprKind::Unary { expr: x, .. } => f(x),
        ExprKind::Heredoc { text, .. } => f(text),
        ExprKind::Hash(entries) => {
            for k in entries {
                f(&mut k.key);
                f(&mut k.value);
            }
        }
        ExprKind::Access { left, keys } => {
            f(left);
            keys.iter_mut().for_each(&mut *f);
        }
        ExprKind::NamedAccess { left, right }
        | ExprKind::Binary { left, right, .. }
        | ExprKind::Relationship { left, right, .. }
        | ExprKind::Assignment { left, right, .. } => {
            f(left);
            f(right);
        }
        ExprKind::Selector { left, entries } => {
            f(left);
            for en in entries {
                f(&mut en.matching);
                f(&mut en.value);
            }
        }
        ExprKind::If {
            test,
            then_expr,
            else_expr,
        }
        | ExprKind::Unless {
            test,
            then_expr,
            else_expr,
        } => {
            f(test);
            f(then_expr);
            f(else_expr);
        }
        ExprKind::Case { test, options } => {
            f(test);
            for o in options {
                o.values.iter_mut().for_each(&mut *f);
                f(&mut o.then_expr);
            }
        }
        ExprKind::Call(c) => {
            f(&mut c.functor);
            c.args.iter_mut().for_each(&mut *f);
            c.lambda.iter_mut().for_each(&mut *f);
        }
        ExprKind::Lambda(l) => {
            param_children_mut(&mut l.params, f);
            l.return_type.iter_mut().for_each(&mut *f);
            l.body.iter_mut().for_each(&mut *f);
        }
        ExprKind::Resource(r) => {
            f(&mut r.type_name);
            for b in &mut r.bodies {
                f(&mut b.title);
                op_children_mut(&mut b.ops, f);
            }
        }
        ExprKind::ResourceDefaults {
            type_ref: x, ops, ..
        }
        | ExprKind::ResourceOverride {
            resources: x, ops, ..
        } => {
            f(x);
            op_children_mut(ops, f);
        }
        ExprKind::Collect(c) => {
            let c = &mut **c;
            f(&mut c.type_expr);
            if let Some(q) = &mut c.query.expr {
                f(q);
            }
            op_children_mut(&mut c.ops, f);
        }
        // (Unshared while the parser builds the tree: `make_mut` copies nothing then.)
        ExprKind::Class(c) => {
            let c = std::sync::Arc::make_mut(c);
            param_children_mut(&mut c.params, f);
            c.body.iter_mut().for_each(&mut *f);
        }
        ExprKind::Define(d) => {
            let d = std::sync::Arc::make_mut(d);
            param_children_mut(&mut d.params, f);
            d.body.iter_mut().for_each(&mut *f);
        }
        ExprKind::Node(n) => {
            n.matches.iter_mut().for_each(&mut *f);
            n.parent.iter_mut().for_each(&mut *f);
            n.body.iter_mut().for_each(&mut *f);
        }
        ExprKind::Function(func) => {
            param_children_mut(&mut func.params, f);
            func.return_type.iter_mut().for_each(&mut *f);
            func.body.iter_mut().for_each(&mut *f);
        }
        ExprKind::TypeAlias { type_expr, .. } => f(type_expr),
        ExprKind::TypeDefinition(t) => f(&mut t.body),
        ExprKind::TypeMapping {
            type_expr,
            mapping_expr,
        } => {
            f(type_expr);
            f(mapping_expr);
        }
        ExprKind::Epp { params, body } => {
            if let Some(ps) = params {
                param_children_mut(ps, f);
            }
            f(body);
        }
    }
}

/// Mutable access to the direct sub-expressions of `e`.
pub fn children_mut(e: &mut Expr) -> Vec<&mut Expr> {
    let mut out: Vec<&mut Expr> = Vec::new();
    for_each_child_mut(e, &mut |c| out.push(c));
    out
}
