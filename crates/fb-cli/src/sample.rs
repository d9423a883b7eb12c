//! `fb sample`: a uniform random sample of a log's decisions (the work is
//! `fb_run::sample`).

use std::path::PathBuf;
use std::process::ExitCode;

use fb_run::output::{Compress, Existing, How, Output};
use fb_run::sample::{Format, Request};
use fb_run::Error;

use crate::joinargs::JoinArgs;
use crate::Global;

/// Arguments of `fb sample`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The log to sample (one file; its index is used when fresh, built in
    /// memory otherwise; `-`: standard input, read into memory).
    pub input: PathBuf,

    /// How many decisions to draw (all of them when the log has fewer).
    #[arg(
        long,
        value_name = "N",
        required_unless_present = "fraction",
        conflicts_with = "fraction"
    )]
    pub decisions: Option<u64>,

    /// Or which share of the decisions to draw, from 0 to 1.
    #[arg(long, value_name = "F", value_parser = parse_fraction)]
    pub fraction: Option<f64>,

    /// The generator's seed: the same seed gives the same sample.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// DSJSON lines (`dsjson`, as `fb convert` writes them) or a valid
    /// joined log (`log`) holding the drawn decisions and their outcomes.
    #[arg(long, value_name = "FORMAT", default_value = "dsjson", value_parser = crate::joinargs::named::<Format>(Format::NAMES))]
    pub format: Format,

    /// Write here instead of standard output (`.gz`, `.zst` compress
    /// DSJSON).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Replace OUT if it exists (once the sample is complete).
    #[arg(long)]
    pub force: bool,

    /// How to join (DSJSON).
    #[command(flatten)]
    pub join: JoinArgs,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Threads that build a missing index and join the sample (default:
    /// all cores). The sample is the same bytes for any number.
    #[arg(long, value_name = "N", value_parser = crate::convert::parse_threads)]
    pub threads: Option<usize>,
}

/// Parses a `--fraction`: a share from 0 to 1.
fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("`{s}` is not a share from 0 to 1 (such as 0.01)")),
    }
}

/// Draws the sample and writes it; exit 0, or 1 when the log has no
/// decision.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let input = fb_run::input::one(&args.input);
    let threads = args
        .threads
        .unwrap_or_else(fb_run::options::default_threads);
    let format = args.format;
    let how = match format {
        Format::Log => How::binary(Existing::forced(args.force)),
        Format::Dsjson => How::text(
            Compress::ByExtension {
                level: None,
                threads: 1,
            },
            Existing::forced(args.force),
        ),
    };
    // Refused (an output that exists, binary to a terminal) before the
    // log is read.
    let out = Output::create(args.output.as_deref(), std::slice::from_ref(&input), how)?;
    let opened = fb_run::sample::open(
        &input,
        args.read.maps(),
        threads,
        &mut crate::say::Voice::new(global.quiet),
    )?;
    let total = opened.decisions();
    if total == 0 {
        eprintln!(
            "fb: {}: the log holds no decision: nothing to sample",
            input.name()
        );
        return Ok(ExitCode::from(1));
    }
    let k = fb_run::sample::how_many(args.decisions, args.fraction, total);
    let chosen = fb_run::sample::choose(total, k, args.seed);
    let request = Request {
        seed: args.seed,
        format,
        join: args.join.options(),
        threads,
    };
    let drawn = fb_run::sample::draw(&request, &input, opened, &chosen, out)?;
    if !global.quiet {
        eprintln!(
            "fb: {} of {total} decisions drawn (seed {}); {} messages read, {} of {} bytes",
            drawn.drawn, args.seed, drawn.messages, drawn.read, drawn.log_bytes
        );
    }
    Ok(ExitCode::SUCCESS)
}
