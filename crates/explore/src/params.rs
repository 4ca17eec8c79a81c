//! Tuning the numeric parameters of a strategy template.
//!
//! A parametrised strategy (`mmSplitK(tm, tn, rm, rn, kb, wm, wn)` of gpu.elv, say)
//! is searched over the values its parameters may take, together with sizes of
//! the program that are choices rather than data (the number of chunks a reduction
//! is split into). The space is given as
//!
//! * free parameters with their values: `tm=28,56,112`;
//! * derived parameters, integer expressions over the others: `wm=tm/rm` (a
//!   division must be exact, otherwise the assignment is not valid);
//! * requirements, comparisons of such expressions: `wm*wn<=1024`,
//!   `(tm*kb)%(wm*wn)==0`.
//!
//! [`ParamSpace::valid`] enumerates every valid assignment; [`ParamSearch`] proposes
//! them in the order of a search method: the whole valid set in randomized order
//! (as the solver enumerates mappings), random draws from the raw product filtered
//! by the requirements (the paper's baseline), or an evolutionary search that
//! mutates one parameter of the best assignments found so far.

use crate::search::Method;
use crate::solve::seeded_rng;
use splitmix::SplitMix64;
use std::collections::HashSet;
use std::time::Instant;

/// Values of the parameters, in the order they were given.
pub type Assignment = Vec<(String, i64)>;

/// An integer expression over parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum IntExpr {
    /// A literal.
    Num(i64),
    /// A parameter.
    Var(String),
    /// `a op b` for `op` one of `+ - * / %` (`/` and `%` need a non-zero divisor,
    /// `/` an exact quotient).
    Bin(char, Box<IntExpr>, Box<IntExpr>),
}

/// A comparison `a cmp b`.
#[derive(Clone, Debug, PartialEq)]
pub struct Requirement {
    /// As written.
    pub text: String,
    lhs: IntExpr,
    cmp: &'static str,
    rhs: IntExpr,
}

/// A parameter of the space.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// A free parameter and the values it takes.
    Values(String, Vec<i64>),
    /// A parameter computed from those before it.
    Derived(String, IntExpr),
}

impl Param {
    /// Its name.
    pub fn name(&self) -> &str {
        match self {
            Param::Values(n, _) | Param::Derived(n, _) => n,
        }
    }

    /// Parses `NAME=V1,V2,...` (values) or `NAME=EXPR` (derived).
    pub fn parse(s: &str) -> Result<Param, String> {
        let (name, rhs) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}`: a parameter is NAME=V1,V2,... or NAME=EXPR"))?;
        let name = name.trim();
        if !is_ident(name) {
            return Err(format!("`{name}` is not a parameter name"));
        }
        let values: Result<Vec<i64>, _> = rhs.split(',').map(|v| v.trim().parse()).collect();
        match values {
            Ok(vs) if !vs.is_empty() => Ok(Param::Values(name.into(), vs)),
            _ => Ok(Param::Derived(name.into(), parse_expr(rhs)?)),
        }
    }
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Tokens of expressions and requirements.
fn tokens(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(cs[start..i].iter().collect());
        } else if i + 1 < cs.len()
            && ["<=", ">=", "==", "!="].contains(&&*format!("{c}{}", cs[i + 1]))
        {
            out.push(format!("{c}{}", cs[i + 1]));
            i += 2;
        } else if "+-*/%()<>".contains(c) {
            out.push(c.to_string());
            i += 1;
        } else {
            return Err(format!("unexpected `{c}` in `{s}`"));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<String>,
    pos: usize,
    text: String,
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|s| s.as_str())
    }

    fn binary(
        &mut self,
        ops: &str,
        next: fn(&mut Parser) -> Result<IntExpr, String>,
    ) -> Result<IntExpr, String> {
        let mut e = next(self)?;
        while let Some(op) = self.peek().filter(|t| t.len() == 1 && ops.contains(*t)) {
            let op = op.chars().next().unwrap_or('+');
            self.pos += 1;
            e = IntExpr::Bin(op, Box::new(e), Box::new(next(self)?));
        }
        Ok(e)
    }

    fn sum(&mut self) -> Result<IntExpr, String> {
        self.binary("+-", Parser::product)
    }

    fn product(&mut self) -> Result<IntExpr, String> {
        self.binary("*/%", Parser::atom)
    }

    fn atom(&mut self) -> Result<IntExpr, String> {
        let t = self
            .peek()
            .ok_or_else(|| format!("`{}` ends too early", self.text))?
            .to_string();
        self.pos += 1;
        if t == "(" {
            let e = self.sum()?;
            if self.peek() != Some(")") {
                return Err(format!("a `)` is missing in `{}`", self.text));
            }
            self.pos += 1;
            Ok(e)
        } else if let Ok(n) = t.parse() {
            Ok(IntExpr::Num(n))
        } else if is_ident(&t) {
            Ok(IntExpr::Var(t))
        } else {
            Err(format!("unexpected `{t}` in `{}`", self.text))
        }
    }

    fn done(&self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(format!("unexpected `{t}` in `{}`", self.text)),
        }
    }
}

/// Parses an integer expression (`tm/rm`, `(tm*kb)%(wm*wn)`).
pub fn parse_expr(s: &str) -> Result<IntExpr, String> {
    let mut p = Parser {
        toks: tokens(s)?,
        pos: 0,
        text: s.trim().into(),
    };
    let e = p.sum()?;
    p.done()?;
    Ok(e)
}

impl Requirement {
    /// Parses `EXPR cmp EXPR`, `cmp` one of `< <= > >= == !=`.
    pub fn parse(s: &str) -> Result<Requirement, String> {
        let mut p = Parser {
            toks: tokens(s)?,
            pos: 0,
            text: s.trim().into(),
        };
        let lhs = p.sum()?;
        let cmp = ["<=", ">=", "==", "!=", "<", ">"]
            .into_iter()
            .find(|c| p.peek() == Some(*c))
            .ok_or_else(|| {
                format!("`{s}`: a requirement compares two expressions (<, <=, ==, ...)")
            })?;
        p.pos += 1;
        let rhs = p.sum()?;
        p.done()?;
        Ok(Requirement {
            text: s.trim().into(),
            lhs,
            cmp,
            rhs,
        })
    }

    fn holds(&self, env: &Assignment) -> Result<bool, String> {
        let (a, b) = (eval(&self.lhs, env)?, eval(&self.rhs, env)?);
        Ok(match self.cmp {
            "<=" => a <= b,
            ">=" => a >= b,
            "==" => a == b,
            "!=" => a != b,
            "<" => a < b,
            _ => a > b,
        })
    }
}

/// The value of `e` under `env`; an error says why there is none.
pub fn eval(e: &IntExpr, env: &Assignment) -> Result<i64, String> {
    match e {
        IntExpr::Num(n) => Ok(*n),
        IntExpr::Var(v) => env
            .iter()
            .find(|(k, _)| k == v)
            .map(|(_, x)| *x)
            .ok_or_else(|| format!("`{v}` is not a parameter given before")),
        IntExpr::Bin(op, a, b) => {
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            let r = match op {
                '+' => x.checked_add(y),
                '-' => x.checked_sub(y),
                '*' => x.checked_mul(y),
                _ if y == 0 => return Err(format!("{x} {op} 0")),
                '/' if x % y != 0 => return Err(format!("{x} / {y} is not whole")),
                '/' => Some(x / y),
                _ => Some(x % y),
            };
            r.ok_or_else(|| format!("{x} {op} {y} overflows"))
        }
    }
}

/// The space: parameters in order and the requirements on them.
#[derive(Clone, Debug)]
pub struct ParamSpace {
    /// The parameters, each free or derived from those before it.
    pub params: Vec<Param>,
    /// The requirements every valid assignment meets.
    pub requires: Vec<Requirement>,
}

/// The most valid assignments enumerated.
pub const ENUMERATION_LIMIT: usize = 1_000_000;
/// The most raw assignments an enumeration examines.
pub const RAW_LIMIT: u128 = 2_000_000;

/// The valid assignments an enumeration found, and why it stopped early if it did.
#[derive(Clone, Debug)]
pub struct Enumeration {
    /// The valid assignments found, in the product's order.
    pub valid: Vec<Assignment>,
    /// The raw assignments examined.
    pub examined: u128,
    /// Why it stopped before the end of the product.
    pub stop: Option<Stop>,
}

/// Why an enumeration stopped before the end of the product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// [`ENUMERATION_LIMIT`] valid assignments were found.
    ValidLimit,
    /// The limit of raw assignments to examine was reached.
    RawLimit,
    /// The time was up.
    Deadline,
}

/// Advances `choice` to the next in the product of `domains`, the last fastest; `false`
/// once past the end.
fn next_choice(choice: &mut [usize], domains: &[&[i64]]) -> bool {
    for i in (0..domains.len()).rev() {
        choice[i] += 1;
        if choice[i] < domains[i].len() {
            return true;
        }
        choice[i] = 0;
    }
    false
}

impl ParamSpace {
    /// Parses the space from `--param` and `--require` texts.
    pub fn parse(params: &[String], requires: &[String]) -> Result<ParamSpace, String> {
        let params: Vec<Param> = params
            .iter()
            .map(|p| Param::parse(p))
            .collect::<Result<_, _>>()?;
        for (i, p) in params.iter().enumerate() {
            if params[..i].iter().any(|q| q.name() == p.name()) {
                return Err(format!("the parameter `{}` is given twice", p.name()));
            }
        }
        let requires = requires
            .iter()
            .map(|r| Requirement::parse(r))
            .collect::<Result<_, _>>()?;
        Ok(ParamSpace { params, requires })
    }

    /// The domains of the free parameters.
    fn free(&self) -> Vec<&[i64]> {
        self.params
            .iter()
            .filter_map(|p| match p {
                Param::Values(_, vs) => Some(vs.as_slice()),
                Param::Derived(..) => None,
            })
            .collect()
    }

    /// Raw assignments: the product of the free parameters' domains.
    pub fn raw_count(&self) -> u128 {
        self.free().iter().map(|d| d.len() as u128).product()
    }

    /// The assignment of one value index per free parameter, or why it is not valid.
    pub fn assign(&self, choice: &[usize]) -> Result<Assignment, String> {
        let mut env = Assignment::new();
        let mut k = 0;
        for p in &self.params {
            let v = match p {
                Param::Values(_, vs) => {
                    k += 1;
                    vs[choice[k - 1]]
                }
                Param::Derived(_, e) => {
                    eval(e, &env).map_err(|why| format!("{}: {why}", p.name()))?
                }
            };
            env.push((p.name().to_string(), v));
        }
        for r in &self.requires {
            if !r.holds(&env)? {
                return Err(format!("{} does not hold", r.text));
            }
        }
        Ok(env)
    }

    /// Every valid assignment (at most [`ENUMERATION_LIMIT`], among at most
    /// [`RAW_LIMIT`] raw ones), in the product's order.
    pub fn valid(&self) -> Vec<Assignment> {
        self.enumerate(RAW_LIMIT, None).valid
    }

    /// The valid assignments in the product's order, examining at most `raw_limit` raw
    /// assignments and stopping at `deadline`; at most [`ENUMERATION_LIMIT`] are kept.
    pub fn enumerate(&self, raw_limit: u128, deadline: Option<Instant>) -> Enumeration {
        let domains = self.free();
        let mut out = Enumeration {
            valid: Vec::new(),
            examined: 0,
            stop: None,
        };
        if domains.iter().any(|d| d.is_empty()) {
            return out;
        }
        let mut choice = vec![0usize; domains.len()];
        loop {
            if let Some(stop) = self.stop_at(&out, raw_limit, deadline) {
                out.stop = Some(stop);
                return out;
            }
            out.examined += 1;
            if let Ok(a) = self.assign(&choice) {
                out.valid.push(a);
            }
            if !next_choice(&mut choice, &domains) {
                return out;
            }
        }
    }

    /// Why an enumeration stops before its next raw assignment, if it does.
    fn stop_at(&self, e: &Enumeration, raw_limit: u128, deadline: Option<Instant>) -> Option<Stop> {
        if e.valid.len() >= ENUMERATION_LIMIT {
            Some(Stop::ValidLimit)
        } else if e.examined >= raw_limit {
            Some(Stop::RawLimit)
        } else if e.examined.is_multiple_of(1024) && deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stop::Deadline)
        } else {
            None
        }
    }

    /// The value indices of an assignment's free parameters.
    fn choice_of(&self, a: &Assignment) -> Vec<usize> {
        self.params
            .iter()
            .zip(a)
            .filter_map(|(p, (_, v))| match p {
                Param::Values(_, vs) => vs.iter().position(|x| x == v),
                Param::Derived(..) => None,
            })
            .collect()
    }
}

/// `template` with every parameter named in it (as a whole word) replaced by its value.
pub fn substitute(template: &str, a: &Assignment) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match a.iter().find(|(k, _)| k == word) {
            Some((_, v)) => out.push_str(&v.to_string()),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in template.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Whether `template` names the parameter `name` (as a whole word).
pub fn names(template: &str, name: &str) -> bool {
    template
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == name)
}

/// A search over a parameter space in progress.
pub struct ParamSearch {
    /// The method.
    pub method: Method,
    space: ParamSpace,
    rng: SplitMix64,
    shuffled: Vec<Assignment>,
    next: usize,
    seen: HashSet<Assignment>,
    population: Vec<(Assignment, f64)>,
    /// Raw assignments drawn (random search).
    pub draws: usize,
    /// Of which valid.
    pub valid_draws: usize,
}

/// Raw draws the random search makes for one proposal before it gives up.
pub const RANDOM_TRIES: usize = 100_000;
/// Assignments the evolutionary search starts from (in randomized enumeration order).
pub const SEED_ASSIGNMENTS: usize = 6;

impl ParamSearch {
    /// A search of `space` by `method` with a seed; `valid` is `space.valid()`
    /// (enumerated once by the caller for all the methods it runs).
    pub fn new(space: &ParamSpace, valid: &[Assignment], method: Method, seed: u64) -> ParamSearch {
        let mut rng = seeded_rng(seed);
        let mut shuffled = valid.to_vec();
        rng.shuffle(&mut shuffled);
        ParamSearch {
            method,
            space: space.clone(),
            rng,
            shuffled,
            next: 0,
            seen: HashSet::new(),
            population: Vec::new(),
            draws: 0,
            valid_draws: 0,
        }
    }

    /// The next assignment to evaluate (`None`: the space is exhausted).
    pub fn propose(&mut self) -> Option<Assignment> {
        let a = match self.method {
            Method::Solver => self.next_enumerated(),
            Method::Random => self.random(),
            Method::Evolutionary => self.mutant().or_else(|| self.next_enumerated()),
        }?;
        self.seen.insert(a.clone());
        Some(a)
    }

    /// The score of an evaluated assignment (higher is better; `None`: it failed).
    pub fn report(&mut self, a: &Assignment, score: Option<f64>) {
        self.seen.insert(a.clone());
        if let Some(s) = score {
            self.population.push((a.clone(), s));
            self.population.sort_by(|x, y| y.1.total_cmp(&x.1));
            self.population.truncate(16);
        }
    }

    fn next_enumerated(&mut self) -> Option<Assignment> {
        while self.next < self.shuffled.len() {
            self.next += 1;
            let a = &self.shuffled[self.next - 1];
            if !self.seen.contains(a) {
                return Some(a.clone());
            }
        }
        None
    }

    fn random(&mut self) -> Option<Assignment> {
        let domains: Vec<usize> = self.space.free().iter().map(|d| d.len()).collect();
        if domains.contains(&0) {
            return None;
        }
        for _ in 0..RANDOM_TRIES {
            let choice: Vec<usize> = domains.iter().map(|&n| self.rng.below(n)).collect();
            self.draws += 1;
            if let Ok(a) = self.space.assign(&choice) {
                self.valid_draws += 1;
                if !self.seen.contains(&a) {
                    return Some(a);
                }
            }
        }
        None
    }

    fn mutant(&mut self) -> Option<Assignment> {
        if self.seen.len() < SEED_ASSIGNMENTS || self.population.is_empty() {
            return None;
        }
        let domains: Vec<usize> = self.space.free().iter().map(|d| d.len()).collect();
        for _ in 0..200 {
            // tournament of two among the best, then one free parameter changed
            let a = self.rng.below(self.population.len());
            let b = self.rng.below(self.population.len());
            let parent = self.population[a.min(b)].0.clone();
            let mut choice = self.space.choice_of(&parent);
            let k = self.rng.below(domains.len().max(1));
            if domains.get(k).is_none_or(|&n| n < 2) {
                continue;
            }
            choice[k] = self.rng.below(domains[k]);
            if let Ok(child) = self.space.assign(&choice) {
                if !self.seen.contains(&child) {
                    return Some(child);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> ParamSpace {
        ParamSpace::parse(
            &["tm=28,64,112".into(), "rm=4,7".into(), "wm=tm/rm".into()],
            &["wm<=16".into()],
        )
        .unwrap()
    }

    #[test]
    fn derived_parameters_must_be_whole_and_requirements_hold() {
        let s = space();
        assert_eq!(s.raw_count(), 6);
        let valid = s.valid();
        // 28/4=7, 28/7=4, 64/4=16, 112/7=16 (64/7 not whole, 112/4=28 > 16)
        let wms: Vec<i64> = valid.iter().map(|a| a[2].1).collect();
        assert_eq!(wms, vec![7, 4, 16, 16]);
        assert_eq!(s.assign(&[1, 1]).unwrap_err(), "wm: 64 / 7 is not whole");
        assert_eq!(s.assign(&[2, 0]).unwrap_err(), "wm<=16 does not hold");
    }

    #[test]
    fn enumeration_stops_at_its_raw_limit_and_deadline() {
        let s = space();
        let all = s.enumerate(u128::MAX, None);
        assert_eq!((all.valid.len(), all.examined, all.stop), (4, 6, None));
        let capped = s.enumerate(3, None);
        assert_eq!(capped.examined, 3);
        assert_eq!(capped.stop, Some(Stop::RawLimit));
        assert_eq!(
            capped.valid,
            all.valid[..3].to_vec(),
            "(64, 7) is not whole"
        );
        let late = s.enumerate(u128::MAX, Some(Instant::now()));
        assert_eq!((late.examined, late.stop), (0, Some(Stop::Deadline)));
    }

    #[test]
    fn expressions_follow_precedence_and_report_errors() {
        let env: Assignment = vec![("a".into(), 6), ("b".into(), 4)];
        let e = |s: &str| eval(&parse_expr(s).unwrap(), &env);
        assert_eq!(e("a+b*2"), Ok(14));
        assert_eq!(e("(a+b)*2"), Ok(20));
        assert_eq!(e("a*b%5-1"), Ok(3));
        assert_eq!(e("a/b").unwrap_err(), "6 / 4 is not whole");
        assert_eq!(e("a%(b-4)").unwrap_err(), "6 % 0");
        assert!(e("c").unwrap_err().contains("`c`"));
        assert!(parse_expr("a+").is_err());
        assert!(parse_expr("(a").is_err());
        assert!(Requirement::parse("a b").is_err());
        assert!(Param::parse("x").is_err());
        assert!(ParamSpace::parse(&["a=1".into(), "a=2".into()], &[]).is_err());
    }

    #[test]
    fn substitution_replaces_whole_words_only() {
        let a: Assignment = vec![("tm".into(), 28), ("q".into(), 288)];
        assert_eq!(
            substitute("mmSplitK(tm, tmx, q)", &a),
            "mmSplitK(28, tmx, 288)"
        );
        assert!(names("f(tm, q)", "q") && !names("f(tmq)", "q"));
    }

    #[test]
    fn every_method_proposes_valid_assignments_once() {
        let s = space();
        let valid = s.valid();
        for method in [Method::Solver, Method::Random, Method::Evolutionary] {
            let mut search = ParamSearch::new(&s, &valid, method, 7);
            let mut got = Vec::new();
            while let Some(a) = search.propose() {
                assert!(valid.contains(&a), "{method:?} proposed {a:?}");
                search.report(&a, Some(a[2].1 as f64));
                got.push(a);
                if got.len() > 10 {
                    break;
                }
            }
            got.sort();
            got.dedup();
            assert_eq!(got.len(), valid.len(), "{method:?} missed or repeated");
        }
    }
}
