//! Joiner rules on small logs written with fb-writer, for the cases the
//! corpus does not hold.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_join::{Compat, Decision, DiagnosticKind, JoinedEvent, JoinedEvents, Options};
use fb_schema::{
    LearningModeType, OutcomeEventArgs, ProblemType, RewardFunctionType, TimeStamp, UnionArg,
};
use fb_writer::{
    CaSpec, CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, MultiSlotSpec, PayloadSpec,
    SlotSpec,
};

const CTX: &[u8] = br#"{"U":{"x":1},"_multi":[{"a":{"b":1}},{"a":{"b":2}}]}"#;

fn ts(second: u8) -> TimeStamp {
    TimeStamp::new(2024, 1, 2, 3, 4, second, 0)
}

fn outcome(value: f32) -> PayloadSpec<'static> {
    PayloadSpec::Outcome(OutcomeEventArgs {
        value: UnionArg::Numeric(value),
        index: UnionArg::None,
        action_taken: false,
    })
}

fn log(checkpoint: CheckpointConfig, events: &[JoinedEventSpec<'_>]) -> Vec<u8> {
    fb_writer::one_batch_log(&checkpoint, events).unwrap()
}

fn checkpoint(problem: ProblemType, mode: LearningModeType) -> CheckpointConfig {
    CheckpointConfig {
        reward_function: RewardFunctionType::Earliest,
        default_reward: -3.0,
        learning_mode: mode,
        problem_type: problem,
        use_client_time: false,
    }
}

fn join(bytes: &[u8], compat: Compat) -> (Vec<JoinedEvent<'static>>, fb_join::Diagnostics) {
    let mut it = JoinedEvents::new(bytes, Options::default().compat(compat));
    let events: Vec<JoinedEvent> = it.by_ref().collect();
    (events, it.joiner().diagnostics().clone())
}

#[test]
fn apprentice_per_problem_type() {
    let slots = [SlotSpec {
        action_ids: &[1, 0],
        probabilities: &[0.9, 0.1],
        id: None,
    }];
    let cases: Vec<(
        &str,
        ProblemType,
        PayloadSpec<'_>,
        f32,
        Option<DiagnosticKind>,
    )> = vec![
        (
            "cb, first action is the baseline",
            ProblemType::CB,
            PayloadSpec::Cb(CbSpec {
                action_ids: Some(&[1, 2]),
                probabilities: Some(&[0.9, 0.1]),
                context: Some(CTX),
                learning_mode: LearningModeType::Apprentice,
                ..CbSpec::default()
            }),
            1.0,
            None,
        ),
        (
            "cb, first action is not the baseline",
            ProblemType::CB,
            PayloadSpec::Cb(CbSpec {
                action_ids: Some(&[2, 1]),
                probabilities: Some(&[0.9, 0.1]),
                context: Some(CTX),
                learning_mode: LearningModeType::Apprentice,
                ..CbSpec::default()
            }),
            0.0,
            None,
        ),
        (
            "slates: not defined, default reward",
            ProblemType::SLATES,
            PayloadSpec::Slates(MultiSlotSpec {
                context: Some(CTX),
                slots: Some(&slots),
                learning_mode: LearningModeType::Apprentice,
                ..MultiSlotSpec::default()
            }),
            -3.0,
            Some(DiagnosticKind::ApprenticeUnsupported),
        ),
        (
            "ca: not defined, default reward",
            ProblemType::CA,
            PayloadSpec::Ca(CaSpec {
                context: Some(CTX),
                action: 1.5,
                pdf_value: 0.25,
                learning_mode: LearningModeType::Apprentice,
                ..CaSpec::default()
            }),
            -3.0,
            Some(DiagnosticKind::ApprenticeUnsupported),
        ),
    ];
    for (name, problem, payload, reward, diag) in cases {
        let bytes = log(
            checkpoint(problem, LearningModeType::Apprentice),
            &[
                JoinedEventSpec::new("e1", ts(1), payload),
                JoinedEventSpec::new("e1", ts(2), outcome(5.0)),
            ],
        );
        let (events, diags) = join(&bytes, Compat::Reference);
        assert_eq!(events.len(), 1, "{name}");
        assert_eq!(events[0].reward, reward, "{name}");
        assert_eq!(
            events[0].original_reward, 5.0,
            "{name}: original reward is f(outcomes)"
        );
        match diag {
            Some(kind) => assert_eq!(diags.count(kind), 1, "{name}"),
            None => assert_eq!(diags.total(), 0, "{name}"),
        }
    }
}

#[test]
fn ccb_apprentice_with_wrong_baseline_count_is_skipped() {
    let slots = [
        SlotSpec {
            action_ids: &[0, 1],
            probabilities: &[0.5, 0.5],
            id: None,
        },
        SlotSpec {
            action_ids: &[1],
            probabilities: &[1.0],
            id: None,
        },
    ];
    let payload = PayloadSpec::Ccb(MultiSlotSpec {
        context: Some(CTX),
        slots: Some(&slots),
        baseline_actions: Some(&[0]),
        learning_mode: LearningModeType::Apprentice,
        ..MultiSlotSpec::default()
    });
    let bytes = log(
        checkpoint(ProblemType::CCB, LearningModeType::Apprentice),
        &[JoinedEventSpec::new("e1", ts(1), payload)],
    );
    for compat in [Compat::Sane, Compat::Reference] {
        let (events, diags) = join(&bytes, compat);
        assert!(events.is_empty());
        assert_eq!(diags.count(DiagnosticKind::BaselineMismatch), 1);
    }
}

#[test]
fn ccb_outcomes_go_to_slots_by_index_or_id() {
    let slots = [
        SlotSpec {
            action_ids: &[0, 1],
            probabilities: &[0.5, 0.5],
            id: Some("first"),
        },
        SlotSpec {
            action_ids: &[1],
            probabilities: &[1.0],
            id: Some("second"),
        },
    ];
    let payload = PayloadSpec::Ccb(MultiSlotSpec {
        context: Some(CTX),
        slots: Some(&slots),
        ..MultiSlotSpec::default()
    });
    let o = |value, index| {
        PayloadSpec::Outcome(OutcomeEventArgs {
            value: UnionArg::Numeric(value),
            index,
            action_taken: false,
        })
    };
    let bytes = log(
        checkpoint(ProblemType::CCB, LearningModeType::Online),
        &[
            JoinedEventSpec::new("e1", ts(1), payload),
            JoinedEventSpec::new("e1", ts(2), o(2.0, UnionArg::Literal("second"))),
            JoinedEventSpec::new("e1", ts(3), o(4.0, UnionArg::Numeric(0))),
            JoinedEventSpec::new("e1", ts(4), o(8.0, UnionArg::Literal("nowhere"))),
            JoinedEventSpec::new("e1", ts(5), o(16.0, UnionArg::Numeric(7))),
            JoinedEventSpec::new("e1", ts(6), o(32.0, UnionArg::None)),
        ],
    );
    let (events, diags) = join(&bytes, Compat::Reference);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].slot_rewards(), vec![4.0, 2.0]);
    assert_eq!(diags.count(DiagnosticKind::UnknownSlotId), 1);
    assert_eq!(diags.count(DiagnosticKind::SlotIndexOutOfRange), 1);
    assert_eq!(diags.count(DiagnosticKind::OutcomeWithoutIndex), 1);
    let Decision::MultiSlot { slots, .. } = &events[0].decision else {
        panic!()
    };
    assert_eq!(slots[1].outcomes, vec![0]);
}

#[test]
fn outcomes_before_their_interaction_are_dropped() {
    let cb = PayloadSpec::Cb(CbSpec {
        action_ids: Some(&[1, 2]),
        probabilities: Some(&[0.5, 0.5]),
        context: Some(CTX),
        ..CbSpec::default()
    });
    let bytes = log(
        checkpoint(ProblemType::CB, LearningModeType::Online),
        &[
            JoinedEventSpec::new("e1", ts(1), outcome(7.0)),
            JoinedEventSpec::new("e1", ts(2), cb),
            JoinedEventSpec::new("e1", ts(3), outcome(1.0)),
        ],
    );
    let (events, diags) = join(&bytes, Compat::Reference);
    assert_eq!(events[0].reward, 1.0);
    assert_eq!(events[0].outcomes.len(), 1);
    assert_eq!(diags.count(DiagnosticKind::OutcomeWithoutInteraction), 1);
}

#[test]
fn pass_probability_gives_pdrop_and_label_probability() {
    let cb = PayloadSpec::Cb(CbSpec {
        action_ids: Some(&[2, 1]),
        probabilities: Some(&[0.8, 0.2]),
        context: Some(CTX),
        ..CbSpec::default()
    });
    let mut spec = JoinedEventSpec::new("e1", ts(1), cb);
    spec.meta.pass_probability = 0.5;
    let bytes = log(
        checkpoint(ProblemType::CB, LearningModeType::Online),
        &[spec],
    );
    let mut out = Vec::new();
    fb_join::convert(
        &bytes[..],
        &mut out,
        Options::default().compat(Compat::Reference),
    )
    .unwrap();
    let line = String::from_utf8(out).unwrap();
    assert!(
        line.contains("\"_label_probability\":0.4000000059604645,"),
        "{line}"
    );
    assert!(line.contains("\"pdrop\":0.5,"), "{line}");
    assert!(
        line.contains("\"_label_cost\":3.0,"),
        "default reward -3 gives cost 3: {line}"
    );
    let (events, _) = join(&bytes, Compat::Reference);
    assert_eq!(events[0].weight(), 2.0);
}

/// A tiny zstd frame that declares (and holds) 100 MiB decodes through the
/// streaming path; a cut one is an error, never a panic.
#[test]
fn zstd_frames_with_implausible_ratios_decode_as_streams() {
    use fb_format::{MessageKind, PayloadDecoder, SliceReader};
    use fb_schema::PayloadType;
    use fb_writer::{Encoding, MetaSpec};
    let frame = zstd::bulk::compress(&vec![0u8; 100 << 20], 19).unwrap();
    assert!(frame.len() < 64 << 10, "{}", frame.len());
    let cut = &frame[..frame.len() - 8];
    for (name, bytes, whole) in [("whole frame", &frame[..], true), ("cut frame", cut, false)] {
        let mut spec = JoinedEventSpec::new(
            "e1",
            ts(1),
            PayloadSpec::Raw {
                payload_type: PayloadType::CB,
                bytes,
            },
        );
        spec.meta = MetaSpec {
            encoding: Encoding::ClaimsZstd,
            ..MetaSpec::new("e1")
        };
        let log = log(
            checkpoint(ProblemType::CB, LearningModeType::Online),
            &[spec],
        );
        let msg = SliceReader::new(&log)
            .flatten()
            .find(|m| m.kind == MessageKind::Regular)
            .unwrap();
        let view = msg.events().unwrap().next().unwrap().unwrap();
        let mut decoder = PayloadDecoder::new(256 << 20);
        match decoder.bytes(&view) {
            Ok(bytes) => assert!(
                whole && bytes.len() == 100 << 20,
                "{name}: {} bytes",
                bytes.len()
            ),
            Err(err) => assert!(!whole, "{name}: {err}"),
        }
    }
}

/// Two slots of two actions each.
const TWO_SLOTS: [SlotSpec<'static>; 2] = [
    SlotSpec {
        action_ids: &[0, 1],
        probabilities: &[0.9, 0.1],
        id: None,
    },
    SlotSpec {
        action_ids: &[1, 0],
        probabilities: &[0.8, 0.2],
        id: None,
    },
];

/// An outcome whose value is a literal string: the reference writes its
/// numeric value, 0.0, as `v`; by default the text is kept. Either way it
/// counts 0.0 in rewards.
#[test]
fn literal_outcome_values_per_problem_type() {
    let multi = MultiSlotSpec {
        slots: Some(&TWO_SLOTS),
        context: Some(CTX),
        ..MultiSlotSpec::default()
    };
    let literal = |index| {
        PayloadSpec::Outcome(OutcomeEventArgs {
            value: UnionArg::Literal("clicked \"twice\""),
            index,
            action_taken: false,
        })
    };
    let cases: [(&str, ProblemType, PayloadSpec<'_>, UnionArg<'_, i32>); 3] = [
        (
            "cb",
            ProblemType::CB,
            PayloadSpec::Cb(CbSpec {
                action_ids: Some(&[1, 2]),
                probabilities: Some(&[0.9, 0.1]),
                context: Some(CTX),
                ..CbSpec::default()
            }),
            UnionArg::None,
        ),
        (
            "ccb",
            ProblemType::CCB,
            PayloadSpec::Ccb(multi),
            UnionArg::Numeric(0),
        ),
        (
            "slates",
            ProblemType::SLATES,
            PayloadSpec::Slates(multi),
            UnionArg::None,
        ),
    ];
    for (name, problem, decision, index) in cases {
        let bytes = log(
            checkpoint(problem, LearningModeType::Online),
            &[
                JoinedEventSpec::new("e1", ts(1), decision),
                JoinedEventSpec::new("e1", ts(2), literal(index)),
            ],
        );
        for compat in [Compat::Reference, Compat::Sane] {
            let mut out = Vec::new();
            fb_join::convert(&bytes[..], &mut out, Options::default().compat(compat)).unwrap();
            let line = String::from_utf8(out).unwrap();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            let o = match problem {
                ProblemType::CCB => &v["_outcomes"][0]["_o"][0],
                _ => &v["o"][0],
            };
            match compat {
                Compat::Reference => {
                    assert_eq!(o["v"], serde_json::json!(0.0), "{name}: {line}");
                    assert!(
                        line.contains(r#"{"v":0.0,"EventId":"e1""#),
                        "{name}: {line}"
                    );
                    assert!(!line.contains("clicked"), "{name}: {line}");
                }
                Compat::Sane => {
                    assert_eq!(
                        o["v"],
                        serde_json::json!("clicked \"twice\""),
                        "{name}: {line}"
                    )
                }
            }
            // The literal counts 0.0: not the default reward of -3.
            let cost = match problem {
                ProblemType::CCB => &v["_outcomes"][0]["_label_cost"],
                _ => &v["_label_cost"],
            };
            assert_eq!(cost.as_f64(), Some(0.0), "{name} {compat:?}: {line}");
        }
    }
}

/// Writes one log of `problem` decisions whose outcomes mix numeric and
/// literal values, for the real-VW check in CI.
fn literal_log(problem: ProblemType) -> Vec<u8> {
    const CCB_CTX: &[u8] =
        br#"{"U":{"x":1},"_multi":[{"a":{"b":1}},{"a":{"b":2}}],"_slots":[{"s":{"i":0}},{"s":{"i":1}}]}"#;
    const SLATES_CTX: &[u8] = br#"{"U":{"x":1},"_multi":[{"_slot_id":0,"a":{"b":1}},{"_slot_id":0,"a":{"b":2}},{"_slot_id":1,"a":{"b":3}},{"_slot_id":1,"a":{"b":4}}],"_slots":[{"s":{"i":0}},{"s":{"i":1}}]}"#;
    let ids: Vec<String> = (0..6).map(|n| format!("literal-{n}")).collect();
    let mut events = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let decision = match problem {
            ProblemType::CB => PayloadSpec::Cb(CbSpec {
                action_ids: Some(&[1, 2]),
                probabilities: Some(&[0.9, 0.1]),
                context: Some(CTX),
                ..CbSpec::default()
            }),
            ProblemType::CCB => PayloadSpec::Ccb(MultiSlotSpec {
                slots: Some(&TWO_SLOTS),
                context: Some(CCB_CTX),
                ..MultiSlotSpec::default()
            }),
            _ => PayloadSpec::Slates(MultiSlotSpec {
                slots: Some(&TWO_SLOTS),
                context: Some(SLATES_CTX),
                ..MultiSlotSpec::default()
            }),
        };
        let index = if problem == ProblemType::CCB {
            UnionArg::Numeric((n % 2) as i32)
        } else {
            UnionArg::None
        };
        events.push(JoinedEventSpec::new(id, ts(n as u8), decision));
        events.push(JoinedEventSpec::new(
            id,
            ts(n as u8 + 1),
            PayloadSpec::Outcome(OutcomeEventArgs {
                value: if n % 2 == 0 {
                    UnionArg::Literal("converted")
                } else {
                    UnionArg::Numeric(1.0)
                },
                index,
                action_taken: false,
            }),
        ));
    }
    let mut cp = checkpoint(problem, LearningModeType::Online);
    cp.default_reward = 0.0;
    log(cp, &events)
}

/// The logs with literal outcome values in tests/data are the ones this
/// code writes (`FB_BLESS=1` rewrites them), and they join.
#[test]
fn literal_outcome_logs_in_tests_data() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/literal_outcomes");
    for (name, problem) in [
        ("cb", ProblemType::CB),
        ("ccb", ProblemType::CCB),
        ("slates", ProblemType::SLATES),
    ] {
        let bytes = literal_log(problem);
        let path = dir.join(format!("{name}.fb"));
        if std::env::var_os("FB_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{name}: tests/data differs from what the code writes (FB_BLESS=1 rewrites it)"
        );
        let (events, diags) = join(&bytes, Compat::Sane);
        assert_eq!(events.len(), 6, "{name}: {diags:?}");
    }
}

/// `Options::only` leaves loops of other problem types unjoined: the same
/// lines as filtering afterwards, no diagnostics about them, and their
/// events counted; dedup entries they define still serve later loops.
#[test]
fn only_leaves_other_loops_unjoined_and_undiagnosed() {
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    w.checkpoint(&checkpoint(ProblemType::CB, LearningModeType::Online))
        .unwrap();
    let cb = PayloadSpec::Cb(CbSpec {
        action_ids: Some(&[1, 2]),
        probabilities: Some(&[0.9, 0.1]),
        context: Some(CTX),
        ..CbSpec::default()
    });
    w.regular(&[
        // An outcome before its decision: a warning in a CB loop.
        JoinedEventSpec::new("cb-1", ts(1), outcome(1.0)),
        JoinedEventSpec::new("cb-1", ts(2), cb),
        JoinedEventSpec::new("cb-2", ts(3), cb),
    ])
    .unwrap();
    w.checkpoint(&checkpoint(ProblemType::CCB, LearningModeType::Online))
        .unwrap();
    let slots = [SlotSpec {
        action_ids: &[1, 0],
        probabilities: &[0.9, 0.1],
        id: None,
    }];
    w.regular(&[JoinedEventSpec::new(
        "ccb-1",
        ts(4),
        PayloadSpec::Ccb(MultiSlotSpec {
            slots: Some(&slots),
            context: Some(CTX),
            ..MultiSlotSpec::default()
        }),
    )])
    .unwrap();
    w.eof().unwrap();
    let log = w.into_inner();

    let mut all = JoinedEvents::new(&log[..], Options::default());
    let all_events: Vec<JoinedEvent> = all.by_ref().collect();
    assert_eq!(all_events.len(), 3);
    assert!(all
        .joiner()
        .diagnostics()
        .counts()
        .contains_key(&DiagnosticKind::OutcomeWithoutInteraction));

    let opts = Options::default().only(vec![fb_join::Problem::Ccb]);
    let mut only = JoinedEvents::new(&log[..], opts.clone());
    let events: Vec<JoinedEvent> = only.by_ref().collect();
    let want: Vec<&JoinedEvent> = all_events
        .iter()
        .filter(|e| e.kind == fb_join::Problem::Ccb)
        .collect();
    assert_eq!(events.iter().collect::<Vec<_>>(), want);
    let diags = only.joiner().diagnostics();
    assert!(diags.counts().is_empty(), "{:?}", diags.kept());
    assert_eq!(only.joiner().metrics().not_selected, 3);
    assert_eq!(only.joiner().metrics().events_read, 4);

    // The parallel path agrees.
    let mut serial = Vec::new();
    fb_join::convert(&log[..], &mut serial, opts.clone()).unwrap();
    let mut joiner = fb_join::Joiner::new(opts);
    let mut parallel = Vec::new();
    let summary = fb_join::convert_parallel(
        &mut joiner,
        fb_join::Source::Slice(&log),
        &mut parallel,
        2,
        |_| true,
        |_| {},
    )
    .unwrap();
    assert_eq!(parallel, serial);
    assert_eq!(summary.metrics.not_selected, 3);
    assert!(summary.diagnostics.counts().is_empty());
}
