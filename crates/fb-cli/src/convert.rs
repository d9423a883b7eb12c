//! `fb convert`: joined logs to DSJSON.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use fb_join::{dsjson, JoinedEvent, Joiner};

use crate::error::Error;
use crate::joinargs::{drive, report_diagnostics, FilterArgs, JoinArgs, RunReport};
use crate::output::{Compress, Output};
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

    /// Worker threads joining and serializing in parallel (1 to 256); the
    /// output is the same bytes whatever the number. Default: the
    /// available cores.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
}

/// Most worker threads `--threads` takes: more than any machine this runs
/// on has cores, few enough that starting them cannot exhaust the system.
pub const MAX_THREADS: usize = 256;

/// Parses a `--threads` value.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a number of threads from 1 to {MAX_THREADS}"
        )),
    }
}

/// The default number of threads: the available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
}

/// Output chunk of the single-thread path: the output buffer's size.
/// Lines gathered before one write: at least the output's buffer, so
/// that they go straight through it.
const OUT_CHUNK: usize = if crate::output::BUFFER > 1 << 20 {
    crate::output::BUFFER
} else {
    1 << 20
};

/// Converts; exit 0 clean, 1 when an input was damaged or not a log (every
/// readable line is still written), 2 for usage or I/O errors.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    args.filter.check()?;
    let started = Instant::now();
    let inputs = crate::input::resolve(&args.inputs)?;
    let mut opts = args.join.options();
    opts.inline_dedup = args.inline_dedup;
    // Loops of other problem types are not joined at all: no work, and no
    // warnings about events the user asked to leave out.
    opts.only = args.filter.only.clone();
    let compat = opts.compat;
    let mut out = Output::create(args.output.as_deref(), &inputs, Compress::ByExtension)?;
    let mut joiner = Joiner::new(opts);
    let threads = args.threads.unwrap_or_else(default_threads);
    let (report, written, filtered) = if args.recover {
        convert_recovering(&inputs, &mut joiner, &mut out, args, global)?
    } else if threads > 1 {
        convert_parallel(&inputs, &mut joiner, &mut out, threads, args, global)?
    } else {
        let mut sink = Lines {
            writer: dsjson::Writer::new(compat),
            lines: dsjson::Lines::with_capacity(OUT_CHUNK + (64 << 10)),
            out: &mut out,
            filter: &args.filter,
            written: 0,
            filtered: 0,
        };
        let report = drive(&inputs, &mut joiner, global.quiet, &mut sink)?;
        sink.out.put(sink.lines.as_bytes())?;
        (report, sink.written, sink.filtered)
    };
    out.finish()?;
    if !global.quiet {
        let metrics = joiner.metrics();
        let msgs: u64 = report.messages.values().sum();
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "fb: {}, {msgs} messages, {} events joined ({} not learnable), {written} lines \
             written{} in {secs:.2} s ({:.0} MB/s of input)",
            crate::plural(inputs.len() as u64, "input"),
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
    Ok(report.exit_code())
}

/// The `--recover` path: each input read whole and resynchronized after
/// damage; skipped ranges are listed on stderr.
fn convert_recovering(
    inputs: &[crate::input::Input],
    joiner: &mut Joiner,
    out: &mut Output,
    args: &Args,
    global: &Global,
) -> Result<(RunReport, u64, u64), Error> {
    use std::io::Read as _;
    let mut report = RunReport::default();
    let (mut written, mut joined_before) = (0u64, joiner.metrics().joined);
    let mut filtered = 0u64;
    let mut writer = dsjson::Writer::new(joiner.options().compat);
    for input in inputs {
        report.begin(input, joiner);
        let size = input.len();
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
        let head = crate::input::Head::of(bytes.get(..4).unwrap_or(bytes));
        if head == crate::input::Head::Empty {
            report.head(input, &head, global.quiet);
            continue;
        }
        // Recovery reads on whatever the head says: damage is its trade.
        report.logs += 1;
        let limit = u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX);
        let mut skipped = Vec::new();
        let mut line = Vec::with_capacity(4096);
        for item in fb_format::recover::RecoveringReader::with_max_payload(bytes, limit) {
            // Recovery reads the map in place; another process that wants
            // to change the file waits for us to let go (see `mapped`).
            if map.is_some() && (crate::mapped::broken() || crate::mapped::tripped()) {
                return Err(Error::Msg(format!(
                    "{}: another process opened it for writing or truncated it while it was \
                     being recovered: stopped; run again once it is done",
                    input.name()
                )));
            }
            match item {
                fb_format::recover::Recovered::Message(msg) => {
                    *report.messages.entry(msg.kind.name()).or_default() += 1;
                    line.clear();
                    joiner.push_each(&msg, |ev| {
                        if args.filter.keep(ev) {
                            writer.write_line(ev, &mut line);
                            written += 1;
                        } else {
                            filtered += 1;
                        }
                    });
                    if map.is_some() && crate::mapped::tripped() {
                        return Err(Error::Msg(format!(
                            "{}: another process truncated it while it was being recovered: \
                             stopped; run again once it is done",
                            input.name()
                        )));
                    }
                    out.put(&line)?;
                }
                fb_format::recover::Recovered::Skipped(range) => skipped.push(range),
            }
        }
        report.bytes += bytes.len() as u64;
        report.shrank(input, size, global.quiet);
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
    out: &mut Output,
    threads: usize,
    args: &Args,
    global: &Global,
) -> Result<(RunReport, u64, u64), Error> {
    let total = inputs
        .iter()
        .map(crate::input::Input::len)
        .sum::<Option<u64>>();
    let mut progress = Progress::new(total, global.quiet);
    let mut report = RunReport::default();
    let (mut written, mut joined) = (0u64, 0u64);
    let mut done_bytes = 0u64;
    for input in inputs {
        report.begin(input, joiner);
        let size = input.len();
        let (mut seen_bytes, mut seen_events) = (0u64, 0u64);
        let mut on_progress = |at: fb_join::Progress| {
            progress.add(
                at.read.saturating_sub(seen_bytes),
                at.events.saturating_sub(seen_events),
            );
            seen_bytes = at.read.max(seen_bytes);
            seen_events = at.events.max(seen_events);
        };
        // Events made from the replacement bytes of a file truncated under
        // its map are not the log's (see `mapped`).
        let keep = |ev: &JoinedEvent| args.filter.keep(ev) && !crate::mapped::tripped();
        let fail = |e: fb_join::Error, out: &Output| match e {
            fb_join::Error::Write { source, .. } => out.error(source),
            other => Error::Msg(format!("{}: {other}", input.name())),
        };
        // Regular files are mapped and the workers read the payloads where
        // they are, a section at a time so that a broken lease (see
        // `mapped`) is answered within one section; pipes, and the rest of
        // a file whose lease broke, go through a reader and are copied into
        // batches.
        let mut rest = None;
        let mut summary = None;
        if let Some(map) = crate::input::map(input) {
            let head = crate::input::Head::of(map.get(..4).unwrap_or(&map));
            if !report.head(input, &head, global.quiet) {
                continue;
            }
            let limit = u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX);
            let mut releaser = crate::mapped::Releaser::default();
            let mut start = (0u64, 0u64);
            loop {
                if crate::mapped::broken() {
                    let file = map.into_rest(start.0).map_err(|e| {
                        format!("{}: reading on after byte {}: {e}", input.name(), start.0)
                    })?;
                    rest = Some((file, start));
                    break;
                }
                let (end, next) = section_end(&map, start, limit);
                let section = map
                    .get(start.0 as usize..end.0 as usize)
                    .unwrap_or_default();
                let part = fb_join::convert_parallel_section(
                    joiner,
                    section,
                    start,
                    out,
                    threads,
                    keep,
                    |at| {
                        releaser.done(&map, at.finished);
                        on_progress(at);
                    },
                )
                .map_err(|e| fail(e, out))?;
                summary = Some(add(summary, part));
                if !next {
                    break;
                }
                start = end;
            }
        } else {
            let opened = crate::input::open(input)?;
            if !report.head(input, &opened.head, global.quiet) {
                continue;
            }
            let part = fb_join::convert_parallel(
                joiner,
                opened.reader,
                out,
                threads,
                keep,
                &mut on_progress,
            )
            .map_err(|e| fail(e, out))?;
            summary = Some(part);
        }
        if let Some((file, start)) = rest {
            let part = fb_join::convert_parallel_rest(
                joiner,
                file,
                start,
                out,
                threads,
                keep,
                &mut on_progress,
            )
            .map_err(|e| fail(e, out))?;
            summary = Some(add(summary, part));
        }
        let Some(summary) = summary else { continue };
        done_bytes += seen_bytes;
        written += summary.lines;
        joined = summary.metrics.joined;
        *report.messages.entry("all").or_default() += summary.messages;
        if let Some(err) = summary.framing_error {
            report.damaged(input, err, global.quiet);
        }
        report.shrank(input, size, global.quiet);
    }
    progress.finish();
    report.bytes = done_bytes;
    Ok((report, written, joined - written))
}

/// The single-thread path's sink: lines gather here and go out in chunks
/// at least as large as the output's buffer, which then passes them
/// through without a copy. Lines are formatted in place there.
struct Lines<'a> {
    writer: dsjson::Writer,
    lines: dsjson::Lines,
    out: &'a mut Output,
    filter: &'a FilterArgs,
    written: u64,
    filtered: u64,
}

impl crate::joinargs::Sink for Lines<'_> {
    fn event(&mut self, ev: &JoinedEvent) -> Result<(), Error> {
        if self.filter.keep(ev) {
            self.writer.write_into(ev, &mut self.lines);
            self.written += 1;
        } else {
            self.filtered += 1;
        }
        Ok(())
    }

    fn message_done(&mut self) -> Result<(), Error> {
        if self.lines.len() < OUT_CHUNK {
            return Ok(());
        }
        let result = self.out.put(self.lines.as_bytes());
        self.lines.clear();
        result
    }
}

/// Bytes of a mapped log converted between two looks at its lease.
const SECTION: u64 = 256 << 20;

/// Where the section of `map` that starts at `start` (offset, message
/// index) ends: the first message boundary at least [`SECTION`] bytes on,
/// and whether more follows. A section that meets an EOF message or
/// damage runs to the end of the map, so that its reader stops there as a
/// reader of the whole log would.
fn section_end(map: &[u8], start: (u64, u64), limit: u32) -> ((u64, u64), bool) {
    let whole = ((map.len() as u64, 0), false);
    let Some(rest) = map.get(start.0 as usize..) else {
        return whole;
    };
    let framer = fb_format::Framer::with_max_payload(limit).starting_at(start.0, start.1);
    let mut reader = fb_format::SliceReader::with_framer(rest, framer);
    loop {
        match reader.next_message() {
            Ok(Some(msg)) if msg.kind == fb_format::MessageKind::Eof => return whole,
            Ok(Some(_)) => {
                if reader.offset() - start.0 >= SECTION {
                    let more = reader.offset() < map.len() as u64;
                    return ((reader.offset(), reader.index()), more);
                }
            }
            Ok(None) | Err(_) => return whole,
        }
    }
}

/// Two summaries of consecutive parts of one input as one.
fn add(before: Option<fb_join::Summary>, part: fb_join::Summary) -> fb_join::Summary {
    match before {
        None => part,
        Some(mut s) => {
            s.messages += part.messages;
            s.bytes_written += part.bytes_written;
            s.lines += part.lines;
            s.metrics = part.metrics;
            s.diagnostics = part.diagnostics;
            s.framing_error = part.framing_error;
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::joinargs::parse_time;

    #[test]
    fn times_parse() {
        assert_eq!(parse_time("1970-01-02"), Ok(86_400));
        assert_eq!(parse_time("1970-01-01T00:01:05Z"), Ok(65));
        assert_eq!(parse_time("1970-01-01T00:01"), Ok(60));
        assert_eq!(parse_time("1970-01-01T02:01:05+02:00"), Ok(65));
        assert_eq!(parse_time("1970-01-01T00:01:05.75Z"), Ok(65));
        assert_eq!(parse_time("2021-05-18"), parse_time("2021-05-18T00:00:00Z"));
        for bad in [
            "yesterday",
            "2021-13-01",
            "2021-02-31",
            "2021-02-29",
            "2021-05-18T25:00",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        assert!(parse_time("2021-02-31").unwrap_err().contains("2021-02-31"));
    }
}
