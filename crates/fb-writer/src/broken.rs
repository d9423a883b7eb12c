//! Deliberately broken logs: post-processing of a finished log in memory.
//!
//! Bad magics, bad versions and unknown types are written directly with
//! [`LogWriter::raw_frame`](crate::LogWriter::raw_frame),
//! [`LogWriter::file_magic`](crate::LogWriter::file_magic) and
//! [`LogWriter::message`](crate::LogWriter::message); the helpers here
//! damage bytes that were written correctly.
//!
//! Messages are located by walking the framing from byte 0 (FILEMAGIC is 8
//! bytes, every other message 8 + size + size % 8), without interpreting
//! EOF, so the log must be well framed up to the message asked for.

use std::ops::Range;

use fb_format::{frame_len, HEADER_LEN, TYPE_FILEMAGIC};

use crate::error::{Error, Result};

/// Where one message sits in a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// 0-based message index.
    pub index: u64,
    /// Byte offset of the message.
    pub offset: usize,
    /// Its raw type field.
    pub type_id: u32,
    /// Its raw size field.
    pub size_field: u32,
    /// Byte range of its payload in the log (empty for FILEMAGIC).
    pub payload: Range<usize>,
    /// Bytes it occupies, padding included.
    pub len: usize,
}

fn le_u32(log: &[u8], at: usize) -> Option<u32> {
    let bytes: [u8; 4] = log.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

/// The whole messages of `log`, in order, up to the first one that does
/// not fit (a truncated tail is left out).
pub fn spans(log: &[u8]) -> impl Iterator<Item = Span> + '_ {
    let mut offset = 0usize;
    let mut index = 0u64;
    std::iter::from_fn(move || {
        let type_id = le_u32(log, offset)?;
        let size_field = le_u32(log, offset + 4)?;
        let (payload, len) = if type_id == TYPE_FILEMAGIC {
            (HEADER_LEN..HEADER_LEN, HEADER_LEN)
        } else {
            let len = usize::try_from(frame_len(size_field)).ok()?;
            (HEADER_LEN..HEADER_LEN + size_field as usize, len)
        };
        if offset.checked_add(len)? > log.len() {
            return None;
        }
        let span = Span {
            index,
            offset,
            type_id,
            size_field,
            payload: offset + payload.start..offset + payload.end,
            len,
        };
        offset += len;
        index += 1;
        Some(span)
    })
}

/// The message of index `index`.
pub fn locate(log: &[u8], index: u64) -> Result<Span> {
    let mut count = 0;
    for span in spans(log) {
        if span.index == index {
            return Ok(span);
        }
        count += 1;
    }
    Err(Error::NoSuchMessage { index, count })
}

/// Cuts the log to its first `len` bytes (no-op when already shorter).
pub fn truncate(log: &mut Vec<u8>, len: usize) {
    log.truncate(len);
}

/// Flips every bit of the bytes at `positions`, counted from the start of
/// the payload of message `index`. Returns the absolute offsets flipped.
pub fn corrupt_payload(log: &mut [u8], index: u64, positions: &[usize]) -> Result<Vec<usize>> {
    let span = locate(log, index)?;
    let payload_len = span.payload.len();
    let mut flipped = Vec::with_capacity(positions.len());
    for &position in positions {
        let out_of_range = || Error::OutOfRange {
            what: format!("the payload of message {index}"),
            position: position as u64,
            len: payload_len as u64,
        };
        if position >= payload_len {
            return Err(out_of_range());
        }
        let at = span.payload.start + position;
        let byte = log.get_mut(at).ok_or_else(out_of_range)?;
        *byte ^= 0xFF;
        flipped.push(at);
    }
    Ok(flipped)
}

/// Overwrites the size field of message `index` (e.g. with `0xFFFF_FFFE`
/// for a size far above the payload that follows). Returns the message's
/// offset.
pub fn set_size_field(log: &mut [u8], index: u64, size_field: u32) -> Result<usize> {
    set_field(log, index, 4, size_field)
}

/// Overwrites the type field of message `index` (e.g. to make it unknown).
/// Returns the message's offset.
pub fn set_type_field(log: &mut [u8], index: u64, type_id: u32) -> Result<usize> {
    set_field(log, index, 0, type_id)
}

fn set_field(log: &mut [u8], index: u64, at: usize, value: u32) -> Result<usize> {
    let span = locate(log, index)?;
    let len = log.len();
    let field = log
        .get_mut(span.offset + at..span.offset + at + 4)
        .ok_or(Error::OutOfRange {
            what: "the log".into(),
            position: (span.offset + at) as u64,
            len: len as u64,
        })?;
    field.copy_from_slice(&value.to_le_bytes());
    Ok(span.offset)
}
