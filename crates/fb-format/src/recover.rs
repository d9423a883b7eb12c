//! Recovery: every intact message of a damaged log, and exactly what was
//! lost.
//!
//! [`RecoveringReader`] reads a whole log held in a slice (read into memory
//! or mapped) and yields, in file order, the messages it can trust and the
//! byte ranges it had to skip ([`Recovered`]). It never stops early:
//!
//! - **In step** (at the start, and right after an accepted message) the
//!   message at the current offset is accepted when it is *plausible*:
//!   - its type is FILEMAGIC (with version 1), HEADER, CHECKPOINT, REGULAR
//!     or EOF;
//!   - its size is within the payload limit and its whole frame (header,
//!     payload, `size % 8` padding) lies within the input;
//!   - its payload passes the flatbuffers verifier for its type
//!     (`FileHeader`, `CheckpointInfo`, `JoinedPayload`).
//!
//!   The padding is not checked (the format does not enforce it). An EOF
//!   message needs only its type; its size field is ignored, as the format
//!   says, and an EOF cut inside its size field is still an EOF.
//! - **Otherwise** the reader resynchronizes: it scans forward one byte at a
//!   time for the next plausible message, reports the bytes from the failed
//!   offset up to it as one [`Skipped`] range (or up to the end of the
//!   input when none follows), and goes on in step from that message. While
//!   scanning, an EOF is plausible only with its full 8 bytes and a size of
//!   0, and a FILEMAGIC only with version 1.
//!
//! What counts as damage, where the plain readers ([`crate::SliceReader`])
//! behave differently:
//!
//! - A REGULAR (or HEADER, CHECKPOINT) message whose payload fails
//!   verification is skipped whole: the reported range starts at its offset
//!   and normally ends at the next message.
//! - A FILEMAGIC with a version other than 1 is skipped and reported
//!   ([`SkipReason::UnsupportedVersion`]) instead of ending the log.
//! - A message of unknown type is reported as skipped
//!   ([`SkipReason::UnknownType`]): the format defines no other type, and in
//!   a damaged file an unknown type is far more often a corrupt type field
//!   than a message from the future.
//! - **Data after an EOF message** is not ignored: a concatenation of two
//!   logs has an EOF then the FILEMAGIC of the second log. The reader scans
//!   on from the end of the EOF; when a plausible message follows, reading
//!   continues there (the bytes in between, if any, are reported with
//!   [`SkipReason::AfterEof`]); when none does, the rest of the input is
//!   reported with [`SkipReason::AfterEof`].
//!
//! Guarantees, whatever the input: no panic; every scan step advances at
//! least one byte (each byte is looked at as a candidate start at most
//! once); nothing is allocated in proportion to the input except one small
//! record per skipped range; and scanning takes time linear in the input
//! size. For the last, the verification work spent on scan candidates is
//! capped: each candidate is verified with limits proportional to its
//! payload (tables visited, bytes checked), and all candidates together
//! may hand at most 16 times the input size plus 16 MiB of payload to the
//! verifier. Damaged real logs come nowhere near that (most candidates
//! fail on their type or size field before any verification); crafted
//! input that exhausts it gets the rest of the input reported as skipped
//! with [`SkipReason::ScanLimit`]. Messages read in step are verified with
//! the usual limits ([`fb_schema::verifier_options`]), as the plain readers
//! do.
//!
//! Messages borrow from the input. [`Message::index`] counts the messages
//! this reader yields (skipped ranges do not count), so it can differ from
//! the index a plain reader would give.
//!
//! ```
//! use fb_format::recover::{Recovered, RecoveringReader, SkipReason};
//! use fb_format::MessageKind;
//!
//! // FILEMAGIC v1, 5 bytes of garbage, then an EOF.
//! let mut log = vec![0x56, 0x57, 0x46, 0x42, 1, 0, 0, 0];
//! log.extend_from_slice(&[9, 9, 9, 9, 9]);
//! log.extend_from_slice(&0xAAAA_AAAAu32.to_le_bytes());
//! log.extend_from_slice(&0u32.to_le_bytes());
//!
//! let items: Vec<Recovered<'_>> = RecoveringReader::new(&log).collect();
//! assert_eq!(items.len(), 3);
//! assert!(matches!(items[0], Recovered::Message(m) if m.kind == MessageKind::FileMagic));
//! match &items[1] {
//!     Recovered::Skipped(s) => {
//!         assert_eq!((s.start, s.end), (8, 13));
//!         assert_eq!(s.reason, SkipReason::UnknownType(0x0909_0909));
//!     }
//!     other => panic!("expected a skipped range, got {other:?}"),
//! }
//! assert!(matches!(items[2], Recovered::Message(m) if m.kind == MessageKind::Eof && m.offset == 13));
//! ```

use std::fmt;

use fb_schema::{
    verified_with, verifier_options, CheckpointInfo, FileHeader, InvalidFlatbuffer, JoinedPayload,
};
use flatbuffers::VerifierOptions;

use crate::framer::{frame_len, Message, DEFAULT_MAX_PAYLOAD, HEADER_LEN};
use crate::kind::{
    MessageKind, SUPPORTED_VERSION, TYPE_CHECKPOINT, TYPE_EOF, TYPE_FILEMAGIC, TYPE_HEADER,
    TYPE_REGULAR,
};
use crate::salvage::{salvage, Salvaged};

/// Why reading in step failed at the start of a skipped range.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The type field is not one of the five message types.
    UnknownType(u32),
    /// A FILEMAGIC with a format version other than 1.
    UnsupportedVersion(u32),
    /// A size field above the payload limit.
    PayloadTooLarge {
        /// The message type.
        kind: MessageKind,
        /// The declared payload size.
        size: u32,
        /// The limit in force.
        limit: u32,
    },
    /// The message runs past the end of the input (a cut file, or a size
    /// field too large for what remains).
    Truncated {
        /// The message type, when its type field is there.
        kind: Option<MessageKind>,
        /// Bytes the message needs (header, payload and padding).
        needed: u64,
        /// Bytes that remained.
        available: u64,
    },
    /// The payload does not pass the flatbuffers verifier for its type.
    InvalidPayload {
        /// The message type.
        kind: MessageKind,
        /// The verifier's reason.
        error: InvalidFlatbuffer,
    },
    /// Bytes after an EOF message that are not a plausible message.
    AfterEof,
    /// Resynchronization gave up: the verification work allowed while
    /// scanning (see the [module documentation](self)) is used up. Only
    /// crafted input gets here; the rest of the input is skipped.
    ScanLimit,
    /// A REGULAR message whose `JoinedPayload` verifies but one of whose
    /// events does not (its nested `Event`, or a missing field): the plain
    /// readers drop the events from there on; recovery salvages the good
    /// ones ([`crate::salvage`]).
    BadEvent {
        /// The event's position in the message.
        position: usize,
        /// What is wrong with it.
        detail: String,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownType(raw) => write!(f, "unknown message type 0x{raw:08X}"),
            Self::UnsupportedVersion(v) => {
                write!(f, "FILEMAGIC declares file-format version {v}, not 1")
            }
            Self::PayloadTooLarge { kind, size, limit } => write!(
                f,
                "{kind} message declares a {size}-byte payload, above the limit of {limit} bytes"
            ),
            Self::Truncated {
                kind,
                needed,
                available,
            } => {
                match kind {
                    Some(kind) => write!(f, "{kind} message")?,
                    None => f.write_str("message")?,
                }
                write!(
                    f,
                    " needs {needed} bytes but only {available} remain (cut short, or a \
                     corrupt size field)"
                )
            }
            Self::InvalidPayload { kind, error } => {
                let what = match kind {
                    MessageKind::Header => "FileHeader",
                    MessageKind::Checkpoint => "CheckpointInfo",
                    _ => "JoinedPayload",
                };
                write!(
                    f,
                    "{kind} message: {what} is not a valid flatbuffer: {}",
                    crate::error::one_line(error)
                )
            }
            Self::AfterEof => f.write_str("bytes after an EOF message that hold no message"),
            Self::BadEvent { position, detail } => write!(
                f,
                "REGULAR message: event {position} does not verify: {detail}"
            ),
            Self::ScanLimit => f.write_str(
                "too much verification work while looking for the next message: gave up",
            ),
        }
    }
}

/// A byte range that recovery skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Offset of the first skipped byte.
    pub start: u64,
    /// Offset one past the last skipped byte (the next message, or the end
    /// of the input).
    pub end: u64,
    /// What was wrong at `start`.
    pub reason: SkipReason,
}

impl Skipped {
    /// Number of bytes skipped.
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// True for an empty range (never yielded by [`RecoveringReader`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skipped bytes {}..{} ({} bytes): {}",
            self.start,
            self.end,
            self.len(),
            self.reason
        )
    }
}

/// One item of a recovering read, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered<'a> {
    /// An intact message (borrowed from the input).
    Message(Message<'a>),
    /// The events of a damaged REGULAR message that could be proven good,
    /// rebuilt as a message ([`crate::salvage`]); the [`Recovered::Skipped`]
    /// range of that message follows.
    Salvaged(Box<Salvaged>),
    /// A damaged or unreadable range that was skipped.
    Skipped(Skipped),
}

/// Reads every plausible message of a log held in a slice, skipping and
/// reporting damaged ranges (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct RecoveringReader<'a> {
    data: &'a [u8],
    pos: usize,
    index: u64,
    max_payload: u32,
    after_eof: bool,
    pending: Option<Message<'a>>,
    /// The skipped range of a message whose salvage was just yielded.
    pending_skip: Option<Skipped>,
    /// Payload bytes the scan may still hand to the verifier.
    scan_budget: u64,
}

/// What a scan found.
#[derive(Debug)]
enum Found<'a> {
    /// A plausible message.
    Message(Message<'a>),
    /// Nothing up to the end of the input.
    Nothing,
    /// The scan budget ran out.
    GaveUp,
}

/// Scan budget: payload bytes verified while scanning, per input byte...
const SCAN_BUDGET_PER_BYTE: u64 = 16;
/// ... plus this many.
const SCAN_BUDGET_EXTRA: u64 = 16 << 20;
/// Charged per scan probe on top of its payload length.
const SCAN_PROBE_COST: u64 = 64;

/// How strict a probe is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Right after an accepted message: an EOF is accepted whatever follows
    /// its type.
    InStep,
    /// Looking for a new start: an EOF needs its full 8 bytes and size 0.
    Scan,
}

impl<'a> RecoveringReader<'a> {
    /// Reads `data` with the default payload limit.
    pub fn new(data: &'a [u8]) -> Self {
        Self::with_max_payload(data, DEFAULT_MAX_PAYLOAD)
    }

    /// Reads `data`; a size field above `max_payload` makes its message
    /// implausible.
    pub fn with_max_payload(data: &'a [u8], max_payload: u32) -> Self {
        Self {
            data,
            pos: 0,
            index: 0,
            max_payload,
            after_eof: false,
            pending: None,
            pending_skip: None,
            scan_budget: (data.len() as u64)
                .saturating_mul(SCAN_BUDGET_PER_BYTE)
                .saturating_add(SCAN_BUDGET_EXTRA),
        }
    }

    /// Offset of the first byte not yet accounted for (yielded as a message
    /// or as a skipped range).
    pub fn offset(&self) -> u64 {
        match (&self.pending_skip, &self.pending) {
            (Some(skipped), _) => skipped.start,
            (None, Some(msg)) => msg.offset,
            (None, None) => self.pos as u64,
        }
    }

    /// The next message or skipped range, `None` once the whole input is
    /// accounted for.
    pub fn next_item(&mut self) -> Option<Recovered<'a>> {
        if let Some(skipped) = self.pending_skip.take() {
            return Some(Recovered::Skipped(skipped));
        }
        if let Some(msg) = self.pending.take() {
            return Some(Recovered::Message(self.accept(msg)));
        }
        let start = self.pos;
        if start >= self.data.len() {
            return None;
        }
        if self.after_eof {
            self.after_eof = false;
            return match self.find_from(start) {
                Found::Message(msg) if msg.offset == start as u64 => {
                    Some(Recovered::Message(self.accept(msg)))
                }
                found => Some(Recovered::Skipped(self.skip_to(
                    start,
                    found,
                    SkipReason::AfterEof,
                ))),
            };
        }
        match self.probe(start, Mode::InStep) {
            Ok(msg) => Some(Recovered::Message(self.accept(msg))),
            Err(reason) => {
                let salvaged = self.salvage(start, &reason);
                let found = self.find_from(start.saturating_add(1));
                let skipped = self.skip_to(start, found, reason);
                match salvaged {
                    Some(s) => {
                        self.pending_skip = Some(skipped);
                        Some(Recovered::Salvaged(Box::new(s)))
                    }
                    None => Some(Recovered::Skipped(skipped)),
                }
            }
        }
    }

    /// The good events of the REGULAR message at `at`, which failed to
    /// read in step for `reason`: cut by the end of the input, or not
    /// verifying (a size field too large is read up to the payload limit).
    fn salvage(&mut self, at: usize, reason: &SkipReason) -> Option<Salvaged> {
        let regular = Some(MessageKind::Regular);
        let cut = match reason {
            SkipReason::Truncated { kind, .. } if *kind == regular => true,
            SkipReason::InvalidPayload { kind, .. } | SkipReason::PayloadTooLarge { kind, .. }
                if Some(*kind) == regular =>
            {
                false
            }
            SkipReason::BadEvent { .. } => false,
            _ => return None,
        };
        let rest = self.data.get(at..)?;
        let size = read_u32(rest, 4)?;
        let end = (HEADER_LEN as u64 + u64::from(size.min(self.max_payload))).min(rest.len() as u64)
            as usize;
        let payload = rest.get(HEADER_LEN..end)?;
        let len = frame_len(size).min(rest.len() as u64) as usize;
        // Nothing kept: the skipped range says it all.
        let s = salvage(payload, at as u64, self.index, size, len, cut)
            .filter(|s| s.report.kept > 0)?;
        self.index += 1;
        Some(s)
    }

    /// Records `found` (if any) as the next message and reports the range
    /// from `start` to it (or to the end of the input).
    fn skip_to(&mut self, start: usize, found: Found<'a>, reason: SkipReason) -> Skipped {
        let (found, reason) = match found {
            Found::Message(msg) => (Some(msg), reason),
            Found::Nothing => (None, reason),
            Found::GaveUp => (None, SkipReason::ScanLimit),
        };
        let end = match &found {
            Some(msg) => msg.offset,
            None => self.data.len() as u64,
        };
        self.pos = usize::try_from(end).unwrap_or(self.data.len());
        self.pending = found;
        Skipped {
            start: start as u64,
            end,
            reason,
        }
    }

    /// Moves past an accepted message and numbers it.
    fn accept(&mut self, mut msg: Message<'a>) -> Message<'a> {
        msg.index = self.index;
        self.index += 1;
        let offset = usize::try_from(msg.offset).unwrap_or(self.data.len());
        self.pos = offset.saturating_add(msg.len).min(self.data.len());
        if msg.kind == MessageKind::Eof {
            self.after_eof = true;
        }
        msg
    }

    /// The first plausible message starting at `from` or later.
    fn find_from(&mut self, from: usize) -> Found<'a> {
        // A candidate needs at least a full 8-byte header.
        let Some(last) = self.data.len().checked_sub(HEADER_LEN) else {
            return Found::Nothing;
        };
        let mut at = from;
        while at <= last {
            // Horspool-style skip: the type field of a candidate at `at`
            // ends with the byte at `at + 3`. A byte that occurs in no type
            // value rules out the four starts whose type field holds it,
            // so the next possible start is past it.
            match self.data.get(at + 3) {
                Some(&b) if !in_some_type(b) => {
                    at += 4;
                    continue;
                }
                Some(_) => {}
                None => return Found::Nothing,
            }
            if let Some(head) = self.data.get(at..at + 4) {
                if is_known_type(head) {
                    match self.probe(at, Mode::Scan) {
                        Ok(msg) => return Found::Message(msg),
                        Err(SkipReason::ScanLimit) => return Found::GaveUp,
                        Err(_) => {}
                    }
                }
            }
            at += 1;
        }
        Found::Nothing
    }

    /// The message at `at`, when it is plausible.
    fn probe(&mut self, at: usize, mode: Mode) -> Result<Message<'a>, SkipReason> {
        let rest = self.data.get(at..).unwrap_or_default();
        let available = rest.len() as u64;
        let truncated = |kind, needed| SkipReason::Truncated {
            kind,
            needed,
            available,
        };
        let Some(raw_type) = read_u32(rest, 0) else {
            return Err(truncated(None, HEADER_LEN as u64));
        };
        let kind = MessageKind::from_type(raw_type);
        let size = read_u32(rest, 4);
        let message = |size_field: u32, payload: &'a [u8], len: usize| Message {
            kind,
            offset: at as u64,
            index: 0,
            size_field,
            payload,
            len,
        };
        match (kind, size) {
            (MessageKind::Unknown(raw), _) => Err(SkipReason::UnknownType(raw)),
            (MessageKind::Eof, Some(size)) if mode == Mode::InStep || size == 0 => {
                Ok(message(size, &[], HEADER_LEN))
            }
            (MessageKind::Eof, None) if mode == Mode::InStep => Ok(message(0, &[], rest.len())),
            (MessageKind::Eof, _) => Err(truncated(Some(kind), HEADER_LEN as u64)),
            (_, None) => Err(truncated(Some(kind), HEADER_LEN as u64)),
            (MessageKind::FileMagic, Some(version)) if version != SUPPORTED_VERSION => {
                Err(SkipReason::UnsupportedVersion(version))
            }
            (MessageKind::FileMagic, Some(version)) => Ok(message(version, &[], HEADER_LEN)),
            (_, Some(size)) if size > self.max_payload => Err(SkipReason::PayloadTooLarge {
                kind,
                size,
                limit: self.max_payload,
            }),
            (_, Some(size)) => {
                let total = frame_len(size);
                let payload_end = HEADER_LEN as u64 + u64::from(size);
                let payload = usize::try_from(payload_end)
                    .ok()
                    .filter(|_| total <= available)
                    .and_then(|end| rest.get(HEADER_LEN..end));
                let (Some(payload), Ok(len)) = (payload, usize::try_from(total)) else {
                    return Err(truncated(Some(kind), total));
                };
                let opts = match mode {
                    Mode::InStep => verifier_options(),
                    Mode::Scan => {
                        let cost = (payload.len() as u64).saturating_add(SCAN_PROBE_COST);
                        self.scan_budget = self
                            .scan_budget
                            .checked_sub(cost)
                            .ok_or(SkipReason::ScanLimit)?;
                        scan_options(payload.len())
                    }
                };
                let checked = match kind {
                    MessageKind::Header => verified_with::<FileHeader>(payload, &opts).map(drop),
                    MessageKind::Checkpoint => {
                        verified_with::<CheckpointInfo>(payload, &opts).map(drop)
                    }
                    _ => verified_with::<JoinedPayload>(payload, &opts).map(drop),
                };
                if let Err(error) = checked {
                    return Err(SkipReason::InvalidPayload { kind, error });
                }
                let msg = message(size, payload, len);
                // In step, every event of a REGULAR message must verify too:
                // one that does not is damage to salvage around, where the
                // plain readers drop the rest of the message.
                if mode == Mode::InStep && kind == MessageKind::Regular {
                    if let Ok(events) = msg.events() {
                        for (position, event) in events.enumerate() {
                            if let Err(e) = event {
                                return Err(SkipReason::BadEvent {
                                    position,
                                    detail: e.to_string(),
                                });
                            }
                        }
                    }
                }
                Ok(msg)
            }
        }
    }
}

impl<'a> Iterator for RecoveringReader<'a> {
    type Item = Recovered<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_item()
    }
}

/// Verifier limits while scanning: work proportional to the payload. A
/// buffer written by a flatbuffers builder shares nothing but vtables, so
/// it visits fewer tables than it has 4-byte words and verifies each byte
/// a few times at most; crafted buffers that share offsets to multiply the
/// verifier's work are cut short.
fn scan_options(len: usize) -> VerifierOptions {
    VerifierOptions {
        max_tables: len / 4 + 16,
        max_apparent_size: len.saturating_mul(4).saturating_add(256),
        ..verifier_options()
    }
}

/// Little-endian u32 at `at`, if four bytes are there.
fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let four: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(four))
}

/// True when `b` occurs in the little-endian bytes of some message type
/// (`VWFB`, `0x55`, `0x11`, `0xFF`, `0xAA`).
fn in_some_type(b: u8) -> bool {
    matches!(b, b'V' | b'W' | b'F' | b'B' | 0x55 | 0x11 | 0xFF | 0xAA)
}

/// True when the four bytes are one of the five message types.
fn is_known_type(head: &[u8]) -> bool {
    matches!(
        read_u32(head, 0),
        Some(TYPE_FILEMAGIC | TYPE_HEADER | TYPE_CHECKPOINT | TYPE_REGULAR | TYPE_EOF)
    )
}
