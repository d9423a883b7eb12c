//! `fb evaluate` and `vwlogs.evaluate` end to end: the evaluation of
//! `job`'s inputs, on one thread (prediction files are read in log order,
//! and the sums add up in log order, as vw-estimators adds them).

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
/// inputs. Fails only when a policy cannot be set up (a
/// prediction file that cannot be opened).
pub fn run<R: Readable>(
    job: Job<'_, R>,
    specs: &[Spec],
    by: Option<By>,
    cats: Option<Cats>,
    observer: &mut dyn Observer,
) -> Result<Outcome<Evaluated>, Error> {
    let evaluation = Evaluation::new(specs, by)?.with_cats(cats);
    let failure = evaluation.failure();
    // One thread: prediction files are read along, in log order.
    Ok(on_threads(
        job,
        evaluation,
        1,
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
