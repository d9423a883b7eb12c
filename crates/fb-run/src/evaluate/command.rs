//! `fb evaluate` and `vwlogs.evaluate` end to end: the evaluation of
//! `job`'s inputs, joined on any number of threads. The sink takes the
//! records in log order, on one thread: prediction files are read along
//! in that order, and the sums add up in it, as vw-estimators adds them,
//! so the report is the same bytes for any number of threads.

use super::{By, Cats, Evaluation, Spec};
use crate::drive::Readable;
use crate::error::Error;
use crate::job::{on_threads, Job, Outcome};
use crate::report::Observer;

/// A finished evaluation and what went wrong in it, in the order a face
/// reports them: `failure` before the run's stop, `finished` after it
/// (and after "no input is a log").
pub struct Evaluated {
    /// The tallies; [`super::report::report_json`] makes the report.
    pub evaluation: Evaluation,
    /// What stopped the evaluation itself (a prediction file that does
    /// not match the log).
    pub failure: Option<Error>,
    /// Whether every prediction file was read to its end.
    pub finished: Result<(), Error>,
}

/// Evaluates the logged policy and `specs` (with windows when `by` says,
/// and CA decisions when `cats` gives the CATS parameters) over `job`'s
/// inputs, joined on `threads` threads (one with `--recover`). Fails only
/// when a policy cannot be set up (a prediction file that cannot be
/// opened).
pub fn run<R: Readable>(
    job: Job<'_, R>,
    specs: &[Spec],
    by: Option<By>,
    cats: Option<Cats>,
    threads: usize,
    observer: &mut dyn Observer,
) -> Result<Outcome<Evaluated>, Error> {
    let evaluation = Evaluation::new(specs, by)?.with_cats(cats);
    let failure = evaluation.failure();
    Ok(on_threads(
        job,
        evaluation,
        threads,
        observer,
        |_, mut evaluation| {
            let failure = failure.lock().ok().and_then(|mut f| f.take());
            let finished = evaluation.finish();
            Evaluated {
                evaluation,
                failure,
                finished,
            }
        },
    ))
}
