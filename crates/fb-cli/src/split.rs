//! `fb split`: a log cut into self-contained valid logs, each converting
//! on its own to its share of the whole log's lines.
//!
//! The cutting points and what each piece carries (header, checkpoint in
//! force, the dedup entries it needs) are planned by
//! [`fb_join::split::plan`]; here the pieces are written, each as the log's
//! own bytes after that prefix, into a directory that is put in place only
//! once every piece is complete.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fb_join::split::{plan, Piece, Plan, Rule, DAY, HOUR};
use fb_writer::{DedupSpec, JoinedEventSpec, LogWriter, MetaSpec, PayloadSpec};

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
    #[arg(long, value_name = "PERIOD", value_parser = ["hour", "day"], group = "rule")]
    pub by: Option<String>,

    /// Replace DIR if it exists (once every piece is written).
    #[arg(long)]
    pub force: bool,
}

/// Splits; exit 0, or 1 when the log is damaged (the pieces then hold the
/// messages before the damage).
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let input = fb_run::input::one(&args.input);
    let existing = Existing::forced(args.force);
    // Refused before the log is read.
    DirOutput::check(&args.output, std::slice::from_ref(&input), existing)?;
    let log = fb_run::input::whole(&input)?;
    fb_run::input::is_log(&input, &log)?;
    let rule = Rule {
        max_size: args.max_size,
        period: match args.by.as_deref() {
            Some("hour") => Some(HOUR),
            Some("day") => Some(DAY),
            _ => None,
        },
    };
    let plan = plan(&log, rule);
    let dir = DirOutput::create(&args.output, std::slice::from_ref(&input), existing)?;
    let width = plan.pieces.len().saturating_sub(1).to_string().len().max(5);
    let mut written = 0u64;
    let mut carried = 0usize;
    let mut progress = crate::progress::Progress::coarse(Some(log.len() as u64), global.quiet);
    for (n, piece) in plan.pieces.iter().enumerate() {
        progress.add(piece.end.saturating_sub(piece.start), 0);
        let name = piece_name(n, width, piece, args.by.as_deref());
        let path = dir.path().join(&name);
        written += write_piece(&log, &plan, piece, &path)
            .map_err(|e| Error::Msg(format!("{}: {e}", args.output.join(&name).display())))?;
        carried += piece.dedup.as_ref().map_or(0, |d| d.entries.len());
    }
    progress.finish();
    if let Some(damage) = &plan.damage {
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
            "fb: {} of {} bytes written to {} ({written} bytes, {carried} dedup entries carried)",
            fb_run::plural(plan.pieces.len() as u64, "piece"),
            log.len(),
            args.output.display(),
        );
    }
    Ok(if plan.damage.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `part-00007.fb`, or with a period `part-00007-2026-11-23T14.fb`: names
/// that sort in log order.
pub fn piece_name(n: usize, width: usize, piece: &Piece, by: Option<&str>) -> String {
    let when = match (piece.period, by) {
        (Some(start), Some(by)) => {
            let secs = start.div_euclid(1_000_000);
            let (y, m, d) = fb_schema::calendar::civil_from_days(secs.div_euclid(86_400));
            match by {
                "hour" => format!(
                    "-{y:04}-{m:02}-{d:02}T{:02}",
                    secs.rem_euclid(86_400) / 3600
                ),
                _ => format!("-{y:04}-{m:02}-{d:02}"),
            }
        }
        _ => String::new(),
    };
    format!("part-{n:0width$}{when}.fb")
}

/// Writes one piece; the bytes written.
fn write_piece(log: &[u8], plan: &Plan, piece: &Piece, path: &Path) -> Result<u64, String> {
    let span = |(start, end): (u64, u64)| {
        fb_format::index::span(log, start, end)
            .ok_or_else(|| format!("the plan points past the log ({start}..{end})"))
    };
    let file = File::create(path).map_err(|e| format!("cannot create: {e}"))?;
    let mut out = BufWriter::with_capacity(fb_run::output::BUFFER, file);
    let failed = |e: fb_writer::Error| e.to_string();
    let mut writer = LogWriter::new(&mut out);
    writer.raw_bytes(span(plan.magic)?).map_err(failed)?;
    for part in piece.header.iter().chain(&piece.checkpoints) {
        writer.raw_bytes(span(*part)?).map_err(failed)?;
    }
    if let Some(dedup) = &piece.dedup {
        let ids: Vec<u64> = dedup.entries.iter().map(|(id, _)| *id).collect();
        let values: Vec<&str> = dedup.entries.iter().map(|(_, v)| v.as_str()).collect();
        writer
            .push_event(&JoinedEventSpec {
                meta: MetaSpec::new(&dedup.event_id),
                enqueued: dedup.timestamp,
                payload: PayloadSpec::Dedup(DedupSpec {
                    ids: &ids,
                    values: &values,
                }),
            })
            .map_err(failed)?;
        writer.end_regular().map_err(failed)?;
    }
    writer
        .raw_bytes(span((piece.start, piece.end))?)
        .map_err(failed)?;
    if !piece.has_eof {
        writer.eof().map_err(failed)?;
    }
    let written = writer.offset();
    writer.flush().map_err(failed)?;
    drop(writer);
    out.into_inner().map_err(|e| e.error().to_string())?;
    Ok(written)
}
