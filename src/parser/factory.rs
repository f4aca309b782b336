//! What Puppet's `Model::Factory` does while parsing: the helpers the grammar's actions call
//! to build nodes, including the transformations that make the tree equal Puppet's
//! (`transform_calls`, resources without titles, `block_or_expression`, interpolation).

use crate::ast::*;
use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};

/// The grammar's context: the file being parsed and the errors found by actions.
pub struct B {
    pub file: FileId,
    pub errors: Vec<Diagnostic>,
    /// Where the classes and defines built so far begin (with fewer than two, none is
    /// nested in a class, so there are no names to qualify).
    pub definitions: Vec<usize>,
    /// The attribute operations of the lists being read, innermost last: a list is taken
    /// off the top when it ends, into a vector of its exact length (grown one push at a
    /// time, a list of three would hold room for four).
    pub ops: Vec<AttributeOp>,
    /// The source's length: a long statement list reserves room for the rest of it.
    pub text_len: usize,
}

/// A statement as the grammar sees it before `transform_calls`: one expression, or a
/// comma-separated list (the arguments of a call without parentheses).
pub enum SynStmt {
    One(Expr),
    /// The expressions and the offset of the first comma.
    Many(Vec<Expr>, usize),
}

impl SynStmt {
    /// From the start of its first expression to the end of its last.
    fn span(&self) -> Span {
        match self {
            SynStmt::One(e) => e.span,
            SynStmt::Many(v, _) => match (v.first(), v.last()) {
                (Some(a), Some(z)) => a.span.to(z.span),
                _ => Span::default(),
            },
        }
    }

    pub fn push(self, comma: usize, e: Expr) -> SynStmt {
        match self {
            SynStmt::One(a) => SynStmt::Many(vec![a, e], comma),
            SynStmt::Many(mut v, c) => {
                v.push(e);
                SynStmt::Many(v, c)
            }
        }
    }
}

/// `..., a`: `a` continues the last statement of `v` (there is one: the grammar reads a
/// comma only after a statement).
pub fn continue_statement(v: &mut Vec<SynStmt>, comma: usize, a: Expr) {
    let s = match v.pop() {
        Some(last) => last.push(comma, a),
        None => SynStmt::One(a),
    };
    v.push(s);
}

/// Functions Puppet lets be called without parentheses (`include a, b`).
const STATEMENT_CALLS: &[&str] = &[
    "require", "realize", "include", "contain", "tag", "debug", "info", "notice", "warning", "err",
    "fail", "import", "break", "next", "return",
];

pub fn name_is_statement(name: &str) -> bool {
    STATEMENT_CALLS.contains(&name)
}

impl B {
    pub fn new(file: FileId, text_len: usize) -> B {
        B {
            file,
            errors: Vec::new(),
            definitions: Vec::new(),
            ops: Vec::new(),
            text_len,
        }
    }

    /// Starts a list of attribute operations with `op`; the list is known by where it
    /// starts in [`B::ops`].
    pub fn start_ops(&mut self, op: AttributeOp) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    /// The list of attribute operations that starts at `start` (see [`B::start_ops`]);
    /// lists nested in its values have been taken already.
    pub fn take_ops(&mut self, start: usize) -> Vec<AttributeOp> {
        self.ops.drain(start..).collect()
    }

    /// Appends a statement to a statement list. A long list (a class body of thousands of
    /// resources) reserves room for as many more statements as the rest of the source
    /// would hold at the list's bytes per statement so far, instead of doubling its
    /// allocation, copying it and touching fresh memory each time.
    pub fn push_statement(&self, v: &mut Vec<SynStmt>, s: SynStmt) {
        const ESTIMATE_FROM: usize = 4096;
        if v.len() == v.capacity() && v.len() >= ESTIMATE_FROM {
            let first = v.first().map_or(0, |s| s.span().start as usize);
            let last = v.last().map_or(0, |s| s.span().end as usize);
            let per = (last.saturating_sub(first) / v.len()).max(1);
            let more = self.text_len.saturating_sub(last) / per;
            // At least a quarter more, so that a list longer than its estimate still grows
            // geometrically.
            v.reserve_exact((more + more / 8 + 16).max(v.len() / 4));
        }
        v.push(s);
    }

    pub fn sp(&self, l: usize, r: usize) -> Span {
        Span::new(self.file, l, r)
    }

    pub fn e(&self, kind: ExprKind, l: usize, r: usize) -> Expr {
        Expr::new(kind, self.sp(l, r))
    }

    pub fn error(&mut self, msg: impl Into<String>, l: usize, r: usize) {
        let d = Diagnostic::error("syntax", msg).with_label(self.sp(l, r), "here");
        self.errors.push(d);
    }

    pub fn binary(&self, op: BinaryOp, left: Expr, right: Expr) -> Expr {
        let span = left.span.to(right.span);
        Expr::new(
            ExprKind::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            },
            span,
        )
    }

    pub fn unary(&self, op: UnaryOp, expr: Expr, l: usize) -> Expr {
        let span = self.sp(l, expr.span.end as usize);
        Expr::new(
            ExprKind::Unary {
                op,
                expr: Box::new(expr),
            },
            span,
        )
    }

    pub fn relationship(&self, op: RelOp, left: Expr, right: Expr) -> Expr {
        let span = left.span.to(right.span);
        Expr::new(
            ExprKind::Relationship {
                op,
                left: Box::new(left),
                right: Box::new(right),
            },
            span,
        )
    }

    pub fn assign(&self, op: AssignOp, left: Expr, right: Expr) -> Expr {
        let span = left.span.to(right.span);
        Expr::new(
            ExprKind::Assignment {
                op,
                left: Box::new(left),
                right: Box::new(right),
            },
            span,
        )
    }

    /// A NUMBER token (or a name that reads as one) as a literal.
    pub fn number(&mut self, text: &str, l: usize, r: usize) -> Expr {
        let kind = match parse_number(text) {
            Some(k) => k,
            None => {
                // A well-formed integer too big for 64 bits: Puppet's validator reports it
                // (NUMERIC_OVERFLOW) with the value in Ruby's `%#+x`.
                let msg = match overflowing_integer(text) {
                    Some(v) => format!(
                        "A Literal Integer resulted in a value outside of Puppet Integer max range, got '+{v:#x}'"
                    ),
                    None => format!("Illegal number '{text}'"),
                };
                self.error(msg, l, r);
                ExprKind::Integer {
                    value: 0,
                    radix: 10,
                }
            }
        };
        self.e(kind, l, r)
    }

    pub fn call(
        &self,
        functor: Expr,
        args: Vec<Expr>,
        lambda: Option<Expr>,
        kind: CallKind,
        r: usize,
    ) -> Expr {
        let span = self.sp(functor.span.start as usize, r);
        Expr::new(
            ExprKind::Call(Box::new(Call {
                kind,
                functor,
                args,
                lambda,
                rval_required: true,
            })),
            span,
        )
    }

    /// `recv.name(args)`: located as Puppet locates a CallMethodExpression, from its `(`, or
    /// from the `.` when there are no parentheses (errors in the call point there).
    pub fn method_call(
        &self,
        functor: Expr,
        args: Vec<Expr>,
        lambda: Option<Expr>,
        start: usize,
        r: usize,
    ) -> Expr {
        let mut call = self.call(functor, args, lambda, CallKind::Method, r);
        call.span = self.sp(start, r);
        call
    }

    /// `recv.name` (the functor of a method call).
    pub fn named_access(&self, recv: Expr, name: String, nl: usize, nr: usize) -> Expr {
        let span = self.sp(recv.span.start as usize, nr);
        let right = self.e(ExprKind::QualifiedName(name), nl, nr);
        Expr::new(
            ExprKind::NamedAccess {
                left: Box::new(recv),
                right: Box::new(right),
            },
            span,
        )
    }

    /// Puppet's `transform_calls`: a statement-call name followed by an expression (or a
    /// comma list) becomes a call; a named call used as a statement does not need its value.
    pub fn transform_calls(&mut self, mut stmts: Vec<SynStmt>) -> Vec<Expr> {
        // In place: the statements done so far are kept as `One` at the front (`done` of
        // them) and the list becomes the expressions without a second allocation (a
        // `SynStmt` is the size of an `Expr`). A large class body has hundreds of thousands.
        let hole = || SynStmt::One(Expr::new(ExprKind::Nop, Span::default()));
        let mut done: usize = 0;
        for at in 0..stmts.len() {
            let s = std::mem::replace(&mut stmts[at], hole());
            let name = done > 0
                && matches!(&stmts[done - 1], SynStmt::One(Expr {
                    kind: ExprKind::QualifiedName(n),
                    ..
                }) if name_is_statement(n));
            if name {
                let SynStmt::One(functor) = std::mem::replace(&mut stmts[done - 1], hole()) else {
                    continue;
                };
                let args = match s {
                    SynStmt::One(e) => vec![e],
                    SynStmt::Many(v, _) => v,
                };
                let end = args.last().map_or(functor.span.end, |a| a.span.end);
                let span = Span {
                    end,
                    ..functor.span
                };
                stmts[done - 1] = SynStmt::One(Expr::new(
                    ExprKind::Call(Box::new(Call {
                        kind: CallKind::Named,
                        functor,
                        args,
                        lambda: None,
                        rval_required: false,
                    })),
                    span,
                ));
                continue;
            }
            match s {
                SynStmt::Many(_, comma) => {
                    let msg = match done.checked_sub(1).map(|l| &stmts[l]) {
                        Some(SynStmt::One(Expr {
                            kind: ExprKind::QualifiedName(n),
                            ..
                        })) => format!(
                            "attempt to pass argument list to the function '{n}' which cannot be called without parentheses"
                        ),
                        _ => "illegal comma separated argument list".to_string(),
                    };
                    self.error(msg, comma, comma + 1);
                }
                SynStmt::One(mut e) => {
                    if let ExprKind::Call(c) = &mut e.kind {
                        if c.kind == CallKind::Named {
                            c.rval_required = false;
                        }
                    }
                    stmts[done] = SynStmt::One(e);
                    done += 1;
                }
            }
        }
        stmts.truncate(done);
        stmts
            .into_iter()
            .filter_map(|s| match s {
                SynStmt::One(e) => Some(e),
                SynStmt::Many(..) => None,
            })
            .collect()
    }

    /// `left { attribute_operations }` (no title): a resource, defaults or an override
    /// depending on the shape of `left`.
    pub fn resource_without_title(
        &mut self,
        left: Expr,
        ops: Vec<AttributeOp>,
        lb: usize,
        r: usize,
    ) -> Expr {
        let span = self.sp(left.span.start as usize, r);
        match &left.kind {
            ExprKind::QualifiedName(_) => {
                // `name { a => 1 }` is the name followed by a hash.
                let mut entries = Vec::with_capacity(ops.len());
                for op in ops {
                    match op {
                        AttributeOp::Set {
                            name,
                            append: false,
                            value,
                            span,
                        } => {
                            let key = Expr::new(ExprKind::Str(name), span);
                            entries.push(KeyedEntry { key, value, span });
                        }
                        _ => {
                            self.error(
                                "Syntax error resource body without title or hash with +>",
                                lb,
                                lb + 1,
                            );
                            return Expr::new(ExprKind::Nop, span);
                        }
                    }
                }
                let hash = self.e(ExprKind::Hash(entries), lb, r);
                let stmts = self.transform_calls(vec![SynStmt::One(left), SynStmt::One(hash)]);
                block_or_expression(stmts, span)
            }
            ExprKind::QualifiedReference(_) => Expr::new(
                ExprKind::ResourceDefaults {
                    form: ResourceForm::Regular,
                    type_ref: Box::new(left),
                    ops,
                },
                span,
            ),
            ExprKind::Access { .. } => Expr::new(
                ExprKind::ResourceOverride {
                    form: ResourceForm::Regular,
                    resources: Box::new(left),
                    ops,
                },
                span,
            ),
            _ => {
                let s = left.span;
                self.error(
                    "Expression is not valid as a resource, resource-default, or resource-override",
                    s.start as usize,
                    s.end as usize,
                );
                Expr::new(ExprKind::Nop, span)
            }
        }
    }

    /// `@resource` / `@@resource`.
    pub fn set_form(&mut self, mut e: Expr, form: ResourceForm, l: usize, at_end: usize) -> Expr {
        let ok = match &mut e.kind {
            ExprKind::Resource(r) => {
                r.form = form;
                true
            }
            ExprKind::ResourceDefaults { form: f, .. }
            | ExprKind::ResourceOverride { form: f, .. } => {
                *f = form;
                true
            }
            _ => false,
        };
        if !ok {
            let msg = if form == ResourceForm::Virtual {
                "Virtual (@) can only be applied to a Resource Expression"
            } else {
                "Exported (@@) can only be applied to a Resource Expression"
            };
            self.error(msg, l, at_end);
        }
        e.span.start = l as u32;
        e
    }

    /// A double-quoted string (or heredoc text) from its segments; empty literal parts go.
    pub fn concat(&self, segs: Vec<Expr>, l: usize, r: usize) -> Expr {
        let segs = segs
            .into_iter()
            .filter(|s| !matches!(&s.kind, ExprKind::Str(t) if t.is_empty()))
            .collect();
        self.e(ExprKind::ConcatString(segs), l, r)
    }

    pub fn text(&self, e: Expr) -> Expr {
        let span = e.span;
        Expr::new(ExprKind::Text(Box::new(interpolate(e))), span)
    }

    /// `type X = ...`: an alias, or a mapping when the left side is `X[...]`.
    pub fn type_assignment(&mut self, lhs: Expr, rhs: Expr, l: usize, r: usize) -> Expr {
        match lhs.kind {
            ExprKind::QualifiedReference(name) => self.e(
                ExprKind::TypeAlias {
                    name,
                    type_expr: Box::new(rhs),
                },
                l,
                r,
            ),
            _ => self.e(
                ExprKind::TypeMapping {
                    type_expr: Box::new(lhs),
                    mapping_expr: Box::new(rhs),
                },
                l,
                r,
            ),
        }
    }

    /// `type X = Parent { ... }` becomes `Object[{parent => Parent, ...}]`.
    pub fn type_with_hash(&self, parent: Expr, mut hash: Expr, l: usize, r: usize) -> Expr {
        let pname = match &parent.kind {
            ExprKind::QualifiedReference(n) => n.clone(),
            _ => String::new(),
        };
        let mut left = parent;
        if pname != "Object" && pname != "TypeSet" {
            if let ExprKind::Hash(entries) = &mut hash.kind {
                let key = Expr::new(ExprKind::QualifiedName("parent".into()), left.span);
                let span = left.span;
                entries.push(KeyedEntry {
                    key,
                    value: left,
                    span,
                });
            }
            left = Expr::new(ExprKind::QualifiedReference("Object".into()), self.sp(l, l));
        }
        self.e(
            ExprKind::Access {
                left: Box::new(left),
                keys: vec![hash],
            },
            l,
            r,
        )
    }
}

/// Puppet's `ARGUMENTS` over a comma list of (argument, written as `k => v`): adjacent
/// `k => v` arguments form one hash. One vector, no copy of the list's.
pub fn arguments(list: Vec<(Expr, bool)>) -> Vec<Expr> {
    let mut out: Vec<Expr> = Vec::with_capacity(list.len());
    // Whether the last argument kept came from `k => v` (it is then a hash).
    let mut last_unfolded = false;
    for (arg, unfolded) in list {
        if unfolded && last_unfolded {
            if let (Some(last), ExprKind::Hash(b)) = (out.last_mut(), arg.kind) {
                if let ExprKind::Hash(a) = &mut last.kind {
                    a.extend(b);
                    last.span = last.span.to(arg.span);
                }
            }
            continue;
        }
        last_unfolded = unfolded;
        out.push(arg);
    }
    out
}

/// A block of several statements, the statement itself when there is one, `Nop` for none.
pub fn block_or_expression(mut stmts: Vec<Expr>, span: Span) -> Expr {
    match stmts.len() {
        0 => Expr::new(ExprKind::Nop, span),
        1 => stmts.pop().expect("one statement"),
        _ => Expr::new(ExprKind::Block(stmts), span),
    }
}

/// Puppet's `f_build_body` for a statement list: a list always becomes a block, which we
/// only keep when it matters (several statements, or one that is itself a block).
pub fn build_body(mut stmts: Vec<Expr>, span: Span) -> Expr {
    if stmts.len() == 1 && !matches!(stmts[0].kind, ExprKind::Block(_)) {
        return stmts.pop().expect("one statement");
    }
    Expr::new(ExprKind::Block(stmts), span)
}

/// Puppet's `interpolate`: inside `${...}`, a name (or the left of an access or method
/// call) means a variable.
pub fn interpolate(mut e: Expr) -> Expr {
    match e.kind {
        ExprKind::QualifiedName(n) => {
            e.kind = ExprKind::Variable(n);
            e
        }
        ExprKind::Integer { value, radix: 10 } => {
            e.kind = ExprKind::Variable(value.to_string());
            e
        }
        ExprKind::Access { ref mut left, .. } | ExprKind::NamedAccess { ref mut left, .. } => {
            if rewriteable(left) {
                let l = std::mem::replace(&mut **left, Expr::new(ExprKind::Nop, e.span));
                **left = interpolate(l);
            }
            e
        }
        ExprKind::Call(ref mut c) if c.kind == CallKind::Method => {
            if rewriteable(&c.functor) {
                let f = std::mem::replace(&mut c.functor, Expr::new(ExprKind::Nop, e.span));
                c.functor = interpolate(f);
            }
            e
        }
        _ => e,
    }
}

fn rewriteable(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Access { .. } | ExprKind::QualifiedName(_) | ExprKind::NamedAccess { .. } => true,
        ExprKind::Call(c) => c.kind == CallKind::Method,
        ExprKind::Integer { radix, .. } => *radix == 10,
        _ => false,
    }
}

/// Puppet's `to_n_with_radix` for the text of a NUMBER token.
pub fn parse_number(text: &str) -> Option<ExprKind> {
    let t = text;
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16)
            .ok()
            .map(|value| ExprKind::Integer { value, radix: 16 });
    }
    if t.contains(['.', 'e', 'E']) {
        return t.parse::<f64>().ok().map(ExprKind::Float);
    }
    if t.len() > 1 && t.starts_with('0') {
        return i64::from_str_radix(&t[1..], 8)
            .ok()
            .map(|value| ExprKind::Integer { value, radix: 8 });
    }
    t.parse::<i64>()
        .ok()
        .map(|value| ExprKind::Integer { value, radix: 10 })
}

/// The value of an integer literal (decimal, `0x` hex or `0` octal) that does not fit in an
/// `i64` but in a `u128`; `None` for anything else.
fn overflowing_integer(t: &str) -> Option<u128> {
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    let v = u128::from_str_radix(digits, radix).ok()?;
    (v > i64::MAX as u128).then_some(v)
}

/// One step after the first operand of a binary-operator sequence.
pub enum OpItem {
    Binary(BinaryOp, Expr),
    /// `? { entries }` and the end offset of the selector.
    Select(Vec<SelectorEntry>, usize),
}

/// egrammar's precedence rows for the binary operators (higher binds tighter; all are
/// left-associative). The selector `?` sits at 3.
fn precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::In => 10,
        BinaryOp::Match | BinaryOp::NotMatch => 9,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => 8,
        BinaryOp::Add | BinaryOp::Sub => 7,
        BinaryOp::Shl | BinaryOp::Shr => 6,
        BinaryOp::Eq | BinaryOp::Ne => 5,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 4,
        BinaryOp::And => 2,
        BinaryOp::Or => 1,
    }
}

const SELECT_PRECEDENCE: u8 = 3;

fn make_binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    let span = left.span.to(right.span);
    Expr::new(
        ExprKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        },
        span,
    )
}

/// Folds `first (op operand | ? {...})*` into a tree by precedence (shunting-yard).
pub fn fold_operators(first: Expr, rest: Vec<OpItem>) -> Expr {
    if rest.is_empty() {
        return first;
    }
    let mut operands = vec![first];
    let mut ops: Vec<BinaryOp> = Vec::new();
    let reduce = |operands: &mut Vec<Expr>, ops: &mut Vec<BinaryOp>| {
        let op = ops.pop().expect("an operator to reduce");
        let right = operands.pop().expect("a right operand");
        let left = operands.pop().expect("a left operand");
        operands.push(make_binary(op, left, right));
    };
    for item in rest {
        match item {
            OpItem::Binary(op, e) => {
                let p = precedence(op);
                while ops.last().is_some_and(|top| precedence(*top) >= p) {
                    reduce(&mut operands, &mut ops);
                }
                ops.push(op);
                operands.push(e);
            }
            OpItem::Select(entries, end) => {
                while ops
                    .last()
                    .is_some_and(|top| precedence(*top) >= SELECT_PRECEDENCE)
                {
                    reduce(&mut operands, &mut ops);
                }
                let left = operands.pop().expect("a selector operand");
                let span = Span {
                    end: end as u32,
                    ..left.span
                };
                operands.push(Expr::new(
                    ExprKind::Selector {
                        left: Box::new(left),
                        entries,
                    },
                    span,
                ));
            }
        }
    }
    while !ops.is_empty() {
        reduce(&mut operands, &mut ops);
    }
    operands.pop().expect("one result")
}

/// `key => value`, located from the key's start to the value's end.
pub fn keyed(key: Expr, value: Expr) -> KeyedEntry {
    let span = key.span.to(value.span);
    KeyedEntry { key, value, span }
}

/// An operator of egrammar's statement rows: assignments and relationships.
#[derive(Clone, Copy, Debug)]
pub enum StmtOp {
    Assign(AssignOp),
    Rel(RelOp),
}

impl B {
    /// Folds `r0 op1 r1 op2 r2 ...` as egrammar's precedence table does: relationships bind
    /// tighter and associate to the left, assignments associate to the right. The nodes are
    /// built in the order the cascade of rules (`Relationship`, `Assignment`) built them.
    pub fn fold_statement(&self, first: Expr, rest: Vec<(StmtOp, Expr)>) -> Expr {
        // The left operands of the assignments met so far, with their operators.
        let mut lefts: Vec<(Expr, AssignOp)> = Vec::new();
        let mut current = first;
        for (op, e) in rest {
            match op {
                StmtOp::Rel(op) => current = self.relationship(op, current, e),
                StmtOp::Assign(op) => {
                    lefts.push((current, op));
                    current = e;
                }
            }
        }
        while let Some((left, op)) = lefts.pop() {
            current = self.assign(op, left, current);
        }
        current
    }
}
