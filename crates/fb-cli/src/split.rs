//! `fb split`: a log cut into self-contained valid logs (the work is
//! `fb_run::split`).

use std::path::PathBuf;
use std::process::ExitCode;

use fb_run::split::{Cut, Period};

use crate::Global;
use fb_run::output::{DirOutput, Existing};
use fb_run::Error;

/// Arguments of `fb split`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("rule").required(true).multiple(true))]
pub struct Args {
    /// The log to split (`-`: standard input, read into memory).
    pub input: PathBuf,

    /// The folder to write the pieces into (`part-00000.fb`, ... in log
    /// order); refused when it exists and is not empty, unless `--force`.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,

    /// Largest piece, e.g. `1GiB` (a single larger message makes a piece
    /// of its own).
    #[arg(long, value_name = "SIZE", value_parser = crate::gen::parse_size, group = "rule")]
    pub max_size: Option<u64>,

    /// A piece per hour or day (UTC) of the messages' first events; with
    /// `--max-size` too, a period may take several pieces.
    #[arg(long, value_name = "PERIOD", value_parser = crate::joinargs::named::<Period>(Period::NAMES), group = "rule")]
    pub by: Option<Period>,

    /// Replace DIR if it exists (once every piece is written).
    #[arg(long)]
    pub force: bool,

    /// Threads writing pieces (1 to 256; default: the available cores).
    /// The pieces are the same bytes for any number.
    #[arg(long, value_name = "N", value_parser = crate::convert::parse_threads)]
    pub threads: Option<usize>,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,
}

/// Splits; exit 0, or 1 when the log is damaged (the pieces then hold the
/// messages before the damage).
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let input = fb_run::input::one(&args.input);
    let existing = Existing::forced(args.force);
    // Refused before the log is read.
    DirOutput::check(&args.output, std::slice::from_ref(&input), existing)?;
    // A file is read a window at a time (mapped with --mmap): memory
    // stays flat in the log's size. Standard input is read whole.
    let log = fb_run::input::OpenLog::open(&input, args.read.maps())?;
    let head = log
        .head()
        .map_err(|e| Error::Msg(format!("cannot read {}: {e}", input.name())))?;
    fb_run::input::is_log(&input, &head)?;
    let cut = Cut {
        max_size: args.max_size,
        period: args.by,
    };
    let dir = DirOutput::create(&args.output, std::slice::from_ref(&input), existing)?;
    let mut voice = crate::say::Voice::new(global.quiet).coarse();
    let threads = args
        .threads
        .unwrap_or_else(fb_run::options::default_threads);
    let pieces = fb_run::split::write(&log, cut, threads, &dir, &mut voice)?;
    if let Some(damage) = &pieces.damage {
        let partial = dir.finish_partial()?;
        eprintln!(
            "fb: {}: {damage}; {} was left as it was, and {} holds the pieces before the \
             damage (`fb split` again after `fb repair` keeps the rest)",
            input.name(),
            args.output.display(),
            partial.display()
        );
        return Ok(ExitCode::from(1));
    }
    dir.finish()?;
    if !global.quiet {
        eprintln!(
            "fb: {} of {} bytes written to {} ({} bytes, {} dedup entries carried)",
            fb_run::plural(pieces.pieces as u64, "piece"),
            fb_format::index::LogSource::len(&log),
            args.output.display(),
            pieces.written,
            pieces.carried,
        );
    }
    Ok(ExitCode::SUCCESS)
}
