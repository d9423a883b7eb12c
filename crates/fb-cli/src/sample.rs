//! `fb sample`: a uniform random sample of a log's decisions, reading only
//! the blocks of its index that hold them.
//!
//! The sample is a set of decision ordinals (the k-th decision of the log,
//! counted as the index counts them), drawn by selection sampling (Knuth's
//! Algorithm S) from a generator seeded by `--seed`: every set of that size
//! is equally likely, and the same seed and log give the same sample. The
//! index's message tables say which messages hold the chosen ordinals;
//! only those are read: their decisions counted in order to find the
//! chosen ones' ids, then joined (each after the checkpoint in force)
//! keeping those ids.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fb_format::index::Index;
use fb_format::{Framer, MessageKind, SliceReader};
use fb_join::dsjson::LinesSink;
use fb_join::{JoinedEvent, Pipeline, Source};
use fb_schema::PayloadType;

use crate::error::Error;
use crate::input::Input;
use crate::joinargs::JoinArgs;
use crate::output::{Compress, Output};
use crate::Global;

/// Arguments of `fb sample`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The log to sample (one file; its index is used when fresh, built in
    /// memory otherwise).
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
    #[arg(long, value_name = "F")]
    pub fraction: Option<f64>,

    /// The generator's seed: the same seed gives the same sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// DSJSON lines (`dsjson`, as `fb convert` writes them) or a valid
    /// joined log (`log`) holding the drawn decisions and their outcomes.
    #[arg(long, default_value = "dsjson", value_parser = ["dsjson", "log"])]
    pub format: String,

    /// Write here instead of standard output (`.gz`, `.zst` compress
    /// DSJSON).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// How to join (DSJSON).
    #[command(flatten)]
    pub join: JoinArgs,
}

/// SplitMix64: a small, well-mixed generator; enough for sampling, and
/// the same on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `k` of the ordinals `0..total`, in order, each set of `k` equally
/// likely (Algorithm S).
pub fn choose(total: u64, k: u64, seed: u64) -> Vec<u64> {
    let k = k.min(total);
    let mut rng = SplitMix(seed);
    let mut out = Vec::with_capacity(usize::try_from(k).unwrap_or(0).min(1 << 24));
    let mut i = 0u64;
    while (out.len() as u64) < k && i < total {
        let left = (k - out.len() as u64) as f64;
        if ((total - i) as f64) * rng.unit() < left {
            out.push(i);
        }
        i += 1;
    }
    out
}

/// A message holding drawn decisions: where it is, and their ids.
struct Drawn<'a> {
    start: u64,
    end: u64,
    ids: HashSet<&'a str>,
}

/// The messages that hold the `chosen` ordinals (sorted), found through
/// each block's message table, with the ids of the drawn decisions (read
/// from those messages alone).
fn drawn<'a>(log: &'a [u8], index: &Index, chosen: &[u64]) -> Result<Vec<Drawn<'a>>, Error> {
    let mut out = Vec::new();
    let mut first = 0u64;
    let mut next = chosen.iter().copied().peekable();
    for block in &index.blocks {
        let block_end = first + u64::from(block.decisions);
        if next.peek().is_none_or(|&o| o >= block_end) {
            first = block_end;
            continue;
        }
        let messages = block.messages();
        if messages.is_empty() {
            return Err(Error::Msg(
                "the index's message table does not add up: run fb index".into(),
            ));
        }
        for (start, len, decisions) in messages {
            let end = first + u64::from(decisions);
            let mut local = Vec::new();
            while let Some(o) = next.next_if(|&o| o < end) {
                local.push(o - first);
            }
            first = end;
            if local.is_empty() {
                continue;
            }
            let bytes = slice(log, start, start + len)?;
            let msg = SliceReader::with_framer(bytes, Framer::default().starting_at(start, 0))
                .next_message()
                .map_err(|e| Error::Msg(e.to_string()))?
                .ok_or_else(|| Error::Msg(format!("no message at byte {start}: run fb index")))?;
            let mut ids = HashSet::new();
            let mut ordinal = 0u64;
            let mut want = local.iter().peekable();
            for view in msg.events().map_err(|e| Error::Msg(e.to_string()))? {
                let view = view.map_err(|e| Error::Msg(e.to_string()))?;
                if !fb_format::index::is_decision(view.payload_type()) {
                    continue;
                }
                if want.next_if(|&&o| o == ordinal).is_some() {
                    ids.insert(view.id);
                }
                ordinal += 1;
            }
            out.push(Drawn {
                start,
                end: start + len,
                ids,
            });
        }
        first = block_end;
    }
    Ok(out)
}

fn slice(log: &[u8], start: u64, end: u64) -> Result<&[u8], Error> {
    fb_format::index::span(log, start, end)
        .ok_or_else(|| Error::Msg(format!("the index points past the log ({start}..{end})")))
}

/// Draws the sample and writes it; exit 0, or 1 when the log has no
/// decision.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let input = Input::File(args.input.clone());
    let log = crate::input::whole(&input)?;
    let index = match crate::index::load(&args.input, &log, global.quiet)? {
        Some(index) => index,
        None => {
            if !global.quiet {
                eprintln!(
                    "fb: {} has no index: reading it whole to count its decisions \
                     (`fb index` keeps one beside it)",
                    args.input.display()
                );
            }
            Index::build(&log).map_err(|e| Error::Msg(format!("{}: {e}", args.input.display())))?
        }
    };
    let total = index.decisions();
    let k = match (args.decisions, args.fraction) {
        (Some(n), _) => n,
        (None, Some(f)) if (0.0..=1.0).contains(&f) => (f * total as f64).round() as u64,
        (None, Some(f)) => {
            return Err(Error::Msg(format!(
                "--fraction {f}: give a share from 0 to 1"
            )))
        }
        (None, None) => 0,
    };
    let chosen = choose(total, k, args.seed);
    let compress = match args.format.as_str() {
        "log" => Compress::Never,
        _ => Compress::ByExtension {
            level: None,
            threads: 1,
        },
    };
    let mut out = Output::create(args.output.as_deref(), &[input], compress)?;
    let (blocks, read) = match args.format.as_str() {
        "log" => write_log(&log, &index, &chosen, &mut out)?,
        _ => write_lines(&log, &index, &chosen, args, &mut out)?,
    };
    out.finish()?;
    if !global.quiet {
        eprintln!(
            "fb: {} of {total} decisions drawn (seed {}); {blocks} messages read, {read} of {} bytes",
            chosen.len(),
            args.seed,
            log.len()
        );
    }
    Ok(if total == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn write_lines(
    log: &[u8],
    index: &Index,
    chosen: &[u64],
    args: &Args,
    out: &mut Output,
) -> Result<(usize, u64), Error> {
    let opts = args.join.options();
    let compat = opts.compat;
    let drawn = drawn(log, index, chosen)?;
    let ids: HashSet<&str> = drawn.iter().flat_map(|d| d.ids.iter().copied()).collect();
    let keep = |ev: &JoinedEvent<'_>| ids.contains(ev.event_id.as_str());
    let mut pipeline = Pipeline::new(opts, keep, LinesSink::new(&mut *out, compat), 1);
    // The drawn messages, each after the checkpoint in force when that
    // changes, gathered into one buffer and joined in one go: a join per
    // message would cost more than the message.
    let mut gathered = Vec::new();
    let mut config = None;
    for d in &drawn {
        if let Some(c) = index.checkpoint_before(d.start) {
            if config != Some(c.offset) {
                gathered.extend_from_slice(slice(log, c.offset, c.end())?);
                config = Some(c.offset);
            }
        }
        gathered.extend_from_slice(slice(log, d.start, d.end)?);
    }
    let read = gathered.len() as u64;
    pipeline
        .feed(Source::Slice(&gathered), (0, 0), &|| false, &mut |_| {})
        .map_err(|e| Error::Msg(e.to_string()))?;
    Ok((drawn.len(), read))
}

fn write_log(
    log: &[u8],
    index: &Index,
    chosen: &[u64],
    out: &mut Output,
) -> Result<(usize, u64), Error> {
    let failed = |e: fb_writer::Error| Error::Msg(format!("writing the sample: {e}"));
    let mut writer = fb_writer::LogWriter::new(&mut *out);
    writer.file_magic(1).map_err(failed)?;
    // The log's HEADER, when it has one, before its first REGULAR.
    for msg in SliceReader::new(log) {
        let msg = msg.map_err(|e| Error::Msg(e.to_string()))?;
        match msg.kind {
            MessageKind::Header => {
                writer
                    .message(msg.kind.type_id(), msg.payload)
                    .map_err(failed)?;
                break;
            }
            MessageKind::Regular | MessageKind::Checkpoint => break,
            _ => {}
        }
    }
    let mut read = 0u64;
    let mut config = None;
    let drawn = drawn(log, index, chosen)?;
    for d in &drawn {
        if let Some(c) = index.checkpoint_before(d.start) {
            if config != Some(c.offset) {
                let cp = slice(log, c.offset, c.end())?;
                let msg = SliceReader::new(cp)
                    .next_message()
                    .ok()
                    .flatten()
                    .ok_or_else(|| {
                        Error::Msg("the index names a checkpoint that is not there".into())
                    })?;
                writer
                    .message(msg.kind.type_id(), msg.payload)
                    .map_err(failed)?;
                config = Some(c.offset);
            }
        }
        let bytes = slice(log, d.start, d.end)?;
        read += bytes.len() as u64;
        let msg = SliceReader::with_framer(bytes, Framer::default().starting_at(d.start, 0))
            .next_message()
            .map_err(|e| Error::Msg(e.to_string()))?
            .ok_or_else(|| Error::Msg(format!("no message at byte {}", d.start)))?;
        let (_, start) = fb_schema::event_list(msg.payload)
            .ok_or_else(|| Error::Msg(format!("message at byte {}: no event list", msg.offset)))?;
        let events = msg.events().map_err(|e| Error::Msg(e.to_string()))?;
        for (position, view) in events.enumerate() {
            let view = view.map_err(|e| Error::Msg(e.to_string()))?;
            // The drawn decisions, their outcomes, and the message's dedup
            // entries their contexts may use.
            if view.payload_type() == PayloadType::DedupInfo || d.ids.contains(view.id) {
                let (_, raw, stamp) = fb_schema::listed_event(msg.payload, start, position)
                    .map_err(|why| {
                        Error::Msg(format!("event {position} at byte {}: {why}", msg.offset))
                    })?;
                writer
                    .push_raw_event(Some(raw), Some(stamp))
                    .map_err(failed)?;
            }
        }
        writer.end_regular().map_err(failed)?;
    }
    writer.eof().map_err(failed)?;
    writer.flush().map_err(failed)?;
    drop(writer);
    out.flush().map_err(|e| out.error(e))?;
    Ok((drawn.len(), read))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_draws_k_distinct_sorted_ordinals_the_same_for_a_seed() {
        // (total, k)
        for (total, k) in [(0, 5), (10, 0), (10, 10), (10, 20), (1000, 37)] {
            let a = choose(total, k, 3);
            assert_eq!(a.len() as u64, k.min(total), "{total} {k}");
            assert!(a.windows(2).all(|w| w[0] < w[1]), "{total} {k}");
            assert!(a.iter().all(|&o| o < total));
            assert_eq!(a, choose(total, k, 3));
        }
        assert_ne!(choose(1000, 37, 3), choose(1000, 37, 4));
    }

    /// Positions drawn from 100,000 decisions fall evenly over the log: a
    /// chi-square test over 20 equal parts, deterministic for its seed.
    #[test]
    fn the_sample_is_uniform() {
        let total = 100_000u64;
        let chosen = choose(total, 10_000, 42);
        let mut counts = [0f64; 20];
        for o in &chosen {
            counts[(o * 20 / total) as usize] += 1.0;
        }
        let expected = chosen.len() as f64 / 20.0;
        let chi2: f64 = counts
            .iter()
            .map(|c| (c - expected).powi(2) / expected)
            .sum();
        // 19 degrees of freedom: 43.82 is the 0.1% critical value.
        assert!(chi2 < 43.82, "chi-square {chi2:.1} over {counts:?}");
        // And not suspiciously even either (1st percentile: 7.63).
        assert!(chi2 > 7.63, "chi-square {chi2:.1}: too even to be random");
    }
}
