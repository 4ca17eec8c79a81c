//! Applying strategies: the semantics of every [`Node`] (ICFP'20 §4.2–4.8).
//!
//! The complete traversals are implemented directly rather than unfolded from
//! their one-line definitions, but they take exactly the steps those definitions
//! take, so step counts match the paper's way of counting.

use crate::{Ctx, Failure, Node, Program, RewriteResult, Strategy, Traversable};

impl<P: Program> Strategy<P> {
    /// Applies the strategy to `p` in a fresh context.
    pub fn apply(&self, p: &P) -> RewriteResult<P>
    where
        P: Traversable,
    {
        Ctx::default().run(self, p)
    }
}

impl<P: Program> Ctx<P> {
    /// Applies `s` to `p` (the engine's entry point; see also [`Ctx::run`]).
    pub fn apply(&mut self, s: &Strategy<P>, p: &P) -> RewriteResult<P>
    where
        P: Traversable,
    {
        self.applications += 1;
        if self.applications > self.budget {
            return Err(self.out_of_budget(s));
        }
        if self.applications.is_multiple_of(4096) && self.started.elapsed() > self.time_limit {
            return Err(self.out_of_time(s));
        }
        match s.node() {
            Node::Id => {
                self.steps += 1;
                Ok(p.clone())
            }
            Node::Fail => Err(self.failure(s, p)),
            Node::Seq(a, b) => {
                let q = self.apply(a, p)?;
                self.apply(b, &q)
            }
            Node::LChoice(a, b) => match self.apply(a, p) {
                Err(Failure::NotApplicable { .. }) => self.apply(b, p),
                other => other,
            },
            Node::Try(a) => self.attempt(a, p),
            Node::Repeat(a) => {
                self.active.push(s.clone());
                let r = self.repeat(p, |ctx, q| ctx.apply(a, q));
                self.active.pop();
                r
            }
            Node::RepeatN(n, a) => {
                let mut q = p.clone();
                for _ in 0..*n {
                    q = self.apply(a, &q)?;
                }
                Ok(q)
            }
            Node::Not(a) => match self.apply(a, p) {
                Ok(_) => Err(self.failure(s, p)),
                Err(Failure::NotApplicable { .. }) => Ok(p.clone()),
                Err(abort) => Err(abort),
            },
            Node::All(a) => self.all(p, |ctx, c, label| ctx.descend(label, a, c)),
            Node::One(a) => self.one(s, p, |ctx, c, label| ctx.descend(label, a, c)),
            Node::Some(a) => self.some(s, p, a),
            Node::TopDown(a) => self.top_down(s, a, p),
            Node::BottomUp(a) => self.bottom_up(s, a, p),
            Node::AllTopDown(a) => {
                let q = self.apply(a, p)?;
                self.all(&q, |ctx, c, label| ctx.descend(label, s, c))
            }
            Node::AllBottomUp(a) => {
                let q = self.all(p, |ctx, c, label| ctx.descend(label, s, c))?;
                self.apply(a, &q)
            }
            Node::TryAll(a) => {
                let q = self.all(p, |ctx, c, label| ctx.descend(label, s, c))?;
                self.attempt(a, &q)
            }
            Node::Normalize(a) => {
                self.active.push(s.clone());
                let r = self.repeat(p, |ctx, q| ctx.top_down(s, a, q));
                self.active.pop();
                r
            }
            Node::Traverse(t, a) => match (t.run)(a, p, self) {
                Ok(q) => {
                    self.steps += 1;
                    Ok(q)
                }
                Err(f) => Err(self.fill_in(f, s, p)),
            },
            Node::Rule(r) => match (r.run)(p, self) {
                Ok(q) => {
                    self.steps += 1;
                    self.record(&r.name, p, &q);
                    Ok(q)
                }
                Err(f) => {
                    if self.track_locations && f.strategy().is_some() {
                        self.passed_on(s, &f);
                    }
                    Err(self.fill_in(f, s, p))
                }
            },
            Node::Named(n) => {
                if self.active.len() >= MAX_NESTING {
                    return Err(Failure::Aborted(format!(
                        "rewriting stopped: `{}` is applied inside {MAX_NESTING} nested applications of \
                         named strategies, which looks like a definition that calls itself before \
                         changing anything (inside {})",
                        s.short(),
                        chain(&self.within())
                    )));
                }
                self.active.push(s.clone());
                let r = self.apply(n.body(), p);
                self.active.pop();
                r
            }
        }
    }

    /// `try(a)`: `a <+ id`.
    fn attempt(&mut self, a: &Strategy<P>, p: &P) -> RewriteResult<P>
    where
        P: Traversable,
    {
        match self.apply(a, p) {
            Err(Failure::NotApplicable { .. }) => {
                self.steps += 1;
                Ok(p.clone())
            }
            other => other,
        }
    }

    /// `repeat(step)`: `try(step ; repeat(step))`, as a loop.
    fn repeat(
        &mut self,
        p: &P,
        mut step: impl FnMut(&mut Self, &P) -> RewriteResult<P>,
    ) -> RewriteResult<P>
    where
        P: Traversable,
    {
        let mut q = p.clone();
        // the program one step before `q`
        let mut previous: Option<P> = None;
        loop {
            let rules_before = self.rules_applied;
            match step(self, &q) {
                Ok(next) if self.rules_applied == rules_before || next.same(&q) => {
                    return Err(self.no_progress())
                }
                Ok(next) if previous.as_ref().is_some_and(|b| next.same(b)) => {
                    return Err(self.back_and_forth())
                }
                Ok(next) => {
                    previous = Some(std::mem::replace(&mut q, next));
                    self.check_growth(&q)?;
                }
                Err(Failure::NotApplicable { .. }) => {
                    self.steps += 1;
                    return Ok(q);
                }
                Err(abort) => return Err(abort),
            }
        }
    }

    /// `topDown(a)`: `a <+ one(topDown(a))`; `whole` is the `topDown` node.
    fn top_down(&mut self, whole: &Strategy<P>, a: &Strategy<P>, p: &P) -> RewriteResult<P>
    where
        P: Traversable,
    {
        match self.apply(a, p) {
            Err(Failure::NotApplicable { .. }) => self.one(whole, p, |ctx, c, label| {
                ctx.location.push(label);
                ctx.applications += 1;
                let r = ctx.top_down(whole, a, c);
                ctx.location.pop();
                r
            }),
            other => other,
        }
    }

    /// `bottomUp(a)`: `one(bottomUp(a)) <+ a`; `whole` is the `bottomUp` node.
    fn bottom_up(&mut self, whole: &Strategy<P>, a: &Strategy<P>, p: &P) -> RewriteResult<P>
    where
        P: Traversable,
    {
        let below = self.one(whole, p, |ctx, c, label| {
            ctx.location.push(label);
            ctx.applications += 1;
            let r = ctx.bottom_up(whole, a, c);
            ctx.location.pop();
            r
        });
        match below {
            Err(Failure::NotApplicable { .. }) => match self.apply(a, p) {
                Err(Failure::NotApplicable { .. }) => Err(self.failure(whole, p)),
                other => other,
            },
            other => other,
        }
    }

    /// `all`: `visit` on every child; one step when all succeed.
    fn all(
        &mut self,
        p: &P,
        mut visit: impl FnMut(&mut Self, &P, &'static str) -> RewriteResult<P>,
    ) -> RewriteResult<P>
    where
        P: Traversable,
    {
        let mut q = p.clone();
        for i in 0..p.child_count() {
            let child = q.child(i);
            let new = visit(self, &child, q.child_label(i))?;
            q = q.with_child(i, new, &mut self.env);
        }
        self.steps += 1;
        Ok(q)
    }

    /// `one`: `visit` on the first child where it succeeds; one step then.
    fn one(
        &mut self,
        whole: &Strategy<P>,
        p: &P,
        mut visit: impl FnMut(&mut Self, &P, &'static str) -> RewriteResult<P>,
    ) -> RewriteResult<P>
    where
        P: Traversable,
    {
        for i in 0..p.child_count() {
            match visit(self, &p.child(i), p.child_label(i)) {
                Ok(new) => {
                    self.steps += 1;
                    return Ok(p.with_child(i, new, &mut self.env));
                }
                Err(Failure::NotApplicable { .. }) => {}
                Err(abort) => return Err(abort),
            }
        }
        Err(self.failure(whole, p))
    }

    /// `some(a)`: `a` on every child where it applies, at least one.
    fn some(&mut self, whole: &Strategy<P>, p: &P, a: &Strategy<P>) -> RewriteResult<P>
    where
        P: Traversable,
    {
        let mut q = p.clone();
        let mut any = false;
        for i in 0..p.child_count() {
            match self.descend(q.child_label(i), a, &q.child(i)) {
                Ok(new) => {
                    any = true;
                    q = q.with_child(i, new, &mut self.env);
                }
                Err(Failure::NotApplicable { .. }) => {}
                Err(abort) => return Err(abort),
            }
        }
        if any {
            self.steps += 1;
            Ok(q)
        } else {
            Err(self.failure(whole, p))
        }
    }

    /// Completes a failure a rule or traversal returned without naming itself.
    fn fill_in(&mut self, f: Failure<P>, s: &Strategy<P>, p: &P) -> Failure<P> {
        match f {
            Failure::NotApplicable {
                strategy: None,
                explanation,
                ..
            } => {
                let reason = explanation.and_then(|e| e.reason.clone());
                self.failure_because(s, p, reason)
            }
            Failure::NotApplicable {
                strategy: Some(inner),
                location: None,
                explanation,
            } if self.track_locations => Failure::NotApplicable {
                strategy: Some(inner),
                location: Some(self.location()),
                explanation,
            },
            other => other,
        }
    }

    /// Stops a `repeat` whose program has grown past [`crate::MAX_PROGRAM_NODES`]. The nodes
    /// are counted again once the applications since the last count reach an eighth of
    /// the last count, so counting costs a constant per application, and a step that
    /// rewrites the whole program (and may double it) is always followed by a count.
    /// A traversal that rewrites in place of `repeat` calls it on what it rewrote.
    pub fn check_growth(&mut self, q: &P) -> Result<(), Failure<P>>
    where
        P: Traversable,
    {
        if self.applications < self.next_size_check {
            return Ok(());
        }
        let (limit, deepest) = (crate::MAX_PROGRAM_NODES, self.depth_limit);
        let (nodes, depth) = measure(q, limit + 1);
        if nodes > limit || depth > deepest {
            let culprit = self.culprit();
            let past = if nodes > limit {
                format!("{limit} nodes")
            } else {
                format!(
                    "a depth of {deepest} ({} times its depth at the start, at least {} and at \
                     most {})",
                    crate::DEPTH_GROWTH,
                    crate::MIN_DEPTH_LIMIT,
                    crate::MAX_PROGRAM_DEPTH
                )
            };
            return Err(Failure::Aborted(format!(
                "rewriting stopped: {culprit}grew the program past {past}, which looks like a \
                 rewrite that does not terminate (inside {})",
                chain(&self.within())
            )));
        }
        self.next_size_check = self.applications + (nodes as u64 / 8).max(1);
        Ok(())
    }

    /// Stops a `repeat` (or `normalize`) whose step succeeded and left the program as it
    /// was: rewriting being deterministic, the step would succeed the same way forever
    /// (`repeat(try(s))`, `normalize(repeat(s))`, `repeat(isMap)`). A step is known to
    /// leave the program as it was when it applied no rule (`id`, `try` and the traversals
    /// change nothing), or when [`Program::same`] says so.
    fn no_progress(&self) -> Failure<P> {
        let culprit = self.culprit();
        Failure::Aborted(format!(
            "rewriting stopped: {culprit}does not terminate: its step succeeded without changing \
             the program, so it would succeed the same way forever (a step must fail once it has \
             nothing left to do: `try(s)`, `repeat(s)` and predicates never fail on the program \
             they succeeded on; inside {})",
            chain(&self.within())
        ))
    }

    /// Stops a `repeat` (or `normalize`) whose step took the program back to what it was
    /// two steps before ([`Program::same`]): the two steps would alternate forever (a rule
    /// and its inverse: `repeat(commute)`, F-smooth's `normalize(letSwap <+ sharing)`).
    fn back_and_forth(&self) -> Failure<P> {
        Failure::Aborted(format!(
            "rewriting stopped: {}does not terminate: its step took the program back to what it \
             was two steps before, so it would alternate between the two forever (a rule undoes \
             what the step before did; inside {})",
            self.culprit(),
            chain(&self.within())
        ))
    }

    /// The innermost `repeat` or `normalize` being applied, quoted, with a space after it
    /// (nothing when there is none).
    fn culprit(&self) -> String {
        self.active
            .iter()
            .rev()
            .find(|a| matches!(a.node(), Node::Repeat(_) | Node::Normalize(_)))
            .map_or_else(String::new, |a| format!("`{}` ", a.short()))
    }

    fn out_of_time(&self, s: &Strategy<P>) -> Failure<P> {
        Failure::Aborted(format!(
            "rewriting stopped after {} s (the limit) and {} strategy applications: `{}` does not \
             seem to terminate (inside {})",
            self.time_limit.as_secs(),
            self.applications,
            s.short(),
            chain(&self.within())
        ))
    }

    fn out_of_budget(&self, s: &Strategy<P>) -> Failure<P> {
        let culprit = self
            .active
            .iter()
            .rev()
            .find(|a| matches!(a.node(), Node::Repeat(_) | Node::Normalize(_)))
            .map(Strategy::short)
            .unwrap_or_else(|| s.short());
        let within = self.within();
        let mut message = format!(
            "rewriting stopped after {} strategy applications: `{culprit}` does not seem to terminate",
            self.budget
        );
        if !within.is_empty() {
            message.push_str(&format!(" (inside {})", chain(&within)));
        }
        Failure::Aborted(message)
    }
}

/// The nodes of `p`, counted up to `limit` (and no further), and the depth of those seen.
pub(crate) fn measure<P: Traversable>(p: &P, limit: usize) -> (usize, usize) {
    if let Some((nodes, depth)) = p.nodes_and_depth().filter(|(n, _)| *n < limit) {
        return (nodes, depth);
    }
    let mut stack = vec![(p.clone(), 1)];
    let (mut nodes, mut deepest) = (0, 0);
    while let Some((q, depth)) = stack.pop() {
        nodes += 1;
        deepest = deepest.max(depth);
        if nodes >= limit {
            break;
        }
        stack.extend((0..q.child_count()).map(|i| (q.child(i), depth + 1)));
    }
    (nodes, deepest)
}

/// The most named strategies applied inside each other (a definition that calls itself
/// before changing the program, `def s = s` or `def s = id ; s`, would otherwise recurse
/// until the stack overflows). Far above the nesting of real strategies, whose recursion
/// follows the program's depth; far below what the 512 MiB rewriting stack holds.
pub const MAX_NESTING: usize = 10_000;

/// The strategies being applied, outermost first, as `a > b > c`: a run of the same name
/// is written once with its count (`s (×9998)`), and a long chain shows its two ends.
fn chain(within: &[String]) -> String {
    let mut runs: Vec<(String, usize)> = Vec::new();
    for name in within {
        match runs.last_mut() {
            Some((last, n)) if last == name => *n += 1,
            _ => runs.push((name.clone(), 1)),
        }
    }
    let shown: Vec<String> = runs
        .iter()
        .map(|(name, n)| match n {
            1 => name.clone(),
            n => format!("{name} (×{n})"),
        })
        .collect();
    const ENDS: usize = 6;
    if shown.len() <= 2 * ENDS + 1 {
        return shown.join(" > ");
    }
    format!(
        "{} > … {} more … > {}",
        shown[..ENDS].join(" > "),
        shown.len() - 2 * ENDS,
        shown[shown.len() - ENDS..].join(" > ")
    )
}
