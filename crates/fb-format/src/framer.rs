//! The framing core: finds message boundaries in a byte slice.
//!
//! [`Framer`] keeps only positions and counters; the caller owns the bytes.
//! Each call looks at the unread input and says what it found: a whole
//! message (borrowed from the input, never copied), a need for more input,
//! or the end of the log. This is what lets the same core serve a memory
//! map, a reused read buffer, or bytes fed one at a time.

use nom::number::streaming::le_u32;
use nom::Parser;

use crate::error::{Error, Result};
use crate::kind::{MessageKind, SUPPORTED_VERSION};

/// Default payload-size limit: 256 MiB.
pub const DEFAULT_MAX_PAYLOAD: u32 = 256 << 20;

/// Bytes of the type and size fields.
pub const HEADER_LEN: usize = 8;

/// Total bytes a message with `size` payload bytes occupies on disk.
///
/// The padding is `size % 8` bytes, not "up to a multiple of 8".
pub fn frame_len(size: u32) -> u64 {
    HEADER_LEN as u64 + u64::from(size) + u64::from(size % 8)
}

/// Where a message starts in a log: its byte offset and its index among
/// the log's messages, both counted from 0. A source that starts inside a
/// log starts at a `Position`, so that offsets in errors and diagnostics
/// are always the log's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Byte offset of the message's first byte.
    pub offset: u64,
    /// 0-based position of the message in the log.
    pub index: u64,
}

impl Position {
    /// The start of a log: byte 0, message 0.
    pub const START: Self = Self {
        offset: 0,
        index: 0,
    };

    /// The message at `offset` with index `index`.
    pub const fn new(offset: u64, index: u64) -> Self {
        Self { offset, index }
    }
}

/// One framed message, borrowing its payload from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// What the message holds.
    pub kind: MessageKind,
    /// Byte offset of the message's first byte in the stream.
    pub offset: u64,
    /// 0-based position of the message in the stream.
    pub index: u64,
    /// The raw size field: the payload size, or for FILEMAGIC the inline
    /// format version.
    pub size_field: u32,
    /// The payload without padding (empty for FILEMAGIC and EOF).
    pub payload: &'a [u8],
    /// Bytes the message occupies, padding included.
    pub len: usize,
}

/// Where a message sits, without borrowing: what [`Framer::frame`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// What the message holds.
    pub kind: MessageKind,
    /// Byte offset of the message in the stream.
    pub offset: u64,
    /// 0-based message index.
    pub index: u64,
    /// The raw size field.
    pub size_field: u32,
    /// Range of the payload within the input passed to `frame`.
    pub payload: std::ops::Range<usize>,
    /// Bytes the message occupies, padding included.
    pub len: usize,
}

impl Frame {
    /// Borrows the payload from the same input that was passed to `frame`.
    pub fn message<'a>(&self, input: &'a [u8]) -> Message<'a> {
        Message {
            kind: self.kind,
            offset: self.offset,
            index: self.index,
            size_field: self.size_field,
            payload: input.get(self.payload.clone()).unwrap_or_default(),
            len: self.len,
        }
    }
}

/// Why [`Framer::frame`] stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<T> {
    /// A whole message; drop `len` bytes from the front of the input before
    /// the next call.
    Message(T),
    /// The input holds part of a message: call again with at least this
    /// many bytes (counted from the start of the unread input).
    NeedMore(usize),
    /// The log is over: input ended at a message boundary, or an EOF
    /// message was read, or an earlier call returned an error.
    End,
}

/// Incremental message splitter.
#[derive(Debug, Clone)]
pub struct Framer {
    offset: u64,
    index: u64,
    max_payload: u32,
    done: bool,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new()
    }
}

impl Framer {
    /// A framer at byte 0 with the default payload limit.
    pub fn new() -> Self {
        Self::with_max_payload(DEFAULT_MAX_PAYLOAD)
    }

    /// A framer whose payload-size limit is `max_payload` bytes.
    pub fn with_max_payload(max_payload: u32) -> Self {
        Self {
            offset: 0,
            index: 0,
            max_payload,
            done: false,
        }
    }

    /// Starts counting at `at` (for reading from the middle of a log).
    pub fn starting_at(mut self, at: Position) -> Self {
        self.offset = at.offset;
        self.index = at.index;
        self
    }

    /// Where the next message starts.
    pub fn position(&self) -> Position {
        Position::new(self.offset, self.index)
    }

    /// Stream offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Index the next message will get.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The payload-size limit.
    pub fn max_payload(&self) -> u32 {
        self.max_payload
    }

    /// True once an EOF message, the end of input or an error was seen.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Ends the log here: every later call returns [`Step::End`].
    pub fn stop(&mut self) {
        self.done = true;
    }

    /// Like [`Framer::frame`], but borrows the message from `input`.
    pub fn next<'a>(&mut self, input: &'a [u8], at_end: bool) -> Result<Step<Message<'a>>> {
        Ok(match self.frame(input, at_end)? {
            Step::Message(frame) => Step::Message(frame.message(input)),
            Step::NeedMore(n) => Step::NeedMore(n),
            Step::End => Step::End,
        })
    }

    /// Looks at `input`, the unread bytes starting at [`Framer::offset`].
    ///
    /// `at_end` says no byte will follow `input`: a partial message is then
    /// reported as [`Error::Truncated`] instead of [`Step::NeedMore`].
    /// After a message the framer assumes its `len` bytes are consumed.
    pub fn frame(&mut self, input: &[u8], at_end: bool) -> Result<Step<Frame>> {
        if self.done {
            return Ok(Step::End);
        }
        let result = self.frame_inner(input, at_end);
        match &result {
            Ok(Step::Message(frame)) => {
                self.offset += frame.len as u64;
                self.index += 1;
                if frame.kind == MessageKind::Eof {
                    self.done = true;
                }
            }
            Ok(Step::End) | Err(_) => self.done = true,
            Ok(Step::NeedMore(_)) => {}
        }
        result
    }

    fn frame_inner(&self, input: &[u8], at_end: bool) -> Result<Step<Frame>> {
        if input.is_empty() {
            return Ok(if at_end { Step::End } else { Step::NeedMore(4) });
        }
        let Ok((rest, raw_type)) = le_u32::<_, nom::error::Error<&[u8]>>(input) else {
            return self.short(None, 4, input.len(), at_end);
        };
        let kind = MessageKind::from_type(raw_type);
        let size = match (le_u32::<_, nom::error::Error<&[u8]>>).parse(rest) {
            Ok((_, size)) => Some(size),
            Err(_) => None,
        };
        if kind == MessageKind::Eof {
            // Reading stops at the type; the size is informative only, so
            // wait for it unless the input is over.
            return match size {
                Some(size) => Ok(Step::Message(self.frame_of(kind, size, 8..8, 8))),
                None if at_end => Ok(Step::Message(self.frame_of(kind, 0, 4..4, 4))),
                None => Ok(Step::NeedMore(HEADER_LEN)),
            };
        }
        let Some(size) = size else {
            return self.short(Some(kind), HEADER_LEN as u64, input.len(), at_end);
        };
        if kind == MessageKind::FileMagic {
            if size != SUPPORTED_VERSION {
                return Err(Error::UnsupportedVersion {
                    offset: self.offset,
                    index: self.index,
                    version: size,
                });
            }
            return Ok(Step::Message(self.frame_of(kind, size, 8..8, HEADER_LEN)));
        }
        if size > self.max_payload {
            return Err(Error::PayloadTooLarge {
                offset: self.offset,
                index: self.index,
                kind,
                size: u64::from(size),
                limit: u64::from(self.max_payload),
            });
        }
        let total = frame_len(size);
        if (input.len() as u64) < total {
            return self.short(Some(kind), total, input.len(), at_end);
        }
        // total <= max_payload * 2 + 8 fits in usize on every supported target.
        let end = HEADER_LEN + size as usize;
        Ok(Step::Message(self.frame_of(
            kind,
            size,
            HEADER_LEN..end,
            total as usize,
        )))
    }

    fn frame_of(
        &self,
        kind: MessageKind,
        size_field: u32,
        payload: std::ops::Range<usize>,
        len: usize,
    ) -> Frame {
        Frame {
            kind,
            offset: self.offset,
            index: self.index,
            size_field,
            payload,
            len,
        }
    }

    fn short(
        &self,
        kind: Option<MessageKind>,
        needed: u64,
        available: usize,
        at_end: bool,
    ) -> Result<Step<Frame>> {
        if at_end {
            Err(Error::Truncated {
                offset: self.offset,
                index: self.index,
                kind,
                needed,
                available: available as u64,
            })
        } else {
            Ok(Step::NeedMore(
                usize::try_from(needed).unwrap_or(usize::MAX),
            ))
        }
    }
}
