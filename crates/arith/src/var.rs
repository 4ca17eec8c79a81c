//! Symbolic variables.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::Nat;

/// A named symbolic variable denoting a natural number (`v >= 0`).
///
/// A variable may carry a range `lo <= v < hi` (upper bound exclusive) whose
/// bounds are themselves [`Nat`]s and may mention other variables (e.g.
/// `j in [0, i)`). The range is used by the range reasoning in
/// [`Nat::prove_lt`] and friends and by the simplification of `/` and `%`.
///
/// Equality, ordering and hashing use the **name only**: two `Var`s with the
/// same name denote the same variable, whatever ranges they carry.
#[derive(Clone, Debug)]
pub struct Var {
    name: Arc<str>,
    range: Option<(Nat, Nat)>,
}

impl Var {
    /// An unbounded natural variable: `0 <= v`.
    pub fn new(name: impl Into<Arc<str>>) -> Var {
        Var {
            name: name.into(),
            range: None,
        }
    }

    /// A variable ranging over `lo <= v < hi` (`hi` exclusive).
    pub fn with_range(name: impl Into<Arc<str>>, lo: Nat, hi: Nat) -> Var {
        Var {
            name: name.into(),
            range: Some((lo, hi)),
        }
    }

    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The range `(lo, hi)` meaning `lo <= v < hi`, if the variable has one.
    pub fn range(&self) -> Option<(&Nat, &Nat)> {
        self.range.as_ref().map(|(l, h)| (l, h))
    }
}

impl PartialEq for Var {
    fn eq(&self, o: &Var) -> bool {
        self.name == o.name
    }
}

impl Eq for Var {}

impl Hash for Var {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

impl PartialOrd for Var {
    fn partial_cmp(&self, o: &Var) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Var {
    fn cmp(&self, o: &Var) -> Ordering {
        self.name.cmp(&o.name)
    }
}

impl std::fmt::Display for Var {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}
