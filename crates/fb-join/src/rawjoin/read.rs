//! Reading the raw streams: one input event by event (`Cursor`), the
//! rotated files of one stream one after the other (`Chain`, which also
//! notices where the stream goes back in time), and the streams of one
//! side merged by time (`SideReader`); and what reading yields: each
//! event with where it came from (`Read`), input that could not be read
//! (`Damage`), and streams that go back in time (`WentBack`).

use fb_format::raw::{RawEvent, RawStreamReader};
use fb_format::Position;

/// An event as read, with where it came from.
#[derive(Debug, Clone, Copy)]
pub struct Read<'a> {
    /// The event.
    pub event: RawEvent<'a>,
    /// Its client time, µs since 1970.
    pub time: Option<i64>,
    /// The input it came from (its position in the inputs given).
    pub input: usize,
    /// Byte offset of its batch in that input.
    pub offset: u64,
    /// Index of its batch in that input.
    pub message: u64,
}

/// Input that could not be read.
#[derive(Debug)]
pub struct Damage {
    /// The input.
    pub input: usize,
    /// What is wrong, and where.
    pub error: fb_format::Error,
    /// Where reading went on (`recover`: after a batch that does not
    /// verify, or at the next message that does after damaged framing);
    /// `None` when the input ended there.
    pub resumed_at: Option<u64>,
}

/// An input in which events go back in time by more than the skew (with
/// a window): the first such event, and how many did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WentBack {
    /// The input.
    pub input: usize,
    /// Byte offset of the first such event's batch.
    pub offset: u64,
    /// Index of that batch.
    pub message: u64,
    /// That event's id.
    pub event_id: String,
    /// Its client time, µs since 1970.
    pub time: i64,
    /// The latest client time before it in its stream, µs since 1970.
    pub latest: i64,
    /// Events of this input earlier than one before them in the stream by
    /// more than the skew.
    pub events: u64,
    /// The furthest any of them went back, in µs: a skew this large
    /// would have let them join.
    pub furthest: i64,
}

/// Reads one input, event by event.
pub(super) struct Cursor<'a> {
    pub(super) input: usize,
    reader: RawStreamReader<'a>,
    batch: std::vec::IntoIter<RawEvent<'a>>,
    /// Offset and index of the batch being read.
    pub(super) at: Position,
    done: bool,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(input: usize, bytes: &'a [u8]) -> Self {
        Self {
            input,
            reader: RawStreamReader::new(bytes),
            batch: Vec::new().into_iter(),
            at: Position::START,
            done: false,
        }
    }

    pub(super) fn next(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<Read<'a>> {
        loop {
            if let Some(event) = self.batch.next() {
                return Some(Read {
                    event,
                    time: event.client_time.as_ref().map(fb_format::index::micros),
                    input: self.input,
                    offset: self.at.offset,
                    message: self.at.index,
                });
            }
            if self.done {
                return None;
            }
            match self.reader.next_message() {
                Ok(Some(msg)) => match msg.raw_events() {
                    Ok(events) => {
                        self.batch = events.into_iter();
                        self.at = Position::new(msg.offset, msg.index);
                    }
                    Err(error) => {
                        let next = msg.offset + 8 + msg.payload.len() as u64;
                        damage.push(Damage {
                            input: self.input,
                            error,
                            resumed_at: recover.then_some(next),
                        });
                        self.done = !recover;
                    }
                },
                Ok(None) => self.done = true,
                Err(error) => {
                    let resumed_at = if recover {
                        self.reader.resync().map(|skipped| skipped.end)
                    } else {
                        None
                    };
                    damage.push(Damage {
                        input: self.input,
                        error,
                        resumed_at,
                    });
                    self.done = resumed_at.is_none();
                }
            }
        }
    }
}

/// The inputs of one stream, read one after the other in the order given
/// (rotated files: give them in time order). With `skew` set, an event
/// earlier than the latest before it in the stream by more than the skew
/// is recorded in `went_back` (one record per input).
pub(super) struct Chain<'a> {
    pub(super) cursors: Vec<Cursor<'a>>,
    current: usize,
    skew: Option<i64>,
    latest: Option<i64>,
    pub(super) went_back: Vec<WentBack>,
}

impl<'a> Chain<'a> {
    pub(super) fn new(cursors: Vec<Cursor<'a>>, skew: Option<i64>) -> Self {
        Self {
            cursors,
            current: 0,
            skew,
            latest: None,
            went_back: Vec::new(),
        }
    }

    pub(super) fn next(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<Read<'a>> {
        loop {
            let cursor = self.cursors.get_mut(self.current)?;
            if let Some(read) = cursor.next(recover, damage) {
                self.check_order(&read);
                return Some(read);
            }
            self.current += 1;
        }
    }

    /// Records `read` if it goes back in time by more than the skew.
    fn check_order(&mut self, read: &Read<'a>) {
        let (Some(skew), Some(time)) = (self.skew, read.time) else {
            return;
        };
        let latest = match self.latest {
            Some(latest) if latest > time => latest,
            _ => {
                self.latest = Some(time);
                return;
            }
        };
        let back = latest.saturating_sub(time);
        if back <= skew {
            return;
        }
        match self.went_back.iter_mut().find(|w| w.input == read.input) {
            Some(w) => {
                w.events += 1;
                w.furthest = w.furthest.max(back);
            }
            None => self.went_back.push(WentBack {
                input: read.input,
                offset: read.offset,
                message: read.message,
                event_id: read.event.id.to_string(),
                time,
                latest,
                events: 1,
                furthest: back,
            }),
        }
    }
}

/// The events of one side: its streams (interactions and episodes, say)
/// merged by time, the earliest head first (the first stream on a tie),
/// or one after the other without a window.
pub(super) struct SideReader<'a> {
    pub(super) chains: Vec<Chain<'a>>,
    pub(super) heads: Vec<Option<Read<'a>>>,
    filled: bool,
    by_time: bool,
}

impl<'a> SideReader<'a> {
    pub(super) fn new(chains: Vec<Chain<'a>>, by_time: bool) -> Self {
        let heads = chains.iter().map(|_| None).collect();
        Self {
            chains,
            heads,
            filled: false,
            by_time,
        }
    }

    fn fill(&mut self, recover: bool, damage: &mut Vec<Damage>) {
        if !self.filled {
            for (chain, head) in self.chains.iter_mut().zip(self.heads.iter_mut()) {
                *head = chain.next(recover, damage);
            }
            self.filled = true;
        }
    }

    fn pick(&self) -> Option<usize> {
        let mut heads = self.heads.iter().enumerate();
        if self.by_time {
            heads
                .filter_map(|(k, h)| h.as_ref().map(|h| (h.time.unwrap_or(i64::MIN), k)))
                .min()
                .map(|(_, k)| k)
        } else {
            heads.find(|(_, h)| h.is_some()).map(|(k, _)| k)
        }
    }

    pub(super) fn peek(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<&Read<'a>> {
        self.fill(recover, damage);
        let k = self.pick()?;
        self.heads.get(k)?.as_ref()
    }

    pub(super) fn next(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<Read<'a>> {
        self.fill(recover, damage);
        let k = self.pick()?;
        let next = self.chains.get_mut(k)?.next(recover, damage);
        std::mem::replace(self.heads.get_mut(k)?, next)
    }
}
