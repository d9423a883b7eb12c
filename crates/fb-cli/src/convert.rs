//! `fb convert`: joined logs to DSJSON.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fb_join::{dsjson, EventKind, JoinedEvent, Joiner};

use crate::joinargs::{drive, report_diagnostics, JoinArgs, RunReport};
use crate::progress::Progress;
use crate::Global;

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

    #[command(flatten)]
    pub join: JoinArgs,

    /// Replace `{"__aid":N}` action references with the cached action JSON,
    /// so each line is self-contained.
    #[arg(long)]
    pub inline_dedup: bool,

    /// Whether to write deferred events that were never activated (they
    /// carry "_skipLearn":true).
    #[arg(long, value_name = "WHAT", default_value = "include", value_parser = ["include", "exclude"])]
    pub skip_learn: String,

    /// Only events at or after this time (event time, UTC):
    /// `2021-05-18` or `2021-05-18T13:28:29Z`.
    #[arg(long, value_parser = parse_time)]
    pub since: Option<i64>,

    /// Only events before this time (event time, UTC).
    #[arg(long, value_parser = parse_time)]
    pub until: Option<i64>,

    /// Keep going past damage: after a corrupt or truncated region, resume
    /// at the next plausible message, and report every skipped byte range.
    /// Reads each input whole (a file is memory-mapped).
    #[arg(long)]
    pub recover: bool,

    /// Worker threads joining and serializing in parallel; the output is
    /// the same bytes whatever the number. Default: the available cores.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Only events of these problem types (comma-separated):
    /// cb,ccb,slates,ca,multistep.
    #[arg(long, value_delimiter = ',', value_parser = parse_kind)]
    pub only: Vec<EventKind>,
}

fn parse_kind(s: &str) -> Result<EventKind, String> {
    Ok(match s {
        "cb" => EventKind::Cb,
        "ccb" => EventKind::Ccb,
        "slates" => EventKind::Slates,
        "ca" => EventKind::Ca,
        "multistep" => EventKind::MultiStep,
        _ => return Err("expected cb|ccb|slates|ca|multistep".into()),
    })
}

/// Parses `YYYY-MM-DD[THH:MM[:SS]][Z]` into seconds since 1970 (UTC).
pub fn parse_time(s: &str) -> Result<i64, String> {
    let err = || format!("`{s}` is not a time: expected 2021-05-18 or 2021-05-18T13:28:29Z");
    let s = s.trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, "00:00:00"));
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    if d.len() != 3 || t.len() < 2 || t.len() > 3 {
        return Err(err());
    }
    let num = |x: &str| {
        x.split('.')
            .next()
            .unwrap_or(x)
            .parse::<u32>()
            .map_err(|_| err())
    };
    let (year, month, day) = (num(d[0])?, num(d[1])?, num(d[2])?);
    let (hour, minute) = (num(t[0])?, num(t[1])?);
    let second = if t.len() == 3 { num(t[2])? } else { 0 };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(err());
    }
    let ts = fb_schema::TimeStamp::new(
        u16::try_from(year).map_err(|_| err())?,
        month as u8,
        day as u8,
        hour as u8,
        minute as u8,
        second as u8,
        0,
    );
    Ok(fb_join::time::key(&ts).0)
}

/// Output chunk of the single-thread path: the output buffer's size.
/// Lines gathered before one write: at least the output's buffer, so
/// that they go straight through it.
const OUT_CHUNK: usize = if crate::output::BUFFER > 1 << 20 {
    crate::output::BUFFER
} else {
    1 << 20
};

fn keep(args: &Args, ev: &JoinedEvent) -> bool {
    if args.skip_learn == "exclude" && ev.skip_learn {
        return false;
    }
    if args.since.is_some() || args.until.is_some() {
        let secs = fb_join::time::key(&ev.time).0;
        if args.since.is_some_and(|s| secs < s) || args.until.is_some_and(|u| secs >= u) {
            return false;
        }
    }
    args.only.is_empty() || args.only.contains(&ev.kind)
}

/// Converts; exit 0 clean, 1 when an input was damaged or not a log (every
/// readable line is still written), 2 for usage or I/O errors.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, String> {
    let inputs = crate::input::resolve(&args.inputs)?;
    let mut opts = args.join.options();
    opts.inline_dedup = args.inline_dedup;
    let compat = opts.compat;
    let mut out = crate::output::create(args.output.as_deref())?;
    let mut joiner = Joiner::new(opts);
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let (report, written, filtered) = if args.recover {
        convert_recovering(&inputs, &mut joiner, &mut out, args, global)?
    } else if threads > 1 {
        convert_parallel(&inputs, &mut joiner, &mut out, threads, args, global)?
    } else {
        let mut writer = dsjson::Writer::new(compat);
        // Lines gather here and go out in chunks at least as large as the
        // output's buffer, which then passes them through without a copy.
        // Lines are formatted in place there, with no copy.
        let mut lines = dsjson::Lines::with_capacity(OUT_CHUNK + (64 << 10));
        let (mut written, mut filtered) = (0u64, 0u64);
        let report = drive(&inputs, &mut joiner, global.quiet, |ev| {
            if !keep(args, ev) {
                filtered += 1;
                return Ok(());
            }
            writer.write_into(ev, &mut lines);
            written += 1;
            if lines.len() < OUT_CHUNK {
                return Ok(());
            }
            let result = out.write_all(lines.as_bytes());
            lines.clear();
            result.map_err(|e| format!("writing the output: {e}"))
        })?;
        out.write_all(lines.as_bytes())
            .map_err(|e| format!("writing the output: {e}"))?;
        (report, written, filtered)
    };
    out.flush()
        .map_err(|e| format!("writing the output: {e}"))?;
    drop(out);
    if !global.quiet {
        let metrics = joiner.metrics();
        let msgs: u64 = report.messages.values().sum();
        eprintln!(
            "fb: {} inputs, {msgs} messages, {} events joined ({} not learnable), {written} lines written{}",
            inputs.len(),
            metrics.joined,
            metrics.skipped_learn,
            if filtered > 0 { format!(", {filtered} filtered out") } else { String::new() }
        );
        report_diagnostics(joiner.diagnostics(), global.verbose > 0);
    }
    Ok(if report.damaged.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The `--recover` path: each input read whole and resynchronized after
/// damage; skipped ranges are listed on stderr.
fn convert_recovering(
    inputs: &[crate::input::Input],
    joiner: &mut Joiner,
    out: &mut Box<dyn Write>,
    args: &Args,
    global: &Global,
) -> Result<(RunReport, u64, u64), String> {
    use std::io::Read as _;
    let mut report = RunReport::default();
    let (mut written, mut joined_before) = (0u64, joiner.metrics().joined);
    let mut filtered = 0u64;
    let mut writer = dsjson::Writer::new(joiner.options().compat);
    for input in inputs {
        let data: Vec<u8>;
        let map = crate::input::map(input);
        let bytes: &[u8] = match &map {
            Some(m) => m,
            None => {
                let mut opened = crate::input::open(input)?;
                let mut buf = Vec::new();
                opened
                    .reader
                    .read_to_end(&mut buf)
                    .map_err(|e| format!("{}: {e}", input.name()))?;
                data = buf;
                &data
            }
        };
        let limit = u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX);
        let mut skipped = Vec::new();
        let mut line = Vec::with_capacity(4096);
        for item in fb_format::recover::RecoveringReader::with_max_payload(bytes, limit) {
            match item {
                fb_format::recover::Recovered::Message(msg) => {
                    *report.messages.entry(msg.kind.name()).or_default() += 1;
                    line.clear();
                    joiner.push_each(&msg, |ev| {
                        if keep(args, ev) {
                            writer.write_line(ev, &mut line);
                            written += 1;
                        } else {
                            filtered += 1;
                        }
                    });
                    out.write_all(&line)
                        .map_err(|e| format!("writing the output: {e}"))?;
                }
                fb_format::recover::Recovered::Skipped(range) => skipped.push(range),
            }
        }
        report.bytes += bytes.len() as u64;
        for r in &skipped {
            let why = format!(
                "skipped bytes {}..{} ({} bytes): {}",
                r.start,
                r.end,
                r.len(),
                r.reason
            );
            report.damaged(input, why, global.quiet);
        }
        if !global.quiet && !skipped.is_empty() {
            eprintln!(
                "fb: {}: recovered {} events; {} bytes in {} ranges skipped",
                input.name(),
                joiner.metrics().joined - joined_before,
                skipped
                    .iter()
                    .map(fb_format::recover::Skipped::len)
                    .sum::<u64>(),
                skipped.len()
            );
        }
        joined_before = joiner.metrics().joined;
    }
    Ok((report, written, filtered))
}

/// The `--threads N` path: each input through the parallel pipeline.
fn convert_parallel(
    inputs: &[crate::input::Input],
    joiner: &mut Joiner,
    out: &mut Box<dyn Write>,
    threads: usize,
    args: &Args,
    global: &Global,
) -> Result<(RunReport, u64, u64), String> {
    let total = inputs
        .iter()
        .map(crate::input::Input::len)
        .sum::<Option<u64>>();
    let mut progress = Progress::new(total, global.quiet);
    let mut report = RunReport::default();
    let (mut written, mut joined) = (0u64, 0u64);
    let mut done_bytes = 0u64;
    for input in inputs {
        let (mut seen_bytes, mut seen_events) = (0u64, 0u64);
        let mut on_progress = |at: fb_join::Progress| {
            progress.add(
                at.read.saturating_sub(seen_bytes),
                at.events.saturating_sub(seen_events),
            );
            seen_bytes = at.read.max(seen_bytes);
            seen_events = at.events.max(seen_events);
        };
        let keep = |ev: &JoinedEvent| keep(args, ev);
        // Regular files are mapped and the workers read the payloads where
        // they are; pipes go through a reader and are copied into batches.
        let summary = if let Some(map) = crate::input::map(input) {
            if let Some(why) = crate::input::sniff(map.get(..4).unwrap_or(&map)) {
                report.damaged(input, why, global.quiet);
                continue;
            }
            let mut releaser = crate::input::Releaser::default();
            fb_join::convert_parallel_slice(joiner, &map, out, threads, keep, |at| {
                releaser.done(&map, at.finished);
                on_progress(at);
            })
        } else {
            let opened = crate::input::open(input)?;
            if let Some(why) = opened.not_a_log {
                report.damaged(input, why, global.quiet);
                continue;
            }
            fb_join::convert_parallel(joiner, opened.reader, out, threads, keep, on_progress)
        }
        .map_err(|e| format!("{}: {e}", input.name()))?;
        done_bytes += seen_bytes;
        written += summary.lines;
        joined = summary.metrics.joined;
        *report.messages.entry("all").or_default() += summary.messages;
        if let Some(err) = summary.framing_error {
            report.damaged(input, err, global.quiet);
        }
    }
    progress.finish();
    report.bytes = done_bytes;
    Ok((report, written, joined - written))
}

#[cfg(test)]
mod tests {
    use super::parse_time;

    #[test]
    fn times_parse() {
        assert_eq!(parse_time("1970-01-02"), Ok(86_400));
        assert_eq!(parse_time("1970-01-01T00:01:05Z"), Ok(65));
        assert_eq!(parse_time("1970-01-01T00:01"), Ok(60));
        assert!(parse_time("yesterday").is_err());
        assert!(parse_time("2021-13-01").is_err());
    }
}
