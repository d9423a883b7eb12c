//! Joins the events of Vowpal Wabbit joined binary logs, computes rewards
//! as the loop was configured, and writes DSJSON.
//!
//! A [`Joiner`] takes framed messages (from `fb-format`) in order and yields
//! [`JoinedEvent`]s: the decision, its outcomes, its reward, original
//! reward, per-slot rewards, skip-learn flag and weight. [`dsjson`] turns
//! them into the lines VW trains on, byte-identical to the reference
//! converter under [`Compat::Reference`]. Everything skipped is counted in
//! [`Diagnostics`], by kind, with offsets and event ids.
//!
//! ```
//! use fb_join::{convert, Options};
//!
//! let log = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/cb_simple.log"
//! ))
//! .unwrap();
//! let mut out = Vec::new();
//! let summary = convert(&log[..], &mut out, Options::default()).unwrap();
//! assert_eq!(summary.metrics.joined, 1);
//! assert!(out.starts_with(br#"{"_label_cost":-1.5,"#));
//! ```
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

mod config;
mod dedup;
mod diag;
pub mod dsjson;
mod event;
mod interaction;
mod joiner;
pub mod json;
mod metrics;
mod number;
mod parallel;
mod put;
mod reward;
mod simd;
pub mod time;

use std::io::{Read, Write};

pub use config::{LearningMode, LoopConfig, Overrides};
pub use dedup::{inline_actions, DedupCache};
pub use diag::{Diagnostic, Diagnostics, Kind};
pub use event::{Decision, Index, JoinedEvent, Outcome, Slot, Value};
pub use fb_format::{Problem, RewardFunction};
pub use joiner::{transform, Joiner};
pub use metrics::{KindMetrics, Metrics};
pub use parallel::{
    convert_parallel, convert_parallel_rest, convert_parallel_section, convert_parallel_slice,
    Progress,
};
pub use reward::{compute as compute_reward, Signal};

/// Sane behaviour, or the reference's exact output including its quirks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Compat {
    /// Our behaviour: quirks of the reference fixed (see SEMANTICS.md).
    #[default]
    Sane,
    /// Reproduce the reference byte for byte.
    Reference,
}

/// How per-step multistep rewards are transformed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum StepTransform {
    /// Each step gets the mean of its own and all later rewards.
    #[default]
    SuffixMean,
    /// Each step gets the sum of its own and all later rewards.
    SuffixSum,
    /// Each step keeps its own reward.
    Identity,
}

impl StepTransform {
    /// The names the command line takes.
    pub const NAMES: &'static [&'static str] = &["suffix_mean", "suffix_sum", "identity"];
}

impl std::str::FromStr for StepTransform {
    type Err = fb_format::UnknownName;

    /// Parses `suffix_mean`, `suffix_sum` or `identity` (`-` for `_`,
    /// any case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(
            match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "suffix_mean" => Self::SuffixMean,
                "suffix_sum" => Self::SuffixSum,
                "identity" => Self::Identity,
                _ => {
                    return Err(fb_format::UnknownName {
                        given: s.to_string(),
                        what: "multistep reward transform",
                        expected: Self::NAMES.join(", "),
                    })
                }
            },
        )
    }
}

impl Compat {
    /// The names the command line takes.
    pub const NAMES: &'static [&'static str] = &["sane", "reference"];
}

impl std::str::FromStr for Compat {
    type Err = fb_format::UnknownName;

    /// Parses `sane` or `reference`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sane" => Ok(Self::Sane),
            "reference" => Ok(Self::Reference),
            _ => Err(fb_format::UnknownName {
                given: s.to_string(),
                what: "compatibility mode",
                expected: Self::NAMES.join(", "),
            }),
        }
    }
}

/// How to join.
#[derive(Debug, Clone)]
pub struct Options {
    /// Caller-pinned configuration values.
    pub overrides: Overrides,
    /// Sane or reference behaviour.
    pub compat: Compat,
    /// Join multistep episodes.
    pub multistep: bool,
    /// Multistep reward transform.
    pub multistep_reward: StepTransform,
    /// Replace `{"__aid":N}` references with the cached action JSON.
    pub inline_dedup: bool,
    /// Largest payload (and decompressed payload) accepted, in bytes.
    pub max_payload: usize,
    /// Diagnostics kept in full (all are counted).
    pub diagnostics_limit: usize,
    /// Join only the messages of loops of these problem types (all when
    /// empty). The others are not joined at all, so nothing about them is
    /// diagnosed; their events are counted in
    /// [`Metrics::not_selected`]. Dedup events are applied whatever the
    /// type, as the cache they fill is shared.
    pub only: Vec<Problem>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            overrides: Overrides::default(),
            compat: Compat::Sane,
            multistep: false,
            multistep_reward: StepTransform::SuffixMean,
            inline_dedup: false,
            max_payload: fb_format::DEFAULT_MAX_PAYLOAD as usize,
            diagnostics_limit: 10_000,
            only: Vec::new(),
        }
    }
}

/// What a conversion did.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Metrics of the joined events.
    pub metrics: Metrics,
    /// Everything skipped or odd.
    pub diagnostics: Diagnostics,
    /// Messages read.
    pub messages: u64,
    /// Bytes of DSJSON written.
    pub bytes_written: u64,
    /// Lines of DSJSON written.
    pub lines: u64,
    /// The framing error that ended reading early, if any.
    pub framing_error: Option<String>,
}

/// Errors of a conversion that stop it (bad data never does: it is counted
/// in the summary).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Writing the output failed.
    #[error("writing the output failed: {source}")]
    Write {
        /// Bytes handed to the output by earlier writes that succeeded
        /// (a buffered output may not have passed them all on).
        written: u64,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A worker thread could not be started (too many threads for the
    /// system's limits): try fewer threads.
    #[error("starting worker thread {index} failed ({source}): try fewer threads")]
    Spawn {
        /// Which worker (0-based).
        index: usize,
        /// The error of the system.
        #[source]
        source: std::io::Error,
    },
}

/// Reads a whole log from `input` and writes its DSJSON to `output`.
///
/// A framing error (truncation, bad version, I/O) ends the reading; the
/// lines before it are written and the error is in
/// [`Summary::framing_error`].
pub fn convert<R: Read, W: Write>(input: R, output: W, opts: Options) -> Result<Summary, Error> {
    let mut joiner = Joiner::new(opts);
    let mut output = output;
    let mut summary = convert_into(&mut joiner, input, &mut output)?;
    summary.metrics = joiner.metrics().clone();
    summary.diagnostics = joiner.diagnostics().clone();
    Ok(summary)
}

/// Like [`convert`], with a caller-owned joiner (whose state carries over
/// to the next input: several files make one stream).
pub fn convert_into<R: Read, W: Write>(
    joiner: &mut Joiner,
    input: R,
    output: &mut W,
) -> Result<Summary, Error> {
    let framer = fb_format::Framer::with_max_payload(
        u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX),
    );
    let mut reader = fb_format::StreamReader::with_framer(input, framer);
    let mut pump = Pump::new(joiner.options().compat);
    let mut messages = 0;
    let mut framing_error = None;
    loop {
        match reader.next_message() {
            Ok(Some(msg)) => {
                messages += 1;
                pump.feed(joiner, &msg, output)?;
            }
            Ok(None) => break,
            Err(err) => {
                joiner.record_framing_error(&err);
                framing_error = Some(err.to_string());
                break;
            }
        }
    }
    pump.finish(joiner, messages, framing_error, output)
}

/// Joins messages one by one and writes their lines: the loop every
/// serial conversion shares.
struct Pump {
    writer: dsjson::Writer,
    line: Vec<u8>,
    written: u64,
    lines: u64,
}

impl Pump {
    fn new(compat: Compat) -> Self {
        Self {
            writer: dsjson::Writer::new(compat),
            line: Vec::with_capacity(4096),
            written: 0,
            lines: 0,
        }
    }

    fn feed<W: Write>(
        &mut self,
        joiner: &mut Joiner,
        msg: &fb_format::Message<'_>,
        output: &mut W,
    ) -> Result<(), Error> {
        self.line.clear();
        let (writer, line, lines) = (&mut self.writer, &mut self.line, &mut self.lines);
        joiner.push_each(msg, |ev| {
            writer.write_line(ev, line);
            *lines += 1;
        });
        output
            .write_all(&self.line)
            .map_err(|source| Error::Write {
                written: self.written,
                source,
            })?;
        self.written += self.line.len() as u64;
        Ok(())
    }

    fn finish<W: Write>(
        self,
        joiner: &Joiner,
        messages: u64,
        framing_error: Option<String>,
        output: &mut W,
    ) -> Result<Summary, Error> {
        output.flush().map_err(|source| Error::Write {
            written: self.written,
            source,
        })?;
        Ok(Summary {
            metrics: joiner.metrics().clone(),
            diagnostics: joiner.diagnostics().clone(),
            messages,
            bytes_written: self.written,
            lines: self.lines,
            framing_error,
        })
    }
}

/// Joined events of one log as an iterator, for code that wants rewards
/// without DSJSON.
///
/// Stops at the end of the log or at a framing error, which
/// [`JoinedEvents::framing_error`] then holds (the events before it are
/// all yielded).
#[derive(Debug)]
pub struct JoinedEvents<R> {
    reader: fb_format::StreamReader<R>,
    joiner: Joiner,
    framing_error: Option<fb_format::Error>,
    done: bool,
}

impl<R: Read> JoinedEvents<R> {
    /// Joins the log read from `input`.
    pub fn new(input: R, opts: Options) -> Self {
        let limit = u32::try_from(opts.max_payload).unwrap_or(u32::MAX);
        let reader =
            fb_format::StreamReader::with_framer(input, fb_format::Framer::with_max_payload(limit));
        Self {
            reader,
            joiner: Joiner::new(opts),
            framing_error: None,
            done: false,
        }
    }

    /// The joiner (diagnostics, metrics, configuration so far).
    pub fn joiner(&self) -> &Joiner {
        &self.joiner
    }

    /// The framing error that ended the log early, if any.
    pub fn framing_error(&self) -> Option<&fb_format::Error> {
        self.framing_error.as_ref()
    }
}

impl<R: Read> Iterator for JoinedEvents<R> {
    type Item = JoinedEvent<'static>;

    fn next(&mut self) -> Option<JoinedEvent<'static>> {
        loop {
            if let Some(ev) = self.joiner.pop() {
                return Some(ev);
            }
            if self.done {
                return None;
            }
            match self.reader.next_message() {
                Ok(Some(msg)) => self.joiner.push(&msg),
                Ok(None) => self.done = true,
                Err(err) => {
                    self.joiner.record_framing_error(&err);
                    self.framing_error = Some(err);
                    self.done = true;
                }
            }
        }
    }
}

/// What [`convert_recovering`] did.
#[derive(Debug, Clone)]
pub struct RecoverySummary {
    /// The conversion summary, as [`convert_into`] gives it. Its
    /// `framing_error` is always `None`: a recovering read never stops
    /// early, damage is in `skipped` instead.
    pub summary: Summary,
    /// Every byte range that was skipped, in file order, with why.
    pub skipped: Vec<fb_format::recover::Skipped>,
}

impl RecoverySummary {
    /// Total bytes skipped.
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped.iter().map(|s| s.len()).sum()
    }
}

/// Like [`convert_into`], but reads a damaged log whole from `data` with
/// [`fb_format::recover::RecoveringReader`]: every intact message is fed to
/// the joiner in order and its DSJSON written exactly as [`convert_into`]
/// writes it; corrupt or truncated ranges are skipped and returned in
/// [`RecoverySummary::skipped`] (they do not appear in the joiner's
/// diagnostics). Data after an EOF message is read on when it holds more
/// messages (two logs concatenated).
///
/// ```
/// use fb_join::{convert_recovering, Joiner, Options};
///
/// let mut log = std::fs::read(concat!(
///     env!("CARGO_MANIFEST_DIR"),
///     "/../../tests/data/valid_joined_logs/cb_simple.log"
/// ))
/// .unwrap();
/// log.truncate(log.len() - 3); // cut inside the final EOF message
/// let mut out = Vec::new();
/// let mut joiner = Joiner::new(Options::default());
/// let report = convert_recovering(&mut joiner, &log, &mut out).unwrap();
/// assert_eq!(report.summary.metrics.joined, 1);
/// assert!(report.skipped.is_empty());
/// ```
pub fn convert_recovering<W: Write>(
    joiner: &mut Joiner,
    data: &[u8],
    output: &mut W,
) -> Result<RecoverySummary, Error> {
    use fb_format::recover::{Recovered, RecoveringReader};

    let limit = u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX);
    let mut pump = Pump::new(joiner.options().compat);
    let mut messages = 0;
    let mut skipped = Vec::new();
    for item in RecoveringReader::with_max_payload(data, limit) {
        match item {
            Recovered::Message(msg) => {
                messages += 1;
                pump.feed(joiner, &msg, output)?;
            }
            Recovered::Skipped(range) => skipped.push(range),
        }
    }
    Ok(RecoverySummary {
        summary: pump.finish(joiner, messages, None, output)?,
        skipped,
    })
}
