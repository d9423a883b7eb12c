//! `fb repair`: a valid log made of every intact message of a damaged one.

use std::path::PathBuf;
use std::process::ExitCode;

use fb_run::repair::{Dropped, Kept, Repaired};

use crate::Global;
use fb_run::output::{Existing, How, Output};
use fb_run::Error;

/// Arguments of `fb repair`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The damaged log (read whole into memory; `-`: standard input).
    pub input: PathBuf,

    /// Where to write the repaired log (not the input; standard output
    /// when absent, unless it is a terminal).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// The output as a second argument, as earlier versions took it.
    #[arg(value_name = "OUT", hide = true, conflicts_with = "output")]
    pub output_positional: Option<PathBuf>,

    /// Replace OUT if it exists (once the repaired log is complete).
    #[arg(long)]
    pub force: bool,

    /// Dropped ranges listed on standard error (all are counted; `-v`
    /// lists every one).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub max_listed: usize,
}

impl Args {
    /// Where the repaired log goes (`None`: standard output).
    fn output(&self) -> Option<&std::path::Path> {
        self.output.as_deref().or(self.output_positional.as_deref())
    }
}

/// Writes the repaired log (`fb_run::repair::repair` says what it keeps);
/// exit 0 when nothing was dropped, 1 when something was, 2 (an `Err`) on
/// usage or I/O errors.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let input = fb_run::input::one(&args.input);
    let how = How::binary(Existing::forced(args.force));
    let out = Output::create(args.output(), std::slice::from_ref(&input), how)?;
    let mut voice = crate::say::Voice::new(global.quiet);
    let repaired = fb_run::repair::repair(&input, out, &mut voice)?;
    let Repaired {
        kept,
        dropped,
        salvaged,
        read,
        written,
    } = &repaired;
    if !global.quiet {
        report(args, global, kept, dropped, *read, *written);
        for s in salvaged {
            eprintln!("fb: repair: {s}");
        }
    } else if !dropped.is_empty() {
        // Dropped data is an error: said with -q too, in one line.
        let bytes: u64 = dropped.iter().map(|d| d.end - d.start).sum();
        eprintln!(
            "fb: repair: {}: dropped {} ({bytes} bytes); without -q they are listed",
            input.name(),
            fb_run::plural(dropped.len() as u64, "byte range"),
        );
    }
    Ok(if dropped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn report(args: &Args, global: &Global, kept: &Kept, dropped: &[Dropped], read: u64, written: u64) {
    let bytes: u64 = dropped.iter().map(|d| d.end - d.start).sum();
    eprintln!(
        "fb: repair: {} ({read} bytes) -> {} ({written} bytes): kept {} messages \
         ({} HEADER, {} CHECKPOINT, {} REGULAR)",
        args.input.display(),
        args.output()
            .map_or("standard output".into(), |p| p.display().to_string()),
        kept.headers + kept.checkpoints + kept.regulars,
        kept.headers,
        kept.checkpoints,
        kept.regulars,
    );
    if dropped.is_empty() {
        eprintln!("fb: repair: nothing dropped");
        return;
    }
    let plural = if dropped.len() == 1 { "" } else { "s" };
    eprintln!(
        "fb: repair: dropped {} byte range{plural}, {bytes} bytes in all:",
        dropped.len()
    );
    let listed = if global.verbose > 0 {
        dropped.len()
    } else {
        args.max_listed.min(dropped.len())
    };
    for d in dropped.iter().take(listed) {
        eprintln!(
            "fb:   bytes {}..{} ({} bytes): {}",
            d.start,
            d.end,
            d.end - d.start,
            d.why
        );
    }
    if listed < dropped.len() {
        eprintln!(
            "fb:   ... and {} more ranges (-v lists them all)",
            dropped.len() - listed
        );
    }
}
