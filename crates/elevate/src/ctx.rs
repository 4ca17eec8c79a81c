//! The rewrite context: everything that changes while a strategy runs.

use crate::{Explanation, Failure, Location, Node, Program, RewriteResult, Strategy};
use std::collections::HashMap;
use std::sync::Arc;

/// The default budget: strategy applications (successful or not) before a
/// rewrite is stopped as non-terminating.
pub const DEFAULT_BUDGET: u64 = 50_000_000;

/// The most nodes a program may grow to under `repeat` or `normalize` before rewriting is
/// stopped (`repeat(etaAbstraction)` and `repeat(tryAll(addId))` grow without end).
/// Far above the programs of the papers' strategies (thousands of nodes).
pub const MAX_PROGRAM_NODES: usize = 200_000;

/// The deepest a program may grow under `repeat` or `normalize` (`repeat(addId @ topDown)`
/// nests one more `id` each step): the passes over a program recurse on its depth.
pub const MAX_PROGRAM_DEPTH: usize = 20_000;

/// How many times deeper than the program it started from a rewrite ([`Ctx::run`]) may make
/// it under `repeat` or `normalize`, and the depth it may always reach: a step of a runaway
/// `normalize` that deepens the program costs time in proportion to its depth, or more
/// (`normalize(mapFusion <+ mapFission)` took 10 s to reach a depth of 20,000;
/// `normalize(splitJoinMap(2))`, whose sizes `n/2/2/...` cost more at each step, 0.7 s to
/// reach 600 and 20 s for 1,000). Every example strategy deepens its programs less than three
/// times (the deepest: `tiled2d` of `boxBlur`, `vectorization` of `conv`, by more than twice).
pub const DEPTH_GROWTH: usize = 4;

/// See [`DEPTH_GROWTH`].
pub const MIN_DEPTH_LIMIT: usize = 500;

/// The default limit on the wall-clock time of one rewrite: a backstop for loops the other
/// bounds miss (a cycle of three or more steps of costly rules), in seconds, not minutes.
/// The example strategies take at most 12 ms (the largest: 445,000 applications).
pub const DEFAULT_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// One successful rule application, recorded when tracing.
#[derive(Clone, Debug)]
pub struct TraceEntry {
    /// The rule that applied.
    pub rule: String,
    /// The named strategies it ran inside, outermost first.
    pub within: Vec<String>,
    /// Where in the program it applied.
    pub location: Location,
    /// The sub-program before.
    pub before: String,
    /// The sub-program after.
    pub after: String,
}

/// The state of one rewrite: step counter, budget, trace and the language's
/// environment. Create one per rewrite; nothing is shared between rewrites.
pub struct Ctx<P: Program> {
    /// The language's own state (fresh names, options).
    pub env: P::Env,
    pub(crate) steps: u64,
    pub(crate) applications: u64,
    pub(crate) budget: u64,
    pub(crate) trace: Option<Vec<TraceEntry>>,
    /// Successful rule applications, traced or not.
    pub(crate) rules_applied: u64,
    /// Named and looping strategies being applied, outermost first.
    pub(crate) active: Vec<Strategy<P>>,
    pub(crate) location: Vec<&'static str>,
    pub(crate) track_locations: bool,
    /// When the rewrite started, and how long it may take.
    pub(crate) started: std::time::Instant,
    pub(crate) time_limit: std::time::Duration,
    /// The application count at which a `repeat` next counts its program's nodes.
    pub(crate) next_size_check: u64,
    /// The deepest the program may grow under `repeat` or `normalize` (see
    /// [`DEPTH_GROWTH`]).
    pub(crate) depth_limit: usize,
    /// Why the run failed, recorded only while locations are tracked (the second run of a
    /// failed [`Ctx::run`]).
    pub(crate) why: Why<P>,
}

/// What the location-tracking run records to explain a failure.
pub(crate) struct Why<P: Program> {
    /// The last step that failed by itself, with the term it failed on and the reason the
    /// rule gave, if any.
    pub last: Option<(Strategy<P>, P, Option<String>)>,
    /// The last failure a rule passed on from a strategy it applied itself.
    pub latest: Option<Explanation<P>>,
    /// The last step that failed with a reason ([`crate::Failure::not_applicable_because`]),
    /// the term it failed on and the reason: told when the explanation has no reason of its
    /// own (a traversal that tried the rule everywhere fails after it).
    pub reasoned: Option<(P, String)>,
    /// For each outermost rule of those failures, the one inside the most rules (the
    /// first such): where that rule got furthest.
    pub deepest: HashMap<String, Explanation<P>>,
}

impl<P: Program> Default for Why<P> {
    fn default() -> Self {
        Why {
            last: None,
            latest: None,
            reasoned: None,
            deepest: HashMap::new(),
        }
    }
}

/// The most entries a trace keeps (the count of rule applications goes on).
pub const MAX_TRACE: usize = 100_000;

impl<P: Program> Default for Ctx<P> {
    fn default() -> Self {
        Ctx::new(P::Env::default())
    }
}

impl<P: Program> Ctx<P> {
    /// A context with the given environment, the default budget and no trace.
    pub fn new(env: P::Env) -> Ctx<P> {
        Ctx {
            env,
            steps: 0,
            applications: 0,
            budget: DEFAULT_BUDGET,
            trace: None,
            rules_applied: 0,
            active: Vec::new(),
            location: Vec::new(),
            track_locations: false,
            started: std::time::Instant::now(),
            time_limit: DEFAULT_TIME_LIMIT,
            next_size_check: 0,
            depth_limit: MAX_PROGRAM_DEPTH,
            why: Why::default(),
        }
    }

    /// Sets the limit on the wall-clock time of the rewrite.
    pub fn with_time_limit(mut self, limit: std::time::Duration) -> Ctx<P> {
        self.time_limit = limit;
        self
    }

    /// Sets the budget of strategy applications.
    pub fn with_budget(mut self, budget: u64) -> Ctx<P> {
        self.budget = budget;
        self
    }

    /// Records a trace of every successful rule application.
    pub fn with_trace(mut self) -> Ctx<P> {
        self.trace = Some(Vec::new());
        self
    }

    /// Successful rewrite steps so far, counted as ICFP'20 §6.2 counts them: every
    /// successful rule, `id` (also the `id` inside `try`, `repeat` and `normalize`)
    /// and traversal step (`one`, `all`, `some`, `body`, ...). Combinators
    /// themselves (`;`, `<+`, `not`) are not steps.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Successful rule applications so far (counted with or without a trace).
    pub fn rules_applied(&self) -> u64 {
        self.rules_applied
    }

    /// Strategy applications so far, failed ones included (what the budget limits).
    pub fn applications(&self) -> u64 {
        self.applications
    }

    /// The trace, if tracing.
    pub fn trace(&self) -> Option<&[TraceEntry]> {
        self.trace.as_deref()
    }

    /// Whether failures record where they happened (see [`Ctx::run`]).
    pub fn tracks_locations(&self) -> bool {
        self.track_locations
    }

    /// Applies `s` to `p`. A failure names the strategy that did not apply and,
    /// because the rewrite is deterministic, is computed a second time with
    /// locations recorded (the fast first run does not record them), and with its
    /// [`Explanation`]: the innermost step that failed and the term it failed on. The step
    /// count and trace describe the first run only. Under `repeat` and `normalize`
    /// the program may grow [`DEPTH_GROWTH`] times as deep as `p` (at least
    /// [`MIN_DEPTH_LIMIT`], at most [`MAX_PROGRAM_DEPTH`]).
    pub fn run(&mut self, s: &Strategy<P>, p: &P) -> RewriteResult<P>
    where
        P: crate::Traversable,
    {
        let (_, depth) = crate::engine::measure(p, usize::MAX);
        self.depth_limit = depth
            .saturating_mul(DEPTH_GROWTH)
            .clamp(MIN_DEPTH_LIMIT, MAX_PROGRAM_DEPTH);
        let (steps, applications) = (self.steps, self.applications);
        let first = self.apply(s, p);
        match first {
            Err(Failure::NotApplicable { .. }) if !self.track_locations => {
                let (after_steps, after_applications) = (self.steps, self.applications);
                self.steps = steps;
                self.applications = applications;
                self.track_locations = true;
                let trace = self.trace.take();
                let mut env = P::Env::default();
                std::mem::swap(&mut env, &mut self.env);
                self.why = Why::default();
                let again = self.apply(s, p).map_err(|f| self.explained(f));
                self.why = Why::default();
                std::mem::swap(&mut env, &mut self.env);
                self.track_locations = false;
                self.steps = after_steps;
                self.applications = after_applications;
                self.trace = trace;
                match again {
                    Err(f) => Err(f),
                    Ok(_) => first,
                }
            }
            other => other,
        }
    }

    /// Applies `s` to the sub-program `child`, found at position `label` of the
    /// current one: what traversals call.
    pub fn descend(&mut self, label: &'static str, s: &Strategy<P>, child: &P) -> RewriteResult<P>
    where
        P: crate::Traversable,
    {
        self.location.push(label);
        let r = self.apply(s, child);
        self.location.pop();
        r
    }

    /// Enters the sub-program at position `label` of the current one without applying a
    /// strategy there: for a traversal that walks the program itself and applies
    /// strategies below ([`Ctx::apply`]), so that failures and traces name where they
    /// happened. Every `enter` is followed by a [`Ctx::leave`].
    pub fn enter(&mut self, label: &'static str) {
        self.location.push(label);
    }

    /// Leaves the sub-program the last [`Ctx::enter`] entered.
    pub fn leave(&mut self) {
        self.location.pop();
    }

    /// The current location.
    pub fn location(&self) -> Location {
        Location(self.location.clone())
    }

    /// The names of the named and looping strategies being applied, outermost first.
    pub fn within(&self) -> Vec<String> {
        self.active
            .iter()
            .map(|s| match s.node() {
                Node::Named(n) if n.args.is_empty() => n.name.to_string(),
                Node::Named(n) => format!("{}({})", n.name, n.args.join(", ")),
                _ => s.short(),
            })
            .collect()
    }

    /// The failure of `s` on `p`, by itself (not passed on from a strategy it applied).
    pub(crate) fn failure(&mut self, s: &Strategy<P>, p: &P) -> Failure<P> {
        self.failure_because(s, p, None)
    }

    /// [`Ctx::failure`] with the reason the rule gave.
    pub(crate) fn failure_because(
        &mut self,
        s: &Strategy<P>,
        p: &P,
        reason: Option<String>,
    ) -> Failure<P> {
        if self.track_locations {
            if let Some(r) = &reason {
                self.why.reasoned = Some((p.clone(), r.clone()));
            }
            self.why.last = Some((s.clone(), p.clone(), reason));
        }
        Failure::NotApplicable {
            strategy: Some(s.clone()),
            location: self.track_locations.then(|| self.location()),
            explanation: None,
        }
    }

    /// Records that the rule `s` failed because a strategy it applied itself failed with
    /// `f` (tracking locations only).
    pub(crate) fn passed_on(&mut self, s: &Strategy<P>, f: &Failure<P>) {
        let Some(inner) = f.strategy() else {
            return;
        };
        let entry = (s.short(), self.location());
        let step = inner.short();
        let chained = self.why.latest.take().filter(|e| {
            e.within.first().map(|w| &w.0) == Some(&step) || (e.within.is_empty() && e.step == step)
        });
        let explanation = match chained {
            Some(mut e) => {
                e.within.insert(0, entry);
                e
            }
            None => Explanation {
                within: vec![entry],
                step,
                term: self.term_of(inner),
                reason: self.reason_of(inner),
            },
        };
        let outermost = explanation.within[0].0.clone();
        let deeper = self
            .why
            .deepest
            .get(&outermost)
            .is_none_or(|d| explanation.within.len() > d.within.len());
        if deeper {
            self.why.deepest.insert(outermost, explanation.clone());
        }
        self.why.latest = Some(explanation);
    }

    /// The term `s` last failed on by itself, if it was the last step to fail so.
    fn term_of(&self, s: &Strategy<P>) -> Option<P> {
        self.why
            .last
            .as_ref()
            .filter(|(t, _, _)| t == s)
            .map(|(_, p, _)| p.clone())
    }

    /// The reason `s` gave when it last failed by itself, if it was the last step to fail so.
    fn reason_of(&self, s: &Strategy<P>) -> Option<String> {
        self.why
            .last
            .as_ref()
            .filter(|(t, _, _)| t == s)
            .and_then(|(_, _, r)| r.clone())
    }

    /// `f` with its explanation: the last failure a rule passed on, if it involves `f`'s
    /// strategy; or where `f`'s strategy, as a rule, got furthest; or where a rule that
    /// applied it got furthest; or else the term `f`'s strategy failed on.
    fn explained(&mut self, f: Failure<P>) -> Failure<P> {
        let Failure::NotApplicable {
            strategy: Some(s),
            location,
            ..
        } = f
        else {
            return f;
        };
        let name = s.short();
        let involved = |e: &&Explanation<P>| e.step == name || e.within.iter().any(|w| w.0 == name);
        let inside = self
            .why
            .deepest
            .values()
            .filter(involved)
            .max_by_key(|e| e.within.len());
        let found = (self.why.latest.as_ref().filter(involved))
            .or_else(|| self.why.deepest.get(&name))
            .or(inside);
        let explanation = match found {
            Some(e) => e.clone(),
            None => Explanation {
                within: Vec::new(),
                step: name,
                term: self.term_of(&s),
                reason: self.reason_of(&s),
            },
        };
        let mut explanation = explanation;
        if explanation.reason.is_none() {
            explanation.reason = self.why.reasoned.as_ref().map(|(term, reason)| {
                format!(
                    "{reason} (at `{}`)",
                    crate::result::abbreviated(&term.to_string())
                )
            });
        }
        Failure::NotApplicable {
            strategy: Some(s),
            location,
            explanation: Some(std::sync::Arc::new(explanation)),
        }
    }

    pub(crate) fn record(&mut self, rule: &Arc<str>, before: &P, after: &P) {
        self.rules_applied += 1;
        // a trace keeps its first MAX_TRACE entries: a runaway strategy cannot
        // fill the memory with it
        if self.trace.as_ref().is_none_or(|t| t.len() >= MAX_TRACE) {
            return;
        }
        let entry = TraceEntry {
            rule: rule.to_string(),
            within: self.within(),
            location: self.location(),
            before: before.to_string(),
            after: after.to_string(),
        };
        if let Some(t) = self.trace.as_mut() {
            t.push(entry);
        }
    }
}
