//! The abstract syntax tree.
//!
//! It mirrors Puppet's own model (`Puppet::AST`, pops/model/ast.pp) node for node, so that
//! the PN dump (`ordo parse --dump pn`) is a direct walk and so that the evaluator can follow
//! Puppet's evaluator semantics without translation. Every node carries a [`Span`].
//!
//! Conventions that follow Puppet's factory:
//! - A program or block of one statement is that statement; of none, `Nop`; of several, `Block`.
//! - `QualifiedName` is a bare word (`foo`, `foo::bar`), `QualifiedReference` a capitalised type
//!   name kept as written (`File`, `Foo::Bar`).
//! - A call without parentheses (`include a, b`) is a `Call` like any other.

use crate::span::Span;

/// An expression with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    // ---- literals -------------------------------------------------------------------------
    /// `undef`
    Undef,
    /// `default`
    Default,
    /// `true` / `false`
    Bool(bool),
    /// An integer literal; `radix` is 8, 10 or 16 as written.
    Integer {
        value: i64,
        radix: u8,
    },
    Float(f64),
    /// A string without interpolation (single-quoted, or double-quoted with no `$`).
    Str(String),
    /// A regular expression literal, the text between the slashes.
    Regex(String),
    /// A bare word: `foo`, `foo::bar`, `::foo`.
    QualifiedName(String),
    /// A capitalised type or resource type name as written: `File`, `Foo::Bar`.
    QualifiedReference(String),
    /// A word reserved for future use (`attr`, `private`, ...) used where Puppet allows it.
    ReservedWord(String),
    /// A double-quoted string or heredoc with interpolation: `Str` and `Text` segments.
    ConcatString(Vec<Expr>),
    /// An interpolated expression inside a string (`$x`, `${x}`).
    Text(Box<Expr>),
    /// `@(TAG:syntax)`: `syntax` is empty when none was given.
    Heredoc {
        syntax: String,
        text: Box<Expr>,
    },
    /// `[a, b]`
    Array(Vec<Expr>),
    /// `{ k => v }`
    Hash(Vec<KeyedEntry>),

    // ---- variables and access ---------------------------------------------------------------
    /// `$name`, `$::name`, `$a::b`, `$0`: the name without `$`.
    Variable(String),
    /// `left[keys]`
    Access {
        left: Box<Expr>,
        keys: Vec<Expr>,
    },
    /// `left.right` as the functor of a method call.
    NamedAccess {
        left: Box<Expr>,
        right: Box<Expr>,
    },

    // ---- operators ----------------------------------------------------------------------------
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `a -> b`, `a ~> b`, `a <- b`, `a <~ b`
    Relationship {
        op: RelOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `a = b`, `a += b`, `a -= b`
    Assignment {
        op: AssignOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `( e )`
    Paren(Box<Expr>),
    /// `left ? { match => value, ... }`
    Selector {
        left: Box<Expr>,
        entries: Vec<SelectorEntry>,
    },

    // ---- control flow ---------------------------------------------------------------------------
    /// Several statements (never fewer than two; see the module docs).
    Block(Vec<Expr>),
    /// `if` and `elsif` (an `elsif` is an `If` in the `else` slot).
    If {
        test: Box<Expr>,
        then_expr: Box<Expr>,
        else_expr: Box<Expr>,
    },
    Unless {
        test: Box<Expr>,
        then_expr: Box<Expr>,
        else_expr: Box<Expr>,
    },
    Case {
        test: Box<Expr>,
        options: Vec<CaseOption>,
    },
    /// An empty statement list, or the absent branch of an `if`.
    Nop,

    // ---- calls -----------------------------------------------------------------------------------
    Call(Box<Call>),
    /// `|$a, $b| { ... }`
    Lambda(Box<Lambda>),

    // ---- catalog expressions -------------------------------------------------------------------
    Resource(Box<ResourceExpr>),
    /// `File { mode => '0644' }`
    ResourceDefaults {
        form: ResourceForm,
        type_ref: Box<Expr>,
        ops: Vec<AttributeOp>,
    },
    /// `File['x'] { mode => '0644' }`, also on a collector.
    ResourceOverride {
        form: ResourceForm,
        resources: Box<Expr>,
        ops: Vec<AttributeOp>,
    },
    /// `Type <| query |> { ops }` and `Type <<| query |>>`. (The rare large variants are
    /// boxed: the parser moves its `Expr`s on every reduction.)
    Collect(Box<CollectExpr>),

    // ---- definitions ---------------------------------------------------------------------------
    Class(std::sync::Arc<ClassDef>),
    Define(std::sync::Arc<DefineDef>),
    Node(Box<NodeDef>),
    Function(Box<FunctionDef>),
    /// `type Name = TypeExpr`
    TypeAlias {
        name: String,
        type_expr: Box<Expr>,
    },
    /// `type Name[Parent] { ... }` (the object-type form).
    TypeDefinition(Box<TypeDefinitionExpr>),
    /// `type Runtime[...] = X` mapping form.
    TypeMapping {
        type_expr: Box<Expr>,
        mapping_expr: Box<Expr>,
    },

    // ---- EPP ----------------------------------------------------------------------------------
    /// A whole EPP template: its parameters (if `<%- | ... | -%>` was given) and body.
    Epp {
        params: Option<Vec<Parameter>>,
        body: Box<Expr>,
    },
    /// Literal text of an EPP template.
    RenderString(String),
    /// `<%= expr %>`
    Render(Box<Expr>),
}

/// See [`ExprKind::Collect`].
#[derive(Clone, Debug, PartialEq)]
pub struct CollectExpr {
    pub type_expr: Box<Expr>,
    pub query: Query,
    pub ops: Vec<AttributeOp>,
}

/// See [`ExprKind::TypeDefinition`].
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDefinitionExpr {
    pub name: String,
    pub parent: Option<String>,
    pub body: Box<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!e`
    Not,
    /// `-e`
    Minus,
    /// `*e` (splat / unfold)
    Unfold,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Match,
    NotMatch,
    In,
    And,
    Or,
}

impl BinaryOp {
    /// The operator as Puppet writes it (and as the PN dump names it).
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Match => "=~",
            BinaryOp::NotMatch => "!~",
            BinaryOp::In => "in",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelOp {
    /// `->`
    Before,
    /// `~>`
    Notify,
    /// `<-`
    Require,
    /// `<~`
    Subscribe,
}

impl RelOp {
    pub fn as_str(self) -> &'static str {
        match self {
            RelOp::Before => "->",
            RelOp::Notify => "~>",
            RelOp::Require => "<-",
            RelOp::Subscribe => "<~",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    Assign,
    Append,
    Delete,
}

impl AssignOp {
    pub fn as_str(self) -> &'static str {
        match self {
            AssignOp::Assign => "=",
            AssignOp::Append => "+=",
            AssignOp::Delete => "-=",
        }
    }
}

/// `key => value` in a hash literal.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedEntry {
    pub key: Expr,
    pub value: Expr,
    pub span: Span,
}

/// `match => value` in a selector.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectorEntry {
    pub matching: Expr,
    pub value: Expr,
    pub span: Span,
}

/// `v1, v2: { then }` in a case expression.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseOption {
    pub values: Vec<Expr>,
    pub then_expr: Expr,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// `name(args)` or `name args`
    Named,
    /// `recv.name(args)`: the functor is a `NamedAccess`.
    Method,
    /// A call of a value that is itself callable (Puppet's CallFunctionExpression).
    Function,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub kind: CallKind,
    /// A `QualifiedName` (or `QualifiedReference` for `Integer(x)`) for named calls, a
    /// `NamedAccess` for method calls.
    pub functor: Expr,
    pub args: Vec<Expr>,
    pub lambda: Option<Expr>,
    /// Whether the value of the call is used (Puppet prints `call` vs `invoke`).
    pub rval_required: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lambda {
    pub params: Vec<Parameter>,
    pub return_type: Option<Expr>,
    pub body: Option<Expr>,
}

/// A parameter of a class, define, function, lambda or EPP template.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// The name without `$`.
    pub name: String,
    pub type_expr: Option<Expr>,
    pub value: Option<Expr>,
    /// `*$rest`
    pub captures_rest: bool,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceForm {
    Regular,
    /// `@type { ... }`
    Virtual,
    /// `@@type { ... }`
    Exported,
}

impl ResourceForm {
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceForm::Regular => "regular",
            ResourceForm::Virtual => "virtual",
            ResourceForm::Exported => "exported",
        }
    }
}

/// `type { title: ops; title2: ops }`
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceExpr {
    pub form: ResourceForm,
    /// A `QualifiedName` (`file`, `class`, `foo::bar`) or another expression for the type.
    pub type_name: Expr,
    pub bodies: Vec<ResourceBody>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResourceBody {
    pub title: Expr,
    pub ops: Vec<AttributeOp>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttributeOp {
    /// `name => value` or `name +> value`
    Set {
        name: String,
        append: bool,
        value: Expr,
        span: Span,
    },
    /// `* => hash`
    Splat { expr: Expr, span: Span },
}

impl AttributeOp {
    pub fn span(&self) -> Span {
        match self {
            AttributeOp::Set { span, .. } | AttributeOp::Splat { span, .. } => *span,
        }
    }
}

/// The query of a collector; `expr` is `None` for `<| |>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub exported: bool,
    pub expr: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ClassDef {
    /// The full name as written (`foo::bar`), without leading `::`.
    pub name: String,
    pub params: Vec<Parameter>,
    pub parent: Option<String>,
    /// `None` for an empty body.
    pub body: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DefineDef {
    pub name: String,
    pub params: Vec<Parameter>,
    pub body: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeDef {
    /// Strings, names, regexes or `default`.
    pub matches: Vec<Expr>,
    pub parent: Option<Expr>,
    pub body: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDef {
    pub name: String,
    pub params: Vec<Parameter>,
    pub body: Option<Expr>,
    pub return_type: Option<Expr>,
}

/// A parsed file: its body is one expression following the block conventions above.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub body: Expr,
}

#[cfg(test)]
mod tests {
    /// The parser moves `Expr`s on every reduction and the tree holds one per node: large
    /// rare variants are boxed to keep it small.
    #[test]
    fn expr_stays_small() {
        assert!(std::mem::size_of::<super::ExprKind>() <= 40);
        assert!(std::mem::size_of::<super::Expr>() <= 56);
    }
}
