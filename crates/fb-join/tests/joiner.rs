//! The joiner's API on the vendored corpus: rewards, diagnostics, metrics.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;

use fb_join::{
    Compat, Decision, DiagnosticKind, JoinedEvent, JoinedEvents, LearningMode, Options, Overrides,
    Problem,
};

fn data(rel: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn join(
    rel: &str,
    opts: Options,
) -> (
    Vec<JoinedEvent<'static>>,
    JoinedEvents<std::io::Cursor<Vec<u8>>>,
) {
    let mut it = JoinedEvents::new(std::io::Cursor::new(data(rel)), opts);
    let events: Vec<JoinedEvent> = it.by_ref().collect();
    (events, it)
}

fn reference() -> Options {
    Options::default().compat(Compat::Reference)
}

#[test]
fn diagnostics_per_corpus_file() {
    // (file, multistep, expected counts by kind)
    let cases: &[(&str, &[(DiagnosticKind, u64)])] = &[
        ("valid_joined_logs/cb_simple.log", &[]),
        (
            "valid_joined_logs/rcrrmr.fb",
            &[(DiagnosticKind::NotReady, 1)],
        ),
        (
            "valid_joined_logs/rrcr.fb",
            &[(DiagnosticKind::NotReady, 2)],
        ),
        (
            "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
            &[
                (DiagnosticKind::UnknownSlotId, 72),
                (DiagnosticKind::SlotIndexOutOfRange, 17),
            ],
        ),
        (
            "invalid_joined_logs/bad_event_in_joined_event.log",
            &[
                (DiagnosticKind::BadEvent, 1),
                (DiagnosticKind::EventsDropped, 2),
            ],
        ),
        (
            "invalid_joined_logs/corrupt_joined_payload.log",
            &[(DiagnosticKind::InvalidJoinedPayload, 1)],
        ),
        (
            "invalid_joined_logs/bad_version.log",
            &[(DiagnosticKind::Framing, 1)],
        ),
        (
            "invalid_joined_logs/incomplete_checkpoint_info.log",
            &[
                (DiagnosticKind::OutcomeWithoutInteraction, 2),
                (DiagnosticKind::ProblemTypeMismatch, 2),
                (DiagnosticKind::NoInteraction, 2),
            ],
        ),
        (
            "invalid_joined_logs/no_interaction_but_with_observation.log",
            &[
                (DiagnosticKind::OutcomeWithoutInteraction, 2),
                (DiagnosticKind::NoInteraction, 1),
            ],
        ),
    ];
    for (file, expected) in cases {
        let (_, it) = join(file, reference());
        let got: Vec<(DiagnosticKind, u64)> = it
            .joiner()
            .diagnostics()
            .counts()
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect();
        assert_eq!(&got, expected, "{file}");
    }
}

#[test]
fn diagnostics_say_where() {
    let (_, it) = join(
        "invalid_joined_logs/corrupt_joined_payload.log",
        reference(),
    );
    let d = &it.joiner().diagnostics().kept()[0];
    assert_eq!((d.offset, d.message), (160, 3));
    let (_, it) = join(
        "invalid_joined_logs/no_interaction_but_with_observation.log",
        reference(),
    );
    let d = it
        .joiner()
        .diagnostics()
        .kept()
        .iter()
        .find(|d| d.kind == DiagnosticKind::NoInteraction)
        .unwrap();
    assert!(d.event_id.is_some());
    assert!(d.to_string().contains("message"), "{d}");
}

#[test]
fn the_problem_type_override_rescues_an_incomplete_checkpoint() {
    let opts = reference().overrides(Overrides {
        problem_type: Some(Problem::Cb),
        ..Overrides::default()
    });
    let (events, _) = join("invalid_joined_logs/incomplete_checkpoint_info.log", opts);
    assert_eq!(events.len(), 2);
}

#[test]
fn cb_apprentice_reward_is_baseline_match_and_original_is_kept() {
    let (events, _) = join("valid_joined_logs/cb_apprentice_5.log", reference());
    assert_eq!(events.len(), 5);
    for ev in &events {
        let expected = if ev.chosen_action() == Some(1) {
            1.0
        } else {
            0.0
        };
        assert_eq!(ev.reward, expected, "{}", ev.event_id);
        assert_eq!(ev.original_reward, 1.5, "{}", ev.event_id);
    }
    assert!(events.iter().any(|e| e.reward == 0.0) && events.iter().any(|e| e.reward == 1.0));
}

#[test]
fn ccb_apprentice_rewards_each_slot_by_its_baseline() {
    let (events, _) = join("valid_joined_logs/ccb_apprentice_5.log", reference());
    assert!(!events.is_empty());
    for ev in &events {
        let Decision::MultiSlot { slots, baseline } = &ev.decision else {
            panic!()
        };
        assert_eq!(slots.len(), baseline.len());
        for (slot, base) in slots.iter().zip(baseline) {
            let matches = slot.actions.first().map(|a| i64::from(*a)) == Some(i64::from(*base));
            assert_eq!(slot.reward, if matches { 1.0 } else { 0.0 });
        }
    }
}

#[test]
fn a_learning_mode_override_that_mismatches_skips_everything() {
    let opts = reference().overrides(Overrides {
        learning_mode: Some(LearningMode::Apprentice),
        ..Overrides::default()
    });
    let (events, it) = join("valid_joined_logs/cb_simple.log", opts);
    assert!(events.is_empty());
    assert_eq!(
        it.joiner()
            .diagnostics()
            .count(DiagnosticKind::LearningModeMismatch),
        1
    );
}

#[test]
fn skip_learn_events_have_zero_weight() {
    let (events, it) = join("skip_learn/cb/mixed_deferred_action_events.fb", reference());
    let skipped: Vec<&JoinedEvent> = events.iter().filter(|e| e.skip_learn).collect();
    assert!(!skipped.is_empty());
    assert!(skipped.iter().all(|e| e.deferred && e.weight() == 0.0));
    assert!(events
        .iter()
        .filter(|e| !e.skip_learn)
        .all(|e| e.weight() > 0.0));
    assert_eq!(it.joiner().metrics().skipped_learn, skipped.len() as u64);
}

#[test]
fn multistep_steps_come_depth_first_with_suffix_mean_rewards() {
    let opts = reference().multistep(true);
    let (events, _) = join("valid_joined_logs/multistep_2_episodes.fb", opts);
    let got: Vec<(&str, f32)> = events
        .iter()
        .map(|e| (e.event_id.as_str(), e.reward))
        .collect();
    assert_eq!(got, vec![("1", 1.0), ("2", 0.0), ("1", 3.0), ("2", 3.0)]);
    assert!(events.iter().all(|e| e.kind == Problem::Multistep));
}

#[test]
fn metrics_add_up() {
    let (events, it) = join(
        "valid_joined_logs/average_reward_100_interactions.fb",
        reference(),
    );
    let m = it.joiner().metrics();
    assert_eq!(m.joined, events.len() as u64);
    let cost: f64 = events.iter().map(|e| -f64::from(e.original_reward)).sum();
    assert!((m.original_cost_sum - cost).abs() < 1e-9);
    assert_eq!(
        m.first.as_ref().map(|f| f.0.clone()),
        events.first().map(|e| e.event_id.clone())
    );
    assert_eq!(
        m.last.as_ref().map(|f| f.0.clone()),
        events.last().map(|e| e.event_id.clone())
    );
    let baseline = events
        .iter()
        .filter(|e| e.chosen_action() == Some(1))
        .count() as u64;
    assert_eq!(m.cb_baseline_count, baseline);
}

#[test]
fn truncation_keeps_the_events_before_the_cut() {
    let log = data("valid_joined_logs/cb_apprentice_5.log");
    let whole: Vec<JoinedEvent> = JoinedEvents::new(&log[..], reference()).collect();
    // Cut inside the last REGULAR message: it is lost, the framing error kept.
    let mut it = JoinedEvents::new(&log[..log.len() - 30], reference());
    let cut: Vec<JoinedEvent> = it.by_ref().collect();
    assert!(it.framing_error().is_some());
    assert!(cut.len() < whole.len());
    assert_eq!(&whole[..cut.len()], &cut[..]);
}

#[test]
fn client_time_replaces_the_enqueued_time_when_asked() {
    // rcrrmr.fb carries client times a few hundred microseconds before the
    // enqueued ones.
    let enqueued = Options::default();
    let client = Options::default().overrides(Overrides {
        use_client_time: Some(true),
        ..Overrides::default()
    });
    let (a, _) = join("valid_joined_logs/rcrrmr.fb", enqueued);
    let (b, it) = join("valid_joined_logs/rcrrmr.fb", client);
    assert_eq!(a.len(), 3);
    assert_eq!(b.len(), 3);
    for (e, c) in a.iter().zip(&b) {
        assert!(
            c.time.subsecond() < e.time.subsecond(),
            "{:?} vs {:?}",
            c.time,
            e.time
        );
    }
    assert_eq!(
        it.joiner()
            .diagnostics()
            .count(DiagnosticKind::ClientTimeMissing),
        0
    );
    // A log without client times falls back, with a diagnostic per event.
    let client = Options::default().overrides(Overrides {
        use_client_time: Some(true),
        ..Overrides::default()
    });
    let (events, it) = join("valid_joined_logs/cb_simple.log", client);
    assert_eq!(events.len(), 1);
    assert!(
        it.joiner()
            .diagnostics()
            .count(DiagnosticKind::ClientTimeMissing)
            >= 1
    );
}
