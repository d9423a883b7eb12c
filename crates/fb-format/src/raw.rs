//! The raw client streams a joiner consumes (not joined logs).
//!
//! Each message is an 8-byte preamble — reserved u8, version u8, message
//! type u16 **big-endian**, size u32 **big-endian** — then an `EventBatch`
//! flatbuffer of that size, with no padding.

use fb_schema::{verified, Event, EventBatch};
use nom::number::streaming::{be_u16, be_u32, u8 as byte};
use nom::Parser;

use crate::error::{Error, Result};
use crate::framer::DEFAULT_MAX_PAYLOAD;

/// One preamble-framed message of a raw stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawMessage<'a> {
    /// Byte offset of the preamble.
    pub offset: u64,
    /// 0-based message index.
    pub index: u64,
    /// Preamble version byte.
    pub version: u8,
    /// Preamble message type.
    pub msg_type: u16,
    /// The `EventBatch` bytes.
    pub payload: &'a [u8],
}

impl<'a> RawMessage<'a> {
    /// The verified `EventBatch`.
    pub fn batch(&self) -> Result<EventBatch<'a>> {
        verified::<EventBatch>(self.payload).map_err(|source| Error::InvalidFlatbuffer {
            offset: self.offset,
            index: self.index,
            what: "EventBatch",
            source,
        })
    }

    /// The verified `Event`s of the batch, in order.
    pub fn events(&self) -> Result<Vec<Event<'a>>> {
        let batch = self.batch()?;
        let mut out = Vec::new();
        for serialized in batch.events().iter().flatten() {
            let bytes = serialized.payload().map_or(&[][..], |v| v.bytes());
            let event = verified::<Event>(bytes).map_err(|source| Error::InvalidFlatbuffer {
                offset: self.offset,
                index: self.index,
                what: "Event",
                source,
            })?;
            out.push(event);
        }
        Ok(out)
    }
}

/// One event of a raw batch: its bytes, and what a joiner keys and orders
/// it by.
#[derive(Debug, Clone, Copy)]
pub struct RawEvent<'a> {
    /// The serialized `Event`, as stored.
    pub bytes: &'a [u8],
    /// `meta.id`: the event id (the episode id for multistep).
    pub id: &'a str,
    /// `meta.payload_type`.
    pub kind: fb_schema::PayloadType,
    /// `meta.client_time_utc`, `None` when absent or all zeros.
    pub client_time: Option<fb_schema::TimeStamp>,
}

impl<'a> RawMessage<'a> {
    /// The events of the batch with their ids, types and client times,
    /// each verified as an `Event`; an event without metadata or id is an
    /// error that says which.
    pub fn raw_events(&self) -> Result<Vec<RawEvent<'a>>> {
        let batch = self.batch()?;
        let mut out = Vec::with_capacity(batch.events().map_or(0, |e| e.len()));
        for serialized in batch.events().iter().flatten() {
            let bytes = serialized.payload().map_or(&[][..], |v| v.bytes());
            let parts = match fb_schema::event_parts(bytes) {
                Some(parts) => parts,
                None => verified::<Event>(bytes)
                    .map_err(|source| Error::InvalidFlatbuffer {
                        offset: self.offset,
                        index: self.index,
                        what: "Event",
                        source,
                    })?
                    .into(),
            };
            let missing = |field| Error::MissingField {
                offset: self.offset,
                index: self.index,
                what: if field == "meta" { "Event" } else { "Metadata" },
                field,
            };
            parts.meta.ok_or_else(|| missing("meta"))?;
            let id = parts.id.ok_or_else(|| missing("id"))?;
            out.push(RawEvent {
                bytes,
                id,
                kind: parts.payload_type,
                client_time: parts
                    .client_time
                    .map(|t| fb_schema::TimeStamp(*t))
                    .filter(|t| !t.is_zero()),
            });
        }
        Ok(out)
    }
}

/// The preamble's message type of an event batch (the only type the
/// client library writes).
pub const TYPE_EVENT_BATCH: u16 = 13;

/// Reads the preamble-framed messages of a raw stream held in a slice.
#[derive(Debug, Clone)]
pub struct RawStreamReader<'a> {
    data: &'a [u8],
    pos: usize,
    index: u64,
    failed: bool,
}

impl<'a> RawStreamReader<'a> {
    /// Reads `data` from its start.
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            index: 0,
            failed: false,
        }
    }

    /// The next message, `None` at the end of the input.
    pub fn next_message(&mut self) -> Result<Option<RawMessage<'a>>> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        if self.failed || rest.is_empty() {
            return Ok(None);
        }
        let offset = self.pos as u64;
        let truncated = |needed: u64| Error::Truncated {
            offset,
            index: self.index,
            kind: None,
            needed,
            available: rest.len() as u64,
        };
        let parsed = (byte::<_, nom::error::Error<&[u8]>>, byte, be_u16, be_u32).parse(rest);
        let Ok((body, (_reserved, version, msg_type, size))) = parsed else {
            self.failed = true;
            return Err(truncated(8));
        };
        if size > DEFAULT_MAX_PAYLOAD {
            self.failed = true;
            return Err(Error::PayloadTooLarge {
                offset,
                index: self.index,
                kind: crate::MessageKind::Unknown(u32::from(msg_type)),
                size: u64::from(size),
                limit: u64::from(DEFAULT_MAX_PAYLOAD),
            });
        }
        let Some(payload) = body.get(..size as usize) else {
            self.failed = true;
            return Err(truncated(8 + u64::from(size)));
        };
        let msg = RawMessage {
            offset,
            index: self.index,
            version,
            msg_type,
            payload,
        };
        self.pos += 8 + size as usize;
        self.index += 1;
        Ok(Some(msg))
    }
}

impl RawStreamReader<'_> {
    /// After an error, finds the next offset where a message of type
    /// [`TYPE_EVENT_BATCH`] starts whose `EventBatch` verifies, and reads
    /// on from there. Returns the byte range skipped, or `None` when no
    /// such message is left (the reader is then at its end). Verification
    /// is budgeted (16 times the input, and a mebibyte), so that bytes
    /// made to look like many preambles cannot make this quadratic.
    pub fn resync(&mut self) -> Option<(u64, u64)> {
        let from = self.pos;
        let mut budget = self.data.len().saturating_mul(16).saturating_add(1 << 20);
        let mut at = from + 1;
        let found = loop {
            let Some(head) = self.data.get(at..at + 8) else {
                break None;
            };
            let [0, _, t0, t1, s0, s1, s2, s3] = *head else {
                at += 1;
                continue;
            };
            let size = u32::from_be_bytes([s0, s1, s2, s3]);
            let payload = self
                .data
                .get(at + 8..(at + 8).saturating_add(size as usize));
            if let (true, true, Some(payload)) = (
                u16::from_be_bytes([t0, t1]) == TYPE_EVENT_BATCH,
                size <= DEFAULT_MAX_PAYLOAD,
                payload,
            ) {
                if budget < payload.len() {
                    break None;
                }
                budget -= payload.len();
                if verified::<EventBatch>(payload).is_ok() {
                    break Some(at);
                }
            }
            at += 1;
        };
        self.failed = false;
        match found {
            Some(at) => {
                self.pos = at;
                Some((from as u64, at as u64))
            }
            None => {
                self.pos = self.data.len();
                None
            }
        }
    }
}

impl<'a> Iterator for RawStreamReader<'a> {
    type Item = Result<RawMessage<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_message().transpose()
    }
}
