//! `Sink::sees_messages`: a sink that asks sees every message of its
//! inputs once, in log order among its batches (REGULAR ones through
//! `Maker::message` where they are joined, the others through
//! `Sink::control`), on one thread or several, input by input or in a
//! session; its events still come.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_format::{Message, MessageKind, SliceReader};
use fb_join::{Maker, Options, Pipeline, Sink};
use fb_writer::synth::{generate, GenConfig, Limit, Problem};

mod common;

use common::Way;

/// Where a message was, as the sink saw it.
type Seen = (u64, u64, bool);

/// Every message seen, in the order the sink got them, and the events.
#[derive(Default)]
struct Seeing {
    seen: Vec<Seen>,
    events: u64,
    /// Asks for runs to join (which seeing messages turns off).
    joins: bool,
}

/// A batch: the REGULAR messages seen where they were joined, and the
/// events added.
#[derive(Default)]
struct Part {
    seen: Vec<Seen>,
    events: u64,
}

struct Looker;

impl Maker for Looker {
    type Batch = Part;

    fn batch(&mut self) -> Part {
        Part::default()
    }

    fn add(&mut self, batch: &mut Part, _: &fb_join::JoinedEvent<'_>) {
        batch.events += 1;
    }

    fn message(&mut self, batch: &mut Part, msg: &Message<'_>, _: fb_join::MessageRead) {
        assert_eq!(msg.kind, MessageKind::Regular, "only REGULAR to the maker");
        batch.seen.push((msg.offset, msg.index, true));
    }

    fn full(&self, batch: &Part) -> bool {
        batch.events >= 40
    }

    fn clear(&mut self, batch: &mut Part) {
        *batch = Part::default();
    }
}

impl Sink for Seeing {
    type Batch = Part;
    type Maker = Looker;

    fn maker(&self) -> Looker {
        Looker
    }

    fn sees_messages(&self) -> bool {
        true
    }

    fn batches_may_join(&self) -> bool {
        self.joins
    }

    fn control(&mut self, msg: &Message<'_>) -> Result<(), fb_join::Error> {
        assert_ne!(msg.kind, MessageKind::Regular, "REGULAR to control");
        // The copy a parallel run makes is the message's own bytes.
        if msg.kind == MessageKind::Checkpoint {
            msg.checkpoint().expect("the checkpoint reads");
        }
        self.seen.push((msg.offset, msg.index, false));
        Ok(())
    }

    fn take(&mut self, batch: &mut Part) -> Result<(), fb_join::Error> {
        self.seen.append(&mut batch.seen);
        self.events += batch.events;
        Ok(())
    }
}

fn generated(problem: Problem, events: u64, checkpoint_every: u64, seed: u64) -> Vec<u8> {
    let config = GenConfig {
        problem,
        limit: Limit::Events(events),
        checkpoint_every,
        seed,
        ..GenConfig::default()
    };
    let mut bytes = Vec::new();
    generate(&config, &mut bytes).expect("a generated log");
    bytes
}

/// Every message of `log` as framing finds it.
fn messages_of(log: &[u8]) -> Vec<Seen> {
    let mut reader = SliceReader::new(log);
    let mut all = Vec::new();
    while let Some(msg) = reader.next_message().unwrap() {
        all.push((msg.offset, msg.index, msg.kind == MessageKind::Regular));
    }
    all
}

/// `log` with every `every`th REGULAR message's type changed to one no
/// reader knows.
fn with_unknown_messages(mut log: Vec<u8>, every: usize) -> Vec<u8> {
    let at: Vec<usize> = messages_of(&log)
        .into_iter()
        .filter(|m| m.2)
        .map(|m| m.0 as usize)
        .step_by(every)
        .collect();
    for offset in at {
        log[offset..offset + 4].copy_from_slice(&0xDEAD_BEEF_u32.to_le_bytes());
    }
    log
}

fn run(sink: Seeing, inputs: &[Vec<u8>], threads: usize, way: Way) -> Seeing {
    let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, threads);
    common::feed_all(&mut pipeline, inputs, way);
    pipeline.finish().1
}

#[test]
fn every_message_is_seen_once_in_log_order_on_any_number_of_threads() {
    let inputs = vec![
        // Checkpoints every 7 messages: short runs, zstd, dedup.
        common::multi_batch_log(),
        // One long run, cut by bytes into several batches, with
        // messages of unknown type among them.
        with_unknown_messages(generated(Problem::Cb, 12_000, 0, 5), 97),
        generated(Problem::Ccb, 300, 3, 3),
    ];
    assert!(inputs[1].len() > 3 << 20, "{} bytes", inputs[1].len());
    let want: Vec<Seen> = inputs.iter().flat_map(|log| messages_of(log)).collect();
    assert!(
        want.iter().filter(|m| !m.2).count() > 100,
        "control messages"
    );
    let events = run(Seeing::default(), &inputs, 1, Way::SliceFeeds).events;
    assert!(events > 10_000, "{events} events");
    for (name, threads, way, joins) in [
        ("one thread, slices", 1, Way::SliceFeeds, false),
        ("one thread, streams", 1, Way::StreamFeeds, false),
        ("one thread, session", 1, Way::SessionStream, false),
        ("two threads, slices", 2, Way::SliceFeeds, false),
        ("two threads, streams", 2, Way::StreamFeeds, false),
        (
            "three threads, streams, runs may join",
            3,
            Way::StreamFeeds,
            true,
        ),
        (
            "two threads, session of readers",
            2,
            Way::SessionStream,
            false,
        ),
        (
            "four threads, session of slices",
            4,
            Way::SessionSlice,
            true,
        ),
        (
            "four threads, session of readers",
            4,
            Way::SessionStream,
            true,
        ),
    ] {
        let sink = Seeing {
            joins,
            ..Seeing::default()
        };
        let sink = run(sink, &inputs, threads, way);
        assert_eq!(sink.events, events, "{name}: events");
        assert_eq!(sink.seen.len(), want.len(), "{name}: messages seen");
        if let Some(at) = sink.seen.iter().zip(&want).position(|(a, b)| a != b) {
            panic!(
                "{name}: message {at} seen as {:?}, it is {:?}",
                sink.seen[at], want[at]
            );
        }
    }
}
