//! A time window read through a log's index: which byte ranges to feed,
//! in order (each run of blocks with events in the window, after the
//! checkpoints in force where it starts), and the ranges' bytes, from a
//! map or read from the file.

use std::fs::File;
use std::os::unix::fs::FileExt;

use fb_format::index::Index;

/// One range to feed: its first byte, the byte after it, and the index
/// of its first message (0 for a checkpoint fed again, whose index the
/// joiner does not use).
pub type Range = (u64, u64, u64);

/// The ranges of `log` to feed for the window `[since, until)` (seconds),
/// in order: each run of consecutive blocks with events in it (cut into
/// pieces of at most `piece` bytes, at block boundaries), after the
/// checkpoints in force where it starts; then those a full read ends
/// with, so that the configuration carries to the next input as a full
/// read leaves it.
pub fn ranges(index: &Index, (since, until): (i64, i64), piece: u64) -> Vec<Range> {
    let micros = |s: i64| s.saturating_mul(1_000_000);
    let (since, until) = (micros(since), micros(until));
    // The index of each block's first message, as a full read counts.
    let mut first = 0u64;
    let mut runs: Vec<Range> = Vec::new();
    for block in &index.blocks {
        let this = first;
        first += u64::from(block.messages);
        if !block.overlaps(since, until) {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.1 == block.start && block.end - run.0 <= piece => run.1 = block.end,
            _ => runs.push((block.start, block.end, this)),
        }
    }
    let mut out = Vec::new();
    // The last checkpoint applied (applying one again is harmless: each
    // sets the whole configuration).
    let mut config: Option<u64> = None;
    for run in runs.into_iter().map(Some).chain([None]) {
        let force = index.checkpoints_in_force(run.map_or(u64::MAX, |r| r.0));
        let last = force.last().map(|c| c.offset);
        if last != config {
            out.extend(force.iter().map(|c| (c.offset, c.end(), 0)));
            config = last;
        }
        if let Some((start, end, this)) = run {
            out.push((start, end, this));
            config = index.checkpoints_in_force(end).last().map(|c| c.offset);
        }
    }
    out
}

/// Where the bytes of ranges come from.
pub enum Spans<'a> {
    /// A log in memory (a map): ranges are borrowed where they lie.
    Borrowed(&'a [u8]),
    /// A file: each range is read into one buffer, reused.
    Read {
        /// The log.
        file: &'a File,
        /// The last range read.
        buf: Vec<u8>,
    },
}

impl Spans<'_> {
    /// The largest range worth feeding at once: all of a map; from a file,
    /// what one buffer should hold.
    pub fn piece(&self) -> u64 {
        match self {
            Self::Borrowed(_) => u64::MAX,
            Self::Read { .. } => 64 << 20,
        }
    }

    /// The bytes `start..end` of the log, or why not.
    pub fn get(&mut self, start: u64, end: u64) -> Result<&[u8], String> {
        match self {
            Self::Borrowed(log) => fb_format::index::span(log, start, end)
                .ok_or_else(|| "the index points past the log".to_string()),
            Self::Read { file, buf } => {
                let len = usize::try_from(end.saturating_sub(start))
                    .map_err(|_| "a range of the index is too long".to_string())?;
                buf.clear();
                buf.resize(len, 0);
                file.read_exact_at(buf, start)
                    .map_err(|e| format!("reading bytes {start}..{end}: {e}"))?;
                Ok(buf)
            }
        }
    }
}
