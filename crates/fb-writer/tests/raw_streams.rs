//! Generated logs taken apart into the raw streams a client would have
//! written: each stream in client time order, as a client sends it, with
//! the events of the log; the generator keeps to the bound that lets
//! [`take_apart_by_time`] order them in a window.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_format::raw::RawStreamReader;
use fb_writer::raw::{take_apart, take_apart_by_time, Counts, Streams};
use fb_writer::synth::{self, GenConfig, GenRecord, Limit, Problem, STREAM_DISORDER_MICROS};

fn generate(cfg: &GenConfig) -> (Vec<u8>, Vec<GenRecord>) {
    let mut log = Vec::new();
    let mut records = Vec::new();
    synth::generate_with(cfg, &mut log, |r| records.push(r)).unwrap();
    (log, records)
}

/// (client time in µs, event bytes) of each event of a raw stream.
fn events(stream: &[u8]) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut reader = RawStreamReader::new(stream);
    while let Some(msg) = reader.next_message().unwrap() {
        for e in msg.raw_events().unwrap() {
            let time = fb_format::index::micros(&e.client_time.unwrap());
            out.push((time, e.bytes.to_vec()));
        }
    }
    out
}

fn by_time(log: &[u8], disorder: i64) -> (Streams, Counts) {
    let mut streams = Streams::default();
    let Streams {
        interactions,
        observations,
        episodes,
    } = &mut streams;
    let counts =
        take_apart_by_time(log, [interactions, observations, episodes], 5, disorder).unwrap();
    (streams, counts)
}

fn sorted(events: &[(i64, Vec<u8>)]) -> bool {
    events.windows(2).all(|w| w[0].0 <= w[1].0)
}

/// One configuration per problem type, with dedup, activations and
/// several decisions a message where they apply.
fn configs() -> Vec<(&'static str, GenConfig)> {
    let base = |problem| GenConfig {
        problem,
        limit: Limit::Events(400),
        outcomes: 3,
        activated: 0.3,
        events_per_message: 7,
        seed: 5,
        ..GenConfig::default()
    };
    vec![
        (
            "cb",
            GenConfig {
                dedup: true,
                ..base(Problem::Cb)
            },
        ),
        (
            "ccb",
            GenConfig {
                zstd: true,
                ..base(Problem::Ccb)
            },
        ),
        ("slates", base(Problem::Slates)),
        ("ca", base(Problem::Ca)),
        ("multistep", base(Problem::Multistep)),
    ]
}

#[test]
fn generated_streams_come_out_in_client_time_order() {
    for (name, cfg) in configs() {
        let (log, records) = generate(&cfg);
        let mut in_log = Streams::default();
        let counts = take_apart(&log, &mut in_log, 5).unwrap();
        let (timed, timed_counts) = by_time(&log, STREAM_DISORDER_MICROS);
        assert_eq!(timed_counts.behind, 0, "{name}");
        assert_eq!(
            (counts.interactions, counts.observations, counts.episodes),
            (
                timed_counts.interactions,
                timed_counts.observations,
                timed_counts.episodes
            ),
            "{name}"
        );
        for (side, logged, timed) in [
            ("interactions", &in_log.interactions, &timed.interactions),
            ("observations", &in_log.observations, &timed.observations),
            ("episodes", &in_log.episodes, &timed.episodes),
        ] {
            let (mut logged, timed) = (events(logged), events(timed));
            assert!(sorted(&timed), "{name} {side}");
            // Interactions and episodes are in client time order in the
            // log already: a client makes them one after the other.
            if side != "observations" {
                assert!(sorted(&logged), "{name} {side} in the log");
            }
            // The same events, in a stable order by time.
            logged.sort_by_key(|e| e.0);
            assert!(logged == timed, "{name} {side}: other events");
        }
        assert!(
            !events(&in_log.observations).is_empty() && !sorted(&events(&in_log.observations)),
            "{name}: the log's outcomes are all in time order: nothing was reordered"
        );
        // Each decision's outcomes are in client time order, each within
        // the bound of its decision.
        for r in &records {
            let times: Vec<u64> = r
                .outcomes
                .iter()
                .map(|o| synth::ticks_from_timestamp(&o.client_time))
                .collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "{name}: {times:?}");
            let decided = synth::ticks_from_timestamp(&r.enqueued);
            let last = match &r.decision {
                synth::Decision::MultiStep { steps } => steps
                    .iter()
                    .map(|s| synth::ticks_from_timestamp(&s.enqueued))
                    .max()
                    .unwrap_or(decided),
                _ => decided,
            };
            for t in times {
                assert!(
                    t < last + (STREAM_DISORDER_MICROS as u64) * 10,
                    "{name}: an outcome past the bound"
                );
            }
        }
    }
}

#[test]
fn events_later_than_the_window_are_counted_behind() {
    let (_, cfg) = configs().remove(0);
    let (log, _) = generate(&cfg);
    // (window in µs, events behind expected)
    for (disorder, any_behind) in [
        (0, true),
        (STREAM_DISORDER_MICROS / 10, true),
        (STREAM_DISORDER_MICROS, false),
    ] {
        let (streams, counts) = by_time(&log, disorder);
        assert_eq!(counts.behind > 0, any_behind, "{disorder}");
        let observations = events(&streams.observations);
        assert_eq!(observations.len() as u64, counts.observations, "{disorder}");
        // Written late: out of order exactly where counted.
        let late = observations
            .iter()
            .scan(i64::MIN, |latest, e| {
                let behind = e.0 < *latest;
                *latest = (*latest).max(e.0);
                Some(behind)
            })
            .filter(|b| *b)
            .count() as u64;
        assert_eq!(late, counts.behind, "{disorder}");
    }
}
