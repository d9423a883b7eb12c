//! `fb validate`: every problem of a log, with where it is (the work is
//! `fb_run::validate`).

use std::path::PathBuf;
use std::process::ExitCode;

use fb_run::output::Output;
use fb_run::Error;

use crate::joinargs::JoinArgs;
use crate::Global;

/// Arguments of `fb validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Logs to check (files, directories, `-` for stdin); each must stand
    /// on its own (no checkpoint carries over from one to the next).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// List at most this many problems (all are counted).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_errors: usize,

    /// Exit 1 for warnings too (data that is readable but odd: outcomes
    /// without their decision, events of another problem type, ...), not
    /// only for errors (damaged bytes, files that are not logs).
    #[arg(long)]
    pub strict: bool,

    /// Threads (default: all cores). Fewer inputs than threads: each is
    /// checked in turn on all of them; otherwise this many inputs at once,
    /// each on one. The listing is the same for any number.
    #[arg(long, value_name = "N", value_parser = crate::convert::parse_threads)]
    pub threads: Option<usize>,

    /// How to join.
    #[command(flatten)]
    pub join: JoinArgs,
}

/// Checks every input; exit 0 clean (or warnings only, unless --strict),
/// 1 errors found, 2 usage or I/O error.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let inputs = crate::say::resolve(&args.inputs, global.quiet)?;
    let verdict = fb_run::validate::validate(
        &inputs,
        &args.join.options(),
        args.max_errors,
        Output::stdout(),
        args.threads
            .unwrap_or_else(fb_run::options::default_threads),
    )?;
    let (errors, warnings) = (verdict.errors, verdict.warnings);
    if !global.quiet {
        let said = match (errors, warnings) {
            (0, 0) => "valid".to_string(),
            (0, w) => format!("valid, with {}", fb_run::plural(w, "warning")),
            (e, w) => format!(
                "{}, {}",
                fb_run::plural(e, "error"),
                fb_run::plural(w, "warning")
            ),
        };
        eprintln!(
            "fb: {}, {}, {}: {said}",
            fb_run::plural(inputs.len() as u64, "input"),
            fb_run::plural(verdict.messages, "message"),
            fb_run::plural(verdict.events, "event"),
        );
    }
    Ok(if errors > 0 || (args.strict && warnings > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
