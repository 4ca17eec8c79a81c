//! Shrinking a failing case: fewer schedule steps, smaller sizes, and sub-terms replaced by
//! smaller ones of the same type (a descendant whose variables are in scope, or a literal),
//! greedily, as long as the failure stays of the same kind.

use crate::ast::Node;
use crate::case::Case;
use crate::sched::Target;
use crate::ty::Ty;

/// Shrinks `case` (which must carry its generated tree) for `target` while `fails` holds,
/// trying at most `budget` candidates.
pub fn shrink(
    case: &Case,
    target: Target,
    budget: usize,
    fails: &mut dyn FnMut(&Case) -> bool,
) -> Case {
    let Some(def) = case.def.clone() else {
        return case.clone();
    };
    let mut best = case.clone();
    let mut tries = 0;
    let mut improved = true;
    while improved && tries < budget {
        improved = false;
        for cand in candidates(&best, &def_of(&best), target) {
            if tries >= budget {
                break;
            }
            tries += 1;
            if fails(&cand) {
                best = cand;
                improved = true;
                break;
            }
        }
    }
    let _ = def;
    best
}

fn def_of(c: &Case) -> crate::gen::Def {
    c.def.clone().expect("shrinking needs the generated tree")
}

fn rebuild(
    c: &Case,
    def: crate::gen::Def,
    vals: &[i64],
    steps: Vec<String>,
    target: Target,
) -> Case {
    Case::from_def(def, vals, c.input_seed, vec![(target, steps)], &c.name)
}

fn candidates(c: &Case, def: &crate::gen::Def, target: Target) -> Vec<Case> {
    let steps = c.steps_for(target).to_vec();
    let vals = c.values();
    let mut out = Vec::new();
    for i in 0..steps.len() {
        let mut s = steps.clone();
        s.remove(i);
        out.push(rebuild(c, def.clone(), &vals, s, target));
    }
    for v in 0..vals.len() {
        for smaller in [1, 2, 3, vals[v] / 2, vals[v] - 1] {
            if smaller >= 1 && smaller < vals[v] {
                let mut w = vals;
                w[v] = smaller;
                out.push(rebuild(c, def.clone(), &w, steps.clone(), target));
            }
        }
    }
    for (path, scope) in def.body.paths() {
        let node = def.body.at(&path);
        let mut subs: Vec<Node> = Vec::new();
        if let Ty::S(s) = &node.ty {
            if node.kids.len() + node.uses.len() > 0 {
                subs.push(Node::leaf(node.ty.clone(), s.literal(1), vec![]));
            }
        }
        for (p2, _) in node.paths().into_iter().skip(1) {
            let d = node.at(&p2);
            if d.ty == node.ty
                && d.free()
                    .iter()
                    .all(|v| scope.contains(v) || is_input(def, v))
            {
                subs.push(d.clone());
            }
        }
        for s in subs.into_iter().take(6) {
            let mut d = def.clone();
            d.body = def.body.replace(&path, s);
            out.push(rebuild(c, d, &vals, steps.clone(), target));
        }
    }
    out
}

fn is_input(def: &crate::gen::Def, v: &str) -> bool {
    def.inputs.iter().any(|(n, _)| n == v)
}
