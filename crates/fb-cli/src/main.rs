//! `fb`: the command-line face of the toolkit. Only this crate prints.

mod convert;
mod gen;
mod inspect;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tools for Vowpal Wabbit joined binary logs (schema v2).
#[derive(Debug, Parser)]
#[command(name = "fb", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert joined logs to DSJSON (one line per joined event).
    #[command(
        after_help = "Examples:\n  fb convert tests/data/valid_joined_logs/cb_simple.log\n  \
        fb convert --compat reference --multistep \
        tests/data/valid_joined_logs/multistep_2_episodes.fb -o out.dsjson"
    )]
    Convert(convert::Args),
    /// Write a synthetic joined log, deterministic from a seed.
    #[command(
        after_help = "Example:\n  fb gen --problem-type ccb --size 50MiB --zstd --dedup --seed 1 -o /tmp/ccb.fb"
    )]
    Gen(gen::Args),
    /// List the messages of a log: index, offset, type, size, events.
    #[command(after_help = "Example:\n  fb inspect tests/data/valid_joined_logs/cb_simple.log")]
    Inspect(inspect::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Convert(args) => convert::run(&args),
        Command::Gen(args) => gen::run(&args),
        Command::Inspect(args) => inspect::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("fb: error: {err}");
            ExitCode::from(2)
        }
    }
}

/// Opens a log for reading, with a message that says what to do.
fn open_log(path: &std::path::Path) -> Result<std::fs::File, String> {
    if path.is_dir() {
        return Err(format!(
            "{} is a directory: give the log files in it",
            path.display()
        ));
    }
    std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// Prints a count per diagnostic kind and the first few examples of each.
fn report_diagnostics(diags: &fb_join::Diagnostics) {
    const EXAMPLES: usize = 3;
    for (kind, count) in diags.counts() {
        eprintln!("fb: warning: {count} x {}", kind.name());
        for d in diags
            .kept()
            .iter()
            .filter(|d| d.kind == *kind)
            .take(EXAMPLES)
        {
            eprintln!("fb:   {d}");
        }
    }
}
