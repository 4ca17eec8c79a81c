//! The syntax tree of `.elv` files, every node with its source span.

use diagnostics::Span;

/// `def NAME = BODY` or `def NAME(p1, ..., pn) = BODY`.
#[derive(Clone, Debug)]
pub(crate) struct Def {
    pub name: String,
    pub name_span: Span,
    pub params: Vec<(String, Span)>,
    pub body: Expr,
}

impl Def {
    /// The index of the parameter called `name`.
    pub fn param(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|(p, _)| p == name)
    }
}

/// An expression.
#[derive(Clone, Debug)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// The height of the tree (a leaf has depth 1); bounded by the parser so that
    /// the recursive checker and evaluator cannot exhaust the stack.
    pub depth: usize,
}

/// The binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `;`
    Seq,
    /// `;;`: `;` with the registered normal form in between.
    NfSeq,
    /// `<+`
    Choice,
    /// `@`: `s @ t` is `t(s)`.
    At,
}

/// The shapes of expressions.
#[derive(Clone, Debug)]
pub(crate) enum ExprKind {
    /// An identifier: a parameter, definition, builtin or symbol.
    Name(String),
    /// An integer literal.
    Int(i64),
    /// `[e1, ..., en]`
    List(Vec<Expr>),
    /// `callee(a1, ..., an)`, `n >= 1`.
    Call { callee: Box<Expr>, args: Vec<Expr> },
    /// `left op right`.
    Binary {
        op: Op,
        op_span: Span,
        left: Box<Expr>,
        right: Box<Expr>,
    },
}

impl Expr {
    /// The identifier, if the expression is one.
    pub fn as_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        }
    }
}
