//! Everything `LogWriter` writes reads back through `fb_format` unchanged.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{decode, expected};
use fb_format::{
    frame_len, Message, MessageKind, PayloadDecoder, SliceReader, StreamReader, TYPE_REGULAR,
};
use fb_schema::{
    LearningModeType, OutcomeEventArgs, PayloadType, ProblemType, RewardFunctionType, TimeStamp,
    UnionArg,
};
use fb_writer::{
    CaSpec, CbSpec, CheckpointConfig, DedupSpec, Encoding, JoinedEventSpec, LogWriter, MetaSpec,
    MultiSlotSpec, MultiStepSpec, PayloadSpec, SlotSpec,
};

const T0: TimeStamp = TimeStamp([0xE8, 0x07, 5, 18, 13, 28, 29, 0, 0x40, 0x42, 0x0F, 0]);

fn ts(second: u8, subsecond: u32) -> TimeStamp {
    TimeStamp::new(2024, 5, 18, 13, 28, second, subsecond)
}

const CONTEXT: &[u8] =
    br#"{"GUser":{"id":"u1","major":"eng"},"_multi":[{"TAction":{"a1":"f1"}},{"TAction":{"a2":"f2"}}]}"#;
const CCB_CONTEXT: &[u8] = br#"{"GUser":{"id":"u1"},"_multi":[{"TAction":{"a":"1"}},{"TAction":{"a":"2"}},{"TAction":{"a":"3"}}],"_slots":[{"_id":"s0"},{}]}"#;

fn cb(deferred: bool, learning_mode: LearningModeType) -> PayloadSpec<'static> {
    PayloadSpec::Cb(CbSpec {
        deferred_action: deferred,
        action_ids: Some(&[2, 1, 3]),
        context: Some(CONTEXT),
        probabilities: Some(&[0.8, 0.1, 0.1]),
        model_id: Some("model-7"),
        learning_mode,
    })
}

const SLOTS: &[SlotSpec<'static>] = &[
    SlotSpec {
        action_ids: &[1, 0, 2],
        probabilities: &[0.7, 0.2, 0.1],
        id: Some("s0"),
    },
    SlotSpec {
        action_ids: &[2, 0],
        probabilities: &[0.5, 0.5],
        id: None,
    },
];

fn multi_slot(baseline: Option<&'static [i32]>) -> MultiSlotSpec<'static> {
    MultiSlotSpec {
        context: Some(CCB_CONTEXT),
        slots: Some(SLOTS),
        model_id: Some("ccb-model"),
        deferred_action: false,
        baseline_actions: baseline,
        learning_mode: LearningModeType::Online,
    }
}

fn outcome(
    value: UnionArg<'static, f32>,
    index: UnionArg<'static, i32>,
    taken: bool,
) -> PayloadSpec<'static> {
    PayloadSpec::Outcome(OutcomeEventArgs {
        value,
        index,
        action_taken: taken,
    })
}

fn ev(id: &'static str, second: u8, payload: PayloadSpec<'static>) -> JoinedEventSpec<'static> {
    JoinedEventSpec {
        meta: MetaSpec {
            id: Some(id),
            client_time: Some(ts(second.saturating_sub(1), 1234)),
            app_id: Some("app"),
            payload_type: None,
            pass_probability: 0.5,
            encoding: Encoding::Identity,
        },
        enqueued: ts(second, 9_999_999),
        payload,
    }
}

/// One named case per kind of input: the events of one REGULAR message.
fn cases() -> Vec<(&'static str, Vec<JoinedEventSpec<'static>>)> {
    vec![
        ("empty_message", vec![]),
        ("cb", vec![ev("e1", 1, cb(false, LearningModeType::Online))]),
        (
            "cb_zstd",
            vec![ev("e1", 1, cb(false, LearningModeType::Online)).zstd()],
        ),
        (
            "cb_deferred_apprentice",
            vec![ev("e1", 1, cb(true, LearningModeType::Apprentice))],
        ),
        (
            "cb_logging_only_no_optional_fields",
            vec![JoinedEventSpec::new(
                "e1",
                T0,
                PayloadSpec::Cb(CbSpec {
                    learning_mode: LearningModeType::LoggingOnly,
                    ..CbSpec::default()
                }),
            )],
        ),
        (
            "cb_empty_vectors",
            vec![JoinedEventSpec::new(
                "e1",
                T0,
                PayloadSpec::Cb(CbSpec {
                    action_ids: Some(&[]),
                    context: Some(b"{}"),
                    probabilities: Some(&[]),
                    ..CbSpec::default()
                }),
            )],
        ),
        (
            "cb_with_outcomes",
            vec![
                ev("e1", 1, cb(false, LearningModeType::Online)),
                ev(
                    "e1",
                    5,
                    outcome(UnionArg::Numeric(1.5), UnionArg::None, false),
                ),
                ev(
                    "e1",
                    3,
                    outcome(UnionArg::Numeric(-0.25), UnionArg::None, false),
                ),
            ],
        ),
        (
            "cb_outcomes_zstd",
            vec![
                ev("e1", 1, cb(true, LearningModeType::Online)).zstd(),
                ev(
                    "e1",
                    5,
                    outcome(UnionArg::Numeric(2.0), UnionArg::None, false),
                )
                .zstd(),
                ev("e1", 6, outcome(UnionArg::None, UnionArg::None, true)).zstd(),
            ],
        ),
        (
            "ccb_slots_with_and_without_id",
            vec![
                ev("c1", 1, PayloadSpec::Ccb(multi_slot(Some(&[0, 1])))),
                ev(
                    "c1",
                    2,
                    outcome(UnionArg::Numeric(1.0), UnionArg::Numeric(1), false),
                ),
                ev(
                    "c1",
                    3,
                    outcome(UnionArg::Numeric(0.5), UnionArg::Literal("s0"), false),
                ),
            ],
        ),
        (
            "ccb_no_baseline_zstd",
            vec![ev("c1", 1, PayloadSpec::Ccb(multi_slot(None))).zstd()],
        ),
        (
            "ccb_deferred_apprentice",
            vec![ev(
                "c1",
                1,
                PayloadSpec::Ccb(MultiSlotSpec {
                    deferred_action: true,
                    learning_mode: LearningModeType::Apprentice,
                    ..multi_slot(Some(&[1, 0]))
                }),
            )],
        ),
        (
            "ccb_without_slots",
            vec![ev(
                "c1",
                1,
                PayloadSpec::Ccb(MultiSlotSpec {
                    slots: None,
                    ..multi_slot(None)
                }),
            )],
        ),
        (
            "slates",
            vec![
                ev("s1", 1, PayloadSpec::Slates(multi_slot(Some(&[0, 0])))),
                ev(
                    "s1",
                    2,
                    outcome(UnionArg::Numeric(3.0), UnionArg::None, false),
                ),
            ],
        ),
        (
            "slates_zstd",
            vec![ev("s1", 1, PayloadSpec::Slates(multi_slot(None))).zstd()],
        ),
        (
            "ca",
            vec![
                ev(
                    "a1",
                    1,
                    PayloadSpec::Ca(CaSpec {
                        deferred_action: false,
                        action: 42.125,
                        context: Some(br#"{"GUser":{"id":"u"},"TCtx":{"hour":3}}"#),
                        pdf_value: 0.0125,
                        model_id: Some("ca-model"),
                        learning_mode: LearningModeType::Online,
                    }),
                ),
                ev(
                    "a1",
                    2,
                    outcome(UnionArg::Numeric(0.75), UnionArg::None, false),
                ),
            ],
        ),
        (
            "ca_zstd_deferred",
            vec![ev(
                "a1",
                1,
                PayloadSpec::Ca(CaSpec {
                    deferred_action: true,
                    action: -3.5,
                    context: Some(b"{}"),
                    pdf_value: 1.0,
                    ..CaSpec::default()
                }),
            )
            .zstd()],
        ),
        (
            "outcome_literal_value_and_index",
            vec![ev(
                "o1",
                1,
                outcome(
                    UnionArg::Literal("clicked"),
                    UnionArg::Literal("slot-a"),
                    false,
                ),
            )],
        ),
        (
            "outcome_numeric_index_only",
            vec![ev(
                "o1",
                1,
                outcome(UnionArg::None, UnionArg::Numeric(-7), false),
            )],
        ),
        (
            "outcome_activation_with_index",
            vec![ev(
                "o1",
                1,
                outcome(UnionArg::None, UnionArg::Numeric(0), true),
            )],
        ),
        (
            "outcome_zero_value",
            vec![ev(
                "o1",
                1,
                outcome(UnionArg::Numeric(0.0), UnionArg::Numeric(0), false),
            )],
        ),
        (
            "dedup",
            vec![
                ev(
                    "d1",
                    1,
                    PayloadSpec::Dedup(DedupSpec {
                        ids: &[11, u64::MAX, 0],
                        values: &[r#"{"TAction":{"a":1}}"#, r#"{"TAction":{"a":2}}"#, ""],
                    }),
                ),
                ev("e1", 1, cb(false, LearningModeType::Online)),
            ],
        ),
        (
            "dedup_zstd_empty",
            vec![ev("d1", 1, PayloadSpec::Dedup(DedupSpec::default())).zstd()],
        ),
        (
            "dedup_mismatched_lengths",
            vec![ev(
                "d1",
                1,
                PayloadSpec::Dedup(DedupSpec {
                    ids: &[1, 2, 3],
                    values: &["{}"],
                }),
            )],
        ),
        (
            "multistep_episode",
            vec![
                ev(
                    "ep",
                    1,
                    PayloadSpec::Episode {
                        episode_id: Some("ep"),
                    },
                ),
                ev(
                    "ep",
                    2,
                    PayloadSpec::MultiStep(MultiStepSpec {
                        event_id: Some("ep-0"),
                        previous_id: None,
                        action_ids: Some(&[1, 2]),
                        context: Some(CONTEXT),
                        probabilities: Some(&[0.9, 0.1]),
                        model_id: Some("ms"),
                        deferred_action: false,
                    }),
                ),
                ev(
                    "ep",
                    3,
                    PayloadSpec::MultiStep(MultiStepSpec {
                        event_id: Some("ep-1"),
                        previous_id: Some("ep-0"),
                        action_ids: Some(&[2, 1]),
                        context: Some(CONTEXT),
                        probabilities: Some(&[0.6, 0.4]),
                        model_id: None,
                        deferred_action: true,
                    }),
                )
                .zstd(),
                ev(
                    "ep",
                    4,
                    outcome(UnionArg::Numeric(1.0), UnionArg::Literal("ep-1"), false),
                ),
                ev(
                    "ep",
                    5,
                    outcome(UnionArg::Numeric(2.0), UnionArg::None, false),
                ),
            ],
        ),
        (
            "episode_without_id",
            vec![ev("ep", 1, PayloadSpec::Episode { episode_id: None })],
        ),
        (
            "several_ids_in_one_message",
            vec![
                ev("e1", 1, cb(false, LearningModeType::Online)),
                ev("e2", 2, cb(false, LearningModeType::Online)).zstd(),
                ev(
                    "e1",
                    3,
                    outcome(UnionArg::Numeric(1.0), UnionArg::None, false),
                ),
                ev(
                    "e2",
                    4,
                    outcome(UnionArg::Numeric(0.0), UnionArg::None, false),
                ),
            ],
        ),
        (
            "bare_metadata",
            vec![JoinedEventSpec {
                meta: MetaSpec {
                    pass_probability: 0.0,
                    ..MetaSpec::new("")
                },
                enqueued: TimeStamp::default(),
                payload: cb(false, LearningModeType::Online),
            }],
        ),
        (
            "declared_payload_type_differs",
            vec![JoinedEventSpec {
                meta: MetaSpec {
                    payload_type: Some(PayloadType::CCB),
                    ..MetaSpec::new("e1")
                },
                enqueued: T0,
                payload: cb(false, LearningModeType::Online),
            }],
        ),
    ]
}

/// Raw-payload cases: compared as bytes, not decoded.
fn raw_cases() -> Vec<(&'static str, Vec<JoinedEventSpec<'static>>)> {
    let raw = |payload_type, bytes: &'static [u8]| PayloadSpec::Raw {
        payload_type,
        bytes,
    };
    vec![
        (
            "raw_garbage",
            vec![ev("r1", 1, raw(PayloadType::CB, b"not a flatbuffer"))],
        ),
        (
            "raw_empty",
            vec![ev("r1", 1, raw(PayloadType::Outcome, b""))],
        ),
        (
            "raw_unknown_payload_type_zstd",
            vec![ev("r1", 1, raw(PayloadType(200), &[1, 2, 3, 4, 5])).zstd()],
        ),
        (
            "raw_claims_zstd",
            vec![JoinedEventSpec {
                meta: MetaSpec {
                    encoding: Encoding::ClaimsZstd,
                    ..MetaSpec::new("r1")
                },
                enqueued: T0,
                payload: raw(PayloadType::CB, b"plain"),
            }],
        ),
    ]
}

/// Writes FILEMAGIC, HEADER, CHECKPOINT, one REGULAR with `events`, EOF;
/// returns the log and the offsets the writer reported.
fn write_log(events: &[JoinedEventSpec<'_>]) -> (Vec<u8>, Vec<(MessageKind, u64)>) {
    let mut w = LogWriter::new(Vec::new());
    let offsets = vec![
        (MessageKind::FileMagic, w.file_magic(1).unwrap()),
        (
            MessageKind::Header,
            w.header(&[("eud", "10"), ("", "empty key")], T0).unwrap(),
        ),
        (
            MessageKind::Checkpoint,
            w.checkpoint(&CheckpointConfig::default()).unwrap(),
        ),
        (MessageKind::Regular, w.regular(events).unwrap()),
        (MessageKind::Eof, w.eof().unwrap()),
    ];
    assert_eq!(w.offset(), w.get_ref().len() as u64);
    assert_eq!(w.messages_written(), 5);
    (w.into_inner(), offsets)
}

fn read_all(log: &[u8]) -> Vec<Message<'_>> {
    SliceReader::new(log)
        .collect::<Result<Vec<_>, _>>()
        .expect("the log reads back")
}

fn check_framing(name: &str, log: &[u8], offsets: &[(MessageKind, u64)]) {
    let messages = read_all(log);
    let got: Vec<(MessageKind, u64)> = messages.iter().map(|m| (m.kind, m.offset)).collect();
    assert_eq!(got, offsets, "{name}: kinds and offsets");
    for (i, m) in messages.iter().enumerate() {
        assert_eq!(m.index, i as u64, "{name}");
        if !matches!(m.kind, MessageKind::FileMagic | MessageKind::Eof) {
            assert_eq!(m.len as u64, frame_len(m.size_field), "{name}: {}", m.kind);
            let start = m.offset as usize;
            let padding = &log[start + 8 + m.payload.len()..start + m.len];
            assert!(padding.iter().all(|b| *b == 0), "{name}: padding is zero");
            assert_eq!(
                padding.len(),
                m.payload.len() % 8,
                "{name}: size % 8 padding"
            );
        }
    }
    let end = messages.last().map_or(0, |m| m.offset as usize + m.len);
    assert_eq!(end, log.len(), "{name}: nothing after EOF");
}

#[test]
fn typed_events_decode_back_to_what_was_written() {
    let mut decoder = PayloadDecoder::default();
    for (name, events) in cases() {
        let (log, offsets) = write_log(&events);
        check_framing(name, &log, &offsets);
        let messages = read_all(&log);
        let regular = &messages[3];
        let views: Vec<_> = regular
            .events()
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(views.len(), events.len(), "{name}: event count");
        for (i, (view, spec)) in views.iter().zip(&events).enumerate() {
            assert_eq!(view.position, i, "{name}");
            let typed = spec.meta.payload_type.is_none();
            let got = decode(view, &mut decoder, typed);
            let mut want = expected(spec);
            if !typed {
                let PayloadSpec::Cb(_) = spec.payload else {
                    unreachable!()
                };
                // Decoded as raw bytes: compare the declared type only.
                want.payload = got.payload.clone();
            }
            assert_eq!(got, want, "{name}: event {i}");
            if spec.meta.encoding == Encoding::Zstd {
                let raw = view.raw_payload();
                assert_eq!(
                    zstd::zstd_safe::get_frame_content_size(raw).ok(),
                    Some(Some(decoder.bytes(view).unwrap().len() as u64)),
                    "{name}: zstd frame states its content size"
                );
            }
        }
    }
}

#[test]
fn raw_payloads_are_stored_as_given() {
    let mut decoder = PayloadDecoder::default();
    for (name, events) in raw_cases() {
        let (log, offsets) = write_log(&events);
        check_framing(name, &log, &offsets);
        let messages = read_all(&log);
        for (view, spec) in messages[3].events().unwrap().zip(&events) {
            let view = view.unwrap();
            let PayloadSpec::Raw { bytes, .. } = spec.payload else {
                unreachable!()
            };
            match spec.meta.encoding {
                Encoding::ClaimsZstd => {
                    assert_eq!(view.raw_payload(), bytes, "{name}");
                    assert!(
                        matches!(
                            decoder.bytes(&view),
                            Err(fb_format::Error::Decompress { .. })
                        ),
                        "{name}: decompression must fail"
                    );
                }
                _ => assert_eq!(decode(&view, &mut decoder, false), expected(spec), "{name}"),
            }
        }
    }
}

#[test]
fn header_and_checkpoints_read_back() {
    let configs = [
        ("default", CheckpointConfig::default()),
        (
            "everything_set",
            CheckpointConfig {
                reward_function: RewardFunctionType::Median,
                default_reward: -1.5,
                learning_mode: LearningModeType::Apprentice,
                problem_type: ProblemType::MULTISTEP,
                use_client_time: true,
            },
        ),
        (
            "unknown_problem_and_out_of_range_reward_function",
            CheckpointConfig {
                reward_function: RewardFunctionType(9),
                problem_type: ProblemType::UNKNOWN,
                ..CheckpointConfig::default()
            },
        ),
    ];
    let mut w = LogWriter::new(Vec::new());
    let properties = [("a", "1"), ("key with space", "välue"), ("", "")];
    w.header(&properties, T0).unwrap();
    w.header(&[], TimeStamp::default()).unwrap();
    for (_, config) in &configs {
        w.checkpoint(config).unwrap();
    }
    let log = w.into_inner();
    let messages = read_all(&log);
    let header = messages[0].file_header().unwrap();
    assert_eq!(header.join_time().copied(), Some(T0));
    let got: Vec<(String, String)> = header
        .properties()
        .unwrap()
        .iter()
        .map(|kv| {
            (
                kv.key().unwrap().to_string(),
                kv.value().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        messages[1]
            .file_header()
            .unwrap()
            .properties()
            .map(|p| p.len()),
        Some(0)
    );
    for ((name, config), msg) in configs.iter().zip(&messages[2..]) {
        let info = msg.checkpoint().unwrap();
        let got = CheckpointConfig {
            reward_function: info.reward_function_type(),
            default_reward: info.default_reward(),
            learning_mode: info.learning_mode_config(),
            problem_type: info.problem_type_config(),
            use_client_time: info.use_client_time(),
        };
        assert_eq!(&got, config, "{name}");
    }
}

#[test]
fn messages_stream_back_through_the_stream_reader() {
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    w.checkpoint(&CheckpointConfig::default()).unwrap();
    let mut expected = Vec::new();
    for (name, events) in cases() {
        let offset = w.regular(&events).unwrap();
        expected.push((name, offset, events.len()));
    }
    w.eof().unwrap();
    let log = w.into_inner();
    let mut reader = StreamReader::new(&log[..]);
    let mut got = Vec::new();
    while let Some(msg) = reader.next_message().unwrap() {
        if msg.kind == MessageKind::Regular {
            got.push((msg.offset, msg.events().unwrap().total()));
        }
    }
    let want: Vec<(u64, usize)> = expected.iter().map(|(_, o, n)| (*o, *n)).collect();
    assert_eq!(got, want);
}

#[test]
fn pushed_events_and_raw_events_form_one_message() {
    let mut w = LogWriter::new(Vec::new());
    let spec = ev("e1", 1, cb(false, LearningModeType::Online));
    w.push_event(&spec).unwrap();
    w.push_raw_event(None, Some(T0)).unwrap();
    w.push_raw_event(Some(b"garbage"), None).unwrap();
    w.push_event(&ev(
        "e1",
        2,
        outcome(UnionArg::Numeric(1.0), UnionArg::None, false),
    ))
    .unwrap();
    assert_eq!(w.pending_events(), 4);
    let offset = w.end_regular().unwrap();
    assert_eq!((offset, w.pending_events()), (0, 0));
    let log = w.into_inner();
    let messages = read_all(&log);
    let events: Vec<_> = messages[0].events().unwrap().collect();
    assert_eq!(events.len(), 4);
    assert!(events[0].is_ok());
    assert!(matches!(
        events[1],
        Err(fb_format::Error::MissingField {
            what: "JoinedEvent",
            field: "event",
            ..
        })
    ));
    assert!(matches!(
        events[2],
        Err(fb_format::Error::MissingField {
            what: "JoinedEvent",
            field: "timestamp",
            ..
        })
    ));
    assert!(events[3].is_ok());
}

#[test]
fn events_without_id_or_with_garbage_event_bytes_are_reported() {
    let mut w = LogWriter::new(Vec::new());
    w.push_event(&JoinedEventSpec {
        meta: MetaSpec {
            id: None,
            ..MetaSpec::new("")
        },
        enqueued: T0,
        payload: cb(false, LearningModeType::Online),
    })
    .unwrap();
    w.push_raw_event(Some(&[0xFF; 12]), Some(T0)).unwrap();
    w.end_regular().unwrap();
    let log = w.into_inner();
    let messages = read_all(&log);
    let events: Vec<_> = messages[0].events().unwrap().collect();
    assert!(matches!(
        events[0],
        Err(fb_format::Error::MissingField {
            what: "Metadata",
            field: "id",
            ..
        })
    ));
    assert!(matches!(
        events[1],
        Err(fb_format::Error::InvalidFlatbuffer { what: "Event", .. })
    ));
}

#[test]
fn raw_messages_keep_their_payload() {
    let mut w = LogWriter::new(Vec::new());
    let mut want = Vec::new();
    for (i, type_id) in [TYPE_REGULAR, 0x1234_5678, 0, fb_format::TYPE_HEADER]
        .into_iter()
        .enumerate()
    {
        let payload: Vec<u8> = (0..i * 5 + 3).map(|b| b as u8).collect();
        let offset = w.message(type_id, &payload).unwrap();
        want.push((MessageKind::from_type(type_id), offset, payload));
    }
    let log = w.into_inner();
    let got: Vec<_> = read_all(&log)
        .iter()
        .map(|m| (m.kind, m.offset, m.payload.to_vec()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn oversized_events_and_messages_are_refused_not_built() {
    let big_context = vec![b'x'; 3000];
    let big = JoinedEventSpec::new(
        "big",
        T0,
        PayloadSpec::Cb(CbSpec {
            context: Some(&big_context),
            ..CbSpec::default()
        }),
    );
    let small = ev("e1", 1, cb(false, LearningModeType::Online));
    let cases: [(&str, Vec<JoinedEventSpec<'_>>, &str); 3] = [
        ("event_above_half_the_limit", vec![big], "event"),
        (
            "message_above_the_limit",
            vec![small; 20],
            "REGULAR payload",
        ),
        ("within_the_limit", vec![small; 2], ""),
    ];
    for (name, events, what_fails) in cases {
        let mut w = LogWriter::new(Vec::new()).with_max_message_size(4096);
        let result = w.regular(&events);
        match (what_fails, result) {
            ("", Ok(_)) => {}
            (want, Err(fb_writer::Error::TooLarge { what, .. })) => {
                assert_eq!(what, want, "{name}")
            }
            (_, other) => panic!("{name}: {other:?}"),
        }
    }
}
