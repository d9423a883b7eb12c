//! `fb`: the command-line face of the toolkit. Only this crate prints.

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
    /// List the messages of a log: index, offset, type, size, events.
    #[command(after_help = "Example:\n  fb inspect tests/data/valid_joined_logs/cb_simple.log")]
    Inspect(inspect::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
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
