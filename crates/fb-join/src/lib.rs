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

mod batch;
mod caches;
mod config;
mod dedup;
mod diag;
pub mod dsjson;
mod event;
mod feed;
mod interaction;
mod joiner;
pub mod json;
mod metrics;
mod number;
pub mod ordered;
mod parallel;
mod pipeline;
mod pool;
mod put;
pub mod rawjoin;
pub mod reorder;
mod reward;
mod same;
mod session;
mod simd;
mod sink;
pub mod split;
pub mod time;

use fb_format::Position;
use std::io::{Read, Write};

pub use caches::CacheCounts;
pub use config::{ConfigChange, ConfigHistory, LearningMode, LoopConfig, Overrides};
pub use dedup::{inline_actions, references, DedupCache};
pub use diag::{Diagnostic, DiagnosticKind, Diagnostics};
pub use event::{Decision, JoinedEvent, Outcome, OutcomeIndex, OutcomeValue, SlotDecision};
pub use fb_format::{Caches, Problem, RewardFunction};
pub use feed::{FeedReport, MessageCounts, Progress, Source};
pub use joiner::{Joiner, MessageRead};
pub use metrics::{Addition, KindMetrics, Metrics};
pub use pipeline::Pipeline;
pub use reward::{compute as compute_reward, Signal};
pub use session::Session;
pub use sink::{Maker, Sink};

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

fb_format::named!(
    StepTransform,
    "multistep reward transform",
    [
        SuffixMean = "suffix_mean",
        SuffixSum = "suffix_sum",
        Identity = "identity",
    ]
);

impl StepTransform {
    /// Transforms rewards in step order, in place, summing from the last
    /// step back in f32 as the reference does.
    pub fn apply(self, rewards: &mut [f32]) {
        if self == Self::Identity {
            return;
        }
        let len = rewards.len();
        let mut sum = 0f32;
        for (n, r) in rewards.iter_mut().enumerate().rev() {
            sum += *r;
            *r = match self {
                Self::SuffixMean => sum / (len - n) as f32,
                _ => sum,
            };
        }
    }
}

fb_format::named!(
    Compat,
    "compatibility mode",
    [Sane = "sane", Reference = "reference"]
);

/// How to join: `Options::default()`, then the settings that differ,
/// `Options::default().compat(Compat::Reference).multistep(true)`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Caller-pinned configuration values.
    pub overrides: Overrides,
    /// Sane or reference behaviour.
    pub compat: Compat,
    /// Join multistep episodes whatever the checkpoint says. Without it,
    /// they are joined where the checkpoint in force says MULTISTEP, but
    /// under [`Compat::Reference`].
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
    /// The speed caches, memos and shortcuts of reading, joining and
    /// writing DSJSON: [`Caches::Off`] runs the plain path instead, for
    /// the same bytes out (see [`Caches`]).
    pub caches: Caches,
}

/// One setter per field, each taking and giving back the options.
macro_rules! setters {
    ($($field:ident: $ty:ty),* $(,)?) => {
        impl Options {
            $(
                #[doc = concat!("With `", stringify!($field), "` set.")]
                #[must_use]
                pub fn $field(mut self, value: $ty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters! {
    overrides: Overrides,
    compat: Compat,
    multistep: bool,
    multistep_reward: StepTransform,
    inline_dedup: bool,
    max_payload: usize,
    diagnostics_limit: usize,
    only: Vec<Problem>,
    caches: Caches,
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
            caches: Caches::On,
        }
    }
}

/// What a conversion did.
#[derive(Debug)]
#[non_exhaustive]
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
    pub framing_error: Option<fb_format::Error>,
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
    /// Joining raw streams with a window needs every event's client time.
    #[error(
        "input {input}, batch {message} at byte {offset}: event `{event_id}` has no client time, \
         so it cannot be placed in a join window: join without --eud (events are then stamped \
         with the time of the join)"
    )]
    NoClientTime {
        /// The input (its position among those given).
        input: usize,
        /// Byte offset of the batch.
        offset: u64,
        /// Index of the batch.
        message: u64,
        /// The event's id.
        event_id: String,
    },
    /// A parallel session was given a damaged log to recover: recovery
    /// reads on one thread ([`Pipeline::feed`]).
    #[error(
        "a damaged log cannot be recovered in a parallel session: feed it to the pipeline on its \
         own"
    )]
    RecoverInSession,
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
    /// A worker thread of an [`ordered::Ordered`] pool panicked (a bug),
    /// or none is left: the run stops instead of waiting for a result that
    /// will not come.
    #[error("a worker thread stopped at job {job}: {message}")]
    Worker {
        /// The number of the job it stopped on (0 for the first job
        /// submitted).
        job: u64,
        /// Why: the panic's message.
        message: String,
    },
}

/// For callers that work in I/O errors (a `Write` over a pool): a failed
/// write is its own error, anything else is said as it is.
impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Write { source, .. } => source,
            other => std::io::Error::other(other),
        }
    }
}

/// Reads a whole log from `input` and writes its DSJSON to `output`.
///
/// A framing error (truncation, bad version, I/O) ends the reading; the
/// lines before it are written and the error is in
/// [`Summary::framing_error`].
pub fn convert<R: Read + Send, W: Write>(
    input: R,
    output: W,
    opts: Options,
) -> Result<Summary, Error> {
    let mut joiner = Joiner::new(opts);
    let mut output = output;
    convert_into(&mut joiner, input, &mut output)
}

/// Like [`convert`], with a caller-owned joiner (whose state carries over
/// to the next input: several files make one stream).
pub fn convert_into<R: Read + Send, W: Write>(
    joiner: &mut Joiner,
    input: R,
    output: &mut W,
) -> Result<Summary, Error> {
    let input: Box<dyn Read + Send + '_> = Box::new(input);
    serial_lines(joiner, Source::Stream(input), output).map(|(summary, _)| summary)
}

/// [`run_lines`] on one thread, keeping every event, from the log's start.
fn serial_lines<W: Write>(
    joiner: &mut Joiner,
    source: Source<'_>,
    output: &mut W,
) -> Result<(Summary, FeedReport), Error> {
    let all = |_: &JoinedEvent<'_>| true;
    run_lines(
        joiner,
        source,
        Position::START,
        output,
        1,
        &all,
        &mut |_| {},
    )
}

/// Runs a DSJSON pipeline of `joiner` over `source`: the one loop behind
/// every `convert*` function.
fn run_lines<W: Write, K: Fn(&JoinedEvent<'_>) -> bool + Sync>(
    joiner: &mut Joiner,
    source: Source<'_>,
    start: Position,
    output: &mut W,
    threads: usize,
    keep: &K,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Summary, FeedReport), Error> {
    let compat = joiner.options().compat;
    let owned = std::mem::replace(joiner, Joiner::new(joiner.options().clone()));
    let mut pipeline = Pipeline::with_joiner(
        owned,
        keep,
        dsjson::LinesSink::new(&mut *output, compat),
        threads,
    );
    let fed = pipeline.feed(source, start, &|| false, progress);
    let lines = pipeline.kept();
    let (back, sink) = pipeline.finish();
    *joiner = back;
    let mut fed = fed?;
    let bytes_written = sink.bytes_written();
    output.flush().map_err(|source| Error::Write {
        written: bytes_written,
        source,
    })?;
    Ok((
        Summary {
            metrics: joiner.metrics().clone(),
            diagnostics: joiner.diagnostics().clone(),
            messages: fed.messages,
            bytes_written,
            lines,
            framing_error: fed.framing_error.take(),
        },
        fed,
    ))
}

/// Joins `input` with `threads` workers and writes the DSJSON of the events
/// `keep` accepts to `output`, byte-identical to the serial conversion.
/// `joiner` carries the state in and out, so several inputs make one
/// stream; `progress` is called as the work goes on. From a
/// [`Source::Slice`] (a memory-mapped file above all) the workers borrow
/// the payloads where they are, and [`Progress::finished`] says which bytes
/// are done with.
pub fn convert_parallel<W, K, P>(
    joiner: &mut Joiner,
    input: Source<'_>,
    output: &mut W,
    threads: usize,
    keep: K,
    mut progress: P,
) -> Result<Summary, Error>
where
    W: Write,
    K: Fn(&JoinedEvent) -> bool + Sync,
    P: FnMut(Progress),
{
    run_lines(
        joiner,
        input,
        Position::START,
        output,
        threads,
        &keep,
        &mut progress,
    )
    .map(|(s, _)| s)
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
#[derive(Debug)]
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
    let (summary, fed) = serial_lines(joiner, Source::Recover(data), output)?;
    Ok(RecoverySummary {
        summary,
        skipped: fed.skipped,
    })
}
