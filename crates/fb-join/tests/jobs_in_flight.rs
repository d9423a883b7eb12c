//! `Sink::jobs_in_flight`: a sink's cap on the jobs in flight holds on any
//! number of threads, input by input or in a session, and costs no
//! events. Jobs are seen where workers build them: a worker that waits a
//! moment inside `Maker::add` keeps its job in flight, so without a cap
//! several are seen at once, and with one never more than it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fb_join::{JoinedEvent, Maker, Options, Pipeline, Sink};

mod common;

use common::Way;

/// Workers inside `Maker::add` right now, and the most seen at once.
#[derive(Default)]
struct Busy {
    now: AtomicUsize,
    most: AtomicUsize,
}

struct Counting {
    cap: Option<usize>,
    busy: Arc<Busy>,
    events: u64,
}

struct Adder {
    busy: Arc<Busy>,
    added: Arc<AtomicU64>,
}

impl Maker for Adder {
    type Batch = u64;

    fn batch(&mut self) -> u64 {
        0
    }

    fn add(&mut self, batch: &mut u64, _: &JoinedEvent<'_>) {
        let now = self.busy.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.busy.most.fetch_max(now, Ordering::SeqCst);
        // Long enough for the other workers' jobs to start meanwhile, if
        // credits let them.
        if self
            .added
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(64)
        {
            std::thread::sleep(Duration::from_micros(300));
        }
        self.busy.now.fetch_sub(1, Ordering::SeqCst);
        *batch += 1;
    }

    fn full(&self, batch: &u64) -> bool {
        *batch >= 100
    }

    fn clear(&mut self, batch: &mut u64) {
        *batch = 0;
    }
}

impl Sink for Counting {
    type Batch = u64;
    type Maker = Adder;

    fn maker(&self) -> Adder {
        Adder {
            busy: self.busy.clone(),
            added: Arc::new(AtomicU64::new(0)),
        }
    }

    fn jobs_in_flight(&self) -> Option<usize> {
        self.cap
    }

    fn take(&mut self, batch: &mut u64) -> Result<(), fb_join::Error> {
        self.events += *batch;
        Ok(())
    }
}

/// Events joined and the most workers seen building at once.
fn run(cap: Option<usize>, inputs: &[Vec<u8>], threads: usize, way: Way) -> (u64, usize) {
    let busy = Arc::new(Busy::default());
    let sink = Counting {
        cap,
        busy: busy.clone(),
        events: 0,
    };
    let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, threads);
    common::feed_all(&mut pipeline, inputs, way);
    let events = pipeline.finish().1.events;
    (events, busy.most.load(Ordering::SeqCst))
}

#[test]
fn a_sinks_cap_bounds_the_jobs_in_flight() {
    // Checkpoints every 7 messages: hundreds of short runs, each a job.
    let inputs = vec![common::multi_batch_log(), common::multi_batch_log()];
    let (events, _) = run(None, &inputs, 1, Way::SliceFeeds);
    assert!(events > 10_000, "{events} events");
    for (name, cap, threads, way) in [
        ("cap 1, six threads, slices", Some(1), 6, Way::SliceFeeds),
        ("cap 2, six threads, streams", Some(2), 6, Way::StreamFeeds),
        (
            "cap 2, eight threads, session",
            Some(2),
            8,
            Way::SessionSlice,
        ),
        (
            "cap 3, four threads, session",
            Some(3),
            4,
            Way::SessionStream,
        ),
        ("cap above three a thread", Some(100), 2, Way::SliceFeeds),
        ("cap 0 is taken as 1", Some(0), 4, Way::SliceFeeds),
    ] {
        let (got, most) = run(cap, &inputs, threads, way);
        assert_eq!(got, events, "{name}: events");
        let bound = cap.unwrap_or(usize::MAX).clamp(1, threads);
        assert!(most <= bound, "{name}: {most} jobs at once, cap {cap:?}");
    }
    // Without a cap the same runs have several jobs at once: the count
    // above sees them.
    let (got, most) = run(None, &inputs, 6, Way::SliceFeeds);
    assert_eq!(got, events);
    assert!(most > 2, "only {most} jobs at once without a cap");
}
