//! Unrolled loops (`mapSeqUnroll`, `reduceSeqUnroll`): the body lowered once per
//! iteration with the loop variable bound to the iteration's constant. The
//! expansion is bounded before it is made (see [`dpia::limits`]): the iteration
//! count must be a constant of at most `MAX_UNROLLED_ITERATIONS`, and the code it
//! would generate, estimated from the first iteration, must fit
//! `MAX_GENERATED_NODES` together with the code of the unrolled loops before it.

use arith::{Nat, Var};
use dpia::limits::{MAX_GENERATED_NODES, MAX_UNROLLED_ITERATIONS};
use dpia::Comm;

use super::{Env, Lowerer, Res};
use crate::ast::{node_count, Stmt};
use crate::error::CodegenError;

/// What the unrolled loops of a program have spent of the code budget.
#[derive(Debug, Default)]
pub(super) struct UnrollBudget {
    /// How many unrolled loops enclose the one being lowered.
    nesting: usize,
    /// The nodes of the outermost unrolled loops lowered so far (an inner loop's
    /// code is part of the iterations of the loop around it).
    nodes: usize,
}

impl Lowerer {
    /// The loop `for var in 0..count { body }` unrolled into `out`, with the
    /// comment `origin (unrolled: N iterations)` before it.
    pub(super) fn unrolled_loop(
        &mut self,
        env: &Env,
        (var, count): (&Var, &Nat),
        origin: &str,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        let Some(c) = count.as_cst() else {
            return Err(CodegenError::UnrollNotConstant {
                origin: origin.to_string(),
                count: count.to_string(),
            });
        };
        if c > MAX_UNROLLED_ITERATIONS {
            return Err(CodegenError::UnrollTooLong {
                origin: origin.to_string(),
                count: c,
            });
        }
        out.push(Stmt::Comment(format!(
            "{origin} (unrolled: {c} iterations)"
        )));
        self.unroll.nesting += 1;
        let stmts = self.unrolled_iterations(env, var, c, origin, body);
        self.unroll.nesting -= 1;
        out.extend(stmts?);
        Ok(())
    }

    /// The `count` iterations of an unrolled loop: the first lowered, the code of
    /// all of them estimated from it and charged, then the others.
    fn unrolled_iterations(
        &mut self,
        env: &Env,
        var: &Var,
        count: i64,
        origin: &str,
        body: &Comm,
    ) -> Res<Vec<Stmt>> {
        let mut stmts = Vec::new();
        if count <= 0 {
            return Ok(stmts);
        }
        self.comm(&env.bind(var, Nat::cst(0)), body, &mut stmts)?;
        let iterations = usize::try_from(count).unwrap_or(usize::MAX);
        self.charge_unrolled(origin, node_count(&stmts).saturating_mul(iterations))?;
        for k in 1..count {
            self.comm(&env.bind(var, Nat::cst(k)), body, &mut stmts)?;
        }
        Ok(stmts)
    }

    /// Charges the `nodes` an unrolled loop of `origin` would generate to the
    /// program's budget; an error when they do not fit.
    fn charge_unrolled(&mut self, origin: &str, nodes: usize) -> Res<()> {
        let outermost = self.unroll.nesting == 1;
        let total = if outermost {
            self.unroll.nodes.saturating_add(nodes)
        } else {
            nodes
        };
        if total > MAX_GENERATED_NODES {
            return Err(CodegenError::CodeTooLarge {
                what: format!("unrolling `{origin}`"),
                nodes: total,
            });
        }
        if outermost {
            self.unroll.nodes = total;
        }
        Ok(())
    }
}
