//! Flags shared by the commands that join (convert, stats), and the loop
//! that drives a joiner over several inputs as one stream.

use std::io::Read;

use fb_join::{
    Caches, Compat, JoinedEvent, Joiner, LearningMode, Options, Overrides, Pipeline, Problem,
    RewardFunction, Source, StepTransform,
};

use crate::error::Error;
use crate::input::{self, Head, Input};
use crate::mapped::{self, Releaser};
use crate::progress::Progress;

/// How to join: the reference's overrides and our options.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinArgs {
    /// `sane` fixes the reference's quirks (README); `reference` joins,
    /// computes rewards and writes exactly as the reference does, quirks
    /// included.
    #[arg(long, value_name = "MODE", default_value = "sane", value_parser = named::<Compat>(Compat::NAMES))]
    pub compat: Compat,

    /// Reward function for every checkpoint.
    #[arg(long, value_name = "F", value_parser = named::<RewardFunction>(RewardFunction::NAMES))]
    pub reward_function: Option<RewardFunction>,

    /// Reward of a decision without outcomes, for every checkpoint.
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = finite_f32)]
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

    /// Join multistep episodes whatever the checkpoint says (by default
    /// they are joined where it says MULTISTEP; `--compat reference`
    /// needs this flag, as the reference does).
    #[arg(long)]
    pub multistep: bool,

    /// Multistep reward transform.
    #[arg(long, value_name = "HOW", default_value = "suffix_mean", value_parser = named::<StepTransform>(StepTransform::NAMES))]
    pub multistep_reward: StepTransform,

    /// Turn every speed cache, memo and shortcut off (the same bytes out,
    /// slower): for comparing outputs.
    #[arg(long, hide = true)]
    pub no_caches: bool,
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

    /// With --since/--until, read every message even where the log has a
    /// fresh index (`fb index`); by default only the blocks of the index
    /// that hold events in the range are read.
    #[arg(long)]
    pub no_index: bool,
}

impl FilterArgs {
    /// The time range an index may narrow the reading to (seconds since
    /// 1970, `[since, until)`), when there is one and the index is not
    /// refused.
    pub fn window(&self) -> Option<(i64, i64)> {
        if self.no_index || (self.since.is_none() && self.until.is_none()) {
            return None;
        }
        Some((
            self.since.unwrap_or(i64::MIN),
            self.until.unwrap_or(i64::MAX),
        ))
    }

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
    ///
    /// Events made from the replacement bytes of a file truncated under
    /// its map are not the log's (see `mapped`): never kept.
    pub fn keep(&self, ev: &JoinedEvent) -> bool {
        if mapped::tripped() {
            return false;
        }
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

/// Parses a number that a reward or a probability can be: finite as a
/// float32 (`nan`, `inf` and `1e400` are refused: VW cannot read the
/// `null` they would become in DSJSON).
pub fn finite_f32(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!(
            "`{s}` is not a finite number (as a 32-bit float): give a number such as 0 or -1.5"
        )),
        Err(_) => Err(format!("`{s}` is not a number: give one such as 0 or -1.5")),
    }
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
        Options::default()
            .overrides(Overrides {
                reward_function: self.reward_function,
                default_reward: self.default_reward,
                learning_mode: self.learning_mode,
                problem_type: self.problem_type,
                use_client_time: self.use_client_time.then_some(true),
            })
            .compat(self.compat)
            .multistep(self.multistep)
            .multistep_reward(self.multistep_reward)
            .caches(match self.no_caches {
                true => Caches::Off,
                false => Caches::On,
            })
    }
}

/// What a run over the inputs saw besides joined events.
#[derive(Debug, Default, Clone)]
pub struct RunReport {
    /// Messages read, per type.
    pub kinds: fb_join::MessageCounts,
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
    /// What `--recover` salvaged from damaged REGULAR messages, per input
    /// (`fb_format::salvage`).
    pub salvaged: Vec<(String, fb_format::salvage::SalvageReport)>,
    /// Bytes of the current input already counted in `bytes`.
    input_start: u64,
    /// Say nothing, errors included (a library user, the Python package,
    /// takes them from the report).
    pub silent: bool,
}

impl RunReport {
    /// Notes that `input` starts here, its diagnostics after the first
    /// `kept` ones of `joiner`.
    pub fn begin(&mut self, input: &Input, joiner: &Joiner) {
        self.input_start = 0;
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
    /// A report that says nothing (see `silent`).
    pub fn silent() -> Self {
        Self {
            silent: true,
            ..Self::default()
        }
    }

    /// Records that `input` is damaged, and says so unless the report is
    /// silent: an error, said with `-q` too (`quiet` is for warnings).
    pub fn damaged(&mut self, input: &Input, why: impl std::fmt::Display, _quiet: bool) {
        let why = format!("{}: {why}", input.name());
        if !self.silent {
            eprintln!("fb: {why}");
        }
        self.damaged.push(why);
    }

    /// Whether an input was damaged or not a log (the run exits 1).
    pub fn failed(&self) -> bool {
        !self.damaged.is_empty()
    }

    /// Takes in what the head of `input` says: false when it is not to be
    /// read (not a log: recorded as damaged; empty: a warning).
    pub fn head(&mut self, input: &Input, head: &Head, quiet: bool) -> bool {
        if let Head::NotALog(why) = head {
            self.damaged(input, why, quiet);
            return false;
        }
        if let (Some(w), false) = (head.warning(), quiet || self.silent) {
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

    /// Takes in what one feed of `input` read: messages, bytes, and the
    /// framing error that ended it (the input is then damaged). Where it
    /// stopped early, if it did.
    pub fn fed(&mut self, input: &Input, fed: fb_join::Fed, quiet: bool) -> Option<(u64, u64)> {
        self.kinds.merge(&fed.kinds);
        self.bytes = self
            .bytes
            .saturating_add(fed.offset.saturating_sub(self.input_start));
        self.input_start = fed.offset;
        if let Some(err) = fed.framing_error {
            self.damaged(input, err.to_string(), quiet);
        }
        fed.stopped_at
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

/// Feeds every input to `pipeline` in order, as one log: each file
/// mapped while that is safe (see `mapped`) and read through `read` from
/// where the map was left when it stops being so, pipes streamed, and with
/// `recover` each input read whole and resynchronized after damage. What
/// the inputs were and what went wrong with them is in the report; `fail`
/// turns the pipeline's errors (the output failing above all) into ours.
///
/// With `window` (seconds, `[since, until)`, from [`FilterArgs::window`]),
/// a mapped input with a fresh index (`fb index`) is read only where its
/// blocks hold events in the range, each after the checkpoint in force
/// there; without one, or with dedup references inlined (which needs
/// every DedupInfo), it is read whole.
pub fn feed_all<S, K>(
    inputs: &[Input],
    pipeline: &mut Pipeline<S, K>,
    recover: bool,
    quiet: bool,
    fail: &dyn Fn(fb_join::Error) -> Error,
    window: Option<(i64, i64)>,
) -> Result<RunReport, Error>
where
    S: fb_join::Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    let total = inputs.iter().map(Input::len).sum::<Option<u64>>();
    let mut progress = Progress::new(total, quiet);
    let mut report = RunReport::default();
    for input in inputs {
        report.begin(input, pipeline.joiner());
        let size = input.len();
        // Per input: progress is told bytes and events as deltas.
        let (mut bytes, mut events) = (0u64, 0u64);
        let mut on_progress = |at: fb_join::Progress| {
            progress.add(
                at.read.saturating_sub(bytes),
                at.events.saturating_sub(events),
            );
            bytes = bytes.max(at.read);
            events = events.max(at.events);
        };
        if recover {
            recover_one(input, pipeline, &mut report, quiet, &mut on_progress, fail)?;
            report.shrank(input, size, quiet);
            continue;
        }
        let mut resume = None;
        if let Some(map) = input::map(input) {
            if !report.head(input, &Head::of(map.get(..4).unwrap_or(&map)), quiet) {
                continue;
            }
            let indexed = match (window, input) {
                (Some(window), Input::File(path)) if !pipeline.joiner().options().inline_dedup => {
                    crate::index::load_summary(path, &map, quiet)?.map(|index| (window, index))
                }
                _ => None,
            };
            if let Some((window, index)) = indexed {
                feed_blocks(
                    &map,
                    &index,
                    window,
                    pipeline,
                    &mut report,
                    input,
                    quiet,
                    fail,
                )?;
                report.shrank(input, size, quiet);
                continue;
            }
            let mut releaser = Releaser::default();
            let fed = pipeline
                .feed(Source::Slice(&map), (0, 0), &mapped::broken, &mut |at| {
                    // Pages already joined are not needed again.
                    releaser.done(&map, at.finished);
                    on_progress(at)
                })
                .map_err(fail)?;
            let stopped = report.fed(input, fed, quiet);
            match stopped {
                None => {
                    report.shrank(input, size, quiet);
                    continue;
                }
                Some(at) => {
                    let rest = map.into_rest(at.0).map_err(|e| {
                        format!("{}: reading on after byte {}: {e}", input.name(), at.0)
                    })?;
                    resume = Some((Box::new(rest) as Box<dyn Read + Send>, at));
                }
            }
        }
        let (stream, start) = match resume {
            Some(resume) => resume,
            None => {
                let opened = input::open(input)?;
                if !report.head(input, &opened.head, quiet) {
                    continue;
                }
                (opened.reader, (0, 0))
            }
        };
        let fed = pipeline
            .feed(Source::Stream(stream), start, &|| false, &mut on_progress)
            .map_err(fail)?;
        report.fed(input, fed, quiet);
        report.shrank(input, size, quiet);
    }
    progress.finish();
    Ok(report)
}

/// The blocks of `index` with events in `window` (seconds), each after
/// the checkpoint in force there; then the input's last checkpoint, so
/// that the configuration carries to the next input as a full read leaves
/// it.
#[allow(clippy::too_many_arguments)]
fn feed_blocks<S, K>(
    log: &[u8],
    index: &fb_format::index::Index,
    (since, until): (i64, i64),
    pipeline: &mut Pipeline<S, K>,
    report: &mut RunReport,
    input: &Input,
    quiet: bool,
    fail: &dyn Fn(fb_join::Error) -> Error,
) -> Result<(), Error>
where
    S: fb_join::Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    let micros = |s: i64| s.saturating_mul(1_000_000);
    let (since, until) = (micros(since), micros(until));
    // The index of each block's first message, as a full read counts.
    let mut first = 0u64;
    // The last checkpoint applied (re-applying one is harmless: each sets
    // the whole configuration).
    let mut config: Option<u64> = None;
    let mut feed = |p: &mut Pipeline<S, K>, start: u64, end: u64, at: u64| -> Result<(), Error> {
        let slice = fb_format::index::span(log, start, end).ok_or_else(|| {
            Error::Msg(format!("{}: the index points past the log", input.name()))
        })?;
        let fed = p
            .feed(
                Source::Slice(slice),
                (start, at),
                &mapped::broken,
                &mut |_| {},
            )
            .map_err(fail)?;
        report.fed(input, fed, quiet);
        Ok(())
    };
    // Runs of consecutive blocks in the range, each fed in one go (as
    // (start, end, index of its first message)).
    let mut runs: Vec<(u64, u64, u64)> = Vec::new();
    for block in &index.blocks {
        let this = first;
        first += u64::from(block.messages);
        if !block.overlaps(since, until) {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.1 == block.start => run.1 = block.end,
            _ => runs.push((block.start, block.end, this)),
        }
    }
    // Each run after the checkpoints in force at its start; at the end
    // (`None`), those a full read ends with, for the inputs after this.
    for run in runs.into_iter().map(Some).chain([None]) {
        let force = index.checkpoints_in_force(run.map_or(u64::MAX, |r| r.0));
        let last = force.last().map(|c| c.offset);
        if last != config {
            for c in force {
                feed(pipeline, c.offset, c.end(), 0)?;
            }
            config = last;
        }
        if let Some((start, end, this)) = run {
            feed(pipeline, start, end, this)?;
            config = index.checkpoints_in_force(end).last().map(|c| c.offset);
        }
    }
    Ok(())
}

/// `--recover`: one input read whole (mapped when safe) and
/// resynchronized after damage; skipped ranges reported.
fn recover_one<S, K>(
    input: &Input,
    pipeline: &mut Pipeline<S, K>,
    report: &mut RunReport,
    quiet: bool,
    progress: &mut dyn FnMut(fb_join::Progress),
    fail: &dyn Fn(fb_join::Error) -> Error,
) -> Result<(), Error>
where
    S: fb_join::Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    let whole = input::whole(input)?;
    let bytes: &[u8] = &whole;
    let head = Head::of(bytes.get(..4).unwrap_or(bytes));
    if head == Head::Empty {
        report.head(input, &head, quiet);
        return Ok(());
    }
    // Recovery reads on whatever the head says: damage is its trade.
    report.logs += 1;
    let joined_before = pipeline.joiner().metrics().joined;
    // Recovery reads the map in place to the end: another process that
    // wants to change the file makes it stop (see `mapped`).
    let mapped = matches!(whole, input::Whole::Mapped(_));
    let stop = move || mapped && (mapped::broken() || mapped::tripped());
    let mut fed = pipeline
        .feed(Source::Recover(bytes), (0, 0), &stop, progress)
        .map_err(fail)?;
    if fed.stopped_at.is_some() || (mapped && mapped::tripped()) {
        return Err(Error::Msg(format!(
            "{}: another process opened it for writing or truncated it while it was being \
             recovered: stopped; run again once it is done",
            input.name()
        )));
    }
    let skipped = std::mem::take(&mut fed.skipped);
    let salvaged = std::mem::take(&mut fed.salvaged);
    report.fed(input, fed, quiet);
    for r in &skipped {
        report.damaged(input, r, quiet);
    }
    for s in salvaged {
        if !quiet {
            eprintln!("fb: {}: {s}", input.name());
        }
        report.salvaged.push((input.name(), s));
    }
    if !quiet && !skipped.is_empty() {
        eprintln!(
            "fb: {}: recovered {} events; {} bytes in {} ranges skipped",
            input.name(),
            pipeline.joiner().metrics().joined - joined_before,
            skipped
                .iter()
                .map(fb_format::recover::Skipped::len)
                .sum::<u64>(),
            skipped.len()
        );
    }
    Ok(())
}

/// Prints a count per diagnostic kind and the first few examples of each
/// (all of them with `verbose`), each naming its file when there are
/// several; identical lines in a row are said once, with how many.
pub fn report_diagnostics(diags: &fb_join::Diagnostics, verbose: bool, report: &RunReport) {
    let examples = if verbose { usize::MAX } else { 3 };
    let several = report.starts.len() > 1;
    for (kind, count) in diags.counts() {
        if *kind == fb_join::DiagnosticKind::Framing {
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
            fb_join::DiagnosticKind::NotReady => {
                eprintln!("fb:   (--problem-type sets the problem type of every message)")
            }
            fb_join::DiagnosticKind::EpisodeOutsideMultistep => {
                eprintln!("fb:   (--multistep joins multistep episodes)")
            }
            fb_join::DiagnosticKind::ProblemTypeMismatch if multistep => {
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
