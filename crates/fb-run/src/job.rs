//! A command's run from inputs to its result, the same for every face:
//! what `fb stats`, `fb evaluate` and `fb report` and their `vwlogs`
//! twins share. A face converts its arguments into a [`Job`], picks an
//! [`Observer`](crate::report::Observer), calls the command's `run`
//! ([`crate::stats::run`], [`crate::evaluate::run`],
//! [`crate::health::run`]) and turns the [`Outcome`] into printing, an
//! exit code or an exception.

use fb_join::{Joiner, Pipeline};

use crate::drive::{Drive, Readable, Stop};
use crate::options::Filter;
use crate::report::{Observer, RunReport};

/// What to run over: the inputs as one log, how to join, which events to
/// keep, and how to feed them.
pub struct Job<'a, R> {
    /// The inputs, in order (files, standard input, what a face opens).
    pub inputs: &'a [R],
    /// How to join (its `only` is the filter's).
    pub join: fb_join::Options,
    /// Which joined events to keep.
    pub filter: &'a Filter,
    /// Recovery, time window, maps, damage policy, cancellation.
    pub drive: Drive<'a>,
}

/// What the run saw besides its sink's sums.
pub struct Finished<'a> {
    /// Inputs given (files, folders' logs, streams).
    pub inputs: usize,
    /// What the driver reported.
    pub run: &'a RunReport,
    /// The joiner after the run: configuration history, diagnostics.
    pub joiner: &'a Joiner,
    /// Events the filters left out.
    pub filtered: u64,
}

/// A command's result, what the driver reported and why the run stopped
/// early, if it did. The result is made from what was joined before a
/// stop too: a face that reports the stop drops it.
pub struct Outcome<T> {
    /// The command's result.
    pub value: T,
    /// Inputs, messages, damage: what the driver reported.
    pub run: RunReport,
    /// Why the run ended before the end of its inputs.
    pub stop: Option<Stop>,
}

/// Runs `job` into `sink` on `threads` threads (one with `--recover`,
/// which resynchronizes on one), then makes the result of the finished
/// pipeline with `finish`. The sink takes its batches in log order; a
/// result that must not depend on the thread count must not depend on
/// where batches end either (as `fb stats`' tally adds its sums per
/// event).
pub(crate) fn on_threads<R, S, T>(
    job: Job<'_, R>,
    sink: S,
    threads: usize,
    observer: &mut dyn Observer,
    finish: impl FnOnce(&Finished<'_>, S) -> T,
) -> Outcome<T>
where
    R: Readable,
    S: fb_join::Sink + Send,
{
    let threads = match job.drive.recover {
        true => 1,
        false => threads.max(1),
    };
    let mut join = job.join;
    join.only = job.filter.only.clone();
    let keep = crate::drive::keeper(job.filter);
    let mut pipeline = Pipeline::new(join, keep, sink, threads);
    let mut run = RunReport::default();
    let stop =
        crate::drive::feed_all(job.inputs, &mut pipeline, &job.drive, &mut run, observer).err();
    let filtered = pipeline.filtered();
    let (joiner, sink) = pipeline.finish();
    let finished = Finished {
        inputs: job.inputs.len(),
        run: &run,
        joiner: &joiner,
        filtered,
    };
    let value = finish(&finished, sink);
    Outcome { value, run, stop }
}
