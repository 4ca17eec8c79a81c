//! Candidates as ordinary ELEVATE strategies (`.elv` text).
//!
//! A candidate is written as a definition over the user's strategy file: the
//! middle strategy (`MID`, default `DFNF`), then the numeric choices (splits of
//! chosen maps, [`crate::tuning`]) and `DFNF`, then one rewrite per map at its
//! location (`toMapGlobal(0) @ function @ function @ body @ ...`), then `lowerToC`
//! (the maps left become `mapSeq`). The text is loaded with the `elv` crate and
//! applied with `elevate`, like any strategy file.

use crate::constraints::{GLOBAL, LOCAL, SEQ, WORK_GROUP};
use crate::tree::{MapTree, Step};
use rise::Expr;

/// Which parallel primitives a target names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// OpenCL names: `toMapGlobal`, `toMapWorkGroup`, `toMapLocal`.
    OpenCl,
    /// CUDA names for the same levels: `toMapGlobal`, `toMapBlock`, `toMapThread`.
    Cuda,
    /// OpenMP: `parallel` (for a map choice 30, i.e. the one parallel level).
    OpenMp,
}

/// A location as traversals: `s @ step_n @ ... @ step_1` (`@` is left-associative,
/// so the first step from the root is written last).
pub fn location(path: &[Step]) -> String {
    path.iter()
        .rev()
        .map(|s| format!(" @ {}", s.name()))
        .collect()
}

/// The rewrite of one map's choice, or `None` for a sequential map.
pub fn map_rewrite(choice: i32, flavor: Flavor) -> Result<Option<String>, String> {
    let d = choice % 10;
    let (wg, local) = match flavor {
        Flavor::Cuda => ("toMapBlock", "toMapThread"),
        _ => ("toMapWorkGroup", "toMapLocal"),
    };
    Ok(match (choice - d, flavor) {
        (SEQ, _) if choice == SEQ => None,
        (GLOBAL, Flavor::OpenMp) if d == 0 => Some("parallel".to_string()),
        (_, Flavor::OpenMp) => return Err(format!("choice {choice} has no OpenMP form")),
        (GLOBAL, _) => Some(format!("toMapGlobal({d})")),
        (WORK_GROUP, _) => Some(format!("{wg}({d})")),
        (LOCAL, _) => Some(format!("{local}({d})")),
        _ => {
            return Err(format!(
                "choice {choice} is not supported (map fusion is not available)"
            ))
        }
    })
}

/// The level a map's choice gives it, as the target's low-level map is named: `mapSeq`,
/// `mapPar` (OpenMP), `mapGlobal(d)`, `mapWorkGroup(d)`/`mapBlock(d)`,
/// `mapLocal(d)`/`mapThread(d)`.
pub fn level_name(choice: i32, flavor: Flavor) -> Result<String, String> {
    Ok(match map_rewrite(choice, flavor)? {
        None => "mapSeq".to_string(),
        Some(rule) if rule == "parallel" => "mapPar".to_string(),
        Some(rule) => match rule.strip_prefix("toM") {
            Some(rest) => format!("m{rest}"),
            None => rule,
        },
    })
}

/// A mapping in words: every map as its level and its number of iterations, nested as the
/// loops are (`mapPar[m/4] › mapSeq[4] › mapSeq[n]`; sibling loops in braces, `{a; b}`).
pub fn in_words(tree: &MapTree, choices: &[i32], flavor: Flavor) -> Result<String, String> {
    let node = |i: usize| -> Result<String, String> {
        let level = level_name(choices[i], flavor)?;
        Ok(match &tree.maps[i].count {
            Some(n) => format!("{level}[{n}]"),
            None => level,
        })
    };
    fn nest(
        i: Option<usize>,
        tree: &MapTree,
        node: &dyn Fn(usize) -> Result<String, String>,
    ) -> Result<String, String> {
        let kids: Vec<usize> = (0..tree.maps.len())
            .filter(|&k| tree.maps[k].parent == i)
            .collect();
        let inner: Vec<String> = kids
            .iter()
            .map(|&k| nest(Some(k), tree, node))
            .collect::<Result<_, _>>()?;
        let inner = match inner.len() {
            0 => String::new(),
            1 => inner[0].clone(),
            _ => format!("{{{}}}", inner.join("; ")),
        };
        Ok(match i {
            None => inner,
            Some(i) if inner.is_empty() => node(i)?,
            Some(i) => format!("{} › {inner}", node(i)?),
        })
    }
    if choices.len() != tree.maps.len() {
        return Err(format!(
            "the mapping has {} choices, the program {} maps",
            choices.len(),
            tree.maps.len()
        ));
    }
    nest(None, tree, &node)
}

/// The mapping part of a strategy: one rewrite per map (innermost first), joined by `;`.
pub fn mapping_steps(
    paths: &[Vec<Step>],
    choices: &[i32],
    flavor: Flavor,
) -> Result<Vec<String>, String> {
    let mut steps = Vec::new();
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(paths[i].len()));
    for i in order {
        if let Some(r) = map_rewrite(choices[i], flavor)? {
            steps.push(format!("{r}{}", location(&paths[i])));
        }
    }
    Ok(steps)
}

/// The text of `def NAME = parts[0] ; parts[1] ; ...`, one part per line.
pub fn definition(name: &str, parts: &[String]) -> String {
    format!("def {name} =\n  {}\n", parts.join(" ;\n  "))
}

/// A strategy file: the user's text (if any) and the generated definitions.
#[derive(Clone, Debug, Default)]
pub struct StrategyFile {
    /// The user's `.elv` text (definitions the middle strategy refers to).
    pub user: String,
}

impl StrategyFile {
    /// The file with `defs` appended.
    pub fn with(&self, defs: &str) -> String {
        if self.user.is_empty() {
            defs.to_string()
        } else {
            format!(
                "{}\n\n// generated by shine explore\n{defs}",
                self.user.trim_end()
            )
        }
    }

    /// Loads `self.with(defs)` and applies its definition `name` to `body`.
    pub fn apply(&self, defs: &str, name: &str, body: &Expr, budget: u64) -> Result<Expr, String> {
        let text = self.with(defs);
        apply_text(&text, name, body, budget)
    }
}

/// Parses `text` as a strategy file and applies its definition `name` to `body`, through the
/// library facade ([`shine::rewrite_body`]).
pub fn apply_text(text: &str, name: &str, body: &Expr, budget: u64) -> Result<Expr, String> {
    let strategy = shine::StrategySource {
        file: shine::SourceFile::new("candidate.elv", text),
        apply: name.to_string(),
    };
    let options = shine::RewriteOptions {
        budget,
        trace: false,
    };
    shine::rewrite_body(&strategy, body, &options)
        .map(|r| r.body)
        .map_err(|e| e.to_string())
}
