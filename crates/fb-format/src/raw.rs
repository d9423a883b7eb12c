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
    pub fn resync(&mut self) -> Option<std::ops::Range<u64>> {
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
                Some(from as u64..at as u64)
            }
            None => {
                self.pos = self.data.len();
                None
            }
        }
    }
}

/// What an input holds, from its first bytes and first batch: whether it
/// is a raw stream at all, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// No byte at all.
    Empty,
    /// A joined binary log (it starts with one of its message types,
    /// named here), not a raw stream.
    JoinedLog(crate::MessageKind),
    /// A raw stream, with the payload type of its first event; `None`
    /// when its first batch holds none or does not verify (a damaged one
    /// is the reader's to report).
    Raw(Option<fb_schema::PayloadType>),
    /// Neither: what its first bytes are.
    Unknown(String),
}

impl Content {
    /// Looks at the start of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let Some(head) = bytes.get(..8.min(bytes.len())).filter(|h| !h.is_empty()) else {
            return Self::Empty;
        };
        if let Some(&[a, b, c, d]) = head.get(..4) {
            match crate::MessageKind::from_type(u32::from_le_bytes([a, b, c, d])) {
                crate::MessageKind::Unknown(_) => {}
                kind => return Self::JoinedLog(kind),
            }
        }
        if let &[0, _, t0, t1, ..] = head {
            if u16::from_be_bytes([t0, t1]) == TYPE_EVENT_BATCH {
                let first = RawStreamReader::new(bytes)
                    .next_message()
                    .ok()
                    .flatten()
                    .and_then(|msg| msg.raw_events().ok())
                    .and_then(|events| events.first().map(|e| e.kind));
                return Self::Raw(first);
            }
        }
        let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
        Self::Unknown(format!(
            "its first bytes are {}, where a raw stream starts with a preamble of \
             00, a version, then 00 0d (an event batch)",
            hex.join(" ")
        ))
    }
}

impl<'a> Iterator for RawStreamReader<'a> {
    type Item = Result<RawMessage<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_message().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fb_schema::PayloadType;

    fn data(rel: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../tests/data/{rel}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn content_tells_raw_streams_from_logs_and_the_rest() {
        // (case, bytes, what they are)
        let cases = [
            ("empty", Vec::new(), Content::Empty),
            (
                "interactions",
                data("fb_events/cb_v2.fb"),
                Content::Raw(Some(PayloadType::CB)),
            ),
            (
                "observations",
                data("fb_events/f-reward_v2.fb"),
                Content::Raw(Some(PayloadType::Outcome)),
            ),
            (
                "joined log",
                data("valid_joined_logs/cb_simple.log"),
                Content::JoinedLog(crate::MessageKind::FileMagic),
            ),
            (
                "a REGULAR message first",
                [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0].to_vec(),
                Content::JoinedLog(crate::MessageKind::Regular),
            ),
            (
                "a preamble with no batch behind it",
                [0, 0, 0, 13, 0, 0, 1, 0].to_vec(),
                Content::Raw(None),
            ),
            (
                "text",
                b"{\"a\":1}\n".to_vec(),
                Content::Unknown(
                    "its first bytes are 7b 22 61 22 3a 31 7d 0a, where a raw stream starts \
                     with a preamble of 00, a version, then 00 0d (an event batch)"
                        .into(),
                ),
            ),
            ("one byte", vec![0], Content::Unknown(String::new())),
        ];
        for (case, bytes, want) in cases {
            let got = Content::of(&bytes);
            match (&got, &want) {
                (Content::Unknown(_), Content::Unknown(w)) if w.is_empty() => {}
                _ => assert_eq!(got, want, "{case}"),
            }
        }
    }
}
