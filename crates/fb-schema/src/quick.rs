//! A fast verifier for the tables on the conversion hot path.
//!
//! The flatbuffers verifier builds an error trace entry (a `Cow` field
//! name) around every field it visits, even when nothing is wrong; on small
//! tables that bookkeeping costs more than the checks. This module checks
//! the same things for the tables every event goes through — the same
//! ranges, alignments, signed vtable offsets, UTF-8 and terminators, table
//! count and apparent size — with no bookkeeping, and answers only yes or
//! no. A "no" falls back to the flatbuffers verifier, which decides and
//! explains; a "yes" must never be given where flatbuffers would refuse
//! (the differential tests in `tests.rs` hold it to that).

use crate::{
    CaEvent, CbEvent, DedupInfo, EpisodeEvent, Event, EventEncoding, IndexValue, JoinedEvent,
    JoinedPayload, LearningModeType, Metadata, MultiSlotEvent, MultiStepEvent, NumericIndex,
    NumericOutcome, OutcomeEvent, OutcomeValue, PayloadType, SlotEvent, TimeStamp, UNION_LITERAL,
    UNION_NONE, UNION_NUMERIC,
};

/// Tables of the hot path, with a yes-or-no verifier of their own.
///
/// Sealed: only this crate implements it, for the tables listed in
/// [`MIRROR`]. Each implementation accepts only buffers that
/// [`verified`](crate::verified) accepts, because a `true` lets
/// [`verified_quick`](crate::verified_quick) read the buffer unchecked
/// (an implementation outside this crate that broke that promise would
/// reach undefined behaviour from safe code, hence the seal). A `false`
/// only means "ask the flatbuffers verifier".
///
/// ```compile_fail
/// // Outside this crate the trait cannot be implemented.
/// struct Lenient;
/// impl fb_schema::QuickVerify for Lenient {
///     fn quick(_: &[u8]) -> bool {
///         true
///     }
/// }
/// ```
pub trait QuickVerify: sealed::Sealed {
    /// True when `buf` is certainly a valid flatbuffer with this root.
    fn quick(buf: &[u8]) -> bool;
}

mod sealed {
    /// Keeps [`super::QuickVerify`] to the tables this crate checks.
    pub trait Sealed {}
}

/// Every field the checks in this file read, with the type they read it
/// as and its vtable offset from the generated code:
/// `(table, field, schema type, VT_ offset)`. The checks are a hand-made
/// mirror of the schema; the test `quick_mirror_matches_the_schema`
/// compares this list with `schema/*.fbs` (names, types, field order and
/// vtable offsets, and that each mirrored table has no other field), so a
/// schema change that the checks do not follow fails `cargo test`. Keep it
/// in step with the check functions below.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const MIRROR: &[(&str, &str, &str, u16)] = &[
    (
        "JoinedPayload",
        "events",
        "[JoinedEvent]",
        JoinedPayload::VT_EVENTS,
    ),
    ("JoinedEvent", "event", "[ubyte]", JoinedEvent::VT_EVENT),
    (
        "JoinedEvent",
        "timestamp",
        "TimeStamp",
        JoinedEvent::VT_TIMESTAMP,
    ),
    ("Event", "meta", "Metadata", Event::VT_META),
    ("Event", "payload", "[ubyte]", Event::VT_PAYLOAD),
    ("Metadata", "id", "string", Metadata::VT_ID),
    (
        "Metadata",
        "client_time_utc",
        "TimeStamp",
        Metadata::VT_CLIENT_TIME_UTC,
    ),
    ("Metadata", "app_id", "string", Metadata::VT_APP_ID),
    (
        "Metadata",
        "payload_type",
        "PayloadType",
        Metadata::VT_PAYLOAD_TYPE,
    ),
    (
        "Metadata",
        "pass_probability",
        "float",
        Metadata::VT_PASS_PROBABILITY,
    ),
    (
        "Metadata",
        "encoding",
        "EventEncoding",
        Metadata::VT_ENCODING,
    ),
    (
        "CbEvent",
        "deferred_action",
        "bool",
        CbEvent::VT_DEFERRED_ACTION,
    ),
    ("CbEvent", "action_ids", "[ulong]", CbEvent::VT_ACTION_IDS),
    ("CbEvent", "context", "[ubyte]", CbEvent::VT_CONTEXT),
    (
        "CbEvent",
        "probabilities",
        "[float]",
        CbEvent::VT_PROBABILITIES,
    ),
    ("CbEvent", "model_id", "string", CbEvent::VT_MODEL_ID),
    (
        "CbEvent",
        "learning_mode",
        "LearningModeType",
        CbEvent::VT_LEARNING_MODE,
    ),
    (
        "SlotEvent",
        "action_ids",
        "[uint]",
        SlotEvent::VT_ACTION_IDS,
    ),
    (
        "SlotEvent",
        "probabilities",
        "[float]",
        SlotEvent::VT_PROBABILITIES,
    ),
    ("SlotEvent", "id", "string", SlotEvent::VT_ID),
    (
        "MultiSlotEvent",
        "context",
        "[ubyte]",
        MultiSlotEvent::VT_CONTEXT,
    ),
    (
        "MultiSlotEvent",
        "slots",
        "[SlotEvent]",
        MultiSlotEvent::VT_SLOTS,
    ),
    (
        "MultiSlotEvent",
        "model_id",
        "string",
        MultiSlotEvent::VT_MODEL_ID,
    ),
    (
        "MultiSlotEvent",
        "deferred_action",
        "bool",
        MultiSlotEvent::VT_DEFERRED_ACTION,
    ),
    (
        "MultiSlotEvent",
        "baseline_actions",
        "[int]",
        MultiSlotEvent::VT_BASELINE_ACTIONS,
    ),
    (
        "MultiSlotEvent",
        "learning_mode",
        "LearningModeType",
        MultiSlotEvent::VT_LEARNING_MODE,
    ),
    (
        "CaEvent",
        "deferred_action",
        "bool",
        CaEvent::VT_DEFERRED_ACTION,
    ),
    ("CaEvent", "action", "float", CaEvent::VT_ACTION),
    ("CaEvent", "context", "[ubyte]", CaEvent::VT_CONTEXT),
    ("CaEvent", "pdf_value", "float", CaEvent::VT_PDF_VALUE),
    ("CaEvent", "model_id", "string", CaEvent::VT_MODEL_ID),
    (
        "CaEvent",
        "learning_mode",
        "LearningModeType",
        CaEvent::VT_LEARNING_MODE,
    ),
    (
        "MultiStepEvent",
        "event_id",
        "string",
        MultiStepEvent::VT_EVENT_ID,
    ),
    (
        "MultiStepEvent",
        "previous_id",
        "string",
        MultiStepEvent::VT_PREVIOUS_ID,
    ),
    (
        "MultiStepEvent",
        "action_ids",
        "[ulong]",
        MultiStepEvent::VT_ACTION_IDS,
    ),
    (
        "MultiStepEvent",
        "context",
        "[ubyte]",
        MultiStepEvent::VT_CONTEXT,
    ),
    (
        "MultiStepEvent",
        "probabilities",
        "[float]",
        MultiStepEvent::VT_PROBABILITIES,
    ),
    (
        "MultiStepEvent",
        "model_id",
        "string",
        MultiStepEvent::VT_MODEL_ID,
    ),
    (
        "MultiStepEvent",
        "deferred_action",
        "bool",
        MultiStepEvent::VT_DEFERRED_ACTION,
    ),
    (
        "OutcomeEvent",
        "value",
        "OutcomeValue",
        OutcomeEvent::VT_VALUE,
    ),
    (
        "OutcomeEvent",
        "index",
        "IndexValue",
        OutcomeEvent::VT_INDEX,
    ),
    (
        "OutcomeEvent",
        "action_taken",
        "bool",
        OutcomeEvent::VT_ACTION_TAKEN,
    ),
    ("NumericOutcome", "value", "float", NumericOutcome::VT_VALUE),
    ("NumericIndex", "index", "int", NumericIndex::VT_INDEX),
    ("DedupInfo", "ids", "[ulong]", DedupInfo::VT_IDS),
    ("DedupInfo", "values", "[string]", DedupInfo::VT_VALUES),
];

// Limits stricter than `verifier_options()`, so that a "yes" here never
// meets a limit there: half the apparent size, a tenth of the tables.
const APPARENT_LIMIT: usize = 1 << 30;
const TABLE_LIMIT: usize = 1_000_000;

const U8: (usize, usize) = (1, 1);
const U32: (usize, usize) = (4, 4);
const U64: (usize, usize) = (8, 8);
/// `TimeStamp`: 12 bytes, alignment 1 as far as the verifier checks.
const TIMESTAMP: (usize, usize) = (12, 1);

/// True when `pos` is a multiple of `align`, a power of two: a mask, where
/// `%` by a value the compiler cannot see would be a division.
#[inline(always)]
fn aligned(pos: usize, align: usize) -> bool {
    pos & align.wrapping_sub(1) == 0
}

#[derive(Clone, Copy)]
struct Table<'b> {
    pos: usize,
    /// The vtable's bytes, its length field included.
    vtable: &'b [u8],
}

/// A walk over a buffer, checking what flatbuffers checks. With `COUNT`,
/// it also counts tables and apparent size as flatbuffers does; without,
/// it is for tables of a fixed shape in buffers of at most [`FIXED_LIMIT`]
/// bytes, which cannot approach either limit (see there).
struct Check<'b, const COUNT: bool = true> {
    buf: &'b [u8],
    /// Bytes the flatbuffers verifier would have counted so far. Compared
    /// with the limit before each string scan (the only work that could
    /// grow faster than the buffer) and at the end.
    apparent: usize,
    tables: usize,
}

/// The largest buffer the fixed-shape checks (`event_parts`, `cb_parts`,
/// `outcome_parts`) take; larger ones go to the flatbuffers verifier.
///
/// Those checks visit at most three tables and a handful of fields, so
/// what flatbuffers counts is at most three vtables (3 x 64 KiB), a few
/// hundred bytes of scalars and offsets, and four vectors or strings of at
/// most the buffer's length each: under 2^28 bytes for a buffer of 2^26,
/// far below the apparent-size limit, and three tables are far below the
/// table limit. Not counting spares a chain of additions through every
/// field of every event.
const FIXED_LIMIT: usize = 1 << 26;

impl<'b, const COUNT: bool> Check<'b, COUNT> {
    /// Adds `n` bytes to the apparent size, when counting.
    #[inline(always)]
    fn count(&mut self, n: usize) {
        if COUNT {
            self.apparent = self.apparent.saturating_add(n);
        }
    }

    fn new(buf: &'b [u8]) -> Self {
        Self {
            buf,
            apparent: 0,
            tables: 0,
        }
    }

    /// The `N` bytes at `pos`, which must be aligned to `align` (relative
    /// to the buffer); counted towards the apparent size.
    #[inline(always)]
    fn bytes<const N: usize, const ALIGN: usize>(&mut self, pos: usize) -> Option<[u8; N]> {
        self.bytes_ref::<N, ALIGN>(pos).copied()
    }

    /// [`Check::bytes`], borrowed: a struct field kept by its readers,
    /// which then need not copy it byte by byte.
    #[inline(always)]
    fn bytes_ref<const N: usize, const ALIGN: usize>(&mut self, pos: usize) -> Option<&'b [u8; N]> {
        // A constant: alignments of one cost nothing.
        if !aligned(pos, ALIGN) {
            return None;
        }
        let bytes = self.buf.get(pos..pos.checked_add(N)?)?.try_into().ok()?;
        self.count(N);
        Some(bytes)
    }

    /// A scalar of `size` bytes aligned to `align`.
    #[inline(always)]
    fn scalar(&mut self, pos: usize, (size, align): (usize, usize)) -> Option<()> {
        if !aligned(pos, align) || pos.checked_add(size)? > self.buf.len() {
            return None;
        }
        self.count(size);
        Some(())
    }

    #[inline(always)]
    fn u32_at(&mut self, pos: usize) -> Option<usize> {
        Some(u32::from_le_bytes(self.bytes::<4, 4>(pos)?) as usize)
    }

    /// Follows the forward offset stored at `pos`.
    #[inline(always)]
    fn follow(&mut self, pos: usize) -> Option<usize> {
        Some(self.u32_at(pos)?.saturating_add(pos))
    }

    #[inline(always)]
    fn table(&mut self, pos: usize) -> Option<Table<'b>> {
        let soffset = i32::from_le_bytes(self.bytes::<4, 4>(pos)?);
        let distance = soffset.unsigned_abs() as usize;
        let vtable = if soffset > 0 {
            pos.checked_sub(distance)?
        } else {
            pos.checked_add(distance)?
        };
        let vtable_len = usize::from(u16::from_le_bytes(self.bytes::<2, 2>(vtable)?));
        // `vtable` is even, so this asks for an even length.
        if !vtable_len.is_multiple_of(2) {
            return None;
        }
        let bytes = self.buf.get(vtable..vtable.checked_add(vtable_len)?)?;
        self.count(vtable_len);
        if COUNT {
            self.tables += 1;
        }
        Some(Table { pos, vtable: bytes })
    }

    /// Where field `voffset` (even) of `t` is, `None` when absent. The
    /// vtable was checked whole, so this cannot fail.
    #[inline(always)]
    fn field(&mut self, t: Table<'_>, voffset: usize) -> Option<usize> {
        let entry = t.vtable.get(voffset..)?.first_chunk::<2>()?;
        self.count(2);
        let at = usize::from(u16::from_le_bytes(*entry));
        // `pos` is inside the buffer and `at` below 2^16: no overflow.
        (at > 0).then(|| t.pos + at)
    }

    /// An optional scalar or struct field.
    #[inline(always)]
    fn scalar_field(&mut self, t: Table<'_>, voffset: usize, shape: (usize, usize)) -> Option<()> {
        match self.field(t, voffset) {
            Some(pos) => self.scalar(pos, shape),
            None => Some(()),
        }
    }

    /// A vector of `shape` elements at `pos`; returns where its elements
    /// start and their count.
    #[inline(always)]
    fn vector(&mut self, pos: usize, (size, align): (usize, usize)) -> Option<(usize, usize)> {
        let len = self.u32_at(pos)?;
        let start = pos.saturating_add(4);
        self.scalar(start, (len.saturating_mul(size), align))?;
        Some((start, len))
    }

    /// An optional vector-of-scalars field.
    #[inline(always)]
    fn vector_field(&mut self, t: Table<'_>, voffset: usize, shape: (usize, usize)) -> Option<()> {
        if let Some(pos) = self.field(t, voffset) {
            let at = self.follow(pos)?;
            self.vector(at, shape)?;
        }
        Some(())
    }

    fn string(&mut self, pos: usize) -> Option<()> {
        self.text(pos).map(|_| ())
    }

    /// The string at `pos`, checked as [`Check::string`] says.
    fn text(&mut self, pos: usize) -> Option<&'b str> {
        let (start, len) = self.vector(pos, U8)?;
        // Many vector elements may point at one long string: stop where
        // flatbuffers would, before the scans add up.
        if COUNT && self.apparent > APPARENT_LIMIT {
            return None;
        }
        let end = start.checked_add(len)?;
        let bytes = self.buf.get(start..end)?;
        if self.buf.get(end) != Some(&0) {
            return None;
        }
        // Ids and names are ASCII: a word-at-a-time test skips the decoder.
        if bytes.is_ascii() {
            // SAFETY: ASCII is UTF-8.
            return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
        }
        std::str::from_utf8(bytes).ok()
    }

    /// An optional string field's text.
    #[inline(always)]
    fn text_field(&mut self, t: Table<'_>, voffset: usize) -> Option<Option<&'b str>> {
        match self.field(t, voffset) {
            Some(pos) => {
                let at = self.follow(pos)?;
                Some(Some(self.text(at)?))
            }
            None => Some(None),
        }
    }

    /// An optional vector-of-scalars field's bytes.
    #[inline(always)]
    fn bytes_field(
        &mut self,
        t: Table<'_>,
        voffset: usize,
        shape: (usize, usize),
    ) -> Option<Option<&'b [u8]>> {
        match self.field(t, voffset) {
            Some(pos) => {
                let at = self.follow(pos)?;
                let (start, len) = self.vector(at, shape)?;
                let end = start.checked_add(len.checked_mul(shape.0)?)?;
                Some(Some(self.buf.get(start..end)?))
            }
            None => Some(None),
        }
    }

    /// An optional scalar field's `N` bytes, `None` when absent.
    #[inline(always)]
    fn value_field<const N: usize, const ALIGN: usize>(
        &mut self,
        t: Table<'_>,
        voffset: usize,
    ) -> Option<Option<[u8; N]>> {
        match self.field(t, voffset) {
            Some(pos) => Some(Some(self.bytes::<N, ALIGN>(pos)?)),
            None => Some(None),
        }
    }

    /// [`Check::value_field`], borrowed.
    #[inline(always)]
    fn value_ref<const N: usize, const ALIGN: usize>(
        &mut self,
        t: Table<'_>,
        voffset: usize,
    ) -> Option<Option<&'b [u8; N]>> {
        match self.field(t, voffset) {
            Some(pos) => Some(Some(self.bytes_ref::<N, ALIGN>(pos)?)),
            None => Some(None),
        }
    }

    /// The limits [`Check::root`] holds a whole buffer to.
    fn within_limits(&self) -> bool {
        !COUNT || (self.apparent <= APPARENT_LIMIT && self.tables <= TABLE_LIMIT)
    }

    /// An optional string field.
    #[inline(always)]
    fn string_field(&mut self, t: Table<'_>, voffset: usize) -> Option<()> {
        if let Some(pos) = self.field(t, voffset) {
            let at = self.follow(pos)?;
            self.string(at)?;
        }
        Some(())
    }

    /// An optional vector-of-tables (or strings) field, each element
    /// checked by `check`.
    fn vector_of(
        &mut self,
        t: Table<'_>,
        voffset: usize,
        check: fn(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        if let Some(pos) = self.field(t, voffset) {
            let at = self.follow(pos)?;
            let (start, len) = self.vector(at, U32)?;
            for i in 0..len {
                let element = self.follow(start.checked_add(i.checked_mul(4)?)?)?;
                check(self, element)?;
            }
        }
        Some(())
    }

    /// Runs `check` on the root table.
    fn root(buf: &'b [u8], check: fn(&mut Self, usize) -> Option<()>) -> bool {
        let mut c = Self::new(buf);
        let shape_ok = (|| {
            let at = c.follow(0)?;
            check(&mut c, at)
        })()
        .is_some();
        // Both counts only grow, so a total within the (stricter) limits
        // means flatbuffers never crossed its own on the way.
        shape_ok && c.within_limits()
    }
}

fn joined_payload<const COUNT: bool>(c: &mut Check<'_, COUNT>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_of(t, JoinedPayload::VT_EVENTS as usize, joined_event)
}

/// How many elements the root table's vector field `voffset` lists (the
/// events of a `JoinedPayload`, the slots of a `MultiSlotEvent`), when the
/// buffer's shape goes that far.
fn listed(buf: &[u8], voffset: usize) -> Option<usize> {
    let mut c = Check::<false>::new(buf);
    let root = c.follow(0)?;
    let t = c.table(root)?;
    let pos = c.field(t, voffset)?;
    let at = c.follow(pos)?;
    c.u32_at(at)
}

/// Events times (buffer length + 65,600) up to which a `JoinedPayload`
/// needs no counting.
///
/// Each event visited adds to what flatbuffers counts at most its vtable
/// (64 KiB), a few dozen bytes of offsets and fields, and its `event`
/// vector (at most the buffer's length); so within this budget the apparent
/// size stays under 2^29 + a little, far below the limit, and the tables
/// (one per event, under 2^29 / 65,600) far below theirs.
const VECTOR_BUDGET: usize = 1 << 29;

impl sealed::Sealed for JoinedPayload<'_> {}

/// Reads one byte of every cache line of `buf`, front to back, and
/// returns them folded (for `black_box`).
///
/// The verifier then visits one `JoinedEvent` table per event, from the
/// end of the payload to its front (event 0 is built first, so it lies
/// last), each a few hundred bytes from the next: from memory, every visit
/// is a cache miss the prefetcher does not see coming. A forward pass
/// streams the payload into the cache first: on the corpus-built CB bench
/// log (130 KB batches of 377 events) a conversion takes 7% less CPU time
/// (195 → 181 ms, five runs each); on the generated logs, whose batches
/// are small, nothing changes.
#[inline(never)]
fn warm(buf: &[u8]) -> u8 {
    let mut x = 0u8;
    for line in buf.chunks(64) {
        x ^= line.first().copied().unwrap_or(0);
    }
    x
}

/// Payloads above this are left to the verifier as they are: they do
/// not fit the cache that warming fills.
const WARM_LIMIT: usize = 1 << 20;

/// Payloads below this are not warmed: their few lines are asked for
/// while the message before is worked on (fb-format's readers ask for
/// the 2 KiB after each message, 4 KiB from its start at most; a stream's
/// bytes were just copied), and walking them cost 117 instructions a
/// 1 KB CCB message for nothing.
const WARM_FROM: usize = 4 << 10;

impl QuickVerify for JoinedPayload<'_> {
    fn quick(buf: &[u8]) -> bool {
        if (WARM_FROM..=WARM_LIMIT).contains(&buf.len()) {
            std::hint::black_box(warm(buf));
        }
        let events = listed(buf, JoinedPayload::VT_EVENTS as usize).unwrap_or(0);
        let within = buf.len() <= FIXED_LIMIT
            && events.saturating_mul(buf.len().saturating_add(65_600)) <= VECTOR_BUDGET;
        if within {
            Check::<false>::root(buf, joined_payload::<false>)
        } else {
            Check::<true>::root(buf, joined_payload::<true>)
        }
    }
}

fn joined_event<const COUNT: bool>(c: &mut Check<'_, COUNT>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, JoinedEvent::VT_EVENT as usize, U8)?;
    c.scalar_field(t, JoinedEvent::VT_TIMESTAMP as usize, TIMESTAMP)
}

/// What the hot path reads of a verified `Event` and its `Metadata`,
/// found while verifying: the accessors would walk the vtables again.
#[derive(Clone, Copy)]
pub struct EventParts<'a> {
    /// The event.
    pub event: Event<'a>,
    /// Its metadata, when present.
    pub meta: Option<Metadata<'a>>,
    /// `meta.id`.
    pub id: Option<&'a str>,
    /// `meta.payload_type` (`CB` when absent, as the accessor says).
    pub payload_type: PayloadType,
    /// `meta.encoding` (`Identity` when absent).
    pub encoding: EventEncoding,
    /// `meta.pass_probability` (0 when absent).
    pub pass_probability: f32,
    /// `meta.client_time_utc`'s bytes (a `TimeStamp`), borrowed: a copy
    /// made here would be read back in pieces its stores cannot serve.
    pub client_time: Option<&'a [u8; 12]>,
    /// The payload bytes as stored.
    pub payload: Option<&'a [u8]>,
}

/// The same parts read through the accessors, for a buffer only the
/// flatbuffers verifier accepted.
impl<'a> From<Event<'a>> for EventParts<'a> {
    fn from(event: Event<'a>) -> Self {
        let meta = event.meta();
        Self {
            event,
            meta,
            id: meta.and_then(|m| m.id()),
            payload_type: meta.map_or(PayloadType::CB, |m| m.payload_type()),
            encoding: meta.map_or(EventEncoding::Identity, |m| m.encoding()),
            pass_probability: meta.map_or(0.0, |m| m.pass_probability()),
            client_time: meta.and_then(|m| m.client_time_utc()).map(|t| &t.0),
            payload: event.payload().map(|v| v.bytes()),
        }
    }
}

/// Verifies `buf` as an `Event` (what `Event::quick` answers) and returns
/// its parts; `None` wherever that answer is no.
pub fn event_parts(buf: &[u8]) -> Option<EventParts<'_>> {
    if buf.len() > FIXED_LIMIT {
        return None;
    }
    let mut c = Check::<false>::new(buf);
    let root = c.follow(0)?;
    let t = c.table(root)?;
    let mut meta_at = None;
    let mut parts = MetaParts::default();
    if let Some(pos) = c.field(t, Event::VT_META as usize) {
        let at = c.follow(pos)?;
        parts = metadata(&mut c, at)?;
        meta_at = Some(at);
    }
    let payload = c.bytes_field(t, Event::VT_PAYLOAD as usize, U8)?;
    if !c.within_limits() {
        return None;
    }
    // SAFETY: the checks above are those of the flatbuffers verifier for an
    // `Event` root (tested against it in `tests.rs`), which is what
    // `root_unchecked` and `Table::new` ask; `meta_at` is the metadata
    // table they checked.
    let event = unsafe { flatbuffers::root_unchecked::<Event>(buf) };
    let meta =
        meta_at.map(|at| unsafe { Metadata::init_from_table(flatbuffers::Table::new(buf, at)) });
    Some(EventParts {
        event,
        meta,
        id: parts.id,
        payload_type: parts.payload_type,
        encoding: parts.encoding,
        pass_probability: parts.pass_probability,
        client_time: parts.client_time,
        payload,
    })
}

/// The `Metadata` fields of [`EventParts`], with the accessors' defaults.
struct MetaParts<'a> {
    id: Option<&'a str>,
    payload_type: PayloadType,
    encoding: EventEncoding,
    pass_probability: f32,
    client_time: Option<&'a [u8; 12]>,
}

impl Default for MetaParts<'_> {
    fn default() -> Self {
        Self {
            id: None,
            payload_type: PayloadType::CB,
            encoding: EventEncoding::Identity,
            pass_probability: 0.0,
            client_time: None,
        }
    }
}

fn metadata<'b>(c: &mut Check<'b, false>, pos: usize) -> Option<MetaParts<'b>> {
    let t = c.table(pos)?;
    let id = c.text_field(t, Metadata::VT_ID as usize)?;
    let client_time = c.value_ref::<12, 1>(t, Metadata::VT_CLIENT_TIME_UTC as usize)?;
    c.string_field(t, Metadata::VT_APP_ID as usize)?;
    let payload_type = c.value_field::<1, 1>(t, Metadata::VT_PAYLOAD_TYPE as usize)?;
    let pass = c.value_field::<4, 4>(t, Metadata::VT_PASS_PROBABILITY as usize)?;
    let encoding = c.value_field::<1, 1>(t, Metadata::VT_ENCODING as usize)?;
    Some(MetaParts {
        id,
        payload_type: payload_type.map_or(PayloadType::CB, |[b]| PayloadType(b)),
        encoding: encoding.map_or(EventEncoding::Identity, |[b]| EventEncoding(b)),
        pass_probability: pass.map_or(0.0, f32::from_le_bytes),
        client_time,
    })
}

/// What the joiner reads of a verified `CbEvent`, found while verifying.
#[derive(Debug, Clone, Copy)]
pub struct CbParts<'a> {
    /// `deferred_action` (false when absent).
    pub deferred_action: bool,
    /// `action_ids`: little-endian u64s.
    pub action_ids: Option<&'a [u8]>,
    /// `context`.
    pub context: Option<&'a [u8]>,
    /// `probabilities`: little-endian f32s.
    pub probabilities: Option<&'a [u8]>,
    /// `model_id`.
    pub model_id: Option<&'a str>,
    /// `learning_mode` (`Online` when absent).
    pub learning_mode: LearningModeType,
}

/// The same parts read through the accessors, for a buffer only the
/// flatbuffers verifier accepted.
impl<'a> From<CbEvent<'a>> for CbParts<'a> {
    fn from(cb: CbEvent<'a>) -> Self {
        Self {
            deferred_action: cb.deferred_action(),
            action_ids: cb.action_ids().map(|v| v.bytes()),
            context: cb.context().map(|v| v.bytes()),
            probabilities: cb.probabilities().map(|v| v.bytes()),
            model_id: cb.model_id(),
            learning_mode: cb.learning_mode(),
        }
    }
}

/// Verifies `buf` as a `CbEvent` (what `CbEvent::quick` answers) and
/// returns its parts; `None` wherever that answer is no.
pub fn cb_parts(buf: &[u8]) -> Option<CbParts<'_>> {
    if buf.len() > FIXED_LIMIT {
        return None;
    }
    let mut c = Check::<false>::new(buf);
    let root = c.follow(0)?;
    let parts = cb(&mut c, root)?;
    c.within_limits().then_some(parts)
}

fn cb<'b>(c: &mut Check<'b, false>, pos: usize) -> Option<CbParts<'b>> {
    let t = c.table(pos)?;
    let deferred = c.value_field::<1, 1>(t, CbEvent::VT_DEFERRED_ACTION as usize)?;
    let action_ids = c.bytes_field(t, CbEvent::VT_ACTION_IDS as usize, U64)?;
    let context = c.bytes_field(t, CbEvent::VT_CONTEXT as usize, U8)?;
    let probabilities = c.bytes_field(t, CbEvent::VT_PROBABILITIES as usize, U32)?;
    let model_id = c.text_field(t, CbEvent::VT_MODEL_ID as usize)?;
    let mode = c.value_field::<1, 1>(t, CbEvent::VT_LEARNING_MODE as usize)?;
    Some(CbParts {
        deferred_action: deferred.is_some_and(|[b]| b != 0),
        action_ids,
        context,
        probabilities,
        model_id,
        learning_mode: mode.map_or(LearningModeType::Online, |[b]| LearningModeType(b)),
    })
}

/// What the joiner reads of a verified `MultiSlotEvent` besides its
/// slots, found while verifying.
#[derive(Debug, Clone, Copy)]
pub struct MultiSlotParts<'a> {
    /// `context`.
    pub context: Option<&'a [u8]>,
    /// Whether `slots` is present (its elements went to the closure).
    pub has_slots: bool,
    /// `model_id`.
    pub model_id: Option<&'a str>,
    /// `deferred_action` (false when absent).
    pub deferred_action: bool,
    /// `baseline_actions`: little-endian i32s.
    pub baseline_actions: Option<&'a [u8]>,
    /// `learning_mode` (`Online` when absent).
    pub learning_mode: LearningModeType,
}

/// What the joiner reads of one `SlotEvent`.
#[derive(Debug, Clone, Copy)]
pub struct SlotParts<'a> {
    /// `id`.
    pub id: Option<&'a str>,
    /// `action_ids`: little-endian u32s.
    pub action_ids: Option<&'a [u8]>,
    /// `probabilities`: little-endian f32s.
    pub probabilities: Option<&'a [u8]>,
}

/// Verifies `buf` as a `MultiSlotEvent` (what `MultiSlotEvent::quick`
/// answers) and returns its parts, handing each slot's to `slot` with its
/// index as it is verified; `None` wherever that answer is no, and then
/// `slot` may have been called for the slots before the one that failed.
///
/// The accessors would walk every vtable again: for a CCB decision of two
/// slots that was a tenth of the decision's way through the joiner.
pub fn multi_slot_parts<'a>(
    buf: &'a [u8],
    slot: impl FnMut(usize, SlotParts<'a>),
) -> Option<MultiSlotParts<'a>> {
    // Each table visited (the root, and each slot) adds to what
    // flatbuffers counts at most its vtable (64 KiB), a few hundred bytes
    // of offsets, fields and lengths, and four vectors or strings of at
    // most the buffer's length (the root's `context`, `slots`, `model_id`
    // and `baseline_actions`; a slot's three). So (slots + 1) x (4 x
    // length + 65,800) within [`VECTOR_BUDGET`] keeps the apparent size
    // under 2^29 and the tables under 2^29 / 65,800, far below both
    // limits: such a buffer is walked without counting, which saved a
    // twentieth of a CCB decision's way through the joiner.
    let slots = listed(buf, MultiSlotEvent::VT_SLOTS as usize).unwrap_or(0);
    let within = buf.len() <= FIXED_LIMIT
        && slots
            .saturating_add(1)
            .saturating_mul(buf.len().saturating_mul(4).saturating_add(65_800))
            <= VECTOR_BUDGET;
    if within {
        multi_slot::<false>(buf, slot)
    } else {
        multi_slot::<true>(buf, slot)
    }
}

/// [`multi_slot_parts`], counting what flatbuffers counts if `COUNT`.
#[inline(always)]
fn multi_slot<'a, const COUNT: bool>(
    buf: &'a [u8],
    mut slot: impl FnMut(usize, SlotParts<'a>),
) -> Option<MultiSlotParts<'a>> {
    let mut c = Check::<COUNT>::new(buf);
    let root = c.follow(0)?;
    let t = c.table(root)?;
    let context = c.bytes_field(t, MultiSlotEvent::VT_CONTEXT as usize, U8)?;
    let mut has_slots = false;
    if let Some(pos) = c.field(t, MultiSlotEvent::VT_SLOTS as usize) {
        has_slots = true;
        let at = c.follow(pos)?;
        let (start, len) = c.vector(at, U32)?;
        for i in 0..len {
            let element = c.follow(start.checked_add(i.checked_mul(4)?)?)?;
            let s = c.table(element)?;
            let action_ids = c.bytes_field(s, SlotEvent::VT_ACTION_IDS as usize, U32)?;
            let probabilities = c.bytes_field(s, SlotEvent::VT_PROBABILITIES as usize, U32)?;
            let id = c.text_field(s, SlotEvent::VT_ID as usize)?;
            slot(
                i,
                SlotParts {
                    id,
                    action_ids,
                    probabilities,
                },
            );
        }
    }
    let model_id = c.text_field(t, MultiSlotEvent::VT_MODEL_ID as usize)?;
    let deferred = c.value_field::<1, 1>(t, MultiSlotEvent::VT_DEFERRED_ACTION as usize)?;
    let baseline_actions = c.bytes_field(t, MultiSlotEvent::VT_BASELINE_ACTIONS as usize, U32)?;
    let mode = c.value_field::<1, 1>(t, MultiSlotEvent::VT_LEARNING_MODE as usize)?;
    c.within_limits().then_some(MultiSlotParts {
        context,
        has_slots,
        model_id,
        deferred_action: deferred.is_some_and(|[b]| b != 0),
        baseline_actions,
        learning_mode: mode.map_or(LearningModeType::Online, |[b]| LearningModeType(b)),
    })
}

fn ca_event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.scalar_field(t, CaEvent::VT_DEFERRED_ACTION as usize, U8)?;
    c.scalar_field(t, CaEvent::VT_ACTION as usize, U32)?;
    c.vector_field(t, CaEvent::VT_CONTEXT as usize, U8)?;
    c.scalar_field(t, CaEvent::VT_PDF_VALUE as usize, U32)?;
    c.string_field(t, CaEvent::VT_MODEL_ID as usize)?;
    c.scalar_field(t, CaEvent::VT_LEARNING_MODE as usize, U8)
}

fn multi_step_event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.string_field(t, MultiStepEvent::VT_EVENT_ID as usize)?;
    c.string_field(t, MultiStepEvent::VT_PREVIOUS_ID as usize)?;
    c.vector_field(t, MultiStepEvent::VT_ACTION_IDS as usize, U64)?;
    c.vector_field(t, MultiStepEvent::VT_CONTEXT as usize, U8)?;
    c.vector_field(t, MultiStepEvent::VT_PROBABILITIES as usize, U32)?;
    c.string_field(t, MultiStepEvent::VT_MODEL_ID as usize)?;
    c.scalar_field(t, MultiStepEvent::VT_DEFERRED_ACTION as usize, U8)
}

/// What the joiner reads of a verified `OutcomeEvent`, found while
/// verifying.
#[derive(Debug, Clone, Copy)]
pub struct OutcomeParts<'a> {
    /// The value, as `OutcomeEvent::value` reads it.
    pub value: OutcomeValue<'a>,
    /// The index, as `OutcomeEvent::index` reads it.
    pub index: IndexValue<'a>,
    /// `action_taken` (false when absent).
    pub action_taken: bool,
}

/// The same parts read through the accessors, for a buffer only the
/// flatbuffers verifier accepted.
impl<'a> From<OutcomeEvent<'a>> for OutcomeParts<'a> {
    fn from(o: OutcomeEvent<'a>) -> Self {
        Self {
            value: o.value(),
            index: o.index(),
            action_taken: o.action_taken(),
        }
    }
}

/// Verifies `buf` as an `OutcomeEvent` (what `OutcomeEvent::quick`
/// answers) and returns its parts; `None` wherever that answer is no.
pub fn outcome_parts(buf: &[u8]) -> Option<OutcomeParts<'_>> {
    if buf.len() > FIXED_LIMIT {
        return None;
    }
    let mut c = Check::<false>::new(buf);
    let root = c.follow(0)?;
    let parts = outcome(&mut c, root)?;
    c.within_limits().then_some(parts)
}

/// A union as [`Check::union`] checks it: `None` for the tag, a number
/// (the member table's scalar at `voffset`, 0 when absent) or a text.
enum Member<'a, const N: usize> {
    Tag(u8),
    Number([u8; N]),
    Text(&'a str),
}

// In line: returned through memory, a number's bytes (at an odd offset,
// behind the tag) were read back whole before their stores had reached
// the cache, a stall on every outcome.
#[inline(always)]
fn member<'b, const N: usize>(
    c: &mut Check<'b, false>,
    t: Table<'_>,
    (tag_voffset, member_voffset): (usize, usize),
    numeric_voffset: usize,
) -> Option<Member<'b, N>> {
    let member = c.field(t, member_voffset);
    let tag = c.field(t, tag_voffset);
    match (tag, member) {
        (None, None) => Some(Member::Tag(UNION_NONE)),
        (Some(tag), Some(member)) => {
            let [tag] = c.bytes::<1, 1>(tag)?;
            match tag {
                UNION_NUMERIC => {
                    let at = c.follow(member)?;
                    let inner = c.table(at)?;
                    let value = c.value_field::<N, N>(inner, numeric_voffset)?;
                    Some(Member::Number(value.unwrap_or([0; N])))
                }
                UNION_LITERAL => {
                    let at = c.follow(member)?;
                    Some(Member::Text(c.text(at)?))
                }
                // flatbuffers leaves unknown members unread.
                other => Some(Member::Tag(other)),
            }
        }
        _ => None,
    }
}

fn outcome<'b>(c: &mut Check<'b, false>, pos: usize) -> Option<OutcomeParts<'b>> {
    let t = c.table(pos)?;
    let value = match member::<4>(
        c,
        t,
        (
            OutcomeEvent::VT_VALUE_TYPE as usize,
            OutcomeEvent::VT_VALUE as usize,
        ),
        NumericOutcome::VT_VALUE as usize,
    )? {
        Member::Tag(UNION_NONE) => OutcomeValue::None,
        Member::Tag(other) => OutcomeValue::Unknown(other),
        Member::Number(bytes) => OutcomeValue::Numeric(f32::from_le_bytes(bytes)),
        Member::Text(text) => OutcomeValue::Literal(text),
    };
    let index = match member::<4>(
        c,
        t,
        (
            OutcomeEvent::VT_INDEX_TYPE as usize,
            OutcomeEvent::VT_INDEX as usize,
        ),
        NumericIndex::VT_INDEX as usize,
    )? {
        Member::Tag(UNION_NONE) => IndexValue::None,
        Member::Tag(other) => IndexValue::Unknown(other),
        Member::Number(bytes) => IndexValue::Numeric(i32::from_le_bytes(bytes)),
        Member::Text(text) => IndexValue::Literal(text),
    };
    let taken = c.value_field::<1, 1>(t, OutcomeEvent::VT_ACTION_TAKEN as usize)?;
    Some(OutcomeParts {
        value,
        index,
        action_taken: taken.is_some_and(|[b]| b != 0),
    })
}

fn dedup_info(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, DedupInfo::VT_IDS as usize, U64)?;
    c.vector_of(t, DedupInfo::VT_VALUES as usize, Check::string)
}

macro_rules! quick {
    ($($table:ident => $check:ident),* $(,)?) => {$(
        impl sealed::Sealed for $table<'_> {}
        impl QuickVerify for $table<'_> {
            fn quick(buf: &[u8]) -> bool {
                Check::root(buf, $check)
            }
        }
    )*};
}

quick! {
    CaEvent => ca_event,
    DedupInfo => dedup_info,
    MultiStepEvent => multi_step_event,
}

impl sealed::Sealed for MultiSlotEvent<'_> {}

impl QuickVerify for MultiSlotEvent<'_> {
    fn quick(buf: &[u8]) -> bool {
        multi_slot_parts(buf, |_, _| {}).is_some()
    }
}

impl sealed::Sealed for Event<'_> {}

impl QuickVerify for Event<'_> {
    fn quick(buf: &[u8]) -> bool {
        event_parts(buf).is_some()
    }
}

impl sealed::Sealed for CbEvent<'_> {}

impl QuickVerify for CbEvent<'_> {
    fn quick(buf: &[u8]) -> bool {
        cb_parts(buf).is_some()
    }
}

impl sealed::Sealed for OutcomeEvent<'_> {}

impl QuickVerify for OutcomeEvent<'_> {
    fn quick(buf: &[u8]) -> bool {
        outcome_parts(buf).is_some()
    }
}

// Once per episode, and with nothing the output needs: always the
// flatbuffers path.
impl sealed::Sealed for EpisodeEvent<'_> {}

impl QuickVerify for EpisodeEvent<'_> {
    fn quick(_: &[u8]) -> bool {
        false
    }
}

/// Where the event list of a `JoinedPayload` is, read from a buffer that
/// may be cut short or damaged: how many events it lists, and where its
/// offsets start. Nothing else of the buffer is checked (see
/// [`listed_event`]); `None` when the root table or the list's length
/// cannot be read.
pub fn event_list(buf: &[u8]) -> Option<(usize, usize)> {
    let mut c = Check::<false>::new(buf);
    let root = c.follow(0)?;
    let t = c.table(root)?;
    let pos = c.field(t, JoinedPayload::VT_EVENTS as usize)?;
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
        .bytes_field(t, JoinedEvent::VT_EVENT as usize, U8)
        .ok_or("its event bytes are not there")?
        .ok_or("it has no event bytes")?;
    let stamp = c
        .value_field::<12, 1>(t, JoinedEvent::VT_TIMESTAMP as usize)
        .ok_or("its timestamp is not there")?
        .ok_or("it has no timestamp")?;
    // One table and one vector: nowhere near the verifier's limits.
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
/// (tested in `fb-format/tests/quick.rs`); damage in what it does not
/// read goes unseen here, and is left to the readers that read it.
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
        match self.c.field(t, JoinedPayload::VT_EVENTS as usize) {
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
        let event = self
            .c
            .bytes_field(t, JoinedEvent::VT_EVENT as usize, U8)??;
        let stamp = self
            .c
            .value_field::<12, { TIMESTAMP.1 }>(t, JoinedEvent::VT_TIMESTAMP as usize)??;
        let mut e = Check::<false>::new(event);
        let root = e.follow(0)?;
        let t = e.table(root)?;
        let meta = e.field(t, Event::VT_META as usize)?;
        let at = e.follow(meta)?;
        let m = e.table(at)?;
        let id = e.bytes_field(m, Metadata::VT_ID as usize, U8)??;
        let client_time = e
            .value_field::<12, { TIMESTAMP.1 }>(m, Metadata::VT_CLIENT_TIME_UTC as usize)?
            .map(TimeStamp);
        let payload_type = e.value_field::<1, 1>(m, Metadata::VT_PAYLOAD_TYPE as usize)?;
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
    (crate::calendar::days_from_civil(next.0, next.1, 1)
        - crate::calendar::days_from_civil(year, month, 1)) as u32
}
