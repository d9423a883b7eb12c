//! `fb convert`: joined logs to DSJSON.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use fb_join::dsjson::LinesSink;
use fb_join::Pipeline;

use crate::joinargs::{FilterArgs, JoinArgs};
use crate::say::{feed_all, report_diagnostics};
use crate::Global;
use fb_run::output::{Compress, Existing, How, Output};
use fb_run::Error;

/// Arguments of `fb convert`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Logs to convert (files, directories of logs, `-` for stdin), read
    /// in order as one stream: a checkpoint in one applies to the next.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// Write the DSJSON here (`.gz` and `.zst` are compressed) instead of
    /// standard output.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Replace OUT if it exists (once the new output is complete).
    #[arg(long)]
    pub force: bool,

    /// How to join.
    #[command(flatten)]
    pub join: JoinArgs,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Which events to keep.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Replace `{"__aid":N}` action references with the cached action JSON,
    /// so each line is self-contained.
    #[arg(long)]
    pub inline_dedup: bool,

    /// Keep going past damage: after a corrupt or truncated region, resume
    /// at the next plausible message, and report every skipped byte range.
    /// Reads each input whole (a file is memory-mapped).
    #[arg(long)]
    pub recover: bool,

    /// Worker threads joining and serializing in parallel (1 to 256), and
    /// as many compressing a `.gz` or `.zst` output; the output is the
    /// same bytes whatever the number. Default: the available cores.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// Compression level of a `.gz` output (1, the default and fastest, to
    /// 9) or a `.zst` one (-7 to 19 but 0; default 1).
    #[arg(long, value_name = "L", allow_negative_numbers = true)]
    pub level: Option<i32>,
}

/// Most worker threads `--threads` takes.
pub use fb_run::options::MAX_THREADS;

/// Parses a `--threads` value.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a number of threads from 1 to {MAX_THREADS}"
        )),
    }
}

/// Converts; exit 0 clean, 1 when an input was damaged or not a log (every
/// readable line is still written), 2 for usage or I/O errors.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let filter = args.filter.filter()?;
    let started = Instant::now();
    let inputs = crate::say::resolve(&args.inputs, global.quiet)?;
    let mut opts = args.join.options();
    opts.inline_dedup = args.inline_dedup;
    // Loops of other problem types are not joined at all: no work, and no
    // warnings about events the user asked to leave out.
    opts.only = args.filter.only.clone();
    let compat = opts.compat;
    let threads = args
        .threads
        .unwrap_or_else(fb_run::options::default_threads);
    let compress = Compress::ByExtension {
        level: args.level,
        threads,
    };
    let how = How::text(compress, Existing::forced(args.force));
    let mut out = Output::create(args.output.as_deref(), &inputs, how)?;
    let target = out.target().to_string();
    // Recovery resynchronizes on one thread (compressing may still use
    // more).
    let threads = match args.recover {
        true => 1,
        false => threads,
    };
    let sink = LinesSink::new(&mut out, compat);
    let mut pipeline = Pipeline::new(opts, fb_run::drive::keeper(&filter), sink, threads);
    let report = feed_all(
        &inputs,
        &mut pipeline,
        args.recover,
        global.quiet,
        &target,
        filter.window(),
        args.read.maps(),
    )?;
    let (written, filtered) = (pipeline.kept(), pipeline.filtered());
    let (joiner, _) = pipeline.finish();
    // The summary names no output.
    let _ = crate::say::conclude(out, report.failed() && !args.recover, written)?;
    if !global.quiet {
        let metrics = joiner.metrics();
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "fb: {}, {} messages, {} events joined ({} not learnable), {written} lines \
             written{} in {secs:.2} s ({:.0} MB/s of input)",
            fb_run::plural(inputs.len() as u64, "input"),
            report.kinds.total(),
            metrics.joined,
            metrics.skipped_learn,
            match (filtered, metrics.not_selected) {
                (0, 0) => String::new(),
                (f, 0) => format!(", {f} filtered out"),
                (0, n) => format!(", {n} events of other problem types not joined (--only)"),
                (f, n) =>
                    format!(", {f} filtered out (and {n} events of other problem types not joined)"),
            },
            report.bytes as f64 / 1e6 / secs.max(1e-6),
        );
        report_diagnostics(joiner.diagnostics(), global.verbose > 0, &report);
    }
    Ok(crate::say::exit_code(&report))
}
