//! The generated expression tree: RISE text templates with typed holes, so that a program
//! prints as source (for the real parser and checker) and shrinks by replacing sub-terms.

use crate::ty::Ty;
use std::collections::BTreeSet;

/// A node: a text template whose holes `$0`..`$9` are the children, the variables it binds
/// around its children, the variables its own text uses, and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The node's type.
    pub ty: Ty,
    /// The RISE text with holes `$0`..`$9`.
    pub text: String,
    /// The children, in hole order.
    pub kids: Vec<Node>,
    /// The variables bound around the children (lambda parameters).
    pub binds: Vec<String>,
    /// The variables the template itself mentions.
    pub uses: Vec<String>,
}

impl Node {
    /// A leaf.
    pub fn leaf(ty: Ty, text: impl Into<String>, uses: Vec<String>) -> Node {
        Node {
            ty,
            text: text.into(),
            kids: vec![],
            binds: vec![],
            uses,
        }
    }

    /// A node with children and no binder.
    pub fn op(ty: Ty, text: impl Into<String>, kids: Vec<Node>) -> Node {
        Node {
            ty,
            text: text.into(),
            kids,
            binds: vec![],
            uses: vec![],
        }
    }

    /// This node binding `names` around its children.
    pub fn binding(mut self, names: &[&str]) -> Node {
        self.binds = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The RISE text.
    pub fn print(&self) -> String {
        let mut out = String::new();
        let mut chars = self.text.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek().and_then(|d| d.to_digit(10))) {
                ('$', Some(i)) => {
                    chars.next();
                    out.push_str(&self.kids[i as usize].print());
                }
                _ => out.push(c),
            }
        }
        out
    }

    /// The variables free in this node.
    pub fn free(&self) -> BTreeSet<String> {
        let mut f: BTreeSet<String> = self.kids.iter().flat_map(|k| k.free()).collect();
        for b in &self.binds {
            f.remove(b);
        }
        f.extend(self.uses.iter().cloned());
        f
    }

    /// The number of nodes.
    pub fn size(&self) -> usize {
        1 + self.kids.iter().map(Node::size).sum::<usize>()
    }

    /// The node at `path` (child indices from here).
    pub fn at(&self, path: &[usize]) -> &Node {
        path.iter().fold(self, |n, &i| &n.kids[i])
    }

    /// This tree with the node at `path` replaced by `new`.
    pub fn replace(&self, path: &[usize], new: Node) -> Node {
        match path.split_first() {
            None => new,
            Some((&i, rest)) => {
                let mut n = self.clone();
                n.kids[i] = self.kids[i].replace(rest, new);
                n
            }
        }
    }

    /// Every node's path with the variables in scope there, parents before children.
    pub fn paths(&self) -> Vec<(Vec<usize>, BTreeSet<String>)> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &BTreeSet::new(), &mut out);
        out
    }

    fn collect_paths(
        &self,
        path: &mut Vec<usize>,
        scope: &BTreeSet<String>,
        out: &mut Vec<(Vec<usize>, BTreeSet<String>)>,
    ) {
        out.push((path.clone(), scope.clone()));
        let mut inner = scope.clone();
        inner.extend(self.binds.iter().cloned());
        for (i, k) in self.kids.iter().enumerate() {
            path.push(i);
            k.collect_paths(path, &inner, out);
            path.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ty::Scalar;

    #[test]
    fn printing_scopes_and_replacement() {
        let f = Ty::S(Scalar::F32);
        let x = Node::leaf(f.clone(), "x1", vec!["x1".into()]);
        let body = Node::op(f.clone(), "($0 + $1)", vec![x.clone(), x.clone()]);
        let xs = Node::leaf(f.clone(), "x0", vec!["x0".into()]);
        let map =
            Node::op(f.clone(), "($0 |> map (fun x1 => $1))", vec![xs, body]).binding(&["x1"]);
        assert_eq!(map.print(), "(x0 |> map (fun x1 => (x1 + x1)))");
        assert_eq!(map.free().into_iter().collect::<Vec<_>>(), vec!["x0"]);
        let paths = map.paths();
        assert_eq!(paths.len(), 5);
        assert!(paths[2].1.contains("x1"));
        assert_eq!(map.replace(&[1], x).print(), "(x0 |> map (fun x1 => x1))");
        assert_eq!(map.size(), 5);
    }
}
