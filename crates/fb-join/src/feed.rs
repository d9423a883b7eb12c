//! What a pipeline is fed and what one feed reports: where messages come
//! from, how many of each kind were read, and how far the work has got.

use std::io::Read;

use fb_format::recover::Skipped;
use fb_format::salvage::SalvageReport;
use fb_format::{MessageKind, Position};

use crate::joiner::Joiner;
use crate::Error;

/// Where a pipeline reads messages from.
pub enum Source<'a> {
    /// A reader: on one thread through one reused buffer; with workers,
    /// read straight into the buffers of their batches.
    Stream(Box<dyn Read + Send + 'a>),
    /// A log in memory, a memory-mapped file above all: payloads are
    /// borrowed where they lie.
    Slice(&'a [u8]),
    /// A whole damaged log in memory (it starts the log: `start` is not
    /// used): every intact message is read, and the ranges skipped are
    /// listed in [`FeedReport::skipped`]. Always one thread; `stop` is asked
    /// before each message, and the offsets past the first message the
    /// reader resynchronized on count from where it started.
    Recover(&'a [u8]),
}

/// Messages read, per type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageCounts([u64; 6]);

impl MessageCounts {
    const KINDS: [MessageKind; 6] = [
        MessageKind::FileMagic,
        MessageKind::Header,
        MessageKind::Checkpoint,
        MessageKind::Regular,
        MessageKind::Eof,
        MessageKind::Unknown(0),
    ];

    /// Counts one message.
    pub fn add(&mut self, kind: MessageKind) {
        let slot = match kind {
            MessageKind::FileMagic => 0,
            MessageKind::Header => 1,
            MessageKind::Checkpoint => 2,
            MessageKind::Regular => 3,
            MessageKind::Eof => 4,
            MessageKind::Unknown(_) => 5,
        };
        if let Some(n) = self.0.get_mut(slot) {
            *n += 1;
        }
    }

    /// Adds another count to this one.
    pub fn merge(&mut self, other: &Self) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }

    /// All messages.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The types seen, by name, with their counts.
    pub fn by_name(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Self::KINDS
            .iter()
            .zip(self.0)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (k.name(), n))
    }
}

/// What one [`Pipeline::feed`](crate::Pipeline::feed) read.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct FeedReport {
    /// Messages read.
    pub messages: u64,
    /// Messages read, per type.
    pub kinds: MessageCounts,
    /// The log offset reached: every message before it was read.
    pub offset: u64,
    /// The framing error that ended reading early, if any (never for
    /// [`Source::Recover`]: damage is in `skipped`).
    pub framing_error: Option<fb_format::Error>,
    /// Where reading stopped because `stop` said so: the next message's
    /// offset and index, to go on from.
    pub stopped_at: Option<Position>,
    /// Byte ranges skipped by [`Source::Recover`], with why.
    pub skipped: Vec<Skipped>,
    /// Damaged REGULAR messages whose good events [`Source::Recover`]
    /// salvaged (each one's bytes are also in `skipped`).
    pub salvaged: Vec<SalvageReport>,
}

/// How far a parallel conversion has got, as its progress callback is told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Input bytes framed so far.
    pub read: u64,
    /// Input bytes no longer needed: every message before this offset is
    /// joined and its lines written. Pages of a mapped input before it
    /// can be released.
    pub finished: u64,
    /// Events joined so far.
    pub events: u64,
}

/// What a session ([`crate::Session`]) does with each input, on one
/// thread (`session.rs`) or several (`parallel/session.rs`).
pub(crate) trait Feeds<'m> {
    fn joiner(&self) -> &Joiner;
    fn begin_input(&mut self) -> Result<(), Error>;
    fn feed(
        &mut self,
        source: Source<'m>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, Error>;
}
