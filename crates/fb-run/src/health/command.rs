//! `fb report` and `vwlogs.report` end to end: the page of `job`'s
//! inputs, with `fb stats`' figures to the last digit (its sums added in
//! the same order, for any number of threads), and `fb evaluate`'s
//! estimates of target policies when asked.

use serde_json::Value;

use super::page::render;
use super::policies::PageSink;
use crate::drive::Readable;
use crate::error::Error;
use crate::evaluate::Spec;
use crate::job::{on_threads, Job, Outcome};
use crate::report::Observer;

/// What the page shows besides the log.
#[derive(Debug, Clone, Default)]
pub struct PageOptions {
    /// The loop's join window (microseconds), marked on the outcome
    /// delays: the log does not record it.
    pub join_window: Option<i64>,
    /// Target policies estimated as `fb evaluate --policy` does (their
    /// records taken, and prediction files read along, in log order).
    pub policies: Vec<Spec>,
    /// Joining threads.
    pub threads: usize,
}

/// The page, the stats report it shows, and what went wrong with the
/// policies' evaluation, in the order a face reports them (as
/// [`crate::evaluate::command::Evaluated`]).
pub struct Page {
    /// The whole HTML page.
    pub html: String,
    /// Its `fb stats --json` report.
    pub stats: Value,
    /// What stopped the evaluation (a prediction file that does not
    /// match the log): reported before the run's stop.
    pub failure: Option<Error>,
    /// Whether every prediction file was read to its end: reported after
    /// the run's stop.
    pub finished: Result<(), Error>,
}

/// Builds the page of `job`'s inputs in one pass. Fails only when a
/// policy cannot be set up (a prediction file that cannot be opened).
pub fn run<R: Readable>(
    job: Job<'_, R>,
    options: &PageOptions,
    observer: &mut dyn Observer,
) -> Result<Outcome<Page>, Error> {
    let sink = PageSink::new(options.join_window, &options.policies)?;
    let outcome = on_threads(job, sink, options.threads, observer, |done, sink| {
        let failure = sink.failure();
        let gathered = sink.finish()?;
        let (html, stats) = render(done, gathered.health, gathered.evaluation);
        Ok::<_, Error>(Page {
            html,
            stats,
            failure,
            finished: gathered.finished,
        })
    });
    Ok(Outcome {
        value: outcome.value?,
        run: outcome.run,
        stop: outcome.stop,
    })
}
