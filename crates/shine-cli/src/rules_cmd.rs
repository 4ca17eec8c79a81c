//! `shine rules [PATTERN]`: every builtin a strategy file (`.elv`) can use, with its
//! parameters and its doc line (for a rule, its equation), grouped by kind.

use crate::cli::{emit, CliError};
use clap::Args;

/// Arguments of `shine rules`.
#[derive(Args, Debug)]
pub struct RulesArgs {
    /// Only the names that contain this text (case-insensitive).
    pub pattern: Option<String>,
    /// Print one JSON array: `name`, `kind`, `params` (`name`, `kind`), `doc`.
    #[arg(long)]
    pub json: bool,
}

/// `shine rules [PATTERN] [--json]`
pub fn rules(args: &RulesArgs) -> Result<(), CliError> {
    let registry = rewrite::library::registry();
    let wanted = args.pattern.as_deref().unwrap_or("").to_lowercase();
    let entries: Vec<elv::Entry> = registry
        .entries()
        .filter(|e| e.name.to_lowercase().contains(&wanted))
        .collect();
    if entries.is_empty() {
        return Err(no_match(args.pattern.as_deref().unwrap_or(""), &registry));
    }
    if args.json {
        emit(&as_json(&entries).to_string());
    } else {
        emit(&as_text(&entries));
    }
    Ok(())
}

/// The error for a pattern no name contains, with the closest names.
fn no_match(pattern: &str, registry: &elv::Registry<rise::Expr>) -> CliError {
    let mut message = format!("no rule, traversal or strategy name contains `{pattern}`");
    let names = registry.entries().map(|e| e.name);
    if let Some(note) = diagnostics::suggest::did_you_mean(pattern, names) {
        message.push_str(&format!("\n  note: {note}"));
    }
    CliError::from(message)
}

/// The entries by group, in the order the groups first appear: a heading per group, then
/// each entry's signature and its doc line below it.
fn as_text(entries: &[elv::Entry]) -> String {
    let mut groups: Vec<&str> = Vec::new();
    for e in entries {
        if !groups.contains(&e.group) {
            groups.push(e.group);
        }
    }
    let mut out = Vec::new();
    for group in groups {
        if !out.is_empty() {
            out.push(String::new());
        }
        out.push(format!("{}:", heading(group)));
        for e in entries.iter().filter(|e| e.group == group) {
            out.push(format!("  {}", e.signature()));
            out.push(format!("      {}", e.doc));
        }
    }
    out.join("\n")
}

/// The heading of a group: `rules`, `normal forms`, `scheduling strategies`.
fn heading(group: &str) -> String {
    match group {
        "scheduling" => "scheduling strategies".to_string(),
        group => format!("{group}s"),
    }
}

fn as_json(entries: &[elv::Entry]) -> serde_json::Value {
    let list: Vec<serde_json::Value> = entries
        .iter()
        .map(|e| {
            let params: Vec<serde_json::Value> = e
                .params
                .iter()
                .map(|(n, k)| serde_json::json!({"name": n, "kind": k.to_string()}))
                .collect();
            serde_json::json!({
                "name": e.name,
                "kind": e.group,
                "params": params,
                "doc": e.doc,
            })
        })
        .collect();
    serde_json::Value::Array(list)
}
