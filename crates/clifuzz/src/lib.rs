//! Fuzzing of the `shine` command line (issue 18): random invocations of every subcommand
//! with random flags, mutated example programs and strategies, and valid and corrupted
//! `.npy` files, each run as a child process under a timeout and a memory limit and
//! classified against the command-line contract (`shine-clifuzz`, see the README).

pub mod case;
pub mod cc_cache;
pub mod corpus;
pub mod exec;
pub mod gen;
pub mod mutate;
pub mod npy;
pub mod report;
pub mod rng;
