//! `Joiner::last_message_read`: a REGULAR message is read whole only when
//! the joiner decoded every event of it and checked every context, with
//! nothing to report; everything else (a damaged context, a message before
//! any checkpoint, DedupInfo entries, multistep episodes, the reference's
//! mode, caches off) leaves it to a sink's own check (`fb validate`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_format::{MessageKind, SliceReader};
use fb_join::{Caches, Compat, Joiner, MessageRead, Options, Problem};
use fb_writer::synth::{generate, GenConfig, Limit};

fn generated(problem: Problem, zstd: bool, dedup: bool) -> Vec<u8> {
    let config = GenConfig {
        problem,
        limit: Limit::Events(300),
        zstd,
        dedup,
        events_per_message: if problem == Problem::Multistep { 1 } else { 3 },
        checkpoint_every: 4,
        seed: 11,
        ..GenConfig::default()
    };
    let mut log = Vec::new();
    generate(&config, &mut log).unwrap();
    log
}

/// Each REGULAR message's verdict, with its event count as listed.
fn verdicts(log: &[u8], opts: &Options) -> Vec<(MessageRead, usize)> {
    let mut joiner = Joiner::new(opts.clone());
    joiner.watch_messages();
    let mut all = Vec::new();
    for msg in SliceReader::new(log) {
        let msg = msg.unwrap();
        joiner.push_each(&msg, |_| {});
        if msg.kind == MessageKind::Regular {
            let listed = msg.events().map_or(0, |e| e.total());
            all.push((joiner.last_message_read(), listed));
        }
    }
    assert!(all.len() > 20, "{} messages", all.len());
    all
}

/// How many messages were read whole; each whole one's count is its own.
fn whole(verdicts: &[(MessageRead, usize)]) -> usize {
    verdicts
        .iter()
        .filter(|(read, listed)| match read {
            MessageRead::Whole { events } => {
                assert_eq!(events, listed, "a whole message's events");
                true
            }
            MessageRead::NotWhole => false,
        })
        .count()
}

/// Sound logs, joined in the default mode with caches: every message is
/// read whole, but those a case leaves to the sink.
#[test]
fn sound_messages_are_read_whole_where_the_joiner_checks_them() {
    let sane = Options::default();
    // (case, log, options, messages read whole: all, none, or some)
    #[derive(Debug, PartialEq)]
    enum Expect {
        All,
        None,
        Some,
    }
    let cases = [
        (
            "cb",
            generated(Problem::Cb, false, false),
            sane.clone(),
            Expect::All,
        ),
        (
            "ccb",
            generated(Problem::Ccb, false, false),
            sane.clone(),
            Expect::All,
        ),
        (
            "slates",
            generated(Problem::Slates, false, false),
            sane.clone(),
            Expect::All,
        ),
        (
            "ca",
            generated(Problem::Ca, false, false),
            sane.clone(),
            Expect::All,
        ),
        (
            "cb, zstd",
            generated(Problem::Cb, true, false),
            sane.clone(),
            Expect::All,
        ),
        (
            "ccb, zstd",
            generated(Problem::Ccb, true, false),
            sane.clone(),
            Expect::All,
        ),
        // DedupInfo entries are not read for the sink: their messages
        // (here every one) are left to it.
        (
            "cb, dedup",
            generated(Problem::Cb, false, true),
            sane.clone(),
            Expect::None,
        ),
        (
            "multistep",
            generated(Problem::Multistep, false, false),
            sane.clone().multistep(true),
            Expect::None,
        ),
        (
            "cb, caches off",
            generated(Problem::Cb, false, false),
            sane.clone().caches(Caches::Off),
            Expect::None,
        ),
        (
            "cb, the reference's mode",
            generated(Problem::Cb, false, false),
            sane.clone().compat(Compat::Reference),
            Expect::None,
        ),
    ];
    for (name, log, opts, expect) in cases {
        let all = verdicts(&log, &opts);
        let read = whole(&all);
        let got = match read {
            0 => Expect::None,
            n if n == all.len() => Expect::All,
            _ => Expect::Some,
        };
        assert_eq!(got, expect, "{name}: {read} of {} read whole", all.len());
    }
    // A joiner not asked to watch judges nothing (what convert runs).
    let log = generated(Problem::Cb, false, false);
    let mut unwatched = Joiner::new(sane);
    for msg in SliceReader::new(&log) {
        let msg = msg.unwrap();
        unwatched.push_each(&msg, |_| {});
        assert_eq!(unwatched.last_message_read(), MessageRead::NotWhole);
    }
}

/// A context that is not JSON, in one message of a sound log: that
/// message alone is left to the sink, and so are the messages before the
/// first checkpoint when it cannot be read.
#[test]
fn a_message_with_a_problem_is_not_read_whole() {
    let log = generated(Problem::Cb, false, false);
    let regular: Vec<(usize, usize)> = SliceReader::new(&log)
        .map(Result::unwrap)
        .filter(|m| m.kind == MessageKind::Regular)
        .map(|m| (m.offset as usize, m.len))
        .collect();
    // The fifth REGULAR message's first context, its opening brace made a
    // letter: the payload still decodes, the JSON does not.
    let (at, len) = regular[4];
    let brace = log[at..at + len]
        .windows(2)
        .position(|w| w == b"{\"")
        .expect("a context in the message");
    let mut damaged = log.clone();
    damaged[at + brace] = b'X';
    let all = verdicts(&damaged, &Options::default());
    for (i, (read, _)) in all.iter().enumerate() {
        match i {
            4 => assert_eq!(*read, MessageRead::NotWhole, "the damaged message"),
            _ => assert_ne!(*read, MessageRead::NotWhole, "message {i}"),
        }
    }
    // No checkpoint can be read: nothing is joined, nothing read whole.
    let first_checkpoint = SliceReader::new(&log)
        .map(Result::unwrap)
        .find(|m| m.kind == MessageKind::Checkpoint)
        .unwrap()
        .offset as usize;
    let mut no_config = log.clone();
    no_config[first_checkpoint..first_checkpoint + 4]
        .copy_from_slice(&0xDEAD_BEEF_u32.to_le_bytes());
    let all = verdicts(&no_config, &Options::default());
    let before = all
        .iter()
        .take_while(|(read, _)| *read == MessageRead::NotWhole)
        .count();
    assert!(
        before >= 4,
        "{before} messages before the second checkpoint"
    );
    assert!(whole(&all) > 0 && whole(&all) < all.len());
}
