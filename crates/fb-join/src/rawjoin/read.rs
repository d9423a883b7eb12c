//! Reading the raw streams: one input event by event (`Cursor`), the
//! rotated files of one stream one after the other (`Chain`, which also
//! notices where the stream goes back in time), and the streams of one
//! side merged by time (`SideReader`).

use fb_format::raw::{RawEvent, RawStreamReader};

use super::{Damage, Read, WentBack};

/// Reads one input, event by event.
pub(super) struct Cursor<'a> {
    pub(super) input: usize,
    reader: RawStreamReader<'a>,
    batch: std::vec::IntoIter<RawEvent<'a>>,
    /// Offset and index of the batch being read.
    pub(super) at: (u64, u64),
    done: bool,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(input: usize, bytes: &'a [u8]) -> Self {
        Self {
            input,
            reader: RawStreamReader::new(bytes),
            batch: Vec::new().into_iter(),
            at: (0, 0),
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
                    offset: self.at.0,
                    message: self.at.1,
                });
            }
            if self.done {
                return None;
            }
            match self.reader.next_message() {
                Ok(Some(msg)) => match msg.raw_events() {
                    Ok(events) => {
                        self.batch = events.into_iter();
                        self.at = (msg.offset, msg.index);
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
                        self.reader.resync().map(|(_, at)| at)
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
