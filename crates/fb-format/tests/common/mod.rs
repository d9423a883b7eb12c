//! Helpers shared by the integration tests of fb-format.
#![allow(dead_code)]

use fb_format::{Error, Message, MessageKind, SliceReader};

// Each test binary uses its own subset.
#[allow(unused_imports)]
pub use fb_tests::{data_dir, read, valid_logs};

/// A message as the tests compare it: owned, with its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    pub kind: MessageKind,
    pub offset: u64,
    pub index: u64,
    pub size_field: u32,
    pub payload: Vec<u8>,
    pub len: usize,
}

impl Owned {
    /// The message again, borrowing the payload.
    #[allow(dead_code)] // not every test file uses it
    pub fn message(&self) -> Message<'_> {
        Message {
            kind: self.kind,
            offset: self.offset,
            index: self.index,
            size_field: self.size_field,
            payload: &self.payload,
            len: self.len,
        }
    }
}

impl From<Message<'_>> for Owned {
    fn from(m: Message<'_>) -> Self {
        Self {
            kind: m.kind,
            offset: m.offset,
            index: m.index,
            size_field: m.size_field,
            payload: m.payload.to_vec(),
            len: m.len,
        }
    }
}

/// All messages of `data`, then the error that ended reading, if any.
pub fn read_all(data: &[u8]) -> (Vec<Owned>, Option<Error>) {
    let mut reader = SliceReader::new(data);
    let mut out = Vec::new();
    loop {
        match reader.next_message() {
            Ok(Some(m)) => out.push(m.into()),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}
