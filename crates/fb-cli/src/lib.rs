//! The `fb` command's commands, as a library: the `fb` binary parses its
//! arguments and runs them, and the `vwlogs` Python package (fb-py)
//! shares their input handling, options and statistics. Only this crate
//! and fb-py print; the library crates below them never do.
//!
//! ```
//! let inputs = fb_cli::input::resolve(&[concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/cb_simple.log"
//! )
//! .into()])
//! .unwrap();
//! assert_eq!(inputs.len(), 1);
//! ```
// stats.rs, sample.rs and mapped.rs index by hand, which the workspace
// lints deny: allowed here until they move to a library and are checked.
#![allow(clippy::indexing_slicing)]

pub mod compress;
pub mod convert;
pub mod error;
pub mod estimate;
pub mod export;
pub mod gen;
pub mod index;
pub mod input;
pub mod inspect;
pub mod interrupt;
pub mod join;
pub mod joinargs;
pub mod lookup;
pub mod mapped;
pub mod output;
pub mod progress;
pub mod repair;
pub mod sample;
pub mod split;
pub mod stats;
pub mod validate;

/// Flags every command takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Global {
    /// Print nothing on standard error but errors.
    #[arg(short, long, global = true, display_order = 1000)]
    pub quiet: bool,

    /// Say more: every diagnostic instead of the first few of each kind.
    #[arg(short, long, global = true, display_order = 1001, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `1 input`, `2 inputs`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
