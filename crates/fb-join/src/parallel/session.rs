//! A parallel session: the workers and the writer started once for many
//! inputs. The caller's thread frames each input in turn (opening a file
//! is its business) and follows the ordered state; the workers join the
//! batches of the inputs before while it reads the next one; the writer
//! hands them to the sink in log order on a thread of its own.
//!
//! Marks in the ordered stream say where each input starts, so that the
//! writer knows which diagnostics are whose; what the framing thread's
//! joiner reports goes into the stream where it happened, so that
//! diagnostics come in log order, as on one thread.

use std::sync::atomic::Ordering;

use fb_format::{Framer, Position};

use super::{
    flow_for, frame, joins_runs, start_workers, AbortOnPanic, Batcher, Coordination, Mark, Ordered,
    Written,
};
use crate::event::JoinedEvent;
use crate::feed::{FeedReport, Feeds, MessageCounts, Progress, Source};
use crate::joiner::Joiner;
use crate::sink::Sink;
use crate::Error;

/// What a session ended with: the caller's value (or why the workers
/// could not start, or the output failed), the events kept and filtered,
/// and where each input's diagnostics start among the kept ones.
pub(crate) struct Ended<R> {
    pub(crate) result: Result<R, Error>,
    pub(crate) kept: u64,
    pub(crate) filtered: u64,
    pub(crate) starts: Vec<usize>,
}

/// The caller's side of a session: frames inputs into batches.
struct Framing<'j, 'm, 'p, B> {
    batcher: Batcher<'j, 'm, 'p, B>,
    flow: &'p Coordination,
    /// Inputs begun ([`Feeds::begin_input`]).
    inputs: u64,
}

impl<B> Framing<'_, '_, '_, B> {
    /// What the writer has done so far.
    fn written(&self) -> Written {
        self.flow.written.lock().map(|w| *w).unwrap_or_default()
    }

    /// The output failed or a worker stopped: the session's end says why.
    fn failed(&self) -> Option<Error> {
        self.flow
            .aborted
            .load(Ordering::Relaxed)
            .then(|| Error::Write {
                written: 0,
                source: std::io::Error::other("the output failed or a worker stopped"),
            })
    }
}

impl<'m, B> Feeds<'m> for Framing<'_, 'm, '_, B> {
    fn joiner(&self) -> &Joiner {
        self.batcher.joiner
    }

    fn begin_input(&mut self) -> Result<(), Error> {
        self.inputs += 1;
        match self.batcher.mark(Mark::Input) {
            true => Ok(()),
            false => Err(self.failed().unwrap_or(Error::Write {
                written: 0,
                source: std::io::Error::other("the writer stopped"),
            })),
        }
    }

    fn feed(
        &mut self,
        source: Source<'m>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, Error> {
        if matches!(source, Source::Recover(_)) {
            return Err(Error::RecoverInSession);
        }
        let options = self.batcher.joiner.options();
        let limit = u32::try_from(options.max_payload).unwrap_or(u32::MAX);
        let caches = options.caches;
        let framer = Framer::with_max_payload(limit).starting_at(start);
        let (input, before) = (self.inputs, self.written().events);
        let b = &mut self.batcher;
        (b.messages, b.kinds, b.stopped) = (0, MessageCounts::default(), false);
        let flow = self.flow;
        let mut tell = |read: u64| {
            let w = flow.written.lock().map(|w| *w).unwrap_or_default();
            progress(Progress {
                read,
                finished: if w.inputs == input { w.finished } else { 0 },
                events: w.events.saturating_sub(before),
            });
        };
        // Told as batches go out, not for every message: what the writer
        // did is behind a lock.
        let mut sent = b.feed.sent();
        let mut tick = |seq: u64| {
            if seq != sent {
                sent = seq;
                tell(flow.read_pos.load(Ordering::Relaxed));
            }
        };
        let (framing_error, at) = frame(b, source, framer, caches, stop, &mut tick);
        b.send(at.offset);
        // The framing error's diagnostic, after the input's last batch.
        b.hand_diags();
        tell(at.offset);
        if let Some(failed) = self.failed() {
            return Err(failed);
        }
        let b = &self.batcher;
        Ok(FeedReport {
            messages: b.messages,
            kinds: b.kinds,
            offset: at.offset,
            framing_error,
            stopped_at: b.stopped.then_some(at),
            skipped: Vec::new(),
            salvaged: Vec::new(),
        })
    }
}

/// Runs `f` with a session of `threads` workers and a writer over `sink`,
/// around `joiner` (which carries the state in and out, as for one feed).
pub(crate) fn run<'m, S, K, R>(
    joiner: &mut Joiner,
    sink: &mut S,
    threads: usize,
    keep: &K,
    f: impl FnOnce(&mut dyn Feeds<'m>) -> R,
) -> Ended<R>
where
    S: Sink + Send,
    K: Fn(&JoinedEvent) -> bool + Sync,
{
    let threads = threads.max(1);
    let opts = joiner.options().clone();
    let join_runs = joins_runs(&*sink, joiner.options().caches);
    let sink_sees = sink.sees_messages();
    let (flow, credits, pools) = flow_for(&*sink, threads);
    let (flow, pools) = (&flow, &pools);
    // The writer merges everything in log order from the joiner's own
    // figures on; the framing joiner hands over what it reports as it goes.
    let (diags, metrics) = joiner.take_report();
    let mut ordered = Ordered::new(diags, metrics);
    let (value, ordered) = std::thread::scope(|scope| {
        let (feed, mut results) =
            match start_workers(scope, &*sink, threads, &opts, (keep, flow, pools)) {
                Ok(workers) => workers,
                Err(e) => {
                    ordered.failure = Some(e);
                    return (None, ordered);
                }
            };
        let writer = scope.spawn(move || {
            let _abort = AbortOnPanic(flow);
            while let Some(item) = ordered.next(&mut results, flow) {
                ordered.put(item, sink, pools, flow, &mut |_, _| {});
                if let Ok(mut w) = flow.written.lock() {
                    *w = Written {
                        inputs: ordered.starts.len() as u64,
                        finished: ordered.finished,
                        events: ordered.events,
                    };
                }
            }
            // The last input's batches are all taken.
            ordered.input_done(sink, flow);
            ordered
        });
        let value = {
            let batcher = Batcher::new(
                joiner,
                feed,
                credits,
                (flow, pools),
                true,
                (join_runs, sink_sees),
            );
            let mut framing = Framing {
                batcher,
                flow,
                inputs: 0,
            };
            let value = f(&mut framing);
            // The last job gathered; a failure is the writer's to say.
            framing.batcher.submit();
            value
            // The batcher goes here, and its feed with it: the workers see
            // the end of the work, then the writer does.
        };
        match writer.join() {
            Ok(ordered) => (Some(value), ordered),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    let mut ordered = ordered;
    // What the framing joiner reported and did not hand over (nothing,
    // unless the writer was gone) goes after the rest.
    let (left, _) = joiner.take_report();
    ordered.diags.merge(&left);
    let (failure, kept, filtered) = (ordered.failure.take(), ordered.kept, ordered.filtered);
    let starts = std::mem::take(&mut ordered.starts);
    ordered.hand_back(joiner);
    let result = match (failure, value) {
        (Some(e), _) => Err(e),
        (None, Some(value)) => Ok(value),
        (None, None) => Err(Error::Write {
            written: 0,
            source: std::io::Error::other("the session did not start"),
        }),
    };
    Ended {
        result,
        kept,
        filtered,
        starts,
    }
}
