//! Runs over joined logs end to end: what the `fb` command and the
//! `vwlogs` Python package both stand on. The pipeline crates below it
//! (fb-format, fb-join, fb-arrow, fb-writer) work on bytes and events;
//! this crate works on files and runs:
//!
//! - inputs: paths, folders, standard input, what a file's first bytes
//!   say ([`input`]); memory maps and when they are safe ([`mapped`]);
//! - outputs: files put in place only when complete, compressed by their
//!   extension, never replacing what they should not ([`output`],
//!   [`compress`], [`interrupt`]);
//! - plain options ([`options`]: no command-line parser in them);
//! - the one driver that feeds inputs to a pipeline ([`drive`]), what it
//!   reports ([`report`]), a command's run from inputs to its result
//!   ([`job`]), indexes beside logs ([`sidecar`]), lookups
//!   through them ([`lookup`]);
//! - statistics and estimates ([`stats`], [`estimate`]), off-policy
//!   evaluation ([`evaluate`]), and the health report page built from the
//!   same sums ([`health`]).
//!
//! It never prints: what a run has to say goes to an
//! [`report::Observer`], and errors are [`Error`]s.
//!
//! ```
//! let inputs = fb_run::input::resolve(&[concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/cb_simple.log"
//! )
//! .into()])
//! .unwrap();
//! assert_eq!(inputs.len(), 1);
//! ```

mod ahead;
mod columnar;
pub mod compress;
pub mod drive;
pub mod error;
pub mod estimate;
pub mod evaluate;
pub mod gen;
pub mod health;
mod in_order;
pub mod input;
pub mod inspect;
pub mod interrupt;
pub mod job;
pub mod join;
pub mod lookup;
pub mod mapped;
pub mod options;
pub mod output;
pub mod repair;
pub mod report;
pub mod sample;
pub mod sidecar;
pub mod split;
pub mod stats;
pub mod validate;
pub mod window;

pub use error::Error;

/// `1 input`, `2 inputs`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
