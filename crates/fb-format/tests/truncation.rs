//! Cutting, dribbling and corrupting valid logs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::io::Read;

use common::{read, read_all, valid_logs, Owned};
use fb_format::{frame_len, Error, Framer, MessageKind, SliceReader, Step, StreamReader};

/// Every valid corpus log cut at every byte: the messages wholly before the
/// cut come back unchanged, then either a clean end (cut at a boundary) or
/// `Truncated` at the offset of the message the cut falls into.
#[test]
fn every_cut_of_every_valid_log() {
    for file in valid_logs() {
        let data = read(&file);
        let (whole, error) = read_all(&data);
        assert!(error.is_none(), "{file}: {error:?}");
        // Bytes after an EOF message are never read: cut only what is read.
        let read_len = whole.last().map_or(0, |m| m.offset as usize + m.len);
        for cut in 0..read_len {
            let (got, error) = read_all(&data[..cut]);
            let before: Vec<&Owned> = whole
                .iter()
                .filter(|m| m.offset as usize + m.len <= cut)
                .collect();
            let at_boundary = before.last().map_or(0, |m| m.offset as usize + m.len) == cut;
            let eof_partially_kept = whole.iter().any(|m| {
                m.kind == MessageKind::Eof
                    && cut >= m.offset as usize + 4
                    && cut < m.offset as usize + m.len
            });
            if eof_partially_kept {
                // An EOF whose size field was cut still ends the log cleanly.
                assert!(error.is_none(), "{file} cut at {cut}: {error:?}");
                continue;
            }
            assert_eq!(got.len(), before.len(), "{file} cut at {cut}");
            assert!(
                got.iter().zip(&before).all(|(a, b)| a == *b),
                "{file} cut at {cut}"
            );
            match error {
                None => assert!(
                    at_boundary,
                    "{file} cut at {cut}: clean end inside a message"
                ),
                Some(Error::Truncated { offset, index, .. }) => {
                    assert!(
                        !at_boundary,
                        "{file} cut at {cut}: truncation at a boundary"
                    );
                    let expected = before.last().map_or(0, |m| m.offset + m.len as u64);
                    assert_eq!(offset, expected, "{file} cut at {cut}");
                    assert_eq!(index, before.len() as u64, "{file} cut at {cut}");
                }
                Some(other) => panic!("{file} cut at {cut}: {other}"),
            }
        }
    }
}

/// The core fed one byte at a time yields exactly what it yields on the
/// whole input.
#[test]
fn one_byte_at_a_time_equals_whole_input() {
    for file in valid_logs() {
        let data = read(&file);
        let (whole, _) = read_all(&data);
        let mut framer = Framer::new();
        let mut got: Vec<Owned> = Vec::new();
        let (mut start, mut end) = (0usize, 0usize);
        loop {
            let at_end = end == data.len();
            match framer.next(&data[start..end], at_end).unwrap() {
                Step::Message(m) => {
                    start += m.len;
                    got.push(m.into());
                }
                Step::NeedMore(n) => {
                    assert!(
                        n > end - start,
                        "{file}: asked for {n} with {} unread",
                        end - start
                    );
                    assert!(!at_end, "{file}: NeedMore at end of input");
                    end += 1;
                }
                Step::End => break,
            }
        }
        assert_eq!(got, whole, "{file}");
    }
}

/// A reader that returns at most `step` bytes per call.
struct Dribble<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn stream_all(reader: impl Read) -> (Vec<Owned>, Option<Error>) {
    let mut reader = StreamReader::new(reader);
    let mut out = Vec::new();
    loop {
        match reader.next_message() {
            Ok(Some(m)) => out.push(m.into()),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

#[test]
fn stream_reader_equals_slice_reader_for_any_read_size() {
    for file in valid_logs() {
        let data = read(&file);
        let (whole, _) = read_all(&data);
        for step in [1, 3, 7, 8, 64, 4096, usize::MAX] {
            let (got, error) = stream_all(Dribble { data: &data, step });
            assert!(error.is_none(), "{file} step {step}: {error:?}");
            assert_eq!(got, whole, "{file} step {step}");
        }
    }
}

#[test]
fn stream_reader_reports_truncation_like_the_slice_reader() {
    let data = read("valid_joined_logs/cb_simple.log");
    let cut = &data[..data.len() - 20];
    let (_, slice_err) = read_all(cut);
    let (_, stream_err) = stream_all(Dribble { data: cut, step: 5 });
    match (slice_err, stream_err) {
        (Some(Error::Truncated { offset: a, .. }), Some(Error::Truncated { offset: b, .. })) => {
            assert_eq!(a, b)
        }
        other => panic!("{other:?}"),
    }
}

fn corrupt_size(size: u32) -> Vec<u8> {
    let mut log = read("valid_joined_logs/cb_simple.log");
    // The HEADER at byte 8: overwrite its size field.
    log[12..16].copy_from_slice(&size.to_le_bytes());
    log
}

#[test]
fn a_huge_size_field_is_an_error_not_an_allocation() {
    let log = corrupt_size(0xFFFF_FFFE);
    match read_all(&log).1 {
        Some(Error::PayloadTooLarge {
            offset: 8,
            index: 1,
            size: 0xFFFF_FFFE,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let mut reader = StreamReader::new(Dribble {
        data: &log,
        step: 4096,
    });
    assert!(reader.next_message().unwrap().is_some());
    assert!(matches!(
        reader.next_message(),
        Err(Error::PayloadTooLarge { .. })
    ));
    assert!(
        reader.buffer_capacity() < 1 << 20,
        "buffer grew to {}",
        reader.buffer_capacity()
    );
}

#[test]
fn a_size_under_the_limit_but_past_the_data_only_buffers_what_exists() {
    // 200 MiB declared, a few hundred bytes present: the stream reader asks
    // for more, gets end of input, reports truncation.
    let log = corrupt_size(200 << 20);
    let mut reader = StreamReader::new(Dribble {
        data: &log,
        step: 4096,
    });
    assert!(reader.next_message().unwrap().is_some());
    assert!(matches!(
        reader.next_message(),
        Err(Error::Truncated { offset: 8, .. })
    ));
    assert!(
        reader.buffer_capacity() < 1 << 20,
        "buffer grew to {}",
        reader.buffer_capacity()
    );
}

#[test]
fn the_payload_limit_is_configurable() {
    let data = read("valid_joined_logs/cb_simple.log");
    let mut reader = SliceReader::with_framer(&data, Framer::with_max_payload(100));
    let mut kinds = Vec::new();
    let err = loop {
        match reader.next_message() {
            Ok(Some(m)) => kinds.push(m.kind),
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert_eq!(kinds, vec![MessageKind::FileMagic]);
    assert!(
        matches!(
            err,
            Error::PayloadTooLarge {
                size: 112,
                limit: 100,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn padding_is_size_mod_8() {
    let cases = [
        (0, 8),
        (1, 10),
        (7, 22),
        (8, 16),
        (9, 18),
        (16, 24),
        (23, 38),
    ];
    for (size, len) in cases {
        assert_eq!(frame_len(size), len, "size {size}");
    }
}

#[test]
fn unknown_types_are_yielded_with_a_warning_and_skipped() {
    let mut log = read("valid_joined_logs/cb_simple.log");
    let mut unknown = 0x1234_5678u32.to_le_bytes().to_vec();
    unknown.extend_from_slice(&3u32.to_le_bytes());
    unknown.extend_from_slice(&[9, 9, 9, 0, 0, 0]);
    log.splice(8..8, unknown);
    let (messages, error) = read_all(&log);
    assert!(error.is_none());
    let m = &messages[1];
    assert_eq!(m.kind, MessageKind::Unknown(0x1234_5678));
    assert_eq!(m.payload, vec![9, 9, 9]);
    assert_eq!(messages[2].kind, MessageKind::Header);
    assert_eq!(messages[2].offset, 8 + 14);
}

#[test]
fn bytes_after_eof_are_ignored() {
    let mut log = read("valid_joined_logs/cb_simple.log");
    let (whole, _) = read_all(&log);
    assert_eq!(whole.last().map(|m| m.kind), Some(MessageKind::Eof));
    log.extend_from_slice(b"garbage that is not a message");
    let (got, error) = read_all(&log);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(got, whole);
}
