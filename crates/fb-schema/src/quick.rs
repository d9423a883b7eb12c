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
    CaEvent, CbEvent, DedupInfo, EpisodeEvent, Event, JoinedEvent, JoinedPayload, Metadata,
    MultiSlotEvent, MultiStepEvent, NumericIndex, NumericOutcome, OutcomeEvent, SlotEvent,
    UNION_LITERAL, UNION_NUMERIC,
};

/// Tables of the hot path, with a yes-or-no verifier of their own.
///
/// Implementations must accept only buffers that
/// [`verified`](crate::verified) accepts: a `true` lets
/// [`verified_quick`](crate::verified_quick) read the buffer unchecked. A
/// `false` only means "ask the flatbuffers verifier".
pub trait QuickVerify {
    /// True when `buf` is certainly a valid flatbuffer with this root.
    fn quick(buf: &[u8]) -> bool;
}

// Limits stricter than `verifier_options()`, so that a "yes" here never
// meets a limit there: half the apparent size, a tenth of the tables.
const APPARENT_LIMIT: usize = 1 << 30;
const TABLE_LIMIT: usize = 1_000_000;

const U8: (usize, usize) = (1, 1);
const U32: (usize, usize) = (4, 4);
const U64: (usize, usize) = (8, 8);
/// `TimeStamp`: 12 bytes, alignment 1 as far as the verifier checks.
const TIMESTAMP: (usize, usize) = (12, 1);

#[derive(Clone, Copy)]
struct Table<'b> {
    pos: usize,
    /// The vtable's bytes, its length field included.
    vtable: &'b [u8],
}

struct Check<'b> {
    buf: &'b [u8],
    /// Bytes the flatbuffers verifier would have counted so far. Compared
    /// with the limit before each string scan (the only work that could
    /// grow faster than the buffer) and at the end.
    apparent: usize,
    tables: usize,
}

impl<'b> Check<'b> {
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
    fn bytes<const N: usize>(&mut self, pos: usize, align: usize) -> Option<[u8; N]> {
        if !pos.is_multiple_of(align) {
            return None;
        }
        let bytes = self.buf.get(pos..pos.checked_add(N)?)?.try_into().ok()?;
        self.apparent = self.apparent.saturating_add(N);
        Some(bytes)
    }

    /// A scalar of `size` bytes aligned to `align`.
    #[inline(always)]
    fn scalar(&mut self, pos: usize, (size, align): (usize, usize)) -> Option<()> {
        if !pos.is_multiple_of(align) || pos.checked_add(size)? > self.buf.len() {
            return None;
        }
        self.apparent = self.apparent.saturating_add(size);
        Some(())
    }

    #[inline(always)]
    fn u32_at(&mut self, pos: usize) -> Option<usize> {
        Some(u32::from_le_bytes(self.bytes(pos, 4)?) as usize)
    }

    /// Follows the forward offset stored at `pos`.
    #[inline(always)]
    fn follow(&mut self, pos: usize) -> Option<usize> {
        Some(self.u32_at(pos)?.saturating_add(pos))
    }

    #[inline(always)]
    fn table(&mut self, pos: usize) -> Option<Table<'b>> {
        let soffset = i32::from_le_bytes(self.bytes(pos, 4)?);
        let distance = soffset.unsigned_abs() as usize;
        let vtable = if soffset > 0 {
            pos.checked_sub(distance)?
        } else {
            pos.checked_add(distance)?
        };
        let vtable_len = usize::from(u16::from_le_bytes(self.bytes(vtable, 2)?));
        // `vtable` is even, so this asks for an even length.
        if !vtable_len.is_multiple_of(2) {
            return None;
        }
        let bytes = self.buf.get(vtable..vtable.checked_add(vtable_len)?)?;
        self.apparent = self.apparent.saturating_add(vtable_len);
        self.tables += 1;
        Some(Table { pos, vtable: bytes })
    }

    /// Where field `voffset` (even) of `t` is, `None` when absent. The
    /// vtable was checked whole, so this cannot fail.
    #[inline(always)]
    fn field(&mut self, t: Table<'_>, voffset: usize) -> Option<usize> {
        let entry = t.vtable.get(voffset..voffset + 2)?;
        self.apparent = self.apparent.saturating_add(2);
        let at = usize::from(u16::from_le_bytes([*entry.first()?, *entry.get(1)?]));
        (at > 0).then(|| t.pos.saturating_add(at))
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
        let (start, len) = self.vector(pos, U8)?;
        // Many vector elements may point at one long string: stop where
        // flatbuffers would, before the scans add up.
        if self.apparent > APPARENT_LIMIT {
            return None;
        }
        let end = start.checked_add(len)?;
        let bytes = self.buf.get(start..end)?;
        if self.buf.get(end) != Some(&0) {
            return None;
        }
        // Ids and names are ASCII: a word-at-a-time test skips the decoder.
        if bytes.is_ascii() {
            return Some(());
        }
        std::str::from_utf8(bytes).ok().map(|_| ())
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

    /// An optional table field checked by `check`.
    #[inline(always)]
    fn table_field(
        &mut self,
        t: Table<'_>,
        voffset: usize,
        check: fn(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        if let Some(pos) = self.field(t, voffset) {
            let at = self.follow(pos)?;
            check(self, at)?;
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

    /// A union: its tag field and its member field, both or neither.
    fn union(
        &mut self,
        t: Table<'_>,
        tag_voffset: usize,
        member_voffset: usize,
        numeric: fn(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        let member = self.field(t, member_voffset);
        let tag = self.field(t, tag_voffset);
        match (tag, member) {
            (None, None) => Some(()),
            (Some(tag), Some(member)) => {
                let [tag] = self.bytes::<1>(tag, 1)?;
                match tag {
                    UNION_NUMERIC => {
                        let at = self.follow(member)?;
                        numeric(self, at)
                    }
                    UNION_LITERAL => {
                        let at = self.follow(member)?;
                        self.string(at)
                    }
                    // flatbuffers leaves unknown members unread.
                    _ => Some(()),
                }
            }
            _ => None,
        }
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
        shape_ok && c.apparent <= APPARENT_LIMIT && c.tables <= TABLE_LIMIT
    }
}

fn joined_payload(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_of(t, JoinedPayload::VT_EVENTS as usize, joined_event)
}

fn joined_event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, JoinedEvent::VT_EVENT as usize, U8)?;
    c.scalar_field(t, JoinedEvent::VT_TIMESTAMP as usize, TIMESTAMP)
}

fn event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.table_field(t, Event::VT_META as usize, metadata)?;
    c.vector_field(t, Event::VT_PAYLOAD as usize, U8)
}

fn metadata(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.string_field(t, Metadata::VT_ID as usize)?;
    c.scalar_field(t, Metadata::VT_CLIENT_TIME_UTC as usize, TIMESTAMP)?;
    c.string_field(t, Metadata::VT_APP_ID as usize)?;
    c.scalar_field(t, Metadata::VT_PAYLOAD_TYPE as usize, U8)?;
    c.scalar_field(t, Metadata::VT_PASS_PROBABILITY as usize, U32)?;
    c.scalar_field(t, Metadata::VT_ENCODING as usize, U8)
}

fn cb_event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.scalar_field(t, CbEvent::VT_DEFERRED_ACTION as usize, U8)?;
    c.vector_field(t, CbEvent::VT_ACTION_IDS as usize, U64)?;
    c.vector_field(t, CbEvent::VT_CONTEXT as usize, U8)?;
    c.vector_field(t, CbEvent::VT_PROBABILITIES as usize, U32)?;
    c.string_field(t, CbEvent::VT_MODEL_ID as usize)?;
    c.scalar_field(t, CbEvent::VT_LEARNING_MODE as usize, U8)
}

fn multi_slot_event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, MultiSlotEvent::VT_CONTEXT as usize, U8)?;
    c.vector_of(t, MultiSlotEvent::VT_SLOTS as usize, slot_event)?;
    c.string_field(t, MultiSlotEvent::VT_MODEL_ID as usize)?;
    c.scalar_field(t, MultiSlotEvent::VT_DEFERRED_ACTION as usize, U8)?;
    c.vector_field(t, MultiSlotEvent::VT_BASELINE_ACTIONS as usize, U32)?;
    c.scalar_field(t, MultiSlotEvent::VT_LEARNING_MODE as usize, U8)
}

fn slot_event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, SlotEvent::VT_ACTION_IDS as usize, U32)?;
    c.vector_field(t, SlotEvent::VT_PROBABILITIES as usize, U32)?;
    c.string_field(t, SlotEvent::VT_ID as usize)
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

fn outcome_event(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.union(
        t,
        OutcomeEvent::VT_VALUE_TYPE as usize,
        OutcomeEvent::VT_VALUE as usize,
        numeric_outcome,
    )?;
    c.union(
        t,
        OutcomeEvent::VT_INDEX_TYPE as usize,
        OutcomeEvent::VT_INDEX as usize,
        numeric_index,
    )?;
    c.scalar_field(t, OutcomeEvent::VT_ACTION_TAKEN as usize, U8)
}

fn numeric_outcome(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.scalar_field(t, NumericOutcome::VT_VALUE as usize, U32)
}

fn numeric_index(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.scalar_field(t, NumericIndex::VT_INDEX as usize, U32)
}

fn dedup_info(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, DedupInfo::VT_IDS as usize, U64)?;
    c.vector_of(t, DedupInfo::VT_VALUES as usize, Check::string)
}

macro_rules! quick {
    ($($table:ident => $check:ident),* $(,)?) => {$(
        impl QuickVerify for $table<'_> {
            fn quick(buf: &[u8]) -> bool {
                Check::root(buf, $check)
            }
        }
    )*};
}

quick! {
    JoinedPayload => joined_payload,
    Event => event,
    CbEvent => cb_event,
    MultiSlotEvent => multi_slot_event,
    CaEvent => ca_event,
    OutcomeEvent => outcome_event,
    DedupInfo => dedup_info,
    MultiStepEvent => multi_step_event,
}

// Once per episode, and with nothing the output needs: always the
// flatbuffers path.
impl QuickVerify for EpisodeEvent<'_> {
    fn quick(_: &[u8]) -> bool {
        false
    }
}
