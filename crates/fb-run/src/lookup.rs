//! `fb inspect --event-id`: the DSJSON line of one decision, reading only
//! the blocks of the log's index that may hold it (all of the log without
//! an index).

use std::io::Write;

use fb_format::index::Index;
use fb_join::dsjson::LinesSink;
use fb_join::{JoinedEvent, Options, Pipeline, Source};

use crate::error::Error;
use crate::input::Input;

/// How a lookup went: the lines written, and the log bytes read.
#[derive(Debug, Default, Clone, Copy)]
pub struct Found {
    /// Lines written.
    pub lines: u64,
    /// Log bytes joined to find them.
    pub read: u64,
}

/// Writes to `out` the lines `fb convert` gives for the decision `id` of
/// `log` (its bytes `data`), joined with `opts`. With `index`, only its
/// blocks that may hold the id are joined, each after the checkpoint in
/// force there; without, the whole log.
pub fn event_lines(
    data: &[u8],
    index: Option<&Index>,
    id: &str,
    opts: Options,
    out: &mut dyn Write,
) -> Result<Found, Error> {
    let compat = opts.compat;
    let keep = |ev: &JoinedEvent<'_>| ev.event_id == id;
    let mut pipeline = Pipeline::new(opts, keep, LinesSink::new(out, compat), 1);
    let mut read = 0u64;
    let mut feed = |p: &mut Pipeline<LinesSink<&mut dyn Write>, _>, start: u64, end: u64| {
        let slice = fb_format::index::span(data, start, end)
            .ok_or_else(|| Error::Msg(format!("the index points past the log ({start}..{end})")))?;
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
        None => feed(&mut pipeline, 0, data.len() as u64)?,
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

/// The index to use for `input`, if any (see [`crate::sidecar::load`]).
pub fn index_for(
    input: &Input,
    data: &[u8],
    observer: &mut dyn crate::report::Observer,
) -> Result<Option<Index>, Error> {
    match input {
        Input::File(path) => crate::sidecar::load(path, data, observer),
        _ => Ok(None),
    }
}
