//! The `fb` command's commands: their arguments (clap), what they print,
//! and their exit codes, over `fb_run`, which does the work. A library so
//! that the integration tests can reach a command's parts; only this
//! crate and fb-py print, the library crates below them never do.

pub mod convert;
pub mod evaluate;
pub mod export;
pub mod gen;
pub mod index;
pub mod inspect;
pub mod join;
pub mod joinargs;
pub mod progress;
pub mod repair;
pub mod report;
pub mod sample;
pub mod say;
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
