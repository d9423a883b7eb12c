//! Flags shared by the commands that join (convert, stats), and the loop
//! that drives a joiner over several inputs as one stream.

use fb_format::{Framer, Message, MessageKind, SliceReader, StreamReader};
use fb_join::{
    Compat, JoinedEvent, Joiner, LearningMode, Options, Overrides, Problem, RewardFunction,
    StepTransform,
};

use crate::error::Error;
use crate::input::{self, Head, Input};
use crate::mapped::{self, Releaser};
use crate::progress::Progress;

/// How to join: the reference's overrides and our options.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinArgs {
    /// `sane` fixes the reference's quirks (README); `reference` computes
    /// and writes exactly what the reference does, quirks included (for
    /// stats: the rewards and metrics the reference would compute).
    #[arg(long, value_name = "MODE", default_value = "sane", value_parser = named::<Compat>(Compat::NAMES))]
    pub compat: Compat,

    /// Reward function for every checkpoint.
    #[arg(long, value_name = "F", value_parser = named::<RewardFunction>(RewardFunction::NAMES))]
    pub reward_function: Option<RewardFunction>,

    /// Reward of a decision without outcomes, for every checkpoint.
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub default_reward: Option<f32>,

    /// Learning mode for every checkpoint.
    #[arg(long, value_name = "MODE", value_parser = named::<LearningMode>(LearningMode::NAMES))]
    pub learning_mode: Option<LearningMode>,

    /// Problem type for every checkpoint.
    #[arg(long, value_name = "TYPE", value_parser = named::<Problem>(Problem::NAMES))]
    pub problem_type: Option<Problem>,

    /// Use client timestamps instead of enqueued ones, for every
    /// checkpoint (without it, each checkpoint says).
    #[arg(long)]
    pub use_client_time: bool,

    /// Join multistep episodes.
    #[arg(long)]
    pub multistep: bool,

    /// Multistep reward transform.
    #[arg(long, value_name = "HOW", default_value = "suffix_mean", value_parser = named::<StepTransform>(StepTransform::NAMES))]
    pub multistep_reward: StepTransform,
}

/// Which joined events to keep: the same flags for convert and stats.
#[derive(Debug, Clone, clap::Args)]
pub struct FilterArgs {
    /// Whether to write deferred events that were never activated (they
    /// carry "_skipLearn":true).
    #[arg(long, value_name = "WHAT", default_value = "include", value_parser = ["include", "exclude"])]
    pub skip_learn: String,

    /// Only events at or after this time (event time): `2021-05-18`,
    /// `2021-05-18T13:28:29Z` or `2021-05-18T15:28:29+02:00` (no offset:
    /// UTC).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub since: Option<i64>,

    /// Only events before this time (event time), written as for --since.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub until: Option<i64>,

    /// Only events of these problem types (comma-separated).
    #[arg(long, value_name = "TYPES", value_delimiter = ',', value_parser = named::<Problem>(Problem::NAMES))]
    pub only: Vec<Problem>,
}

impl FilterArgs {
    /// Refuses filters that can keep nothing.
    pub fn check(&self) -> Result<(), Error> {
        match (self.since, self.until) {
            (Some(since), Some(until)) if since >= until => Err(Error::Msg(
                "--since is not before --until: no event could be kept".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Whether `ev` passes every filter.
    pub fn keep(&self, ev: &JoinedEvent) -> bool {
        if self.skip_learn == "exclude" && ev.skip_learn {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let secs = fb_join::time::key(&ev.time).0;
            if self.since.is_some_and(|s| secs < s) || self.until.is_some_and(|u| secs >= u) {
                return false;
            }
        }
        self.only.is_empty() || self.only.contains(&ev.kind)
    }
}

/// Parses a time into seconds since 1970 (UTC): an RFC 3339 time with `Z`
/// or an offset, or a date and time without one (taken as UTC), or a date
/// (its midnight, UTC). Dates are checked against the calendar.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let err = |why: String| {
        format!(
            "`{s}` is not a time ({why}): expected 2021-05-18, 2021-05-18T13:28:29Z or \
             2021-05-18T15:28:29+02:00"
        )
    };
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Ok(ts.as_second());
    }
    let civil = match s.parse::<jiff::civil::DateTime>() {
        Ok(dt) => dt,
        Err(e) => match s.parse::<jiff::civil::Date>() {
            Ok(d) => d.to_datetime(jiff::civil::Time::midnight()),
            Err(_) => return Err(err(e.to_string())),
        },
    };
    jiff::tz::Offset::UTC
        .to_timestamp(civil)
        .map(|ts| ts.as_second())
        .map_err(|e| err(e.to_string()))
}

/// A parser that takes exactly `names` (listed in --help and in errors)
/// and turns the one given into a value with its `FromStr`.
pub fn named<T>(names: &'static [&'static str]) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names)
        .try_map(|s: String| s.parse::<T>().map_err(|e| e.to_string()))
}

impl JoinArgs {
    /// Joiner options from the flags.
    pub fn options(&self) -> Options {
        Options {
            overrides: Overrides {
                reward_function: self.reward_function,
                default_reward: self.default_reward,
                learning_mode: self.learning_mode,
                problem_type: self.problem_type,
                use_client_time: self.use_client_time.then_some(true),
            },
            compat: self.compat,
            multistep: self.multistep,
            multistep_reward: self.multistep_reward,
            ..Options::default()
        }
    }
}

/// What a run over the inputs saw besides joined events.
#[derive(Debug, Default, Clone)]
pub struct RunReport {
    /// Messages read, per type name.
    pub messages: std::collections::BTreeMap<&'static str, u64>,
    /// Inputs that ended with a framing error or are not logs.
    pub damaged: Vec<String>,
    /// Inputs read as logs (damaged ones included, those that are not logs
    /// or are empty left out).
    pub logs: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Where each input's diagnostics start among the joiner's kept ones,
    /// and its name: diagnostics of multi-input runs name their file.
    pub starts: Vec<(usize, String)>,
}

impl RunReport {
    /// Notes that `input` starts here, its diagnostics after the first
    /// `kept` ones of `joiner`.
    pub fn begin(&mut self, input: &Input, joiner: &Joiner) {
        self.starts
            .push((joiner.diagnostics().kept().len(), input.name()));
    }

    /// The input that diagnostic number `index` (among the kept ones)
    /// came from.
    pub fn file_of(&self, index: usize) -> Option<&str> {
        let at = self.starts.partition_point(|(start, _)| *start <= index);
        at.checked_sub(1)
            .and_then(|k| self.starts.get(k))
            .map(|(_, name)| name.as_str())
    }
    /// Records (and unless `quiet`, says) that `input` is damaged.
    pub fn damaged(&mut self, input: &Input, why: impl std::fmt::Display, quiet: bool) {
        let why = format!("{}: {why}", input.name());
        if !quiet {
            eprintln!("fb: {why}");
        }
        self.damaged.push(why);
    }

    /// Takes in what the head of `input` says: false when it is not to be
    /// read (not a log: recorded as damaged; empty: a warning).
    pub fn head(&mut self, input: &Input, head: &Head, quiet: bool) -> bool {
        if let Head::NotALog(why) = head {
            self.damaged(input, why, quiet);
            return false;
        }
        if let (Some(w), false) = (head.warning(), quiet) {
            eprintln!("fb: warning: {}: {w}", input.name());
        }
        if *head == Head::Empty {
            return false;
        }
        self.logs += 1;
        true
    }

    /// Reports `input` as damaged when it is shorter now than the `before`
    /// bytes it had when reading began, or a map of it was found cut (see
    /// [`mapped::tripped`]): another process truncated it while it was
    /// read.
    pub fn shrank(&mut self, input: &Input, before: Option<u64>, quiet: bool) {
        let now = input.len();
        let cut = matches!((before, now), (Some(b), Some(n)) if n < b);
        if cut || mapped::tripped() {
            let sizes = match (before, now) {
                (Some(b), Some(n)) => format!(" from {b} to {n} bytes"),
                _ => String::new(),
            };
            self.damaged(
                input,
                format!(
                    "shrank{sizes} while it was read (another process truncated it): what \
                     was read before the cut is converted, nothing after"
                ),
                quiet,
            );
        }
    }

    /// Exit 0, or 1 when an input was damaged or not a log.
    pub fn exit_code(&self) -> std::process::ExitCode {
        if self.damaged.is_empty() {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::from(1)
        }
    }
}

/// Where [`drive`] hands what it joins.
pub trait Sink {
    /// A joined event.
    fn event(&mut self, ev: &JoinedEvent) -> Result<(), Error>;

    /// Every event of a message was handed over: the time to write output.
    /// Writing only here, never in the middle of a message, means that an
    /// output that blocks never holds a mapped message half read.
    fn message_done(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

impl<F: FnMut(&JoinedEvent) -> Result<(), Error>> Sink for F {
    fn event(&mut self, ev: &JoinedEvent) -> Result<(), Error> {
        self(ev)
    }
}

/// Runs `joiner` over `inputs` in order (one stream) and hands every joined
/// event to `on_event`. Damaged inputs are reported and reading goes on
/// with the next one. Regular files are memory-mapped (their consumed pages
/// released as reading goes, so memory stays flat); pipes are streamed
/// through one reused buffer.
pub fn drive(
    inputs: &[Input],
    joiner: &mut Joiner,
    quiet: bool,
    sink: &mut impl Sink,
) -> Result<RunReport, Error> {
    let total = inputs.iter().map(Input::len).sum::<Option<u64>>();
    let mut progress = Progress::new(total, quiet);
    let mut report = RunReport::default();
    let limit = u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX);
    // Counted apart: a map entry per message showed in profiles.
    let mut regular = 0u64;
    for input in inputs {
        report.begin(input, joiner);
        let size = input.len();
        let mut step = |joiner: &mut Joiner,
                        msg: &Message<'_>,
                        report: &mut RunReport|
         -> Result<u64, Error> {
            if msg.kind == MessageKind::Regular {
                regular += 1;
            } else {
                *report.messages.entry(msg.kind.name()).or_default() += 1;
            }
            let mut events = 0;
            let mut failed = Ok(());
            joiner.push_each(msg, |ev| {
                // Events made from the replacement bytes of a file truncated
                // under its map are not the log's.
                if failed.is_ok() && !mapped::tripped() {
                    failed = sink.event(ev);
                    events += 1;
                }
            });
            failed?;
            sink.message_done()?;
            Ok(events)
        };
        // A mapped file is read from the map until its lease is broken (see
        // `mapped`), then through `read` from the next message on.
        let mut resume: Option<(Box<dyn std::io::Read + Send>, Framer)> = None;
        if let Some(map) = input::map(input) {
            if !report.head(input, &Head::of(map.get(..4).unwrap_or(&map)), quiet) {
                continue;
            }
            let mut reader = SliceReader::with_framer(&map, Framer::with_max_payload(limit));
            let mut seen = 0u64;
            let mut releaser = Releaser::default();
            let mut broke = false;
            let error = loop {
                if mapped::broken() {
                    broke = true;
                    break None;
                }
                match reader.next_message() {
                    Ok(Some(msg)) => {
                        let events = step(joiner, &msg, &mut report)?;
                        let at = reader.offset();
                        progress.add(at - seen, events);
                        seen = at;
                        // Pages already parsed are not needed again: every
                        // message before `at` is processed.
                        releaser.done(&map, at);
                    }
                    Ok(None) => break None,
                    Err(err) => break Some(err),
                }
            };
            if let Some(err) = error {
                joiner.record_framing_error(&err);
                report.damaged(input, err.to_string(), quiet);
            }
            if !broke {
                report.bytes += seen;
                report.shrank(input, size, quiet);
                continue;
            }
            let (offset, index) = (reader.offset(), reader.index());
            let rest = map
                .into_rest(offset)
                .map_err(|e| format!("{}: reading on after byte {offset}: {e}", input.name()))?;
            let framer = Framer::with_max_payload(limit).starting_at(offset, index);
            resume = Some((Box::new(rest), framer));
        }
        let (stream, framer) = match resume {
            Some(resume) => resume,
            None => {
                let opened = input::open(input)?;
                if !report.head(input, &opened.head, quiet) {
                    continue;
                }
                (opened.reader, Framer::with_max_payload(limit))
            }
        };
        // Progress counts the bytes framed: the reader's offset.
        let mut seen = framer.offset();
        let mut reader = StreamReader::with_framer(stream, framer);
        loop {
            match reader.next_message() {
                Ok(Some(msg)) => {
                    let events = step(joiner, &msg, &mut report)?;
                    let now = reader.offset();
                    progress.add(now - seen, events);
                    seen = now;
                }
                Ok(None) => break,
                Err(err) => {
                    joiner.record_framing_error(&err);
                    report.damaged(input, err.to_string(), quiet);
                    break;
                }
            }
        }
        report.bytes += reader.offset();
        report.shrank(input, size, quiet);
    }
    if regular > 0 {
        *report
            .messages
            .entry(MessageKind::Regular.name())
            .or_default() += regular;
    }
    progress.finish();
    Ok(report)
}

/// Prints a count per diagnostic kind and the first few examples of each
/// (all of them with `verbose`), each naming its file when there are
/// several; identical lines in a row are said once, with how many.
pub fn report_diagnostics(diags: &fb_join::Diagnostics, verbose: bool, report: &RunReport) {
    let examples = if verbose { usize::MAX } else { 3 };
    let several = report.starts.len() > 1;
    for (kind, count) in diags.counts() {
        if *kind == fb_join::Kind::Framing {
            continue; // already said when it happened
        }
        eprintln!("fb: warning: {count} x {}", kind.name());
        let kept: Vec<(usize, &fb_join::Diagnostic)> = diags
            .kept()
            .iter()
            .enumerate()
            .filter(|(_, d)| d.kind == *kind)
            .collect();
        // What the library says in general words, the flag that does it.
        let multistep = kept.iter().any(|(_, d)| d.detail.contains("multistep on"));
        match kind {
            fb_join::Kind::NotReady => {
                eprintln!("fb:   (--problem-type sets the problem type of every message)")
            }
            fb_join::Kind::EpisodeOutsideMultistep => {
                eprintln!("fb:   (--multistep joins multistep episodes)")
            }
            fb_join::Kind::ProblemTypeMismatch if multistep => {
                eprintln!("fb:   (--multistep joins multistep episodes)")
            }
            _ => {}
        }
        let lines: Vec<String> = kept
            .iter()
            .take(examples)
            .map(|(i, d)| match report.file_of(*i) {
                Some(file) if several => format!("{file}: {d}"),
                _ => d.to_string(),
            })
            .collect();
        for (line, times) in fold(&lines) {
            if times > 1 {
                eprintln!("fb:   {line} ({times} times)");
            } else {
                eprintln!("fb:   {line}");
            }
        }
        let shown = kept.len().min(examples) as u64;
        if *count > shown {
            eprintln!("fb:   ... and {} more", count - shown);
        }
    }
}

/// Runs of equal lines, each with its length.
pub fn fold(lines: &[String]) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for line in lines {
        match out.last_mut() {
            Some((last, n)) if *last == line.as_str() => *n += 1,
            _ => out.push((line, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn equal_lines_in_a_row_fold() {
        let lines: Vec<String> = ["a", "a", "b", "a", "c", "c", "c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(fold(&lines), [("a", 2), ("b", 1), ("a", 1), ("c", 3)]);
        assert!(fold(&[]).is_empty());
    }
}
