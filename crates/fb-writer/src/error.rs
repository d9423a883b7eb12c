//! The one error type of this crate.

/// Everything that can stop writing or generating a log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The output failed.
    #[error("writing the log after byte {offset}: {source}")]
    Io {
        /// Bytes written successfully before the failure.
        offset: u64,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A payload does not fit the 32-bit size field of the framing.
    #[error(
        "a {what} of {size} bytes does not fit a message: the size field is 32 bits \
         (put fewer events in one REGULAR message)"
    )]
    TooLarge {
        /// What was too large (e.g. `"REGULAR payload"`).
        what: &'static str,
        /// Its size in bytes.
        size: u64,
    },

    /// zstd refused to compress a payload.
    #[error("compressing the payload of event `{event_id}` with zstd: {source}")]
    Compress {
        /// The event's id.
        event_id: String,
        /// zstd's reason.
        #[source]
        source: std::io::Error,
    },

    /// A post-processing helper was pointed at a message that is not there.
    #[error("the log has no message {index} (it holds {count} whole messages)")]
    NoSuchMessage {
        /// The message index asked for.
        index: u64,
        /// Whole messages found.
        count: u64,
    },

    /// A byte position outside the bytes it should fall in.
    #[error("byte {position} is outside {what} ({len} bytes)")]
    OutOfRange {
        /// What the position is relative to (e.g. `"the payload of message 3"`).
        what: String,
        /// The position asked for.
        position: u64,
        /// The length it must stay below.
        len: u64,
    },

    /// A generator setting that cannot produce a log.
    #[error("invalid generator setting: {0}")]
    Config(String),
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
