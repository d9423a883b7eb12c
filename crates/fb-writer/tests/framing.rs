//! Framing: every payload size and padding case, and deliberately broken
//! logs failing the way they should.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_format::{
    frame_len, Error, MessageKind, SliceReader, StreamReader, DEFAULT_MAX_PAYLOAD, TYPE_CHECKPOINT,
    TYPE_EOF, TYPE_FILEMAGIC, TYPE_HEADER, TYPE_REGULAR,
};
use fb_schema::{LearningModeType, OutcomeEventArgs, TimeStamp, UnionArg};
use fb_writer::{broken, CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, PayloadSpec};
use proptest::prelude::*;

fn payload(len: usize, fill: u8) -> Vec<u8> {
    (0..len).map(|i| fill ^ (i as u8)).collect()
}

/// Writes `messages` after a FILEMAGIC, reads them back with both readers
/// and checks kinds, offsets, payloads and zero padding.
fn round_trip(messages: &[(u32, Vec<u8>)]) {
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    let mut want = vec![(MessageKind::FileMagic, 0u64, Vec::new())];
    for (type_id, payload) in messages {
        let offset = w.message(*type_id, payload).unwrap();
        want.push((MessageKind::from_type(*type_id), offset, payload.clone()));
    }
    let log = w.into_inner();
    let expected_len: u64 = 8 + messages
        .iter()
        .map(|(_, p)| frame_len(p.len() as u32))
        .sum::<u64>();
    assert_eq!(log.len() as u64, expected_len);

    let got: Vec<_> = SliceReader::new(&log)
        .map(|m| {
            let m = m.unwrap();
            let start = m.offset as usize + 8 + m.payload.len();
            if m.kind != MessageKind::FileMagic {
                let padding = &log[start..m.offset as usize + m.len];
                assert_eq!(padding.len(), m.payload.len() % 8);
                assert!(padding.iter().all(|b| *b == 0));
            }
            (m.kind, m.offset, m.payload.to_vec())
        })
        .collect();
    assert_eq!(got, want);

    let mut stream = StreamReader::new(&log[..]);
    let mut streamed = Vec::new();
    while let Some(m) = stream.next_message().unwrap() {
        streamed.push((m.kind, m.offset, m.payload.to_vec()));
    }
    assert_eq!(streamed, want);
}

#[test]
fn every_size_from_0_to_64_gets_size_mod_8_padding() {
    let messages: Vec<_> = (0..=64)
        .map(|len| (TYPE_REGULAR, payload(len, len as u8)))
        .collect();
    round_trip(&messages);
    // The table of FORMAT.md §1.
    for (size, padding) in [(1u32, 1u64), (9, 1), (16, 0), (7, 7), (0, 0), (15, 7)] {
        assert_eq!(
            frame_len(size),
            8 + u64::from(size) + padding,
            "size {size}"
        );
    }
}

fn message_type() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(TYPE_HEADER),
        Just(TYPE_CHECKPOINT),
        Just(TYPE_REGULAR),
        any::<u32>().prop_filter("FILEMAGIC and EOF are not framed like the rest", |t| {
            *t != TYPE_FILEMAGIC && *t != TYPE_EOF
        }),
    ]
}

fn payload_len() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 0usize..=64, 1 => 65usize..=4096, 1 => 90_000usize..=100_000]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn framing_round_trips(
        messages in proptest::collection::vec((message_type(), payload_len(), any::<u8>()), 0..8)
    ) {
        let messages: Vec<_> = messages
            .into_iter()
            .map(|(t, len, fill)| (t, payload(len, fill)))
            .collect();
        round_trip(&messages);
    }

    #[test]
    fn truncation_anywhere_inside_a_message_is_reported_at_its_start(
        len in 0usize..=40,
        cut_back in 1usize..=47,
    ) {
        let mut w = LogWriter::new(Vec::new());
        w.file_magic(1).unwrap();
        let offset = w.message(TYPE_REGULAR, &payload(len, 1)).unwrap();
        let mut log = w.into_inner();
        let total = log.len();
        let cut = total.saturating_sub(cut_back).max(offset as usize + 1);
        prop_assume!(cut < total);
        broken::truncate(&mut log, cut);
        let available = (cut - offset as usize) as u64;
        let result: Result<Vec<_>, _> = SliceReader::new(&log).collect();
        match result {
            Err(Error::Truncated { offset: at, index, kind, needed, available: got }) => {
                prop_assert_eq!(at, offset);
                prop_assert_eq!(index, 1);
                prop_assert_eq!(got, available);
                if available < 4 {
                    prop_assert_eq!(kind, None);
                    prop_assert_eq!(needed, 4);
                } else if available < 8 {
                    prop_assert_eq!(kind, Some(MessageKind::Regular));
                    prop_assert_eq!(needed, 8);
                } else {
                    prop_assert_eq!(kind, Some(MessageKind::Regular));
                    prop_assert_eq!(needed, frame_len(len as u32));
                }
            }
            other => prop_assert!(false, "expected truncation, got {:?}", other),
        }
    }
}

const T0: TimeStamp = TimeStamp([0xE8, 0x07, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);

/// FILEMAGIC, CHECKPOINT, REGULAR (one CB event + one outcome), EOF.
/// Returns the log and the offset of each message.
fn valid_log() -> (Vec<u8>, Vec<u64>) {
    let mut w = LogWriter::new(Vec::new());
    let mut offsets = vec![
        w.file_magic(1).unwrap(),
        w.checkpoint(&CheckpointConfig::default()).unwrap(),
    ];
    let cb = PayloadSpec::Cb(CbSpec {
        action_ids: Some(&[1, 2]),
        context: Some(br#"{"_multi":[{"a":1},{"a":2}]}"#),
        probabilities: Some(&[0.5, 0.5]),
        learning_mode: LearningModeType::Online,
        ..CbSpec::default()
    });
    let outcome = PayloadSpec::Outcome(OutcomeEventArgs {
        value: UnionArg::Numeric(1.0),
        index: UnionArg::None,
        action_taken: false,
    });
    offsets.push(
        w.regular(&[
            JoinedEventSpec::new("e", T0, cb),
            JoinedEventSpec::new("e", T0, outcome),
        ])
        .unwrap(),
    );
    offsets.push(w.eof().unwrap());
    (w.into_inner(), offsets)
}

/// What reading a broken log must give.
#[derive(Debug)]
enum Expect {
    /// These kinds, then the end, without error.
    Kinds(Vec<MessageKind>),
    /// These kinds, then this error (checked by the predicate).
    KindsThenError(Vec<MessageKind>, fn(&Error) -> bool),
}

/// Kinds read, the offset after the last one, and the error if any.
fn read(log: &[u8]) -> (Vec<MessageKind>, u64, Option<Error>) {
    let mut kinds = Vec::new();
    let mut end = 0;
    for m in SliceReader::new(log) {
        match m {
            Ok(m) => {
                kinds.push(m.kind);
                end = m.offset + m.len as u64;
            }
            Err(e) => return (kinds, end, Some(e)),
        }
    }
    (kinds, end, None)
}

#[test]
fn broken_logs_fail_as_they_should() {
    use MessageKind::{Checkpoint, Eof, FileMagic, Regular, Unknown};
    let (valid, offsets) = valid_log();
    let regular_at = offsets[2];
    let regular_len = (offsets[3] - offsets[2]) as usize;
    let bad_magic = u32::from_le_bytes(*b"VWFC");

    type Build = Box<dyn Fn() -> Vec<u8>>;
    let v = valid.clone();
    let cases: Vec<(&str, Build, Expect)> = vec![
        (
            "valid",
            Box::new(move || v.clone()),
            Expect::Kinds(vec![FileMagic, Checkpoint, Regular, Eof]),
        ),
        (
            "bad_version_2",
            Box::new(|| {
                let mut w = LogWriter::new(Vec::new());
                w.file_magic(2).unwrap();
                w.eof().unwrap();
                w.into_inner()
            }),
            Expect::KindsThenError(vec![], |e| {
                matches!(
                    e,
                    Error::UnsupportedVersion {
                        offset: 0,
                        index: 0,
                        version: 2
                    }
                )
            }),
        ),
        (
            "bad_version_0_after_a_message",
            Box::new(|| {
                let mut w = LogWriter::new(Vec::new());
                w.checkpoint(&CheckpointConfig::default()).unwrap();
                w.file_magic(0).unwrap();
                w.into_inner()
            }),
            Expect::KindsThenError(vec![Checkpoint], |e| {
                matches!(
                    e,
                    Error::UnsupportedVersion {
                        index: 1,
                        version: 0,
                        ..
                    }
                )
            }),
        ),
        (
            "bad_magic_alone",
            Box::new(move || {
                let mut w = LogWriter::new(Vec::new());
                w.raw_frame(bad_magic, 1, &[]).unwrap();
                w.into_inner()
            }),
            // An unknown type whose "size" 1 needs 2 more bytes.
            Expect::KindsThenError(vec![], |e| {
                matches!(
                    e,
                    Error::Truncated {
                        offset: 0,
                        needed: 10,
                        available: 8,
                        kind: Some(MessageKind::Unknown(_)),
                        ..
                    }
                )
            }),
        ),
        (
            "bad_magic_then_eof",
            Box::new(move || {
                let mut w = LogWriter::new(Vec::new());
                w.raw_frame(bad_magic, 0, &[]).unwrap();
                w.eof().unwrap();
                w.into_inner()
            }),
            Expect::Kinds(vec![Unknown(bad_magic), Eof]),
        ),
        (
            "unknown_type_is_skipped",
            Box::new(|| {
                let mut w = LogWriter::new(Vec::new());
                w.file_magic(1).unwrap();
                w.message(0x1234_5678, b"skip me").unwrap();
                w.checkpoint(&CheckpointConfig::default()).unwrap();
                w.eof().unwrap();
                w.into_inner()
            }),
            Expect::Kinds(vec![FileMagic, Unknown(0x1234_5678), Checkpoint, Eof]),
        ),
        (
            "type_field_overwritten",
            {
                let v = valid.clone();
                Box::new(move || {
                    let mut log = v.clone();
                    broken::set_type_field(&mut log, 1, 0xDEAD_BEEF).unwrap();
                    log
                })
            },
            Expect::Kinds(vec![FileMagic, Unknown(0xDEAD_BEEF), Regular, Eof]),
        ),
        (
            "truncated_inside_type_field",
            {
                let v = valid.clone();
                Box::new(move || {
                    let mut log = v.clone();
                    broken::truncate(&mut log, regular_at as usize + 2);
                    log
                })
            },
            Expect::KindsThenError(vec![FileMagic, Checkpoint], |e| {
                matches!(
                    e,
                    Error::Truncated {
                        index: 2,
                        kind: None,
                        needed: 4,
                        available: 2,
                        ..
                    }
                )
            }),
        ),
        (
            "truncated_inside_size_field",
            {
                let v = valid.clone();
                Box::new(move || {
                    let mut log = v.clone();
                    broken::truncate(&mut log, regular_at as usize + 5);
                    log
                })
            },
            Expect::KindsThenError(vec![FileMagic, Checkpoint], |e| {
                matches!(
                    e,
                    Error::Truncated {
                        index: 2,
                        kind: Some(MessageKind::Regular),
                        needed: 8,
                        available: 5,
                        ..
                    }
                )
            }),
        ),
        (
            "truncated_inside_payload",
            {
                let v = valid.clone();
                Box::new(move || {
                    let mut log = v.clone();
                    broken::truncate(&mut log, regular_at as usize + 8 + 3);
                    log
                })
            },
            Expect::KindsThenError(vec![FileMagic, Checkpoint], |e| {
                matches!(
                    e,
                    Error::Truncated {
                        index: 2,
                        kind: Some(MessageKind::Regular),
                        available: 11,
                        ..
                    }
                )
            }),
        ),
        (
            "truncated_inside_padding",
            Box::new(|| {
                let mut w = LogWriter::new(Vec::new());
                w.file_magic(1).unwrap();
                w.message(TYPE_REGULAR, &[7; 13]).unwrap();
                let mut log = w.into_inner();
                broken::truncate(&mut log, 8 + 8 + 13 + 2);
                log
            }),
            Expect::KindsThenError(vec![FileMagic], |e| {
                matches!(
                    e,
                    Error::Truncated {
                        offset: 8,
                        index: 1,
                        needed: 26,
                        available: 23,
                        ..
                    }
                )
            }),
        ),
        (
            "truncated_at_a_message_boundary",
            {
                let v = valid.clone();
                Box::new(move || {
                    let mut log = v.clone();
                    broken::truncate(&mut log, regular_at as usize + regular_len);
                    log
                })
            },
            Expect::Kinds(vec![FileMagic, Checkpoint, Regular]),
        ),
        (
            "oversized_size_field_written_raw",
            Box::new(|| {
                let mut w = LogWriter::new(Vec::new());
                w.file_magic(1).unwrap();
                w.raw_frame(TYPE_REGULAR, 0xFFFF_FFFE, &[0; 16]).unwrap();
                w.into_inner()
            }),
            Expect::KindsThenError(vec![FileMagic], |e| {
                matches!(
                    e,
                    Error::PayloadTooLarge { offset: 8, index: 1, size: 0xFFFF_FFFE, limit, .. }
                        if *limit == u64::from(DEFAULT_MAX_PAYLOAD)
                )
            }),
        ),
        (
            "oversized_size_field_patched",
            {
                let v = valid.clone();
                Box::new(move || {
                    let mut log = v.clone();
                    broken::set_size_field(&mut log, 2, 0xFFFF_FFFE).unwrap();
                    log
                })
            },
            Expect::KindsThenError(vec![FileMagic, Checkpoint], |e| {
                matches!(
                    e,
                    Error::PayloadTooLarge {
                        index: 2,
                        kind: MessageKind::Regular,
                        ..
                    }
                )
            }),
        ),
        (
            "size_field_beyond_the_input",
            {
                let v = valid.clone();
                Box::new(move || {
                    let mut log = v.clone();
                    broken::set_size_field(&mut log, 2, 1 << 20).unwrap();
                    log
                })
            },
            Expect::KindsThenError(vec![FileMagic, Checkpoint], |e| {
                matches!(
                    e,
                    Error::Truncated { index: 2, needed, .. } if *needed == frame_len(1 << 20)
                )
            }),
        ),
        (
            "eof_then_garbage",
            Box::new(|| {
                let mut w = LogWriter::new(Vec::new());
                w.file_magic(1).unwrap();
                w.eof().unwrap();
                w.raw_bytes(b"trailing garbage that is never read").unwrap();
                w.into_inner()
            }),
            Expect::Kinds(vec![FileMagic, Eof]),
        ),
    ];
    for (name, build, expect) in cases {
        let log = build();
        let (kinds, end, error) = read(&log);
        match expect {
            Expect::Kinds(want) => {
                assert_eq!(kinds, want, "{name}");
                assert!(error.is_none(), "{name}: unexpected {error:?}");
            }
            Expect::KindsThenError(want, check) => {
                assert_eq!(kinds, want, "{name}");
                let error = error.unwrap_or_else(|| panic!("{name}: no error"));
                assert!(check(&error), "{name}: wrong error {error:?}");
                // Reported at the start of the message that failed.
                assert_eq!(error.offset(), end, "{name}: error offset");
            }
        }
    }
}

#[test]
fn corrupt_payload_bytes_fail_verification() {
    let (valid, offsets) = valid_log();
    // Flipping the root offset of the JoinedPayload points it outside.
    let mut log = valid.clone();
    let flipped = broken::corrupt_payload(&mut log, 2, &[0, 1, 2, 3]).unwrap();
    assert_eq!(
        flipped,
        (0..4)
            .map(|i| offsets[2] as usize + 8 + i)
            .collect::<Vec<_>>()
    );
    let messages: Vec<_> = SliceReader::new(&log).collect::<Result<_, _>>().unwrap();
    assert!(matches!(
        messages[2].events(),
        Err(Error::InvalidFlatbuffer {
            what: "JoinedPayload",
            index: 2,
            ..
        })
    ));
    // Flipping the CHECKPOINT root offset likewise.
    let mut log = valid.clone();
    broken::corrupt_payload(&mut log, 1, &[0, 1]).unwrap();
    let messages: Vec<_> = SliceReader::new(&log).collect::<Result<_, _>>().unwrap();
    assert!(messages[1].checkpoint().is_err());
    // Flipping twice restores the log.
    broken::corrupt_payload(&mut log, 1, &[0, 1]).unwrap();
    assert_eq!(log, valid);
}

#[test]
fn post_processing_refuses_what_is_not_there() {
    let (mut log, _) = valid_log();
    let before = log.clone();
    assert!(matches!(
        broken::corrupt_payload(&mut log, 9, &[0]),
        Err(fb_writer::Error::NoSuchMessage { index: 9, count: 4 })
    ));
    assert!(matches!(
        broken::corrupt_payload(&mut log, 0, &[0]),
        Err(fb_writer::Error::OutOfRange {
            position: 0,
            len: 0,
            ..
        })
    ));
    assert!(matches!(
        broken::set_size_field(&mut log, 4, 1),
        Err(fb_writer::Error::NoSuchMessage { .. })
    ));
    assert_eq!(log, before);
    let spans: Vec<_> = broken::spans(&log)
        .map(|s| (s.index, s.offset, s.type_id))
        .collect();
    assert_eq!(spans.len(), 4);
    assert_eq!(spans[0], (0, 0, TYPE_FILEMAGIC));
    assert_eq!(spans[3].2, TYPE_EOF);
}
