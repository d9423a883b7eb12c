//! Table-driven checks over every file of the vendored corpus: message
//! counts per type, events per REGULAR message, and how each broken log ends.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{read, read_all};
use fb_format::raw::RawStreamReader;
use fb_format::{Error, EventView, MessageKind, Payload, PayloadDecoder};
use fb_schema::PayloadType;

/// A compact summary of a log: one token per message (`M` magic, `H` header,
/// `C` checkpoint, `R<n>` regular with n events or `R!` when its payload or
/// an event fails verification; counts cross-checked with an independent
/// Python reader), `E` EOF, `U` unknown), then how reading ended.
fn signature(data: &[u8]) -> String {
    let (messages, error) = read_all(data);
    let mut tokens: Vec<String> = Vec::new();
    for m in &messages {
        tokens.push(match m.kind {
            MessageKind::FileMagic => "M".into(),
            MessageKind::Header => "H".into(),
            MessageKind::Checkpoint => "C".into(),
            MessageKind::Eof => "E".into(),
            MessageKind::Unknown(_) => "U".into(),
            MessageKind::Regular => {
                let msg = m.message();
                match msg.events() {
                    Ok(events) => {
                        let n = events.total();
                        if events.into_iter().all(|e| e.is_ok()) {
                            format!("R{n}")
                        } else {
                            "R!".into()
                        }
                    }
                    Err(_) => "R!".into(),
                }
            }
        });
    }
    let end = match error {
        None => "end".to_string(),
        Some(Error::Truncated { offset, .. }) => format!("truncated@{offset}"),
        Some(Error::UnsupportedVersion { version, .. }) => format!("version{version}"),
        Some(other) => format!("error: {other}"),
    };
    format!("{} | {end}", tokens.join(" "))
}

#[test]
fn joined_logs_have_the_expected_messages() {
    let cases: &[(&str, &str)] = &[
        (
            "valid_joined_logs/average_reward_100_interactions.fb",
            "M H C R4 C R377 | end",
        ),
        (
            "valid_joined_logs/ca_loop_mixed_skip_learn.fb",
            "M H C R13 E | end",
        ),
        ("valid_joined_logs/ca_loop_simple.fb", "M H C R12 E | end"),
        (
            "valid_joined_logs/ca_loop_simple_e2e.log",
            "M H C R12 E | end",
        ),
        (
            "valid_joined_logs/ca_loop_skip_learn_e2e.log",
            "M H C R6 E | end",
        ),
        ("valid_joined_logs/cb_apprentice_5.log", "M H C R10 E | end"),
        (
            "valid_joined_logs/cb_dedup_compressed.log",
            "M H C R3 E | end",
        ),
        (
            "valid_joined_logs/cb_joined_with_pdrop_05.fb",
            "M C R2 | end",
        ),
        (
            "valid_joined_logs/cb_joined_with_pdrop_1.fb",
            "M C R2 R2 | end",
        ),
        ("valid_joined_logs/cb_simple.log", "M H C R2 E | end"),
        (
            "valid_joined_logs/ccb_apprentice_5.log",
            "M H C R37 E | end",
        ),
        (
            "valid_joined_logs/ccb_deferred_actions_w_activations_and_apprentice_20.fb",
            "M H C R124 | end",
        ),
        ("valid_joined_logs/ccb_simple.log", "M H C R2 E | end"),
        (
            "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
            "M H C R487 | end",
        ),
        ("valid_joined_logs/ccb_w_slot_id.log", "M H C R3 E | end"),
        (
            "valid_joined_logs/multistep_2_episodes.fb",
            "M C R3 R3 | end",
        ),
        (
            "valid_joined_logs/multistep_3_deferred_episodes.fb",
            "M C R4 R4 R3 | end",
        ),
        ("valid_joined_logs/rcrrmr.fb", "R1 C R1 R1 M R1 | end"),
        ("valid_joined_logs/rrcr.fb", "R1 R1 C R1 | end"),
        (
            "valid_joined_logs/slates_average_reward_100_interactions.fb",
            "M H C R153 R134 R94 | end",
        ),
        ("valid_joined_logs/slates_simple.log", "M H C R2 E | end"),
        (
            "skip_learn/ca/deferred_action_with_activation.fb",
            "M H C R2 E | end",
        ),
        (
            "skip_learn/ca/deferred_action_with_activation_deduped.fb",
            "M H C R3 E | end",
        ),
        (
            "skip_learn/ca/deferred_action_without_activation.fb",
            "M H C R2 E | end",
        ),
        (
            "skip_learn/ca/deferred_action_without_activation_deduped.fb",
            "M H C R3 E | end",
        ),
        (
            "skip_learn/ca/mixed_deferred_action_events.fb",
            "M H C R4 E | end",
        ),
        (
            "skip_learn/cb/deferred_action_with_activation.fb",
            "M H C R2 E | end",
        ),
        (
            "skip_learn/cb/deferred_action_with_activation_deduped.fb",
            "M H C R3 E | end",
        ),
        (
            "skip_learn/cb/deferred_action_without_activation.fb",
            "M H C R2 E | end",
        ),
        (
            "skip_learn/cb/deferred_action_without_activation_deduped.fb",
            "M H C R3 E | end",
        ),
        (
            "skip_learn/cb/mixed_deferred_action_events.fb",
            "M H C R4 E | end",
        ),
        (
            "skip_learn/ccb/deferred_action_with_activation.fb",
            "M H C R2 E | end",
        ),
        (
            "skip_learn/ccb/deferred_action_with_activation_deduped.fb",
            "M H C R3 E | end",
        ),
        (
            "skip_learn/ccb/deferred_action_without_activation.fb",
            "M H C R9 E | end",
        ),
        (
            "skip_learn/ccb/deferred_action_without_activation_deduped.fb",
            "M H C R10 E | end",
        ),
        (
            "skip_learn/ccb/mixed_deferred_action_events.fb",
            "M H C R18 E | end",
        ),
        (
            "skip_learn/slates/deferred_action_with_activation.fb",
            "M H C R2 E | end",
        ),
        (
            "skip_learn/slates/deferred_action_without_activation.fb",
            "M H C R9 E | end",
        ),
        (
            "skip_learn/slates/mixed_deferred_action_events.fb",
            "M H C R18 E | end",
        ),
        (
            "invalid_joined_logs/bad_event_in_joined_event.log",
            "M H C R! R2 E | end",
        ),
        ("invalid_joined_logs/bad_magic.log", " | truncated@0"),
        ("invalid_joined_logs/bad_version.log", " | version2"),
        (
            "invalid_joined_logs/corrupt_joined_payload.log",
            "M H C R! R2 E | end",
        ),
        ("invalid_joined_logs/empty_msg_hdr.log", "M H C | end"),
        (
            "invalid_joined_logs/incomplete_checkpoint_info.log",
            "M H C R2 R2 E | end",
        ),
        (
            "invalid_joined_logs/interaction_with_no_observation.log",
            "M H C R3 E | end",
        ),
        (
            "invalid_joined_logs/invalid_cb_context.log",
            "M H C R4 E | end",
        ),
        (
            "invalid_joined_logs/no_interaction_but_with_observation.log",
            "M H C R2 R2 E | end",
        ),
        ("invalid_joined_logs/no_msg_hdr.log", "M | end"),
    ];
    let mut failures = Vec::new();
    for (file, expected) in cases {
        let got = compress_runs(&signature(&read(file)));
        if got != *expected {
            failures.push(format!("{file}:\n  expected {expected}\n  got      {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `R2 R2 R2` → `R2*3`, to keep the table readable.
fn compress_runs(sig: &str) -> String {
    let (tokens, end) = sig.split_once(" | ").unwrap_or((sig, ""));
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(&str, usize)> = None;
    for t in tokens.split(' ').filter(|t| !t.is_empty()) {
        match run {
            Some((prev, n)) if prev == t => run = Some((prev, n + 1)),
            _ => {
                if let Some((prev, n)) = run.take() {
                    out.push(if n >= 4 {
                        format!("{prev}*{n}")
                    } else {
                        vec![prev; n].join(" ")
                    });
                }
                run = Some((t, 1));
            }
        }
    }
    if let Some((prev, n)) = run {
        out.push(if n >= 4 {
            format!("{prev}*{n}")
        } else {
            vec![prev; n].join(" ")
        });
    }
    format!("{} | {end}", out.join(" "))
}

#[test]
fn every_event_of_the_valid_logs_decodes_to_a_typed_payload() {
    let mut decoder = PayloadDecoder::default();
    let mut compressed = 0;
    for file in common::valid_logs() {
        let data = read(&file);
        let (messages, error) = read_all(&data);
        assert!(error.is_none(), "{file}: {error:?}");
        for m in messages.iter().filter(|m| m.kind == MessageKind::Regular) {
            let msg = m.message();
            for view in msg.events().unwrap() {
                let view = view.unwrap_or_else(|e| panic!("{file}: {e}"));
                compressed += usize::from(view.is_compressed());
                let payload = decoder
                    .payload(&view)
                    .unwrap_or_else(|e| panic!("{file}: {e}"));
                assert!(
                    !matches!(payload, Payload::Unknown(_)),
                    "{file}: {payload:?}"
                );
            }
        }
    }
    assert!(
        compressed > 0,
        "the corpus holds zstd payloads; none was seen"
    );
}

/// The REGULAR messages of every valid log of the corpus, with their file.
fn regular_messages() -> Vec<(String, common::Owned)> {
    let mut owned = Vec::new();
    for file in common::valid_logs() {
        let data = read(&file);
        let (messages, _) = read_all(&data);
        owned.extend(
            messages
                .into_iter()
                .filter(|m| m.kind == MessageKind::Regular)
                .map(|m| (file.clone(), m)),
        );
    }
    owned
}

/// The events of `owned` that `keep` takes, with their file.
fn views_where<'a>(
    owned: &'a [(String, common::Owned)],
    keep: impl Fn(&EventView<'a>) -> bool,
) -> Vec<(&'a String, EventView<'a>)> {
    let mut views = Vec::new();
    for (file, m) in owned {
        for view in m.message().events().unwrap() {
            let view = view.unwrap_or_else(|e| panic!("{file}: {e}"));
            if keep(&view) {
                views.push((file, view));
            }
        }
    }
    views
}

/// A decoder serves a frame that comes again from what it decompressed
/// before: what it serves must be what a decoder that never saw the frame
/// decompresses. Every compressed payload of the corpus, three times over,
/// in file order and then backwards.
#[test]
fn frames_served_again_are_what_decompressing_gives() {
    let mut remembering = PayloadDecoder::default();
    let owned = regular_messages();
    let views = views_where(&owned, EventView::is_compressed);
    assert!(!views.is_empty(), "the corpus holds zstd payloads");
    let order = (0..views.len())
        .chain(0..views.len())
        .chain((0..views.len()).rev());
    for i in order {
        let (file, view) = &views[i];
        let fresh = PayloadDecoder::default()
            .bytes(view)
            .map(<[u8]>::to_vec)
            .map_err(|e| e.to_string());
        let served = remembering
            .bytes(view)
            .map(<[u8]>::to_vec)
            .map_err(|e| e.to_string());
        assert_eq!(served, fresh, "{file}: event {}", view.id);
    }
    assert!(
        remembering.frames_served_again() >= views.len() as u64,
        "the second and third rounds were served again: {remembering:?}"
    );
}

#[test]
fn outcomes_served_again_are_what_verifying_gives() {
    let mut remembering = PayloadDecoder::default();
    let owned = regular_messages();
    let views = views_where(&owned, |view| view.payload_type() == PayloadType::Outcome);
    assert!(views.len() > 100, "the corpus holds outcomes");
    let order = (0..views.len())
        .chain(0..views.len())
        .chain((0..views.len()).rev());
    let parts = |d: &mut PayloadDecoder, view| {
        d.outcome(view)
            .map(|o| format!("{:?} {:?} {}", o.value, o.index, o.action_taken))
            .map_err(|e| e.to_string())
    };
    for i in order {
        let (file, view) = &views[i];
        let fresh = parts(&mut PayloadDecoder::default(), view);
        let served = parts(&mut remembering, view);
        assert_eq!(served, fresh, "{file}: event {}", view.id);
    }
}

#[test]
fn raw_client_streams_hold_the_expected_batches() {
    // (file, events per EventBatch)
    let cases: &[(&str, &[usize])] = &[
        ("client_time/cb_v2_client_time.fb", &[1]),
        ("client_time/f-reward_3obs_v2_client_time.fb", &[3]),
        ("fb_events/cb_v2_size_2.fb", &[2]),
        ("fb_events/cb_v2_size_5_apprentice.fb", &[5]),
        ("reward_functions/ccb/fmix-reward_v2.fb", &[2, 6]),
    ];
    for (file, expected) in cases {
        let data = read(file);
        let counts: Vec<usize> = RawStreamReader::new(&data)
            .map(|m| {
                m.unwrap_or_else(|e| panic!("{file}: {e}"))
                    .events()
                    .unwrap()
                    .len()
            })
            .collect();
        assert_eq!(&counts, expected, "{file}");
    }
}

#[test]
fn client_time_streams_carry_client_timestamps() {
    let data = read("client_time/cb_v2_client_time.fb");
    let msg = RawStreamReader::new(&data).next().unwrap().unwrap();
    let events = msg.events().unwrap();
    let meta = events[0].meta().unwrap();
    let t = meta.client_time_utc().copied().unwrap();
    assert!(!t.is_zero());
    assert!(t.year() >= 2020, "{t:?}");
}
