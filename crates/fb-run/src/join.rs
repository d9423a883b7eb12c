//! The client's raw interaction and observation streams (and multistep
//! episodes) joined into a joined log (`fb join`), with the loop's
//! configuration in its CHECKPOINT.
//!
//! The join itself is [`fb_join::rawjoin`]; here the inputs are opened
//! and each checked to be the raw stream it is given as, the groups
//! written as REGULAR messages of bounded size (a group never split; a
//! DedupInfo starts a message), each event stamped with the time the
//! request chooses (its client time by default, or the time of the join
//! when it has none), and what joined nothing reported, or written to a
//! raw stream of its own. Every check that can fail comes before the
//! output is created, and a join that fails leaves no output behind.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use fb_format::raw::{Content, RawStreamReader};
use fb_format::{Problem, RewardFunction};
use fb_join::rawjoin::{join as join_streams, Config, Input as RawInput, Item, Read, Report, Side};
use fb_join::LearningMode;
use fb_schema::{LearningModeType, PayloadType, TimeStamp};
use fb_writer::raw::RawStreamWriter;
use fb_writer::{CheckpointConfig, LogWriter};

use crate::error::Error;
use crate::input::{Input, Whole};
use crate::output::{Existing, How, Output};
use crate::report::{Note, Observer};

/// Which time becomes a joined event's timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// The event's client time; the time of the join when it has none.
    Client,
    /// The time of the join, for every event.
    Join,
}

impl Stamp {
    /// The names `--timestamp` takes.
    pub const NAMES: &'static [&'static str] = &["client", "join"];
}

impl FromStr for Stamp {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "client" => Ok(Self::Client),
            "join" => Ok(Self::Join),
            other => Err(format!("unknown time `{other}`: use client or join")),
        }
    }
}

/// Parses `500ms`, `30s`, `10m`, `2h`, `1d` (or a number of seconds) into
/// microseconds.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let micros = match unit {
        "" | "s" => 1e6,
        "ms" => 1e3,
        "m" | "min" => 60e6,
        "h" => 3600e6,
        "d" => 86400e6,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}`: use ms, s, m, h or d (e.g. 10m)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration: expected e.g. 30s, 10m, 2h"))?;
    let total = value * micros;
    if !(0.0..=1e17).contains(&total) {
        return Err(format!(
            "`{s}`: give a duration from 0 to a few thousand years"
        ));
    }
    Ok(total as i64)
}

/// A duration as the header and messages state it.
pub fn show_duration(micros: i64) -> String {
    format!("{}s", micros as f64 / 1e6)
}

/// Microseconds since 1970 as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn show_time(micros: i64) -> String {
    let (secs, us) = (micros.div_euclid(1_000_000), micros.rem_euclid(1_000_000));
    let (days, of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = fb_schema::calendar::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{us:06}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// What to join and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The problem type in the checkpoint (the first decision's when
    /// `None`).
    pub problem_type: Option<Problem>,
    /// The reward function in the checkpoint.
    pub reward_function: RewardFunction,
    /// The default reward in the checkpoint.
    pub default_reward: f32,
    /// The learning mode in the checkpoint.
    pub learning_mode: LearningMode,
    /// The checkpoint asks converters to use the client time.
    pub use_client_time: bool,
    /// Join only inside this window after a decision (µs).
    pub eud: Option<i64>,
    /// How far a stream may go back in time (µs).
    pub skew: i64,
    /// Read on past damage.
    pub recover: bool,
    /// Which time becomes each joined event's timestamp.
    pub timestamp: Stamp,
    /// Largest REGULAR message written.
    pub max_message_size: u64,
    /// Whether outputs that exist are replaced.
    pub existing: Existing,
    /// Whether the streams are mapped or read.
    pub maps: crate::input::Maps,
}

/// How a join went.
#[derive(Debug)]
pub struct Joined {
    /// What joined, what did not and why, damage.
    pub report: Report,
    /// Events without a client time, stamped with the time of the join.
    pub unstamped: u64,
    /// Bytes of the inputs.
    pub bytes: u64,
    /// Where the output went instead of its target, when the join met
    /// damage without recovery.
    pub partial: Option<PathBuf>,
}

/// Joins the raw streams at `paths` (each with the side it is given as)
/// into a joined log at `output`, the observations that joined nothing to
/// `unjoined_to` when given, as `request` says; tells `observer` what it
/// warns of and its progress.
pub fn join(
    request: &Request,
    paths: &[(Side, PathBuf)],
    output: &Path,
    unjoined_to: Option<&Path>,
    observer: &mut dyn Observer,
) -> Result<Joined, Error> {
    let mut inputs = Vec::new();
    for (side, path) in paths {
        inputs.push((
            *side,
            crate::input::whole(&Input::File(path.clone()), request.maps)?,
        ));
    }
    let name = |k: usize| {
        paths
            .get(k)
            .map_or("?".into(), |(_, p)| p.display().to_string())
    };
    let empty = check_inputs(paths, &inputs, observer)?;
    let problem = match request.problem_type.or_else(|| first_problem(&inputs)) {
        Some(p) => p,
        None => {
            let given: Vec<(String, bool)> = paths
                .iter()
                .zip(&empty)
                .filter(|((side, _), _)| *side == Side::Interactions)
                .map(|((_, path), empty)| (path.display().to_string(), *empty))
                .collect();
            let names: Vec<&str> = given.iter().map(|(n, _)| n.as_str()).collect();
            let why = if given.iter().all(|(_, empty)| *empty) {
                "is empty"
            } else {
                "holds no decision"
            };
            return Err(Error::Msg(format!(
                "the interaction stream ({}) {why}, so nothing tells the problem type: give \
                 the client's decisions as --interactions, or --problem-type to join none",
                names.join(", ")
            )));
        }
    };
    let checkpoint = CheckpointConfig {
        reward_function: request.reward_function.to_wire(),
        default_reward: request.default_reward,
        learning_mode: match request.learning_mode {
            LearningMode::Online => LearningModeType::Online,
            LearningMode::Apprentice => LearningModeType::Apprentice,
            LearningMode::LoggingOnly => LearningModeType::LoggingOnly,
            LearningMode::Other(v) => LearningModeType(v),
        },
        problem_type: problem.to_wire(),
        use_client_time: request.use_client_time,
    };
    let all: Vec<Input> = paths.iter().map(|(_, p)| Input::File(p.clone())).collect();
    let how = How::binary(request.existing);
    let mut out = Output::create(Some(output), &all, how)?;
    let mut unjoined = match unjoined_to {
        Some(path) => Some(RawStreamWriter::new(Output::create(Some(path), &all, how)?)),
        None => None,
    };
    let target = out.target().to_string();
    let join_time = now();
    let failed = |e: fb_writer::Error| Error::writing(&target, e);
    let mut writer = LogWriter::new(&mut out).with_max_message_size(
        usize::try_from(request.max_message_size)
            .unwrap_or(usize::MAX)
            .max(fb_writer::MAX_MESSAGE_SIZE),
    );
    writer.file_magic(1).map_err(failed)?;
    let eud = request.eud.map_or("none".to_string(), show_duration);
    let skew = show_duration(request.skew);
    writer
        .header(
            &[
                ("joiner", "fb join"),
                ("joiner.version", env!("CARGO_PKG_VERSION")),
                ("eud", &eud),
                ("skew", &skew),
            ],
            join_time,
        )
        .map_err(failed)?;
    writer.checkpoint(&checkpoint).map_err(failed)?;

    let raw_inputs: Vec<RawInput<'_>> = inputs
        .iter()
        .map(|(side, bytes)| RawInput { side: *side, bytes })
        .collect();
    let cfg = Config {
        eud: request.eud,
        skew: request.skew,
        recover: request.recover,
    };
    let max = request.max_message_size;
    let mut in_message = 0u64;
    let mut held: Vec<&[u8]> = Vec::new();
    let mut unstamped = 0u64;
    let mut stamp = |r: &Read<'_>| match (request.timestamp, r.event.client_time) {
        (Stamp::Client, Some(time)) => time,
        (Stamp::Client, None) => {
            unstamped += 1;
            join_time
        }
        (Stamp::Join, _) => join_time,
    };
    let io = |e: fb_writer::Error| std::io::Error::other(e.to_string());
    // Told the bytes of the events joined or set aside: a fair share of
    // the inputs' bytes, whose framing is all they lack.
    let total: u64 = inputs.iter().map(|(_, bytes)| bytes.len() as u64).sum();
    observer.start(Some(total));
    let mut sink = |item| -> std::io::Result<()> {
        let item: Item<'_> = item;
        let (bytes, events) = match &item {
            Item::Dedup(read) | Item::Unjoined(read, _) => (read.event.bytes.len(), 1),
            Item::Group(reads) => (reads.iter().map(|r| r.event.bytes.len()).sum(), reads.len()),
        };
        observer.progress(bytes as u64, events as u64);
        match item {
            Item::Dedup(read) => {
                if in_message > 0 {
                    writer.end_regular().map_err(io)?;
                }
                writer
                    .push_raw_event(Some(read.event.bytes), Some(stamp(&read)))
                    .map_err(io)?;
                in_message = read.event.bytes.len() as u64 + 32;
            }
            Item::Group(events) => {
                let size: u64 = events.iter().map(|r| r.event.bytes.len() as u64 + 32).sum();
                if in_message > 0 && in_message + size > max {
                    writer.end_regular().map_err(io)?;
                    in_message = 0;
                }
                for read in &events {
                    writer
                        .push_raw_event(Some(read.event.bytes), Some(stamp(read)))
                        .map_err(io)?;
                }
                in_message += size;
            }
            Item::Unjoined(read, _) => {
                if let Some(w) = unjoined.as_mut() {
                    held.push(read.event.bytes);
                    if held.len() >= 256 {
                        w.batch(&held, "IDENTITY").map_err(io)?;
                        held.clear();
                    }
                }
            }
        }
        Ok(())
    };
    let mut release = |input: usize, range: Range<u64>| {
        if let Some((_, Whole::Mapped(map))) = inputs.get(input) {
            // The bytes before the range are free too (or were given back
            // by the pass that calls): from the range's first page on.
            map.release(range.start / PAGE * PAGE, range.end);
        }
    };
    let joined = join_streams(&raw_inputs, cfg, &mut sink, &mut release);
    observer.finish();
    let report = match joined {
        Ok(report) => report,
        Err(fb_join::Error::NoClientTime {
            input,
            offset,
            message,
            event_id,
        }) => {
            return Err(Error::Msg(format!(
                "{}: batch {message} at byte {offset}: event `{event_id}` has no client time, \
                 so --eud cannot place it in a window: join without --eud (events are then \
                 stamped with the time of the join)",
                name(input)
            )))
        }
        Err(e) => return Err(Error::Msg(format!("{target}: {e}"))),
    };
    if in_message > 0 {
        writer.end_regular().map_err(failed)?;
    }
    writer.eof().map_err(failed)?;
    writer.flush().map_err(failed)?;
    drop(writer);
    if let Some(mut w) = unjoined {
        if !held.is_empty() {
            w.batch(&held, "IDENTITY")
                .map_err(|e| Error::Msg(format!("unjoined observations: {e}")))?;
        }
        w.flush()
            .map_err(|e| Error::Msg(format!("unjoined observations: {e}")))?;
        w.into_inner().finish()?;
    }
    // A join that met damage without recovery ends in error: its output
    // never replaces the old one, and goes aside as OUT.partial.
    let partial = match report.damage.is_empty() || request.recover {
        true => {
            out.finish()?;
            None
        }
        false => out.finish_partial()?,
    };
    Ok(Joined {
        report,
        unstamped,
        bytes: inputs.iter().map(|(_, b)| b.len() as u64).sum(),
        partial,
    })
}

/// What an event of this payload type is, for messages.
fn what_event(kind: PayloadType) -> String {
    match kind {
        PayloadType::Outcome => "an outcome".into(),
        PayloadType::Episode => "an episode event".into(),
        PayloadType::DedupInfo => "a DedupInfo".into(),
        other => format!("a {} decision", other.variant_name().unwrap_or("?")),
    }
}

/// Checks that each input is the raw stream it is given as (not a joined
/// log, not another stream); warns of empty ones, and returns whether
/// each is empty.
fn check_inputs(
    paths: &[(Side, PathBuf)],
    inputs: &[(Side, Whole)],
    observer: &mut dyn Observer,
) -> Result<Vec<bool>, Error> {
    let mut empty = Vec::new();
    for ((side, path), (_, bytes)) in paths.iter().zip(inputs) {
        let (name, given) = (path.display(), side.name());
        let content = Content::of(bytes);
        match content {
            Content::Empty => observer.note(Note::Warning {
                input: &name.to_string(),
                what: &format!("empty file: no {given} read from it"),
            }),
            Content::JoinedLog(kind) => {
                return Err(Error::Msg(format!(
                    "{name} is a joined binary log (it starts with a {} message), not a raw \
                     stream of {given}: fb join joins the client's raw streams; read a joined \
                     log with fb convert, fb stats or fb export",
                    kind.name()
                )))
            }
            Content::Unknown(why) => {
                return Err(Error::Msg(format!(
                    "{name} is not a raw stream of {given}: {why}"
                )))
            }
            Content::Raw(Some(kind)) if Side::of(kind) != *side => {
                let holds = Side::of(kind).name();
                return Err(Error::Msg(format!(
                    "{name} holds {holds} (its first event is {}), but it is given as \
                     --{given}: give it as --{holds}",
                    what_event(kind)
                )));
            }
            Content::Raw(_) => {}
        }
        empty.push(content == Content::Empty);
    }
    Ok(empty)
}

/// The problem type of the first decision of the interaction streams.
fn first_problem(inputs: &[(Side, Whole)]) -> Option<Problem> {
    for (side, bytes) in inputs {
        if *side != Side::Interactions {
            continue;
        }
        let mut reader = RawStreamReader::new(bytes);
        while let Ok(Some(msg)) = reader.next_message() {
            let Ok(events) = msg.raw_events() else { break };
            for e in events {
                let problem = match e.kind {
                    PayloadType::CB => Problem::Cb,
                    PayloadType::CCB => Problem::Ccb,
                    PayloadType::Slates => Problem::Slates,
                    PayloadType::CA => Problem::Ca,
                    PayloadType::MultiStep => Problem::Multistep,
                    _ => continue,
                };
                return Some(problem);
            }
        }
    }
    None
}

/// Now, as a `TimeStamp` (the stamp of events without client time).
fn now() -> TimeStamp {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    fb_writer::synth::timestamp_from_ticks(
        since.as_secs() * fb_writer::synth::TICKS_PER_SECOND
            + u64::from(since.subsec_nanos() / 100),
    )
}

/// Bytes of a page of memory, to round the ranges given back.
const PAGE: u64 = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_to_microseconds() {
        // (text, microseconds)
        for (text, micros) in [
            ("0", 0),
            ("30s", 30_000_000),
            ("1.5s", 1_500_000),
            ("500ms", 500_000),
            ("10m", 600_000_000),
            ("2h", 7_200_000_000),
            ("1d", 86_400_000_000),
        ] {
            assert_eq!(parse_duration(text), Ok(micros), "{text}");
        }
        for bad in ["", "m", "10x", "-5s", "1e30s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
