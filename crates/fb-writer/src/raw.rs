//! Raw client streams, as the client library's file senders write them
//! (FORMAT.md §6): messages of an 8-byte big-endian preamble and an
//! `EventBatch`. And the reverse of a joiner: a joined log taken apart
//! into its interaction, observation and episode streams, to join again.
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
    let batch = batch.max(1);
    let mut sides: [(Vec<&[u8]>, bool); 3] = Default::default();
    let mut writers = outs.map(RawStreamWriter::new);
    let mut counts = Counts::default();
    let bad = |e: fb_format::Error| Error::Config(format!("the joined log cannot be read: {e}"));
    for msg in SliceReader::new(log) {
        let msg = msg.map_err(bad)?;
        if msg.kind != MessageKind::Regular {
            continue;
        }
        let (_, list) = fb_schema::event_list(msg.payload).ok_or_else(|| {
            Error::Config(format!("message at byte {}: no event list", msg.offset))
        })?;
        for (position, view) in msg.events().map_err(bad)?.enumerate() {
            let view = view.map_err(bad)?;
            let (_, raw, _) = fb_schema::listed_event(msg.payload, list, position)
                .map_err(|why| Error::Config(format!("event {position}: {why}")))?;
            let side = match view.payload_type() {
                PayloadType::Outcome => {
                    counts.observations += 1;
                    1
                }
                PayloadType::Episode => {
                    counts.episodes += 1;
                    2
                }
                _ => {
                    counts.interactions += 1;
                    0
                }
            };
            let (Some((events, dedup)), Some(writer)) =
                (sides.get_mut(side), writers.get_mut(side))
            else {
                continue;
            };
            events.push(raw);
            *dedup |= view.payload_type() == PayloadType::DedupInfo;
            if events.len() >= batch {
                let encoding = if *dedup { "DEDUP" } else { "IDENTITY" };
                writer.batch(events, encoding)?;
                events.clear();
                *dedup = false;
            }
        }
    }
    for ((events, dedup), writer) in sides.iter().zip(writers.iter_mut()) {
        if !events.is_empty() {
            writer.batch(events, if *dedup { "DEDUP" } else { "IDENTITY" })?;
        }
        writer.flush()?;
    }
    Ok(counts)
}
