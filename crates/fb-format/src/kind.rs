//! Message types of the framing layer.

use std::fmt;

/// `VWFB` read as a little-endian u32.
pub const TYPE_FILEMAGIC: u32 = 0x4246_5756;
/// A `FileHeader` flatbuffer.
pub const TYPE_HEADER: u32 = 0x5555_5555;
/// A `CheckpointInfo` flatbuffer.
pub const TYPE_CHECKPOINT: u32 = 0x1111_1111;
/// A `JoinedPayload` flatbuffer.
pub const TYPE_REGULAR: u32 = 0xFFFF_FFFF;
/// End of file: reading stops here, whatever follows.
pub const TYPE_EOF: u32 = 0xAAAA_AAAA;

/// The only file-format version that exists.
pub const SUPPORTED_VERSION: u32 = 1;

/// What a framed message holds, from its 4-byte type field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// File magic with the inline format version.
    FileMagic,
    /// `FileHeader` payload.
    Header,
    /// `CheckpointInfo` payload.
    Checkpoint,
    /// `JoinedPayload` payload.
    Regular,
    /// End-of-file marker.
    Eof,
    /// A type this reader does not know; its payload is skipped.
    Unknown(u32),
}

impl MessageKind {
    /// Classifies a raw type field.
    pub fn from_type(raw: u32) -> Self {
        match raw {
            TYPE_FILEMAGIC => Self::FileMagic,
            TYPE_HEADER => Self::Header,
            TYPE_CHECKPOINT => Self::Checkpoint,
            TYPE_REGULAR => Self::Regular,
            TYPE_EOF => Self::Eof,
            other => Self::Unknown(other),
        }
    }

    /// The raw 4-byte type value.
    pub fn type_id(self) -> u32 {
        match self {
            Self::FileMagic => TYPE_FILEMAGIC,
            Self::Header => TYPE_HEADER,
            Self::Checkpoint => TYPE_CHECKPOINT,
            Self::Regular => TYPE_REGULAR,
            Self::Eof => TYPE_EOF,
            Self::Unknown(raw) => raw,
        }
    }

    /// Short upper-case name, as used in listings.
    pub fn name(self) -> &'static str {
        match self {
            Self::FileMagic => "FILEMAGIC",
            Self::Header => "HEADER",
            Self::Checkpoint => "CHECKPOINT",
            Self::Regular => "REGULAR",
            Self::Eof => "EOF",
            Self::Unknown(_) => "UNKNOWN",
        }
    }
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown(raw) => write!(f, "UNKNOWN(0x{raw:08X})"),
            other => f.write_str(other.name()),
        }
    }
}
