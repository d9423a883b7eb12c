//! Raw client streams, as the client library's file senders write them
//! (FORMAT.md §6): messages of an 8-byte big-endian preamble and an
//! `EventBatch`. And the reverse of a joiner: a joined log taken apart
//! into its interaction, observation and episode streams, to join again,
//! each in log order ([`take_apart`]) or in client time order as a client
//! sends them ([`take_apart_by_time`]).
//!
//! ```
//! use fb_writer::raw::{take_apart, Streams};
//!
//! let log = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/cb_simple.log"
//! ))
//! .unwrap();
//! let mut streams = Streams::default();
//! let counts = take_apart(&log, &mut streams, 100).unwrap();
//! assert_eq!(counts.interactions, 1);
//! assert!(counts.observations >= 1);
//! assert!(streams.episodes.is_empty());
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;

use fb_format::{MessageKind, SliceReader};
use fb_schema::{
    BatchMetadata, BatchMetadataArgs, EventBatch, EventBatchArgs, PayloadType, SerializedEvent,
    SerializedEventArgs,
};
use flatbuffers::FlatBufferBuilder;

use crate::error::{Error, Result};

pub use fb_format::raw::TYPE_EVENT_BATCH;

/// Writes preamble-framed `EventBatch` messages.
pub struct RawStreamWriter<W: Write> {
    out: W,
    fbb: FlatBufferBuilder<'static>,
    offset: u64,
}

impl<W: Write> RawStreamWriter<W> {
    /// A writer at the start of `out`.
    pub fn new(out: W) -> Self {
        Self {
            out,
            fbb: FlatBufferBuilder::new(),
            offset: 0,
        }
    }

    /// Writes one batch of serialized `Event`s, declaring `encoding`
    /// (`IDENTITY` or `DEDUP`); returns the batch's offset.
    pub fn batch(&mut self, events: &[&[u8]], encoding: &str) -> Result<u64> {
        let fbb = &mut self.fbb;
        fbb.reset();
        let serialized: Vec<_> = events
            .iter()
            .map(|bytes| {
                let payload = fbb.create_vector(bytes);
                SerializedEvent::create(
                    fbb,
                    &SerializedEventArgs {
                        payload: Some(payload),
                    },
                )
            })
            .collect();
        let events_vec = fbb.create_vector(&serialized);
        let encoding = fbb.create_string(encoding);
        let metadata = BatchMetadata::create(
            fbb,
            &BatchMetadataArgs {
                content_encoding: Some(encoding),
                original_event_count: events.len() as u64,
            },
        );
        let root = EventBatch::create(
            fbb,
            &EventBatchArgs {
                events: Some(events_vec),
                metadata: Some(metadata),
            },
        );
        fbb.finish_minimal(root);
        let body = self.fbb.finished_data();
        let size = u32::try_from(body.len()).map_err(|_| Error::TooLarge {
            what: "event batch",
            size: body.len() as u64,
        })?;
        let start = self.offset;
        let [t0, t1] = TYPE_EVENT_BATCH.to_be_bytes();
        let [s0, s1, s2, s3] = size.to_be_bytes();
        let preamble = [0, 0, t0, t1, s0, s1, s2, s3];
        let io = |source| Error::Io {
            offset: start,
            source,
        };
        self.out.write_all(&preamble).map_err(io)?;
        self.out.write_all(body).map_err(io)?;
        self.offset += 8 + u64::from(size);
        Ok(start)
    }

    /// Flushes the output.
    pub fn flush(&mut self) -> Result<()> {
        let offset = self.offset;
        self.out
            .flush()
            .map_err(|source| Error::Io { offset, source })
    }

    /// The output.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Three raw streams in memory.
#[derive(Debug, Default, Clone)]
pub struct Streams {
    /// Decisions, multistep steps and DedupInfo events.
    pub interactions: Vec<u8>,
    /// Outcomes and activations.
    pub observations: Vec<u8>,
    /// Multistep episode events (empty when the log has none).
    pub episodes: Vec<u8>,
}

/// What [`take_apart`] wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Events in the interaction stream.
    pub interactions: u64,
    /// Events in the observation stream.
    pub observations: u64,
    /// Events in the episode stream.
    pub episodes: u64,
    /// Events written after a later one of their stream (by client
    /// time): with [`take_apart_by_time`], those more than its `disorder`
    /// earlier than an event before them in the log.
    pub behind: u64,
}

/// Takes a joined log apart into raw streams in memory: see
/// [`take_apart_into`].
pub fn take_apart(log: &[u8], out: &mut Streams, batch: usize) -> Result<Counts> {
    let Streams {
        interactions,
        observations,
        episodes,
    } = out;
    take_apart_into(log, [interactions, observations, episodes], batch)
}

/// Takes a joined log apart into raw streams (interactions, observations,
/// episodes, written to `outs` in that order): every event of its REGULAR
/// messages, as stored (`Event` bytes), in log order, into the stream of
/// its side, `batch` events per batch. A batch holding a DedupInfo
/// declares the `DEDUP` encoding. Stops at the first damage (an error).
pub fn take_apart_into<W: Write>(log: &[u8], outs: [W; 3], batch: usize) -> Result<Counts> {
    let mut streams = outs.map(|out| Stream::new(out, batch));
    let mut counts = Counts::default();
    each_event(log, |side, event, dedup| {
        let Some(stream) = streams.get_mut(side) else {
            return Ok(());
        };
        count(&mut counts, side);
        stream.push(event, dedup)
    })?;
    for stream in &mut streams {
        stream.finish()?;
    }
    Ok(counts)
}

/// [`take_apart_into`], but each stream in the order of its events'
/// client times (`Metadata.client_time_utc`), as a client writes it; on
/// equal times, in log order. An event is held until the latest client
/// time met in its stream is `disorder` µs past its own, so memory is
/// bounded by the events of that span: give how much earlier than an
/// event before it in the log an event of the same stream can be (for a
/// generated log, [`crate::synth::STREAM_DISORDER_MICROS`]). An event
/// even earlier is written late, and counted in [`Counts::behind`]. An
/// event without client time keeps its place after the one before it.
pub fn take_apart_by_time<W: Write>(
    log: &[u8],
    outs: [W; 3],
    batch: usize,
    disorder: i64,
) -> Result<Counts> {
    let mut streams = outs.map(|out| Reordered {
        stream: Stream::new(out, batch),
        held: BinaryHeap::new(),
        latest: i64::MIN,
        written: i64::MIN,
        seq: 0,
    });
    let mut counts = Counts::default();
    each_event(log, |side, event, dedup| {
        let Some(stream) = streams.get_mut(side) else {
            return Ok(());
        };
        count(&mut counts, side);
        let time = fb_schema::event_parts(event)
            .and_then(|parts| parts.client_time)
            .map(|t| fb_schema::TimeStamp(*t))
            .filter(|t| !t.is_zero())
            .map_or(stream.latest, |t| fb_format::index::micros(&t));
        stream.latest = stream.latest.max(time);
        stream.held.push(Reverse((time, stream.seq, event, dedup)));
        stream.seq += 1;
        let until = stream.latest.saturating_sub(disorder);
        stream.write_until(until, &mut counts.behind)
    })?;
    for stream in &mut streams {
        stream.write_until(i64::MAX, &mut counts.behind)?;
        stream.stream.finish()?;
    }
    Ok(counts)
}

/// Counts an event of stream `side`.
fn count(counts: &mut Counts, side: usize) {
    match side {
        0 => counts.interactions += 1,
        1 => counts.observations += 1,
        _ => counts.episodes += 1,
    }
}

/// Calls `each(side, event bytes, is a DedupInfo)` for every event of the
/// REGULAR messages of `log`, in order; side 0 is interactions, 1
/// observations, 2 episodes. Stops at the first damage (an error).
fn each_event<'a>(
    log: &'a [u8],
    mut each: impl FnMut(usize, &'a [u8], bool) -> Result<()>,
) -> Result<()> {
    let bad = |e: fb_format::Error| Error::Config(format!("the joined log cannot be read: {e}"));
    for msg in SliceReader::new(log) {
        let msg = msg.map_err(bad)?;
        if msg.kind != MessageKind::Regular {
            continue;
        }
        let (_, list) = fb_format::skim::event_list(msg.payload).ok_or_else(|| {
            Error::Config(format!("message at byte {}: no event list", msg.offset))
        })?;
        for (position, view) in msg.events().map_err(bad)?.enumerate() {
            let view = view.map_err(bad)?;
            let (_, raw, _) = fb_format::skim::listed_event(msg.payload, list, position)
                .map_err(|why| Error::Config(format!("event {position}: {why}")))?;
            let side = match view.payload_type() {
                PayloadType::Outcome => 1,
                PayloadType::Episode => 2,
                _ => 0,
            };
            each(side, raw, view.payload_type() == PayloadType::DedupInfo)?;
        }
    }
    Ok(())
}

/// One raw stream being written, a batch at a time.
struct Stream<'a, W: Write> {
    writer: RawStreamWriter<W>,
    events: Vec<&'a [u8]>,
    dedup: bool,
    batch: usize,
}

impl<'a, W: Write> Stream<'a, W> {
    fn new(out: W, batch: usize) -> Self {
        Self {
            writer: RawStreamWriter::new(out),
            events: Vec::new(),
            dedup: false,
            batch: batch.max(1),
        }
    }

    fn push(&mut self, event: &'a [u8], dedup: bool) -> Result<()> {
        self.events.push(event);
        self.dedup |= dedup;
        if self.events.len() >= self.batch {
            self.write_batch()?;
        }
        Ok(())
    }

    fn write_batch(&mut self) -> Result<()> {
        let encoding = if self.dedup { "DEDUP" } else { "IDENTITY" };
        self.writer.batch(&self.events, encoding)?;
        self.events.clear();
        self.dedup = false;
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        if !self.events.is_empty() {
            self.write_batch()?;
        }
        self.writer.flush()
    }
}

/// An event waiting to be written: its client time, its place in the log,
/// its bytes, and whether it is a DedupInfo.
type Held<'a> = Reverse<(i64, u64, &'a [u8], bool)>;

/// A stream whose events wait, in order of (client time, place in the
/// log), until no event still to come can be earlier.
struct Reordered<'a, W: Write> {
    stream: Stream<'a, W>,
    held: BinaryHeap<Held<'a>>,
    /// The latest client time met, and the one written last.
    latest: i64,
    written: i64,
    /// Events met, to keep the log's order on equal times.
    seq: u64,
}

impl<W: Write> Reordered<'_, W> {
    /// Writes the events held with a time up to `until`, counting those
    /// earlier than one written before them.
    fn write_until(&mut self, until: i64, behind: &mut u64) -> Result<()> {
        while self
            .held
            .peek()
            .is_some_and(|Reverse(next)| next.0 <= until)
        {
            let Some(Reverse((time, _, event, dedup))) = self.held.pop() else {
                break;
            };
            if time < self.written {
                *behind += 1;
            }
            self.written = self.written.max(time);
            self.stream.push(event, dedup)?;
        }
        Ok(())
    }
}
