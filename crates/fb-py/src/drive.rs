//! Sources fed through the one driver (`fb_run::drive`), as `fb` feeds
//! files, but quiet, streaming (no memory map, no signal handlers in the
//! host's process), stopping when cancelled (`interrupt.rs`), and with
//! damage as a typed stop.

use std::io::Read;

use fb_join::{JoinedEvent, Pipeline};
use fb_run::drive::{Drive, Maps, OnDamage, Readable, Stop as DriveStop};
use fb_run::job::{Job, Outcome};
use fb_run::report::{RunReport, Silent};

use crate::interrupt::{Cancel, Cancellable};
use crate::source::Src;

/// Where and why an input is damaged.
#[derive(Debug, Clone)]
pub struct Damage {
    /// The input's name (its path for files).
    pub path: String,
    /// Byte offset of the damage in that input.
    pub offset: u64,
    /// Index of the message there, when a message was being read.
    pub message_index: Option<u64>,
    /// What is wrong and what to do.
    pub message: String,
}

/// Why a run stopped before the end of its sources.
#[derive(Debug)]
pub enum Stop {
    /// An input is damaged (and `recover` was off).
    Damaged(Damage),
    /// An input could not be opened or read.
    Io(String),
    /// The output failed; for a reader, the consumer went away.
    Sink(fb_run::Error),
    /// The run was cancelled: a signal's handler raised (Ctrl-C), or the
    /// consumer went away.
    Interrupted,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Damaged(d) => f.write_str(&d.message),
            Self::Io(m) => f.write_str(m),
            Self::Sink(e) => write!(f, "{e}"),
            Self::Interrupted => f.write_str("vwlogs: interrupted"),
        }
    }
}

/// A source as the shared driver reads it: never mapped (no signal
/// handlers in the host's process), each read refused once cancelled.
pub struct Cancellably<'a> {
    src: &'a Src,
    cancel: &'a Cancel,
}

impl Readable for Cancellably<'_> {
    fn name(&self) -> String {
        self.src.input().name()
    }

    fn path(&self) -> Option<&std::path::Path> {
        None
    }

    fn size(&self) -> Option<u64> {
        None
    }

    fn open(&self) -> Result<(Box<dyn Read + Send>, Option<u64>), fb_run::Error> {
        let reader = self.src.open().map_err(fb_run::Error::Msg)?;
        Ok((
            Box::new(Cancellable::new(reader, self.cancel.clone())),
            None,
        ))
    }
}

/// `sources` as the driver reads them, each read refused once `cancel`
/// is set.
pub fn readables<'a>(sources: &'a [Src], cancel: &'a Cancel) -> Vec<Cancellably<'a>> {
    sources
        .iter()
        .map(|src| Cancellably { src, cancel })
        .collect()
}

/// How Python feeds sources: streamed (never mapped, no index), stopping
/// at the first damaged input unless `recover` (then every input is read
/// whole and resynced, and what was skipped is in the report), and
/// before the next message or read once `cancelled` says so.
pub fn settings(recover: bool, cancelled: &(dyn Fn() -> bool + Sync)) -> Drive<'_> {
    Drive {
        recover,
        window: None,
        maps: Maps::Never,
        on_damage: OnDamage::Stop,
        cancel: cancelled,
        target: "the reader",
    }
}

/// The driver's stop as Python reports it.
pub fn stop_of(stop: DriveStop, cancel: &Cancel) -> Stop {
    match stop {
        // A failure caused by the cancel (a read refused) is the cancel.
        _ if cancel.is_set() => Stop::Interrupted,
        DriveStop::Cancelled => Stop::Interrupted,
        DriveStop::Damaged(d) => Stop::Damaged(Damage {
            message: d.to_string(),
            path: d.input,
            offset: d.offset.unwrap_or(0),
            message_index: d.message_index,
        }),
        DriveStop::Failed(e @ fb_run::Error::Write { .. }) => Stop::Sink(e),
        DriveStop::Failed(e) => Stop::Io(e.to_string()),
    }
}

/// Runs one of fb-run's commands (`command`, given the [`Job`]) over
/// `sources` as vwlogs runs them all: on a thread of its own with the
/// interpreter's lock released, quiet, stopping when a signal's handler
/// raises. Gives the command's result, why the run stopped early (as
/// Python reports it) and what the driver reported; the handler's
/// exception, or an `OSError` where the command could not start.
pub fn run_job<T: Send>(
    py: pyo3::Python<'_>,
    sources: &[Src],
    opts: &crate::options::Opts,
    command: impl FnOnce(Job<'_, Cancellably<'_>>) -> Result<Outcome<T>, fb_run::Error> + Send,
) -> pyo3::PyResult<(T, Option<Stop>, RunReport)> {
    let cancel = Cancel::default();
    let (outcome, interrupted) = crate::interrupt::run(py, &cancel, || {
        let readables = readables(sources, &cancel);
        let is_set = || cancel.is_set();
        let job = Job {
            inputs: &readables,
            join: opts.options(),
            filter: &opts.filter,
            drive: settings(opts.recover, &is_set),
        };
        command(job).map(|outcome| {
            let stop = outcome.stop.map(|s| stop_of(s, &cancel));
            (outcome.value, stop, outcome.run)
        })
    })?;
    if let Some(err) = interrupted {
        return Err(err);
    }
    outcome.map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}

/// Feeds `sources` to `pipeline` in order, through the one driver
/// (`fb_run::drive`), as [`settings`] says. What the pipeline joined
/// before a stop is still in it: the caller finishes it.
pub fn feed<S, K>(
    sources: &[Src],
    pipeline: &mut Pipeline<S, K>,
    recover: bool,
    report: &mut RunReport,
    cancel: &Cancel,
) -> Result<(), Stop>
where
    S: fb_join::Sink + Send,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    let readables = readables(sources, cancel);
    let is_set = || cancel.is_set();
    let drive = settings(recover, &is_set);
    fb_run::drive::feed_all(&readables, pipeline, &drive, report, &mut Silent)
        .map_err(|stop| stop_of(stop, cancel))
}
