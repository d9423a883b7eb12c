//! Reading a REGULAR message's event list without verifying it: for the
//! readers that only count, find or cut out events (an index, salvage,
//! sampling, raw streams).
//!
//! Nothing here verifies a buffer or leads to unchecked access: every
//! step goes through the bounds-checked walk of `fb_schema::walk`, and
//! what is read is only what these readers need. A buffer they hand on
//! (an event's bytes) is still to be verified by its reader.

use fb_schema::fields::{event, joined_event, joined_payload, metadata};
use fb_schema::walk::{Check, TIMESTAMP, U32, U8};
use fb_schema::{PayloadType, TimeStamp};

/// Where the event list of a `JoinedPayload` is, read from a buffer that
/// may be cut short or damaged: how many events it lists, and where its
/// offsets start. Nothing else of the buffer is checked (see
/// [`listed_event`]); `None` when the root table or the list's length
/// cannot be read.
pub fn event_list(buf: &[u8]) -> Option<(usize, usize)> {
    let mut c = Check::<false>::new(buf);
    let root = c.follow(0)?;
    let t = c.table(root)?;
    let pos = c.field(t, joined_payload::events)?;
    let at = c.follow(pos)?;
    let len = c.u32_at(at)?;
    Some((len, at.checked_add(4)?))
}

/// Event `i` of the list whose offsets start at `start` (from
/// [`event_list`]), checked on its own as the verifier checks a
/// `JoinedEvent`: where its table is, its `event` bytes (a nested buffer,
/// still to be verified as an `Event`) and its timestamp. The error says
/// what could not be read.
pub fn listed_event(
    buf: &[u8],
    start: usize,
    i: usize,
) -> Result<(usize, &[u8], TimeStamp), &'static str> {
    let mut c = Check::<false>::new(buf);
    let slot = i
        .checked_mul(4)
        .and_then(|n| start.checked_add(n))
        .ok_or("its place in the event list is out of range")?;
    let pos = c
        .follow(slot)
        .ok_or("its offset in the event list is not there")?;
    let Some(t) = c.table(pos) else {
        return guessed_layout(buf, pos);
    };
    let event = c
        .bytes_field(t, joined_event::event)
        .ok_or("its event bytes are not there")?
        .ok_or("it has no event bytes")?;
    let stamp = c
        .value_field::<12, 1>(t, joined_event::timestamp)
        .ok_or("its timestamp is not there")?
        .ok_or("it has no timestamp")?;
    Ok((pos, event, TimeStamp(stamp)))
}

/// What a reader that only counts and finds events (an index) takes of
/// each event of a REGULAR message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Skimmed<'a> {
    /// When the joiner enqueued the event (`JoinedEvent.timestamp`).
    pub enqueued: TimeStamp,
    /// The nested `Event` buffer, not verified.
    pub event: &'a [u8],
    /// `meta.id`'s bytes (not checked as UTF-8).
    pub id: &'a [u8],
    /// `meta.payload_type` (`CB` when absent, as the accessor says).
    pub payload_type: PayloadType,
    /// `meta.client_time_utc`.
    pub client_time: Option<TimeStamp>,
}

/// The events of a `JoinedPayload`, read for [`Skimmed`] and nothing
/// more, in one pass: no verifier runs. Every offset, table, vtable and
/// field it reads is checked where it is read (bounds, alignment, signed
/// vtable offsets), as the verifier would check it; what it does not read
/// (other fields, the event's payload, other metadata) is not looked at.
/// For a buffer the verifiers accept it reads what the accessors read
/// (tested in `fb-format/tests/skim.rs` and by the `decode` fuzz target);
/// damage in what it does not read goes unseen here, and is left to the
/// readers that read it.
///
/// Yields `Some(Some(event))` per event and `None` after the last.
/// `Some(None)` means "not here": a read failed, or `event`,
/// `timestamp`, `meta` or `meta.id` is absent. The caller then reads the
/// message through the verifiers, which say what is wrong; whatever this
/// yielded before is to be dropped.
pub struct SkimmedEvents<'a> {
    c: Check<'a, false>,
    /// Where the list's offsets start, and how many it holds.
    start: usize,
    len: usize,
    next: usize,
    failed: bool,
}

impl<'a> SkimmedEvents<'a> {
    /// The events of the `JoinedPayload` in `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        let mut walk = Self {
            c: Check::new(buf),
            start: 0,
            len: 0,
            next: 0,
            failed: false,
        };
        match walk.list() {
            Some((start, len)) => (walk.start, walk.len) = (start, len),
            None => walk.failed = true,
        }
        walk
    }

    /// The list's start and length, `(0, 0)` when the payload has none.
    fn list(&mut self) -> Option<(usize, usize)> {
        let root = self.c.follow(0)?;
        let t = self.c.table(root)?;
        match self.c.field(t, joined_payload::events) {
            Some(pos) => {
                let at = self.c.follow(pos)?;
                self.c.vector(at, U32)
            }
            None => Some((0, 0)),
        }
    }

    /// Event `i` of the list.
    #[inline(always)]
    fn event(&mut self, i: usize) -> Option<Skimmed<'a>> {
        // `start + 4 i` lies in the list the vector check found in bounds.
        let pos = self.c.follow(self.start + 4 * i)?;
        let t = self.c.table(pos)?;
        let event = self.c.bytes_field(t, joined_event::event)??;
        let stamp = self
            .c
            .value_field::<12, { TIMESTAMP.1 }>(t, joined_event::timestamp)??;
        let mut e = Check::<false>::new(event);
        let root = e.follow(0)?;
        let t = e.table(root)?;
        let meta = e.field(t, event::meta)?;
        let at = e.follow(meta)?;
        let m = e.table(at)?;
        let id = e.string_bytes_field(m, metadata::id)??;
        let client_time = e
            .value_field::<12, { TIMESTAMP.1 }>(m, metadata::client_time_utc)?
            .map(TimeStamp);
        let payload_type = e.value_field::<1, 1>(m, metadata::payload_type)?;
        Some(Skimmed {
            enqueued: TimeStamp(stamp),
            event,
            id,
            payload_type: payload_type.map_or(PayloadType::CB, |[b]| PayloadType(b)),
            client_time,
        })
    }
}

impl<'a> Iterator for SkimmedEvents<'a> {
    type Item = Option<Skimmed<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            // Said once; then the walk is over.
            self.failed = false;
            self.next = self.len;
            return Some(None);
        }
        if self.next >= self.len {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let event = self.event(i);
        if event.is_none() {
            self.next = self.len;
        }
        Some(event)
    }
}

/// `JoinedEvent` layouts the known writers produce: (table length, offset
/// of `event`, offset of `timestamp`). The reference's C++ builder puts the
/// struct first; flatbuffers for Rust (fb-writer) the offset first.
const KNOWN_LAYOUTS: [(usize, usize, usize); 2] = [(20, 16, 4), (20, 4, 8)];

/// A `JoinedEvent` table whose vtable is not in `buf`. Builders share one
/// vtable among all the tables of a type and write it with the first one
/// built, event 0, at the very end of the payload: a cut message loses it
/// with its first events, while the tables of the last events are whole.
/// Each known layout is tried; the first whose `event` vector lies in
/// `buf` and whose timestamp is a calendar time is taken. The caller must
/// hold what it reads to more than that (the nested `Event` verifies).
fn guessed_layout(buf: &[u8], pos: usize) -> Result<(usize, &[u8], TimeStamp), &'static str> {
    let mut c = Check::<false>::new(buf);
    for (len, event_at, stamp_at) in KNOWN_LAYOUTS {
        if pos.checked_add(len).is_none_or(|end| end > buf.len()) {
            continue;
        }
        let Some(at) = c.follow(pos + event_at) else {
            continue;
        };
        let Some((start, n)) = c.vector(at, U8) else {
            continue;
        };
        let Some(event) = buf.get(start..start + n) else {
            continue;
        };
        let Some(stamp) = c.bytes::<12, 1>(pos + stamp_at).map(TimeStamp) else {
            continue;
        };
        if is_calendar_time(&stamp) {
            return Ok((pos, event, stamp));
        }
    }
    // Cut: the vtable went with the first events. Corrupt: the offset or
    // the table is damaged. Either way, no layout reads it.
    Err("its table cannot be read (its vtable is not there, and no known layout fits)")
}

/// A date and time that exist (subseconds below a second in any unit the
/// writers use: 10^7 ticks).
fn is_calendar_time(t: &TimeStamp) -> bool {
    let (year, month, day) = (t.year(), t.month(), t.day());
    (1..=12).contains(&month)
        && day >= 1
        && u32::from(day) <= days_in_month(i64::from(year), u32::from(month))
        && t.hour() < 24
        && t.minute() < 60
        && t.second() < 61
        && t.subsecond() < 10_000_000
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let next = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    (fb_schema::calendar::days_from_civil(next.0, next.1, 1)
        - fb_schema::calendar::days_from_civil(year, month, 1)) as u32
}
