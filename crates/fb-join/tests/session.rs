//! A session (many inputs, one pipeline run, its threads kept from one
//! input to the next) against the serial pipeline fed input by input: the
//! same bytes, metrics, and diagnostics in the same order with the same
//! input starts; and an output that fails ends it cleanly.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_join::dsjson::LinesSink;
use fb_join::{Diagnostic, FeedReport, Joiner, Options, Pipeline, Source};

mod common;

/// What a run gave: the output, the joiner, each input's first kept
/// diagnostic, and what each feed read.
struct RunOutput {
    bytes: Vec<u8>,
    joiner: Joiner,
    starts: Vec<usize>,
    feds: Vec<(u64, u64, Option<String>)>,
}

fn summary(fed: &FeedReport) -> (u64, u64, Option<String>) {
    (
        fed.messages,
        fed.offset,
        fed.framing_error.as_ref().map(ToString::to_string),
    )
}

/// One thread, each input fed on its own.
fn serial(inputs: &[&[u8]], opts: &Options) -> RunOutput {
    let sink = LinesSink::new(Vec::new(), opts.compat);
    let mut pipeline = Pipeline::new(opts.clone(), |_: &_| true, sink, 1);
    let mut starts = Vec::new();
    let mut feds = Vec::new();
    for input in inputs {
        starts.push(pipeline.joiner().diagnostics().kept().len());
        let fed = pipeline
            .feed(
                Source::Slice(input),
                fb_format::Position::START,
                &|| false,
                &mut |_| {},
            )
            .unwrap();
        feds.push(summary(&fed));
    }
    let (joiner, sink) = pipeline.finish();
    RunOutput {
        bytes: sink.into_inner(),
        joiner,
        starts,
        feds,
    }
}

/// How a session gets its inputs.
#[derive(Debug, Clone, Copy)]
enum Feed {
    /// Each a reader.
    Stream,
    /// Each a slice, borrowed for the session.
    Slice,
}

/// One session over every input on `threads` threads.
fn session(inputs: &[&[u8]], opts: &Options, threads: usize, feed: Feed) -> RunOutput {
    let sink = LinesSink::new(Vec::new(), opts.compat);
    let mut pipeline = Pipeline::new(opts.clone(), |_: &_| true, sink, threads);
    let (feds, starts) = pipeline
        .session(|session| {
            let mut feds = Vec::new();
            for input in inputs {
                session.begin_input().unwrap();
                let source = match feed {
                    Feed::Stream => Source::Stream(Box::new(*input)),
                    Feed::Slice => Source::Slice(input),
                };
                let fed = session
                    .feed(source, fb_format::Position::START, &|| false, &mut |_| {})
                    .unwrap();
                feds.push(summary(&fed));
            }
            feds
        })
        .unwrap();
    let (joiner, sink) = pipeline.finish();
    RunOutput {
        bytes: sink.into_inner(),
        joiner,
        starts,
        feds,
    }
}

/// Each kept diagnostic with the input it came from.
fn with_inputs(ran: &RunOutput) -> Vec<(usize, Diagnostic)> {
    let kept = ran.joiner.diagnostics().kept();
    kept.iter()
        .enumerate()
        .map(|(i, d)| {
            let input = ran.starts.partition_point(|s| *s <= i) - 1;
            (input, d.clone())
        })
        .collect()
}

fn assert_same(name: &str, inputs: &[&[u8]], opts: &Options) {
    let one = serial(inputs, opts);
    for (threads, feed) in [
        (1, Feed::Stream),
        (2, Feed::Stream),
        (2, Feed::Slice),
        (4, Feed::Stream),
        (4, Feed::Slice),
    ] {
        let many = session(inputs, opts, threads, feed);
        let case = format!("{name}, {threads} threads, {feed:?}");
        assert!(many.bytes == one.bytes, "{case}: output differs");
        assert_eq!(many.joiner.metrics(), one.joiner.metrics(), "{case}");
        assert_eq!(
            many.joiner.diagnostics().counts(),
            one.joiner.diagnostics().counts(),
            "{case}: diagnostic counts"
        );
        assert_eq!(many.starts, one.starts, "{case}: inputs' first diagnostics");
        assert_eq!(
            many.joiner.config_history(),
            one.joiner.config_history(),
            "{case}: configuration changes"
        );
        assert_eq!(with_inputs(&many), with_inputs(&one), "{case}: diagnostics");
        assert_eq!(many.feds, one.feds, "{case}: what each feed read");
    }
}

#[test]
fn a_session_over_the_corpus_and_a_big_log_equals_the_serial_run() {
    let logs: Vec<Vec<u8>> = fb_tests::all_logs().into_iter().map(|(_, b)| b).collect();
    assert!(logs.len() > 40, "{} logs", logs.len());
    let big = common::multi_batch_log();
    let mut inputs: Vec<&[u8]> = logs.iter().map(Vec::as_slice).collect();
    // The big log between the corpus' logs, and again at the end.
    inputs.insert(inputs.len() / 2, &big);
    inputs.push(&big);
    let serial = serial(&inputs, &Options::default());
    assert!(
        serial.joiner.diagnostics().kept().len() > 10,
        "the corpus gives diagnostics to compare"
    );
    assert_same("corpus and a big log", &inputs, &Options::default());
    let dedup = Options::default().inline_dedup(true);
    assert_same("corpus and a big log, dedup inlined", &inputs, &dedup);
    // The plain path: each run a job of its own.
    let plain = Options::default().caches(fb_join::Caches::Off);
    assert_same("corpus and a big log, plain path", &inputs, &plain);
}

/// Feeds a multi-batch log 20 times as 20 inputs of one session on
/// `threads` threads, until the session fails: how it ended, and whether
/// each feed went well.
fn twenty_inputs_until_failure<W: std::io::Write + Send>(
    out: W,
    keep: impl Fn(&fb_join::JoinedEvent<'_>) -> bool + Sync,
    threads: usize,
) -> (Result<(), fb_join::Error>, Vec<bool>) {
    let big = common::multi_batch_log();
    let sink = LinesSink::new(out, Options::default().compat);
    let mut pipeline = Pipeline::new(Options::default(), keep, sink, threads);
    let mut feeds = Vec::new();
    let ended = pipeline.session(|session| {
        for _ in 0..20 {
            session.begin_input()?;
            let fed = session.feed(
                Source::Slice(&big),
                fb_format::Position::START,
                &|| false,
                &mut |_| {},
            );
            feeds.push(fed.is_ok());
            fed?;
        }
        Ok::<_, fb_join::Error>(())
    });
    (ended.map(|_| ()), feeds)
}

#[test]
fn a_failed_write_ends_the_session_with_its_error() {
    for threads in [2, 4] {
        let out = fb_tests::FullAfter { room: 1000 };
        let (ended, feeds) = twenty_inputs_until_failure(out, |_| true, threads);
        match ended {
            Err(fb_join::Error::Write { source, .. }) => {
                assert_eq!(
                    source.kind(),
                    std::io::ErrorKind::StorageFull,
                    "{threads} threads"
                )
            }
            other => panic!("{threads} threads: the write error is lost: {other:?}"),
        }
        // The feeds stop soon after the output failed, not at the end.
        assert!(
            feeds.len() < 20 && feeds.last() == Some(&false),
            "{threads} threads: feeds {feeds:?}"
        );
    }
}

/// A worker that panics (here the filter) ends the session with an error
/// that says so, and the feeds stop soon after, not at the end.
#[test]
fn a_worker_panic_ends_the_session_with_an_error() {
    for threads in [2, 4] {
        let keep = |_: &fb_join::JoinedEvent<'_>| -> bool { panic!("a filter that fails") };
        let (ended, feeds) = twenty_inputs_until_failure(Vec::new(), keep, threads);
        match ended {
            Err(fb_join::Error::Worker { message, .. }) => {
                assert!(message.contains("a filter that fails"), "{message}")
            }
            other => panic!("{threads} threads: the worker's panic is lost: {other:?}"),
        }
        assert!(
            feeds.len() < 20 && feeds.last() == Some(&false),
            "{threads} threads: feeds {feeds:?}"
        );
    }
}

#[test]
fn a_parallel_session_refuses_to_recover() {
    let log = fb_tests::read("valid_joined_logs/cb_simple.log");
    let sink = LinesSink::new(Vec::new(), Options::default().compat);
    let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, 2);
    let (fed, _) = pipeline
        .session(|session| {
            session.feed(
                Source::Recover(&log),
                fb_format::Position::START,
                &|| false,
                &mut |_| {},
            )
        })
        .unwrap();
    assert!(
        matches!(fed, Err(fb_join::Error::RecoverInSession)),
        "{fed:?}"
    );
}
