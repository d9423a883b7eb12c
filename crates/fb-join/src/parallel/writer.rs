//! The writer's side of a parallel run: the workers' jobs taken in log
//! order, their batches handed to the sink, and what they report merged
//! in that order.

use std::sync::atomic::Ordering;

use super::{Coordination, Item, Mark, Part, Pools, Report};
use crate::diag::Diagnostics;
use crate::joiner::Joiner;
use crate::metrics::Metrics;
use crate::ordered::Results;
use crate::sink::Sink;
use crate::Error;

/// The writer's side: hands the workers' batches to the sink in log
/// order, and merges what they report in that order, so that memory does
/// not grow with the number of batches and the figures add up as a serial
/// run adds them.
pub(super) struct Ordered {
    pub(super) kept: u64,
    pub(super) filtered: u64,
    pub(super) events: u64,
    /// The first error of the sink: nothing is taken after it.
    pub(super) failure: Option<Error>,
    pub(super) diags: Diagnostics,
    metrics: Metrics,
    /// Where each input of a session starts among the kept diagnostics.
    pub(super) starts: Vec<usize>,
    /// The end of the last batch written of the current input.
    pub(super) finished: u64,
    /// Events of the current input the sink took ([`Sink::input_done`]
    /// is told of an input that has some).
    input_kept: u64,
    /// Configuration changes the reading thread noted ([`Mark::Config`]),
    /// each with the decisions joined before it and the last one's time.
    config_marks: Vec<(usize, u64, Option<fb_schema::TimeStamp>)>,
}

impl Ordered {
    pub(super) fn new(diags: Diagnostics, metrics: Metrics) -> Self {
        Self {
            kept: 0,
            filtered: 0,
            events: 0,
            failure: None,
            diags,
            metrics,
            starts: Vec::new(),
            finished: 0,
            input_kept: 0,
            config_marks: Vec::new(),
        }
    }

    /// Tells `sink` that every batch of the current input is taken, if it
    /// took an event of it and has not failed; an error of the sink's is
    /// then the run's failure, as one of [`Sink::take`].
    pub(super) fn input_done<S: Sink>(&mut self, sink: &mut S, flow: &Coordination) {
        if std::mem::take(&mut self.input_kept) == 0 || self.failure.is_some() {
            return;
        }
        if let Err(err) = sink.input_done() {
            self.failure = Some(err);
            flow.aborted.store(true, Ordering::Relaxed);
        }
    }

    /// Gives the reading thread's joiner what its workers reported, in
    /// order: diagnostics, metrics, and the decisions before each change
    /// of configuration.
    pub(super) fn hand_back(self, joiner: &mut Joiner) {
        joiner.absorb_in_order(&self.diags, self.metrics);
        joiner.place_config_changes(&self.config_marks);
    }

    /// The next item from `results`, in order; `None` at the end, or
    /// once a worker stopped (panicked): that is then the run's failure,
    /// and the reader stops as for a failed output.
    pub(super) fn next<B>(
        &mut self,
        results: &mut Results<'_, Item<B>>,
        flow: &Coordination,
    ) -> Option<Item<B>> {
        match results.next() {
            Ok(item) => item,
            Err(err) => {
                self.failure.get_or_insert(err);
                flow.aborted.store(true, Ordering::Relaxed);
                flow.give_credit();
                None
            }
        }
    }

    /// Takes `item`, the next in order: a job's batch to `sink` (the
    /// job's credit given back, and `written(end, events)` told after
    /// each of its runs), a mark recorded.
    pub(super) fn put<S: Sink>(
        &mut self,
        item: Item<S::Batch>,
        sink: &mut S,
        pools: &Pools<S::Batch>,
        flow: &Coordination,
        written: &mut dyn FnMut(u64, u64),
    ) {
        let mut done = match item {
            Item::Done(done) => done,
            Item::Mark(mark) => return self.mark(mark, sink, flow),
        };
        if self.failure.is_none() {
            if let Err(err) = sink.take(&mut done.lines) {
                self.failure = Some(err);
                // Nothing more can be taken: the reader stops taking
                // input instead of converting the rest for nothing.
                flow.aborted.store(true, Ordering::Relaxed);
            }
        }
        flow.give_credit();
        for part in done.parts {
            match part {
                Part::Run(report) => self.add(&report, written),
                Part::Mark(mark) => self.mark(mark, sink, flow),
            }
        }
        Pools::<S::Batch>::give(&pools.lines, done.lines, super::SPARE_LINES);
    }

    /// Adds what a worker reported of a run.
    fn add(&mut self, run: &Report, written: &mut dyn FnMut(u64, u64)) {
        self.events += run.events;
        self.kept += run.written;
        self.input_kept += run.written;
        self.filtered += run.filtered;
        self.finished = run.end;
        written(run.end, self.events);
        self.diags.merge(&run.diags);
        self.metrics.merge(&run.metrics);
    }

    /// Records a mark of the reading thread's.
    fn mark<S: Sink>(&mut self, mark: Mark, sink: &mut S, flow: &Coordination) {
        match mark {
            Mark::Input => {
                // Every run of the input before came ahead of its mark.
                self.input_done(sink, flow);
                self.starts.push(self.diags.kept().len());
                self.finished = 0;
            }
            Mark::Diags(diags) => self.diags.merge(&diags),
            Mark::Control(msg) => {
                if self.failure.is_none() {
                    if let Err(err) = sink.control(&msg.message()) {
                        self.failure = Some(err);
                        flow.aborted.store(true, Ordering::Relaxed);
                    }
                }
                // The credit the reading thread took for the copy.
                flow.give_credit();
            }
            Mark::Config(index) => {
                let last = self.metrics.last.as_ref().map(|(_, t)| *t);
                self.config_marks.push((index, self.metrics.joined, last));
            }
        }
    }
}
