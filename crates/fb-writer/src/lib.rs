//! Writes Vowpal Wabbit joined binary logs (schema v2): valid ones, broken
//! ones, and synthetic ones of any size.
//!
//! - [`LogWriter`] frames messages onto any `io::Write`: FILEMAGIC, HEADER,
//!   CHECKPOINT, REGULAR messages built from typed event specs
//!   ([`JoinedEventSpec`], [`PayloadSpec`]), EOF, and raw messages. Payloads
//!   can be zstd-compressed per event.
//! - [`broken`] damages a finished log in memory: truncation, flipped
//!   payload bytes, lying size or type fields. Bad magics, versions and
//!   unknown types are written directly by [`LogWriter`].
//! - [`synth`] generates deterministic synthetic logs (CB, CCB, Slates, CA,
//!   multistep) from a [`synth::GenConfig`], in constant memory, and
//!   reports what it wrote as [`synth::GenRecord`]s.
//!
//! ```
//! use fb_format::{MessageKind, Payload, PayloadDecoder, SliceReader};
//! use fb_writer::{CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, PayloadSpec};
//! use fb_schema::TimeStamp;
//!
//! let t = TimeStamp::new(2024, 1, 1, 12, 0, 0, 0);
//! let mut w = LogWriter::new(Vec::new());
//! w.file_magic(1)?;
//! w.checkpoint(&CheckpointConfig::default())?;
//! let cb = PayloadSpec::Cb(CbSpec {
//!     action_ids: Some(&[2, 1]),
//!     probabilities: Some(&[0.9, 0.1]),
//!     context: Some(br#"{"GUser":{"id":"a"},"_multi":[{"a":1},{"a":2}]}"#),
//!     ..CbSpec::default()
//! });
//! w.regular(&[JoinedEventSpec::new("event-1", t, cb).zstd()])?;
//! w.eof()?;
//! let log = w.into_inner();
//!
//! let messages: Vec<_> = SliceReader::new(&log).collect::<Result<_, _>>()?;
//! let kinds: Vec<_> = messages.iter().map(|m| m.kind).collect();
//! assert_eq!(kinds, [MessageKind::FileMagic, MessageKind::Checkpoint,
//!                    MessageKind::Regular, MessageKind::Eof]);
//! let event = messages[2].events()?.next().unwrap()?;
//! assert_eq!(event.id, "event-1");
//! match PayloadDecoder::default().payload(&event)? {
//!     Payload::Cb(cb) => assert_eq!(cb.action_ids().unwrap().get(0), 2),
//!     other => panic!("not CB: {other:?}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod broken;
mod error;
pub mod raw;
mod spec;
pub mod synth;
mod writer;

pub use error::{Error, Result};
pub use spec::{
    CaSpec, CbSpec, CheckpointConfig, DedupSpec, Encoding, JoinedEventSpec, MetaSpec,
    MultiSlotSpec, MultiStepSpec, PayloadSpec, SlotSpec,
};
pub use writer::{one_batch_log, LogWriter, DEFAULT_ZSTD_LEVEL, MAX_MESSAGE_SIZE};
