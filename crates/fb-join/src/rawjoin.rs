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
//!   of their first interaction-side event. An observation joins nothing
//!   only when no interaction has its key (an orphan).
//! - **A window** (`eud: Some(w)`): an observation at time `u` joins the
//!   group whose first event is at `t` when `t - skew <= u <= t + w`.
//!   Each stream's inputs are read one after the other (rotated files, in
//!   time order); the interaction and episode streams are merged by time,
//!   and read at most `w + skew` ahead of the observations, which may be
//!   out of time order by up to the skew;
//!   a group is complete, and handed out, once the observations have
//!   passed `t + w + skew`. Every event needs a client time. An event
//!   earlier than one before it in its stream by more than the skew (the
//!   stream goes back in time) is counted in [`Report::went_back`], with
//!   where the first one is: the groups it should have joined may have
//!   been handed out already.
//!
//! An observation that joins nothing is handed out as unjoined, with why:
//! late (its interaction's group was handed out before it came: it is
//! after its window, or its stream went back in time further than the
//! skew), early (it is before its interaction by more than the skew, or
//! its interaction is further ahead than the join reads), or orphan (no
//! interaction in the input has its key).
//!
//! Memory with a window: the events of one window, and two sets of keys
//! in a fixed number of bits (each about a 128th of the interaction
//! streams' bytes, 16 MiB at most): the keys read so far, and every key of
//! the interaction side, collected by a pass of its own over those streams
//! the first time an observation finds its key neither in an open group
//! nor read (an orphan, or one early by more than the join reads ahead).
//! With them a handed-out group is told from one ahead and from none; they
//! may answer "yes" for a key they do not hold (rarely: then an orphan
//! counts as early or late, or an early observation as late), never "no"
//! for one they do.
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

mod keys;
mod read;

use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use fb_schema::PayloadType;

use crate::Error;
use keys::KeySet;
use read::{Chain, Cursor, SideReader};
pub use read::{Damage, Read, WentBack};

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

impl Side {
    /// The stream an event of this payload type belongs to.
    pub fn of(kind: PayloadType) -> Self {
        match kind {
            PayloadType::Outcome => Side::Observations,
            PayloadType::Episode => Side::Episodes,
            _ => Side::Interactions,
        }
    }

    /// The stream as the CLI names it.
    pub fn name(self) -> &'static str {
        match self {
            Side::Interactions => "interactions",
            Side::Episodes => "episodes",
            Side::Observations => "observations",
        }
    }
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

/// Why an observation joined nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Its interaction's group was handed out before it came: it is after
    /// its window, or its stream went back in time by more than the skew.
    Late,
    /// It is earlier than its interaction by more than the skew, or its
    /// interaction lies further ahead in the streams than the window reads.
    Early,
    /// No interaction in the input has its key.
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
    /// Observations that came after their group was handed out
    /// ([`Why::Late`]).
    pub late: u64,
    /// Observations before their interaction ([`Why::Early`]).
    pub early: u64,
    /// Observations whose key no interaction has ([`Why::Orphan`]).
    pub orphans: u64,
    /// Batches skipped or inputs ended by damage.
    pub damage: Vec<Damage>,
    /// With a window: the inputs that go back in time by more than the
    /// skew, in the order of inputs given.
    pub went_back: Vec<WentBack>,
    /// The most groups held at once (the window's size, with a window).
    pub most_pending: usize,
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
    inputs: &'s [Input<'a>],
    release: &'s mut dyn FnMut(usize, Range<u64>),
    report: Report,
    sink: &'s mut dyn FnMut(Item<'a>) -> std::io::Result<()>,
    /// Groups (and DedupInfos) in arrival order; `base` numbers the first.
    open: VecDeque<Open<'a>>,
    base: u64,
    by_key: HashMap<&'a str, u64>,
    /// With a window: the keys met, to tell late, early and orphan apart
    /// once a group is handed out. Filters of hashes, not the keys: a
    /// key's bytes lie in a batch whose pages the caller may give back
    /// once the window has passed it, and reading them again would fault
    /// them back in for good.
    known: Option<InteractionKeys>,
}

/// The interaction-side keys read so far, and all of them (collected by
/// a pass of their own the first time an observation needs them).
struct InteractionKeys {
    read: KeySet,
    everywhere: Option<KeySet>,
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
        if let Some(known) = self.known.as_mut() {
            known.read.insert(read.event.id);
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
            None => self.why_not_open(read.event.id),
        };
        match why {
            Why::Late => self.report.late += 1,
            Why::Early => self.report.early += 1,
            Why::Orphan => self.report.orphans += 1,
        }
        self.emit(Item::Unjoined(read, why))
    }

    /// Why an observation whose key has no open group joins nothing.
    fn why_not_open(&mut self, key: &str) -> Why {
        let Some(known) = self.known.as_mut() else {
            // Without a window every interaction is read first.
            return Why::Orphan;
        };
        if known.read.contains(key) {
            return Why::Late;
        }
        let (inputs, recover) = (self.inputs, self.cfg.recover);
        let release = &mut *self.release;
        let everywhere = known
            .everywhere
            .get_or_insert_with(|| keys_everywhere(inputs, recover, release));
        if everywhere.contains(key) {
            Why::Early
        } else {
            Why::Orphan
        }
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
        self.report.groups += 1;
        let mut events = first.events;
        events.extend(first.observations);
        self.emit(Item::Group(events))
    }

    /// Hands out the groups no observation at `watermark` or later can
    /// join.
    fn close_before(&mut self, watermark: i64) -> Result<(), Error> {
        let skew = self.cfg.skew;
        while self
            .open
            .front()
            .is_some_and(|g| g.deadline.saturating_add(skew) < watermark)
        {
            self.close_first()?;
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
            keep(c.input, c.at.offset);
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

/// Bytes of an input read by the first pass between two calls of
/// `release`.
const RELEASE_BYTES: u64 = 8 << 20;

/// The keys of every interaction-side event of `inputs` (DedupInfo
/// aside), read in a pass of their own: a join with a window needs them
/// only for an observation that finds its key neither open nor read, so
/// streams in which every observation comes after its interaction are
/// read once. Damage is left for the join itself to report; pages are
/// given back as the pass leaves them (those a window still borrows are
/// read back from the file when touched).
fn keys_everywhere(
    inputs: &[Input<'_>],
    recover: bool,
    release: &mut dyn FnMut(usize, Range<u64>),
) -> KeySet {
    let interaction_side = || {
        inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.side != Side::Observations)
    };
    let bytes = interaction_side().map(|(_, i)| i.bytes.len() as u64).sum();
    let mut keys = KeySet::for_bytes(bytes);
    let mut damage = Vec::new();
    for (k, input) in interaction_side() {
        let mut cursor = Cursor::new(k, input.bytes);
        let mut released = 0;
        while let Some(read) = cursor.next(recover, &mut damage) {
            if read.event.kind != PayloadType::DedupInfo {
                keys.insert(read.event.id);
            }
            if read.offset.saturating_sub(released) >= RELEASE_BYTES {
                release(k, released..read.offset);
                released = read.offset;
            }
            damage.clear();
        }
        release(k, released..input.bytes.len() as u64);
    }
    keys
}

/// Joins the raw streams `inputs`, handing each group, DedupInfo and
/// unjoined observation to `sink` in output order.
///
/// With a window, `release(input, range)` is called from time to time:
/// nothing of `input` in `range` is borrowed any more, nor before it in
/// the pass that calls (a mapped input can give those pages back; a page
/// given back that is touched again is read back from the file). Each pass
/// over an input gives ranges front to back, from 0.
///
/// Damaged input is reported (what was read before it is joined); an
/// error stops the join: a write that failed, or an event without client
/// time under a window.
pub fn join<'a>(
    inputs: &[Input<'a>],
    cfg: Config,
    sink: &mut dyn FnMut(Item<'a>) -> std::io::Result<()>,
    release: &mut dyn FnMut(usize, Range<u64>),
) -> Result<Report, Error> {
    let windowed = cfg.eud.is_some();
    let skew = windowed.then_some(cfg.skew);
    let chain = |want: Side| {
        let cursors = inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.side == want)
            .map(|(k, i)| Cursor::new(k, i.bytes))
            .collect();
        Chain::new(cursors, skew)
    };
    let mut interactions = SideReader::new(
        vec![chain(Side::Interactions), chain(Side::Episodes)],
        windowed,
    );
    let mut observations = SideReader::new(vec![chain(Side::Observations)], windowed);
    let recover = cfg.recover;
    let known = windowed.then(|| InteractionKeys {
        everywhere: None,
        read: KeySet::for_bytes(
            inputs
                .iter()
                .filter(|i| i.side != Side::Observations)
                .map(|i| i.bytes.len() as u64)
                .sum(),
        ),
    });
    let mut state = State {
        cfg,
        inputs,
        release,
        report: Report::default(),
        sink,
        open: VecDeque::new(),
        base: 0,
        by_key: HashMap::new(),
        known,
    };
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
            let mut released = vec![0u64; inputs.len()];
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
                    for ((input, offset), done) in low.into_iter().enumerate().zip(&mut released) {
                        if offset != u64::MAX && offset > *done {
                            (state.release)(input, *done..offset);
                            *done = offset;
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
    let mut went_back: Vec<WentBack> = [interactions, observations]
        .into_iter()
        .flat_map(|side| side.chains)
        .flat_map(|chain| chain.went_back)
        .collect();
    went_back.sort_by_key(|w| w.input);
    report.went_back = went_back;
    Ok(report)
}
