//! One pipeline for every conversion: a source of framed messages, the
//! joiner, a filter, and a sink that receives the kept events in log order.
//!
//! ```text
//!   Source ──► framing ──► Joiner ──► keep? ──► Maker::add ──► batch ──► Sink::take
//!  (stream,    (Framer)    (state:     (Filter   (formats,      (lines,     (in log
//!   slice,                  checkpoint, or any    one per        columns,    order)
//!   recover)                dedup)      closure)  thread)        sums)
//! ```
//!
//! One thread runs every stage in turn. With more, a reading thread frames
//! and follows the ordered state, workers join and fill batches from
//! snapshots of it, and the sink takes the batches in order (see
//! `parallel.rs`): the sink sees the same events in the same order
//! whatever the number of threads, so DSJSON comes out byte-identical
//! (a sink that lets them, `Sink::batches_may_join`, gets the short runs
//! of events between checkpoints or inputs joined into fewer batches).
//!
//! ```
//! use fb_join::{dsjson::LinesSink, Options, Pipeline, Source};
//!
//! let log = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/cb_simple.log"
//! ))
//! .unwrap();
//! let sink = LinesSink::new(Vec::new(), Options::default().compat);
//! let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, 1);
//! let fed = pipeline.feed(Source::Slice(&log), fb_format::Position::START, &|| false, &mut |_| {}).unwrap();
//! assert!(fed.framing_error.is_none());
//! assert_eq!(pipeline.kept(), 1);
//! let (_, sink) = pipeline.finish();
//! assert!(sink.into_inner().starts_with(br#"{"_label_cost":-1.5,"#));
//! ```

use std::io::Read;

use fb_format::recover::{Recovered, RecoveringReader, Skipped};
use fb_format::salvage::{SalvageReport, Salvaged};
use fb_format::{Framer, Message, MessageKind, Position, SliceReader, StreamReader};

use crate::event::JoinedEvent;
use crate::feed::{FeedReport, Progress, Source};
use crate::joiner::Joiner;
use crate::parallel;
use crate::sink::{Maker, Sink};
use crate::{Error, Options};

/// Source, joiner, filter and sink, for any number of inputs in turn: the
/// joiner's state carries from one to the next, so several inputs make
/// one log.
pub struct Pipeline<S: Sink, K> {
    joiner: Joiner,
    keep: K,
    sink: S,
    threads: usize,
    kept: u64,
    filtered: u64,
}

impl<S, K> Pipeline<S, K>
where
    S: Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    /// A pipeline joining with `opts`, keeping the events `keep` accepts
    /// (see [`crate::Filter::keep`]), on `threads` threads (1 or more).
    pub fn new(opts: Options, keep: K, sink: S, threads: usize) -> Self {
        Self::with_joiner(Joiner::new(opts), keep, sink, threads)
    }

    /// A pipeline around a joiner that may have read other inputs.
    pub fn with_joiner(mut joiner: Joiner, keep: K, sink: S, threads: usize) -> Self {
        if sink.sees_messages() {
            joiner.watch_messages();
        }
        Self {
            joiner,
            keep,
            sink,
            threads: threads.max(1),
            kept: 0,
            filtered: 0,
        }
    }

    /// The joiner: configuration, metrics and diagnostics so far.
    pub fn joiner(&self) -> &Joiner {
        &self.joiner
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// Events handed to the sink so far.
    pub fn kept(&self) -> u64 {
        self.kept
    }

    /// Events the filter left out so far.
    pub fn filtered(&self) -> u64 {
        self.filtered
    }

    /// The number of threads it joins on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The joiner, the filter and the sink, apart (a session's threads
    /// borrow each).
    pub(crate) fn parts(&mut self) -> (&mut Joiner, &K, &mut S) {
        (&mut self.joiner, &self.keep, &mut self.sink)
    }

    /// Counts events a session kept and filtered.
    pub(crate) fn add_counts(&mut self, kept: u64, filtered: u64) {
        self.kept += kept;
        self.filtered += filtered;
    }

    /// Gives the joiner and the sink back.
    pub fn finish(self) -> (Joiner, S) {
        (self.joiner, self.sink)
    }

    /// Reads `source`, whose first byte is the message at `start` in the
    /// log (offsets and indices in diagnostics and errors are the log's),
    /// until its end, a framing error, or `stop` says so before a message.
    /// `progress` is told how far the work has got.
    pub fn feed(
        &mut self,
        source: Source<'_>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, Error> {
        let limit = u32::try_from(self.joiner.options().max_payload).unwrap_or(u32::MAX);
        let framer = Framer::with_max_payload(limit).starting_at(start);
        // Recovery resynchronizes on one thread, whatever the count.
        if let Source::Recover(data) = source {
            let mut reader = Recovering {
                inner: RecoveringReader::with_max_payload(data, limit),
                skipped: Vec::new(),
                salvaged: Vec::new(),
                current: None,
                at: Position::START,
                len: data.len() as u64,
            };
            let mut fed = self.serial(&mut reader, stop, progress)?;
            fed.skipped = reader.skipped;
            fed.salvaged = reader.salvaged;
            return Ok(fed);
        }
        if self.threads > 1 {
            let out = parallel::run(
                &mut self.joiner,
                source,
                framer,
                &mut self.sink,
                self.threads,
                &self.keep,
                stop,
                progress,
            )?;
            self.kept += out.kept;
            self.filtered += out.filtered;
            return Ok(out.fed);
        }
        match source {
            Source::Stream(input) => self.serial(
                &mut StreamReader::with_framer(input, framer),
                stop,
                progress,
            ),
            Source::Slice(data) => {
                let caches = self.joiner.options().caches;
                let mut reader = SliceReader::with_framer(data, framer).with_caches(caches);
                self.serial(&mut reader, stop, progress)
            }
            Source::Recover(_) => Ok(FeedReport::default()),
        }
    }

    /// The one-thread loop over any reader: each message joined, its kept
    /// events added to the batch, the batch handed over when full.
    fn serial(
        &mut self,
        reader: &mut impl Reader,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, Error> {
        let mut maker = self.sink.serial_maker(self.joiner.options().caches);
        let mut batch = self.sink.first_batch(&mut maker);
        let sees_messages = self.sink.sees_messages();
        let mut fed = FeedReport::default();
        let mut events = 0u64;
        let kept_before = self.kept;
        let mut failed = None;
        loop {
            if stop() {
                fed.stopped_at = Some(reader.at());
                break;
            }
            let msg = match reader.next() {
                Ok(Some(msg)) => msg,
                Ok(None) => break,
                Err(err) => {
                    self.joiner.record_framing_error(&err);
                    fed.framing_error = Some(err);
                    break;
                }
            };
            fed.messages += 1;
            fed.kinds.add(msg.kind);
            let (keep, kept, filtered) = (&self.keep, &mut self.kept, &mut self.filtered);
            let sink = &mut self.sink;
            if msg.kind != MessageKind::Regular && sees_messages {
                // In log order: the batch of the messages before it first.
                hand_over(sink, &mut maker, &mut batch, &mut failed);
                if let Err(e) = sink.control(&msg) {
                    failed.get_or_insert(e);
                }
            }
            self.joiner.push_each(&msg, |ev| {
                events += 1;
                if !keep(ev) {
                    *filtered += 1;
                    return;
                }
                *kept += 1;
                maker.add(&mut batch, ev);
                // Handed over as soon as full, inside a message too: a
                // message of many events then makes no batch longer than
                // the sink asked for (Arrow's even batches stay uncopied).
                // After a failed take the message's events still go to
                // the batch; the feed ends with the error after it.
                if maker.full(&batch) {
                    hand_over(sink, &mut maker, &mut batch, &mut failed);
                }
            });
            if msg.kind == MessageKind::Regular {
                maker.message(&mut batch, &msg, self.joiner.last_message_read());
            }
            if let Some(e) = failed.take() {
                return Err(e);
            }
            let end = msg.offset + msg.len as u64;
            progress(Progress {
                read: end,
                finished: end,
                events,
            });
        }
        self.sink.take(&mut batch)?;
        self.sink.recycle(maker, batch);
        if self.kept > kept_before {
            self.sink.input_done()?;
        }
        fed.offset = reader.at().offset;
        Ok(fed)
    }
}

/// Hands a full batch of the one-thread loop to the sink, keeping the
/// first error. Out of line: once a batch, not once an event.
#[cold]
#[inline(never)]
fn hand_over<S: Sink>(
    sink: &mut S,
    maker: &mut S::Maker,
    batch: &mut S::Batch,
    failed: &mut Option<Error>,
) {
    match sink.take(batch) {
        Ok(()) => maker.clear(batch),
        Err(e) => {
            failed.get_or_insert(e);
        }
    }
}

/// The two framing readers, as the one-thread loop uses them.
trait Reader {
    fn next(&mut self) -> fb_format::Result<Option<Message<'_>>>;
    /// Where the next unread message is.
    fn at(&self) -> Position;
}

impl Reader for SliceReader<'_> {
    fn next(&mut self) -> fb_format::Result<Option<Message<'_>>> {
        self.next_message()
    }

    fn at(&self) -> Position {
        Position::new(self.offset(), self.index())
    }
}

impl<R: Read> Reader for StreamReader<R> {
    fn next(&mut self) -> fb_format::Result<Option<Message<'_>>> {
        self.next_message()
    }

    fn at(&self) -> Position {
        Position::new(self.offset(), self.index())
    }
}

/// A recovering read as the one-thread loop uses it: skipped ranges are
/// kept aside.
struct Recovering<'a> {
    inner: RecoveringReader<'a>,
    skipped: Vec<Skipped>,
    salvaged: Vec<SalvageReport>,
    /// The salvaged message last handed out (it borrows from here).
    current: Option<Box<Salvaged>>,
    at: Position,
    len: u64,
}

impl Reader for Recovering<'_> {
    fn next(&mut self) -> fb_format::Result<Option<Message<'_>>> {
        loop {
            match self.inner.next() {
                Some(Recovered::Message(msg)) => {
                    self.at = Position::new(msg.offset + msg.len as u64, msg.index + 1);
                    return Ok(Some(msg));
                }
                Some(Recovered::Salvaged(s)) => {
                    self.at = Position::new(s.report.offset + s.len as u64, s.report.index + 1);
                    self.salvaged.push(s.report.clone());
                    let s = self.current.insert(s);
                    return Ok(Some(s.message()));
                }
                Some(Recovered::Skipped(range)) => self.skipped.push(range),
                None => {
                    self.at.offset = self.len;
                    return Ok(None);
                }
            }
        }
    }

    fn at(&self) -> Position {
        self.at
    }
}
