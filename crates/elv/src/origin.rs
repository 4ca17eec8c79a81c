//! Where the strategies a module builds come from: every strategy the evaluator makes is
//! recorded with the span of the expression that made it (and the parts of it that the
//! expression's builtins added, such as the `topDown` of `outermost(p)`), so that a strategy
//! that fails can be reported in the user's words, at its place in the file, rather than in
//! its desugared form (`topDown(appliedMap ; argument(...))`).

use diagnostics::Span;
use elevate::{Node, Program, Strategy};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where a strategy was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The span of the expression that made it.
    pub span: Span,
    /// Whether the span is in the strategy expression given to [`crate::Module::expression`]
    /// rather than in the module's file.
    pub in_expression: bool,
}

/// The origins of the strategies of a module, filled in as they are built (also while a
/// rewrite builds recursive definitions lazily).
pub struct Origins<P: Program> {
    /// By the address of the strategy's node, with the strategy kept alive so that the
    /// address is not reused.
    table: Mutex<HashMap<usize, (Strategy<P>, Origin)>>,
}

/// More entries than this are not recorded (a recursive definition unfolded over a large
/// program builds many strategies; their origins repeat those recorded first).
const MAX_RECORDED: usize = 1 << 16;

impl<P: Program> Origins<P> {
    pub(crate) fn new() -> Arc<Origins<P>> {
        Arc::new(Origins {
            table: Mutex::new(HashMap::new()),
        })
    }

    /// Where `s` was written, if the module built it.
    pub fn of(&self, s: &Strategy<P>) -> Option<Origin> {
        let table = self.table.lock().ok()?;
        table.get(&key(s)).map(|(_, o)| *o)
    }

    /// Records `s` and its parts not recorded yet as written at `origin`. Parts recorded
    /// already came from the expression's sub-expressions, evaluated first: they keep theirs.
    pub(crate) fn record(&self, s: &Strategy<P>, origin: Origin) {
        let Ok(mut table) = self.table.lock() else {
            return;
        };
        let mut todo = vec![s.clone()];
        while let Some(s) = todo.pop() {
            if table.len() >= MAX_RECORDED || table.contains_key(&key(&s)) {
                continue;
            }
            todo.extend(parts(&s));
            table.insert(key(&s), (s, origin));
        }
    }
}

fn key<P: Program>(s: &Strategy<P>) -> usize {
    std::ptr::from_ref(s.node()) as usize
}

/// The strategies a strategy is made of (not the bodies of named definitions, which are
/// built when applied).
fn parts<P: Program>(s: &Strategy<P>) -> Vec<Strategy<P>> {
    match s.node() {
        Node::Seq(a, b) | Node::LChoice(a, b) => vec![a.clone(), b.clone()],
        Node::Try(a)
        | Node::Repeat(a)
        | Node::RepeatN(_, a)
        | Node::Not(a)
        | Node::All(a)
        | Node::One(a)
        | Node::Some(a)
        | Node::TopDown(a)
        | Node::BottomUp(a)
        | Node::AllTopDown(a)
        | Node::AllBottomUp(a)
        | Node::TryAll(a)
        | Node::Normalize(a)
        | Node::Traverse(_, a) => vec![a.clone()],
        Node::Id | Node::Fail | Node::Rule(_) | Node::Named(_) => Vec::new(),
    }
}
