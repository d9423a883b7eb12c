//! The loop over sources: each fed to one pipeline in order, as `fb`
//! does, but quiet, streaming (no memory map, no signal handlers in the
//! host's process), stopping when cancelled (`interrupt.rs`), and with
//! damage as a typed stop.

use std::io::{Cursor, Read};

use fb_cli::input::Head;
use fb_cli::joinargs::RunReport;
use fb_join::{JoinedEvent, Pipeline, Source};

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
    /// The sink failed; for a reader, the consumer went away.
    Sink(fb_join::Error),
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

/// Feeds `sources` to `pipeline` in order. Stops at the first damaged
/// input unless `recover` (then every input is read whole and resynced,
/// and what was skipped is in the report), and before the next message
/// or read once `cancel` is set. What the pipeline joined before a stop
/// is still in it: the caller finishes it.
pub fn feed<S, K>(
    sources: &[Src],
    pipeline: &mut Pipeline<S, K>,
    recover: bool,
    report: &mut RunReport,
    cancel: &Cancel,
) -> Result<(), Stop>
where
    S: fb_join::Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    // A failure caused by the cancel (a read refused) is the cancel.
    let or_cancelled = |stop: Stop| match cancel.is_set() {
        true => Stop::Interrupted,
        false => stop,
    };
    let stop_asked = || cancel.is_set();
    for src in sources {
        if cancel.is_set() {
            return Err(Stop::Interrupted);
        }
        let input = src.input();
        let name = input.name();
        report.begin(&input, pipeline.joiner());
        let mut reader = Cancellable::new(src.open().map_err(Stop::Io)?, cancel.clone());
        if recover {
            let mut whole = Vec::new();
            reader
                .read_to_end(&mut whole)
                .map_err(|e| or_cancelled(Stop::Io(format!("{name}: {e}"))))?;
            let head = Head::of(whole.get(..4).unwrap_or(&whole));
            if head == Head::Empty {
                report.head(&input, &head, true);
                continue;
            }
            // Recovery reads on whatever the head says.
            report.logs += 1;
            let mut fed = pipeline
                .feed(Source::Recover(&whole), (0, 0), &stop_asked, &mut |_| {})
                .map_err(|e| or_cancelled(Stop::Sink(e)))?;
            if cancel.is_set() {
                return Err(Stop::Interrupted);
            }
            let skipped = std::mem::take(&mut fed.skipped);
            report.fed(&input, fed, true);
            for r in &skipped {
                report.damaged(&input, r, true);
            }
            continue;
        }
        let mut first = Vec::with_capacity(4);
        (&mut reader)
            .take(4)
            .read_to_end(&mut first)
            .map_err(|e| or_cancelled(Stop::Io(format!("{name}: {e}"))))?;
        let head = Head::of(&first);
        if let Head::NotALog(why) = &head {
            let message = format!("{name}: {why}");
            report.head(&input, &head, true);
            return Err(Stop::Damaged(Damage {
                path: name,
                offset: 0,
                message_index: Some(0),
                message,
            }));
        }
        if !report.head(&input, &head, true) {
            continue;
        }
        let stream: Box<dyn Read + Send> = Box::new(Cursor::new(first).chain(reader));
        let fed = pipeline
            .feed(Source::Stream(stream), (0, 0), &stop_asked, &mut |_| {})
            .map_err(|e| or_cancelled(Stop::Sink(e)))?;
        if cancel.is_set() {
            return Err(Stop::Interrupted);
        }
        let stop = fed.framing_error.as_ref().map(|e| match e.index() {
            // Reading failed (a file object's read raised): not damage.
            None => Stop::Io(format!("{name}: {e}")),
            Some(index) => Stop::Damaged(Damage {
                path: name.clone(),
                offset: e.offset(),
                message_index: Some(index),
                message: format!("{name}: {e}"),
            }),
        });
        report.fed(&input, fed, true);
        if let Some(stop) = stop {
            return Err(stop);
        }
    }
    Ok(())
}
