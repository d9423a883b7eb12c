//! `fb report`: one self-contained HTML page showing a loop's health.

use std::path::PathBuf;
use std::process::ExitCode;

use fb_run::health::PageOptions;
use fb_run::output::{Compress, Existing, How, Output};
use fb_run::Error;

use crate::joinargs::{FilterArgs, JoinArgs};
use crate::Global;

/// Arguments of `fb report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Logs to read (files, directories, `-` for stdin), as one stream.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// Write the page here instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Replace OUT if it exists (once the new page is complete).
    #[arg(long)]
    pub force: bool,

    /// The loop's join window (`30s`, `10m`, `2h`, `1d`), marked on the
    /// outcome delays: the log does not record it.
    #[arg(long, value_name = "DURATION", value_parser = fb_run::join::parse_duration)]
    pub join_window: Option<i64>,

    /// A target policy whose estimated reward the page shows beside the
    /// logged policy's, with `fb evaluate`'s figures: `baseline`,
    /// `uniform`, `constant:K` or `predictions:FILE` (as `fb evaluate
    /// --policy`). Repeat for several.
    #[arg(long, value_name = "P", value_parser = clap::builder::ValueParser::new(crate::evaluate::parse_spec))]
    pub policy: Vec<fb_run::evaluate::Spec>,

    /// How to join.
    #[command(flatten)]
    pub join: JoinArgs,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Which events to keep.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Keep going past damage, as `fb stats --recover` does.
    #[arg(long)]
    pub recover: bool,

    /// Worker threads joining in parallel (1 to 256; one with
    /// `--recover`). The page is the same bytes whatever the number: its
    /// sums are added in log order, as `fb stats` and `fb evaluate` add
    /// them. Default: the available cores.
    #[arg(long, value_name = "N", value_parser = crate::convert::parse_threads)]
    pub threads: Option<usize>,
}

/// Writes the page; exit 1 when an input was damaged or none is a log
/// (the page then says so), 2 for usage or I/O errors.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let filter = args.filter.filter()?;
    let inputs = crate::say::resolve(&args.inputs, global.quiet)?;
    let how = How::text(Compress::Never, Existing::forced(args.force));
    let out = Output::create(args.output.as_deref(), &inputs, how)?;
    let target = out.target().to_string();
    let job = crate::say::job(
        &inputs,
        &args.join,
        &args.read,
        &filter,
        args.recover,
        &target,
    );
    let options = PageOptions {
        join_window: args.join_window,
        policies: args.policy.clone(),
        threads: args
            .threads
            .unwrap_or_else(fb_run::options::default_threads),
    };
    let outcome = fb_run::health::run(job, &options, &mut crate::say::Voice::new(global.quiet))?;
    let page = outcome.value;
    if let Some(e) = page.failure {
        return Err(e);
    }
    if let Some(stop) = outcome.stop {
        return Err(stop.into_error());
    }
    page.finished?;
    let report = outcome.run;
    let mut out = out;
    out.put(page.html.as_bytes())?;
    out.finish()?;
    if report.logs == 0 && !global.quiet {
        eprintln!("fb: no input is a joined log: the page says so and shows nothing else");
    }
    Ok(match report.logs {
        0 => ExitCode::from(1),
        _ => crate::say::exit_code(&report),
    })
}
