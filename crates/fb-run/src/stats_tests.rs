//! The tally's sums are one thread's per-event sums to the last bit,
//! whatever the batches and the number of threads.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;
use fb_format::Position;
use fb_join::{Maker, Pipeline, Sink};
use fb_writer::synth::{self, GenConfig, Limit, RewardDist};

/// A log of `problem` decisions whose sums depend on the order of their
/// terms: uniform rewards, pass probabilities below 1, several events per
/// message and checkpoints.
fn log(problem: Problem) -> Vec<u8> {
    let config = GenConfig {
        problem,
        limit: Limit::Events(6000),
        reward: RewardDist::Uniform {
            low: -0.7,
            high: 3.1,
        },
        pass_probability: 0.7,
        events_per_message: 3,
        checkpoint_every: 50,
        slots: 3,
        seed: 7,
        ..GenConfig::default()
    };
    let mut out = Vec::new();
    synth::generate(&config, &mut out).unwrap();
    out
}

/// Every sum of a tally, with the bits of its floats (`{:?}` of an `f64`
/// tells every value apart but NaNs).
fn figures(t: &Tally) -> String {
    format!("{:?}\n{}", t.kept, t.estimators.json())
}

/// The tally of `data` made by a pipeline on `threads` threads.
fn piped(data: &[u8], threads: usize) -> String {
    let mut pipeline = Pipeline::new(
        fb_join::Options::default(),
        |_: &JoinedEvent<'_>| true,
        TallySink::default(),
        threads,
    );
    pipeline
        .feed(
            fb_join::Source::Slice(data),
            Position::START,
            &|| false,
            &mut |_| {},
        )
        .unwrap();
    figures(&pipeline.finish().1 .0)
}

/// The events of `data`, as the joiner makes them, to `each`.
fn each_event(data: &[u8], mut each: impl FnMut(&JoinedEvent<'_>)) {
    let mut joiner = Joiner::new(fb_join::Options::default());
    let mut reader = fb_format::SliceReader::new(data);
    while let Some(msg) = reader.next_message().unwrap() {
        joiner.push_each(&msg, &mut each);
    }
}

#[test]
fn batches_and_threads_give_one_threads_sums_to_the_bit() {
    for (name, problem) in [
        ("cb", Problem::Cb),
        ("ccb", Problem::Ccb),
        ("slates", Problem::Slates),
        ("ca", Problem::Ca),
    ] {
        let data = log(problem);
        // One thread, one event after the other: `Metrics::record` and
        // `Estimators::add`, the definition of the sums.
        let mut serial = Tally::default();
        let mut events = 0;
        each_event(&data, |ev| {
            serial.kept.record(ev);
            serial.estimators.add(ev);
            events += 1;
        });
        assert!(events >= 6000, "{name}: {events} events");
        let want = figures(&serial);
        // Batches of a few events each, taken in order by the sink.
        let (mut sink, mut maker) = (TallySink::default(), TallyMaker);
        let mut batch = maker.batch();
        // What sums made per batch and merged give: to show that the
        // log's sums depend on where batches end.
        let (mut merged, mut alone) = (Tally::default(), Tally::default());
        let mut n = 0;
        each_event(&data, |ev| {
            maker.add(&mut batch, ev);
            alone.kept.record(ev);
            alone.estimators.add(ev);
            n += 1;
            if n % 7 == 0 {
                sink.take(&mut batch).unwrap();
                maker.clear(&mut batch);
                merged.kept.merge(&alone.kept);
                merged.estimators.merge(&alone.estimators);
                alone = Tally::default();
            }
        });
        sink.take(&mut batch).unwrap();
        merged.kept.merge(&alone.kept);
        merged.estimators.merge(&alone.estimators);
        assert_eq!(figures(&sink.0), want, "{name}: batches of 7 events");
        if problem != Problem::Ca {
            assert_ne!(
                figures(&merged),
                want,
                "{name}: sums merged per batch are the same: the test shows nothing"
            );
        }
        for threads in [1, 2, 4] {
            assert_eq!(piped(&data, threads), want, "{name}: {threads} threads");
        }
    }
}
