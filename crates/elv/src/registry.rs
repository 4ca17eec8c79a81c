//! Values, kinds and the registry of builtins a strategy file can use.

use crate::module::Shared;
use elevate::{Program, Strategy};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// The kind of a value: what a builtin parameter accepts and what the checker
/// infers for the parameters of user definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// An integer (`32`, `-3`).
    Int,
    /// A list of values (`[1, 2, 5, 6, 3, 4]`, `[[1], [2, 3]]`).
    List,
    /// A strategy.
    Strategy,
    /// A traversal: a function from strategy to strategy (`topDown`, `argOf(map)`).
    Traversal,
    /// A name of the object language, such as the primitive `map` in `argOf(map, s)`.
    Symbol,
}

impl Kind {
    /// The kind with an indefinite article, for messages ("an integer").
    pub(crate) fn article(self) -> &'static str {
        match self {
            Kind::Int => "an integer",
            Kind::List => "a list",
            Kind::Strategy => "a strategy",
            Kind::Traversal => "a traversal",
            Kind::Symbol => "a symbol",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Kind::Int => "Int",
            Kind::List => "List",
            Kind::Strategy => "Strategy",
            Kind::Traversal => "Traversal",
            Kind::Symbol => "Symbol",
        };
        f.write_str(name)
    }
}

/// A value of the strategy language: what expressions evaluate to and what
/// builtins receive and return.
pub enum Value<P: Program> {
    /// An integer.
    Int(i64),
    /// A list.
    List(Vec<Value<P>>),
    /// A strategy.
    Strategy(Strategy<P>),
    /// A traversal.
    Traversal(Traversal<P>),
    /// A symbol of the object language.
    Symbol(String),
}

impl<P: Program> Value<P> {
    /// The value's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Value::Int(_) => Kind::Int,
            Value::List(_) => Kind::List,
            Value::Strategy(_) => Kind::Strategy,
            Value::Traversal(_) => Kind::Traversal,
            Value::Symbol(_) => Kind::Symbol,
        }
    }

    fn wrong(&self, expected: Kind) -> String {
        format!(
            "expected {}, found {} `{self}`",
            expected.article(),
            self.kind().article()
        )
    }

    /// The integer, or a message saying what the value is instead.
    pub fn as_int(&self) -> Result<i64, String> {
        match self {
            Value::Int(n) => Ok(*n),
            _ => Err(self.wrong(Kind::Int)),
        }
    }

    /// The list's elements, or a message saying what the value is instead.
    pub fn as_list(&self) -> Result<&[Value<P>], String> {
        match self {
            Value::List(items) => Ok(items),
            _ => Err(self.wrong(Kind::List)),
        }
    }

    /// The strategy, or a message saying what the value is instead.
    pub fn as_strategy(&self) -> Result<&Strategy<P>, String> {
        match self {
            Value::Strategy(s) => Ok(s),
            _ => Err(self.wrong(Kind::Strategy)),
        }
    }

    /// The traversal, or a message saying what the value is instead.
    pub fn as_traversal(&self) -> Result<&Traversal<P>, String> {
        match self {
            Value::Traversal(t) => Ok(t),
            _ => Err(self.wrong(Kind::Traversal)),
        }
    }

    /// The symbol's name, or a message saying what the value is instead.
    pub fn as_symbol(&self) -> Result<&str, String> {
        match self {
            Value::Symbol(s) => Ok(s),
            _ => Err(self.wrong(Kind::Symbol)),
        }
    }
}

impl<P: Program> Clone for Value<P> {
    fn clone(&self) -> Self {
        match self {
            Value::Int(n) => Value::Int(*n),
            Value::List(items) => Value::List(items.clone()),
            Value::Strategy(s) => Value::Strategy(s.clone()),
            Value::Traversal(t) => Value::Traversal(t.clone()),
            Value::Symbol(s) => Value::Symbol(s.clone()),
        }
    }
}

impl<P: Program> PartialEq for Value<P> {
    /// Structural equality; strategies compare as [`Strategy`] does, traversals
    /// by their printed names.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Strategy(a), Value::Strategy(b)) => a == b,
            (Value::Traversal(a), Value::Traversal(b)) => a.name == b.name,
            (Value::Symbol(a), Value::Symbol(b)) => a == b,
            _ => false,
        }
    }
}

impl<P: Program> fmt::Display for Value<P> {
    /// Prints the value in `.elv` syntax.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::List(items) => {
                write!(f, "[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{item}")?;
                }
                write!(f, "]")
            }
            Value::Strategy(s) => write!(f, "{s}"),
            Value::Traversal(t) => write!(f, "{}", t.name),
            Value::Symbol(s) => write!(f, "{s}"),
        }
    }
}

impl<P: Program> fmt::Debug for Value<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A traversal value: a named function from strategy to strategy, made by
/// applying a builtin or definition whose last parameter is a strategy to all
/// but that last argument (`argOf(map)`, `outermost(isMap)`, or a bare `topDown`).
pub struct Traversal<P: Program> {
    pub(crate) name: String,
    pub(crate) repr: TravRepr<P>,
}

/// What a traversal applies when given its strategy.
pub(crate) enum TravRepr<P: Program> {
    /// A builtin with its leading arguments.
    Builtin {
        builtin: Arc<Builtin<P>>,
        args: Vec<Value<P>>,
    },
    /// A user definition with its leading arguments.
    User {
        module: Arc<Shared<P>>,
        def: usize,
        args: Vec<Value<P>>,
    },
}

impl<P: Program> Traversal<P> {
    /// How the traversal prints (`argOf(map)`, `topDown`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Applies the traversal to a strategy. A builtin may refuse its arguments
    /// (the message says why); a user definition's body is built lazily, when the
    /// resulting strategy is first applied.
    pub fn apply(&self, s: Strategy<P>) -> Result<Strategy<P>, String> {
        match &self.repr {
            TravRepr::Builtin { builtin, args } => {
                let mut all = args.clone();
                all.push(Value::Strategy(s));
                match (builtin.run)(&all)? {
                    Value::Strategy(s) => Ok(s),
                    other => Err(builtin.not_a_strategy(&other)),
                }
            }
            TravRepr::User { module, def, args } => {
                let mut all = args.clone();
                all.push(Value::Strategy(s));
                Ok(crate::eval::lazy(module.clone(), *def, all))
            }
        }
    }
}

impl<P: Program> Clone for Traversal<P> {
    fn clone(&self) -> Self {
        let repr = match &self.repr {
            TravRepr::Builtin { builtin, args } => TravRepr::Builtin {
                builtin: builtin.clone(),
                args: args.clone(),
            },
            TravRepr::User { module, def, args } => TravRepr::User {
                module: module.clone(),
                def: *def,
                args: args.clone(),
            },
        };
        Traversal {
            name: self.name.clone(),
            repr,
        }
    }
}

/// An ELEVATE combinator of one strategy.
type Combinator<P> = fn(Strategy<P>) -> Strategy<P>;

/// The Rust function behind a builtin.
pub(crate) type BuiltinFn<P> = dyn Fn(&[Value<P>]) -> Result<Value<P>, String> + Send + Sync;

/// A builtin: a name, the kinds of its parameters, a one-line description and
/// the function that makes its strategy.
pub(crate) struct Builtin<P: Program> {
    pub name: String,
    pub params: Vec<Kind>,
    /// The parameters' names for help texts, one per parameter ("" where unnamed).
    pub param_names: Vec<String>,
    pub doc: String,
    /// What kind of builtin it is, for help texts ("rule", "traversal", ...).
    pub group: String,
    pub run: Box<BuiltinFn<P>>,
}

impl<P: Program> Builtin<P> {
    pub(crate) fn not_a_strategy(&self, v: &Value<P>) -> String {
        format!(
            "builtin `{}` returned {} (`{v}`), but builtins must return strategies",
            self.name,
            v.kind().article()
        )
    }
}

/// The builtins a strategy file can use: ELEVATE's generic combinators (in every
/// registry) and those a language adds with [`Registry::add`], plus the normal
/// form that `;;` inserts.
pub struct Registry<P: Program> {
    builtins: Vec<Arc<Builtin<P>>>,
    index: HashMap<String, usize>,
    normal_form: Option<(String, Strategy<P>)>,
    /// The group of the builtins added next ([`Registry::set_group`]).
    group: String,
}

/// A builtin as help texts describe it ([`Registry::entries`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'r> {
    /// Its name.
    pub name: &'r str,
    /// What kind of builtin it is ("rule", "traversal", "predicate", ...).
    pub group: &'r str,
    /// Its parameters: name ("" where unnamed) and kind.
    pub params: Vec<(&'r str, Kind)>,
    /// Its one-line description (for a rule, its equation).
    pub doc: &'r str,
}

impl Entry<'_> {
    /// How a strategy file calls it: `name`, `name(n: Int, s: Strategy)`.
    pub fn signature(&self) -> String {
        if self.params.is_empty() {
            return self.name.to_string();
        }
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(n, k)| match *n {
                "" => k.to_string(),
                n => format!("{n}: {k}"),
            })
            .collect();
        format!("{}({})", self.name, params.join(", "))
    }
}

impl<P: Program> Clone for Registry<P> {
    fn clone(&self) -> Self {
        Registry {
            builtins: self.builtins.clone(),
            index: self.index.clone(),
            normal_form: self.normal_form.clone(),
            group: self.group.clone(),
        }
    }
}

impl<P: Program> Default for Registry<P> {
    fn default() -> Self {
        Registry::new()
    }
}

impl<P: Program> Registry<P> {
    /// A registry with ELEVATE's generic combinators (ICFP'20 §4.4–4.8): `id`,
    /// `fail`, `seq`, `lChoice`, `try`, `repeat`, `repeatN`, `not`, `all`, `one`,
    /// `some`, `topDown`, `bottomUp`, `allTopDown`, `allBottomUp`, `tryAll`,
    /// `normalize`. It has no normal form.
    pub fn new() -> Registry<P> {
        use Kind::Strategy as S;
        let mut r = Registry {
            builtins: Vec::new(),
            index: HashMap::new(),
            normal_form: None,
            group: "combinator".to_string(),
        };
        r.add(
            "id",
            &[],
            "always succeeds, leaving the program unchanged",
            |_| Ok(Value::Strategy(elevate::id())),
        );
        r.add("fail", &[], "never succeeds", |_| {
            Ok(Value::Strategy(elevate::fail()))
        });
        r.add_named(
            "seq",
            &[("s", S), ("t", S)],
            "`seq(s, t)` is `s ; t`: s, then t on its result",
            |a| {
                Ok(Value::Strategy(elevate::seq(
                    strategy(a, 0)?,
                    strategy(a, 1)?,
                )))
            },
        );
        r.add_named(
            "lChoice",
            &[("s", S), ("t", S)],
            "`lChoice(s, t)` is `s <+ t`: s, or t where s does not apply",
            |a| {
                Ok(Value::Strategy(elevate::lchoice(
                    strategy(a, 0)?,
                    strategy(a, 1)?,
                )))
            },
        );
        let combinators: [(&str, &str, Combinator<P>); 3] = [
            ("try", "s where it applies, otherwise id", elevate::try_),
            ("repeat", "s until it no longer applies", elevate::repeat),
            (
                "not",
                "succeeds, unchanged, exactly where s fails",
                elevate::not,
            ),
        ];
        r.add_unary(combinators);
        r.add_named(
            "repeatN",
            &[("n", Kind::Int), ("s", S)],
            "`repeatN(n, s)`: s exactly n times in sequence",
            |a| {
                let n = arg(a, 0)?.as_int()?;
                let n = usize::try_from(n)
                    .map_err(|_| format!("repeatN needs a count of at least 0, not {n}"))?;
                Ok(Value::Strategy(elevate::repeat_n(n, strategy(a, 1)?)))
            },
        );
        r.set_group("traversal");
        let traversals: [(&str, &str, Combinator<P>); 9] = [
            ("all", "s on every immediate sub-program", elevate::all),
            (
                "one",
                "s on the first immediate sub-program where it applies",
                elevate::one,
            ),
            (
                "some",
                "s on every immediate sub-program where it applies, at least one",
                elevate::some,
            ),
            (
                "topDown",
                "s at the first sub-program, top-down, where it applies",
                elevate::top_down,
            ),
            (
                "bottomUp",
                "s at the first sub-program, bottom-up, where it applies",
                elevate::bottom_up,
            ),
            (
                "allTopDown",
                "s at every sub-program, top-down; fails if it fails anywhere",
                elevate::all_top_down,
            ),
            (
                "allBottomUp",
                "s at every sub-program, bottom-up; fails if it fails anywhere",
                elevate::all_bottom_up,
            ),
            (
                "tryAll",
                "s wherever it applies, bottom-up; never fails",
                elevate::try_all,
            ),
            (
                "normalize",
                "s anywhere, repeatedly, until it applies nowhere",
                elevate::normalize,
            ),
        ];
        r.add_unary(traversals);
        r.set_group("builtin");
        r
    }

    /// Adds builtins of one strategy parameter `s` made by ELEVATE combinators.
    fn add_unary<const N: usize>(&mut self, list: [(&str, &str, Combinator<P>); N]) {
        for (name, doc, make) in list {
            self.add_named(name, &[("s", Kind::Strategy)], doc, move |a| {
                Ok(Value::Strategy(make(strategy(a, 0)?)))
            });
        }
    }

    /// Sets the group of the builtins added next, what kind of builtin they are
    /// for help texts ("rule", "traversal", "predicate"); a new registry's
    /// builtins are "combinator"s and "traversal"s.
    pub fn set_group(&mut self, group: &str) {
        self.group = group.to_string();
    }

    /// Adds a builtin called `name` with parameters of the given kinds, a one-line
    /// description `doc` for help texts, and the function that makes its value.
    ///
    /// The function is called only with as many arguments as there are
    /// parameters, each of the declared kind; it must return a
    /// [`Value::Strategy`], or a message (such as "tile needs positive sizes")
    /// that is reported at the call in the strategy file. A builtin whose last
    /// parameter is a strategy is also a traversal when applied to all but that
    /// argument.
    ///
    /// # Panics
    /// If `name` is already registered or is not an identifier: registering is
    /// done by the language crate, not by users, so this is a programming error.
    pub fn add(
        &mut self,
        name: &str,
        params: &[Kind],
        doc: &str,
        f: impl Fn(&[Value<P>]) -> Result<Value<P>, String> + Send + Sync + 'static,
    ) {
        let unnamed: Vec<(&str, Kind)> = params.iter().map(|k| ("", *k)).collect();
        self.add_named(name, &unnamed, doc, f);
    }

    /// [`Registry::add`] with the parameters' names, which help texts show
    /// (`repeatN(n: Int, s: Strategy)`).
    ///
    /// # Panics
    /// As [`Registry::add`].
    pub fn add_named(
        &mut self,
        name: &str,
        params: &[(&str, Kind)],
        doc: &str,
        f: impl Fn(&[Value<P>]) -> Result<Value<P>, String> + Send + Sync + 'static,
    ) {
        assert!(
            is_identifier(name),
            "elv: builtin name `{name}` is not an identifier"
        );
        assert!(
            !self.index.contains_key(name),
            "elv: builtin `{name}` is registered twice"
        );
        self.index.insert(name.to_string(), self.builtins.len());
        self.builtins.push(Arc::new(Builtin {
            name: name.to_string(),
            params: params.iter().map(|p| p.1).collect(),
            param_names: params.iter().map(|p| p.0.to_string()).collect(),
            doc: doc.to_string(),
            group: self.group.clone(),
            run: Box::new(f),
        }));
    }

    /// Sets the normal form that `s ;; t` inserts between `s` and `t` (for RISE:
    /// DFNF); `name` is how messages refer to it.
    ///
    /// # Panics
    /// If a normal form is already set.
    pub fn set_normal_form(&mut self, name: &str, nf: Strategy<P>) {
        assert!(
            self.normal_form.is_none(),
            "elv: a normal form is registered twice (`{name}`)"
        );
        self.normal_form = Some((name.to_string(), nf));
    }

    /// The normal form `;;` inserts, with its name, if one is set.
    pub fn normal_form(&self) -> Option<(&str, &Strategy<P>)> {
        self.normal_form.as_ref().map(|(n, s)| (n.as_str(), s))
    }

    /// The builtins in the order they were added, for help texts: name,
    /// parameter kinds and the one-line description.
    pub fn names(&self) -> impl Iterator<Item = (&str, &[Kind], &str)> + '_ {
        self.builtins
            .iter()
            .map(|b| (b.name.as_str(), b.params.as_slice(), b.doc.as_str()))
    }

    /// The builtins in the order they were added, with their groups and
    /// parameter names, for help texts (`shine rules`).
    pub fn entries(&self) -> impl Iterator<Item = Entry<'_>> + '_ {
        self.builtins.iter().map(|b| Entry {
            name: &b.name,
            group: &b.group,
            params: b
                .param_names
                .iter()
                .map(String::as_str)
                .zip(b.params.iter().copied())
                .collect(),
            doc: &b.doc,
        })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Builtin<P>>> {
        self.index.get(name).and_then(|&i| self.builtins.get(i))
    }
}

fn arg<P: Program>(a: &[Value<P>], i: usize) -> Result<&Value<P>, String> {
    a.get(i)
        .ok_or_else(|| format!("missing argument {}", i + 1))
}

fn strategy<P: Program>(a: &[Value<P>], i: usize) -> Result<Strategy<P>, String> {
    arg(a, i)?.as_strategy().cloned()
}

/// Whether `name` is written like an identifier of the strategy language.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "def"
}
