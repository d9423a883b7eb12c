//! Joining the client's raw streams (interactions, observations, and for
//! multistep the episodes) into the groups a joined log holds: a decision
//! (or an episode's steps) with the observations that join it.
//!
//! Events are keyed by `Metadata.id` (the event id; the episode id for
//! multistep) and timed by their client time. Two modes:
//!
//! - **No window** (`eud: None`): every observation joins its key wherever
//!   it is in the streams. All events are held (as references into the
//!   inputs, a few words each) until the end; groups come out in the order
//!   of their first interaction-side event.
//! - **A window** (`eud: Some(w)`): an observation at time `u` joins the
//!   group whose first event is at `t` when `t - skew <= u <= t + w`.
//!   Each stream's inputs are read one after the other (rotated files, in
//!   time order); the interaction and episode streams are merged by time,
//!   and read at most `w + skew` ahead of the observations, which may be
//!   out of time order by up to the skew;
//!   a group is complete, and handed out, once the observations have
//!   passed `t + w + skew`. Memory is bounded by the events of one window.
//!   Observations later than their window, earlier than their interaction
//!   by more than the skew, or with no interaction are handed out as
//!   unjoined, with the reason. Every event needs a client time.
//!
//! A multistep episode is one group: its steps (from the interaction
//! streams) and its episode event (from the episode streams) share the
//! episode id; with a window, a step that comes after its episode's group
//! was handed out starts a group of its own.
//!
//! A `DedupInfo` of the interaction side is handed out in its place among
//! the groups, so that a writer can start a message with it: its actions
//! are then cached before the decisions after it are joined, and a later
//! one cannot replace them before.
//!
//! ```
//! use fb_join::rawjoin::{join, Config, Input, Item, Side};
//!
//! let data = |p: &str| std::fs::read(format!("{}/../../tests/data/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap();
//! let (i, o) = (data("fb_events/cb_v2_size_2.fb"), data("fb_events/f-reward_v2_size_2.fb"));
//! let inputs = [Input { side: Side::Interactions, bytes: &i }, Input { side: Side::Observations, bytes: &o }];
//! let mut groups = 0;
//! let mut sink = |item| {
//!     if let Item::Group(events) = item {
//!         assert_eq!(events.len(), 2); // a decision and its outcome
//!         groups += 1;
//!     }
//!     Ok(())
//! };
//! let report = join(&inputs, Config::default(), &mut sink, &mut |_, _| {}).unwrap();
//! assert_eq!((groups, report.joined, report.orphans), (2, 2, 0));
//! ```

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;

use fb_format::raw::{RawEvent, RawStreamReader};
use fb_schema::PayloadType;

use crate::Error;

/// Which stream an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Decisions, multistep steps, DedupInfo events.
    Interactions,
    /// Multistep episode events (joined as interactions are).
    Episodes,
    /// Outcomes and activations.
    Observations,
}

/// One input: a whole raw stream in memory (or mapped).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// What it holds.
    pub side: Side,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// How to join.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config {
    /// The experimental unit duration, in microseconds; `None` joins
    /// without a window.
    pub eud: Option<i64>,
    /// How much earlier than its interaction an observation may be, and
    /// how far out of time order a stream may be, in microseconds.
    pub skew: i64,
    /// Go on past damage: after a batch that does not verify, or at the
    /// next message that does after damaged framing.
    pub recover: bool,
}

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

/// Why an observation joined nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Its interaction's window had closed.
    Late,
    /// It is earlier than its interaction by more than the skew.
    Early,
    /// No interaction has its id (or none within reach of the window).
    Orphan,
}

impl Why {
    /// The reason as the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Why::Late => "late",
            Why::Early => "early",
            Why::Orphan => "orphan",
        }
    }
}

/// What the joiner hands out, in output order.
#[derive(Debug)]
pub enum Item<'a> {
    /// A DedupInfo, to start a message with.
    Dedup(Read<'a>),
    /// A decision or an episode: its interaction-side events in the order
    /// read, then the observations that joined it.
    Group(Vec<Read<'a>>),
    /// An observation that joined nothing.
    Unjoined(Read<'a>, Why),
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

/// What a join did.
#[derive(Debug, Default)]
pub struct Report {
    /// Decisions and steps read.
    pub interactions: u64,
    /// Episode events read.
    pub episodes: u64,
    /// DedupInfo events read.
    pub dedup: u64,
    /// Observations read.
    pub observations: u64,
    /// Groups handed out.
    pub groups: u64,
    /// Observations that joined a group.
    pub joined: u64,
    /// Observations after their window.
    pub late: u64,
    /// Observations before their interaction (beyond the skew).
    pub early: u64,
    /// Observations without an interaction.
    pub orphans: u64,
    /// Batches skipped or inputs ended by damage.
    pub damage: Vec<Damage>,
    /// The most groups held at once (the window's size, with a window).
    pub most_pending: usize,
}

/// Reads one input, event by event.
struct Cursor<'a> {
    input: usize,
    reader: RawStreamReader<'a>,
    batch: std::vec::IntoIter<RawEvent<'a>>,
    at: (u64, u64),
    done: bool,
}

impl<'a> Cursor<'a> {
    fn new(input: usize, bytes: &'a [u8]) -> Self {
        Self {
            input,
            reader: RawStreamReader::new(bytes),
            batch: Vec::new().into_iter(),
            at: (0, 0),
            done: false,
        }
    }

    fn next(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<Read<'a>> {
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

/// Inputs of one stream, read one after the other in the order given
/// (rotated files: give them in time order).
struct Chain<'a> {
    cursors: Vec<Cursor<'a>>,
    current: usize,
}

impl<'a> Chain<'a> {
    fn next(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<Read<'a>> {
        loop {
            let cursor = self.cursors.get_mut(self.current)?;
            if let Some(read) = cursor.next(recover, damage) {
                return Some(read);
            }
            self.current += 1;
        }
    }
}

/// The events of one side: its streams (interactions and episodes, say)
/// merged by time, the earliest head first (the first stream on a tie),
/// or one after the other without a window.
struct SideReader<'a> {
    chains: Vec<Chain<'a>>,
    heads: Vec<Option<Read<'a>>>,
    filled: bool,
    by_time: bool,
}

impl<'a> SideReader<'a> {
    fn new(chains: Vec<Chain<'a>>, by_time: bool) -> Self {
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

    fn peek(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<&Read<'a>> {
        self.fill(recover, damage);
        let k = self.pick()?;
        self.heads.get(k)?.as_ref()
    }

    fn next(&mut self, recover: bool, damage: &mut Vec<Damage>) -> Option<Read<'a>> {
        self.fill(recover, damage);
        let k = self.pick()?;
        let next = self.chains.get_mut(k)?.next(recover, damage);
        std::mem::replace(self.heads.get_mut(k)?, next)
    }
}

/// A group being joined, or a DedupInfo waiting for its turn.
struct Open<'a> {
    key: Option<&'a str>,
    start: i64,
    deadline: i64,
    events: Vec<Read<'a>>,
    observations: Vec<Read<'a>>,
}

/// The joiner's state.
struct State<'a, 's> {
    cfg: Config,
    report: Report,
    sink: &'s mut dyn FnMut(Item<'a>) -> std::io::Result<()>,
    /// Groups (and DedupInfos) in arrival order; `base` numbers the first.
    open: VecDeque<Open<'a>>,
    base: u64,
    by_key: HashMap<&'a str, u64>,
    /// Keys handed out, with their deadline, while an observation for
    /// them can still be told late rather than orphan.
    /// Held as hashes of the keys, not the keys: a key's bytes lie in a
    /// batch whose pages the caller may give back once the window has
    /// passed it, and reading them again would fault them back in for good.
    /// (A collision only calls an orphan late.)
    closed: HashMap<u64, i64>,
    closed_order: VecDeque<(u64, i64)>,
    keys: std::collections::hash_map::RandomState,
}

impl<'a> State<'a, '_> {
    fn emit(&mut self, item: Item<'a>) -> Result<(), Error> {
        (self.sink)(item).map_err(|source| Error::Write { written: 0, source })
    }

    /// Takes in an interaction-side event.
    fn add(&mut self, read: Read<'a>) -> Result<(), Error> {
        match read.event.kind {
            PayloadType::DedupInfo => self.report.dedup += 1,
            PayloadType::Episode => self.report.episodes += 1,
            _ => self.report.interactions += 1,
        }
        let time = self.time(&read)?;
        if read.event.kind == PayloadType::DedupInfo {
            self.open.push_back(Open {
                key: None,
                start: time,
                deadline: time,
                events: vec![read],
                observations: Vec::new(),
            });
            return Ok(());
        }
        if let Some(group) = self
            .by_key
            .get(read.event.id)
            .and_then(|seq| self.open.get_mut((seq - self.base) as usize))
        {
            group.events.push(read);
            return Ok(());
        }
        let seq = self.base + self.open.len() as u64;
        self.by_key.insert(read.event.id, seq);
        self.open.push_back(Open {
            key: Some(read.event.id),
            start: time,
            deadline: time.saturating_add(self.cfg.eud.unwrap_or(0)),
            events: vec![read],
            observations: Vec::new(),
        });
        self.report.most_pending = self.report.most_pending.max(self.by_key.len());
        Ok(())
    }

    /// The event's time: its client time, required with a window.
    fn time(&self, read: &Read<'a>) -> Result<i64, Error> {
        match (read.time, self.cfg.eud) {
            (Some(t), _) => Ok(t),
            (None, None) => Ok(0),
            (None, Some(_)) => Err(Error::NoClientTime {
                input: read.input,
                offset: read.offset,
                message: read.message,
                event_id: read.event.id.to_string(),
            }),
        }
    }

    /// Joins an observation to its group, or hands it out as unjoined.
    fn observe(&mut self, read: Read<'a>) -> Result<(), Error> {
        self.report.observations += 1;
        let u = self.time(&read)?;
        let windowed = self.cfg.eud.is_some();
        let group = self
            .by_key
            .get(read.event.id)
            .and_then(|seq| self.open.get_mut((seq - self.base) as usize));
        let why = match group {
            Some(g) if windowed && u > g.deadline => Why::Late,
            Some(g) if windowed && u < g.start.saturating_sub(self.cfg.skew) => Why::Early,
            Some(g) => {
                g.observations.push(read);
                self.report.joined += 1;
                return Ok(());
            }
            None if self.closed.contains_key(&self.keys.hash_one(read.event.id)) => Why::Late,
            None => Why::Orphan,
        };
        match why {
            Why::Late => self.report.late += 1,
            Why::Early => self.report.early += 1,
            Why::Orphan => self.report.orphans += 1,
        }
        self.emit(Item::Unjoined(read, why))
    }

    /// Hands out the first open group.
    fn close_first(&mut self) -> Result<(), Error> {
        let Some(first) = self.open.pop_front() else {
            return Ok(());
        };
        self.base += 1;
        let Some(key) = first.key else {
            for read in first.events {
                self.emit(Item::Dedup(read))?;
            }
            return Ok(());
        };
        self.by_key.remove(key);
        if self.cfg.eud.is_some() {
            let hash = self.keys.hash_one(key);
            self.closed.insert(hash, first.deadline);
            self.closed_order.push_back((hash, first.deadline));
        }
        self.report.groups += 1;
        let mut events = first.events;
        events.extend(first.observations);
        self.emit(Item::Group(events))
    }

    /// Hands out the groups no observation at `watermark` or later can
    /// join, and forgets closed keys a window behind.
    fn close_before(&mut self, watermark: i64) -> Result<(), Error> {
        let (eud, skew) = (self.cfg.eud.unwrap_or(0), self.cfg.skew);
        while self
            .open
            .front()
            .is_some_and(|g| g.deadline.saturating_add(skew) < watermark)
        {
            self.close_first()?;
        }
        while let Some(&(key, deadline)) = self.closed_order.front() {
            if deadline.saturating_add(eud).saturating_add(skew) >= watermark {
                break;
            }
            self.closed_order.pop_front();
            if self.closed.get(&key) == Some(&deadline) {
                self.closed.remove(&key);
            }
        }
        Ok(())
    }
}

/// Observations between two calls of `release`.
const RELEASE_EVERY: u64 = 1 << 13;

/// For each input, the offset before which nothing is borrowed any more:
/// the batch being read, and the oldest batch an open group refers to.
fn in_use(n: usize, sides: [&SideReader<'_>; 2], open: &VecDeque<Open<'_>>) -> Vec<u64> {
    let mut low = vec![u64::MAX; n];
    let mut keep = |input: usize, offset: u64| {
        if let Some(l) = low.get_mut(input) {
            *l = (*l).min(offset);
        }
    };
    for side in sides {
        for c in side.chains.iter().flat_map(|chain| &chain.cursors) {
            keep(c.input, c.at.0);
        }
        for h in side.heads.iter().flatten() {
            keep(h.input, h.offset);
        }
    }
    for g in open {
        for r in g.events.iter().chain(&g.observations) {
            keep(r.input, r.offset);
        }
    }
    low
}

/// Joins the raw streams `inputs`, handing each group, DedupInfo and
/// unjoined observation to `sink` in output order. With a window,
/// `release(input, offset)` is called from time to time with the offset
/// of `input` before which nothing is borrowed any more (a mapped input
/// can give those pages back). Damaged input is reported (what was read
/// before it is joined); an error stops the join: a write that failed, or
/// an event without client time under a window.
pub fn join<'a>(
    inputs: &[Input<'a>],
    cfg: Config,
    sink: &mut dyn FnMut(Item<'a>) -> std::io::Result<()>,
    release: &mut dyn FnMut(usize, u64),
) -> Result<Report, Error> {
    let chain = |want: Side| Chain {
        cursors: inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.side == want)
            .map(|(k, i)| Cursor::new(k, i.bytes))
            .collect(),
        current: 0,
    };
    let windowed = cfg.eud.is_some();
    let mut interactions = SideReader::new(
        vec![chain(Side::Interactions), chain(Side::Episodes)],
        windowed,
    );
    let mut observations = SideReader::new(vec![chain(Side::Observations)], windowed);
    let mut state = State {
        cfg,
        report: Report::default(),
        sink,
        open: VecDeque::new(),
        base: 0,
        by_key: HashMap::new(),
        closed: HashMap::new(),
        closed_order: VecDeque::new(),
        keys: Default::default(),
    };
    let recover = cfg.recover;
    let mut damage = Vec::new();
    match cfg.eud {
        None => {
            // Every interaction-side event first, then each observation to
            // its key wherever it is.
            while let Some(read) = interactions.next(recover, &mut damage) {
                state.add(read)?;
            }
            while let Some(read) = observations.next(recover, &mut damage) {
                state.observe(read)?;
            }
        }
        Some(eud) => {
            let ahead = eud.saturating_add(cfg.skew);
            let mut watermark = i64::MIN;
            while let Some(next) = observations.peek(recover, &mut damage) {
                let u = state.time(next)?;
                // Interactions up to a window ahead of this observation.
                while let Some(i) = interactions.peek(recover, &mut damage) {
                    if state.time(i)? > u.saturating_add(ahead) {
                        break;
                    }
                    if let Some(read) = interactions.next(recover, &mut damage) {
                        state.add(read)?;
                    }
                }
                if let Some(read) = observations.next(recover, &mut damage) {
                    state.observe(read)?;
                }
                watermark = watermark.max(u);
                state.close_before(watermark)?;
                if state.report.observations.is_multiple_of(RELEASE_EVERY) {
                    let low = in_use(inputs.len(), [&interactions, &observations], &state.open);
                    for (input, offset) in low.into_iter().enumerate() {
                        if offset != u64::MAX {
                            release(input, offset);
                        }
                    }
                }
            }
            while let Some(read) = interactions.next(recover, &mut damage) {
                state.add(read)?;
            }
        }
    }
    while !state.open.is_empty() {
        state.close_first()?;
    }
    let mut report = state.report;
    report.damage = damage;
    Ok(report)
}
