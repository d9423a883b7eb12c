//! Framing parser and typed decoding for Vowpal Wabbit joined binary logs
//! (schema v2).
//!
//! Three layers, each usable alone:
//! - [`Framer`]: the core. Takes unread bytes, returns the next message
//!   borrowed from them, a need for more input, or the end. Never copies.
//! - [`SliceReader`] (whole log in memory or mapped) and [`StreamReader`]
//!   (any `io::Read`, one reused buffer, memory bounded by the largest
//!   message).
//! - Typed decoding: [`Message::checkpoint`], [`Message::events`],
//!   [`PayloadDecoder::payload`], each verifying its buffer first.
//!
//! For damaged logs, [`recover::RecoveringReader`] yields every intact
//! message and reports every skipped byte range.
//!
//! Unknown message types are yielded as [`MessageKind::Unknown`] so a
//! listing can show them; [`Message::unknown_warning`] gives the structured
//! warning readers that skip them should record.
//!
//! ```
//! use fb_format::{MessageKind, SliceReader, Error};
//!
//! // FILEMAGIC v1, then a REGULAR message cut short.
//! let mut log = vec![0x56, 0x57, 0x46, 0x42, 1, 0, 0, 0];
//! log.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
//! log.extend_from_slice(&16u32.to_le_bytes());
//! log.extend_from_slice(&[0; 10]);
//!
//! let mut reader = SliceReader::new(&log);
//! let magic = reader.next_message().unwrap().unwrap();
//! assert_eq!(magic.kind, MessageKind::FileMagic);
//! match reader.next_message() {
//!     Err(Error::Truncated { offset, .. }) => assert_eq!(offset, 8),
//!     other => panic!("expected truncation, got {other:?}"),
//! }
//! ```

mod caches;
mod decode;
mod error;
mod framer;
mod hit_rate;
pub mod index;
mod kind;
mod loop_kind;
mod outcome_parts_cache;
mod prefetcher;
pub mod raw;
mod reader;
pub mod recover;
pub mod salvage;
pub mod skim;
pub mod splitmix;
mod zstd_frame_cache;

pub use caches::Caches;
pub use decode::{EventView, Events, Payload, PayloadDecoder};
pub use error::{Error, Result, Warning};
pub use framer::{
    frame_len, Frame, Framer, Message, Position, Step, DEFAULT_MAX_PAYLOAD, HEADER_LEN,
};
pub use hit_rate::HitRate;
pub use kind::*;
pub use loop_kind::{parse_name, Problem, RewardFunction, UnknownName};
pub use prefetcher::prefetch;
pub use reader::{read_skew, Messages, SliceReader, StreamReader, READ_ALIGN};

impl Message<'_> {
    /// The warning a reader that skips this message should record, for a
    /// message of unknown type.
    pub fn unknown_warning(&self) -> Option<Warning> {
        match self.kind {
            MessageKind::Unknown(type_id) => Some(Warning::UnknownMessageType {
                offset: self.offset,
                index: self.index,
                type_id,
                size: self.size_field,
            }),
            _ => None,
        }
    }
}
