//! The `shine` command-line tool: the subcommands over the `shine` library facade.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod bench_cmd;
mod bench_row;
mod cli;
mod compile_cmd;
mod explore_cmd;
mod explore_tune;
mod fsmooth_cmd;
mod rewrite_cmd;
mod rules_cmd;

/// shine: a compiler for RISE (what to compute) driven by ELEVATE strategies (how to optimize).
#[derive(Parser, Debug)]
#[command(name = "shine", version, about, long_about = None)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and type-check a RISE program; print one line per definition: `name : type`.
    Check(cli::CheckArgs),
    /// Evaluate a definition with the reference interpreter on `.npy` inputs.
    Eval(cli::EvalArgs),
    /// Rewrite a definition with an ELEVATE strategy (.elv) and print the result.
    Rewrite(rewrite_cmd::RewriteArgs),
    /// Compile a definition (lowered by a strategy, or the target's default schedule) to C,
    /// OpenMP, OpenCL or CUDA and print the code.
    Compile(compile_cmd::CompileArgs),
    /// Compile, run on `.npy` or random inputs, verify against the interpreter, time.
    Run(compile_cmd::RunArgs),
    /// List every rule, traversal, predicate, location and scheduling strategy of `.elv`
    /// files, with its parameters and equation or doc line; PATTERN filters by name.
    Rules(rules_cmd::RulesArgs),
    /// List the built-in schedules and the default schedule of each target; --show prints them.
    Strategies(cli::StrategiesArgs),
    /// Search parallel mappings and tuning parameters (CC'22 constraints); write the best strategy.
    Explore(Box<explore_cmd::ExploreArgs>),
    /// F-smooth (thesis §5.7): simplify with ELEVATE strategies, differentiate (forward mode).
    Fsmooth {
        #[command(subcommand)]
        cmd: fsmooth_cmd::FsmoothCommand,
    },
    /// Benchmarks: shine's generated code against the anchors, interleaved in one run.
    Bench {
        #[command(subcommand)]
        cmd: bench_cmd::BenchCommand,
    },
}

/// Writes a line on stderr (a closed stderr is no reason to panic).
fn writeln_stderr(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    writeln!(std::io::stderr().lock(), "{text}")
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(e) = runtime::install_signal_cleanup() {
        let _ = writeln_stderr(&format!("warning: {e}; temporary files may stay on Ctrl-C"));
    }
    // Every pass over a program recurses on its depth (thousands of nested applications
    // once definitions are inlined): the command runs with a deep stack (grown on demand).
    let command = args.command;
    let result = deep::run_caught("the command", move || match command {
        Command::Check(a) => cli::check(&a),
        Command::Eval(a) => cli::eval(&a),
        Command::Rewrite(a) => rewrite_cmd::rewrite(&a),
        Command::Compile(a) => compile_cmd::compile(&a),
        Command::Run(a) => compile_cmd::run(&a),
        Command::Rules(a) => rules_cmd::rules(&a),
        Command::Strategies(a) => cli::strategies(&a),
        Command::Explore(a) => explore_cmd::explore(&a),
        Command::Fsmooth { cmd } => fsmooth_cmd::run(&cmd).map_err(cli::CliError),
        Command::Bench { cmd } => bench_cmd::run(&cmd),
    })
    .map_err(cli::CliError)
    .and_then(|r| r);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            use std::io::Write;
            let text = err.to_string();
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            // A closed stderr is no reason to panic; the exit code still tells.
            let _ = write!(std::io::stderr().lock(), "{text}{newline}");
            ExitCode::FAILURE
        }
    }
}
