//! `fb`: the command-line face of the toolkit. Only this crate prints.

use fb_cli::{
    convert, evaluate, export, gen, index, inspect, join, repair, report, sample, split, stats,
    validate, Global,
};

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tools for Vowpal Wabbit joined binary logs (schema v2).
#[derive(Debug, Parser)]
#[command(
    name = "fb",
    version,
    about = "Tools for Vowpal Wabbit joined binary logs (schema v2): convert to DSJSON, export \
             to Parquet, count and estimate, report a loop's health, check and repair, index, sample and split, join \
             raw client streams, generate synthetic logs",
    long_about = None,
    after_help = "Example:\n  fb convert tests/data/valid_joined_logs/cb_simple.log -o out.dsjson\n  \
                  fb stats tests/data/valid_joined_logs/\n\n\
                  `fb COMMAND --help` tells more of each command."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,

    #[command(flatten)]
    global: Global,
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
    /// How other policies would have done on the logged decisions
    /// (off-policy evaluation): IPS, SNIPS, Cressie-Read, Gaussian and
    /// Clopper-Pearson intervals, CCB per slot, Slates pseudo-inverse, as
    /// vw-estimators defines them (docs/evaluate.md).
    #[command(
        after_help = "Examples:\n  fb evaluate --policy baseline --policy uniform tests/data/valid_joined_logs/\n  \
        fb evaluate --policy predictions:pred.txt --json log.fb\n  \
        fb evaluate --policy uniform --by day --format csv log.fb"
    )]
    Evaluate(evaluate::Args),
    /// Export joined events to Parquet or Arrow IPC (one row per joined
    /// event; schema in docs/arrow-schema.md).
    #[command(
        after_help = "Examples:\n  fb export tests/data/valid_joined_logs -o events.parquet\n  \
        fb export --format arrow --only ccb tests/data/valid_joined_logs -o ccb.arrow"
    )]
    Export(export::Args),
    /// Write a synthetic joined log, deterministic from a seed.
    #[command(
        after_help = "Example:\n  fb gen --problem-type ccb --size 50MiB --zstd --dedup --seed 1 -o /tmp/ccb.fb"
    )]
    Gen(gen::Args),
    /// Write a sidecar index beside each log (`LOG.fbidx`): blocks of
    /// messages with their times and decision ids, checkpoints, dedup
    /// entries. `fb inspect --event-id` reads only what it points to.
    #[command(
        after_help = "Example:\n  fb index tests/data/valid_joined_logs/average_reward_100_interactions.fb"
    )]
    Index(index::Args),
    /// Join the client's raw interaction and observation streams (and
    /// multistep episodes) into a joined log, optionally within a window
    /// (`--eud`).
    #[command(
        after_help = "Examples:\n  fb join --interactions tests/data/reward_functions/cb/cb_v2.fb \\\n    \
        --observations tests/data/reward_functions/cb/f-reward_3obs_v2.fb --reward-function average -o joined.fb\n  \
        fb join --interactions i.fb --observations o.fb --eud 10m --unjoined late.fb -o joined.fb"
    )]
    Join(join::Args),
    /// List the messages of a log, or dump its events as JSON lines.
    #[command(
        after_help = "Examples:\n  fb inspect tests/data/valid_joined_logs/cb_simple.log\n  \
        fb inspect --events --offset 160 tests/data/valid_joined_logs/cb_simple.log"
    )]
    Inspect(inspect::Args),
    /// A uniform random sample of a log's decisions (the same seed, the same
    /// sample), as DSJSON or as a joined log, reading only the blocks of
    /// its index that hold them.
    #[command(
        after_help = "Example:\n  fb sample --fraction 0.01 --seed 7 big.fb -o sample.dsjson"
    )]
    Sample(sample::Args),
    /// Cut a log into self-contained valid logs (by size, hour or day),
    /// each converting on its own to its share of the whole log's lines.
    #[command(
        after_help = "Examples:\n  fb split big.fb --max-size 1GiB -o pieces/\n  \
        fb split big.fb --by hour -o hours/"
    )]
    Split(split::Args),
    /// Counts, rewards, skipped events by reason, and counterfactual
    /// estimates (IPS, SNIPS) of the baseline policy.
    #[command(after_help = "Examples:\n  fb stats tests/data/valid_joined_logs/\n  \
        fb stats --json tests/data/valid_joined_logs/cb_simple.log")]
    Stats(stats::Args),
    /// One self-contained HTML page showing a loop's health: traffic,
    /// rewards and the baseline's estimate over time, propensities,
    /// actions, outcome delays, configuration (the figures of `fb stats`).
    #[command(
        after_help = "Examples:\n  fb report tests/data/valid_joined_logs/ -o report.html\n  \
        fb report --join-window 10m --since 2021-05-18 big.fb -o report.html"
    )]
    Report(report::Args),
    /// Check logs end to end and list every problem with where it is.
    /// Exit 0 clean or warnings only, 1 errors found (with --strict,
    /// warnings too), 2 usage or I/O error.
    #[command(
        after_help = "Example:\n  fb validate --max-errors 20 tests/data/invalid_joined_logs/"
    )]
    Validate(validate::Args),
    /// Write a valid log holding every intact message of a damaged one
    /// (FILEMAGIC first, EOF last) and list what was dropped.
    /// Exit 0 nothing dropped, 1 something dropped, 2 usage or I/O error.
    #[command(
        after_help = "Example:\n  fb repair tests/data/invalid_joined_logs/corrupt_joined_payload.log /tmp/repaired.log"
    )]
    Repair(repair::Args),
}

fn main() -> ExitCode {
    // Before any other thread starts: Ctrl-C then removes what the run
    // left aside (see `interrupt`).
    fb_run::interrupt::install();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Convert(args) => convert::run(&args, &cli.global),
        Command::Evaluate(args) => evaluate::run(&args, &cli.global),
        Command::Export(args) => export::run(&args, &cli.global),
        Command::Gen(args) => gen::run(&args, &cli.global),
        Command::Index(args) => index::run(&args, &cli.global),
        Command::Inspect(args) => inspect::run(&args, &cli.global),
        Command::Join(args) => join::run(&args, &cli.global),
        Command::Sample(args) => sample::run(&args, &cli.global),
        Command::Split(args) => split::run(&args, &cli.global),
        Command::Stats(args) => stats::run(&args, &cli.global),
        Command::Report(args) => report::run(&args, &cli.global),
        Command::Validate(args) => validate::run(&args, &cli.global),
        Command::Repair(args) => repair::run(&args, &cli.global),
    };
    match result {
        Ok(code) => code,
        // The reader of our output is gone (`fb ... | head`): stop quietly
        // and successfully, as ripgrep does.
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("fb: error: {err}");
            match err {
                fb_run::Error::Damaged(_) => ExitCode::from(1),
                _ => ExitCode::from(2),
            }
        }
    }
}
