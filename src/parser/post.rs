//! Work done on the finished tree: bounding its depth, and giving nested classes and
//! defines their full names (Puppet does this with a name stack while parsing).

use crate::ast::*;
use crate::ast_walk::{children_mut, for_each_child, for_each_child_mut};
use crate::diagnostics::Diagnostic;
use crate::span::FileId;

/// Trees deeper than this are refused: later stages walk trees recursively.
pub const MAX_DEPTH: usize = 500;

/// The `elsif` branches one path through the tree may pass (they nest in the `else` slot;
/// Puppet 7 runs out of stack between 1,000 and 3,000). Counted apart from [`MAX_DEPTH`],
/// and sized with it for the compile threads' stack (`crate::COMPILE_STACK`).
pub const MAX_ELSIF: usize = 5_000;

/// Measures the depth without recursion; refuses (and safely drops) an over-deep tree,
/// returning the error.
pub fn check_depth(program: &mut Program, file: FileId) -> Option<Diagnostic> {
    // (node, depth, elsif branches above it)
    let mut stack: Vec<(&Expr, usize, usize)> = vec![(&program.body, 1, 0)];
    let mut too_deep = None;
    while let Some((e, d, elsifs)) = stack.pop() {
        if d > MAX_DEPTH {
            too_deep = Some((
                e.span,
                format!("Expressions nested more than {MAX_DEPTH} levels deep are not supported"),
            ));
            break;
        }
        if elsifs > MAX_ELSIF {
            too_deep = Some((
                e.span,
                format!("An if with more than {MAX_ELSIF} elsif branches is not supported"),
            ));
            break;
        }
        match &e.kind {
            ExprKind::If {
                test,
                then_expr,
                else_expr,
            } => {
                stack.push((test, d + 1, elsifs));
                stack.push((then_expr, d + 1, elsifs));
                match else_expr.kind {
                    ExprKind::If { .. } => stack.push((else_expr, d, elsifs + 1)),
                    _ => stack.push((else_expr, d + 1, elsifs)),
                }
            }
            _ => for_each_child(e, &mut |c| stack.push((c, d + 1, elsifs))),
        }
    }
    let (span, message) = too_deep?;
    let body = std::mem::replace(&mut program.body, Expr::new(ExprKind::Nop, span));
    dismantle(body);
    let span = crate::span::Span { file, ..span };
    Some(Diagnostic::error("syntax", message).with_label(span, "too deep here"))
}

/// Drops a tree without recursion.
pub fn dismantle(e: Expr) {
    let mut stack = vec![e];
    while let Some(mut e) = stack.pop() {
        for c in children_mut(&mut e) {
            let span = c.span;
            stack.push(std::mem::replace(c, Expr::new(ExprKind::Nop, span)));
        }
    }
}

/// Puppet's name stack: a class or define nested in a class gets the class's name as a
/// prefix (`[namespace, name].join('::')` with one leading `::` removed). `starts` are where
/// the tree's classes and defines begin: a node whose span holds none is not walked.
pub fn qualify_names(e: &mut Expr, mut starts: Vec<usize>) {
    starts.sort_unstable();
    let mut stack = Vec::new();
    qualify(e, &mut stack, &starts);
}

fn qualified(stack: &[String], name: &str) -> String {
    let joined = format!("{}::{}", stack.join("::"), name);
    joined
        .strip_prefix("::")
        .map(str::to_string)
        .unwrap_or(joined)
}

/// Whether a class or define begins within `span` (a node's span holds its children's).
fn holds_definition(span: crate::span::Span, starts: &[usize]) -> bool {
    let from = starts.partition_point(|&s| s < span.start as usize);
    starts.get(from).is_some_and(|&s| s < span.end as usize)
}

fn qualify(e: &mut Expr, stack: &mut Vec<String>, starts: &[usize]) {
    if !holds_definition(e.span, starts) {
        return;
    }
    match &mut e.kind {
        ExprKind::Class(c) => {
            let raw = c.name.clone();
            std::sync::Arc::make_mut(c).name = qualified(stack, &raw);
            stack.push(raw);
            for_each_child_mut(e, &mut |ch| qualify(ch, stack, starts));
            stack.pop();
            return;
        }
        ExprKind::Define(d) => {
            let name = qualified(stack, &d.name);
            std::sync::Arc::make_mut(d).name = name;
        }
        _ => {}
    }
    // A callback, not a collected list: this runs for every node that holds a definition.
    for_each_child_mut(e, &mut |ch| qualify(ch, stack, starts));
}
