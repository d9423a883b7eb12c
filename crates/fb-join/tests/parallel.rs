//! `convert_parallel` against the serial joiner: the same bytes, and the
//! same metrics and diagnostics, also when one joiner reads several inputs,
//! and with the speed caches on or off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_join::{convert_into, convert_parallel, Caches, Joiner, Options, Progress, Source, Summary};
use fb_writer::synth::{generate, GenConfig, Limit, Problem};

mod common;

fn serial(inputs: &[&[u8]], opts: &Options) -> (Vec<u8>, Joiner) {
    let mut joiner = Joiner::new(opts.clone());
    let mut out = Vec::new();
    for input in inputs {
        convert_into(&mut joiner, *input, &mut out).unwrap();
    }
    (out, joiner)
}

/// How the parallel conversion gets its input.
#[derive(Debug, Clone, Copy)]
enum Feed {
    /// Through `io::Read`, as much as asked each time: read straight into
    /// the batches' buffers.
    Reader,
    /// Through `io::Read`, a few bytes at a time (1, 7, 64, 997 in turn):
    /// headers, payloads and batches cut across reads.
    Trickle,
    /// As a slice: payloads borrowed where they are.
    Slice,
}

fn parallel(inputs: &[&[u8]], opts: &Options, threads: usize, feed: Feed) -> (Vec<u8>, Joiner) {
    let mut joiner = Joiner::new(opts.clone());
    let mut out = Vec::new();
    for input in inputs {
        let before = joiner.metrics().joined;
        let mut last = Progress::default();
        let mut check = |at: Progress| {
            // Finished never passes read, and neither goes back.
            assert!(at.finished <= at.read, "{at:?}");
            assert!(
                at.read >= last.read && at.finished >= last.finished,
                "{at:?} after {last:?}"
            );
            last = at;
        };
        let summary: Summary = match feed {
            Feed::Reader => {
                let reader = Source::Stream(Box::new(*input));
                convert_parallel(&mut joiner, reader, &mut out, threads, |_| true, &mut check)
            }
            Feed::Trickle => {
                let reader = Source::Stream(Box::new(Trickle(input, 0)));
                convert_parallel(&mut joiner, reader, &mut out, threads, |_| true, &mut check)
            }
            Feed::Slice => {
                let slice = Source::Slice(input);
                convert_parallel(&mut joiner, slice, &mut out, threads, |_| true, &mut check)
            }
        }
        .unwrap();
        // At the end every byte framed is finished with.
        assert_eq!(last.finished, last.read, "{feed:?}");
        assert_eq!(last.events, summary.metrics.joined - before, "{feed:?}");
    }
    (out, joiner)
}

/// A reader that hands out a few bytes at a time.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const SIZES: [usize; 4] = [1, 7, 64, 997];
        let n = SIZES[self.1 % SIZES.len()].min(buf.len()).min(self.0.len());
        self.1 += 1;
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// The serial conversion with caches on, against the serial one with
/// them off and the parallel ones either way.
fn assert_same(name: &str, inputs: &[&[u8]], opts: &Options) {
    let (bytes, one) = serial(inputs, opts);
    let off = opts.clone().caches(Caches::Off);
    let (plain, _) = serial(inputs, &off);
    assert!(plain == bytes, "{name}: serial, caches off: output differs");
    for (threads, feed, opts) in [
        (2, Feed::Reader, opts),
        (2, Feed::Trickle, opts),
        (3, Feed::Reader, opts),
        (2, Feed::Slice, opts),
        (3, Feed::Slice, opts),
        (2, Feed::Reader, &off),
        (3, Feed::Slice, &off),
    ] {
        let (pbytes, many) = parallel(inputs, opts, threads, feed);
        let feed = format!("{feed:?}, {:?}", opts.caches);
        assert!(
            pbytes == bytes,
            "{name}, {threads} threads, {feed}: output differs"
        );
        assert_eq!(
            many.metrics(),
            one.metrics(),
            "{name}, {threads} threads, {feed}: metrics"
        );
        assert_eq!(
            many.diagnostics().counts(),
            one.diagnostics().counts(),
            "{name}, {threads} threads, {feed}: diagnostic counts"
        );
        assert_eq!(
            many.diagnostics().kept(),
            one.diagnostics().kept(),
            "{name}, {threads} threads, {feed}: diagnostics kept"
        );
        // The reading thread notes each change of configuration; the
        // decisions joined before it are the workers'.
        assert_eq!(
            many.config_history(),
            one.config_history(),
            "{name}, {threads} threads, {feed}: configuration changes"
        );
    }
}

#[test]
fn every_corpus_log_gives_the_serial_metrics_and_diagnostics() {
    let logs = fb_tests::all_logs();
    assert!(logs.len() > 40, "{} logs", logs.len());
    for (name, bytes) in &logs {
        assert_same(name, &[bytes], &Options::default());
    }
    // One joiner over many inputs: metrics and diagnostics carry over.
    let all: Vec<&[u8]> = logs.iter().map(|(_, b)| b.as_slice()).collect();
    assert_same("the whole corpus as one stream", &all, &Options::default());
}

/// Two generated logs of other reward functions as one: the second's
/// checkpoints change the configuration halfway through many batches.
fn log_whose_configuration_changes() -> Vec<u8> {
    use fb_format::MessageKind;
    let part = |reward_function, seed| {
        let config = GenConfig {
            problem: fb_writer::synth::Problem::Cb,
            limit: fb_writer::synth::Limit::Events(5_000),
            reward_function,
            checkpoint_every: 400,
            seed,
            ..GenConfig::default()
        };
        let mut bytes = Vec::new();
        fb_writer::synth::generate(&config, &mut bytes).unwrap();
        bytes
    };
    let first = part(fb_schema::RewardFunctionType::Earliest, 1);
    let second = part(fb_schema::RewardFunctionType::Sum, 2);
    let mut out = Vec::new();
    // The first without its end, the second without its file header.
    for (bytes, skip) in [
        (&first, &[MessageKind::Eof][..]),
        (&second, &[MessageKind::FileMagic, MessageKind::Header][..]),
    ] {
        for msg in fb_format::SliceReader::new(bytes) {
            let msg = msg.unwrap();
            if !skip.contains(&msg.kind) {
                let at = msg.offset as usize;
                out.extend_from_slice(&bytes[at..at + msg.len]);
            }
        }
    }
    out
}

#[test]
fn a_configuration_changing_halfway_is_placed_as_on_one_thread() {
    let bytes = log_whose_configuration_changes();
    let (_, one) = serial(&[&bytes], &Options::default());
    let changes = &one.config_history().changes;
    assert!(changes.len() >= 2, "{} changes", changes.len());
    assert!(
        changes.iter().any(|c| c.decisions_before > 1000),
        "a change halfway: {changes:?}"
    );
    assert_same(
        "a log whose configuration changes",
        &[&bytes],
        &Options::default(),
    );
}

#[test]
fn many_batches_give_the_serial_metrics_and_diagnostics() {
    // Megabytes: several batches, with checkpoints, zstd and dedup.
    let bytes = common::multi_batch_log();
    let opts = Options::default().inline_dedup(true);
    assert_same("generated CCB", &[&bytes, &bytes], &opts);
}

/// Counts the bytes the conversion has taken from its input.
struct Counted<'a> {
    rest: &'a [u8],
    taken: &'a std::sync::atomic::AtomicUsize,
}

impl std::io::Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.taken
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// An output whose first write waits until the input stops being read.
struct Stalled<'a> {
    taken: &'a std::sync::atomic::AtomicUsize,
    taken_at_first_write: Option<usize>,
    bytes: Vec<u8>,
}

impl std::io::Write for Stalled<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.taken_at_first_write.is_none() {
            // Quiet for 300 ms (or 30 s in all): the reader is stuck, or
            // done with the input.
            let load = || self.taken.load(std::sync::atomic::Ordering::Relaxed);
            let mut last = load();
            for _ in 0..100 {
                std::thread::sleep(std::time::Duration::from_millis(300));
                let now = load();
                if now == last {
                    break;
                }
                last = now;
            }
            self.taken_at_first_write = Some(last);
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_stalled_output_stops_the_reading_instead_of_filling_memory() {
    let config = GenConfig {
        problem: Problem::Cb,
        limit: Limit::Bytes(24 << 20),
        seed: 5,
        ..GenConfig::default()
    };
    let mut log = Vec::new();
    generate(&config, &mut log).unwrap();
    let taken = std::sync::atomic::AtomicUsize::new(0);
    let input = Counted {
        rest: &log,
        taken: &taken,
    };
    let mut out = Stalled {
        taken: &taken,
        taken_at_first_write: None,
        bytes: Vec::new(),
    };
    convert_parallel(
        &mut Joiner::new(Options::default()),
        Source::Stream(Box::new(input)),
        &mut out,
        2,
        |_| true,
        |_| {},
    )
    .unwrap();
    let stalled_at = out.taken_at_first_write.unwrap();
    // Batches of about a MiB, a few per thread in flight, and the reader's
    // own buffer: far below the log's 24 MiB.
    assert!(
        stalled_at < 12 << 20,
        "the reader took {stalled_at} of {} bytes while the output was stalled",
        log.len()
    );
    // And then everything came through.
    assert_eq!(taken.load(std::sync::atomic::Ordering::Relaxed), log.len());
    let (serial, _) = serial(&[&log], &Options::default());
    assert!(out.bytes == serial, "output differs from the serial one");
}

/// Converts a 24 MiB log on two threads into `out`, reading it as a
/// stream, until it ends or fails: the result, the bytes read, and the
/// log's length.
fn convert_until_failure(
    out: &mut impl std::io::Write,
    keep: impl Fn(&fb_join::JoinedEvent) -> bool + Sync,
) -> (Result<Summary, fb_join::Error>, usize, usize) {
    let mut log = Vec::new();
    generate(
        &GenConfig {
            limit: Limit::Bytes(24 << 20),
            ..GenConfig::default()
        },
        &mut log,
    )
    .unwrap();
    let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    struct Reader<'a>(&'a [u8], std::sync::Arc<std::sync::atomic::AtomicUsize>);
    impl std::io::Read for Reader<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = std::io::Read::read(&mut self.0, buf)?;
            self.1.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            Ok(n)
        }
    }
    let mut joiner = Joiner::new(Options::default());
    let result = convert_parallel(
        &mut joiner,
        Source::Stream(Box::new(Reader(&log, read.clone()))),
        out,
        2,
        keep,
        |_| {},
    );
    let read = read.load(std::sync::atomic::Ordering::Relaxed);
    (result, read, log.len())
}

/// A write error stops the reading promptly: the reader does not convert
/// the rest of the input for an output that is gone.
#[test]
fn a_failed_write_stops_the_reader() {
    let mut out = fb_tests::FullAfter { room: 1000 };
    let (result, read, len) = convert_until_failure(&mut out, |_| true);
    match result {
        Err(fb_join::Error::Write { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::StorageFull)
        }
        other => panic!("the write error is lost: {other:?}"),
    }
    assert!(
        read < len / 2,
        "read {read} of {len} bytes after the output failed"
    );
}

/// A worker that panics (here the filter, on the first event it sees)
/// ends the run with an error that says so, instead of a wait for its
/// batch, and the reader stops as for a failed output.
#[test]
fn a_worker_panic_is_an_error_and_stops_the_reader() {
    let mut out = Vec::new();
    let (result, read, len) = convert_until_failure(&mut out, |_| panic!("a filter that fails"));
    match result {
        Err(fb_join::Error::Worker { message, .. }) => {
            assert!(message.contains("a filter that fails"), "{message}")
        }
        other => panic!("the worker's panic is lost: {other:?}"),
    }
    assert!(out.is_empty(), "{} bytes written", out.len());
    assert!(
        read < len / 2,
        "read {read} of {len} bytes after a worker panicked"
    );
}

/// A pipeline fed a log section by section (slices that start inside the
/// log, and a stream for its end) gives the whole conversion's bytes,
/// metrics and diagnostics, with the log's own offsets; a `stop` says
/// where to go on from.
#[test]
fn sections_and_a_rest_read_as_a_stream_equal_the_whole() {
    use fb_join::{dsjson::LinesSink, Pipeline, Source};
    let mut log = Vec::new();
    generate(
        &GenConfig {
            problem: fb_join::Problem::Ccb,
            limit: Limit::Events(300),
            events_per_message: 3,
            checkpoint_every: 7,
            ..GenConfig::default()
        },
        &mut log,
    )
    .unwrap();
    let corpus = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/valid_joined_logs/ccb_sum_reward_100_interactions.fb"
    ))
    .unwrap();
    for (name, log, cut_at) in [
        ("generated", &log, [5, 40, 77]),
        ("corpus", &corpus, [1, 2, 3]),
    ] {
        let (whole, one) = serial(&[log], &Options::default());
        let starts: Vec<fb_format::Position> = fb_format::SliceReader::new(log)
            .flatten()
            .map(|m| fb_format::Position::new(m.offset, m.index))
            .collect();
        for (threads, caches) in [(1, Caches::On), (2, Caches::On), (1, Caches::Off)] {
            let opts = Options::default().caches(caches);
            let sink = LinesSink::new(Vec::new(), opts.compat);
            let mut pipeline = Pipeline::new(opts, |_: &_| true, sink, threads);
            let mut from = fb_format::Position::START;
            let mut last = Progress::default();
            for k in cut_at {
                let cut = starts[k];
                let section = &log[from.offset as usize..cut.offset as usize];
                let fed = pipeline
                    .feed(Source::Slice(section), from, &|| false, &mut |at| last = at)
                    .unwrap();
                assert_eq!(fed.offset, cut.offset, "{name}");
                // Progress is in the log's offsets.
                assert_eq!(last.finished, cut.offset, "{name}");
                from = cut;
            }
            // Asked to stop at once, the feed says where it was.
            let fed = pipeline
                .feed(
                    Source::Slice(&log[from.offset as usize..]),
                    from,
                    &|| true,
                    &mut |_| {},
                )
                .unwrap();
            assert_eq!(fed.stopped_at, Some(from), "{name}");
            let rest: Box<dyn std::io::Read + Send> = Box::new(&log[from.offset as usize..]);
            let fed = pipeline
                .feed(Source::Stream(rest), from, &|| false, &mut |at| last = at)
                .unwrap();
            assert_eq!(fed.offset, log.len() as u64);
            assert_eq!(last.finished, log.len() as u64, "{name}");
            let (joiner, sink) = pipeline.finish();
            assert_eq!(
                sink.into_inner(),
                whole,
                "{name}, {threads} threads, {caches:?}"
            );
            assert_eq!(joiner.metrics(), one.metrics(), "{name}");
            assert_eq!(
                joiner.diagnostics().kept(),
                one.diagnostics().kept(),
                "{name}"
            );
        }
    }
}

/// Reads of uneven sizes that note, for each read, whether its
/// destination's address agrees with its stream position modulo 64.
struct Placed<'a> {
    log: &'a [u8],
    at: usize,
    sizes: std::iter::Cycle<std::slice::Iter<'a, usize>>,
    reads: usize,
    misplaced: Vec<(usize, usize)>,
}

impl std::io::Read for &mut Placed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf
            .len()
            .min(*self.sizes.next().unwrap())
            .min(self.log.len() - self.at);
        if n > 0 {
            self.reads += 1;
            let address = buf.as_ptr() as usize % 64;
            if address != self.at % 64 {
                self.misplaced.push((self.at, address));
            }
        }
        buf[..n].copy_from_slice(&self.log[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The kernel copies a read several times slower when its destination is
/// a few bytes past its source modulo the page size: every read of a
/// stream lands where its address and position agree modulo 64, whatever
/// the sizes the stream gives (cut batches, messages across reads, a
/// buffer grown for a large message), and the output is the serial one.
#[test]
fn reads_land_where_address_and_position_agree() {
    let mut log = Vec::new();
    generate(
        &GenConfig {
            problem: Problem::Ccb,
            limit: Limit::Bytes(6 << 20),
            ..GenConfig::default()
        },
        &mut log,
    )
    .unwrap();
    let (expected, _) = serial(&[&log], &Options::default());
    // (case, the sizes of the stream's reads in turn)
    let cases: [(&str, &[usize]); 3] = [
        ("as much as asked", &[usize::MAX]),
        ("uneven", &[1, 7000, 65_536, 3, 100_001, 4096, 17]),
        ("small", &[999, 1001]),
    ];
    for (case, sizes) in cases {
        let mut placed = Placed {
            log: &log,
            at: 0,
            sizes: sizes.iter().cycle(),
            reads: 0,
            misplaced: Vec::new(),
        };
        let mut joiner = Joiner::new(Options::default());
        let mut out = Vec::new();
        convert_parallel(
            &mut joiner,
            Source::Stream(Box::new(&mut placed)),
            &mut out,
            2,
            |_| true,
            |_| {},
        )
        .unwrap();
        assert!(out == expected, "{case}: not the serial output");
        assert!(placed.reads > 50, "{case}: {} reads", placed.reads);
        assert!(
            placed.misplaced.is_empty(),
            "{case}: {} of {} reads misplaced (position, address mod 64): {:?}",
            placed.misplaced.len(),
            placed.reads,
            &placed.misplaced[..placed.misplaced.len().min(5)]
        );
    }
}
