//! `fb inspect --event-id`: the DSJSON line of one decision, reading only
//! the blocks of the log's index that may hold it (all of the log without
//! an index).

use std::io::Write;

use fb_format::index::{Index, LogSource};
use fb_join::dsjson::LinesSink;
use fb_join::{JoinedEvent, Options, Pipeline, Source};

use crate::error::Error;
use crate::input::{Input, OpenLog};

/// How a lookup went: the lines written, and the log bytes read.
#[derive(Debug, Default, Clone, Copy)]
pub struct Found {
    /// Lines written.
    pub lines: u64,
    /// Log bytes joined to find them.
    pub read: u64,
}

/// Writes to `out` the lines `fb convert` gives for the decision `id` of
/// `log` (in memory, or a file read as it goes), joined with `opts`. With
/// `index`, only its blocks that may hold the id are joined, each after
/// the checkpoint in force there; without, the whole log.
pub fn event_lines(
    log: &dyn LogSource,
    index: Option<&Index>,
    id: &str,
    opts: Options,
    out: &mut dyn Write,
) -> Result<Found, Error> {
    let compat = opts.compat;
    let keep = |ev: &JoinedEvent<'_>| ev.event_id == id;
    let mut pipeline = Pipeline::new(opts, keep, LinesSink::new(out, compat), 1);
    let mut read = 0u64;
    let past = |start: u64, end: u64| {
        Error::Msg(format!(
            "the index points past the log ({start}..{end}): was it cut short meanwhile?"
        ))
    };
    // A file's spans are read into this, one at a time.
    let mut bytes = Vec::new();
    let mut feed = |p: &mut Pipeline<LinesSink<&mut dyn Write>, _>, start: u64, end: u64| {
        let slice = match log.in_memory() {
            Some(data) => {
                fb_format::index::span(data, start, end).ok_or_else(|| past(start, end))?
            }
            None => {
                let len =
                    usize::try_from(end.saturating_sub(start)).map_err(|_| past(start, end))?;
                bytes.resize(len, 0);
                fb_format::index::read_exact_at(log, start, &mut bytes)
                    .map_err(|e| Error::Msg(format!("reading bytes {start}..{end}: {e}")))?;
                bytes.as_slice()
            }
        };
        read += slice.len() as u64;
        p.feed(
            Source::Slice(slice),
            fb_format::Position::new(start, 0),
            &|| false,
            &mut |_| {},
        )
        .map_err(|e| Error::Msg(e.to_string()))
        .map(drop)
    };
    match index {
        // The whole log: read as it goes when it is a file.
        None => match log.in_memory() {
            Some(_) => feed(&mut pipeline, 0, log.len())?,
            None => {
                pipeline
                    .feed(
                        Source::Stream(Box::new(fb_format::index::ReadFrom::new(log, 0))),
                        fb_format::Position::START,
                        &|| false,
                        &mut |_| {},
                    )
                    .map_err(|e| Error::Msg(e.to_string()))?;
                read = log.len();
            }
        },
        Some(index) => {
            for block in index.blocks_for_id(id) {
                for c in index.checkpoints_in_force(block.start) {
                    feed(&mut pipeline, c.offset, c.end())?;
                }
                feed(&mut pipeline, block.start, block.end)?;
            }
        }
    }
    let lines = pipeline.kept();
    Ok(Found { lines, read })
}

/// The index to use for `input` (opened as `log`), if any (see
/// [`crate::sidecar::load`]): a stale one is rebuilt.
pub fn index_for(
    input: &Input,
    log: &OpenLog,
    observer: &mut dyn crate::report::Observer,
) -> Result<Option<Index>, Error> {
    match (input, log) {
        (Input::File(path), OpenLog::File(file, _)) => {
            crate::sidecar::load_unmapped(path, file, crate::input::Maps::Never, observer)
        }
        (Input::File(path), OpenLog::InMemory(data)) => crate::sidecar::load(path, data, observer),
        _ => Ok(None),
    }
}
