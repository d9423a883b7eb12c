//! Flags shared by the commands that join (convert, stats), and the loop
//! that drives a joiner over several inputs as one stream.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fb_format::{Framer, Message, MessageKind, SliceReader, StreamReader};
use fb_join::{
    Compat, JoinedEvent, Joiner, LearningMode, Options, Overrides, Problem, RewardFunction,
    StepTransform,
};

use crate::error::Error;
use crate::input::{self, Head, Input};
use crate::progress::{Counting, Progress};

/// How to join: the reference's overrides and our options.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinArgs {
    /// `sane` (default) fixes the reference's quirks; `reference`
    /// reproduces its output byte for byte.
    #[arg(long, value_name = "MODE", default_value = "sane", value_parser = parse_compat)]
    pub compat: Compat,

    /// Reward function for every checkpoint: earliest|average|median|sum|min|max.
    #[arg(long, value_parser = parse_reward_function)]
    pub reward_function: Option<RewardFunction>,

    /// Reward of a decision without outcomes, for every checkpoint.
    #[arg(long, allow_negative_numbers = true)]
    pub default_reward: Option<f32>,

    /// Learning mode for every checkpoint: online|apprentice|loggingonly.
    #[arg(long, value_parser = parse_learning_mode)]
    pub learning_mode: Option<LearningMode>,

    /// Problem type for every checkpoint: cb|ccb|slates|ca.
    #[arg(long, value_parser = parse_problem)]
    pub problem_type: Option<Problem>,

    /// Use client timestamps instead of enqueued ones (true|false), for
    /// every checkpoint.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub use_client_time: Option<bool>,

    /// Join multistep episodes.
    #[arg(long)]
    pub multistep: bool,

    /// Multistep reward transform: suffix_mean|suffix_sum|identity.
    #[arg(long, default_value = "suffix_mean", value_parser = parse_transform)]
    pub multistep_reward: StepTransform,
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
                use_client_time: self.use_client_time,
            },
            compat: self.compat,
            multistep: self.multistep,
            multistep_reward: self.multistep_reward,
            ..Options::default()
        }
    }
}

fn parse_compat(s: &str) -> Result<Compat, String> {
    match s {
        "reference" => Ok(Compat::Reference),
        "sane" | "default" => Ok(Compat::Sane),
        _ => Err("expected `reference` or `sane`".into()),
    }
}

fn parse_reward_function(s: &str) -> Result<RewardFunction, String> {
    RewardFunction::parse(s).ok_or_else(|| "expected earliest|average|median|sum|min|max".into())
}

fn parse_learning_mode(s: &str) -> Result<LearningMode, String> {
    LearningMode::parse(s).ok_or_else(|| "expected online|apprentice|loggingonly".into())
}

fn parse_problem(s: &str) -> Result<Problem, String> {
    Problem::parse(s).ok_or_else(|| "expected cb|ccb|slates|ca|multistep".into())
}

fn parse_transform(s: &str) -> Result<StepTransform, String> {
    StepTransform::parse(s).ok_or_else(|| "expected suffix_mean|suffix_sum|identity".into())
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
}

impl RunReport {
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

    /// Exit 0, or 1 when an input was damaged or not a log.
    pub fn exit_code(&self) -> std::process::ExitCode {
        if self.damaged.is_empty() {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::from(1)
        }
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
    mut on_event: impl FnMut(&JoinedEvent) -> Result<(), Error>,
) -> Result<RunReport, Error> {
    let total = inputs.iter().map(Input::len).sum::<Option<u64>>();
    let mut progress = Progress::new(total, quiet);
    let mut report = RunReport::default();
    let limit = u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX);
    // Counted apart: a map entry per message showed in profiles.
    let mut regular = 0u64;
    for input in inputs {
        let mut step = |msg: &Message<'_>, report: &mut RunReport| -> Result<u64, Error> {
            if msg.kind == MessageKind::Regular {
                regular += 1;
            } else {
                *report.messages.entry(msg.kind.name()).or_default() += 1;
            }
            let mut events = 0;
            let mut failed = Ok(());
            joiner.push_each(msg, |ev| {
                if failed.is_ok() {
                    failed = on_event(ev);
                    events += 1;
                }
            });
            failed.map(|()| events)
        };
        if let Some(map) = input::map(input) {
            if !report.head(input, &Head::of(map.get(..4).unwrap_or(&map)), quiet) {
                continue;
            }
            let mut reader = SliceReader::with_framer(&map, Framer::with_max_payload(limit));
            let mut seen = 0u64;
            let mut releaser = input::Releaser::default();
            let error = loop {
                match reader.next_message() {
                    Ok(Some(msg)) => {
                        let events = step(&msg, &mut report)?;
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
            report.bytes += seen;
            continue;
        }
        let opened = input::open(input)?;
        if !report.head(input, &opened.head, quiet) {
            continue;
        }
        let count = Arc::new(AtomicU64::new(0));
        let counting = Counting {
            inner: opened.reader,
            count: Arc::clone(&count),
        };
        let mut reader = StreamReader::with_framer(counting, Framer::with_max_payload(limit));
        let mut seen = 0u64;
        loop {
            match reader.next_message() {
                Ok(Some(msg)) => {
                    let events = step(&msg, &mut report)?;
                    let now = count.load(Ordering::Relaxed);
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
        report.bytes += count.load(Ordering::Relaxed);
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
/// (all of them with `verbose`).
pub fn report_diagnostics(diags: &fb_join::Diagnostics, verbose: bool) {
    let examples = if verbose { usize::MAX } else { 3 };
    for (kind, count) in diags.counts() {
        if *kind == fb_join::Kind::Framing {
            continue; // already said when it happened
        }
        eprintln!("fb: warning: {count} x {}", kind.name());
        let kept: Vec<_> = diags.kept().iter().filter(|d| d.kind == *kind).collect();
        for d in kept.iter().take(examples) {
            eprintln!("fb:   {d}");
        }
        let shown = kept.len().min(examples) as u64;
        if *count > shown {
            eprintln!("fb:   ... and {} more", count - shown);
        }
    }
}
