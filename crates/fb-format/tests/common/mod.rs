//! Helpers shared by the integration tests of fb-format.
#![allow(dead_code)]

use std::path::PathBuf;

use fb_format::{Error, Message, MessageKind, SliceReader};

/// The vendored corpus (`tests/data` at the workspace root).
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

pub fn read(rel: &str) -> Vec<u8> {
    let path = data_dir().join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every joined log of the vendored corpus (the folders whose files are
/// joined logs, not raw client streams).
pub fn valid_logs() -> Vec<String> {
    let mut out = Vec::new();
    for dir in [
        "valid_joined_logs",
        "skip_learn/ca",
        "skip_learn/cb",
        "skip_learn/ccb",
        "skip_learn/slates",
    ] {
        let mut names: Vec<String> = std::fs::read_dir(data_dir().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".fb") || n.ends_with(".log"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        names.sort();
        out.extend(names);
    }
    out
}

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
