//! The one error type of this crate, and structured warnings.

use crate::kind::MessageKind;

/// Everything that can stop reading or decoding a joined log.
///
/// Data variants say *where*: the byte offset of the message the problem is
/// in and its index (0-based, in file order).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// FILEMAGIC carried a format version other than 1.
    #[error(
        "FILEMAGIC at byte {offset} (message {index}) declares file-format version {version}; \
         only version 1 exists: the file is not a joined log of this format or was written by \
         an unknown tool"
    )]
    UnsupportedVersion {
        /// Byte offset of the FILEMAGIC message.
        offset: u64,
        /// Message index.
        index: u64,
        /// The version found.
        version: u32,
    },

    /// The input ended inside a message.
    #[error(
        "input ends inside {} message {index} starting at byte {offset}: the message needs \
         {needed} bytes but only {available} remain; the file was cut short \
         (everything before byte {offset} was read)",
        kind.map_or_else(|| "a".to_string(), |k| k.to_string())
    )]
    Truncated {
        /// Byte offset where the incomplete message starts.
        offset: u64,
        /// Index the incomplete message would have had.
        index: u64,
        /// Its type, when at least the type field is present.
        kind: Option<MessageKind>,
        /// Bytes the whole message needs (header, payload and padding).
        needed: u64,
        /// Bytes that remained.
        available: u64,
    },

    /// A size field larger than the configured limit.
    #[error(
        "{kind} message {index} at byte {offset} declares a payload of {size} bytes, above the \
         limit of {limit} bytes: the size field is probably corrupt (raise the limit only if the \
         file really holds messages that large)"
    )]
    PayloadTooLarge {
        /// Byte offset of the message.
        offset: u64,
        /// Message index.
        index: u64,
        /// Its type.
        kind: MessageKind,
        /// The declared payload size.
        size: u64,
        /// The limit in force.
        limit: u64,
    },

    /// A flatbuffer that does not pass the verifier.
    #[error(
        "{what} in message {index} at byte {offset} is not a valid flatbuffer: {}",
        one_line(source)
    )]
    InvalidFlatbuffer {
        /// Byte offset of the enclosing message.
        offset: u64,
        /// Message index.
        index: u64,
        /// Which buffer (e.g. `"JoinedPayload"`, `"Event"`, `"CbEvent"`).
        what: &'static str,
        /// The verifier's reason.
        #[source]
        source: flatbuffers::InvalidFlatbuffer,
    },

    /// A field the format requires is absent.
    #[error("{what} in message {index} at byte {offset} has no `{field}`")]
    MissingField {
        /// Byte offset of the enclosing message.
        offset: u64,
        /// Message index.
        index: u64,
        /// The table.
        what: &'static str,
        /// The missing field.
        field: &'static str,
    },

    /// A zstd payload that cannot be decompressed within the limits.
    #[error("zstd payload of event `{event_id}` in message {index} at byte {offset}: {reason}")]
    Decompress {
        /// Byte offset of the enclosing message.
        offset: u64,
        /// Message index.
        index: u64,
        /// The event's id.
        event_id: String,
        /// What went wrong.
        reason: String,
    },

    /// A log index (`.fbidx`) that cannot be read: damaged, cut, or not an
    /// index; `offset` is in the index file. Rebuild it with `fb index`.
    #[error("bad index at byte {offset}: {what} (rebuild it with `fb index`)")]
    BadIndex {
        /// Byte offset in the index file.
        offset: u64,
        /// What is wrong.
        what: String,
    },

    /// The underlying reader failed.
    #[error("I/O error after byte {offset}: {source}")]
    Io {
        /// Bytes successfully read before the failure.
        offset: u64,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Index of the message the error is in (the one that would have come
    /// next for a cut input); none for an I/O error.
    pub fn index(&self) -> Option<u64> {
        match self {
            Self::UnsupportedVersion { index, .. }
            | Self::Truncated { index, .. }
            | Self::PayloadTooLarge { index, .. }
            | Self::InvalidFlatbuffer { index, .. }
            | Self::MissingField { index, .. }
            | Self::Decompress { index, .. } => Some(*index),
            Self::Io { .. } | Self::BadIndex { .. } => None,
        }
    }

    /// Byte offset the error refers to.
    pub fn offset(&self) -> u64 {
        match self {
            Self::UnsupportedVersion { offset, .. }
            | Self::Truncated { offset, .. }
            | Self::PayloadTooLarge { offset, .. }
            | Self::InvalidFlatbuffer { offset, .. }
            | Self::MissingField { offset, .. }
            | Self::Decompress { offset, .. }
            | Self::BadIndex { offset, .. }
            | Self::Io { offset, .. } => *offset,
        }
    }
}

/// What the verifier found, in plain words, with where in the buffer
/// (byte positions are relative to the start of that buffer) and the path
/// of fields that leads there.
pub(crate) fn one_line(err: &flatbuffers::InvalidFlatbuffer) -> String {
    use flatbuffers::InvalidFlatbuffer as E;
    let (what, trace) = match err {
        E::MissingRequiredField {
            required,
            error_trace,
        } => (
            format!("the required field `{required}` is absent"),
            Some(error_trace),
        ),
        E::InconsistentUnion {
            field,
            field_type,
            error_trace,
        } => (
            format!("the union `{field}` and its type `{field_type}` disagree (one is absent)"),
            Some(error_trace),
        ),
        E::Utf8Error {
            range, error_trace, ..
        } => (
            format!(
                "the string at bytes {}..{} is not UTF-8",
                range.start, range.end
            ),
            Some(error_trace),
        ),
        E::MissingNullTerminator { range, error_trace } => (
            format!(
                "the string at bytes {}..{} lacks its terminating zero byte",
                range.start, range.end
            ),
            Some(error_trace),
        ),
        E::Unaligned {
            position,
            unaligned_type,
            error_trace,
        } => (
            format!("a {unaligned_type} at byte {position} is not aligned"),
            Some(error_trace),
        ),
        E::RangeOutOfBounds { range, error_trace } => (
            format!(
                "it refers to bytes {}..{}, past its end (cut short, or an offset is corrupt)",
                range.start, range.end
            ),
            Some(error_trace),
        ),
        E::SignedOffsetOutOfBounds {
            soffset,
            position,
            error_trace,
        } => (
            format!("the offset {soffset} at byte {position} points outside it (corrupt)"),
            Some(error_trace),
        ),
        E::TooManyTables => ("it holds more tables than the verifier allows".into(), None),
        E::ApparentSizeTooLarge => ("it claims a size above the verifier's limit".into(), None),
        E::DepthLimitReached => (
            "its tables nest deeper than the verifier allows".into(),
            None,
        ),
        #[allow(unreachable_patterns)]
        other => (
            other
                .to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            None,
        ),
    };
    let path = trace.map(path_of).unwrap_or_default();
    if path.is_empty() {
        what
    } else {
        format!("{what} (at {path})")
    }
}

/// The fields the verifier went through, outermost first:
/// `events[3].event`.
fn path_of(trace: &impl AsRef<[flatbuffers::ErrorTraceDetail]>) -> String {
    use flatbuffers::ErrorTraceDetail as D;
    let mut path = String::new();
    for step in trace.as_ref().iter().rev() {
        match step {
            D::TableField { field_name, .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(field_name.as_ref());
            }
            D::VectorElement { index, .. } => path.push_str(&format!("[{index}]")),
            D::UnionVariant { variant, .. } => path.push_str(&format!("<{variant}>")),
        }
    }
    path
}

/// A problem that did not stop reading.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A message of an unknown type was skipped.
    UnknownMessageType {
        /// Byte offset of the message.
        offset: u64,
        /// Message index.
        index: u64,
        /// Its raw type field.
        type_id: u32,
        /// Its declared payload size (skipped, with padding).
        size: u32,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownMessageType {
                offset,
                index,
                type_id,
                size,
            } => write!(
                f,
                "message {index} at byte {offset} has unknown type 0x{type_id:08X}; \
                 skipped its {size}-byte payload"
            ),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
