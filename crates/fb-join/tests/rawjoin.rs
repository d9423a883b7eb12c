//! The raw-stream joiner's fuzz harness (`fuzz/harness/rawjoin.rs`) over
//! the corpus pairs with every option byte, and over the saved inputs in
//! `tests/data/fuzz/rawjoin/`; what joins nothing named by where its
//! interaction is; a stream that goes back in time reported.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

#[path = "../../../fuzz/harness/rawjoin.rs"]
mod harness;

use std::path::PathBuf;

use fb_join::rawjoin::{join, Config, Input, Item, Report, Side, WentBack, Why};
use fb_schema::{OutcomeEventArgs, PayloadType, TimeStamp, UnionArg};
use fb_writer::raw::{take_apart, Streams};
use fb_writer::{CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, MetaSpec, PayloadSpec};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

#[test]
fn every_option_byte_over_corpus_pairs_accounts_for_every_observation() {
    // (interactions, observations)
    for (i, o) in [
        (
            "fb_events/cb_v2_size_2.fb",
            "fb_events/f-reward_v2_size_2.fb",
        ),
        ("fb_events/cb_v2_dedup.fb", "fb_events/f-reward_v2.fb"),
        (
            "client_time/cb_v2_client_time.fb",
            "client_time/f-reward_3obs_v2_client_time.fb",
        ),
        (
            "reward_functions/ccb/ccb_v2.fb",
            "reward_functions/ccb/fmix-reward_v2.fb",
        ),
    ] {
        let (a, b) = (
            std::fs::read(data(i)).unwrap(),
            std::fs::read(data(o)).unwrap(),
        );
        for flags in 0..=255u8 {
            for cut in [0, a.len() / 2, a.len()] {
                let mut input = vec![flags];
                input.extend_from_slice(&(cut as u16).to_le_bytes());
                input.extend_from_slice(&a[..cut]);
                input.extend_from_slice(&b);
                harness::rawjoin(&input);
            }
        }
    }
}

/// The `rawjoin` fuzz target's seeds and the inputs it found
/// (`fuzz/seeds/rawjoin/*`, `tests/data/fuzz/rawjoin/*`), replayed
/// through its code.
#[test]
fn fuzz_seeds_and_regressions_replay() {
    for path in fb_tests::fuzz_inputs("rawjoin") {
        eprintln!("replaying {}", path.display());
        harness::rawjoin(&std::fs::read(&path).unwrap());
    }
}

/// Raw streams: CB decisions (id, seconds after 12:00) and outcomes (id,
/// seconds after 12:00), each stream in the order given, an event a
/// batch (so that the batch's offset gives an event's place).
fn streams(decisions: &[(&'static str, u32)], outcomes: &[(&'static str, u32)]) -> Streams {
    let at = |secs: u32| {
        let s = 12 * 3600 + secs;
        TimeStamp::new(
            2026,
            1,
            2,
            (s / 3600) as u8,
            (s / 60 % 60) as u8,
            (s % 60) as u8,
            0,
        )
    };
    let event = |id: &'static str, secs: u32, payload| JoinedEventSpec {
        meta: MetaSpec {
            client_time: Some(at(secs)),
            ..MetaSpec::new(id)
        },
        enqueued: at(secs),
        payload,
    };
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    w.checkpoint(&CheckpointConfig::default()).unwrap();
    for &(id, secs) in decisions {
        w.push_event(&event(
            id,
            secs,
            PayloadSpec::Cb(CbSpec {
                action_ids: Some(&[1]),
                probabilities: Some(&[1.0]),
                context: Some(b"{}"),
                ..CbSpec::default()
            }),
        ))
        .unwrap();
    }
    for &(id, secs) in outcomes {
        w.push_event(&event(
            id,
            secs,
            PayloadSpec::Outcome(OutcomeEventArgs {
                value: UnionArg::Numeric(1.0),
                index: UnionArg::None,
                action_taken: false,
            }),
        ))
        .unwrap();
    }
    w.end_regular().unwrap();
    let mut streams = Streams::default();
    take_apart(&w.into_inner(), &mut streams, 1).unwrap();
    streams
}

/// Joins with a window of `eud` and a skew of `skew` seconds: each
/// observation's fate in stream order (`None`: joined), and the report.
fn fates(streams: &Streams, eud: i64, skew: i64) -> (Vec<(String, Option<Why>)>, Report) {
    let inputs = [
        Input {
            side: Side::Interactions,
            bytes: &streams.interactions,
        },
        Input {
            side: Side::Observations,
            bytes: &streams.observations,
        },
    ];
    let cfg = Config {
        eud: Some(eud * 1_000_000),
        skew: skew * 1_000_000,
        recover: false,
    };
    let mut fates = Vec::new();
    let mut sink = |item: Item<'_>| {
        match item {
            Item::Group(events) => fates.extend(
                events
                    .iter()
                    .filter(|r| r.event.kind == PayloadType::Outcome)
                    .map(|r| {
                        (
                            (r.offset, r.event.bytes.as_ptr()),
                            r.event.id.to_string(),
                            None,
                        )
                    }),
            ),
            Item::Unjoined(r, why) => fates.push((
                (r.offset, r.event.bytes.as_ptr()),
                r.event.id.to_string(),
                Some(why),
            )),
            Item::Dedup(_) => {}
        }
        Ok(())
    };
    let report = join(&inputs, cfg, &mut sink, &mut |_, _| {}).unwrap();
    // Back in stream order.
    fates.sort_by_key(|f| f.0);
    (
        fates.into_iter().map(|(_, id, why)| (id, why)).collect(),
        report,
    )
}

#[test]
fn unjoined_observations_are_late_early_or_orphans_as_their_interactions_say() {
    // d0 and d1 at 12:01:00, d2 at 13:00:00; a window of 60 s.
    let decisions = [("d0", 60), ("d1", 60), ("d2", 3600)];
    // (observation, seconds after 12:00, fate)
    let cases: [(&str, u32, Option<Why>); 7] = [
        ("d0", 90, None),
        ("d2", 100, Some(Why::Early)), // an hour before its decision
        ("d1", 150, Some(Why::Late)),  // its group still open
        ("nobody", 200, Some(Why::Orphan)),
        ("d0", 900, Some(Why::Late)), // its group long handed out
        ("d1", 3500, Some(Why::Late)),
        ("d2", 3610, None),
    ];
    let outcomes: Vec<(&str, u32)> = cases.iter().map(|c| (c.0, c.1)).collect();
    let (got, report) = fates(&streams(&decisions, &outcomes), 60, 0);
    let want: Vec<(String, Option<Why>)> = cases.iter().map(|c| (c.0.to_string(), c.2)).collect();
    assert_eq!(got, want);
    assert_eq!(
        (report.joined, report.late, report.early, report.orphans),
        (2, 3, 1, 1)
    );
    assert!(report.went_back.is_empty(), "{:?}", report.went_back);
}

#[test]
fn a_stream_going_back_in_time_is_reported_with_its_first_such_event() {
    let decisions = [("d0", 60), ("d1", 60)];
    // d1 at 12:01:50 (the third batch) is 90 s before d0's at 12:03:20;
    // "x" at 12:01:00 (the fourth) goes back further.
    let outcomes = [("d0", 90), ("d0", 200), ("d1", 110), ("x", 60)];
    let s = streams(&decisions, &outcomes);
    let batches: Vec<(u64, u64)> = fb_format::raw::RawStreamReader::new(&s.observations)
        .map(|m| m.map(|m| (m.offset, m.index)).unwrap())
        .collect();
    // (case, skew, fates, went back)
    let twelve = |secs: i64| 1_767_355_200_000_000 + secs * 1_000_000;
    let went_back = |events, furthest| WentBack {
        input: 1,
        offset: batches[2].0,
        message: batches[2].1,
        event_id: "d1".into(),
        time: twelve(110),
        latest: twelve(200),
        events,
        furthest,
    };
    let cases = [
        (
            "skew 60s",
            60,
            [None, Some(Why::Late), Some(Why::Late), Some(Why::Orphan)],
            vec![went_back(2, 140_000_000)],
        ),
        (
            "skew 90s",
            90,
            [None, Some(Why::Late), None, Some(Why::Orphan)],
            vec![WentBack {
                offset: batches[3].0,
                message: batches[3].1,
                event_id: "x".into(),
                time: twelve(60),
                ..went_back(1, 140_000_000)
            }],
        ),
        (
            "skew 140s",
            140,
            [None, Some(Why::Late), None, Some(Why::Orphan)],
            vec![],
        ),
    ];
    for (case, skew, want, back) in cases {
        let (got, report) = fates(&s, 60, skew);
        let got: Vec<Option<Why>> = got.into_iter().map(|f| f.1).collect();
        assert_eq!(got, want, "{case}");
        assert_eq!(report.went_back, back, "{case}");
    }
}
