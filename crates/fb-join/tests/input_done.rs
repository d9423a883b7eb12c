//! `Sink::input_done`: told once per input that handed the sink an event,
//! after every batch of it and before any of the next, on one thread or
//! several, input by input or in a session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_join::{Maker, Options, Pipeline, Sink, Source};
use fb_writer::synth::{generate, GenConfig, Limit, Problem};

mod common;

use common::Way;

/// Counts the events it takes, and where each input ended.
#[derive(Default)]
struct Counting {
    taken: u64,
    batches: u64,
    /// Events taken when each `input_done` came.
    done: Vec<u64>,
    /// Lets the pipeline join runs into one batch (`batches_may_join`).
    joins: bool,
}

/// Fills batches of event counts: one thread hands one over every
/// [`BATCH`] events, so an input makes several.
struct Counter;

const BATCH: u64 = 50;

impl Maker for Counter {
    type Batch = u64;

    fn batch(&mut self) -> u64 {
        0
    }

    fn add(&mut self, batch: &mut u64, _: &fb_join::JoinedEvent<'_>) {
        *batch += 1;
    }

    fn full(&self, batch: &u64) -> bool {
        *batch >= BATCH
    }

    fn clear(&mut self, batch: &mut u64) {
        *batch = 0;
    }
}

impl Sink for Counting {
    type Batch = u64;
    type Maker = Counter;

    fn maker(&self) -> Counter {
        Counter
    }

    fn take(&mut self, batch: &mut u64) -> Result<(), fb_join::Error> {
        self.taken += *batch;
        self.batches += u64::from(*batch > 0);
        Ok(())
    }

    fn batches_may_join(&self) -> bool {
        self.joins
    }

    fn input_done(&mut self) -> Result<(), fb_join::Error> {
        self.done.push(self.taken);
        Ok(())
    }
}

fn generated(problem: Problem, events: u64, seed: u64) -> Vec<u8> {
    let config = GenConfig {
        problem,
        limit: Limit::Events(events),
        checkpoint_every: 5,
        seed,
        ..GenConfig::default()
    };
    let mut bytes = Vec::new();
    generate(&config, &mut bytes).expect("a generated log");
    bytes
}

/// The sink after `inputs` fed as `way` says on `threads` threads.
fn run(inputs: &[Vec<u8>], threads: usize, way: Way) -> Counting {
    run_into(
        Counting::default(),
        &Options::default(),
        inputs,
        threads,
        way,
    )
}

/// `sink` after `inputs` fed with `opts` as `way` says on `threads`
/// threads.
fn run_into(
    sink: Counting,
    opts: &Options,
    inputs: &[Vec<u8>],
    threads: usize,
    way: Way,
) -> Counting {
    let mut pipeline = Pipeline::new(opts.clone(), |_: &_| true, sink, threads);
    common::feed_all(&mut pipeline, inputs, way);
    pipeline.finish().1
}

#[test]
fn input_done_comes_once_per_input_with_events_after_its_last_batch() {
    let inputs = vec![
        common::multi_batch_log(),
        generated(Problem::Cb, 700, 1),
        // A log with no event: not told.
        generated(Problem::Cb, 0, 2),
        generated(Problem::Ccb, 300, 3),
        common::multi_batch_log(),
        generated(Problem::Cb, 1, 4),
    ];
    // What each input keeps, from the pipeline's count fed input by input.
    let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, Counting::default(), 1);
    let mut kept = Vec::new();
    for input in &inputs {
        let before = pipeline.kept();
        let start = fb_format::Position::START;
        let fed = pipeline
            .feed(Source::Slice(input), start, &|| false, &mut |_| {})
            .unwrap();
        assert!(fed.framing_error.is_none(), "{:?}", fed.framing_error);
        kept.push(pipeline.kept() - before);
    }
    assert_eq!(kept[2], 0, "the empty log has no event");
    assert!(kept.iter().filter(|k| **k > BATCH).count() >= 3, "{kept:?}");
    let want: Vec<u64> = kept
        .iter()
        .scan(0, |sum, k| {
            *sum += k;
            Some((*k > 0).then_some(*sum))
        })
        .flatten()
        .collect();
    for (name, threads, way) in [
        ("one thread, feeds", 1, Way::SliceFeeds),
        ("one thread, session", 1, Way::SessionStream),
        ("two threads, feeds", 2, Way::SliceFeeds),
        ("two threads, session of readers", 2, Way::SessionStream),
        ("two threads, session of slices", 2, Way::SessionSlice),
        ("four threads, feeds", 4, Way::SliceFeeds),
        ("four threads, session of readers", 4, Way::SessionStream),
        ("four threads, session of slices", 4, Way::SessionSlice),
    ] {
        let sink = run(&inputs, threads, way);
        assert_eq!(sink.done, want, "{name}: where inputs ended");
        assert_eq!(sink.taken, kept.iter().sum::<u64>(), "{name}: events");
        // Several batches per input with events: an input_done between two
        // of one input's would be at a count no input ends at.
        assert!(
            sink.batches > want.len() as u64,
            "{name}: {} batches",
            sink.batches
        );
    }
}

/// A sink that lets runs join gets, on several threads, fewer batches
/// than a folder of small inputs has inputs (a batch then holds the runs
/// of several), every event once, and `input_done` still once per input
/// with events, in order. The plain path (`Caches::Off`) hands each run
/// over alone, as for a sink that does not let them join.
#[test]
fn the_runs_of_small_inputs_join_when_the_sink_lets_them() {
    let inputs: Vec<Vec<u8>> = (0..40)
        .map(|seed| generated(Problem::Cb, 20 + seed % 7, seed))
        .collect();
    let events: u64 = run(&inputs, 1, Way::SliceFeeds).taken;
    let plain = Options::default().caches(fb_join::Caches::Off);
    let joining = || Counting {
        joins: true,
        ..Counting::default()
    };
    for (name, threads, way) in [
        ("two threads, session of readers", 2, Way::SessionStream),
        ("two threads, session of slices", 2, Way::SessionSlice),
        ("four threads, session of readers", 4, Way::SessionStream),
    ] {
        let joined = run_into(joining(), &Options::default(), &inputs, threads, way);
        assert_eq!(joined.taken, events, "{name}: events");
        assert_eq!(joined.done.len(), inputs.len(), "{name}: inputs told");
        assert!(
            joined.done.windows(2).all(|w| w[0] <= w[1]) && joined.done.last() == Some(&events),
            "{name}: inputs told in order: {:?}",
            joined.done
        );
        assert!(
            joined.batches * 4 <= inputs.len() as u64,
            "{name}: {} batches for {} inputs",
            joined.batches,
            inputs.len()
        );
        for (how, sink, opts) in [
            (
                "the sink does not let them",
                Counting::default(),
                Options::default(),
            ),
            ("the plain path", joining(), plain.clone()),
        ] {
            let alone = run_into(sink, &opts, &inputs, threads, way);
            assert_eq!(alone.taken, events, "{name}, {how}: events");
            assert!(
                alone.batches >= inputs.len() as u64,
                "{name}, {how}: {} batches for {} inputs",
                alone.batches,
                inputs.len()
            );
        }
    }
}
