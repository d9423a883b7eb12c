//! The checks that return what they read: an `Event` with its
//! `Metadata`, a `CbEvent`, an `OutcomeEvent`. The hot path takes these
//! parts instead of walking the vtables again through the accessors.

use super::fields::{cb_event, event, metadata, numeric_index, numeric_outcome, outcome_event};
use super::walk::{Check, Table, FIXED_LIMIT};
use super::{sealed, QuickVerify};
use crate::{
    CbEvent, Event, EventEncoding, IndexValue, LearningModeType, Metadata, OutcomeEvent,
    OutcomeValue, PayloadType, UNION_LITERAL, UNION_NONE, UNION_NUMERIC,
};

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
    if let Some(pos) = c.field(t, event::meta) {
        let at = c.follow(pos)?;
        parts = metadata_table(&mut c, at)?;
        meta_at = Some(at);
    }
    let payload = c.bytes_field(t, event::payload)?;
    if !c.within_limits() {
        return None;
    }
    // SAFETY: `root_unchecked` asks for a buffer the flatbuffers verifier
    // accepts with an `Event` root. The walk above made every check that
    // verifier makes for that root (every field of `Event` and `Metadata`,
    // as `fields.rs` lists them; `each_check_reads_every_field_of_its_tables`
    // in `quick/tests.rs` holds it to the list), and the differential tests
    // (`crates/fb-schema/tests/quick.rs`, and the `decode` fuzz target)
    // hold its answers to the verifier's.
    let event = unsafe { flatbuffers::root_unchecked::<Event>(buf) };
    // SAFETY: `Table::new` asks for the position of a table the verifier
    // checked in `buf`: `meta_at` is where the walk checked `Metadata`,
    // under the same tests.
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

impl sealed::Sealed for Event<'_> {}

impl QuickVerify for Event<'_> {
    fn quick(buf: &[u8]) -> bool {
        event_parts(buf).is_some()
    }
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

fn metadata_table<'b>(c: &mut Check<'b, false>, pos: usize) -> Option<MetaParts<'b>> {
    let t = c.table(pos)?;
    let id = c.text_field(t, metadata::id)?;
    let client_time = c.value_ref::<12, 1>(t, metadata::client_time_utc)?;
    c.string_field(t, metadata::app_id)?;
    let payload_type = c.value_field::<1, 1>(t, metadata::payload_type)?;
    let pass = c.value_field::<4, 4>(t, metadata::pass_probability)?;
    let encoding = c.value_field::<1, 1>(t, metadata::encoding)?;
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
    let parts = cb_table(&mut c, root)?;
    c.within_limits().then_some(parts)
}

fn cb_table<'b>(c: &mut Check<'b, false>, pos: usize) -> Option<CbParts<'b>> {
    let t = c.table(pos)?;
    let deferred = c.value_field::<1, 1>(t, cb_event::deferred_action)?;
    let action_ids = c.bytes_field(t, cb_event::action_ids)?;
    let context = c.bytes_field(t, cb_event::context)?;
    let probabilities = c.bytes_field(t, cb_event::probabilities)?;
    let model_id = c.text_field(t, cb_event::model_id)?;
    let mode = c.value_field::<1, 1>(t, cb_event::learning_mode)?;
    Some(CbParts {
        deferred_action: deferred.is_some_and(|[b]| b != 0),
        action_ids,
        context,
        probabilities,
        model_id,
        learning_mode: mode.map_or(LearningModeType::Online, |[b]| LearningModeType(b)),
    })
}

impl sealed::Sealed for CbEvent<'_> {}

impl QuickVerify for CbEvent<'_> {
    fn quick(buf: &[u8]) -> bool {
        cb_parts(buf).is_some()
    }
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
    let parts = outcome_table(&mut c, root)?;
    c.within_limits().then_some(parts)
}

/// A union as [`member`] checks it: a tag it does not read (`None` or
/// unknown), a number (the member table's scalar, 0 when absent) or a
/// text.
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
    union: super::fields::Field,
    numeric: super::fields::Field,
) -> Option<Member<'b, N>> {
    match c.union(t, union) {
        (None, None) => Some(Member::Tag(UNION_NONE)),
        (Some(tag), Some(member)) => {
            let [tag] = c.bytes::<1, 1>(tag)?;
            match tag {
                UNION_NUMERIC => {
                    let at = c.follow(member)?;
                    let inner = c.table(at)?;
                    let value = c.value_field::<N, N>(inner, numeric)?;
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

fn outcome_table<'b>(c: &mut Check<'b, false>, pos: usize) -> Option<OutcomeParts<'b>> {
    let t = c.table(pos)?;
    let value = match member::<4>(c, t, outcome_event::value, numeric_outcome::value)? {
        Member::Tag(UNION_NONE) => OutcomeValue::None,
        Member::Tag(other) => OutcomeValue::Unknown(other),
        Member::Number(bytes) => OutcomeValue::Numeric(f32::from_le_bytes(bytes)),
        Member::Text(text) => OutcomeValue::Literal(text),
    };
    let index = match member::<4>(c, t, outcome_event::index, numeric_index::index)? {
        Member::Tag(UNION_NONE) => IndexValue::None,
        Member::Tag(other) => IndexValue::Unknown(other),
        Member::Number(bytes) => IndexValue::Numeric(i32::from_le_bytes(bytes)),
        Member::Text(text) => IndexValue::Literal(text),
    };
    let taken = c.value_field::<1, 1>(t, outcome_event::action_taken)?;
    Some(OutcomeParts {
        value,
        index,
        action_taken: taken.is_some_and(|[b]| b != 0),
    })
}

impl sealed::Sealed for OutcomeEvent<'_> {}

impl QuickVerify for OutcomeEvent<'_> {
    fn quick(buf: &[u8]) -> bool {
        outcome_parts(buf).is_some()
    }
}
