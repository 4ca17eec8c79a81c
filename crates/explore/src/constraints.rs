//! Choice variables and the constraint families of CC'22 §4.3–4.5.
//!
//! Every concrete map gets a variable with Table 2's encoding ([`SEQ`], [`FUSED`],
//! `10 + d` local, `20 + d` work-group, `30 + d` global in dimension `d`). A
//! constraint is a conjunction of clauses; a clause a disjunction of literals
//! `x ∈ S`, which is how the paper's predicates over `enc / 10` and `enc % 10`
//! read on the finite domain (`enc(m)/10 < 1` is `m ∈ {0, 1}`). The same clauses
//! are evaluated on raw assignments (the random search) and given to the solver.

use crate::tree::MapTree;
use std::fmt;

/// `mapSeq`.
pub const SEQ: i32 = 0;
/// Fused with the outer map (not offered: shine has no map-fusion rule yet).
pub const FUSED: i32 = 1;
/// `mapLocal(d)` is `LOCAL + d`.
pub const LOCAL: i32 = 10;
/// `mapWorkGroup(d)` is `WORK_GROUP + d`.
pub const WORK_GROUP: i32 = 20;
/// `mapGlobal(d)` is `GLOBAL + d`.
pub const GLOBAL: i32 = 30;

/// The constraint families (the paper's numbering; [`Family::Target`] is shine's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// (1) maps that access private memory are not parallel.
    PrivateMemory,
    /// (2) maps that access local memory are local or sequential, inside a work-group map.
    LocalMemory,
    /// (3) nested maps are not parallel in the same level and dimension.
    DuplicateScheduling,
    /// (4) every local dimension of a chain is also a work-group dimension of it.
    LocalDimensionality,
    /// (5) every work-group dimension of a chain is also a local dimension of it.
    WorkGroupDimensionality,
    /// (6) no work-group map nested in a local map of the same dimension.
    LocalHierarchy,
    /// (7) a level and dimension used in one chain is used in every chain.
    ExhaustiveIndexing,
    /// (8) heuristic: perfectly nested maps are not both sequential.
    SequentialFusion,
    /// shine's code generator: a kernel mixes no `mapGlobal` with work-group or local
    /// maps, nests no work-group map in a thread map of any dimension, and no
    /// work-group or global map in a sequential map (work-groups cannot synchronize).
    Target,
    /// The device's limits: threads per work-group ([`crate::tuning`]).
    Resources,
}

impl Family {
    /// All families, in order.
    pub const ALL: [Family; 10] = [
        Family::PrivateMemory,
        Family::LocalMemory,
        Family::DuplicateScheduling,
        Family::LocalDimensionality,
        Family::WorkGroupDimensionality,
        Family::LocalHierarchy,
        Family::ExhaustiveIndexing,
        Family::SequentialFusion,
        Family::Target,
        Family::Resources,
    ];

    /// The paper's rule number (9 for shine's target checks, 10 for resources).
    pub fn number(self) -> u8 {
        self as u8 + 1
    }

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Family::PrivateMemory => "private memory",
            Family::LocalMemory => "local memory",
            Family::DuplicateScheduling => "duplicate scheduling",
            Family::LocalDimensionality => "local dimensionality",
            Family::WorkGroupDimensionality => "work-group dimensionality",
            Family::LocalHierarchy => "local indexing hierarchy",
            Family::ExhaustiveIndexing => "exhaustive indexing",
            Family::SequentialFusion => "sequential fusion",
            Family::Target => "target (shine)",
            Family::Resources => "work-group size",
        }
    }
}

/// A literal: the variable of map `var` takes one of `values`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lit {
    /// The map's index in the tree.
    pub var: usize,
    /// The allowed values.
    pub values: Vec<i32>,
}

/// A disjunction of literals.
pub type Clause = Vec<Lit>;

/// One generated constraint: a conjunction of clauses, and the paper-style text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    /// The production rule that generated it.
    pub family: Family,
    /// Its predicate in the paper's notation, over the maps' names.
    pub text: String,
    /// The clauses.
    pub clauses: Vec<Clause>,
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}) {}", self.family.number(), self.text)
    }
}

/// Which families to generate and the values a variable may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The families generated.
    pub families: Vec<Family>,
    /// Parallel dimensions offered (1 to 3).
    pub dims: i32,
    /// Offer work-group and local maps.
    pub work_groups: bool,
    /// Offer global maps.
    pub global: bool,
}

impl Options {
    /// The paper's six families (1–7), without the heuristic.
    pub fn paper() -> Options {
        Options {
            families: Family::ALL[..7].to_vec(),
            dims: 3,
            work_groups: true,
            global: true,
        }
    }

    /// What shine's GPU code generator accepts: the paper's families without 4 and 5,
    /// and shine's target family. shine runs a `mapLocal` with no `mapWorkGroup` as
    /// one work-group, and a `mapWorkGroup` with no `mapLocal` with one work-item per
    /// group, both correctly (checked by compiling and verifying every assignment),
    /// so the paper's dimensionality rules would exclude working mappings.
    pub fn shine() -> Options {
        let mut o = Options::paper();
        o.families.retain(|f| {
            !matches!(
                f,
                Family::LocalDimensionality | Family::WorkGroupDimensionality
            )
        });
        o.families.push(Family::Target);
        o
    }

    /// The domain of every variable.
    pub fn domain(&self) -> Vec<i32> {
        let mut d = vec![SEQ];
        let dims = 0..self.dims.clamp(1, 3);
        if self.work_groups {
            d.extend(dims.clone().map(|g| LOCAL + g));
            d.extend(dims.clone().map(|g| WORK_GROUP + g));
        }
        if self.global {
            d.extend(dims.map(|g| GLOBAL + g));
        }
        d
    }
}

/// The text of `enc(m)`.
fn enc(tree: &MapTree, m: usize) -> String {
    format!("enc({})", tree.maps[m].name)
}

fn lit(var: usize, values: impl IntoIterator<Item = i32>) -> Lit {
    Lit {
        var,
        values: values.into_iter().collect(),
    }
}

/// The values of `domain` other than `v`.
fn not(domain: &[i32], v: &[i32]) -> Vec<i32> {
    domain.iter().copied().filter(|x| !v.contains(x)).collect()
}

fn level(base: i32, dims: i32) -> Vec<i32> {
    (0..dims).map(|g| base + g).collect()
}

/// Generates the constraints of `opts.families` for the tree.
pub fn generate(tree: &MapTree, opts: &Options) -> Vec<Constraint> {
    let d = opts.domain();
    let dims = opts.dims.clamp(1, 3);
    let n = tree.maps.len();
    let parallel: Vec<i32> = d.iter().copied().filter(|v| *v >= LOCAL).collect();
    let mut out = Vec::new();
    let mut push = |family: Family, text: String, clauses: Vec<Clause>| {
        if opts.families.contains(&family) {
            out.push(Constraint {
                family,
                text,
                clauses,
            });
        }
    };
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|m| tree.nested(m).into_iter().map(move |i| (m, i)))
        .collect();

    // (1) Private memory scoping.
    for m in (0..n).filter(|&m| tree.maps[m].uses_private) {
        push(
            Family::PrivateMemory,
            format!("{}/10 < 1", enc(tree, m)),
            vec![vec![lit(m, [SEQ, FUSED])]],
        );
    }
    // (2) Local memory scoping, per chain through m.
    for m in (0..n).filter(|&m| tree.maps[m].uses_local) {
        for chain in tree.chains.iter().filter(|c| c.contains(&m)) {
            let outer: Vec<usize> = tree
                .outer(m)
                .into_iter()
                .filter(|o| chain.contains(o))
                .collect();
            let mut clauses = vec![vec![lit(m, [SEQ, FUSED, LOCAL, LOCAL + 1, LOCAL + 2])]];
            clauses.push(
                outer
                    .iter()
                    .map(|&o| lit(o, level(WORK_GROUP, dims)))
                    .collect(),
            );
            for g in 0..dims {
                for &c in chain.iter().filter(|c| !outer.contains(c)) {
                    let mut cl = vec![lit(c, not(&d, &[WORK_GROUP + g]))];
                    cl.extend(outer.iter().map(|&o| lit(o, [WORK_GROUP + g])));
                    clauses.push(cl);
                }
            }
            let names: Vec<String> = outer.iter().map(|&o| enc(tree, o)).collect();
            push(
                Family::LocalMemory,
                format!(
                    "{}/10 < 2 ∧ ∀w ∈ WrgDimsUsedIn(chain): ∨ [{}] = 20 + w",
                    enc(tree, m),
                    names.join(", ")
                ),
                clauses,
            );
        }
    }
    // (3) Duplicate scheduling.
    for &(m, i) in &pairs {
        let clauses = parallel
            .iter()
            .map(|&v| vec![lit(m, not(&d, &[v])), lit(i, not(&d, &[v]))])
            .collect();
        push(
            Family::DuplicateScheduling,
            format!(
                "{}/10 < 1 ∨ {} ≠ {}",
                enc(tree, m),
                enc(tree, m),
                enc(tree, i)
            ),
            clauses,
        );
    }
    // (4), (5) Local and work-group dimensionality, per chain.
    let implies_in_chain = |chain: &[usize], from: i32, to: i32| -> Vec<Clause> {
        let mut clauses = Vec::new();
        for g in 0..dims {
            for &c in chain {
                let mut cl = vec![lit(c, not(&d, &[from + g]))];
                cl.extend(chain.iter().map(|&c2| lit(c2, [to + g])));
                clauses.push(cl);
            }
        }
        clauses
    };
    if opts.work_groups {
        for chain in &tree.chains {
            let names: Vec<&str> = chain.iter().map(|&c| &*tree.maps[c].name).collect();
            push(
                Family::LocalDimensionality,
                format!(
                    "∀l ∈ LclDimsUsedIn({0}): ∨ enc[{0}] = 20 + l",
                    names.join(", ")
                ),
                implies_in_chain(chain, LOCAL, WORK_GROUP),
            );
            push(
                Family::WorkGroupDimensionality,
                format!(
                    "∀w ∈ WrgDimsUsedIn({0}): ∨ enc[{0}] = 10 + w",
                    names.join(", ")
                ),
                implies_in_chain(chain, WORK_GROUP, LOCAL),
            );
        }
        // (6) Local indexing hierarchy.
        for &(m, i) in &pairs {
            let clauses = (0..dims)
                .map(|g| {
                    vec![
                        lit(m, not(&d, &[LOCAL + g])),
                        lit(i, not(&d, &[WORK_GROUP + g])),
                    ]
                })
                .collect();
            push(
                Family::LocalHierarchy,
                format!(
                    "¬({0}/10 = 1 ∧ {1}/10 = 2 ∧ {1}%10 = {0}%10)",
                    enc(tree, m),
                    enc(tree, i)
                ),
                clauses,
            );
        }
    }
    // (7) Exhaustive indexing, for every ordered pair of chains and every level.
    let mut bases = Vec::new();
    if opts.work_groups {
        bases.extend([LOCAL, WORK_GROUP]);
    }
    if opts.global {
        bases.push(GLOBAL);
    }
    for (ai, a) in tree.chains.iter().enumerate() {
        for (bi, b) in tree.chains.iter().enumerate() {
            if ai == bi || tree.root(a[0]) != tree.root(b[0]) {
                continue;
            }
            let mut clauses = Vec::new();
            for &base in &bases {
                for g in 0..dims {
                    for &m in a {
                        let mut cl = vec![lit(m, not(&d, &[base + g]))];
                        cl.extend(b.iter().map(|&m2| lit(m2, [base + g])));
                        clauses.push(cl);
                    }
                }
            }
            push(
                Family::ExhaustiveIndexing,
                format!("chain {ai} → chain {bi}: ∀ dims used in {ai}: used in {bi}"),
                clauses,
            );
        }
    }
    // (8) Sequential fusion heuristic.
    for m in (0..n).filter(|&m| tree.maps[m].perfectly_nested) {
        if let Some(p) = tree.maps[m].parent {
            push(
                Family::SequentialFusion,
                format!("¬({} = 0 ∧ {} = 0)", enc(tree, p), enc(tree, m)),
                vec![vec![lit(p, not(&d, &[SEQ])), lit(m, not(&d, &[SEQ]))]],
            );
        }
    }
    // shine: no global maps with work-group or local maps in one kernel; no
    // work-group map inside a thread map of any dimension.
    if opts.work_groups && opts.global {
        let threads: Vec<i32> = level(LOCAL, dims)
            .into_iter()
            .chain(level(GLOBAL, dims))
            .collect();
        for &(m, i) in &pairs {
            push(
                Family::Target,
                format!(
                    "¬({0}/10 ∈ {{1, 3}} ∧ {1}/10 = 2)",
                    enc(tree, m),
                    enc(tree, i)
                ),
                vec![vec![
                    lit(m, not(&d, &threads)),
                    lit(i, not(&d, &level(WORK_GROUP, dims))),
                ]],
            );
        }
        // A kernel's work-groups cannot synchronize: no sequential map around a
        // work-group or global map in it (shine's barrier check refuses them all).
        let grid: Vec<i32> = level(WORK_GROUP, dims)
            .into_iter()
            .chain(level(GLOBAL, dims))
            .collect();
        for &(m, i) in &pairs {
            push(
                Family::Target,
                format!("¬({0} = 0 ∧ {1}/10 ∈ {{2, 3}})", enc(tree, m), enc(tree, i)),
                vec![vec![lit(m, not(&d, &[SEQ])), lit(i, not(&d, &grid))]],
            );
        }
        let groups: Vec<i32> = level(LOCAL, dims)
            .into_iter()
            .chain(level(WORK_GROUP, dims))
            .collect();
        for x in 0..n {
            for y in 0..n {
                if x != y && tree.root(x) == tree.root(y) {
                    push(
                        Family::Target,
                        format!(
                            "¬({}/10 = 3 ∧ {}/10 ∈ {{1, 2}})",
                            enc(tree, x),
                            enc(tree, y)
                        ),
                        vec![vec![
                            lit(x, not(&d, &level(GLOBAL, dims))),
                            lit(y, not(&d, &groups)),
                        ]],
                    );
                }
            }
        }
    }
    out
}

/// Whether an assignment (one value per map) satisfies all constraints.
pub fn satisfies(constraints: &[Constraint], assignment: &[i32]) -> bool {
    constraints.iter().all(|c| {
        c.clauses.iter().all(|cl| {
            cl.iter()
                .any(|l| assignment.get(l.var).is_some_and(|v| l.values.contains(v)))
        })
    })
}

/// The number of constraints per family, in family order.
pub fn count_by_family(constraints: &[Constraint]) -> Vec<(Family, usize)> {
    Family::ALL
        .iter()
        .map(|&f| (f, constraints.iter().filter(|c| c.family == f).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}
